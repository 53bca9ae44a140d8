"""Helpers for the SQL-in / rows-out tests (``test_sql_*.py``).

Every helper takes the session-scoped ``spark`` fixture (with ``sql_ext.enable`` applied by
``enabled``); data are tiny inline temp views, so each query costs one short Spark job.
"""
from __future__ import annotations

import contextlib
import datetime as dt

import pytest

from udtf.errors import MatchRecognizeError

import sql_ext


@pytest.fixture(scope="module")
def mr_spark(spark):
    """The test session with ``spark.sql`` accepting MATCH_RECOGNIZE."""
    return sql_ext.enable(spark)


def view(spark, name: str, schema: str, rows) -> None:
    """Register ``rows`` (tuples) as temp view ``name`` with DDL ``schema``."""
    spark.createDataFrame(list(rows), schema).createOrReplaceTempView(name)


def sequences(spark, name: str, texts) -> None:
    """Temp view ``name(c STRING, i INT, v STRING)``: for each string ``c`` of ``texts``, one row
    per letter ``v`` in order ``i`` = 1, 2, ... (pattern variables are defined as ``v = 'a'``)."""
    view(spark, name, "c string, i int, v string",
         [(text, i, letter) for text in texts for i, letter in enumerate(text, 1)])


def physical_plan(df) -> str:
    """The text of the physical plan of ``df`` (a classic session's; after a run, the plan that
    ran): what a test asks of the plan of a statement it has run, without compiling it again."""
    return df._jdf.queryExecution().executedPlan().toString()


def rows(spark, sql: str) -> list:
    """Result rows of ``sql`` as tuples, in the query's order."""
    return [tuple(r) for r in spark.sql(sql).collect()]


def schema(spark, sql: str) -> list:
    """``[(column, Spark simple type)]`` of ``sql``'s result."""
    return [(f.name, f.dataType.simpleString()) for f in spark.sql(sql).schema.fields]


def at(sql: str, needle: str, occurrence: int = 1) -> tuple:
    """1-based (line, column) of the ``occurrence``-th ``needle`` in ``sql``."""
    offset = -1
    for _ in range(occurrence):
        offset = sql.index(needle, offset + 1)
    line = sql.count("\n", 0, offset) + 1
    return line, offset - (sql.rfind("\n", 0, offset) + 1) + 1


def analysis_error(spark, sql: str) -> MatchRecognizeError:
    """The MatchRecognizeError ``spark.sql(sql)`` raises while rewriting (no Spark job runs)."""
    with pytest.raises(MatchRecognizeError) as info:
        spark.sql(sql)
    return info.value


def d(day: int, month: int = 4, year: int = 2011) -> dt.date:
    return dt.date(year, month, day)


def ts(text: str) -> dt.datetime:
    """A timestamp as Spark returns it to Python (session time zone UTC, naive)."""
    return dt.datetime.fromisoformat(text)


@contextlib.contextmanager
def expansion():
    """Every statement with LAYERs runs as its expansion, one UDTF per layer (the one pass
    answering "not covered")."""
    from sql_ext.compiler import one_pass

    real = one_pass.layers
    one_pass.layers = lambda *args, **kwargs: None
    try:
        yield
    finally:
        one_pass.layers = real
