"""Which casts sparkcep accepts is which casts Spark accepts (``castability``: ``Cast.canCast`` /
``canAnsiCast`` / ``canTryCast``): every (from, to) pair of a grid of types, CAST without and
with ANSI and TRY_CAST, against Spark's own functions, and against Spark analysing the casts
over columns of the source types; a refused cast over match state is Spark's error at the CAST,
an accepted one gives Spark's value."""
from __future__ import annotations

import pytest

from spark_confs import session_confs
from sql_support import analysis_error, at, mr_spark, rows  # noqa: F401  (fixture)
from udtf.sparksql.castability import CastMode, can_cast
from udtf.sparksql.types import SqlType

TYPES = [
    "void", "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "decimal(10,2)", "decimal(38,0)",
    "string", "string collate UTF8_LCASE", "binary", "date", "timestamp", "timestamp_ntz",
    "interval day", "interval hour to second", "interval year", "interval year to month", "variant",
    "array<int>", "array<string>", "array<date>", "array<double>",
    "map<string,int>", "map<int,string>", "map<date,int>", "map<double,int>", "map<bigint,bigint>",
    "map<int,int>", "map<decimal(10,2),int>", "map<string,variant>", "array<variant>", "struct<a:variant>",
    "struct<a:int,b:string>", "struct<a:date>", "struct<a:bigint>", "interval",
]
CAST = {CastMode.LEGACY: ("false", "CAST"), CastMode.ANSI: ("true", "CAST"), CastMode.TRY: ("true", "TRY_CAST")}
SPARK = {CastMode.LEGACY: "canCast", CastMode.ANSI: "canAnsiCast", CastMode.TRY: "canTryCast"}


def _grid(spark):
    columns = ", ".join(f"CAST(NULL AS {t}) AS c{i}" if t != "void" else f"NULL AS c{i}" for i, t in enumerate(TYPES))
    spark.sql(f"CREATE OR REPLACE TEMP VIEW cast_grid AS SELECT {columns}")
    return [(mode, i, source, target, can_cast(SqlType.parse(source), SqlType.parse(target), mode))
            for mode in CastMode for i, source in enumerate(TYPES) for target in TYPES[1:]]  # (none casts to VOID)


def test_castability_is_sparks_over_a_grid_of_types_in_every_mode(spark):
    """Spark's own Cast.canCast / canAnsiCast / canTryCast on every pair."""
    jvm = spark._jvm
    cast, parse = jvm.org.apache.spark.sql.catalyst.expressions.Cast, jvm.org.apache.spark.sql.types.DataType.fromDDL
    types = {t: parse(t) for t in TYPES}
    grid = _grid(spark)
    disagree = [(mode.value, s, t, f"ours: {ours}") for mode, _, s, t, ours in grid
                if ours != getattr(cast, SPARK[mode])(types[s], types[t])]
    assert len(grid) == 3 * len(TYPES) * (len(TYPES) - 1)
    assert not disagree, f"{len(disagree)} of {len(grid)} disagree: {disagree[:20]}"


def test_spark_analyses_the_casts_castability_accepts_and_no_sampled_one_it_refuses(spark):
    """Spark's analysis: every accepted cast of a source type in one query per mode; every 16th
    refused one alone."""
    grid = _grid(spark)
    refused = [case for case in grid if not case[4]]
    for mode, (ansi, sql_cast) in CAST.items():
        with session_confs(spark, {"spark.sql.ansi.enabled": ansi}):
            for i, source in enumerate(TYPES):
                accepted = [f"{sql_cast}(c{i} AS {t})" for m, k, _, t, ours in grid if m is mode and k == i and ours]
                spark.sql(f"SELECT {', '.join(accepted)} FROM cast_grid").schema
            for m, i, source, target, _ in refused[::16]:
                if m is mode:
                    with pytest.raises(Exception, match="DATATYPE_MISMATCH"):
                        spark.sql(f"SELECT {sql_cast}(c{i} AS {target}) FROM cast_grid").schema


@pytest.mark.parametrize("ansi, cast, refused", [
    ("true", "CAST(d AS BOOLEAN)", True), ("false", "CAST(d AS BOOLEAN)", False),
    ("false", "TRY_CAST(d AS BOOLEAN)", True), ("true", "CAST(d AS INT)", True), ("false", "CAST(d AS INT)", False),
    ("false", "TRY_CAST(d AS INT)", True), ("true", "CAST(t AS BOOLEAN)", True), ("false", "CAST(t AS BOOLEAN)", False),
    ("false", "CAST(n AS BIGINT)", True), ("true", "CAST(i AS BINARY)", True), ("false", "TRY_CAST(m AS MAP<INT, INT>)", True),
])
def test_casts_over_match_state_are_accepted_and_refused_as_spark_does(mr_spark, ansi, cast, refused):
    base = """SELECT DATE'2024-01-02' AS d, TIMESTAMP'2024-01-02 03:04:05' AS t, TIMESTAMP_NTZ'2024-01-02 03:04:05' AS n,
              5 AS i, map('1', 2) AS m, o FROM VALUES (1), (2) AS v(o)"""
    engine = cast.replace("(", "(A.", 1)  # over match state: the engine casts
    spark = cast.replace("(", "(PREV(", 1).replace(" AS ", ") AS ", 1)  # the same cast, computed by Spark
    sql = f"""SELECT * FROM ({base}) MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS k
  PATTERN (A B) DEFINE B AS {engine} <=> {spark if not refused else 'NULL'}) m"""
    with session_confs(mr_spark, {"spark.sql.ansi.enabled": ansi}):
        if refused:
            e = analysis_error(mr_spark, sql)
            assert "DATATYPE_MISMATCH" in str(e) and (e.line, e.column) == at(sql, engine), str(e)
        else:
            assert rows(mr_spark, sql) == [(2,)]
