"""Row pattern recognition in a window (SQL:2016 R020): SQL in, rows out through ``spark.sql``.

The expected rows are Trino 476's for the same query (checked by hand on a local Trino; the
differential tier, ``tests/trino``, compares generated ones), but for Spark's own functions:
``collect_list`` over an empty frame is ``[]`` where Trino's ``array_agg`` is NULL.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from spark_confs import session_confs
from sql_support import analysis_error, at, mr_spark, rows, schema, view  # noqa: F401  (fixture)

# p, o, x: one partition whose x falls and rises: 10 8 6 9 12 | 11 5 7 | 3 4
SERIES = [(1, o, x) for o, x in enumerate([10, 8, 6, 9, 12, 11, 5, 7, 3, 4], 1)]
V_SHAPE = "DEFINE B AS B.x < PREV(B.x), C AS C.x > PREV(C.x)"


@pytest.fixture(scope="module")
def series(mr_spark):
    view(mr_spark, "series", "p int, o int, x int", SERIES)
    view(mr_spark, "orders", "cust_key int, order_date date, total_price decimal(8,2)",
         [(1, dt.date(2024, 1, d), Decimal(v)) for d, v in enumerate(["10", "8", "6", "9", "12"], 1)] +
         [(2, dt.date(2024, 1, d), Decimal(v)) for d, v in enumerate(["5", "4", "7"], 1)])
    return mr_spark


def window(frame="ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING", measures="MEASURES LAST(C.x) AS m",
           skip="", search="", pattern="A B+ C+", define=V_SHAPE, subset="") -> str:
    return f"(PARTITION BY p ORDER BY o {measures} {frame} {skip} {search} PATTERN ({pattern}) {subset} {define})"


def test_the_issue_example(series):
    """The run that starts at each order: its end, its length and its average (Trino's rows)."""
    got = rows(series, """
        SELECT cust_key, order_date,
               run_end OVER w AS run_end, count(*) OVER w AS run_length, avg(total_price) OVER w AS avg_in_run
        FROM orders
        WINDOW w AS (
          PARTITION BY cust_key ORDER BY order_date
          MEASURES LAST(C.order_date) AS run_end
          ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING
          AFTER MATCH SKIP PAST LAST ROW
          INITIAL
          PATTERN (A B+ C+)
          DEFINE B AS B.total_price < PREV(B.total_price), C AS C.total_price > PREV(C.total_price))
        ORDER BY cust_key, order_date""")
    day = lambda d: dt.date(2024, 1, d)  # noqa: E731
    assert got == [(1, day(1), day(5), 5, Decimal("9.000000")), (1, day(2), None, 0, None), (1, day(3), None, 0, None),
                   (1, day(4), None, 0, None), (1, day(5), None, 0, None),
                   (2, day(1), day(3), 3, Decimal("5.333333")), (2, day(2), None, 0, None), (2, day(3), None, 0, None)]


def test_measures_and_functions_over_the_match(series):
    got = rows(series, f"""
        SELECT o, m OVER w, k OVER w, count(*) OVER w, sum(x) OVER w, first_value(x) OVER w, last_value(x) OVER w,
               nth_value(x, 2) OVER w, collect_list(x) OVER w, max(x) OVER w
        FROM series WINDOW w AS {window(measures="MEASURES LAST(C.x) AS m, 'k' AS k")} ORDER BY o""")
    unmatched = (None, None, 0, None, None, None, None, [], None)
    assert got == [(1, 12, "k", 5, 45, 10, 12, 8, [10, 8, 6, 9, 12], 12), *[(o, *unmatched) for o in (2, 3, 4, 5)],
                   (6, 7, "k", 3, 23, 11, 7, 5, [11, 5, 7], 11), *[(o, *unmatched) for o in (7, 8, 9, 10)]]


@pytest.mark.parametrize("frame, skip, search, expected", [
    # SKIP TO NEXT ROW with SEEK: every row not matched from itself takes a later match of its frame
    ("ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING", "AFTER MATCH SKIP TO NEXT ROW", "SEEK",
     [(1, 12, 5), (2, 12, 4), (3, 7, 4), (4, 7, 4), (5, 7, 4), (6, 7, 3), (7, 4, 3), (8, 4, 3), (9, None, 0),
      (10, None, 0)]),
    # the frame's end bounds the match (and the search)
    ("ROWS BETWEEN CURRENT ROW AND 3 FOLLOWING", "AFTER MATCH SKIP PAST LAST ROW", "SEEK",
     [(1, 9, 4), *[(o, None, 0) for o in (2, 3, 4)], (5, 7, 4), *[(o, None, 0) for o in range(6, 11)]]),
    ("ROWS BETWEEN CURRENT ROW AND 3 FOLLOWING", "AFTER MATCH SKIP TO NEXT ROW", "INITIAL",
     [(1, 9, 4), (2, 12, 4), (3, None, 0), (4, None, 0), (5, 7, 4), (6, 7, 3), (7, None, 0), (8, 4, 3), (9, None, 0),
      (10, None, 0)]),
    ("ROWS BETWEEN CURRENT ROW AND CURRENT ROW", "", "SEEK", [(o, None, 0) for o in range(1, 11)]),
])
def test_frame_skip_and_search(series, frame, skip, search, expected):
    got = rows(series, f"SELECT o, m OVER w, count(*) OVER w FROM series "
                       f"WINDOW w AS {window(frame=frame, skip=skip, search=search)} ORDER BY o")
    assert got == expected


def test_navigation_reads_only_the_frame(series):
    """PREV at the row itself and NEXT past the frame's end are NULL; in SEEK, the rows between
    the row and its match's start are readable."""
    got = rows(series, f"""
        SELECT o, m OVER w, n OVER w, q OVER w FROM series
        WINDOW w AS {window(measures="MEASURES PREV(A.x) AS m, NEXT(A.x, 3) AS n, NEXT(A.x) AS q",
                            frame="ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING", pattern="A",
                            define="DEFINE A AS PREV(A.x) IS NULL")}
        ORDER BY o""")
    assert got == [(o, None, None, x) for (_, o, _), (_, _, x) in zip(SERIES, SERIES[1:] + [(1, 11, None)])]
    got = rows(series, f"""
        SELECT o, m OVER w, s OVER w FROM series
        WINDOW w AS {window(measures="MEASURES A.x AS m, PREV(A.x) AS s", search="SEEK", pattern="A",
                            skip="AFTER MATCH SKIP TO NEXT ROW", define="DEFINE A AS PREV(A.x) > A.x")}
        ORDER BY o""")
    assert got == [(1, 8, 10), (2, 6, 8), (3, 11, 12), (4, 11, 12), (5, 11, 12), (6, 5, 11), (7, 3, 7), (8, 3, 7),
                   (9, None, None), (10, None, None)]


def test_empty_and_unmatched_rows(series):
    """An empty match evaluates the measures over no rows; an unmatched row's are NULL."""
    got = rows(series, f"""
        SELECT o, k OVER w, c OVER w, l OVER w, count(*) OVER w FROM series
        WINDOW w AS {window(measures="MEASURES 'k' AS k, count(*) AS c, CLASSIFIER() AS l", pattern="A*",
                            define="DEFINE A AS x > 9")}
        WHERE o <= 4 ORDER BY o""")
    assert got == [(1, "k", 1, "A", 1), (2, "k", 0, None, 0), (3, "k", 0, None, 0), (4, "k", 0, None, 0)]


def test_skip_to_a_variable(series):
    got = rows(series, f"""SELECT o, m OVER w FROM series WINDOW w AS {window(skip="AFTER MATCH SKIP TO LAST C",
                                                                            measures="MEASURES FIRST(A.x) AS m")}
                           ORDER BY o""")
    assert got == [(1, 10), (2, None), (3, None), (4, None), (5, 12), (6, None), (7, None), (8, 7), (9, None),
                   (10, None)]
    with pytest.raises(Exception, match="cannot skip to first row of match"):
        rows(series, f"SELECT m OVER w FROM series WINDOW w AS "
                     f"{window(skip='AFTER MATCH SKIP TO FIRST A', measures='MEASURES A.x AS m')}")


def test_subsets_classifier_and_aggregates_in_measures(series):
    got = rows(series, f"""
        SELECT o, u OVER w, s OVER w, l OVER w FROM series
        WINDOW w AS {window(measures="MEASURES LAST(U.x) AS u, SUM(B.x) AS s, LAST(CLASSIFIER()) AS l",
                            subset="SUBSET U = (A, B)")}
        ORDER BY u OVER w IS NULL, o LIMIT 2""")
    assert got == [(1, 6, 14, "C"), (6, 5, 5, "C")]


def test_any_spark_aggregate_over_the_match(series):
    """Spark's aggregates over the rows of each match (row 1's match is 10 8 6 9 12), with
    Spark's values over an empty frame for the unmatched rows."""
    got = rows(series, f"""
        SELECT o, max_by(o, x) OVER w, percentile(x, 0.5) OVER w, sort_array(collect_set(x) OVER w),
               bool_and(x > 5) OVER w, approx_count_distinct(x) OVER w, string_agg(cast(x AS string), ',') OVER w,
               count_if(x > 8) OVER w, mode(x > 8) OVER w
        FROM series WINDOW w AS {window()} ORDER BY o LIMIT 2""")
    assert got == [(1, 5, 9.0, [6, 8, 9, 10, 12], True, 5, "10,8,6,9,12", 3, True),
                   (2, None, None, [], None, 0, None, 0, None)]


def test_several_windows_and_other_window_functions(series):
    """Each pattern window is its own pass; ordinary windows see the same rows."""
    got = rows(series, f"""
        SELECT o, m OVER w, count(*) OVER w, n OVER (PARTITION BY p ORDER BY o MEASURES A.x AS n
                                                   ROWS BETWEEN CURRENT ROW AND CURRENT ROW PATTERN (A)
                                                   DEFINE A AS x > 9),
               row_number() OVER (ORDER BY o DESC) AS r, sum(x) OVER v AS s
        FROM series WINDOW w AS {window()}, v AS (ORDER BY o ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
        WHERE o <= 3 ORDER BY o""")
    # WHERE keeps 10 8 6: no rise, so no match of w
    assert got == [(1, None, 0, 10, 3, 10), (2, None, 0, None, 2, 18), (3, None, 0, None, 1, 14)]


def test_names_stars_and_order_by_measure(series):
    sql = f"SELECT *, m OVER w, count(*) OVER w + 1 FROM series WINDOW w AS {window()} ORDER BY m OVER w, o LIMIT 3"
    assert [name for name, _ in schema(series, sql)] == ["p", "o", "x", "m OVER w", "COUNT(*) OVER w + 1"]
    assert rows(series, sql) == [(1, 2, 8, None, 1), (1, 3, 6, None, 1), (1, 4, 9, None, 1)]
    assert rows(series, f"SELECT s.o FROM series AS s WINDOW w AS {window()} ORDER BY m OVER w DESC NULLS LAST, o "
                        f"LIMIT 2") == [(1,), (6,)]


def test_unread_measures_are_not_computed(series):
    """A measure no call reads is pruned: its error (ANSI division by zero) never happens."""
    assert rows(series, f"""SELECT o, m OVER w FROM series
        WINDOW w AS {window(measures="MEASURES LAST(C.x) AS m, 1 DIV (FIRST(A.x) - FIRST(A.x)) AS boom")}
        ORDER BY o LIMIT 1""") == [(1, 12)]


def test_inputs_and_contexts(series):
    """Expressions as keys, a subquery, a CTE and a MATCH_RECOGNIZE as the relation; a window in
    a subquery."""
    expected = [(1, 12), (6, 7)]
    assert rows(series, f"""SELECT o, m OVER w FROM (SELECT p * 2 AS q, o * 10 AS o10, o, x FROM series) t
        WINDOW w AS (PARTITION BY q % 7 ORDER BY -o10 DESC MEASURES LAST(C.x) AS m
                     ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING PATTERN (A B+ C+) {V_SHAPE})
        ORDER BY m OVER w IS NULL, o LIMIT 2""") == expected
    assert rows(series, f"""WITH s AS (SELECT * FROM series)
        SELECT o, m FROM (SELECT o, m OVER w AS m FROM s WINDOW w AS {window()}) WHERE m IS NOT NULL
        ORDER BY o""") == expected
    assert rows(series, f"""SELECT o, m OVER w FROM series MATCH_RECOGNIZE (
            PARTITION BY p ORDER BY o MEASURES FIRST(o) AS o, FIRST(x) AS x ONE ROW PER MATCH
            PATTERN (A) DEFINE A AS true) AS mr
        WINDOW w AS {window()} ORDER BY m OVER w IS NULL, mr.o LIMIT 2""") == expected


def test_within_bounds_the_match(series):
    got = rows(series, f"""
        SELECT o, count(*) OVER w FROM (SELECT *, TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, o)
                                        AS ts FROM series)
        WINDOW w AS (PARTITION BY p ORDER BY ts MEASURES LAST(C.x) AS m ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING
                     PATTERN (A B+ C+) WITHIN INTERVAL '3' MINUTE {V_SHAPE})
        WHERE o <= 8 ORDER BY o""")
    # 10 8 6 9 spans 3 minutes, 12 would make 4: the match ends there; then 12 11 5 7 from row 5
    assert [c for _, c in got] == [4, 0, 0, 0, 4, 0, 0, 0]


ERRORS = [
    # (id, window, message, text at the position)
    ("no DEFINE", "(ORDER BY o ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING PATTERN (A))",
     "Pattern recognition requires DEFINE clause", "ROWS BETWEEN"),
    ("RANGE frame", "(ORDER BY o MEASURES A.x AS m RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING PATTERN (A) "
                    "DEFINE A AS true)", "Pattern recognition requires ROWS frame type", "MEASURES"),
    ("frame from a PRECEDING row", "(ORDER BY o ROWS BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING PATTERN (A) "
                                   "DEFINE A AS true)",
     "Pattern recognition requires frame specified as BETWEEN CURRENT ROW AND ...", "ROWS BETWEEN"),
    ("frame without BETWEEN", "(ORDER BY o ROWS CURRENT ROW PATTERN (A) DEFINE A AS true)",
     "Pattern recognition requires frame specified as BETWEEN CURRENT ROW AND ...", "ROWS CURRENT"),
    ("frame ending before it starts", "(ORDER BY o ROWS BETWEEN CURRENT ROW AND 2 PRECEDING PATTERN (A) "
                                      "DEFINE A AS true)",
     "Window frame starting from CURRENT ROW cannot end with PRECEDING", "ROWS BETWEEN"),
    ("MEASURES without PATTERN", "(ORDER BY o MEASURES A.x AS m ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING "
                                 "DEFINE A AS true)", "Row pattern measures require PATTERN clause", "MEASURES"),
    ("SEEK without PATTERN", "(ORDER BY o ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING SEEK)",
     "SEEK modifier requires PATTERN clause", "SEEK"),
    ("anchor", "(ORDER BY o ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING PATTERN (A B $) DEFINE A AS true)",
     "Anchor pattern syntax is not allowed in window", "$"),
    ("MATCH_NUMBER", "(ORDER BY o MEASURES A.x AS m ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING PATTERN (A B) "
                     "DEFINE B AS MATCH_NUMBER() > 2)", "MATCH_NUMBER function is not supported in window",
     "MATCH_NUMBER"),
    ("ALL ROWS PER MATCH", "(ORDER BY o ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING ALL ROWS PER MATCH PATTERN (A) "
                           "DEFINE A AS true)",
     "ONE ROW PER MATCH and ALL ROWS PER MATCH cannot be used in a window", "ALL ROWS"),
    ("FLINKCEP semantics", "(ORDER BY o ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING SEMANTICS FLINKCEP PATTERN (A) "
                           "DEFINE A AS true)", "SEMANTICS FLINKCEP cannot be used in a window", "SEMANTICS"),
    ("frame end not a literal", "(ORDER BY o ROWS BETWEEN CURRENT ROW AND x FOLLOWING PATTERN (A) "
                                "DEFINE A AS true)",
     "the frame end of a window with pattern recognition must be a non-negative integer literal", "x FOLLOWING"),
    ("NO SKIP", "(ORDER BY o ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING AFTER MATCH NO SKIP PATTERN (A) "
                "DEFINE A AS true)", "AFTER MATCH NO SKIP cannot be used in a window", "AFTER MATCH"),
    ("WITH TIMEOUT ROWS", "(ORDER BY o ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING PATTERN (A) WITHIN INTERVAL '1' "
                          "SECOND WITH TIMEOUT ROWS DEFINE A AS true)",
     "WITH TIMEOUT ROWS cannot be used in a window", "WITH TIMEOUT"),
    ("window in the specification", "(ORDER BY sum(x) OVER (ORDER BY o) ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING "
                                    "PATTERN (A) DEFINE A AS true)",
     "Cannot nest window functions or row pattern measures inside window specification", "sum(x) OVER"),
    # the window's Spark expressions are read by Spark's parser (sql_ext.compiler.syntax), as MATCH_RECOGNIZE's
    ("Spark's syntax in DEFINE", "(ORDER BY o ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING PATTERN (A) DEFINE A AS x > > 1)",
     "[PARSE_SYNTAX_ERROR] Syntax error at or near '>'.", "> 1)"),
    ("Spark's syntax in MEASURES", "(ORDER BY o MEASURES () AS m ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING PATTERN (A) "
                                   "DEFINE A AS true)", "[PARSE_SYNTAX_ERROR] Syntax error at or near ')'.", ") AS m"),
    ("clauses out of order", "(ORDER BY o ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING PATTERN (A) SEEK "
                             "DEFINE A AS true)",
     "SEEK is out of order or repeated in a window with pattern recognition", "SEEK"),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_window_errors(series, case):
    _, spec, message, needle = case
    sql = f"SELECT o,\n  count(*) OVER w\nFROM series\nWINDOW w AS {spec}"
    err = analysis_error(series, sql)
    assert message in err.message
    assert (err.line, err.column) == at(sql, needle)


CALL_ERRORS = [
    ("unknown measure", "z OVER w", "Measure z is not defined in the corresponding window", "z OVER"),
    ("measure over a plain window", "m OVER (ORDER BY o)", "Measure m is not defined in the corresponding window",
     "m OVER"),
    ("measure defined twice", "mm OVER w", "Measure mm is defined more than once", "mm OVER"),
    ("ranking function", "rank() OVER w", "Cannot specify window frame for rank function", "MEASURES"),
    ("offset function", "lag(x) OVER w", "Cannot specify window frame for lag function", "MEASURES"),
    ("nested call", "sum(m OVER w) OVER w", "Cannot nest window functions or row pattern measures inside a window "
                                            "function's arguments", "m OVER w)"),
]


@pytest.mark.parametrize("case", CALL_ERRORS, ids=[c[0] for c in CALL_ERRORS])
def test_call_errors(series, case):
    _, call, message, needle = case
    sql = (f"SELECT {call}\nFROM series\nWINDOW w AS (ORDER BY o MEASURES A.x AS m, A.x AS mm, B.x AS MM\n"
           f"  ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING PATTERN (A B) DEFINE A AS true)")
    err = analysis_error(series, sql)
    assert message in err.message
    assert (err.line, err.column) == at(sql, needle)


def test_calls_only_in_the_select_list_and_order_by(series):
    sql = f"SELECT o\nFROM series\nWHERE m OVER w > 1\nWINDOW w AS {window()}"
    err = analysis_error(series, sql)
    assert "WHERE cannot contain window functions or row pattern measures" in err.message
    assert (err.line, err.column) == at(sql, "m OVER w >")


def test_spark_errors_at_the_users_construct(series):
    sql = f"SELECT o,\n  sum(nope) OVER w\nFROM series\nWINDOW w AS {window()}"
    err = analysis_error(series, sql)
    assert "nope" in err.message and (err.line, err.column) == at(sql, "sum(nope)")
    sql = f"SELECT o,\n  count(DISTINCT x) OVER w\nFROM series\nWINDOW w AS {window()}"
    err = analysis_error(series, sql)
    assert "DISTINCT" in err.message.upper() and (err.line, err.column) == at(sql, "count(DISTINCT")
    # aggregates Spark refuses over any frame are refused over the match's rows, with Spark's message
    sql = f"SELECT o,\n  median(x) OVER w\nFROM series\nWINDOW w AS {window()}"
    err = analysis_error(series, sql)
    assert "INVALID_WINDOW_SPEC_FOR_AGGREGATION_FUNC" in err.message and (err.line, err.column) == at(sql, "median")


def test_unsupported_shapes(series):
    sql = f"SELECT a.o, m OVER w FROM series a JOIN series b ON a.o = b.o WINDOW w AS {window()}"
    assert "over a join" in analysis_error(series, sql).message
    sql = f"SELECT p, count(*), m OVER w FROM series GROUP BY p WINDOW w AS {window()}"
    assert "aggregating SELECT" in analysis_error(series, sql).message
    sql = f"SELECT a.o, m OVER w FROM series a, series b WINDOW w AS {window()}"
    assert "over a join" in analysis_error(series, sql).message


def test_order_by_nulls_are_sparks(series):
    """The window's ORDER BY without NULLS FIRST / LAST sorts as Spark's (NULLs first when
    ascending; Trino puts them last)."""
    view(series, "nulls_order", "id int, o int", [(1, None), (2, 5), (3, 6)])
    assert rows(series, """SELECT id, nxt OVER w FROM nulls_order
                           WINDOW w AS (ORDER BY o MEASURES B.id AS nxt ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING
                                        AFTER MATCH SKIP TO NEXT ROW PATTERN (A B) DEFINE B AS true)
                           ORDER BY id""") == [(1, 2), (2, 3), (3, None)]


def test_ignore_nulls_filter_and_within_group(series):
    view(series, "gaps", "o int, x int", [(1, None), (2, 5), (3, 6), (4, None)])
    assert rows(series, """SELECT o, first_value(x) IGNORE NULLS OVER w, first_value(x) OVER w,
                                  last_value(x) IGNORE NULLS OVER w
                           FROM gaps WINDOW w AS (ORDER BY o ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING
                                                  PATTERN (A+) DEFINE A AS true)
                           ORDER BY o""") == [(1, 5, None, 6), (2, None, None, None), (3, None, None, None),
                                              (4, None, None, None)]
    # FILTER, inline as over a named window: Spark's, over the match's rows
    assert rows(series, """SELECT o, sum(x) FILTER (WHERE x > 5) OVER (ORDER BY o ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING
                                                                 PATTERN (A+) DEFINE A AS true),
                                  sum(x) OVER w
                           FROM gaps WINDOW w AS (ORDER BY o ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING
                                                  PATTERN (A+) DEFINE A AS true)
                           ORDER BY o""") == [(1, 6, 5), (2, None, None), (3, None, 6), (4, None, None)]
    # a percentile's WITHIN GROUP: Spark refuses it over a frame, as median, with its message at the call
    # (it ran as percentile_approx while sqlglot wrote it so)
    sql = """SELECT o,\n  percentile_disc(0.5) WITHIN GROUP (ORDER BY x) OVER w FROM gaps
             WINDOW w AS (ORDER BY o ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING PATTERN (A+) DEFINE A AS true)"""
    err = analysis_error(series, sql)
    assert "INVALID_WINDOW_SPEC_FOR_AGGREGATION_FUNC" in err.message and (err.line, err.column) == at(sql, "percentile_disc")


def test_flinkcep_pattern_operators(series):
    """The pattern extensions run with standard semantics in a window too: ``A -> B`` matches
    rows 5 and 9; the frame of functions over the window spans the match, 5 to 9."""
    got = rows(series, f"""SELECT o, b OVER w, count(*) OVER w FROM series
        WINDOW w AS {window(measures="MEASURES LAST(B.o) AS b", pattern="A -> B",
                            define="DEFINE A AS x > 10, B AS x < 5")}
        ORDER BY o""")
    assert got == [(o, 9, 5) if o == 5 else (o, None, 0) for o in range(1, 11)]


def test_parameter_markers(series):
    """Named and positional markers in the window (a reluctant ``?`` of PATTERN is no marker);
    the test session's Delta parser needs Spark's analyzer binding (docs/deploying.md)."""
    with session_confs(series, {"spark.sql.legacy.parameterSubstitution.constantsOnly": "true"}):
        _markers(series)


def _markers(series):
    named = series.sql("SELECT o, count(*) OVER w FROM series WINDOW w AS (ORDER BY o ROWS BETWEEN CURRENT ROW AND "
                       "UNBOUNDED FOLLOWING PATTERN (A+) DEFINE A AS x > :lim) ORDER BY o", args={"lim": 9})
    assert [tuple(r) for r in named.collect()][:6] == [(1, 1), (2, 0), (3, 0), (4, 0), (5, 2), (6, 0)]
    positional = series.sql("SELECT o, count(*) OVER w FROM series WINDOW w AS (ORDER BY o ROWS BETWEEN CURRENT ROW "
                            "AND UNBOUNDED FOLLOWING PATTERN (A B+?) DEFINE A AS x > ?, B AS x < ?) ORDER BY o",
                            args=[9, 100])
    assert [tuple(r) for r in positional.collect()][:6] == [(1, 2), (2, 0), (3, 0), (4, 0), (5, 2), (6, 0)]
