"""Statements with LAYERs on a stream, the engine side (``udtf.stream_layers``): random
hierarchies (tests/test_sql_hierarchies.py's ``Case``: 1-4 layers, raw and event variables,
skip modes, both semantics, WITHIN; instantaneous and PERIOD rows) planned by the compiler
(Spark only types them), then stepped without Spark as Structured Streaming would: rows arrive
in random micro-batches, out of order within the watermark delay, the watermark follows the
event times seen, timers fire, the state goes through its stored encoding between steps.  The
union of what the steps emit must equal the batch one pass (``udtf.hierarchy.HierarchyRunner``)
over all rows, which tests/test_sql_hierarchies.py checks against the multi-layer oracle."""
from __future__ import annotations

import json
import random

import pyarrow as pa

from sql_ext.compiler.rewrite import rewrite_sql
from sql_ext.spark.catalog import SparkCatalog
from sql_support import mr_spark, view  # noqa: F401  (mr_spark: a fixture)
from stream_driver import drive
from test_sql_hierarchies import Case
from udtf.hierarchy import HierarchyRunner
from udtf.stream import END_OF_STREAM, Column, Fingerprint, OrderKey, StreamSpec, arrow_schema
from udtf.stream_layers import LAYERS, LayeredStepper, stepper
from udtf.transport import dump_state, load_state

MINUTE = 60_000_000
DELAY = 3 * MINUTE


T0 = 1_767_225_600_000_000  # 2026-01-01 (UTC) in microseconds


def micros(value: int | None) -> int | None:
    """Minute ``value`` of a case as an event time."""
    return None if value is None else T0 + value * MINUTE


class Streamed:
    """A ``Case`` planned (its spec for the stepper) and its rows as the stream delivers them."""

    def __init__(self, spark, seed: int, period: bool):
        self.case = case = Case(seed, period)
        self.seed, self.period = seed, period
        if period:
            view(spark, "stream", "part STRING, id INT, s TIMESTAMP, e TIMESTAMP, c STRING, g STRING", [])
        else:
            view(spark, "stream", "part STRING, ts TIMESTAMP, c STRING, g STRING", [])
        catalog = SparkCatalog(spark)
        _, done = rewrite_sql(case.sql(), catalog)
        lowered = done[-1][1]
        self.plan = plan = lowered.plan
        self.layered = plan.hierarchy is not None  # (a layer refining the partition: the expansion)
        if not self.layered:
            return
        types = {f.name: f.json for f in catalog.schema("SELECT * FROM stream")}
        helpers = plan.hierarchy.helpers
        types.update({helpers[4]: '"timestamp"', helpers[5]: '"timestamp"'})
        order = (OrderKey("e", False, True), OrderKey("id", False, True)) if period else (OrderKey("ts", False, True),)
        self.spec = StreamSpec(plan.to_json(), tuple(Column(name, types[name]) for name in lowered.shipped),
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
        self.time = "e" if period else "ts"
        # arrival: event time plus a jitter below the delay (a NULL end: any time, and it is late),
        # in random micro-batches
        known = [r[self.time] for r in self.rows if r[self.time] is not None] or [0]
        arrival = sorted(self.rows, key=lambda r: (rng.choice(known) if r[self.time] is None else r[self.time])
                         + rng.randrange(DELAY))
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


def batch_output(streamed: Streamed, stepper: LayeredStepper) -> list:
    runner = HierarchyRunner(streamed.plan, stepper.output_schema)
    time = streamed.time  # (a row whose end is NULL is late on a stream: the rows without it)
    rows = sorted((r for r in streamed.rows if r[time] is not None), key=lambda r: (r["part"], r[time], r.get("id", 0)))
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
