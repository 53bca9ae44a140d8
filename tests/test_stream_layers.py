"""Statements with LAYERs on a stream, the engine side (``udtf.stream_layers``): random
hierarchies (tests/test_sql_hierarchies.py's ``Case``: 1-4 layers, raw and event variables,
skip modes, both semantics, WITHIN; instantaneous and PERIOD rows) planned by the compiler
(Spark only types them), then stepped without Spark as Structured Streaming would: rows arrive
in random micro-batches, out of order within the watermark delay, the watermark follows the
event times seen, timers fire, the state goes through its stored encoding between steps.  The
union of what the steps emit must equal the batch one pass (``udtf.hierarchy.HierarchyRunner``)
over all rows, which tests/test_sql_hierarchies.py checks against the multi-layer oracle."""
from __future__ import annotations

import datetime as dt
import json
import random
from collections import Counter

import pyarrow as pa
from pyspark.sql import functions as F

from sql_ext.compiler.rewrite import rewrite_sql
from sql_ext.spark.catalog import SparkCatalog
from sql_support import mr_spark, view  # noqa: F401  (mr_spark: a fixture)
from stream_driver import drive
from stream_fuzz_support import FuzzCatalog
from test_sql_hierarchies import Case
from udtf.errors import MatchRecognizeError
from udtf.hierarchy import HierarchyRunner
from udtf.plan import OutputKind
from udtf.stream import END_OF_STREAM, Column, Fingerprint, OrderKey, StreamSpec, arrow_schema
from udtf.stream_layers import LAYERS, LayeredStepper, stepper
from udtf.transport import dump_state, load_state

MINUTE = 60_000_000
DELAY = 3 * MINUTE


EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
T0 = 1_767_225_600_000_000  # 2026-01-01 (UTC) in microseconds


def micros(value: int | None) -> int | None:
    """Minute ``value`` of a case as an event time."""
    return None if value is None else T0 + value * MINUTE


class Streamed:
    """A ``Case`` planned (its spec for the stepper) and its rows as the stream delivers them;
    ``late``: the share of rows arriving past the watermark delay (planned with ``late_rows``:
    the streaming rewrite's own spec, late rows output in a column ``late``)."""

    def __init__(self, spark, seed: int, period: bool, late: float = 0.0):
        self.case = case = Case(seed, period)
        self.seed, self.period = seed, period
        self.time = "e" if period else "ts"
        if period:
            view(spark, "stream", "part STRING, id INT, s TIMESTAMP, e TIMESTAMP, c STRING, g STRING", [])
        else:
            view(spark, "stream", "part STRING, ts TIMESTAMP, c STRING, g STRING", [])
        if late:  # (the event time marked as a watermark column, as withWatermark marks a stream's)
            frame = spark.table("stream")
            frame.withColumn(self.time, F.col(self.time).alias(self.time, metadata={"spark.watermarkDelayMs": 1})) \
                .createOrReplaceTempView("stream")
            catalog = FuzzCatalog(spark, late_rows="late")
            try:
                rewrite_sql(case.sql(), catalog)
            except MatchRecognizeError as e:  # (a layer refining the partition: not streamed)
                assert "does not stream" in e.message, e.message
                self.layered = False
                return
            spec, _, lowered = catalog.captured
        else:
            catalog = SparkCatalog(spark)
            _, done = rewrite_sql(case.sql(), catalog)
            lowered = done[-1][1]
        self.plan = plan = lowered.plan
        # (a layer refining the partition: in one pass in batch, refused on a stream)
        self.layered = plan.hierarchy is not None and not any(layer.keys for layer in plan.hierarchy.layers)
        if not self.layered:
            return
        types = {f.name: f.json for f in catalog.schema("SELECT * FROM stream")}
        helpers = plan.hierarchy.helpers
        types.update({helpers[4]: '"timestamp"', helpers[5]: '"timestamp"'})
        order = (OrderKey("e", False, True), OrderKey("id", False, True)) if period else (OrderKey("ts", False, True),)
        self.spec = spec if late else StreamSpec(
            plan.to_json(), tuple(Column(name, types[name]) for name in lowered.shipped),
            tuple(Column(f.name, f.json) for f in lowered.output), order, 0,
            Fingerprint((("PATTERN", case.sql()),), 0, False))
        self.rows = []
        for k, row in enumerate(case.rows):
            if period:
                part, (start, end), c, g = row
                item = {"part": part, "id": k, "s": micros(start), "e": micros(end), "c": c, "g": g}
            else:
                part, t, c, g = row
                item = {"part": part, "ts": micros(t), "c": c, "g": g}
                start = end = t
            item[helpers[4]], item[helpers[5]] = micros(start), micros(end)
            self.rows.append(item)
        rng = random.Random(f"stream {seed}")
        self.shards = {"p": 0, "q": rng.randrange(2)}
        # arrival: event time plus a jitter below the delay (a NULL end: any time, and it is late),
        # a row past the delay (``late``) one to four delays later, in random micro-batches
        known = [r[self.time] for r in self.rows if r[self.time] is not None] or [0]
        lag = random.Random(f"late {seed}")
        lags = [lag.randrange(DELAY, 4 * DELAY) if lag.random() < late else 0 for _ in self.rows]
        arrival = [r for _, r in sorted(
            (((rng.choice(known) if r[self.time] is None else r[self.time]) + rng.randrange(DELAY) + behind, k), r)
            for k, (r, behind) in enumerate(zip(self.rows, lags)))]
        self.batches = []
        while arrival:
            size = rng.randint(0, 4)
            self.batches.append(arrival[:size])
            arrival = arrival[size:]

    def stepper(self) -> LayeredStepper:
        return stepper(self.spec, arrow_schema(self.spec.inputs), arrow_schema(self.spec.outputs))


def _table(schema: pa.Schema, rows: list) -> pa.Table:
    return pa.table({f.name: pa.array([r[f.name] for r in rows],
                                      pa.int64() if pa.types.is_timestamp(f.type) else f.type).cast(f.type)
                     for f in schema})


def batch_output(streamed: Streamed, stepper: LayeredStepper, late: list = ()) -> list:
    """The batch one pass over the rows not ``late`` (``_user`` strings; a row whose end is
    NULL is late on a stream)."""
    runner = HierarchyRunner(streamed.plan, stepper.output_schema)
    time = streamed.time
    left = Counter(late)
    kept = []
    for r in streamed.rows:
        if left[_user(streamed, r)]:
            left[_user(streamed, r)] -= 1
        elif r[time] is not None:
            kept.append(r)
    assert not +left, "a late row that is no input row"
    rows = sorted(kept, key=lambda r: (r["part"], r[time], r.get("id", 0)))
    out = []
    for batch in _table(stepper.input_schema, rows).to_batches(max_chunksize=3) if rows else []:
        out += runner.feed(batch)
    out += runner.finish()
    return sorted(json.dumps(r, default=str) for b in out for r in b.to_pylist())


def stream_output(streamed: Streamed, stepper: LayeredStepper, held: list | None = None) -> list:
    stored: dict = {}
    out: list = []

    def step(shard, rows, watermark_ms):
        state = stepper.restore(load_state(stored.get(shard)))
        done = stepper.step(state, _table(stepper.input_schema, rows) if rows else None, watermark_ms)
        late = [] if done.late is None else done.late.column(streamed.time).to_pylist()
        assert late == [None] * len(late), "a row within the watermark delay was taken for late"
        assert len(late) == sum(r[streamed.time] is None for r in rows), "a row without event time is late"
        stored[shard] = None if done.shard is None else dump_state(stepper.stored(done.shard))
        if held is not None and done.shard is not None:
            held.append(done.shard.held.num_rows)
        if done.output is not None:
            out.extend(json.dumps(r, default=str) for r in done.output.to_pylist())
        return done.timer

    drive(streamed.batches, lambda r: streamed.shards[r["part"]], lambda r: r[streamed.time], DELAY, step)
    assert all(s is None for s in stored.values()), "state left after the end of the stream"
    return sorted(out)


def _user(streamed: Streamed, row: dict) -> str:
    """A row's columns of the statement's input (the stream's, not the helpers), comparable."""
    names = ("part", "id", "s", "e", "c", "g") if streamed.period else ("part", "ts", "c", "g")
    return json.dumps([_micros(row[n]) for n in names])


def _micros(value):
    """A timestamp as microseconds (Arrow's datetime or already micros); other values as they are."""
    if not isinstance(value, dt.datetime):
        return value
    return (value.replace(tzinfo=value.tzinfo or dt.timezone.utc) - EPOCH) // dt.timedelta(microseconds=1)


def late_stream_output(streamed: Streamed, stepper: LayeredStepper) -> tuple:
    """(the stream's match rows, its late rows' ``late`` column, the rows it set aside as late),
    the last two as ``_user`` strings; a row is set aside only if its event time is NULL or at
    or behind the watermark, and output once, on a row of its own (its key carried, the rest
    NULL).  A fresh stepper (a restart) takes over before a third of the steps."""
    stored: dict = {}
    matched, late, aside = [], [], []
    name, = (f.name for f, o in zip(stepper.output_schema, streamed.plan.output) if o.kind is OutputKind.LATE)
    restarts = random.Random(f"restart {streamed.seed}")

    def step(shard, rows, watermark_ms):
        nonlocal stepper
        if restarts.random() < 0.3:
            stepper = streamed.stepper()
        state = stepper.restore(load_state(stored.get(shard)))
        done = stepper.step(state, _table(stepper.input_schema, rows) if rows else None, watermark_ms)
        if done.late is not None:
            for row in done.late.to_pylist():
                t = _micros(row[streamed.time])
                assert t is None or t <= watermark_ms * 1000, "a timely row set aside"
                aside.append(_user(streamed, row))
        stored[shard] = None if done.shard is None else dump_state(stepper.stored(done.shard))
        for row in [] if done.output is None else done.output.to_pylist():
            if row[name] is None:
                matched.append(json.dumps(row, default=str))
                continue
            assert row["part"] == row[name]["part"], row
            assert all(v is None for k, v in row.items() if k not in ("part", name)), row
            late.append(_user(streamed, row[name]))
        return done.timer

    drive(streamed.batches, lambda r: streamed.shards[r["part"]], lambda r: r[streamed.time], DELAY, step)
    assert all(s is None for s in stored.values()), "state left after the end of the stream"
    return sorted(matched), sorted(late), sorted(aside)


def test_late_rows_of_random_hierarchies_come_out_once_and_change_nothing(mr_spark):
    """With ``late_rows``, a row arriving past the watermark (or without event time) is set
    aside and output once in the late column; the match rows are the batch one pass's over the
    other rows."""
    late_total = checked = matched = changed = 0
    # (20 + 10 seeds: those with a layer refining the partition do not stream)
    for seed, period in [*((s, False) for s in range(20)), *((s, True) for s in range(10))]:
        streamed = Streamed(mr_spark, seed, period, late=0.25)
        if not streamed.layered:
            continue
        stepper = streamed.stepper()
        assert stepper.late
        got, late, aside = late_stream_output(streamed, stepper)
        assert late == aside, streamed.case.sql()
        expected = batch_output(streamed, stepper, aside)
        assert got == expected, streamed.case.sql()
        late_total += len(late)
        checked += 1
        matched += bool(expected)
        changed += expected != batch_output(streamed, stepper)  # (the late rows read: other matches)
    assert checked >= 12 and matched >= checked // 3 and late_total >= checked // 2 and changed >= 2, \
        (checked, matched, late_total, changed)


def _check(spark, seeds, period: bool):
    checked = matched = 0
    for seed in seeds:
        streamed = Streamed(spark, seed, period)
        if not streamed.layered:
            continue
        stepper = streamed.stepper()
        expected = batch_output(streamed, stepper)
        assert stream_output(streamed, stepper) == expected, streamed.case.sql()
        checked += 1
        matched += bool(expected)
    assert checked >= len(seeds) // 2 and matched >= checked // 3, (checked, matched)


def test_random_hierarchies_stream_like_the_one_pass(mr_spark):
    _check(mr_spark, range(40), period=False)


def test_random_hierarchies_of_interval_rows_stream_like_the_one_pass(mr_spark):
    _check(mr_spark, range(30), period=True)


def _planned(spark, sql: str):
    """The lowered statement ``sql`` over ``stream(part, ts, c, g)`` and its layered stepper."""
    view(spark, "stream", "part STRING, ts TIMESTAMP, c STRING, g STRING", [])
    catalog = SparkCatalog(spark)
    lowered = rewrite_sql(sql, catalog)[1][-1][1]
    helpers = lowered.plan.hierarchy.helpers
    types = {f.name: f.json for f in catalog.schema("SELECT * FROM stream")}
    types.update({helpers[4]: '"timestamp"', helpers[5]: '"timestamp"'})
    spec = StreamSpec(lowered.plan.to_json(), tuple(Column(n, types[n]) for n in lowered.shipped),
                      tuple(Column(f.name, f.json) for f in lowered.output), (OrderKey("ts", False, True),), 0,
                      Fingerprint((), 0, False))
    return lowered, stepper(spec, arrow_schema(spec.inputs), arrow_schema(spec.outputs))


def _rows(helpers: tuple, part: str, minutes: list, letters: str) -> list:
    return [{"part": part, "ts": micros(t), "c": c, "g": "x", helpers[4]: micros(t), helpers[5]: micros(t)}
            for t, c in zip(minutes, letters)]


def test_a_key_keeps_only_the_rows_since_its_quiet_point(mr_spark):
    """Over a long stream of one key the held rows stay few: at each quiet point (no layer holds
    a run or an event) the rows before it go, with the layers' MATCH_NUMBERs kept."""
    sql = """SELECT * FROM stream MATCH_RECOGNIZE (PARTITION BY part ORDER BY ts
      LAYER pair AS (MEASURES MATCH_NUMBER() AS pn PATTERN (A B) DEFINE A AS c = 'a', B AS c = 'b')
      MEASURES MATCH_NUMBER() AS mn, LAST(P.pn) AS pn PATTERN (P{2}) DEFINE P FROM pair) AS m"""
    lowered, layered = _planned(mr_spark, sql)
    helpers = lowered.plan.hierarchy.helpers
    shard, out, held = None, [], []
    for t in range(0, 400, 4):  # a b a b, one pair after the other: quiet after every other pair
        rows = _rows(helpers, "p", [t, t + 1, t + 2, t + 3], "abab")
        done = layered.step(shard, _table(layered.input_schema, rows), (micros(t) - MINUTE) // 1000)  # (the rows before t)
        shard = layered.restore(load_state(dump_state(layered.stored(done.shard))))
        held.append(shard.held.num_rows)
        out += [] if done.output is None else done.output.to_pylist()
    done = layered.step(shard, None, END_OF_STREAM // 1000)
    out += [] if done.output is None else done.output.to_pylist()
    assert done.shard is None and max(held) <= 9, max(held)  # (without the quiet points: 400 rows)
    numbers = sorted(tuple(v for k, v in r.items() if k != "part") for r in out)
    assert numbers == [(k + 1, 2 * k + 2) for k in range(100)]
    assert shard.held.column(LAYERS).null_count < shard.held.num_rows  # (the layers' numbers are stored)


# an idle key whose window closes: a layer's own WITHIN over instants (a greedy loop it cuts),
# and the top's WITHIN over the members' span of a layer's events (a greedy loop of events)
IDLE = {
    "layer": ("""SELECT * FROM stream MATCH_RECOGNIZE (PARTITION BY part ORDER BY ts
      LAYER hot AS (MEASURES COUNT(*) AS n PATTERN (H{2,}) WITHIN INTERVAL '3' MINUTE DEFINE H AS c = 'a')
      MEASURES MATCH_NUMBER() AS mn, P.n AS n PATTERN (P) DEFINE P FROM hot) AS m""",
              [0, 1, 2], "aaa", 3),
    "top": ("""SELECT * FROM stream MATCH_RECOGNIZE (PARTITION BY part ORDER BY ts
      LAYER pair AS (MEASURES MATCH_NUMBER() AS pn PATTERN (A B) DEFINE A AS c = 'a', B AS c = 'b')
      MEASURES MATCH_NUMBER() AS mn, COUNT(*) AS pairs, LAST(P.pn) AS pn
      PATTERN (P+) WITHIN INTERVAL '10' MINUTE DEFINE P FROM pair) AS m""",
            [0, 1, 3, 4], "abab", 10),
}


def test_an_idle_keys_window_closed_by_its_timer(mr_spark):
    """A key whose last rows wait only for a window to close (a layer's, the top's) is emitted
    when the watermark passes the close, by the shard's timer, with no later row of the key -
    what the batch one pass reports over the same rows - and its state goes; the state goes
    through its stored encoding between the steps."""
    for name, (sql, minutes, letters, close) in IDLE.items():
        lowered, layered = _planned(mr_spark, sql)
        rows = _rows(lowered.plan.hierarchy.helpers, "p", minutes, letters)
        runner = HierarchyRunner(lowered.plan, layered.output_schema)
        table = _table(layered.input_schema, rows)
        expected = [r for b in [*runner.feed(table.to_batches()[0]), *runner.finish()] for r in b.to_pylist()]
        assert expected, name

        done = layered.step(None, table, micros(minutes[-1]) // 1000)
        assert done.output is None and done.timer == micros(close) // 1000, (name, done.timer)
        shard = layered.restore(load_state(dump_state(layered.stored(done.shard, done.timer))))
        early = layered.step(shard, None, micros(close) // 1000 - 1)  # (the window still open)
        assert early.output is None and early.timer == done.timer, name
        shard = layered.restore(load_state(dump_state(layered.stored(early.shard, early.timer))))
        fired = layered.step(shard, None, micros(close) // 1000)
        assert fired.output is not None and fired.output.to_pylist() == expected, name
        assert fired.shard.held.num_rows <= 1, name  # (the key keeps at most its meta row: MATCH_NUMBER)
        assert fired.timer == END_OF_STREAM // 1000, name  # (the shard only waits for the end)
