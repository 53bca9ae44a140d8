"""Statements around MATCH_RECOGNIZE: CTAS, INSERT, temp views, EXPLAIN, Delta tables, scripts,
statements without MATCH_RECOGNIZE (untouched).  (The same query on a 2-executor cluster:
tests/test_deploy.py.)"""
from __future__ import annotations

import pytest

import sql_ext
from spark_confs import session_confs
from sql_support import analysis_error, at, mr_spark, rows, view  # noqa: F401  (fixture)

MR = """MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY t
          MEASURES FIRST(A.t) AS start, COUNT(*) AS n, SUM(B.p) AS drop_sum
          PATTERN (A B+)
          DEFINE B AS p < PREV(p))"""
EXPECTED = [("a", 1, 3, 17), ("a", 5, 2, 7)]


@pytest.fixture(scope="module")
def series(mr_spark):
    # k = 'a': 10 9 8 11 12 7 ; k = 'b': 5 6
    view(mr_spark, "series", "k string, t int, p int",
         [("a", t, p) for t, p in enumerate([10, 9, 8, 11, 12, 7], 1)] + [("b", 1, 5), ("b", 2, 6)])
    yield mr_spark
    for table in ("mr_ctas", "mr_insert", "mr_delta"):
        mr_spark.sql(f"DROP TABLE IF EXISTS {table}")


@pytest.mark.parametrize("sql", [
    "SELECT 1 AS x",
    "SELECT * FROM series WHERE k = 'MATCH_RECOGNIZE'",
    "SELECT 1 AS match_recognize -- not a MATCH_RECOGNIZE clause",
    "CREATE OR REPLACE TEMP VIEW v AS SELECT * FROM series",
    "SHOW TABLES",
    "EXPLAIN SELECT 'MATCH_RECOGNIZE'",
    "SELECT 1; SELECT 2",
])
def test_statements_without_match_recognize_pass_through(series, sql):
    assert sql_ext.transpile(sql, series) is sql


def test_lower_case_comments_and_trailing_semicolon(series):
    sql = """select * from series match_recognize (
          partition by k -- one partition per key
          order by t /* time */
          measures count(*) as n, last(b.p) as low
          after match
            skip past last row
          pattern (a /* start */ b+ -- then drops
          )
          define b as p < prev(p)
        ) m;"""
    assert rows(series, sql) == [("a", 3, 8), ("a", 2, 7)]


# every word and symbol apart, so that a comment can stand in each gap
SPACED = [
    "WITH w AS ( SELECT * FROM series WHERE t > 0 ) SELECT m . k , m . n , m . s , m . low FROM ( SELECT * FROM w )"
    " AS q MATCH_RECOGNIZE ( PARTITION BY k ORDER BY t ASC NULLS FIRST MEASURES FIRST ( A . t ) AS s , RUNNING"
    " COUNT ( * ) AS n , LAST ( B . p ) AS low AFTER MATCH SKIP TO LAST B PATTERN ( ^ A B { 1 , 3 } ? C * )"
    " SUBSET U = ( A , B ) DEFINE B AS p < PREV ( p , 1 ) , C AS p > 0 ) AS m ORDER BY m . s",
    "SELECT * FROM series MATCH_RECOGNIZE ( ORDER BY k , t MEASURES CLASSIFIER ( ) AS c ALL ROWS PER MATCH"
    " PATTERN ( A B + ) DEFINE B AS B . p < PREV ( B . p ) ) m WHERE t <> 2 ORDER BY k , t",
]


@pytest.mark.parametrize("sql", SPACED, ids=["one row", "all rows"])
@pytest.mark.parametrize("comment", [" -- c */ ; x\n", " /* c -- ; */ ", " --\n"])
def test_comments_in_every_gap(series, sql, comment):
    """A comment of either kind between any two words: before or after the clause, inside
    its PATTERN, DEFINE and MEASURES, between ORDER and BY (the rewrite re-emits the input
    and the alias as written, and generates the rest; one gap at a time: test_rewrite.py)."""
    expected = rows(series, sql)
    assert rows(series, comment.join(sql.split(" "))) == expected and expected


def test_a_comment_at_the_end_of_a_statement_cannot_swallow_the_next(series):
    """A script's statements end at their last word: the separator the rewrite (or the CLI)
    writes after one is not inside its trailing line comment."""
    from sql_ext.spark.catalog import SparkCatalog
    from sql_ext.compiler.parse import statement_spans
    from sql_ext.compiler.rewrite import rewrite_sql

    script = f"SELECT 1 AS one -- first\n;\nSELECT count(*) AS n FROM series {MR} AS m -- last\n; SELECT 3 -- end"
    text, _ = rewrite_sql(script, SparkCatalog(series))
    statements = [text[a:b] for a, b in statement_spans(text)]
    assert [rows(series, statement) for statement in statements] == [[(1,)], [(2,)], [(3,)]]


def test_enable_is_idempotent_and_keeps_spark_sql(series):
    sql_method = series.sql
    assert sql_ext.enable(series) is series and series.sql == sql_method
    assert rows(series, "SELECT count(*) FROM series WHERE k = 'MATCH_RECOGNIZE'") == [(0,)]


def test_create_table_as_select_and_read_it_back(series):
    """CTAS with a MATCH_RECOGNIZE, then a MATCH_RECOGNIZE over the stored table."""
    series.sql("DROP TABLE IF EXISTS mr_ctas")
    series.sql(f"CREATE TABLE mr_ctas USING parquet AS SELECT * FROM series {MR} AS m")
    assert sorted(rows(series, "SELECT * FROM mr_ctas")) == EXPECTED
    assert rows(series, """SELECT * FROM mr_ctas MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY start
          MEASURES SUM(n) AS rows_in_drops
          PATTERN (X+))""") == [("a", 5)]


def test_insert_into_and_overwrite(series):
    series.sql("DROP TABLE IF EXISTS mr_insert")
    series.sql("CREATE TABLE mr_insert (k STRING, start INT, n BIGINT, drop_sum BIGINT) USING parquet")
    series.sql(f"INSERT INTO mr_insert SELECT * FROM series {MR} AS m")
    series.sql(f"INSERT INTO mr_insert SELECT k, start, n, drop_sum FROM series {MR} AS m WHERE n = 2")
    assert sorted(rows(series, "SELECT * FROM mr_insert")) == sorted(EXPECTED + [("a", 5, 2, 7)])
    series.sql(f"INSERT OVERWRITE TABLE mr_insert SELECT * FROM series {MR} AS m")
    assert sorted(rows(series, "SELECT * FROM mr_insert")) == EXPECTED


def test_temporary_views(series):
    series.sql(f"CREATE OR REPLACE TEMP VIEW mr_view AS SELECT * FROM series {MR} AS m")
    series.sql("CREATE OR REPLACE TEMPORARY VIEW mr_view_2 AS SELECT k, n FROM mr_view WHERE n > 2")
    assert rows(series, "SELECT * FROM mr_view_2") == [("a", 3)]


@pytest.mark.parametrize("create", ["CREATE VIEW", "CREATE OR REPLACE VIEW"])
def test_persistent_view_is_refused(series, create):
    sql = f"{create} mr_persistent AS\nSELECT * FROM series {MR} AS m"
    err = analysis_error(series, sql)
    assert err.message == (
        "CREATE VIEW with MATCH_RECOGNIZE must be a TEMPORARY view: the view calls a "
        "session-scoped function (use CREATE TEMP VIEW, or CREATE TABLE ... AS SELECT)")
    assert (err.line, err.column) == at(sql, "mr_persistent")


def test_explain(series):
    """EXPLAIN of a MATCH_RECOGNIZE query shows the plan of its rewrite (the UDTF call)."""
    plan = rows(series, f"EXPLAIN FORMATTED SELECT * FROM series {MR} AS m")[0][0]
    assert "sparkcep_mr_" in plan
    sql = f"EXPLAIN\nSELECT * FROM series {MR.replace('PREV(p)', 'PREV(Z.p)')} AS m"
    err = analysis_error(series, sql)
    assert (err.message, err.line, err.column) == ("Z is not a pattern variable or subset", *at(sql, "Z.p"))


def test_script_of_several_statements(series):
    """transpile() rewrites every statement of a script (spark.sql runs one statement).  Each
    statement is rewritten before any runs, so a clause cannot read a view the script creates."""
    script = (f"CREATE OR REPLACE TEMP VIEW s1 AS SELECT * FROM series {MR} AS m;\n"
              f"SELECT 1 AS one;\n"
              f"SELECT * FROM series {MR.replace('B+', 'B*')} AS x")
    first, second, third = sql_ext.transpile(script, series).split(";\n")
    assert second == "SELECT 1 AS one"
    for statement in (first, third):
        assert "MATCH_RECOGNIZE" not in statement and "sparkcep_mr_" in statement.lower()
    series.sql(first)
    assert sorted(rows(series, "SELECT * FROM s1")) == EXPECTED
    assert len(rows(series, third)) == 5  # a: 1-3, 4, 5-6; b: 1, 2


def test_pyspark_string_formatting(series):
    """spark.sql(..., df=DataFrame, col=Column, value=str): pyspark's formatting is applied
    before the rewrite, whose schema queries must see the DataFrame's temp view."""
    from pyspark.sql import functions as F

    df = series.table("series").where("k = 'a'")
    sql = """SELECT * FROM {df} MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY {order}
          MEASURES COUNT(*) AS n, {label} AS label
          PATTERN (A B+) DEFINE B AS p < PREV(p))"""
    assert series.sql(sql, df=df, order=F.col("t"), label="drop").collect() == [
        ("a", 3, "drop"), ("a", 2, "drop")]
    assert [t.name for t in series.catalog.listTables() if t.name.startswith("_pyspark_")] == []


def test_persistent_view_without_match_recognize_in_a_script(series):
    """Only a view whose query holds a MATCH_RECOGNIZE must be temporary."""
    script = f"CREATE VIEW plain_view AS SELECT 1 AS one;\nSELECT * FROM series {MR} AS m"
    first, second = sql_ext.transpile(script, series).split(";\n")
    assert first == "CREATE VIEW plain_view AS SELECT 1 AS one" and "sparkcep_mr_" in second.lower()


@pytest.mark.delta
def test_delta_table_in_and_out(series):
    """A Delta table as input (also at a past version) and as CTAS target."""
    series.sql("DROP TABLE IF EXISTS mr_delta")
    series.sql("CREATE TABLE mr_delta USING delta AS SELECT * FROM series")
    series.sql("INSERT INTO mr_delta VALUES ('a', 7, 1)")
    out = rows(series, f"""SELECT 'now', * FROM mr_delta {MR} AS m
                           UNION ALL SELECT 'v0', * FROM mr_delta VERSION AS OF 0 {MR} AS m""")
    assert sorted(out) == sorted([("now", "a", 1, 3, 17), ("now", "a", 5, 3, 8),
                                  ("v0", "a", 1, 3, 17), ("v0", "a", 5, 2, 7)])


@pytest.mark.parametrize("price_type, derived", [
    ("INT", True), ("BIGINT", True), ("DECIMAL(9,2)", True), ("STRING", True), ("DATE", True),
    ("DOUBLE", False),  # NaN orders differently in Arrow: Spark's LAG computes the mask
])
def test_prev_comparisons_derived_in_the_udtf(mr_spark, price_type, derived):
    """``price < PREV(price)`` masks are derived in the UDTF (no Spark window) for types Arrow
    compares exactly as Spark does; across Arrow batches of 3 rows, partition boundaries and
    NULLs the matches equal those of the Spark-window plan (forced with ``+ 0`` / ``|| ''``)."""
    import random

    rng = random.Random(7)
    data = []
    for sym in ("a", "b", "c"):
        for ts in range(40):
            value = None if rng.random() < .1 else rng.randint(10, 20)
            data.append((sym, ts, value))
    to_type = {"STRING": "LPAD(CAST(v AS STRING), 3, '0')", "DATE": "DATE_ADD(DATE'2024-01-01', v)"}
    mr_spark.createDataFrame(data, "sym string, ts int, v int").createOrReplaceTempView("derive_raw")
    mr_spark.sql(f"CREATE OR REPLACE TEMP VIEW derive_src AS SELECT sym, ts, "
                 f"CAST({to_type.get(price_type, 'v')} AS {price_type}) AS price FROM derive_raw")
    template = """
        SELECT * FROM derive_src MATCH_RECOGNIZE (
          PARTITION BY sym ORDER BY ts
          MEASURES FIRST(ts) AS s, LAST(DOWN.ts) AS b, LAST(ts) AS e, MATCH_NUMBER() AS m
          ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
          PATTERN (STRT DOWN+ UP+ FLAT?)
          DEFINE DOWN AS {p} < PREV({p}), UP AS {p} > PREV({p}, 1),
                 FLAT AS PREV({p}, 2) = {p} AND {p} <> PREV({p}))"""
    fast = template.format(p="price")
    # the same values through an expression, which Spark's LAG computes
    forced = template.format(p={"STRING": "(price || '')", "DATE": "CAST(price AS STRING)"}.get(price_type,
                                                                                               "(price + 0)"))
    assert ("LAG(" not in sql_ext.transpile(fast, mr_spark).upper()) == derived
    with session_confs(mr_spark, {"spark.sql.execution.arrow.maxRecordsPerBatch": "3"}):
        got, expected = rows(mr_spark, fast), rows(mr_spark, forced)
    assert got == expected and len(got) > 5


# ---- the columns a statement reads: the others are neither computed nor carried (sql_ext.compiler.demand)
ALL_ROWS = """series MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY t
          MEASURES FIRST(A.t) AS start, COUNT(*) AS n, SUM(B.p) AS drop_sum, CLASSIFIER() AS cls,
                   MATCH_NUMBER() AS mno
          ALL ROWS PER MATCH{unmatched}
          PATTERN (A B+)
          DEFINE B AS p < PREV(p)) AS m"""


@pytest.mark.parametrize("unmatched", ["", " WITH UNMATCHED ROWS"])
@pytest.mark.parametrize("columns, tail", [
    ("n, cls", ""),
    ("m.p, drop_sum", " WHERE t > 1"),
    ("k, count(*), max(mno)", " GROUP BY k"),
    ("count(*)", ""),
    ("start", " ORDER BY t DESC"),
])
def test_reading_some_columns_gives_the_same_rows(series, unmatched, columns, tail):
    clause = ALL_ROWS.format(unmatched=unmatched)
    got = rows(series, f"SELECT {columns} FROM {clause}{tail}")
    series.sql(f"CREATE OR REPLACE TEMP VIEW every_column AS SELECT * FROM {clause}")
    expected = rows(series, f"SELECT {columns} FROM every_column AS m{tail}")
    assert sorted(got, key=repr) == sorted(expected, key=repr) and got


CONSTANT = """series MATCH_RECOGNIZE (
          ORDER BY k, t
          MEASURES {measures}
          {rows}
          PATTERN (A B+)
          DEFINE B AS p < PREV(p)) AS m"""


@pytest.mark.parametrize("columns, measures, rows_mode, tail, expected", [
    ("label, count(*)", "'drop' AS label, FIRST(A.t) AS s", "", " GROUP BY label", [("drop", 2)]),
    ("count(*)", "'drop' AS label, FIRST(A.t) AS s", "", "", [(2,)]),
    ("*", "'drop' AS label", "", "", [("drop",), ("drop",)]),
    ("*", "'drop' AS label, 1 + 1 AS two, CAST(NULL AS INT) AS none", "", "",
     [("drop", 2, None), ("drop", 2, None)]),
    ("label", "'drop' AS label, FIRST(A.t) AS s", "ALL ROWS PER MATCH", "", [("drop",)] * 6),
    ("count(*)", "'drop' AS label", "ALL ROWS PER MATCH WITH UNMATCHED ROWS", "", [(8,)]),
    ("1", "'drop' AS label", "", "", [(1,), (1,)]),
])
def test_only_constant_measures_read(series, columns, measures, rows_mode, tail, expected):
    """Nothing read from the engine but its rows: one row per match (per match row)."""
    clause = CONSTANT.format(measures=measures, rows=rows_mode)
    assert rows(series, f"SELECT {columns} FROM {clause}{tail}") == expected


def test_reading_through_a_derived_table(series):
    clause = ALL_ROWS.format(unmatched="")
    sql = f"SELECT count(*) AS c, sum(start) AS s, min(cls) AS e FROM (SELECT *, n + 1 AS n1 FROM {clause} WHERE n > 1) q"
    assert "drop_sum" in sql and "drop_sum" not in sql_ext.transpile(sql, series)
    assert rows(series, sql) == [(3, 7, "B")]


def test_an_unread_measure_spark_rejects_is_still_an_error(series):
    sql = f"SELECT count(*) FROM {ALL_ROWS.format(unmatched='').replace('MATCH_NUMBER()', 'MATCH_NUMBER() + array(1)')}"
    error = analysis_error(series, sql)
    assert (error.line, error.column) == at(sql, "MATCH_NUMBER() + array(1)")


def test_an_order_by_outside_the_parentheses_reads_below_the_select_list(series):
    clause = ALL_ROWS.format(unmatched="")
    assert rows(series, f"(SELECT start FROM {clause}) ORDER BY n DESC, t LIMIT 2") == [(1,), (1,)]
    assert rows(series, f"SELECT s FROM (SELECT start AS s, * FROM {clause} ORDER BY 3 LIMIT 1) q") == [(1,)]
