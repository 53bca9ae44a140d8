"""Entry points: ``transpile(sql)`` and ``enable(spark)``."""
from __future__ import annotations

import re

from .parse import find_match_recognize, parse

_MENTION = re.compile(r"\bMATCH_RECOGNIZE\b", re.IGNORECASE)
_EXPLAIN = re.compile(r"\s*EXPLAIN(?:\s+(?:EXTENDED|CODEGEN|COST|FORMATTED))?\s+", re.IGNORECASE)


def transpile(sql: str, spark=None) -> str:
    """Plain Spark SQL for ``sql``; MATCH_RECOGNIZE clauses become calls of UDTFs registered in
    ``spark`` (default: the active session).  SQL without MATCH_RECOGNIZE is returned as is."""
    if not _MENTION.search(sql):
        return sql
    explain = _EXPLAIN.match(sql)
    if explain:
        # sqlglot keeps EXPLAIN opaque: rewrite the statement after it, with the EXPLAIN words
        # blanked in place so that error positions stay those of the user's SQL
        blanked = re.sub(r"\S", " ", explain.group(0)) + sql[explain.end():]
        statement = transpile(blanked, spark)
        return sql if statement is blanked else f"{explain.group(0).strip()} {statement}"
    if not any(find_match_recognize(tree) for tree in parse(sql)):
        return sql
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        if spark is None:
            raise RuntimeError("transpile needs a SparkSession: pass spark= or create one first")
    from .catalog import SparkCatalog
    from .rewrite import rewrite_sql

    return rewrite_sql(sql, SparkCatalog(spark))[0]


def enable(spark):
    """Make ``spark.sql`` accept MATCH_RECOGNIZE; other statements pass through untouched.

    Keyword arguments are pyspark's string formatting (``{df}`` becomes a temp view of the
    DataFrame): it is applied before the rewrite, which must see those views."""
    if getattr(spark.sql, "_sparkcep", False):
        return spark
    original = spark.sql

    def sql(sqlQuery, args=None, **kwargs):
        if not kwargs:
            return original(transpile(sqlQuery, spark), args)
        from pyspark.sql.sql_formatter import SQLStringFormatter

        formatter = SQLStringFormatter(spark)
        try:
            return original(transpile(formatter.format(sqlQuery, **kwargs), spark), args)
        finally:
            formatter.clear()

    sql._sparkcep = True
    sql.__doc__ = original.__doc__
    spark.sql = sql
    return spark
