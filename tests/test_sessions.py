"""spark.sql of every session: parameter markers anywhere in the statement (named and
positional), other sessions of the SparkContext, global temporary views read from another
session, ``enable()`` / ``disable()``, a temporary view whose input changed type, no Spark job
before analysis succeeds, and what ``enable`` ships to executors (classic sessions; the
Connect tier runs tests/connect/test_connect_sessions.py)."""
from __future__ import annotations

import zipfile

import pytest

import sql_ext
from sql_ext.spark import shipping
from spark_confs import session_confs
from sql_support import at, mr_spark, rows, view  # noqa: F401  (fixture)
from udtf.errors import MatchRecognizeError

QUERY = """SELECT * FROM {source} MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY t
  MEASURES COUNT(*) AS n, {measure} AS m
  PATTERN (A B+ C?)
  DEFINE B AS p < {lower} AND SUM(B.p) < {total}, C AS p > {upper}
) AS r WHERE n > {least}"""

# k = 'a': 10 9 8 11 12 7 ; k = 'b': 5 4 6
ROWS = [("a", t, p) for t, p in enumerate([10, 9, 8, 11, 12, 7], 1)] + [("b", 1, 5), ("b", 2, 4), ("b", 3, 6)]
LITERALS = dict(source="(SELECT * FROM params WHERE p > 4)", measure="LAST(B.p) + 100", lower="PREV(p)",
                total="30", upper="PREV(p)", least="1")
EXPECTED = [("a", 4, 108), ("a", 2, 107)]


@pytest.fixture(scope="module")
def params(mr_spark):
    """The test session has Delta's SQL extension, whose parser loses Spark 4.2's parameter
    substitution: Spark's legacy (analyzer) binding works with it (docs/deploying.md)."""
    view(mr_spark, "params", "k string, t int, p int", ROWS)
    delta = sql_ext.session_kind(mr_spark) == "classic"  # the Connect tier's server has no Delta
    with session_confs(mr_spark, {"spark.sql.legacy.parameterSubstitution.constantsOnly": "true"} if delta else {}):
        yield mr_spark


def test_literal_query(params):
    assert rows(params, QUERY.format(**LITERALS)) == EXPECTED


def test_named_markers_everywhere(params):
    """In the input subquery, MEASURES, DEFINE (row-level and over the match state) and the
    outer WHERE; a marker used twice, an unused argument."""
    sql = QUERY.format(source="(SELECT * FROM params WHERE p > :floor)", measure="LAST(B.p) + :offset",
                       lower="PREV(p) + :zero", total=":total", upper="PREV(p) + :zero", least=":least")
    args = {"floor": 4, "offset": 100, "zero": 0, "total": 30, "least": 1, "unused": "x"}
    assert params.sql(sql, args=args).collect() == EXPECTED


def test_positional_markers_everywhere(params):
    """``?`` markers in text order; the PATTERN's ``?`` quantifier is no marker."""
    sql = QUERY.format(source="(SELECT * FROM params WHERE p > ?)", measure="LAST(B.p) + ?", lower="PREV(p) + ?",
                       total="?", upper="PREV(p) - ?", least="?")
    assert params.sql(sql, args=[4, 100, 0, 30, 0, 1]).collect() == EXPECTED


def test_markers_with_string_formatting(params):
    df = params.table("params")
    sql = QUERY.format(source="(SELECT * FROM {df} WHERE p > :floor)", measure="LAST(B.p) + {offset}",
                       lower="PREV(p)", total=":total", upper="PREV(p)", least="1")
    assert params.sql(sql, args={"floor": 4, "total": 30}, df=df, offset=100).collect() == EXPECTED


def test_transpile_with_positional_args(params):
    sql = QUERY.format(**{**LITERALS, "total": "?", "least": "?"})
    text = sql_ext.transpile(sql, params, args=[30, 1])
    assert ":__sparkcep_p0" in text and "?" not in text.replace("C?", "")
    assert params.sql(text, args=sql_ext.named_args([30, 1])).collect() == EXPECTED


@pytest.mark.parametrize("parts, args, marker, needle", [
    (dict(total=":total", least=":least"), {"total": 30}, "least", ":least"),
    (dict(total="?", least="?"), [30], "?", "> ?"),  # the second marker has no value
    (dict(total="?"), None, "?", "< ?"),
    (dict(total=":total"), [1], "total", ":total"),  # named markers need a dict
])
def test_unbound_markers_at_the_users_marker(params, parts, args, marker, needle):
    sql = QUERY.format(**{**LITERALS, **parts})
    with pytest.raises(MatchRecognizeError) as info:
        params.sql(sql, args=args)
    line, column = at(sql, needle)
    assert info.value.message == f"[UNBOUND_SQL_PARAMETER] Found the unbound parameter: {marker}."
    assert (info.value.line, info.value.column) == (line, column + needle.find("?") if "?" in needle else column)


def test_error_positions_with_positional_markers(params):
    """Renaming ``?`` to ``:__sparkcep_p<k>`` moves no error position, and the name never shows."""
    sql = QUERY.format(**{**LITERALS, "lower": "? + PREV(p)", "total": "?", "upper": "no_such_column"})
    with pytest.raises(MatchRecognizeError) as info:
        params.sql(sql, args=[0, 30])
    assert (info.value.line, info.value.column) == at(sql, "no_such_column")
    assert "__sparkcep" not in str(info.value)


@pytest.mark.parametrize("parts, needle", [
    (dict(least="no_such_column"), "no_such_column"),
    (dict(least="n > 'x' + array(1)"), "'x' + array(1)"),
    (dict(least="1 GROUP BY no_such_column"), "no_such_column"),
])
def test_spark_errors_outside_the_clause_at_the_users_position(params, parts, needle):
    """Spark's errors about the statement around the clause (reported by Spark at positions of
    the rewritten SQL) come at the user's line:column, with Spark's message."""
    sql = QUERY.format(**{**LITERALS, **parts})
    with pytest.raises(MatchRecognizeError) as info:
        params.sql(sql)
    assert (info.value.line, info.value.column) == at(sql, needle)
    assert info.value.message.startswith("[") and " pos " not in info.value.message


def test_spark_error_before_the_clause_with_positional_markers(params):
    sql = "SELECT no_such_column, ? AS x FROM" + QUERY.format(**{**LITERALS, "total": "?"})[len("SELECT * FROM"):]
    with pytest.raises(MatchRecognizeError) as info:
        params.sql(sql, args=[1, 30])
    assert (info.value.line, info.value.column) == at(sql, "no_such_column")


def test_new_session_and_global_temp_view(params):
    """``enable(spark)`` covers every session of the SparkContext; a global temporary view over
    MATCH_RECOGNIZE reads in another session (its UDTF is registered there on demand)."""
    params.table("params").createOrReplaceGlobalTempView("params_global")
    other = params.newSession()
    sql = QUERY.format(**{**LITERALS, "source": "(SELECT * FROM global_temp.params_global WHERE p > 4)"})
    assert rows(other, sql) == EXPECTED
    params.sql(f"CREATE OR REPLACE GLOBAL TEMP VIEW mr_global AS {sql}")
    assert rows(params.newSession(), "SELECT * FROM global_temp.mr_global") == EXPECTED
    params.sql("DROP VIEW global_temp.mr_global")


def test_the_arrow_byte_limit_is_lifted_unless_set(params):
    """A MATCH_RECOGNIZE sets the session's Arrow byte limit per batch to Spark's "no limit" when
    it is unset (Spark then stops sizing the batch after every row it writes for Python) and
    keeps a limit the user set; the answer is the same either way."""
    key = "spark.sql.execution.arrow.maxBytesPerBatch"
    values = ", ".join(f"('{k}', {t}, {p})" for k, t, p in ROWS)
    sql = QUERY.format(**{**LITERALS, "source": f"(SELECT * FROM VALUES {values} AS v(k, t, p) WHERE p > 4)"})
    unset, chosen = params.newSession(), params.newSession()
    chosen.conf.set(key, "4096")
    assert unset.conf.get(key, None) is None
    assert rows(unset, sql) == rows(chosen, sql) == EXPECTED
    assert unset.conf.get(key) == str(2**31 - 1)
    assert chosen.conf.get(key) == "4096"


def test_enable_everywhere_and_disable(params):
    from pyspark.sql import SparkSession

    try:
        sql_ext.disable()
        assert not sql_ext.is_enabled(params)
        assert "sql" not in SparkSession.__dict__ or not getattr(SparkSession.sql, "_sparkcep", False)
        with pytest.raises(Exception) as info:
            params.sql(QUERY.format(**LITERALS))
        assert "PARSE_SYNTAX_ERROR" in str(info.value)
        assert sql_ext.enable() is params  # the active session
        assert sql_ext.is_enabled(params) and sql_ext.is_enabled(params.newSession())
        assert rows(params, QUERY.format(**LITERALS)) == EXPECTED
        sql_ext.disable(params)  # enable() holds: every session stays enabled
        assert sql_ext.is_enabled(params)
        sql_ext.disable()
        assert not sql_ext.is_enabled(params.newSession())
    finally:
        sql_ext.enable(params)
    assert rows(params, QUERY.format(**LITERALS)) == EXPECTED


def test_stale_temporary_view_is_a_clear_error(params):
    """A temporary view keeps the rewritten SQL; when its input changes type the UDTF says so
    (instead of failing inside pyarrow)."""
    view(params, "stale_input", "k string, t int, p int", ROWS)
    params.sql(f"CREATE OR REPLACE TEMP VIEW stale_mr AS {QUERY.format(**{**LITERALS, 'source': 'stale_input'})}")
    assert len(rows(params, "SELECT * FROM stale_mr")) == 3  # b: 5 4 6 too (no p > 4 filter)
    view(params, "stale_input", "k string, t int, p string", [(k, t, str(p)) for k, t, p in ROWS])
    with pytest.raises(Exception) as info:
        params.sql("SELECT * FROM stale_mr").collect()
    assert "[INCOMPATIBLE_VIEW_SCHEMA_CHANGE]" in str(info.value)
    assert "column p is STRING, it was INT" in str(info.value)


def test_no_spark_job_before_analysis_succeeds(params):
    tracker = params.sparkContext.statusTracker()
    params.sparkContext.setJobGroup("sparkcep-no-job", "analysis only")
    try:
        params.sql(QUERY.format(**{**LITERALS, "total": ":total"}), args={"total": 30})  # analysed, not run
        for bad in (dict(LITERALS, upper="no_such_column"), dict(LITERALS, total=":missing")):
            with pytest.raises(MatchRecognizeError):
                params.sql(QUERY.format(**bad), args={"total": 30})
        assert list(tracker.getJobIdsForGroup("sparkcep-no-job")) == []
    finally:
        params.sparkContext.setLocalProperty("spark.jobGroup.id", None)


def test_shipping_zip_and_local_policy(params, tmp_path):
    """The local test session's workers import this very udtf: nothing is shipped.  The zip
    holds both packages and is named by its content."""
    assert shipping.needed(params) is False
    path = shipping.build_zip(tmp_path)
    assert path == shipping.build_zip(tmp_path)
    names = zipfile.ZipFile(path).namelist()
    assert {"udtf/arrow.py", "udtf/match/__init__.py", "sql_ext/spark/session.py"} <= set(names)
    assert not [n for n in names if not n.endswith(".py")]


def test_enable_everywhere_patches_spark_connect_when_it_is_imported():
    """``enable()`` before Spark Connect's module is imported: its SparkSession class is
    patched on import (a fresh interpreter, no JVM); ``disable()`` restores both classes."""
    import subprocess
    import sys

    script = """if True:
        import sys
        import sql_ext
        assert "pyspark.sql.connect.session" not in sys.modules
        sql_ext.enable()
        from pyspark.sql import SparkSession as Classic
        from pyspark.sql.connect.session import SparkSession as Connect
        assert Classic.sql._sparkcep and Connect.sql._sparkcep
        sql_ext.disable()
        assert not hasattr(Classic.sql, "_sparkcep") and not hasattr(Connect.sql, "_sparkcep")
        print("ok")"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
