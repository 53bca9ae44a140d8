"""The standard surface beyond COUNT/SUM/AVG/MIN/MAX: every Spark aggregate, aggregates over
CLASSIFIER() and MATCH_NUMBER(), CLASSIFIER in navigation and expressions, nested navigation,
MATCH_NUMBER and aggregates in DEFINE, subqueries, unmatched and empty rows, quantified
anchors.  Expected rows are Trino 476's answers for the same query and data (checked with the
Trino tier's server) except where docs/sql.md lists a deliberate difference."""
from __future__ import annotations

import pytest

from sql_support import mr_spark, rows, view  # noqa: F401  (fixture)

ROWS = [("a", 1, 10, "x"), ("a", 2, 9, "y"), ("a", 3, 8, "x"), ("a", 4, 11, None), ("a", 5, 12, "z"),
        ("a", 6, 7, "y"), ("b", 1, 5, "q"), ("b", 2, 6, "r")]
QUERY = """SELECT * FROM surface MATCH_RECOGNIZE (PARTITION BY k ORDER BY t MEASURES {m} {rows}
    PATTERN ({p}) DEFINE {d}) AS m"""


@pytest.fixture(scope="module")
def surface(mr_spark):
    view(mr_spark, "surface", "k string, t int, p int, s string", ROWS)
    return mr_spark


def query(m, p="A B+ C*", d="B AS p < PREV(p), C AS p > PREV(p)", rows="ONE ROW PER MATCH"):
    return QUERY.format(m=m, p=p, d=d, rows=rows)


CASES = [
    ("aggregates", query("array_agg(B.p) AS a, max_by(B.t, B.p) AS mb, min_by(B.t, B.p) AS nb, count_if(B.p > 8) AS ci, "
                         "bool_and(C.p > 10) AS ba, bool_or(B.p > 8) AS bo"),
     [("a", [9, 8], 2, 3, 1, True, True)]),
    ("statistics", query("stddev(p) AS sd, stddev_pop(p) AS sdp, variance(p) AS v, var_pop(p) AS vp, "
                         "any_value(A.p) AS av, approx_distinct(s) AS acd"),
     [("a", 1.5811388300841898, 1.4142135623730951, 2.5, 2.0, 10, 3)]),
    ("running and final", query("RUNNING array_agg(p) AS a, FINAL array_agg(p) AS f, RUNNING max_by(t, p) AS mb",
                                rows="ALL ROWS PER MATCH"),
     [("a", 1, [10], [10, 9, 8, 11, 12], 1, 10, "x"), ("a", 2, [10, 9], [10, 9, 8, 11, 12], 1, 9, "y"),
      ("a", 3, [10, 9, 8], [10, 9, 8, 11, 12], 1, 8, "x"), ("a", 4, [10, 9, 8, 11], [10, 9, 8, 11, 12], 4, 11, None),
      ("a", 5, [10, 9, 8, 11, 12], [10, 9, 8, 11, 12], 5, 12, "z")]),
    ("aggregates over CLASSIFIER and MATCH_NUMBER",
     query("array_agg(CLASSIFIER()) AS c, max(MATCH_NUMBER()) AS mn, count(CASE WHEN p > 9 THEN 1 END) AS n"),
     [("a", ["A", "B", "B", "C", "C"], 1, 3)]),
    ("DISTINCT and FILTER", query("count(DISTINCT s) AS d, sum(p) FILTER (WHERE s = 'x') AS fx, "
                                  "collect_set(s) AS cs"),
     [("a", 3, 18, ["x", "y", "z"])]),
    ("CLASSIFIER navigation", query("PREV(CLASSIFIER()) AS pc, NEXT(CLASSIFIER()) AS nc, FIRST(CLASSIFIER()) AS fc, "
                                    "LAST(CLASSIFIER()) AS lc, CLASSIFIER() AS c", rows="ALL ROWS PER MATCH"),
     [("a", 1, None, "B", "A", "A", "A", 10, "x"), ("a", 2, "A", "B", "A", "B", "B", 9, "y"),
      ("a", 3, "B", "C", "A", "B", "B", 8, "x"), ("a", 4, "B", "C", "A", "C", "C", 11, None),
      ("a", 5, "C", None, "A", "C", "C", 12, "z")]),
    ("nested navigation", query("PREV(LAST(B.p), 2) AS a, NEXT(FIRST(p), 2) AS b, PREV(FIRST(p, 10), 2) AS c, "
                                "NEXT(RUNNING LAST(A.p, 0), 1) AS d", rows="ALL ROWS PER MATCH"),
     [("a", 1, None, 8, None, 9, 10, "x"), ("a", 2, None, 8, None, 9, 9, "y"), ("a", 3, 10, 8, None, 9, 8, "x"),
      ("a", 4, 10, 8, None, 9, 11, None), ("a", 5, 10, 8, None, 9, 12, "z")]),
    ("CLASSIFIER in CASE", query("CASE WHEN CLASSIFIER() = 'B' THEN 'down' ELSE 'other' END AS w",
                                 rows="ALL ROWS PER MATCH"),
     [("a", 1, "other", 10, "x"), ("a", 2, "down", 9, "y"), ("a", 3, "down", 8, "x"), ("a", 4, "other", 11, None),
      ("a", 5, "other", 12, "z")]),
    ("MATCH_NUMBER in DEFINE", query("COUNT(*) AS n, MATCH_NUMBER() AS mn", p="A B*",
                                     d="B AS p < PREV(p) AND MATCH_NUMBER() <= 1"),
     [("a", 1, 2), ("a", 1, 3), ("a", 1, 4), ("a", 3, 1), ("b", 1, 1), ("b", 1, 2)]),
    # conditions over CLASSIFIER() and MATCH_NUMBER() only (no column): no mask, evaluated per run
    ("CLASSIFIER and MATCH_NUMBER alone in DEFINE", query("COUNT(*) AS n, MATCH_NUMBER() AS mn", p="A B",
                                                          d="A AS MATCH_NUMBER() <= 2, B AS CLASSIFIER() = 'B'"),
     [("a", 2, 1), ("a", 2, 2), ("b", 2, 1)]),
    ("CLASSIFIER of another variable in DEFINE", query("COUNT(*) AS n", p="A B?", d="B AS CLASSIFIER() <> 'B'"),
     [("a", 1)] * 6 + [("b", 1)] * 2),
    # ties: the last row in match order, as Spark's min_by / max_by over rows in that order (Trino
    # leaves ties unspecified and returns the first here; docs/sql.md)
    ("min_by and max_by ties", query("min_by(t, s) AS a, max_by(t, s) AS b, min_by(s, p) AS c", p="A+", d="A AS true"),
     [("a", 3, 5, "y"), ("b", 1, 2, "q")]),
    # Trino's names: arbitrary is Spark's any_value (the first row's value), approx_distinct
    ("Trino's aggregate names", query("arbitrary(A.p) AS a, arbitrary(s) AS f, approx_distinct(B.s) AS d"),
     [("a", 10, "x", 2)]),
    # (Trino refuses approx_distinct in DEFINE: 'does not support copying'; docs/sql.md)
    ("approx_count_distinct in DEFINE", query("COUNT(*) AS n", p="A+", d="A AS approx_count_distinct(A.s) <= 2"),
     [("a", 4), ("a", 2), ("b", 2)]),
    ("CLASSIFIER navigation in DEFINE", query("COUNT(*) AS n", p="(A | B)+",
                                               d="A AS PREV(CLASSIFIER()) IS NULL OR PREV(CLASSIFIER()) = 'B', "
                                                 "B AS PREV(CLASSIFIER()) = 'A'"),
     [("a", 6), ("b", 2)]),
    ("aggregate in DEFINE", query("array_agg(p) AS a", p="A+", d="A AS count_if(A.p > 8) <= 2"),
     [("a", [10, 9, 8]), ("a", [11, 12, 7]), ("b", [5, 6])]),
    ("subqueries", query("(SELECT max(p) FROM surface) AS mx, COUNT(*) AS n", p="A B+",
                         d="B AS p < (SELECT avg(p) FROM surface) AND p IN (SELECT p FROM surface WHERE p < 9)"),
     [("a", 12, 2), ("a", 12, 2), ("b", 12, 2)]),
    ("unmatched rows", query("CASE WHEN COUNT(B.*) > 1 THEN 'many' ELSE 'none' END AS w, COALESCE(LAST(B.p), -1) AS lb",
                             p="A B B", d="B AS p < PREV(p)", rows="ALL ROWS PER MATCH WITH UNMATCHED ROWS"),
     [("a", 1, "none", -1, 10, "x"), ("a", 2, "none", 9, 9, "y"), ("a", 3, "many", 8, 8, "x"),
      ("a", 4, None, None, 11, None), ("a", 5, None, None, 12, "z"), ("a", 6, None, None, 7, "y"),
      ("b", 1, None, None, 5, "q"), ("b", 2, None, None, 6, "r")]),
    # Spark's collect_list over no rows is [] (Trino's array_agg: NULL; docs/sql.md)
    ("empty matches", query("CLASSIFIER() AS c, MATCH_NUMBER() AS mn, COUNT(*) AS n, LAST(p) AS lp, array_agg(p) AS ap",
                            p="A*", d="A AS p > 100", rows="ALL ROWS PER MATCH"),
     [(k, t, None, mn, 0, None, [], p, s) for mn, (k, t, p, s) in
      zip([1, 2, 3, 4, 5, 6, 1, 2], ROWS)]),
    ("RUNNING FIRST counts over the whole match (Trino)", query("FIRST(p, 1) AS f1, LAST(p, 1) AS l1", p="A+",
                                                                 d="A AS true", rows="ALL ROWS PER MATCH"),
     [("a", 1, 9, None, 10, "x"), ("a", 2, 9, 10, 9, "y"), ("a", 3, 9, 9, 8, "x"), ("a", 4, 9, 8, 11, None),
      ("a", 5, 9, 11, 12, "z"), ("a", 6, 9, 12, 7, "y"), ("b", 1, 6, None, 5, "q"), ("b", 2, 6, 5, 6, "r")]),
    ("quantified anchors", query("COUNT(*) AS n", p="^* A $+", d="A AS true"), [("a", 1), ("b", 1)]),
    ("empty cycles", query("COUNT(*) AS n", p="(A*)* B", d="A AS p > 9, B AS p <= 9"),
     [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 1)]),
    ("optional body repeated", query("COUNT(*) AS n, array_agg(CLASSIFIER()) AS c", p="(A?){2,} B", d="A AS p > 9"),
     [("a", 1, ["B"]), ("a", 2, ["A", "B"]), ("a", 3, ["A", "A", "B"]), ("b", 1, ["B"]), ("b", 1, ["B"])]),
    ("anchor in a loop", query("COUNT(*) AS n", p="(^ | A)* B", d="A AS p > 9"),
     [("a", 1), ("a", 1), ("a", 1), ("a", 3), ("b", 1), ("b", 1)]),
    ("() as an alternative", query("COUNT(*) AS n", p="A | ()", d="A AS p > 10"),
     [("a", 0), ("a", 0), ("a", 0), ("a", 1), ("a", 1), ("a", 0), ("b", 0), ("b", 0)]),
    # Trino's quoted variables: "b" keeps its case, its columns are "b".p; unquoted b is "B"
    ("double-quoted variables", query('FIRST(t) AS f, LAST("b".t) AS lb, COUNT(C.*) AS nc', p='a "b"+ C+',
                                      d='"b" AS "b".p < PREV("b".p), C AS p > PREV(p)'), [("a", 1, 3, 2)]),
    ("an unquoted variable is its upper-case name", query("CLASSIFIER() AS c, COUNT(*) AS n", p="b+ c",
                                                          d='"B" AS p < PREV(p), C AS p > PREV(p)'), [("a", "C", 3)]),
    ("navigation over CLASSIFIER(subset) in DEFINE", """SELECT k, t, p, c, pc, fc FROM surface MATCH_RECOGNIZE (
        PARTITION BY k ORDER BY t
        MEASURES CLASSIFIER() AS c, PREV(CLASSIFIER(U), 2) AS pc, PREV(FIRST(CLASSIFIER(U), 1), 1) AS fc
        ALL ROWS PER MATCH PATTERN (A B* C+ D?) SUBSET U = (A, C)
        DEFINE B AS p < PREV(p), C AS p > PREV(p) AND (PREV(CLASSIFIER(U), 2) IS NULL OR PREV(CLASSIFIER(U), 2) <> 'C'),
               D AS PREV(FIRST(CLASSIFIER(U), 1), 1) = 'B' OR PREV(LAST(CLASSIFIER(U), 1), 1) = 'C') AS m""",
     [("a", 1, 10, "A", None, "B"), ("a", 2, 9, "B", None, "B"), ("a", 3, 8, "B", None, "B"), ("a", 4, 11, "C", "B", "B"),
      ("a", 5, 12, "C", "B", "B"), ("a", 6, 7, "D", "B", "B"), ("b", 1, 5, "A", None, "A"), ("b", 2, 6, "C", None, "A")]),
    ("NEXT over CLASSIFIER in DEFINE lands in the run so far",
     query("CLASSIFIER() AS c", rows="ALL ROWS PER MATCH",
           d="B AS p < PREV(p), C AS NEXT(FIRST(CLASSIFIER()), 1) = 'B' AND NEXT(FIRST(CLASSIFIER(B)), 1) = 'B' "
             "AND NEXT(LAST(CLASSIFIER(B), 1), 1) = 'B' AND NEXT(CLASSIFIER(), 1) IS NULL"),
     [("a", 1, "A", 10, "x"), ("a", 2, "B", 9, "y"), ("a", 3, "B", 8, "x"), ("a", 4, "C", 11, None),
      ("a", 5, "C", 12, "z"), ("a", 6, "C", 7, "y")]),
    ("NEXT over CLASSIFIER in DEFINE is NULL beyond the run so far",
     query("CLASSIFIER() AS c", rows="ALL ROWS PER MATCH", d="B AS p < PREV(p), C AS NEXT(LAST(CLASSIFIER(B)), 2) IS NULL"),
     [("a", 1, "A", 10, "x"), ("a", 2, "B", 9, "y"), ("a", 3, "B", 8, "x"), ("a", 4, "C", 11, None),
      ("a", 5, "A", 12, "z"), ("a", 6, "B", 7, "y")]),
    # Trino 476 finds no match here (docs/sql.md, Differences), though it finds this one when
    # "PREV(FIRST(U.t, 1), 2) IS NOT NULL AND" is put before the condition
    ("CLASSIFIER navigation landing before the partition",
     query("CLASSIFIER() AS c", p="A+ B* C+", rows="ALL ROWS PER MATCH",
           d="A AS true, B AS p < PREV(p), C AS PREV(FIRST(CLASSIFIER(U), 1), 2) <> 'A'")
     .replace("DEFINE", "SUBSET U = (A, C) DEFINE"),
     [("a", 1, "A", 10, "x"), ("a", 2, "B", 9, "y"), ("a", 3, "B", 8, "x"), ("a", 4, "C", 11, None),
      ("a", 5, "C", 12, "z"), ("a", 6, "C", 7, "y")]),
    ("subqueries in aggregates, measures and DEFINE, read through m.*", """SELECT m.* FROM surface MATCH_RECOGNIZE (
        PARTITION BY k ORDER BY t
        MEASURES array_agg('X' || (SELECT 'Y')) AS a, array_agg(EXISTS (SELECT 1)) AS e, LAST(B.p) + (SELECT 1) AS l,
                 COUNT(*) AS n
        PATTERN (A B+) DEFINE B AS p < PREV(p) AND p < (SELECT max(p) FROM surface) AND EXISTS (SELECT 1)) AS m""",
     [("a", ["XY", "XY", "XY"], [True, True, True], 9, 3), ("a", ["XY", "XY"], [True, True], 8, 2)]),
]


@pytest.mark.parametrize("name, sql, expected", CASES, ids=[c[0] for c in CASES])
def test_surface(surface, name, sql, expected):
    assert sorted(rows(surface, sql), key=repr) == sorted(expected, key=repr)


@pytest.mark.parametrize("pattern", ["A{0}", "A{0,0}", "A{,0}"])
def test_quantifier_maximum_zero_is_an_error(surface, pattern):
    sql = query("COUNT(*) AS n", p=f"B {pattern}", d="B AS true")
    from sql_support import analysis_error, at
    err = analysis_error(surface, sql)
    assert err.message.startswith(f"quantifier {pattern[1:]}: the maximum must be at least 1")
    assert (err.line, err.column) == at(sql, pattern[1:])


def test_quoted_variables_keep_their_case(surface):
    """`b` and B are two variables (Trino: "b" and B); CLASSIFIER reports them as written."""
    sql = query("array_agg(CLASSIFIER()) AS c, COUNT(`b`.*) AS lower_b", p="A `b`+ B",
                d="`b` AS p < PREV(p), B AS p > PREV(p)")
    assert rows(surface, sql) == [("a", ["A", "b", "b", "B"], 2)]


def test_internal_names_do_not_collide_with_input_columns(surface):
    sql = """SELECT * FROM (SELECT k, t, p, p AS __mr_a0, p AS __mr_c0 FROM surface) MATCH_RECOGNIZE (
        PARTITION BY k ORDER BY t MEASURES LAST(__mr_a0) AS a, FIRST(__mr_c0) AS c, COUNT(*) AS n
        PATTERN (A B+) DEFINE B AS __mr_a0 < PREV(__mr_c0)) AS m"""
    assert rows(surface, sql) == [("a", 8, 10, 3), ("a", 7, 12, 2), ]


def test_columns_differing_only_in_case_are_ambiguous_when_referenced(surface):
    from sql_support import analysis_error, at
    sql = """SELECT * FROM (SELECT k, t, p AS x, p + 1 AS X FROM surface) MATCH_RECOGNIZE (
        PARTITION BY k ORDER BY t MEASURES COUNT(*) AS n PATTERN (A B+) DEFINE B AS x < PREV(x)) AS m"""
    err = analysis_error(surface, sql)
    assert err.message == "column x is ambiguous: the input has x, X"
    assert (err.line, err.column) == at(sql, "x < PREV")
    ok = sql.replace("DEFINE B AS x < PREV(x)", "DEFINE B AS t > 0")
    assert rows(surface, ok) == [("a", 6), ("b", 2)]


def test_a_partition_key_named_twice_partitions_once_and_is_output_twice(surface):
    """As Trino 476: ``PARTITION BY k, K`` partitions by k, and ONE ROW / ALL ROWS PER MATCH
    output the key once per mention (SELECT * gives k, k, ...)."""
    sql = query("COUNT(*) AS n").replace("PARTITION BY k", "PARTITION BY k, K")
    assert rows(surface, sql) == [("a", "a", 5)]
    assert rows(surface, sql.replace("SELECT *", "SELECT n")) == [(5,)]
    all_rows = query("COUNT(*) AS n", rows="ALL ROWS PER MATCH").replace("PARTITION BY k", "PARTITION BY k, k")
    assert [r[:4] for r in rows(surface, all_rows)][:2] == [("a", "a", 1, 1), ("a", "a", 2, 2)]
