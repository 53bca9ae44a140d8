"""WITH TIMEOUT ROWS: timed-out partial matches as rows, SQL in / rows out (batch), and its errors.

A partial match times out when its WITHIN window closes: a later row of its partition lies
beyond the window, or the partition ends (as Flink's final watermark does at the end of a
bounded stream).  It gives a row with the measures over its rows so far, MATCH_NUMBER()
NULL and the timeout column true; regular matches have it false.
"""
from __future__ import annotations

import datetime as dt

import pytest

from sql_support import analysis_error, at, mr_spark, rows, schema, view  # noqa: F401  (fixture)

T0 = dt.datetime(2024, 1, 1, 8, 0, 0)


def minutes(m: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=m)


@pytest.fixture(scope="module")
def orders(mr_spark):
    """Per order: placed, paid, shipped events (minutes after 08:00)."""
    view(mr_spark, "order_events", "o string, ts timestamp, kind string", [
        ("o1", minutes(0), "placed"), ("o1", minutes(10), "paid"), ("o1", minutes(20), "shipped"),
        ("o2", minutes(0), "placed"), ("o2", minutes(30), "paid"), ("o2", minutes(90), "shipped"),
        ("o3", minutes(0), "placed"), ("o3", minutes(5), "paid"),  # the partition ends: its window closes
        ("o4", minutes(0), "placed"), ("o4", minutes(70), "placed"), ("o4", minutes(80), "paid"),
        ("o4", minutes(100), "shipped"),
    ])
    return mr_spark


FLOW = """SELECT * FROM order_events MATCH_RECOGNIZE (
  PARTITION BY o ORDER BY ts
  MEASURES FIRST(P.ts) AS placed, LAST(Y.ts) AS paid, LAST(S.ts) AS shipped, COUNT(*) AS events,
           MATCH_NUMBER() AS mno, CLASSIFIER() AS last_var
  {rows}
  {semantics}
  PATTERN (P -> Y -> S) WITHIN INTERVAL '1' HOUR {timeout}
  DEFINE P AS kind = 'placed', Y AS kind = 'paid', S AS kind = 'shipped'
) AS m ORDER BY o, placed"""


@pytest.mark.parametrize("semantics", ["", "SEMANTICS FLINKCEP"])
def test_one_row_per_match(orders, semantics):
    sql = FLOW.format(rows="ONE ROW PER MATCH", semantics=semantics, timeout="WITH TIMEOUT ROWS")
    assert schema(orders, sql)[-1] == ("timed_out", "boolean")
    assert rows(orders, sql) == [
        ("o1", minutes(0), minutes(10), minutes(20), 3, 1, "S", False),
        ("o2", minutes(0), minutes(30), None, 2, None, "Y", True),  # shipped after 90 minutes
        ("o3", minutes(0), minutes(5), None, 2, None, "Y", True),
        ("o4", minutes(0), None, None, 1, None, "P", True),  # o4's first order: nothing within the hour
        ("o4", minutes(70), minutes(80), minutes(100), 3, 1, "S", False),
    ]
    # without the clause: the same matches, no timeout column
    plain = FLOW.format(rows="ONE ROW PER MATCH", semantics=semantics, timeout="")
    assert rows(orders, plain) == [r[:-1] for r in rows(orders, sql) if not r[-1]]


def test_all_rows_per_match_and_a_named_column(orders):
    sql = FLOW.format(rows="ALL ROWS PER MATCH", semantics="SEMANTICS FLINKCEP",
                      timeout="WITH TIMEOUT ROWS AS expired").replace("ORDER BY o, placed", "ORDER BY o, ts")
    got = [(r.o, r.ts, r.events, r.mno, r.last_var, r.expired) for r in orders.sql(sql).collect()]
    assert got == [
        ("o1", minutes(0), 1, 1, "P", False), ("o1", minutes(10), 2, 1, "Y", False),
        ("o1", minutes(20), 3, 1, "S", False),
        ("o2", minutes(0), 1, None, "P", True), ("o2", minutes(30), 2, None, "Y", True),
        ("o3", minutes(0), 1, None, "P", True), ("o3", minutes(5), 2, None, "Y", True),
        ("o4", minutes(0), 1, None, "P", True),
        ("o4", minutes(70), 1, 1, "P", False), ("o4", minutes(80), 2, 1, "Y", False),
        ("o4", minutes(100), 3, 1, "S", False),
    ]


def test_flinkcep_reports_every_live_partial_match(mr_spark):
    """followedByAny keeps the run that skipped a b: both partial matches time out (as Flink)."""
    view(mr_spark, "abx", "ts timestamp, name string", [
        (minutes(0), "a"), (minutes(1), "b"), (minutes(2), "b"), (minutes(90), "x")])
    sql = """SELECT * FROM abx MATCH_RECOGNIZE (ORDER BY ts
      MEASURES array_agg(name) AS names, minute(FIRST(ts)) AS m0, minute(LAST(ts)) AS m1
      AFTER MATCH NO SKIP SEMANTICS FLINKCEP
      PATTERN (A ->> B -> C) WITHIN INTERVAL '10' MINUTE WITH TIMEOUT ROWS
      DEFINE A AS name = 'a', B AS name = 'b', C AS name = 'c') ORDER BY m1, size(names)"""
    assert rows(mr_spark, sql) == [(["a"], 0, 0, True), (["a", "b"], 0, 1, True), (["a", "b"], 0, 2, True)]


def test_date_keys_and_standard_preference(mr_spark):
    """Standard semantics: one timed-out row per start row without a match, its preferred run."""
    view(mr_spark, "days", "d date, v int", [
        (dt.date(2024, 1, 1), 1), (dt.date(2024, 1, 2), 2), (dt.date(2024, 1, 3), 2),
        (dt.date(2024, 1, 9), 2), (dt.date(2024, 1, 10), 3)])
    sql = """SELECT * FROM days MATCH_RECOGNIZE (ORDER BY d
      MEASURES FIRST(d) AS first_day, COUNT(B.*) AS bs, MATCH_NUMBER() AS mno
      PATTERN (A B* C) WITHIN INTERVAL '3' DAY WITH TIMEOUT ROWS
      DEFINE A AS v = 1, B AS v = 2, C AS v = 3)"""
    assert rows(mr_spark, sql) == [(dt.date(2024, 1, 1), 2, None, True)]


ERROR_QUERY = """SELECT * FROM order_events MATCH_RECOGNIZE (
  PARTITION BY o ORDER BY ts
  MEASURES COUNT(*) AS {measure}
  {rows}
  PATTERN (P -> Y)
  {within}
  DEFINE P AS kind = 'placed', Y AS kind = 'paid'
) AS m"""


@pytest.mark.parametrize("measure, rows_, within, needle, message", [
    ("n", "ONE ROW PER MATCH", "WITH TIMEOUT ROWS", "WITH TIMEOUT",
     "WITH TIMEOUT ROWS requires WITHIN: a partial match times out when its WITHIN window closes"),
    ("n", "ALL ROWS PER MATCH WITH UNMATCHED ROWS", "WITHIN INTERVAL '1' HOUR WITH TIMEOUT ROWS", "WITH TIMEOUT",
     "WITH TIMEOUT ROWS cannot be used with ALL ROWS PER MATCH WITH UNMATCHED ROWS"),
    ("timed_out", "ONE ROW PER MATCH", "WITHIN INTERVAL '1' HOUR WITH TIMEOUT ROWS", "WITH TIMEOUT",
     "WITH TIMEOUT ROWS: the output already has a column timed_out"),
    ("n", "ALL ROWS PER MATCH", "WITHIN INTERVAL '1' HOUR WITH TIMEOUT ROWS AS Kind", "Kind",
     "WITH TIMEOUT ROWS: the output already has a column Kind"),
    ("n", "ONE ROW PER MATCH WITH TIMEOUT ROWS", "", "WITH TIMEOUT",
     "WITH TIMEOUT ROWS clause is out of order or repeated"),
    ("n", "ONE ROW PER MATCH", "WITHIN INTERVAL '1' HOUR WITH TIMEOUT", "WITH TIMEOUT",
     "Expecting WITH TIMEOUT ROWS [AS <name>]"),
])
def test_errors(orders, measure, rows_, within, needle, message):
    sql = ERROR_QUERY.format(measure=measure, rows=rows_, within=within)
    e = analysis_error(orders, sql)
    assert message in e.message
    assert (e.line, e.column) == at(sql, needle)


STREAM_QUERY = """SELECT * FROM {src} MATCH_RECOGNIZE (
  PARTITION BY o ORDER BY ts
  MEASURES FIRST(P.ts) AS placed, COUNT(*) AS events, MATCH_NUMBER() AS mno
  {semantics}
  PATTERN (P -> Y -> S) WITHIN INTERVAL '1' HOUR WITH TIMEOUT ROWS
  DEFINE P AS kind = 'placed', Y AS kind = 'paid', S AS kind = 'shipped'
) AS m"""


@pytest.mark.slow
@pytest.mark.parametrize("semantics", ["", "SEMANTICS FLINKCEP"])
def test_streaming_gives_the_batch_rows(mr_spark, tmp_path, semantics):
    """The union of the stream's output is the batch output; o2's window is closed by the
    watermark (rows of other keys) and its event-time timer, before the stream ends; o3's only
    by the end of the stream."""
    import sql_ext
    from stream_support import END_TS, micros, run_to_end, scripted, write_script

    at_ = lambda m: micros(minutes(m).replace(tzinfo=dt.timezone.utc))
    batches = [[["o1", at_(0), "placed"], ["o2", at_(0), "placed"]],
               [["o1", at_(10), "paid"], ["o1", at_(20), "shipped"], ["o2", at_(30), "paid"]],
               [["o3", at_(100), "placed"]],
               [["o3", at_(101), "paid"]],
               [["~end", micros(END_TS), "end"]]]
    script = write_script(str(tmp_path / "script.json"), "o string, ts timestamp, kind string", batches)
    scripted(mr_spark, script, "ts", "5 minutes").where("ts < TIMESTAMP '9000-01-01'") \
        .createOrReplaceTempView("orders_live")
    got, _ = run_to_end(sql_ext.stream(mr_spark, STREAM_QUERY.format(src="orders_live", semantics=semantics)),
                        str(tmp_path / "checkpoint"))
    view(mr_spark, "orders_at_rest", "o string, ts timestamp, kind string",
         [(o, EPOCH_UTC + dt.timedelta(microseconds=t), k) for batch in batches[:-1] for o, t, k in batch])
    expected = rows(mr_spark, STREAM_QUERY.format(src="orders_at_rest", semantics=semantics))
    assert sorted(r for _, r in got) == sorted(expected)
    assert sorted(r[0] for r in expected if r[-1]) == ["o2", "o3"]
    batch_of = {r[0]: b for b, r in got if r[-1]}
    assert batch_of["o2"] < batch_of["o3"]


EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
