"""The streaming processor's core (``udtf.stream.ShardStepper``) without Spark: Structured
Streaming's micro-batch protocol is simulated (rows arrive in random chunks, out of order
within the watermark delay; the watermark of a batch is the largest event time of the batches
before it less the delay; a shard's event-time timer fires once the watermark reaches it; the
state goes through its stored encoding between steps; both keys share a shard or each has its
own), and the union of what the steps emit must equal one batch run of the same engine plan
over all rows.

Patterns, row conditions, skip modes, WITHIN windows and FlinkCEP constructs come from the
engine's random generators (tests/test_engine_properties.py); some cases add a DEFINE that
reads PREV (the lookback kept across steps) and measures navigating before the match.
"""
from __future__ import annotations

import datetime as dt
import json
import random
import re

import pyarrow as pa
import pytest

from engine_support import call, col, nav
from stream_driver import drive
from sql_ext.compiler.typecheck import typed
from test_engine_properties import (_flink_random_case, _standard_random_case, has_possessive)
from udtf import expr as ir
from udtf.arrow import PartitionRunner
from udtf.compile import compile_pattern
from udtf.errors import MatchRecognizeError
from udtf.pattern import parse_pattern, variables
from udtf.plan import (Atom, Condition, EnginePlan, Limits, Output, OutputKind, RowsMode, Semantics, Skip,
                       SkipMode, Value)
from udtf.state_versions import Reader
from udtf.stream import (META, Column, Fingerprint, OrderKey, ShardProcessor, ShardStepper, StreamSpec, arrow_schema,
                         lookback, reads_across_gaps)
from udtf.transport import dump_state, load_state, to_ipc
from udtf.wire import encode as wire_encode

SECOND = 1_000_000
T0 = 1_700_000_000 * SECOND
DELAY = 3 * SECOND
KEYS = ("a", "b")


class Case:
    """One generated query (an engine plan) and its rows (dicts), with a stream of them."""

    def __init__(self, seed: int, semantics: Semantics, anchored: bool = False):
        rng = random.Random(seed)
        self.seed = seed
        if semantics is Semantics.STANDARD:
            pattern, rows, skip, target, unmatched, _, (within, order) = _standard_random_case(seed, anchored)
            names = variables(parse_pattern(pattern))
            for extra in ("A", "B", "C"):
                if extra not in names:
                    names.append(extra)
            masks = {v: [v in r for r in rows] for v in ("A", "B", "C")}
            until = {}
            rows_mode = rng.choice([RowsMode.ONE, RowsMode.ALL_SHOW,
                                    RowsMode.ALL_WITH_UNMATCHED if unmatched else RowsMode.ALL_OMIT])
        else:
            (pattern, names, masks, until, n), skip, target_index, _, (within, order), _ = _flink_random_case(seed)
            names = list(variables(parse_pattern(pattern)))
            for extra in list(masks):
                if extra not in names:
                    names.append(extra)
            target = names[target_index % len(names)]
            rows_mode = rng.choice([RowsMode.ONE, RowsMode.ALL_SHOW])
        if within is not None and has_possessive(pattern):
            within = None
        self.pattern, self.within = pattern, within
        n = len(order)
        index = {v: i for i, v in enumerate(names)}
        mask_vars = [v for v in names if v in masks]
        prev_var = rng.choice(mask_vars) if mask_vars and rng.random() < .4 else None
        types = {"x": "bigint"}
        define = []
        for v in mask_vars:
            state = None
            if v == prev_var:  # x >= PREV(x): read the row before, maybe before the match
                state = typed(call(">=", col("x"), nav("x", None, physical=-1)), types, ansi=True)
            define.append(Condition(index[v], f"m_{v}", state))
        until_conditions = tuple(Condition(index[v], f"u_{v}", None) for v in until)
        skip_to = (index[target],) if skip in ("TO FIRST", "TO LAST") else ()
        program = compile_pattern(parse_pattern(pattern), names, untils=set(until), within=within is not None)
        atoms = (Atom(ir.MatchNumber(), True), Atom(ir.Classifier(None), False),
                 Atom(ir.Nav(None, None, None, ir.NavMode.FIRST), False),
                 Atom(ir.Nav(None, None, None, ir.NavMode.LAST), False),
                 Atom(ir.Nav(None, None, None, ir.NavMode.FIRST, 0, -2), True))
        carry = ["k"] if rows_mode is RowsMode.ONE else ["k", "seq"]
        outputs = [Output(OutputKind.CARRY, column=c) for c in carry] + [
            Output(OutputKind.VALUE, atom=0), Output(OutputKind.VALUE, atom=1),
            Output(OutputKind.TAKE, column="seq", atom=2), Output(OutputKind.TAKE, column="seq", atom=3),
            Output(OutputKind.TAKE, column="seq", atom=4)]
        self.plan = EnginePlan(
            program=program, semantics=semantics, skip=Skip(SkipMode(skip), skip_to, target), rows=rows_mode,
            define=tuple(define), until=until_conditions, partition=("k",),
            masks=tuple(f"m_{v}" for v in mask_vars) + tuple(f"u_{v}" for v in until), derived=(),
            values=(Value("x", "bigint"),), order_key="t" if within is not None else None,
            within=within * SECOND if within is not None else None, lookahead=0, atoms=atoms,
            output=tuple(outputs), limits=Limits(), ansi=True)
        spark_types = {"k": "string", "seq": "bigint", "x": "bigint", "ts": "timestamp", "t": "bigint",
                       **{f"m_{v}": "boolean" for v in mask_vars}, **{f"u_{v}": "boolean" for v in until}}
        json_types = {"string": '"string"', "bigint": '"long"', "boolean": '"boolean"', "timestamp": '"timestamp"'}
        self.inputs = tuple(Column(name, json_types[kind]) for name, kind in spark_types.items())
        out_types = [("k", "string")] + ([("seq", "bigint")] if "seq" in carry else []) + [
            ("__a0", "bigint"), ("__a1", "string"), ("__a2", "bigint"), ("__a3", "bigint"), ("__a4", "bigint")]
        self.outputs = tuple(Column(name, json_types[kind]) for name, kind in out_types)
        self.shards = {"a": 0, "b": rng.randrange(2)}  # the keys share a shard, or not
        # rows: key "a" has the generated rows, key "b" random ones of the same shape
        self.rows = []
        seq = 0
        for key in KEYS:
            for r in range(n):
                seq += 1
                row = {"k": key, "seq": seq, "x": rng.randint(0, 3), "ts": T0 + order[r] * SECOND}
                row["t"] = row["ts"]
                for v in mask_vars:
                    row[f"m_{v}"] = masks[v][r] if key == "a" else rng.random() < .5
                for v in until:
                    row[f"u_{v}"] = until[v][r] if key == "a" else rng.random() < .25
                self.rows.append(row)
        # arrival: event time plus a jitter below the delay, cut into random micro-batches
        arrival = sorted(self.rows, key=lambda row: row["ts"] + rng.randrange(DELAY))
        self.batches = []
        while arrival:
            size = rng.randint(0, 4)
            self.batches.append(arrival[:size])
            arrival = arrival[size:]

    def spec(self) -> StreamSpec:
        order = (OrderKey("ts", False, True), OrderKey("seq", False, True))
        context = lookback(self.plan)
        return StreamSpec(self.plan.to_json(), self.inputs, self.outputs, order, context,
                          Fingerprint((("PATTERN", self.pattern),), context, reads_across_gaps(self.plan, context)))

    def stepper(self) -> ShardStepper:
        spec = self.spec()
        return ShardStepper(spec, arrow_schema(spec.inputs), arrow_schema(spec.outputs))

    def describe(self) -> str:
        return (f"seed={self.seed} pattern={self.pattern!r} semantics={self.plan.semantics.value} "
                f"skip={self.plan.skip.mode.value} rows={self.plan.rows.value} within={self.within}")


def _table(schema: pa.Schema, rows: list) -> pa.Table:
    columns = {f.name: [r[f.name] for r in rows] for f in schema}
    return pa.table({name: pa.array(values, type=schema.field(name).type if name != "ts" else pa.int64())
                     .cast(schema.field(name).type) for name, values in columns.items()})


def batch_output(case: Case, stepper: ShardStepper) -> list:
    runner = PartitionRunner(case.plan, stepper.output_schema)
    rows = sorted(case.rows, key=lambda r: (r["k"], r["ts"], r["seq"]))
    out = []
    for batch in _table(stepper.input_schema, rows).to_batches(max_chunksize=3) if rows else []:
        out += runner.feed(batch)
    out += runner.finish()
    return sorted(tuple(r.values()) for b in out for r in b.to_pylist())


def stream_output(case: Case, stepper: ShardStepper) -> list:
    stored: dict = {}  # shard -> its state store row
    out: list = []

    def step(shard, rows, watermark_ms):
        state = stepper.restore(load_state(stored.get(shard)))
        new = _table(stepper.input_schema, rows) if rows else None
        done = stepper.step(state, new, watermark_ms)
        assert done.late is None, "a row within the watermark delay was taken for late"
        stored[shard] = None if done.shard is None else dump_state(stepper.stored(done.shard))
        if done.output is not None:
            out.extend(tuple(r.values()) for r in done.output.to_pylist())
        return done.timer

    # the data batches, a batch without data (the watermark moves on), the end of the stream
    drive(case.batches, lambda r: case.shards[r["k"]], lambda r: r["ts"], DELAY, step)
    assert all(s is None for s in stored.values()), "state left after the end of the stream"
    return sorted(out)


def _check_stream_equals_batch(cases):
    for case in cases:
        stepper = case.stepper()
        try:
            expected = batch_output(case, stepper)
        except MatchRecognizeError as e:  # a runtime error (AFTER MATCH SKIP): the stream fails too
            with pytest.raises(MatchRecognizeError, match=re.escape(e.message)):
                stream_output(case, stepper)
            continue
        try:
            got = stream_output(case, stepper)
        except Exception as e:
            raise AssertionError(case.describe()) from e
        assert got == expected, case.describe()


@pytest.mark.parametrize("semantics", [Semantics.STANDARD, Semantics.FLINKCEP])
@pytest.mark.parametrize("block", range(4))
def test_stream_equals_batch(semantics, block):
    """400 generated cases per semantics (4 blocks of 100 seeds)."""
    _check_stream_equals_batch(Case(seed, semantics) for seed in range(block * 100, block * 100 + 100))


def test_anchored_stream_equals_batch():
    """Patterns beginning with ``^``: only the partition's first row ever, not a micro-batch's
    first, may start a match (``StandardMatcher.anchored``)."""
    _check_stream_equals_batch(Case(seed, Semantics.STANDARD, anchored=True) for seed in range(150))


class _Value:
    """A ValueState of Spark's state store, in memory."""
    row = None

    def get(self):
        return self.row

    def update(self, row):
        self.row = row

    def clear(self):
        self.row = None


class _Timers:
    def registerTimer(self, ms):
        pass

    def deleteTimer(self, ms):
        pass


def test_a_version_3_state_is_upgraded_or_refused():
    """udtf.state_versions: a version-3 row restores as the same state; one holding a row
    without event time (version 3 matched it at once) is refused, naming it and what to do; on
    a version-3 checkpoint a shard without state takes the checkpoint's watermark, so a row at
    or behind it is late (without that floor it would be matched)."""
    case = Case(1, Semantics.FLINKCEP)
    stepper = case.stepper()
    done = stepper.step(None, _table(stepper.input_schema, case.rows[:6]), 0)
    row = dump_state(stepper.stored(done.shard))
    reader = Reader(stepper.event_time, META)
    assert stepper.restore(reader.read((3,) + row[1:])) == done.shard
    held = done.shard.held
    data = held.column(META).is_null().to_pylist().index(True)
    times = held.column("ts").to_pylist()
    times[data] = None
    untimed = held.set_column(held.schema.get_field_index("ts"), "ts", pa.array(times, held.schema.field("ts").type))
    untimed_row = row[:3] + (to_ipc(untimed),) + row[4:]
    with pytest.raises(MatchRecognizeError, match=r"version 3 with a row without event time \(ts NULL\).*"
                                                  "new checkpoint location"):
        reader.read((3,) + untimed_row[1:])
    assert reader.read(untimed_row).held.num_rows == held.num_rows  # (version 4 never holds one: not checked)

    rows = _table(stepper.input_schema, case.rows[:6])
    floor_ms = max(r["ts"] for r in case.rows[:6]) // 1000

    def held_after(floor):
        state = _Value()
        ShardProcessor(stepper.spec.to_json(), None, floor).step(state, _Timers(), [to_ipc(rows)], floor_ms)
        return state.row[2], load_state(state.row).held.num_rows

    assert held_after(floor_ms) == (floor_ms * 1000, 0)  # every row late
    horizon, kept = held_after(None)
    assert horizon == floor_ms * 1000 and kept > 0


def test_state_is_versioned_and_fingerprinted():
    """A shard's state restores under the query that wrote it; a state of an older version (one
    per key) or a newer one, another fingerprint, columns the state lacks or a longer lookback
    are refused, naming what changed and what to do."""
    case = Case(1, Semantics.STANDARD)
    stepper = case.stepper()
    done = stepper.step(None, _table(stepper.input_schema, case.rows[:6]), 0)
    assert done.shard is not None and done.shard.held.num_rows
    row = dump_state(stepper.stored(done.shard))
    assert stepper.restore(load_state(row)) == done.shard
    reader = Reader(stepper.event_time, META)
    assert stepper.restore(reader.read(row)) == done.shard
    with pytest.raises(MatchRecognizeError, match="version 99, written by a newer sparkcep.*new checkpoint location"):
        reader.read((99,) + row[1:])
    with pytest.raises(MatchRecognizeError, match=r"version 2, written by an older sparkcep.*one per key.*"
                                                  "new checkpoint location"):
        reader.read((2,) + row[1:])
    spec = stepper.spec

    def under(**changes):
        changed = spec._replace(fingerprint=spec.fingerprint._replace(**changes))
        return ShardStepper(changed, stepper.input_schema, stepper.output_schema)

    with pytest.raises(MatchRecognizeError, match=r"matches differ: DEFINE changed since.*new checkpoint location"):
        under(parts=spec.fingerprint.parts + (("DEFINE", "2"),)).restore(load_state(row))
    with pytest.raises(MatchRecognizeError, match=r"how far PREV reads back \(5 rows; the state holds"):
        under(context=5).restore(load_state(row))
    wider = stepper.input_schema.append(pa.field("y", pa.int64()))
    with pytest.raises(MatchRecognizeError, match=r"the columns the engine reads \(now also y\) changed"):
        ShardStepper(spec, wider, stepper.output_schema).restore(load_state(row))


def test_a_stored_part_the_statement_does_not_read_is_no_change():
    """A fingerprint names the parts its statement does not read (``unread``): a stored part so
    named restores (checkpoints written since a10c5df recorded spark.sql.legacy.sizeOfNull
    whether or not the statement called size); any other stored part the query lacks, or that
    one where the statement reads it, is a change.  A fingerprint stored before ``unread``
    existed (three fields) restores."""
    case = Case(1, Semantics.STANDARD)
    stepper = case.stepper()
    done = stepper.step(None, _table(stepper.input_schema, case.rows[:6]), 0)
    spec, setting = stepper.spec, "spark.sql.legacy.sizeOfNull"

    def written(*parts):
        old = spec.fingerprint._replace(parts=spec.fingerprint.parts + parts)
        three = {"Fingerprint": wire_encode(old)["Fingerprint"][:3]}  # (parts, context, tail)
        return load_state(dump_state(stepper.stored(done.shard)))._replace(fingerprint=json.dumps(three))

    def under(unread):
        changed = spec._replace(fingerprint=spec.fingerprint._replace(unread=unread))
        return ShardStepper(changed, stepper.input_schema, stepper.output_schema)

    assert under(()).restore(written()) == done.shard
    assert under((setting,)).restore(written((setting, "0123"))) == done.shard
    with pytest.raises(MatchRecognizeError, match=r"matches differ: spark\.sql\.legacy\.sizeOfNull changed since"):
        under(()).restore(written((setting, "0123")))
    with pytest.raises(MatchRecognizeError, match=r"matches differ: DEFINE changed since"):
        under((setting,)).restore(written(("DEFINE", "2")))
