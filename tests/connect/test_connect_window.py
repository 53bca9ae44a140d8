"""tests/test_sql_window.py over a Spark Connect session: row pattern recognition in a window
(the WINDOW clause's MEASURES / PATTERN / DEFINE) through a Connect client."""
import logging
import re

import pytest

from spark_confs import session_confs
from sql_support import mr_spark  # noqa: F401  (fixture)
from test_sql_window import *  # noqa: F401,F403  (its fixtures and tests, collected here again)
from test_sql_window import _markers
from udtf.errors import MatchRecognizeError


def test_parameter_markers(series):
    """Named and positional markers in the window.  (The classic test sets
    spark.sql.legacy.parameterSubstitution.constantsOnly for its Delta parser; no Delta here.)"""
    _markers(series)


def test_constants_only_parameters_on_connect(series):
    """On Spark Connect that conf leaves every parameter unbound (Spark's own behaviour): the
    error says to unset it, at the user's condition, and pyspark logs none of the generated SQL's
    failures on the way."""
    from pyspark.logger import PySparkLogger

    sql = ("SELECT o, count(*) OVER w FROM series WINDOW w AS (ORDER BY o ROWS BETWEEN CURRENT ROW AND "
           "UNBOUNDED FOLLOWING PATTERN (A+) DEFINE A AS x > :lim) ORDER BY o")
    logged = []
    handler = logging.Handler()
    handler.emit = logged.append
    logger = PySparkLogger.getLogger("SQLQueryContextLogger")
    logger.addHandler(handler)
    try:
        with session_confs(series, {"spark.sql.legacy.parameterSubstitution.constantsOnly": "true"}):
            with pytest.raises(MatchRecognizeError) as caught:
                series.sql(sql, args={"lim": 9}).collect()
    finally:
        logger.removeHandler(handler)
    message = str(caught.value)
    assert logged == []
    assert "[UNBOUND_SQL_PARAMETER]" in message and "unset it on a Connect session" in message
    # at the condition or at its marker, as Spark places it (1-based columns)
    column = int(re.match(r"line 1:(\d+): ", message).group(1))
    condition = sql.index("x > :lim") + 1
    assert condition <= column < condition + len("x > :lim")
