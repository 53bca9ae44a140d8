"""MATCH_RECOGNIZE on Structured Streaming: the engine inside a ``transformWithStateInPandas``
stateful processor, one grouping key = one partition.

Per key, the state store holds one ``KeyState`` (a versioned record of Arrow IPC blobs):

* ``buffer``: rows not yet released: their event time is past the watermark, so rows that
  sort before them may still arrive;
* ``kept``: released rows from a little before the *resume point* on (``context`` rows of
  lookback for PREV and physical navigation);
* ``resume``: where matching resumes - standard semantics: the first start row not decided;
  FlinkCEP semantics: the last row at which no run was live nor a match pending - with the
  MATCH_NUMBER and the last matched row there, and the watermark of the previous step.

Each step (rows arrive, or the key's event-time timer fires) *replays*: a ``PartitionRunner``
resumes at the resume point, reads the kept rows with the previous watermark (what it reports
there was reported before: dropped), then the newly released rows with the current watermark
(new matches: emitted).  Matches of standard semantics are final once the engine reports
them; a WITHIN window the watermark has closed is decided without waiting for a row
(``Matcher.horizon``).  Everything before the new resume point, less the context, is dropped.
A watermark at or past ``END_OF_STREAM`` ends every partition, as the end of a batch query's
input does.
"""
from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyspark.sql.streaming import StatefulProcessor
from pyspark.sql.types import StructType

from .arrow import PartitionRunner, spark_arrow_schema
from .errors import MatchRecognizeError, reported
from .expr import Classifier, Nav
from .match import FlinkMatcher, RunsMatcher
from .plan import EnginePlan
from .transport import Transport, decode, encode, wire_type
from .wire import decode as wire_decode, encode as wire_encode, record

STATE_VERSION = 2  # 2: the meta field carries the query's fingerprint; 1 is read too
# 9999-01-01T00:00:00Z in microseconds: a watermark at or past it ends every partition
END_OF_STREAM = 253370764800_000_000


@record
class Column(NamedTuple):
    """A column of the processor's input or output: its Spark type (JSON of the DataType) and
    how it crosses the pandas boundary."""
    name: str
    type_json: str
    transport: Transport


@record
class OrderKey(NamedTuple):
    column: str
    descending: bool
    nulls_first: bool


@record
class StreamSpec(NamedTuple):
    """What the processor runs: the engine plan (JSON), its input and output columns, the
    ORDER BY (its first key is the event time, ascending), the lookback to keep and the
    fingerprint of the statement its state is written with: (name, digest) pairs, one per
    part of the statement the state depends on, named as the user knows it."""
    plan: str
    inputs: tuple  # of Column
    outputs: tuple  # of Column
    order: tuple  # of OrderKey
    context: int
    fingerprint: tuple = ()

    def to_json(self) -> str:
        return json.dumps(wire_encode(self))

    @staticmethod
    def from_json(text: str) -> StreamSpec:
        return wire_decode(json.loads(text))


class Resume(NamedTuple):
    """Where a replay starts: ``row`` (in the kept rows), the MATCH_NUMBER reached and the last
    row a match covered (standard semantics, for WITH UNMATCHED ROWS) there."""
    row: int
    number: int
    covered: int


def lookback(plan: EnginePlan) -> int:
    """How many rows before a match's first row the plan may read (PREV and physical offsets
    of navigations in DEFINE, UNTIL and MEASURES)."""
    most = 0
    stack = [plan.define, plan.until, plan.atoms]
    while stack:
        node = stack.pop()
        if isinstance(node, (Nav, Classifier)) and node.physical < 0:
            most = max(most, -node.physical)
        if isinstance(node, tuple):
            stack.extend(node)
    return most


def resume_point(matcher) -> Resume:
    """The replay point of ``matcher`` after it read every row it was given."""
    if isinstance(matcher, FlinkMatcher):
        row, number = matcher.quiet
        return Resume(row, number, -1)
    return Resume(matcher.start, matcher.match_number, matcher.covered)


def resume(matcher, point: Resume) -> None:
    """Set a freshly reset ``matcher`` to continue from ``point``."""
    matcher.match_number = point.number
    matcher.pos = point.row
    if isinstance(matcher, FlinkMatcher):
        matcher.quiet = (point.row, point.number)
    else:
        matcher.start = point.row
        matcher.covered = point.covered


class KeyState(NamedTuple):
    """One key's state (see the module docstring); ``horizon``: the previous step's watermark
    in microseconds; ``timer``: the event-time timer registered (ms) or -1."""
    kept: pa.Table
    buffer: pa.Table
    resume: Resume
    horizon: int | None
    timer: int


STATE_FIELDS = (("version", "integer"), ("meta", "string"), ("kept", "binary"), ("buffer", "binary"),
                ("timer", "long"))  # the ValueState's columns (names of Spark's JSON types)


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _table(blob: bytes) -> pa.Table:
    return pa.ipc.open_stream(blob).read_all()


def dump_state(state: KeyState, fingerprint: tuple) -> tuple:
    meta = json.dumps([*state.resume, state.horizon, [list(part) for part in fingerprint]])
    return STATE_VERSION, meta, _ipc(state.kept), _ipc(state.buffer), state.timer


def load_state(row, schema: pa.Schema, fingerprint: tuple) -> KeyState:
    """The state a state store row holds (of this version or the previous one), for the query
    of ``fingerprint`` reading columns ``schema``; a state the query cannot continue from
    exactly (written by a query whose matches differ) is refused, naming what changed."""
    if row is None:
        empty = schema.empty_table()
        return KeyState(empty, empty, Resume(0, 0, -1), None, -1)
    version, meta, kept, buffer, timer = row
    if version not in (1, STATE_VERSION):
        raise MatchRecognizeError(
            f"this checkpoint holds MATCH_RECOGNIZE streaming state of version {version}, written by "
            f"{'a newer' if version > STATE_VERSION else 'an older'} sparkcep; this one reads versions 1 to "
            f"{STATE_VERSION}: run the query with the sparkcep that wrote it, or start it with a new checkpoint location")
    row_, number, covered, horizon, *written = json.loads(meta)  # version 1 has no fingerprint
    kept, buffer = _table(kept), _table(buffer)
    changes = []
    if written:
        old, new = dict(map(tuple, written[0])), dict(fingerprint)
        changes += [name for name in dict.fromkeys([*new, *old]) if old.get(name) != new.get(name)]
    missing = [f.name for f in schema if kept.schema.get_field_index(f.name) < 0 or
               not kept.schema.field(f.name).type.equals(f.type)]
    if missing:
        changes.append("the columns the engine reads (now also " + ", ".join(missing) + ")")
    if changes:
        raise MatchRecognizeError(
            "the checkpoint of this streaming MATCH_RECOGNIZE was written by a query whose matches differ: "
            + "; ".join(changes) + " changed since.  Its state (partial matches, resume points, MATCH_NUMBERs) "
            "belongs to that query: start this one with a new checkpoint location, or run the query as it was")
    return KeyState(kept.select(schema.names), buffer.select(schema.names), Resume(row_, number, covered),
                    horizon, timer)


def arrow_schema(columns: tuple) -> pa.Schema:
    """The Arrow schema Spark gives ``columns`` (``Column``s) in Python."""
    return spark_arrow_schema(StructType.fromJson({"type": "struct", "fields": [
        {"name": c.name, "type": json.loads(c.type_json), "nullable": True, "metadata": {}} for c in columns]}))


class Stepper:
    """Runs the steps of the keys of one processor (one runner reused for every key)."""

    def __init__(self, spec: StreamSpec):
        self.spec = spec
        self.plan = EnginePlan.from_json(spec.plan)
        self.input_schema = arrow_schema(spec.inputs)
        self.output_schema = arrow_schema(spec.outputs)
        self.wire_output = pa.schema([pa.field(c.name, wire_type(c.transport, f.type))
                                      for c, f in zip(spec.outputs, self.output_schema)])
        self.runner = PartitionRunner(self.plan, self.output_schema, grouped=True)
        if isinstance(self.runner.matcher, RunsMatcher):  # it decides only at the partition end
            self.runner.matcher = self.runner.matcher.fallback
        self.event_time = spec.order[0].column
        self.keep = max(1, spec.context)  # row 0 of a replay must never look like the partition start

    # ---- input -----------------------------------------------------------------------
    def decode(self, frames) -> pa.Table | None:
        """The rows of pandas DataFrames ``frames`` as an Arrow table of the input schema."""
        batches = []
        for frame in frames:
            if len(frame):
                # the grouping columns come first, then the input's (the shipped ones last)
                first = frame.shape[1] - len(self.spec.inputs)
                arrays = [decode(frame.iloc[:, first + k], c.transport, f.type)
                          for k, (c, f) in enumerate(zip(self.spec.inputs, self.input_schema))]
                batches.append(pa.RecordBatch.from_arrays(arrays, schema=self.input_schema))
        return pa.Table.from_batches(batches, schema=self.input_schema) if batches else None

    def sort(self, table: pa.Table) -> pa.Table:
        """``table`` in ORDER BY order (stable: ties keep their arrival order)."""
        keys, columns = [], {}
        for k, key in enumerate(self.spec.order):
            column = table.column(key.column)
            nulls = f"__null{k}"
            columns[nulls] = pc.is_null(column)
            keys.append((nulls, "descending" if key.nulls_first else "ascending"))
            columns[f"__key{k}"] = column
            keys.append((f"__key{k}", "descending" if key.descending else "ascending"))
        indices = pc.sort_indices(pa.table(columns), sort_keys=keys)
        return table.take(indices)

    def event_micros(self, table: pa.Table) -> np.ndarray:
        """The event time of each row in microseconds (NULL as the smallest value)."""
        column = table.column(self.event_time).cast(pa.int64())
        return pc.fill_null(column, np.iinfo(np.int64).min).to_numpy()

    # ---- a step ---------------------------------------------------------------------
    def step(self, state: KeyState, new: pa.Table | None, watermark_ms: int) -> tuple:
        """(the key's next state or None when it holds nothing, output batches) after rows
        ``new`` arrived (or none: a timer fired) with the watermark at ``watermark_ms``."""
        horizon = watermark_ms * 1000
        buffer = state.buffer if new is None else pa.concat_tables([state.buffer, new])
        ended = horizon >= END_OF_STREAM
        if buffer.num_rows > 1:
            buffer = self.sort(buffer)
        times = self.event_micros(buffer)
        released = buffer.num_rows if ended else int(np.searchsorted(times, horizon, side="right"))
        fresh, buffer = buffer.slice(0, released), buffer.slice(released)
        if not released and not ended and (state.timer < 0 or state.timer > watermark_ms):
            # nothing to release and no deadline passed: the matcher would decide nothing new
            first = -(-int(times[0]) // 1000) if buffer.num_rows else -1
            timer = max(state.timer, first) if min(state.timer, first) < 0 else min(state.timer, first)
            return state._replace(buffer=buffer, timer=timer), []
        runner = self.runner
        runner.reset()
        resume(runner.matcher, state.resume)
        self._feed(state.kept, state.horizon)  # what it reports, an earlier step reported
        out = self._feed(fresh, None if ended else horizon)  # at the end, the partition ends
        if ended:
            out += runner.finish()
            return None, out
        if not fresh.num_rows:
            out += runner.advance()
        window = pa.concat_tables([state.kept, fresh])
        point = resume_point(runner.matcher)  # rows the runner released shift its indices
        deadline = self._deadline(point, horizon)
        row = point.row + runner.rows.dropped
        base = max(0, row - self.keep)
        kept = window.slice(base)
        after = [deadline] if deadline is not None else []
        if buffer.num_rows:
            after.append(int(times[released]))
        if row < window.num_rows:
            after.append(END_OF_STREAM)
        timer = -(-min(after) // 1000) if after else -1
        resumed = Resume(row - base, point.number, point.covered + runner.rows.dropped - base)
        return KeyState(kept, buffer, resumed, horizon, timer), out

    def _feed(self, table: pa.Table, horizon: int | None) -> list:
        """Feed ``table`` to the runner; the matcher knows the watermark ``horizon`` only once
        it has every row (before, it would close WITHIN windows the later rows still fall in)."""
        matcher = self.runner.matcher
        batches = table.to_batches()
        out = []
        for k, batch in enumerate(batches):
            matcher.horizon = horizon if k == len(batches) - 1 else None
            out += self.runner.feed(batch)
        matcher.horizon = horizon
        return out

    def _deadline(self, point: Resume, horizon: int) -> int | None:
        """When (microseconds) the watermark closes the WITHIN window that holds the matcher
        back, if one does."""
        within = self.plan.within
        matcher = self.runner.matcher
        order = self.runner.rows.order
        if within is None:
            return None
        if isinstance(matcher, FlinkMatcher) and self.plan.timeouts:  # each live run times out at its close
            closes = [order[t[0]] + within for t in matcher.threads if order[t[0]] is not None]
            close = min((c for c in closes if c > horizon), default=None)
        elif isinstance(matcher, FlinkMatcher):
            held = [t[0] for t in matcher.threads if matcher.machine.holds[t[1]] is not None]
            starts = [order[s] for s in held if order[s] is not None]
            close = max(starts) + within if starts else None
        else:
            first = order[point.row] if point.row < len(order) else None
            close = first + within if first is not None else None
        return int(np.ceil(close)) if close is not None and close > horizon else None

    # ---- output ---------------------------------------------------------------------
    def encode(self, batch: pa.RecordBatch):
        """An output batch as the pandas DataFrame Spark reads."""
        arrays = [encode(batch.column(k), c.transport) for k, c in enumerate(self.spec.outputs)]
        return pa.RecordBatch.from_arrays(arrays, schema=self.wire_output).to_pandas()



class MatchRecognizeProcessor(StatefulProcessor):
    """The stateful processor running a ``StreamSpec`` (JSON) with event-time timers."""

    def __init__(self, spec_json: str):
        self.spec_json = spec_json

    def init(self, handle):
        self.handle = handle
        self.stepper = Stepper(StreamSpec.from_json(self.spec_json))
        schema = StructType.fromJson({"type": "struct", "fields": [
            {"name": name, "type": kind, "nullable": True, "metadata": {}} for name, kind in STATE_FIELDS]})
        self.state = handle.getValueState("match_recognize", schema)

    def handleInputRows(self, key, rows, timerValues):
        return self._step(self.stepper.decode(rows), timerValues.getCurrentWatermarkInMs(), None)

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        return self._step(None, timerValues.getCurrentWatermarkInMs(), expiredTimerInfo.getExpiryTimeInMs())

    def _step(self, new, watermark_ms: int, fired: int | None):
        stepper = self.stepper
        try:
            previous = load_state(self.state.get(), stepper.input_schema, stepper.spec.fingerprint)
            state, out = stepper.step(previous, new, watermark_ms)
        except MatchRecognizeError as e:
            raise reported(e) from None
        timer = -1 if state is None else state.timer
        if timer != previous.timer:
            if previous.timer >= 0 and previous.timer != fired:
                self.handle.deleteTimer(previous.timer)
            if timer >= 0:
                self.handle.registerTimer(timer)
        if state is None:
            self.state.clear()
        else:
            self.state.update(dump_state(state, stepper.spec.fingerprint))
        return iter([stepper.encode(batch) for batch in out if batch.num_rows])

    def close(self):
        pass
