"""tests/test_sql_errors.py over a Spark Connect session: the same messages at the same
line:column (Spark's analysis errors come over gRPC as the same AnalysisException)."""
from sql_support import mr_spark  # noqa: F401  (fixture)
from test_sql_errors import *  # noqa: F401,F403  (its fixtures and tests, collected here again)
