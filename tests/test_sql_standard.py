"""SQL in, rows out: standard MATCH_RECOGNIZE (SQL:2016 R010) through ``spark.sql``.

The first sections reproduce public documentation examples with their documented outputs:
Oracle's *SQL for Pattern Matching* chapter (Data Warehousing Guide, the ACME ``Ticker``),
Flink SQL's *Pattern Recognition* page, Snowflake's *Identifying sequences of rows that match
a pattern* / MATCH_RECOGNIZE reference (``stock_price_history``) and the semantics Trino's
*Row pattern recognition with MATCH_RECOGNIZE* page states.  Where a documented output
disagrees with the standard, the test asserts the standard's answer and says why.  The later
sections cover every clause and function of docs/sql.md with hand-derived expectations.

Many cases share one query (one partition per case, or UNION ALL of several clauses) because
each query costs a Spark job.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from sql_support import d, mr_spark, rows, schema, sequences, view  # noqa: F401  (fixture)
from udtf.pattern import parse_pattern, variables


# ---------------------------------------------------------------------------------------------
# Oracle Data Warehousing Guide, "SQL for Pattern Matching": the ACME Ticker table
# ---------------------------------------------------------------------------------------------

ACME = [12, 17, 19, 21, 25, 12, 15, 20, 24, 25, 19, 15, 25, 25, 14, 12, 14, 24, 23, 22]


@pytest.fixture(scope="module")
def ticker(mr_spark):
    view(mr_spark, "ticker", "symbol string, tstamp date, price int",
         [("ACME", d(day), price) for day, price in enumerate(ACME, 1)])
    return mr_spark


def test_oracle_v_shape_one_row_per_match(ticker):
    """Example "Simple V-Shape with 1 Row Output per Match" (SKIP TO LAST UP)."""
    sql = """
        SELECT *
        FROM Ticker MATCH_RECOGNIZE (
             PARTITION BY symbol
             ORDER BY tstamp
             MEASURES  STRT.tstamp AS start_tstamp,
                       LAST(DOWN.tstamp) AS bottom_tstamp,
                       LAST(UP.tstamp) AS end_tstamp
             ONE ROW PER MATCH
             AFTER MATCH SKIP TO LAST UP
             PATTERN (STRT DOWN+ UP+)
             DEFINE
                DOWN AS DOWN.price < PREV(DOWN.price),
                UP AS UP.price > PREV(UP.price)
             ) MR
        ORDER BY MR.symbol, MR.start_tstamp"""
    assert schema(ticker, sql) == [("symbol", "string"), ("start_tstamp", "date"),
                                   ("bottom_tstamp", "date"), ("end_tstamp", "date")]
    assert rows(ticker, sql) == [
        ("ACME", d(5), d(6), d(10)),
        ("ACME", d(10), d(12), d(13)),
        ("ACME", d(14), d(16), d(18)),
    ]


def test_oracle_all_rows_per_match_running_and_final(ticker):
    """Examples "Simple V-Shape with All Rows Output per Match" and "Pattern Match with an
    Aggregate on a Variable" (same pattern and skip; their measures in one query)."""
    sql = """
        SELECT *
        FROM Ticker MATCH_RECOGNIZE (
          PARTITION BY symbol
          ORDER BY tstamp
          MEASURES  STRT.tstamp AS start_tstamp,
                    FINAL LAST(DOWN.tstamp) AS bottom_tstamp,
                    FINAL LAST(UP.tstamp) AS end_tstamp,
                    MATCH_NUMBER() AS match_num,
                    CLASSIFIER() AS var_match,
                    FINAL COUNT(UP.tstamp) AS up_days,
                    FINAL COUNT(tstamp) AS total_days,
                    RUNNING COUNT(tstamp) AS cnt_days,
                    price - STRT.price AS price_dif
          ALL ROWS PER MATCH
          AFTER MATCH SKIP TO LAST UP
          PATTERN (STRT DOWN+ UP+)
          DEFINE
             DOWN AS DOWN.price < PREV(DOWN.price),
             UP AS UP.price > PREV(UP.price)
          ) MR
        ORDER BY symbol, match_num, tstamp"""
    # ALL ROWS PER MATCH: partition columns, ORDER BY columns, measures, other columns
    assert schema(ticker, sql) == [
        ("symbol", "string"), ("tstamp", "date"), ("start_tstamp", "date"),
        ("bottom_tstamp", "date"), ("end_tstamp", "date"), ("match_num", "bigint"),
        ("var_match", "string"), ("up_days", "bigint"), ("total_days", "bigint"),
        ("cnt_days", "bigint"), ("price_dif", "int"), ("price", "int")]
    m1, m2, m3 = (d(5), d(6), d(10)), (d(10), d(12), d(13)), (d(14), d(16), d(18))
    assert rows(ticker, sql) == [
        ("ACME", d(5), *m1, 1, "STRT", 4, 6, 1, 0, 25),
        ("ACME", d(6), *m1, 1, "DOWN", 4, 6, 2, -13, 12),
        ("ACME", d(7), *m1, 1, "UP", 4, 6, 3, -10, 15),
        ("ACME", d(8), *m1, 1, "UP", 4, 6, 4, -5, 20),
        ("ACME", d(9), *m1, 1, "UP", 4, 6, 5, -1, 24),
        ("ACME", d(10), *m1, 1, "UP", 4, 6, 6, 0, 25),
        ("ACME", d(10), *m2, 2, "STRT", 1, 4, 1, 0, 25),
        ("ACME", d(11), *m2, 2, "DOWN", 1, 4, 2, -6, 19),
        ("ACME", d(12), *m2, 2, "DOWN", 1, 4, 3, -10, 15),
        ("ACME", d(13), *m2, 2, "UP", 1, 4, 4, 0, 25),
        ("ACME", d(14), *m3, 3, "STRT", 2, 5, 1, 0, 25),
        ("ACME", d(15), *m3, 3, "DOWN", 2, 5, 2, -11, 14),
        ("ACME", d(16), *m3, 3, "DOWN", 2, 5, 3, -13, 12),
        ("ACME", d(17), *m3, 3, "UP", 2, 5, 4, -11, 14),
        ("ACME", d(18), *m3, 3, "UP", 2, 5, 5, -1, 24),
    ]


def test_oracle_subset_average(ticker):
    """Example "Pattern Match with Subset": AVG over the union variable STDN = (STRT, DOWN)."""
    sql = """
        SELECT *
        FROM Ticker MATCH_RECOGNIZE(
             PARTITION BY symbol
             ORDER BY tstamp
             MEASURES FIRST(STRT.tstamp) AS strt_time,
                      LAST(DOWN.tstamp) AS bottom,
                      AVG(STDN.Price) AS stdn_avgprice
             ONE ROW PER MATCH
             AFTER MATCH SKIP TO LAST UP
             PATTERN (STRT DOWN+ UP+)
             SUBSET STDN = (STRT, DOWN)
             DEFINE
                UP AS UP.Price > PREV(Up.Price),
                DOWN AS DOWN.Price < PREV (DOWN.Price)
             )
        ORDER BY strt_time"""
    assert rows(ticker, sql) == [
        ("ACME", d(5), d(6), 18.5),
        ("ACME", d(10), d(12), pytest.approx(59 / 3)),
        ("ACME", d(14), d(16), 17.0),
    ]


def test_oracle_w_shape(ticker):
    """Example "Pattern Match for a W-Shape"; with ONE ROW PER MATCH, CLASSIFIER() is the
    variable of the match's last row."""
    sql = """
        SELECT MR_W.*
        FROM Ticker MATCH_RECOGNIZE (
             PARTITION BY symbol
             ORDER BY tstamp
             MEASURES
                  MATCH_NUMBER() AS match_num,
                  CLASSIFIER() AS var_match,
                  STRT.tstamp AS start_w,
                  LAST(z.tstamp) AS end_w
             ONE ROW PER MATCH
             AFTER MATCH SKIP PAST LAST ROW
             PATTERN (STRT X+ Y+ W+ Z+)
             DEFINE
                  X AS X.price < PREV(X.price),
                  Y AS Y.price > PREV(Y.price),
                  W AS W.price < PREV(W.price),
                  Z AS Z.price > PREV(Z.price)
             ) MR_W
        ORDER BY symbol, match_num"""
    assert rows(ticker, sql) == [("ACME", 1, "Z", d(5), d(13))]


# ---------------------------------------------------------------------------------------------
# Flink SQL "Pattern Recognition" (docs/dev/table/sql/queries/match_recognize.md)
# ---------------------------------------------------------------------------------------------

def _flink_ticker(spark, name, prices, start="2018-09-17 10:00:00", step=1, symbol="ACME"):
    """Rows of the docs' Ticker tables: ``step`` seconds apart from ``start``."""
    t0 = dt.datetime.fromisoformat(start)
    spark.sql(f"DROP VIEW IF EXISTS {name}")
    values = ", ".join(
        f"('{symbol}', TIMESTAMP'{t0 + dt.timedelta(seconds=k * step)}', {p}, {tax})"
        for k, (p, tax) in enumerate(prices))
    spark.sql(f"CREATE TEMP VIEW {name} AS SELECT * FROM VALUES {values} AS t(symbol, rowtime, price, tax)")


def test_flink_decreasing_period_with_logical_offsets(mr_spark):
    """The introductory example: undefined START_ROW is TRUE, LAST(v.x, 1) in DEFINE."""
    _flink_ticker(mr_spark, "flink_intro", [(12, 1), (17, 2), (19, 1), (21, 3), (25, 2), (18, 1),
                                            (15, 1), (14, 2), (24, 2), (25, 2), (19, 1)],
                  start="2011-04-01 10:00:00")
    sql = """
        SELECT symbol, CAST(start_tstamp AS STRING), CAST(bottom_tstamp AS STRING),
               CAST(end_tstamp AS STRING)
        FROM flink_intro
            MATCH_RECOGNIZE (
                PARTITION BY symbol
                ORDER BY rowtime
                MEASURES
                    START_ROW.rowtime AS start_tstamp,
                    LAST(PRICE_DOWN.rowtime) AS bottom_tstamp,
                    LAST(PRICE_UP.rowtime) AS end_tstamp
                ONE ROW PER MATCH
                AFTER MATCH SKIP TO LAST PRICE_UP
                PATTERN (START_ROW PRICE_DOWN+ PRICE_UP)
                DEFINE
                    PRICE_DOWN AS
                        (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price < START_ROW.price) OR
                            PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1),
                    PRICE_UP AS
                        PRICE_UP.price > LAST(PRICE_DOWN.price, 1)
            ) MR"""
    assert rows(mr_spark, sql) == [
        ("ACME", "2011-04-01 10:00:04", "2011-04-01 10:00:07", "2011-04-01 10:00:08")]


def test_flink_running_average_in_define(mr_spark):
    """Aggregations: A AS AVG(A.price) < 15 (a running aggregate including the current row)."""
    _flink_ticker(mr_spark, "flink_avg", [(12, 1), (17, 2), (13, 1), (16, 3), (25, 2), (2, 1), (4, 1),
                                          (10, 2), (15, 2), (25, 2), (25, 1), (30, 1)],
                  start="2011-04-01 10:00:00")
    sql = """
        SELECT symbol, CAST(start_tstamp AS STRING), CAST(end_tstamp AS STRING), avgPrice
        FROM flink_avg
            MATCH_RECOGNIZE (
                PARTITION BY symbol
                ORDER BY rowtime
                MEASURES
                    FIRST(A.rowtime) AS start_tstamp,
                    LAST(A.rowtime) AS end_tstamp,
                    AVG(A.price) AS avgPrice
                ONE ROW PER MATCH
                AFTER MATCH SKIP PAST LAST ROW
                PATTERN (A+ B)
                DEFINE
                    A AS AVG(A.price) < 15
            ) MR"""
    assert rows(mr_spark, sql) == [
        ("ACME", "2011-04-01 10:00:00", "2011-04-01 10:00:03", 14.5),
        ("ACME", "2011-04-01 10:00:05", "2011-04-01 10:00:10", 13.5),
    ]


def test_flink_greedy_and_reluctant(mr_spark):
    """Greedy & Reluctant Quantifiers: B* swallows 12, 13 and 14; B*? stops at the first C."""
    _flink_ticker(mr_spark, "flink_greedy", [(10, 1), (11, 2), (12, 1), (13, 2), (14, 1), (16, 2)],
                  start="2018-09-17 10:00:02", symbol="XYZ")
    query = """
        SELECT '{quantifier}' AS q, lastPrice
        FROM flink_greedy
            MATCH_RECOGNIZE(
                PARTITION BY symbol
                ORDER BY rowtime
                MEASURES
                    C.price AS lastPrice
                ONE ROW PER MATCH
                AFTER MATCH SKIP PAST LAST ROW
                PATTERN (A {quantifier} C)
                DEFINE
                    A AS A.price > 10,
                    B AS B.price < 15,
                    C AS C.price > 12
            )"""
    sql = " UNION ALL ".join(query.format(quantifier=q) for q in ("B*", "B*?"))
    assert sorted(rows(mr_spark, sql)) == [("B*", 16), ("B*?", 13), ("B*?", 16)]


def test_flink_within_time_constraint(mr_spark):
    """Time constraint: a drop of more than 10 within an hour (the docs' DEFINE lacks the comma
    between B and C).  The window is inclusive: 12:00 to 13:00 matches."""
    _flink_ticker(mr_spark, "flink_within", [(20, 1), (17, 2), (18, 1), (11, 3), (14, 2), (9, 1),
                                             (15, 1), (14, 2), (24, 2), (1, 2), (19, 1)],
                  start="2011-04-01 10:00:00", step=20 * 60)
    sql = """
        SELECT symbol, CAST(dropTime AS STRING), dropDiff
        FROM flink_within
            MATCH_RECOGNIZE(
                PARTITION BY symbol
                ORDER BY rowtime
                MEASURES
                    C.rowtime AS dropTime,
                    A.price - C.price AS dropDiff
                ONE ROW PER MATCH
                AFTER MATCH SKIP PAST LAST ROW
                PATTERN (A B* C) WITHIN INTERVAL '1' HOUR
                DEFINE
                    B AS B.price > A.price - 10,
                    C AS C.price < A.price - 10
            )"""
    assert rows(mr_spark, sql) == [("ACME", "2011-04-01 13:00:00", 14)]


def test_flink_output_mode_and_navigation(mr_spark):
    """Output Mode (partition column first, then the measures) and the two DEFINE tables of
    "Pattern Navigation": running SUM over all rows / over B, and LAST(B.price, n)."""
    _flink_ticker(mr_spark, "flink_output", [(10, 1), (12, 2), (13, 1), (11, 2)],
                  start="2018-09-17 10:00:02", symbol="XYZ")
    sql = """
        SELECT *
        FROM flink_output
            MATCH_RECOGNIZE(
                PARTITION BY symbol
                ORDER BY rowtime
                MEASURES
                    FIRST(A.price) AS startPrice,
                    LAST(A.price) AS topPrice,
                    B.price AS lastPrice
                ONE ROW PER MATCH
                PATTERN (A+ B)
                DEFINE
                    A AS LAST(A.price, 1) IS NULL OR A.price > LAST(A.price, 1),
                    B AS B.price < LAST(A.price)
            )"""
    assert schema(mr_spark, sql) == [("symbol", "string"), ("startPrice", "int"),
                                     ("topPrice", "int"), ("lastPrice", "int")]
    assert rows(mr_spark, sql) == [("XYZ", 10, 13, 11)]

    _flink_ticker(mr_spark, "flink_nav", [(10, 1), (15, 1), (20, 1), (31, 1), (35, 1)])
    measures = "MEASURES COUNT(B.*) AS bs, SUM(price) AS total, SUM(B.price) AS b_total"
    by_sum = f"""SELECT * FROM flink_nav MATCH_RECOGNIZE (ORDER BY rowtime {measures}
        PATTERN (A B+)
        DEFINE
          A AS A.price >= 10,
          B AS B.price > A.price AND SUM(price) < 100 AND SUM(B.price) < 80)"""
    by_offsets = f"""SELECT * FROM flink_nav MATCH_RECOGNIZE (ORDER BY rowtime {measures}
        PATTERN (A B+)
        DEFINE
          A AS A.price >= 10,
          B AS (LAST(B.price, 1) IS NULL OR B.price > LAST(B.price, 1)) AND
               (LAST(B.price, 2) IS NULL OR B.price > 2 * LAST(B.price, 2)))"""
    # the row with price 35 is not mapped: SUM(price) = 111, SUM(B.price) = 101 / 35 < 2 * 20
    assert rows(mr_spark, f"{by_sum} UNION ALL {by_offsets}") == [(3, 76, 66), (3, 76, 66)]


def test_flink_last_over_the_universal_variable(mr_spark):
    """LAST(price, 1) with the default pattern variable: the row before the current one in the
    match, whether mapped to B or to A."""
    view(mr_spark, "flink_default_var", "grp string, rowtime int, price int",
         [("with B", 1, 10), ("with B", 2, 15), ("with B", 3, 20),
          ("without B", 1, 10), ("without B", 2, 20)])
    sql = """
        SELECT * FROM flink_default_var MATCH_RECOGNIZE (
          PARTITION BY grp ORDER BY rowtime
          MEASURES CLASSIFIER() AS cls, LAST(price, 1) AS last1
          ALL ROWS PER MATCH
          PATTERN (A B? C)
          DEFINE
            B AS B.price < 20,
            C AS LAST(price, 1) < C.price)
        ORDER BY grp, rowtime"""
    assert rows(mr_spark, sql) == [
        ("with B", 1, "A", None, 10), ("with B", 2, "B", 10, 15), ("with B", 3, "C", 15, 20),
        ("without B", 1, "A", None, 10), ("without B", 2, "C", 10, 20),
    ]


FLINK_SKIP = [(7, 1), (9, 2), (10, 1), (5, 2), (10, 2), (7, 2), (14, 2)]


def test_flink_after_match_strategies(mr_spark):
    """After Match Strategy examples (SKIP TO LAST A / TO FIRST A: see test_sql_errors).

    For SKIP TO NEXT ROW the Flink docs list five rows: they omit the match {#6, #7} (sumPrice
    7) that starts at row #6.  The standard reports, for every start row the skip reaches, its
    preferred match: from #6, A+ greedily takes #6 and #7, finds no C, and backtracks to
    A = {#6}, C = #7.  Flink's engine drops it because it ends on the row where the match
    from #5 ends."""
    _flink_ticker(mr_spark, "flink_skip", FLINK_SKIP, start="2018-09-17 10:00:01", symbol="XYZ")
    query = """
        SELECT '{skip}' AS skip, sumPrice, date_format(startTime, 'HH:mm:ss'),
               date_format(endTime, 'HH:mm:ss')
        FROM flink_skip
            MATCH_RECOGNIZE(
                PARTITION BY symbol
                ORDER BY rowtime
                MEASURES
                    SUM(A.price) AS sumPrice,
                    FIRST(rowtime) AS startTime,
                    LAST(rowtime) AS endTime
                ONE ROW PER MATCH
                AFTER MATCH SKIP {skip}
                PATTERN (A+ C)
                DEFINE
                    A AS SUM(A.price) < 30
            )"""
    sql = " UNION ALL ".join(query.format(skip=skip) for skip in ("PAST LAST ROW", "TO NEXT ROW"))
    assert sorted(rows(mr_spark, sql)) == sorted([
        ("PAST LAST ROW", 26, "10:00:01", "10:00:04"), ("PAST LAST ROW", 17, "10:00:05", "10:00:07"),
        ("TO NEXT ROW", 26, "10:00:01", "10:00:04"), ("TO NEXT ROW", 24, "10:00:02", "10:00:05"),
        ("TO NEXT ROW", 25, "10:00:03", "10:00:06"), ("TO NEXT ROW", 22, "10:00:04", "10:00:07"),
        ("TO NEXT ROW", 17, "10:00:05", "10:00:07"), ("TO NEXT ROW", 7, "10:00:06", "10:00:07"),
    ])


# ---------------------------------------------------------------------------------------------
# Snowflake: stock_price_history (docs "Identifying sequences of rows that match a pattern" and
# the MATCH_RECOGNIZE reference).  Snowflake writes LAG(price) in DEFINE; the standard (and
# sparkcep) spell it PREV(price).
# ---------------------------------------------------------------------------------------------

SNOWFLAKE = {
    "ABCD": [50, 36, 39, 42, 30, 47, 71, 80, 75, 63],
    "XYZ": [89, 24, 37, 63, 65, 56, 50, 54, 30, 32],
}


@pytest.fixture(scope="module")
def stocks(mr_spark):
    view(mr_spark, "stock_price_history", "company string, price_date date, price int",
         [(company, d(day, 10, 2020), price)
          for company, prices in SNOWFLAKE.items() for day, price in enumerate(prices, 1)])
    return mr_spark


def test_snowflake_v_shapes(stocks):
    sql = """
        SELECT * FROM stock_price_history
          MATCH_RECOGNIZE(
            PARTITION BY company
            ORDER BY price_date
            MEASURES
              MATCH_NUMBER() AS match_number,
              FIRST(price_date) AS start_date,
              LAST(price_date) AS end_date,
              COUNT(*) AS rows_in_sequence,
              COUNT(row_with_price_decrease.*) AS num_decreases,
              COUNT(row_with_price_increase.*) AS num_increases
            ONE ROW PER MATCH
            AFTER MATCH SKIP TO LAST row_with_price_increase
            PATTERN(row_before_decrease row_with_price_decrease+ row_with_price_increase+)
            DEFINE
              row_with_price_decrease AS price < PREV(price),
              row_with_price_increase AS price > PREV(price)
          )
        ORDER BY company, match_number"""
    oct_ = lambda day: d(day, 10, 2020)  # noqa: E731
    assert rows(stocks, sql) == [
        ("ABCD", 1, oct_(1), oct_(4), 4, 1, 2),
        ("ABCD", 2, oct_(4), oct_(8), 5, 1, 3),
        ("XYZ", 1, oct_(1), oct_(5), 5, 1, 3),
        ("XYZ", 2, oct_(5), oct_(8), 4, 2, 1),
        ("XYZ", 3, oct_(8), oct_(10), 3, 1, 1),
    ]


def test_snowflake_all_rows_for_one_company(stocks):
    """"Report all rows for all matches for one company".  Snowflake's
    MATCH_SEQUENCE_NUMBER() is RUNNING COUNT(*); Snowflake lists the input columns before the
    measures, the standard (Trino, Oracle) puts the ORDER BY columns first and the other input
    columns after the measures."""
    sql = """
        SELECT * FROM stock_price_history MATCH_RECOGNIZE(
            PARTITION BY company
            ORDER BY price_date
            MEASURES
                MATCH_NUMBER() AS match_number,
                RUNNING COUNT(*) AS msq,
                CLASSIFIER() AS cl
            ALL ROWS PER MATCH
            PATTERN(ANY_ROW UP+)
            DEFINE
                ANY_ROW AS TRUE,
                UP AS price > PREV(price)
        )
        WHERE company = 'ABCD'
        ORDER BY match_number, msq"""
    oct_ = lambda day: d(day, 10, 2020)  # noqa: E731
    assert rows(stocks, sql) == [
        ("ABCD", oct_(2), 1, 1, "ANY_ROW", 36),
        ("ABCD", oct_(3), 1, 2, "UP", 39),
        ("ABCD", oct_(4), 1, 3, "UP", 42),
        ("ABCD", oct_(5), 2, 1, "ANY_ROW", 30),
        ("ABCD", oct_(6), 2, 2, "UP", 47),
        ("ABCD", oct_(7), 2, 3, "UP", 71),
        ("ABCD", oct_(8), 2, 4, "UP", 80),
    ]


def test_snowflake_empty_matches(stocks):
    """"Omit empty matches": OVERAVG* matches the empty sequence at every row not above the
    average; empty matches are numbered too, and shown by SHOW EMPTY MATCHES with NULL
    CLASSIFIER().  Snowflake computes the average with a window function inside DEFINE;
    window functions are not allowed there by the standard, so the average comes from the
    input subquery (a MATCH_RECOGNIZE over a subquery)."""
    query = """
        SELECT '{mode}' AS mode, company, price_date, price, match_number, cl
        FROM (SELECT *, AVG(price) OVER (PARTITION BY company) AS avg_price
              FROM stock_price_history)
        MATCH_RECOGNIZE(
            PARTITION BY company
            ORDER BY price_date
            MEASURES
                MATCH_NUMBER() AS match_number,
                CLASSIFIER() AS cl
            ALL ROWS PER MATCH {mode} EMPTY MATCHES
            PATTERN(OVERAVG*)
            DEFINE
                OVERAVG AS price > avg_price
        )"""
    got = rows(stocks, " UNION ALL ".join(query.format(mode=mode) for mode in ("OMIT", "SHOW")))
    oct_ = lambda day: d(day, 10, 2020)  # noqa: E731
    matched = [("ABCD", oct_(7), 71, 7), ("ABCD", oct_(8), 80, 7), ("ABCD", oct_(9), 75, 7),
               ("ABCD", oct_(10), 63, 7), ("XYZ", oct_(1), 89, 1), ("XYZ", oct_(4), 63, 4),
               ("XYZ", oct_(5), 65, 4), ("XYZ", oct_(6), 56, 4), ("XYZ", oct_(8), 54, 6)]
    empty = [("ABCD", day, number) for day, number in zip(range(1, 7), range(1, 7))]
    empty += [("XYZ", day, number) for day, number in [(2, 2), (3, 3), (7, 5), (9, 7), (10, 8)]]
    shown = [(c, oct_(day), SNOWFLAKE[c][day - 1], number, None) for c, day, number in empty]
    assert sorted(got, key=str) == sorted(
        [("OMIT", *row, "OVERAVG") for row in matched] + [("SHOW", *row, "OVERAVG") for row in matched]
        + [("SHOW", *row) for row in shown], key=str)


def test_snowflake_with_unmatched_rows(stocks):
    """ALL ROWS PER MATCH WITH UNMATCHED ROWS: every input row once (with SKIP PAST LAST ROW);
    an unmatched row has NULL measures, MATCH_NUMBER() included."""
    sql = """
        SELECT price_date, match_number, cl, ups FROM stock_price_history MATCH_RECOGNIZE(
            PARTITION BY company
            ORDER BY price_date
            MEASURES MATCH_NUMBER() AS match_number, CLASSIFIER() AS cl, COUNT(UP.*) AS ups
            ALL ROWS PER MATCH WITH UNMATCHED ROWS
            PATTERN(ANY_ROW UP+)
            DEFINE UP AS price > PREV(price))
        WHERE company = 'ABCD'
        ORDER BY price_date"""
    assert [r[1:] for r in rows(stocks, sql)] == [
        (None, None, None), (1, "ANY_ROW", 0), (1, "UP", 1), (1, "UP", 2),
        (2, "ANY_ROW", 0), (2, "UP", 1), (2, "UP", 2), (2, "UP", 3),
        (None, None, None), (None, None, None),
    ]


# ---------------------------------------------------------------------------------------------
# Trino "Row pattern recognition with MATCH_RECOGNIZE": the orders V-shape and stated semantics
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def orders(mr_spark):
    prices = {1: ["100.00", "90.00", "80.00", "85.00", "95.00", "120.00", "110.00"], 2: ["50.00", "60.00"]}
    view(mr_spark, "orders", "custkey int, orderdate date, totalprice decimal(12,2)",
         [(cust, d(day, 1, 2024), Decimal(price))
          for cust, values in prices.items() for day, price in enumerate(values, 1)])
    return mr_spark


TRINO_ORDERS = """
    SELECT * FROM orders MATCH_RECOGNIZE(
         PARTITION BY custkey
         ORDER BY orderdate
         MEASURES
                  A.totalprice AS starting_price,
                  LAST(B.totalprice) AS bottom_price,
                  LAST(U.totalprice) AS top_price
         {rows}
         AFTER MATCH SKIP PAST LAST ROW
         PATTERN ({pattern})
         SUBSET U = (C, D)
         DEFINE
                  B AS totalprice < PREV(totalprice),
                  C AS totalprice > PREV(totalprice) AND totalprice <= A.totalprice,
                  D AS totalprice > PREV(totalprice)
         )"""


def test_trino_orders_example(orders):
    sql = TRINO_ORDERS.format(rows="ONE ROW PER MATCH", pattern="A B+ C+ D+")
    assert schema(orders, sql) == [("custkey", "int"), ("starting_price", "decimal(12,2)"),
                                   ("bottom_price", "decimal(12,2)"), ("top_price", "decimal(12,2)")]
    assert rows(orders, sql) == [(1, Decimal("100.00"), Decimal("80.00"), Decimal("120.00"))]


def test_trino_exclusion(orders):
    """"PATTERN (A {- B+ C+ -} D+)": the initial row and the trailing section are output;
    exclusion changes neither matching nor the (running) measures of the rows shown."""
    sql = TRINO_ORDERS.format(rows="ALL ROWS PER MATCH", pattern="A {- B+ C+ -} D+")
    assert rows(orders, sql) == [
        (1, d(1, 1, 2024), Decimal("100.00"), None, None, Decimal("100.00")),
        (1, d(6, 1, 2024), Decimal("100.00"), Decimal("80.00"), Decimal("120.00"), Decimal("120.00")),
    ]


def test_trino_empty_match_and_unmatched_row_measures(mr_spark):
    """In an empty match column references, navigation and CLASSIFIER() are NULL,
    MATCH_NUMBER() is its number and aggregates run over no rows (COUNT 0, SUM NULL); the input
    values are those of its start row.  In an unmatched row every measure is NULL.
    ``A B | ^``: an empty match at the partition start when A B does not match there."""
    view(mr_spark, "empties", "k string, t int, v string, x int",
         [("empty", 1, "x", 1), ("empty", 2, "x", 2), ("empty", 3, "a", 3), ("empty", 4, "b", 4),
          ("match", 1, "a", 5), ("match", 2, "b", 6)])
    sql = """
        SELECT * FROM empties MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY t
          MEASURES MATCH_NUMBER() AS mn, CLASSIFIER() AS cls, x AS cur, PREV(x) AS prv,
                   FIRST(x) AS fst, COUNT(*) AS cnt, COUNT(A.*) AS cnt_a, SUM(x) AS total
          ALL ROWS PER MATCH WITH UNMATCHED ROWS
          PATTERN (A B | ^)
          DEFINE A AS v = 'a', B AS v = 'b')
        ORDER BY k, t"""
    assert rows(mr_spark, sql) == [
        ("empty", 1, 1, None, None, None, None, 0, 0, None, "x", 1),  # empty match
        ("empty", 2, None, None, None, None, None, None, None, None, "x", 2),  # unmatched
        ("empty", 3, 2, "A", 3, 2, 3, 1, 1, 3, "a", 3),
        ("empty", 4, 2, "B", 4, 3, 3, 2, 1, 7, "b", 4),
        ("match", 1, 1, "A", 5, None, 5, 1, 1, 5, "a", 5),
        ("match", 2, 1, "B", 6, 5, 5, 2, 1, 11, "b", 6),
    ]


# ---------------------------------------------------------------------------------------------
# Pattern syntax and match preference (letters: one partition per case, v = the letter)
# ---------------------------------------------------------------------------------------------

def matches(spark, cases: dict) -> dict:
    """Run every case ``label: (pattern, {text: expected}, tail, skip)`` in one query (a UNION
    ALL of one MATCH_RECOGNIZE per case over its letter strings) and return ``{label: {text:
    ["1:A 2:B", ...]}}``: each match as its output rows ``i:CLASSIFIER()`` (``i:-`` for an empty
    match), in match order.  ``tail`` is the SUBSET / DEFINE text after PATTERN; None defines
    each variable X of the pattern as ``v = 'x'``."""
    sequences(spark, "letters", sorted({text for _, texts, _, _ in cases.values() for text in texts}))
    branches = []
    for label, (pattern, texts, tail, skip) in cases.items():
        if tail is None:
            names = variables(parse_pattern(pattern))
            tail = "DEFINE " + ", ".join(f"{v} AS v = '{v.lower()}'" for v in names) if names else ""
        where = ", ".join(f"'{text}'" for text in texts)
        branches.append(f"""
        SELECT '{label}' AS label, c, mn, i, cls
        FROM (SELECT * FROM letters WHERE c IN ({where})) MATCH_RECOGNIZE (
          PARTITION BY c ORDER BY i
          MEASURES MATCH_NUMBER() AS mn, CLASSIFIER() AS cls
          ALL ROWS PER MATCH
          AFTER MATCH SKIP {skip}
          PATTERN ({pattern})
          {tail})""")
    out = {label: {text: [] for text in texts} for label, (_, texts, _, _) in cases.items()}
    last = None
    for label, text, number, i, cls in sorted(rows(spark, " UNION ALL ".join(branches))):
        cell = f"{i}:{cls or '-'}"
        if (label, text, number) == last:
            out[label][text][-1] += " " + cell
        else:
            out[label][text].append(cell)
        last = (label, text, number)
    return out


def check(spark, cases: dict):
    expected = {label: texts for label, (_, texts, _, _) in cases.items()}
    assert matches(spark, cases) == expected


def test_pattern_syntax_and_preference(mr_spark):
    cases = {pattern: (pattern, texts, None, "PAST LAST ROW") for pattern, texts in [
        # greedy takes as many rows as it can, reluctant as few as the rest of the pattern allows
        ("A+", {"aaa": ["1:A 2:A 3:A"]}),
        ("A+?", {"aaa": ["1:A", "2:A", "3:A"]}),
        ("A*? B", {"aab": ["1:A 2:A 3:B"]}),
        ("A{2,3}", {"aaaaa": ["1:A 2:A 3:A", "4:A 5:A"]}),
        ("A{2,3}?", {"aaaaa": ["1:A 2:A", "3:A 4:A"]}),
        ("A{,2} B", {"aaab": ["2:A 3:A 4:B"]}),
        ("A{2,} B", {"aaab": ["1:A 2:A 3:A 4:B"], "ab": []}),
        ("A{2} A", {"aaaa": ["1:A 2:A 3:A"]}),
        ("A{,} B", {"b": ["1:B"]}),
        # ? prefers one row, ?? none (an empty match at each row)
        ("A?", {"ab": ["1:A", "2:-"]}),
        ("A??", {"ab": ["1:-", "2:-"]}),
        # alternation prefers the left option even when the right one is longer
        ("(A | A B)", {"ab": ["1:A"]}),
        ("(A B | A)", {"ab": ["1:A 2:B"]}),
        ("(A | B)+ C", {"abac": ["1:A 2:B 3:A 4:C"]}),
        ("(A A | A) B", {"aab": ["1:A 2:A 3:B"], "ab": ["1:A 2:B"]}),
        # the first match in preference order, not the longest
        ("A+? (B | B C)", {"abc": ["1:A 2:B"]}),
        # grouping and nested quantifiers
        ("(A B)+", {"ababa": ["1:A 2:B 3:A 4:B"]}),
        ("(A B?)+ C", {"aabac": ["1:A 2:A 3:B 4:A 5:C"]}),
        ("(A*)*", {"b": ["1:-"]}),
        # anchors
        ("^ A", {"aa": ["1:A"]}),
        ("A $", {"aa": ["2:A"]}),
        ("^ A+ $", {"aaa": ["1:A 2:A 3:A"], "aab": []}),
        ("^ | A", {"ba": ["1:-", "2:A"]}),
        # the empty pattern: an empty match at every row
        ("()", {"ab": ["1:-", "2:-"]}),
        # exclusion: excluded rows are matched but not output
        ("A {- B+ -} C", {"abbc": ["1:A 4:C"]}),
        ("{- A -} B", {"ab": ["2:B"]}),
    ]}
    check(mr_spark, cases)


def test_permute_and_skip_options(mr_spark):
    """PERMUTE(A, B, C) prefers A B C most, C B A least (every variable accepts 'x').  X is
    undefined (TRUE); each AFTER MATCH SKIP form chooses the next start row; SKIP TO LAST of a
    union variable does not fail when one of its variables is absent from the match."""
    permute = "DEFINE A AS v IN ('a', 'x'), B AS v IN ('b', 'x'), C AS v IN ('c', 'x')"
    cases = {
        "permute": ("PERMUTE(A, B, C)", {"xxx": ["1:A 2:B 3:C"], "xcx": ["1:A 2:C 3:B"],
                                         "cxx": ["1:C 2:A 3:B"], "cba": ["1:C 2:B 3:A"], "ab": []},
                    permute, "PAST LAST ROW"),
        "permute reordered": ("PERMUTE(C, B, A)", {"xxx": ["1:C 2:B 3:A"]}, permute, "PAST LAST ROW"),
    }
    for skip, want in {
        "PAST LAST ROW": ["1:X 2:B 3:B", "4:X 5:B"],
        "TO NEXT ROW": ["1:X 2:B 3:B", "2:X 3:B", "4:X 5:B"],
        "TO FIRST B": ["1:X 2:B 3:B", "2:X 3:B", "4:X 5:B"],
        "TO LAST B": ["1:X 2:B 3:B", "4:X 5:B"],
        "TO B": ["1:X 2:B 3:B", "4:X 5:B"],
    }.items():
        cases[skip] = ("X B+", {"abbab": want}, "DEFINE B AS v = 'b'", skip)
    cases["TO LAST U"] = ("(A | X) (A | X) B", {"xxbxxb": ["1:X 2:X 3:B", "4:X 5:X 6:B"]},
                          "SUBSET U = (A, X) DEFINE A AS v = 'a', X AS v = 'x', B AS v = 'b'", "TO LAST U")
    check(mr_spark, cases)


def test_skip_to_variable_after_an_empty_match(mr_spark):
    """AFTER MATCH SKIP applies to non-empty matches; after an empty match the search resumes at
    the next row (ISO/IEC 19075-5; Trino: "Skipping to the next row is the default behavior
    after detecting an empty match or unmatched row")."""
    check(mr_spark, {"TO LAST A": ("(C A*)?", {"bcaab": ["1:-", "2:C 3:A 4:A", "4:-", "5:-"]},
                                   None, "TO LAST A")})


# ---------------------------------------------------------------------------------------------
# Navigation, aggregates, RUNNING / FINAL, CLASSIFIER over a SUBSET
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def series(mr_spark):
    # k = 'a': 10 9 8 11 12 7 ; k = 'b': 5 6
    view(mr_spark, "series", "k string, t int, p int",
         [("a", t, p) for t, p in enumerate([10, 9, 8, 11, 12, 7], 1)] + [("b", 1, 5), ("b", 2, 6)])
    return mr_spark


def test_navigation_functions(series):
    """PREV/NEXT with offsets (NULL outside the partition), FIRST/LAST with offsets (NULL when
    the variable has too few rows), PREV(FIRST(...), n) nesting, offset 0.  RUNNING FIRST(A.p, 1)
    counts over the whole match as Trino does (Oracle: NULL on the first row; docs/sql.md)."""
    sql = """
        SELECT * FROM series MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY t
          MEASURES PREV(A.p, 2) AS prev2, NEXT(A.p, 2) AS next2, PREV(p, 0) AS prev0,
                   FIRST(A.p, 1) AS first1, LAST(A.p, 1) AS last1, LAST(p, 0) AS last0,
                   PREV(FIRST(A.p), 1) AS prev_first, NEXT(FIRST(A.p, 1), 2) AS next_first1,
                   PREV(LAST(A.p, 1), 1) AS prev_last1, FINAL LAST(A.p, 2) AS final_last2,
                   FINAL NEXT(LAST(A.p), 1) AS after_match
          ALL ROWS PER MATCH
          PATTERN (A+))
        ORDER BY k, t"""
    assert rows(series, sql) == [
        ("a", 1, None, 8, 10, 9, None, 10, None, 11, None, 11, None, 10),
        ("a", 2, None, 11, 9, 9, 10, 9, None, 11, None, 11, None, 9),
        ("a", 3, 10, 12, 8, 9, 9, 8, None, 11, 10, 11, None, 8),
        ("a", 4, 9, 7, 11, 9, 8, 11, None, 11, 9, 11, None, 11),
        ("a", 5, 8, None, 12, 9, 11, 12, None, 11, 8, 11, None, 12),
        ("a", 6, 11, None, 7, 9, 12, 7, None, 11, 11, 11, None, 7),
        ("b", 1, None, None, 5, 6, None, 5, None, None, None, None, None, 5),
        ("b", 2, None, None, 6, 6, 5, 6, None, None, None, None, None, 6),
    ]


def test_aggregates_running_final_and_subsets(series):
    """COUNT(*), COUNT(v.*), COUNT(U.*) and SUM/AVG/MIN/MAX over a variable, a SUBSET and the
    whole match, RUNNING (default) and FINAL; CLASSIFIER(U) is the variable of U's last row."""
    sql = """
        SELECT * FROM series MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY t
          MEASURES CLASSIFIER() AS cls, CLASSIFIER(U) AS cls_u,
                   COUNT(*) AS n, COUNT(D.*) AS n_d, FINAL COUNT(U.*) AS n_u,
                   SUM(p) AS total, SUM(U.p) AS sum_u, FINAL SUM(X.p) AS sum_x,
                   AVG(D.p) AS avg_d, MIN(p) AS lo, FINAL MAX(U.p) AS hi_u,
                   FINAL LAST(U.p) - RUNNING FIRST(p) AS spread
          ALL ROWS PER MATCH
          PATTERN (S D* X+)
          SUBSET U = (S, D)
          DEFINE D AS p < PREV(p), X AS p > PREV(p))
        ORDER BY k, t"""
    assert rows(series, sql) == [
        ("a", 1, "S", "S", 1, 0, 3, 10, 10, 23, None, 10, 10, -2, 10),
        ("a", 2, "D", "D", 2, 1, 3, 19, 19, 23, 9.0, 9, 10, -2, 9),
        ("a", 3, "D", "D", 3, 2, 3, 27, 27, 23, 8.5, 8, 10, -2, 8),
        ("a", 4, "X", "D", 4, 2, 3, 38, 27, 23, 8.5, 8, 10, -2, 11),
        ("a", 5, "X", "D", 5, 2, 3, 50, 27, 23, 8.5, 8, 10, -2, 12),
        ("b", 1, "S", "S", 1, 0, 1, 5, 5, 6, None, 5, 5, 0, 5),
        ("b", 2, "X", "S", 2, 0, 1, 11, 5, 6, None, 5, 5, 0, 6),
    ]


def test_define_reads_other_variables_and_running_state(series):
    """DEFINE: B.p is the current row; LAST(A.p), FIRST(U.p) and CLASSIFIER(U) read the rows
    already mapped; running COUNT(*) / SUM include the current row; NEXT looks ahead."""
    sql = """
        SELECT * FROM series MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY t
          MEASURES MATCH_NUMBER() AS mn, CLASSIFIER() AS cls
          ALL ROWS PER MATCH
          AFTER MATCH SKIP PAST LAST ROW
          PATTERN (A B+ C)
          SUBSET U = (A, B)
          DEFINE B AS B.p < LAST(A.p) AND NEXT(p) IS NOT NULL AND COUNT(*) <= 3,
                 C AS C.p > FIRST(U.p) AND CLASSIFIER(U) = 'B' AND SUM(B.p) = 17)
        ORDER BY k, t"""
    assert rows(series, sql) == [
        ("a", 1, 1, "A", 10), ("a", 2, 1, "B", 9), ("a", 3, 1, "B", 8), ("a", 4, 1, "C", 11),
    ]


# ---------------------------------------------------------------------------------------------
# ORDER BY, partitions, output shape and types
# ---------------------------------------------------------------------------------------------

def test_order_by_directions_and_nulls(mr_spark):
    """ASC/DESC NULLS FIRST/LAST order the rows for the pattern and for PREV (Spark's defaults:
    ASC NULLS FIRST, DESC NULLS LAST); no PARTITION BY = one partition; a MATCH_RECOGNIZE in
    each branch of a UNION ALL."""
    view(mr_spark, "nulls_order", "t int, v int", [(1, 1), (None, 2), (3, 3), (2, 4)])
    branch = """SELECT '{order}' AS o, * FROM nulls_order MATCH_RECOGNIZE (
          ORDER BY {order}
          MEASURES FIRST(v) AS v1, FIRST(v, 1) AS v2, FIRST(v, 2) AS v3, LAST(v) AS v4,
                   FIRST(B.v) AS first_up
          PATTERN (A B* C*)
          DEFINE B AS v > PREV(v))"""
    orders_ = ["t", "t ASC NULLS LAST", "t DESC", "t DESC NULLS FIRST"]
    sql = " UNION ALL ".join(branch.format(order=o) for o in orders_)
    assert sorted(rows(mr_spark, sql)) == sorted([
        ("t", 2, 1, 4, 3, None),
        ("t ASC NULLS LAST", 1, 4, 3, 2, 4),
        ("t DESC", 3, 4, 1, 2, 4),
        ("t DESC NULLS FIRST", 2, 3, 4, 1, 3),
    ])


def test_types_end_to_end(mr_spark):
    """Decimal, timestamp, date, string, boolean, double and NULLs keep Spark's types:
    navigation returns the input type, SUM/AVG Spark's result types, COUNT bigint."""
    mr_spark.sql("""CREATE OR REPLACE TEMP VIEW typed AS SELECT * FROM VALUES
        ('x', TIMESTAMP'2024-01-01 10:00:00', DATE'2024-01-01', CAST(1.50 AS DECIMAL(10,2)), 'foo', true,  CAST(NULL AS INT), 1.5D),
        ('x', TIMESTAMP'2024-01-01 10:00:05', DATE'2024-01-02', CAST(2.25 AS DECIMAL(10,2)), 'bar', false, 3, 2.5D),
        ('x', TIMESTAMP'2024-01-01 10:00:09', DATE'2024-01-03', CAST(0.10 AS DECIMAL(10,2)), NULL,  NULL,  4, NULL)
        AS t(k, ts, day, amt, s, b, n, f)""")
    sql = """
        SELECT * FROM typed MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts
          MEASURES FIRST(A.ts) AS first_ts, LAST(day) AS last_day, SUM(amt) AS sum_amt,
                   AVG(amt) AS avg_amt, MIN(amt) AS min_amt, MAX(s) AS max_s, LAST(b) AS last_b,
                   FIRST(b) AS first_b, SUM(n) AS sum_n, COUNT(n) AS count_n, AVG(n) AS avg_n,
                   MAX(ts) AS max_ts, SUM(f) AS sum_f, LAST(amt) * 2 AS twice,
                   FIRST(s) || '!' AS shout, LAST(n) AS last_n, FIRST(n) AS first_n,
                   upper(CLASSIFIER()) || '#' || CAST(MATCH_NUMBER() AS STRING) AS tag,
                   date_add(LAST(day), 1) AS next_day,
                   CASE WHEN LAST(b) IS NULL THEN 'unknown' END AS b_state
          ONE ROW PER MATCH
          PATTERN (A B* C?)
          DEFINE B AS SUM(B.amt) > 1 AND b = false,
                 C AS AVG(amt) < 1.5 AND s IS NULL AND C.ts - FIRST(A.ts) <= INTERVAL '9' SECOND)"""
    assert schema(mr_spark, sql) == [
        ("k", "string"), ("first_ts", "timestamp"), ("last_day", "date"),
        ("sum_amt", "decimal(20,2)"), ("avg_amt", "decimal(14,6)"), ("min_amt", "decimal(10,2)"),
        ("max_s", "string"), ("last_b", "boolean"), ("first_b", "boolean"), ("sum_n", "bigint"),
        ("count_n", "bigint"), ("avg_n", "double"), ("max_ts", "timestamp"), ("sum_f", "double"),
        ("twice", "decimal(12,2)"), ("shout", "string"), ("last_n", "int"), ("first_n", "int"),
        ("tag", "string"), ("next_day", "date"), ("b_state", "string")]
    values = rows(mr_spark, f"""SELECT k, CAST(first_ts AS STRING), last_day, sum_amt, avg_amt,
        min_amt, max_s, last_b, first_b, sum_n, count_n, avg_n, CAST(max_ts AS STRING), sum_f,
        twice, shout, last_n, first_n, tag, next_day, b_state FROM ({sql})""")
    assert values == [(
        "x", "2024-01-01 10:00:00", dt.date(2024, 1, 3), Decimal("3.85"), Decimal("1.283333"),
        Decimal("0.10"), "foo", None, True, 7, 2, 3.5, "2024-01-01 10:00:09", 4.0,
        Decimal("0.20"), "foo!", 4, None, "C#1", dt.date(2024, 1, 4), "unknown")]


def test_end_anchor_right_after_a_variable(mr_spark):
    check(mr_spark, {"A$": ("A$", {"aa": ["2:A"]}, "DEFINE A AS v = 'a'", "PAST LAST ROW")})


def test_date_arithmetic_over_match_state(mr_spark):
    """Spark's ``date + n`` adds n days (or the engine must refuse it with a clear error)."""
    sql = """
        SELECT * FROM VALUES (DATE'2024-01-01'), (DATE'2024-01-02'), (DATE'2024-01-03') AS t(day)
        MATCH_RECOGNIZE (ORDER BY day MEASURES COUNT(*) AS n PATTERN (A B+)
                         DEFINE B AS B.day <= FIRST(A.day) + 1)"""
    assert rows(mr_spark, sql) == [(2,)]


# ---------------------------------------------------------------------------------------------
# Where a MATCH_RECOGNIZE may stand, and what it may read
# ---------------------------------------------------------------------------------------------

MR = """MATCH_RECOGNIZE (PARTITION BY k ORDER BY t
          MEASURES FIRST(A.t) AS start, COUNT(*) AS n
          PATTERN (A B+) DEFINE B AS p < PREV(p))"""


def test_inputs_view_subquery_join_cte_values(series):
    """The input may be a temp view, a subquery, a join in a subquery, a CTE or VALUES."""
    sql = f"""
        WITH cte AS (SELECT * FROM series WHERE k = 'a')
        SELECT 'view', * FROM series {MR} AS m
        UNION ALL SELECT 'subquery', * FROM (SELECT * FROM series WHERE p > 7) {MR} AS m
        UNION ALL SELECT 'join', * FROM (SELECT s.k, s.t, s.p * w.weight AS p FROM series s
                                         JOIN (SELECT 'a' AS k, -1 AS weight) w ON s.k = w.k) {MR} AS m
        UNION ALL SELECT 'cte', * FROM cte {MR} AS m
        UNION ALL SELECT 'values', * FROM VALUES ('v', 1, 3), ('v', 2, 2), ('v', 3, 1) AS v(k, t, p) {MR} AS m"""
    assert sorted(rows(series, sql)) == sorted([
        ("view", "a", 1, 3), ("view", "a", 5, 2),
        ("subquery", "a", 1, 3),
        ("join", "a", 3, 3),  # -10 -9 -8 -11 -12 -7: -8 > -11 > -12
        ("cte", "a", 1, 3), ("cte", "a", 5, 2),
        ("values", "v", 1, 3),
    ])


def test_match_recognize_in_joins_and_subqueries(series):
    """A MATCH_RECOGNIZE as a JOIN operand (both sides), in a scalar and an IN subquery, and a
    CTE holding one that a later CTE reads."""
    sql = f"""
        WITH found AS (SELECT * FROM series {MR} AS m),
             longest AS (SELECT max(n) AS n FROM found)
        SELECT 'join', m.k, m.start, x.cnt FROM series {MR} AS m
               JOIN (SELECT k, count(*) AS cnt FROM series GROUP BY k) x ON m.k = x.k
        UNION ALL SELECT 'join right', m.k, m.start, m.n FROM (SELECT DISTINCT k FROM series) x
               JOIN series {MR} AS m ON m.k = x.k
        UNION ALL SELECT 'scalar', k, t, (SELECT max(n) FROM series {MR} AS m) FROM series
               WHERE t IN (SELECT start FROM series {MR} AS m) AND k = 'a'
        UNION ALL SELECT 'ctes', NULL, NULL, n FROM longest"""
    assert sorted(rows(series, sql), key=str) == sorted([
        ("join", "a", 1, 6), ("join", "a", 5, 6),
        ("join right", "a", 1, 3), ("join right", "a", 5, 2),
        ("scalar", "a", 1, 3), ("scalar", "a", 5, 3),
        ("ctes", None, None, 3),
    ], key=str)


def test_match_recognize_over_match_recognize(series):
    """Event hierarchies: the input of a MATCH_RECOGNIZE is the output of another one."""
    sql = f"""
        SELECT * FROM (SELECT * FROM series {MR} AS low)
        MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY start
          MEASURES COUNT(*) AS drops, SUM(X.n) AS rows_in_drops, FIRST(X.start) AS first_start
          ONE ROW PER MATCH
          PATTERN (X+)) AS high"""
    assert rows(series, sql) == [("a", 2, 5, 1)]


# ---------------------------------------------------------------------------------------------
# Identifiers
# ---------------------------------------------------------------------------------------------

def test_quoted_variables_and_case_insensitivity(series):
    """Unquoted variables and columns are case-insensitive (CLASSIFIER() reports them
    upper-case); quoted variables keep their case and may be written `low` in expressions and
    "low" in PATTERN / SUBSET / DEFINE / SKIP TO; input columns may need quoting."""
    sql = """
        SELECT * FROM (SELECT k AS `Grp Key`, t AS Ts, p AS `Price Tag` FROM series)
        MATCH_RECOGNIZE (
          PARTITION BY `grp key` ORDER BY ts
          MEASURES first(strt.TS) AS start, Classifier() AS cls, classifier(`Both`) AS cls_both,
                   last(`low`.`price tag`) AS last_low, count(`Both`.*) AS n_both
          ALL ROWS PER MATCH
          AFTER MATCH SKIP TO LAST "low"
          PATTERN (Strt "low"+ uP)
          SUBSET "Both" = (strt, "low")
          DEFINE "low" AS `Price Tag` < prev(`PRICE TAG`), UP AS `low`.`price tag` < `price tag`)"""
    assert [name for name, _ in schema(series, sql)] == [
        "Grp Key", "Ts", "start", "cls", "cls_both", "last_low", "n_both", "Price Tag"]
    assert rows(series, sql) == [
        ("a", 1, 1, "STRT", "STRT", None, 1, 10),
        ("a", 2, 1, "low", "low", 9, 2, 9),
        ("a", 3, 1, "low", "low", 8, 3, 8),
        ("a", 4, 1, "UP", "low", 8, 3, 11),
    ]
