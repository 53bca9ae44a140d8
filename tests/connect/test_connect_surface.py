"""tests/test_sql_surface.py over a Spark Connect session."""
from sql_support import mr_spark  # noqa: F401  (fixture)
from test_sql_surface import *  # noqa: F401,F403  (its fixtures and tests, collected here again)
