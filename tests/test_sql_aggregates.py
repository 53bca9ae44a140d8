"""Spark's aggregates over the rows of a match give what Spark gives over the same rows: RUNNING
values as Spark's window aggregate (ROWS UNBOUNDED PRECEDING), FINAL values as its GROUP BY, in
MEASURES and in DEFINE, with DISTINCT and FILTER."""
from __future__ import annotations

import pytest

from sql_support import mr_spark, rows, view  # noqa: F401  (fixture)

BITS = [(1, 1, 3, 300, -70000, 1 << 40), (1, 2, -128, None, 5, -1), (1, 3, None, -32768, 5, None),
        (1, 4, 127, 12, None, (1 << 62) + 3), (2, 1, 8, 8, 8, 8), (2, 2, None, None, None, None),
        (2, 3, -1, 3, 2147483647, -(1 << 63))]


def test_bit_or_over_every_integral_type(mr_spark):
    view(mr_spark, "bits", "p int, o int, ti tinyint, si smallint, i int, bi bigint", BITS)
    columns = ("ti", "si", "i", "bi")
    measures = ", ".join(f"RUNNING bit_or(A.{c}) AS r_{c}, FINAL bit_or(A.{c}) AS f_{c}" for c in columns)
    got = rows(mr_spark, f"""SELECT p, o, {', '.join(f'r_{c}, f_{c}' for c in columns)}, d, fl FROM bits
        MATCH_RECOGNIZE (PARTITION BY p ORDER BY o
          MEASURES {measures}, FINAL bit_or(DISTINCT A.i) AS d, RUNNING bit_or(A.bi) FILTER (WHERE A.o > 1) AS fl
          ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS true) AS m ORDER BY p, o""")
    running = ", ".join(f"bit_or({c}) OVER w AS r_{c}, g.f_{c}" for c in columns)
    want = rows(mr_spark, f"""SELECT b.p, b.o, {running}, g.d,
            bit_or(bi) FILTER (WHERE o > 1) OVER w AS fl
        FROM bits b JOIN (SELECT p, {', '.join(f'bit_or({c}) AS f_{c}' for c in columns)}, bit_or(DISTINCT i) AS d
                          FROM bits GROUP BY p) g ON g.p = b.p
        WINDOW w AS (PARTITION BY b.p ORDER BY o ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) ORDER BY p, o""")
    assert got == want
    assert want[3][2:4] == (-1, -1) and want[6][-2:] == (2147483647, -(1 << 63))  # (the data reach every bit)


def test_bit_or_in_define_sees_the_rows_mapped_so_far(mr_spark):
    view(mr_spark, "bits", "p int, o int, ti tinyint, si smallint, i int, bi bigint", BITS)
    got = rows(mr_spark, """SELECT * FROM (SELECT *, bit_or(bi) OVER (PARTITION BY p ORDER BY o
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS w FROM bits)
        MATCH_RECOGNIZE (PARTITION BY p ORDER BY o MEASURES COUNT(*) AS n PATTERN (A+)
          DEFINE A AS bit_or(A.bi) <=> w AND bit_or(A.ti) IS DISTINCT FROM 0) AS m ORDER BY p""")
    assert got == [(1, 4), (2, 3)]


def test_bit_or_of_a_non_integral_type_is_an_analysis_error(mr_spark):
    from sql_support import analysis_error, at
    view(mr_spark, "bits", "p int, o int, f double", [(1, 1, 1.0)])
    sql = "SELECT * FROM bits MATCH_RECOGNIZE (ORDER BY o MEASURES bit_or(A.f) AS b PATTERN (A) DEFINE A AS true)"
    error = analysis_error(mr_spark, sql)
    assert (error.line, error.column) == at(sql, "bit_or(A.f)") and "DATATYPE_MISMATCH" in error.message


# ---- every aggregate Spark has: registered (and compared with Spark) or refused with a reason ----

def test_parameterless_count_is_sparks_under_its_legacy_conf(mr_spark, confs):
    """count() is Spark's only under spark.sql.legacy.allowParameterlessCount, where Spark's Count
    of no argument counts no row (0, also over a window): it read as count(*) (Trino's count())
    and gave 1, 2, 3 in MEASURES and never matched `count() = 0` in DEFINE."""
    view(mr_spark, "counted", "id int", [(1,), (2,), (3,), (4,)])
    confs(mr_spark, {"spark.sql.legacy.allowParameterlessCount": "true"})
    got = rows(mr_spark, """SELECT id, r, f, c FROM counted MATCH_RECOGNIZE (ORDER BY id
        MEASURES count() AS r, FINAL count() AS f, count() FILTER (WHERE id > 2) + 1 AS c
        ALL ROWS PER MATCH PATTERN (X Y+) DEFINE X AS id > 1, Y AS count() = 0) ORDER BY id""")
    want = rows(mr_spark, """SELECT id, count() OVER (ORDER BY id), count() OVER (), count() FILTER (WHERE id > 2)
        OVER (ORDER BY id) + 1 FROM counted WHERE id > 1 ORDER BY id""")
    assert got == want == [(2, 0, 0, 1), (3, 0, 0, 1), (4, 0, 0, 1)]


def test_every_spark_aggregate_is_registered_or_refused(spark):
    from tests import aggregate_support as A
    from udtf.sparksql import aggregates
    theirs = A.spark_aggregates(spark)
    ours = set(aggregates.NAMES) | set(aggregates.REFUSED)
    assert theirs - ours == set(), "Spark aggregates neither registered nor refused"
    assert ours - theirs == set(), "registered or refused names Spark does not have"


@pytest.mark.parametrize("name", sorted(__import__("udtf.sparksql.aggregates", fromlist=["REFUSED"]).REFUSED))
def test_a_refused_aggregate_is_an_error_at_its_call(name):
    from catalog_support import StaticCatalog
    from sql_ext.compiler.rewrite import rewrite_sql
    from sql_support import at
    from udtf.errors import MatchRecognizeError
    from udtf.sparksql.aggregates import REFUSED
    sql = f"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY o MEASURES {name}(A.x) AS v PATTERN (A+) DEFINE A AS true)"
    with pytest.raises(MatchRecognizeError) as info:
        rewrite_sql(sql, StaticCatalog({"t": "o int, x double"}))
    assert (info.value.line, info.value.column) == at(sql, f"{name}(")
    assert REFUSED[name] in info.value.message


@pytest.mark.slow
@pytest.mark.parametrize("ansi", [True, False], ids=["ansi", "no_ansi"])
def test_every_registered_aggregate_matches_spark(mr_spark, ansi):
    """Every registered aggregate over every type it accepts (``aggregate_support.sample``; every
    way to call it with ``SPARKCEP_AGGREGATES_FULL=1``): typed as Spark's analyzer types it, its
    values (the library's folds and MATCH_RECOGNIZE's RUNNING / FINAL measures and DEFINE) and
    errors those of Spark's window / GROUP BY."""
    from tests import aggregate_support as A
    outcome = A.run(mr_spark, ansi, f"20261126-{ansi}")
    print(f"\n{outcome.summary()}")
    for m in outcome.typing + outcome.library[:40]:
        print("  MISMATCH", *m)
    for m in outcome.report.mismatches[:40]:
        print("  MISMATCH", *m, sep="\n    ")
    assert outcome.cases > 500 and outcome.report.aggregates > 20000
    assert not outcome.typing and not outcome.library and not outcome.report.mismatches


def test_collect_list_and_collect_set_of_a_void_column(mr_spark):
    """Spark types them ARRAY<VOID> without NULLs (its collections skip NULLs): empty arrays."""
    sql = """SELECT * FROM VALUES (1, NULL), (2, NULL) AS t(o, v) MATCH_RECOGNIZE (ORDER BY o
        MEASURES collect_list(v) AS l, collect_set(v) AS s, array_agg(v) FILTER (WHERE o > 1) AS f
        PATTERN (A+) DEFINE A AS true) m"""
    assert rows(mr_spark, sql) == [([], [], [])]


def test_listagg_of_binary_values(mr_spark):
    """BINARY values join as BINARY, as Spark's GROUP BY joins them."""
    view(mr_spark, "bins", "o int, b binary", [(1, b"\x01"), (2, None), (3, b"\xff\x00")])
    got = rows(mr_spark, """SELECT * FROM bins MATCH_RECOGNIZE (ORDER BY o
        MEASURES listagg(b) AS j, listagg(b, NULL) AS n PATTERN (A+) DEFINE A AS true) m""")
    assert got == rows(mr_spark, "SELECT listagg(b), listagg(b, NULL) FROM bins") == [(b"\x01\xff\x00",) * 2]


def test_listagg_without_a_delimiter_joins_with_none(mr_spark):
    """In MEASURES and in the query around MATCH_RECOGNIZE (which the rewrite re-emits)."""
    view(mr_spark, "strs", "o int, s string", [(1, "a"), (2, "b"), (3, "c")])
    assert rows(mr_spark, """SELECT listagg(s), max(j) FROM strs MATCH_RECOGNIZE (ORDER BY o
        MEASURES listagg(s) AS j ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS true) m""") == [("abc", "abc")]


@pytest.mark.parametrize("order, p", [("A.x", 0.25), ("A.x DESC", 0.4), ("A.i", 0.5), ("A.i DESC", 1.0), ("A.x", 0.0)])
def test_percentile_cont_running_and_final_is_sparks(mr_spark, order, p):
    # RUNNING over the rows so far and FINAL over the match, against Spark's GROUP BY of the
    # same rows (its window takes no frame for percentile_cont); NULL keys are skipped
    view(mr_spark, "pc", "o int, x double, i int",
         [(1, 1.5, 3), (2, None, 1), (3, 10.0, 2), (4, 2.5, None), (5, 7.0, 9), (6, -1.0, 4)])
    call = f"percentile_cont({p}) WITHIN GROUP (ORDER BY {order})"
    ours = rows(mr_spark, f"""SELECT o, r, f FROM pc MATCH_RECOGNIZE (ORDER BY o MEASURES
        RUNNING {call} AS r, FINAL {call} AS f ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS true) ORDER BY o""")
    mine = call.replace("A.", "q.")
    theirs = rows(mr_spark, f"""SELECT o, (SELECT {mine} FROM pc q WHERE q.o <= pc.o), (SELECT {mine} FROM pc q)
        FROM pc ORDER BY o""")
    assert ours == theirs and len(ours) == 6


def test_percentile_cont_in_define_sees_the_rows_mapped_so_far(mr_spark):
    view(mr_spark, "pc", "o int, x double", [(1, 1.0), (2, 2.0), (3, 9.0), (4, 8.0), (5, 0.5)])
    # running medians 1, 1.5, 2, then 5: A takes rows 1-3, B row 4; row 5 starts no match
    assert rows(mr_spark, """SELECT * FROM pc MATCH_RECOGNIZE (ORDER BY o MEASURES FIRST(A.o) AS s,
        LAST(A.o) AS e, B.o AS b PATTERN (A+ B)
        DEFINE A AS percentile_cont(0.5) WITHIN GROUP (ORDER BY A.x) <= 2, B AS true)""") == [(1, 3, 4)]


def test_percentile_cont_without_within_group_is_an_error_at_its_call():
    from catalog_support import StaticCatalog
    from sql_ext.compiler.rewrite import rewrite_sql
    from sql_support import at
    from udtf.errors import MatchRecognizeError
    sql = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY o MEASURES percentile_cont(A.x, 0.5) AS v PATTERN (A+) DEFINE A AS true)"
    with pytest.raises(MatchRecognizeError) as info:
        rewrite_sql(sql, StaticCatalog({"t": "o int, x double"}))
    assert (info.value.line, info.value.column) == at(sql, "percentile_cont(") and "WITHIN GROUP" in info.value.message


@pytest.mark.parametrize("ansi, odd", [(True, False), (False, True)], ids=["ansi-clean", "no_ansi-nulls_nan"])
def test_aggregates_over_expressions_with_filter_and_distinct_match_spark(mr_spark, ansi, odd):
    """SUM / AVG / MIN / MAX / COUNT / STDDEV over expressions of INT, BIGINT, DOUBLE and
    DECIMAL columns, with FILTER and DISTINCT, MAX_BY and BOOL_OR with FILTER: RUNNING and
    FINAL as Spark's window aggregates (clean columns: the emitter's vectorized path)."""
    from tests import aggregate_support as A
    report, compared = A.expressions(mr_spark, ansi, f"20261128-{ansi}-{odd}", odd)
    for m in report.mismatches[:20]:
        print("  MISMATCH", *m, sep="\n    ")
    assert compared > 40 and report.aggregates > 40 * 2 * 48 and not report.mismatches
