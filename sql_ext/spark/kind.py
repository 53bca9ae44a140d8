"""The two kinds of SparkSession (classic and Spark Connect), told apart without importing
either kind's classes, and the scope ``enable`` acts on."""
from __future__ import annotations


def session_kind(spark) -> str:
    """``"connect"`` for a Spark Connect session, ``"classic"`` otherwise (by the class's module:
    neither kind's classes are imported)."""
    return "connect" if any(c.__module__.startswith("pyspark.sql.connect") for c in type(spark).__mro__) \
        else "classic"


def scope(spark):
    """What ``enable(spark)`` enables: a classic session's SparkContext (every session of it), a
    Connect session by itself."""
    return spark if session_kind(spark) == "connect" else spark._sc
