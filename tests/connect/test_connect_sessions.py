"""Spark Connect sessions: the session kind, parameter markers (the server has no Delta, so
Spark 4.2's parser substitutes them), ``{df}`` formatting, global temporary views read from
another Connect session, ``enable()`` / ``disable()``, the packages shipped to the server's
workers, which lack sparkcep, and ``sql_ext.stream`` over them."""
from __future__ import annotations

import pytest

import sql_ext
from deploy_support import stream_and_batch
from sql_support import mr_spark, rows, view  # noqa: F401  (fixture)
from test_sessions import EXPECTED, LITERALS, QUERY, ROWS
from test_sessions import (  # noqa: F401  (the classic tier's tests, collected here again)
    params, test_error_positions_with_positional_markers, test_literal_query, test_markers_with_string_formatting,
    test_named_markers_everywhere, test_positional_markers_everywhere, test_spark_error_before_the_clause_with_positional_markers,
    test_spark_errors_outside_the_clause_at_the_users_position, test_transpile_with_positional_args,
    test_unbound_markers_at_the_users_marker)


@pytest.fixture(scope="module")
def remote(spark):
    view(spark, "params", "k string, t int, p int", ROWS)
    return sql_ext.enable(spark)


def test_session_kind(remote):
    assert sql_ext.session_kind(remote) == "connect" and sql_ext.is_enabled(remote)
    assert rows(remote, QUERY.format(**LITERALS)) == EXPECTED


@pytest.mark.slow
def test_stream_runs_on_connect(remote, tmp_path):
    """``sql_ext.stream`` on a Connect session: the streaming operator's Python workers on the
    server (which lack sparkcep) import ``udtf`` from the session's artifacts; the stream's rows
    equal the batch query's (deploy_support.stream_and_batch: three micro-batches)."""
    streamed, batch = stream_and_batch(remote, str(tmp_path))
    assert streamed == batch and len(batch) > 5


def test_named_and_positional_markers(remote):
    named = QUERY.format(source="(SELECT * FROM params WHERE p > :floor)", measure="LAST(B.p) + :offset",
                         lower="PREV(p) + :zero", total=":total", upper="PREV(p)", least=":least")
    assert remote.sql(named, args={"floor": 4, "offset": 100, "zero": 0, "total": 30, "least": 1}).collect() \
        == EXPECTED
    positional = QUERY.format(source="(SELECT * FROM params WHERE p > ?)", measure="LAST(B.p) + ?",
                              lower="PREV(p) + ?", total="?", upper="PREV(p)", least="?")
    assert remote.sql(positional, args=[4, 100, 0, 30, 1]).collect() == EXPECTED


def test_string_formatting_with_markers(remote):
    """Connect's ``{df}`` is a view of the statement only: every schema query gets it too, and
    the DataFrame stays usable after ``spark.sql`` returns."""
    df = remote.table("params").where("p > 4")
    sql = QUERY.format(**{**LITERALS, "source": "{df}", "total": ":total"})
    result = remote.sql(sql, args={"total": 30}, df=df)
    assert result.collect() == EXPECTED and result.count() == 2


def test_global_temp_view_in_another_connect_session(remote, connect_server):
    from pyspark.sql.connect.session import SparkSession

    remote.table("params").createOrReplaceGlobalTempView("params_global")
    remote.sql("CREATE OR REPLACE GLOBAL TEMP VIEW mr_global AS "
               + QUERY.format(**{**LITERALS, "source": "(SELECT * FROM global_temp.params_global WHERE p > 4)"}))
    other = SparkSession.builder.remote(connect_server.url).create()
    try:
        sql_ext.enable(other)
        assert rows(other, "SELECT * FROM global_temp.mr_global") == EXPECTED
    finally:
        other.stop()


def test_workers_get_the_packages_from_enable(connect_server):
    """The server's workers cannot import udtf of their own (conftest.py checks it): after
    ``enable`` a new session's workers import it from the shipped zip.  (Whether they fail
    before depends on worker reuse: a worker keeps what an earlier session's task imported.)"""
    from pyspark.sql.connect.session import SparkSession
    from pyspark.sql.functions import udf

    @udf("string")
    def where_is_udtf(_):
        import udtf

        return udtf.__file__

    other = SparkSession.builder.remote(connect_server.url).create()
    try:
        sql_ext.enable(other)
        [(path,)] = other.range(1).select(where_is_udtf("id")).collect()
        assert ".zip" in path and "sparkcep-" in path
    finally:
        other.stop()


def test_enable_everywhere_and_disable(remote, connect_server):
    from pyspark.sql.connect.session import SparkSession

    try:
        sql_ext.disable()
        with pytest.raises(Exception, match="PARSE_SYNTAX_ERROR"):
            remote.sql(QUERY.format(**LITERALS)).collect()
        assert sql_ext.enable() is remote  # the active session
        later = SparkSession.builder.remote(connect_server.url).create()
        try:
            view(later, "params", "k string, t int, p int", ROWS)
            assert sql_ext.is_enabled(later) and rows(later, QUERY.format(**LITERALS)) == EXPECTED
        finally:
            later.stop()
        sql_ext.disable()
        assert not sql_ext.is_enabled(remote)
    finally:
        sql_ext.enable(remote)
