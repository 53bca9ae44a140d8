"""MATCH_RECOGNIZE on Structured Streaming, the engine side: the partition keys of one *shard*
stepped together, once per micro-batch (or event-time timer), in Arrow.

Spark hashes each PARTITION BY key to one of a fixed number of shards (sql_ext.streaming) and
hands ``ShardStepper.step`` a shard's new rows, its state and the watermark.  The state is one
Arrow table, ``Shard.held``, sorted by key; each key with state has there:

* one *meta row* (``POS`` 0; its ``META`` struct: ``Meta``): rows of the partition released
  and forgotten before its first held row, the resume point, the watermark of its last step and
  when it needs a step without new rows (``wake``);
* the released rows kept for replay (``POS`` 1, 2, ... in the order the matcher read them),
  from ``context`` rows (PREV's lookback) before the resume point on.  The resume point is, in
  standard semantics, the first start row not decided; in FlinkCEP semantics the last row at
  which no run was live nor a match pending;
* the rows not released yet (``POS`` = ``PENDING``): their event time is past the watermark,
  so rows that sort before them may still arrive.

A step merges the new rows in and steps every key that has rows the watermark releases
(event time at or before it), a WITHIN deadline it passed, or whose stream ended: the matcher
resumes at the resume point, reads the kept rows with the key's previous watermark (what it
reports there was reported before: dropped), then the released rows with the new one (new
matches: emitted; a WITHIN window the watermark closed is decided without waiting for a row,
``Matcher.horizon``).  A watermark at or past
``END_OF_STREAM`` ends every partition, as the end of a batch query's input does.  A key keeps
state only while it holds rows a run, a pending row or the lookback can still read - or, when
the plan reads MATCH_NUMBER or ``^`` across idle gaps, its meta row (``Tail``).

A row whose event time is at or before the watermark of the shard's previous step is *late*:
the matcher has read rows of its key past it, so it is set aside (``Step.late``).  So is a row
without event time (NULL): no watermark places it (a batch ORDER BY puts it before or after
every row of its partition).  A shard whose keys all went keeps that watermark (and no rows)
until the stream ends (its timer): a key's state goes once the watermark passed its rows, and
a row of the key behind them is still late.

In processing time (FlinkCEP's ``inProcessingTime``) the first ORDER BY key is the rows'
arrival time and the micro-batch's processing time is handed in where the watermark is: the
step is the same.
"""
from __future__ import annotations

import bisect
import json
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrow import PartitionRunner, derive_mask, order_numbers, output_batch, spark_arrow_schema
from .emit import Emitter, Emitted
from .errors import LimitExceeded, MatchRecognizeError
from .expr import Agg, Classifier, MatchNumber, Nav, children, lookback as expr_lookback
from .match import FlinkMatcher, shifted
from .match.base import collector_paused
from .match.dfa import DfaTier
from .match.runs import RunsTier
from .match.standard import StandardMatcher
from .plan import EnginePlan, OutputKind, Semantics
from .program import Kind
from .rows import Match
from .sparksql.types import from_arrow
from .state_versions import Reader
from .transport import StoredState, conform, dump_state, from_ipc, to_ipc
from .wire import decode as wire_decode, encode as wire_encode, record

# 9999-01-01T00:00:00Z in microseconds: a watermark at or past it ends every partition
END_OF_STREAM = 253370764800_000_000
POS = "__sparkcep_pos"  # the column saying what a held row is (see the module docstring)
META = "__sparkcep_meta"
PENDING = 1 << 62
NONE = np.iinfo(np.int64).min  # no watermark / no wake-up / a NULL event time
META_FIELDS = ("dropped", "row", "number", "covered", "horizon", "deadline")
META_TYPE = pa.struct([(name, pa.int64()) for name in META_FIELDS])


@record
class Column(NamedTuple):
    """A column of the processor's input or output: its name and Spark type (JSON of the
    DataType)."""
    name: str
    type_json: str


@record
class OrderKey(NamedTuple):
    column: str
    descending: bool
    nulls_first: bool


@record
class Fingerprint(NamedTuple):
    """What a checkpoint's state depends on: digests of the parts of the statement that decide
    the matches (``parts``: (name, digest) pairs, named as the user knows them), the rows of
    lookback held (``context``), whether idle keys keep their meta row (``tail``) and the names
    of parts the statement does not depend on (``unread``: a stored part so named is no change -
    checkpoints of a sparkcep that recorded a setting whether or not the statement read it)."""
    parts: tuple
    context: int
    tail: bool
    unread: tuple = ()


@record
class StreamSpec(NamedTuple):
    """What the processor runs: the engine plan (JSON), its input and output columns, the
    ORDER BY (its first key is the event time, ascending), the lookback to keep and the
    fingerprint its state is written with."""
    plan: str
    inputs: tuple  # of Column
    outputs: tuple  # of Column
    order: tuple  # of OrderKey
    context: int
    fingerprint: Fingerprint

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


class Shard(NamedTuple):
    """A shard's state: its held rows (see the module docstring) and the watermark of its last
    step (microseconds; rows at or before it are late)."""
    held: pa.Table
    horizon: int


class Keys(NamedTuple):
    """A held table's keys at a step: per row (``pos``, ``times``, ``pending``, ``released``)
    and per key, in the table's order (the rest)."""
    starts: np.ndarray  # the key's first row
    ends: np.ndarray  # one past its last
    pos: np.ndarray  # POS
    times: np.ndarray  # event time, microseconds (NONE: NULL)
    has_meta: np.ndarray  # its first row is its meta row
    pending: np.ndarray  # not released before this step
    released: np.ndarray  # released by this step
    kept: np.ndarray  # its kept rows
    fresh: np.ndarray  # its rows released by this step
    meta: dict  # {META field: per key value}, ``_meta``


class Step(NamedTuple):
    """What a step leaves: the shard's next state (None: it holds nothing), the clause's output
    rows, the late rows set aside (input columns) and the event-time timer to register (ms;
    None: none)."""
    shard: Shard | None
    output: pa.RecordBatch | None
    late: pa.Table | None
    timer: int | None


def lookback(plan: EnginePlan) -> int:
    """How many rows before a match's first row the plan may read (PREV and physical offsets
    of navigations in DEFINE, UNTIL and MEASURES, lags of derived masks)."""
    lags = (lag for mask in plan.derived for comparison in mask.comparisons for _, lag in (comparison.left, comparison.right))
    return max((*lags, *(expr_lookback(e) for e in _exprs(plan))), default=0)


def reads_across_gaps(plan: EnginePlan, context: int) -> bool:
    """Does a partition's next row depend on rows long decided: MATCH_NUMBER (it counts on),
    ``^`` (only the partition's first row starts there) or PREV before a match's first row?"""
    return context > 0 or any(s.kind is Kind.BOL for s in plan.program.states) or \
        any(isinstance(node, MatchNumber) for e in _exprs(plan) for node in _walk(e))


def _exprs(plan: EnginePlan) -> list:
    return [c.expr for c in (*plan.define, *plan.until)] + [a.expr for a in plan.atoms]


def _walk(expr):
    """``expr`` and every expression inside it (an aggregate's arguments and filter too)."""
    if expr is None:
        return
    yield expr
    for inner in ((*expr.args, expr.filter) if isinstance(expr, Agg) else children(expr)):
        yield from _walk(inner)


def _reads_beside(expr) -> bool:
    """Does a measure read rows outside its match (a navigation's physical offset)?"""
    return any(isinstance(node, (Nav, Classifier)) and node.physical for node in _walk(expr))


def resume_point(matcher) -> Resume:
    """The replay point of ``matcher`` after it read every row it was given."""
    if isinstance(matcher, FlinkMatcher):
        row, number = matcher.quiet
        return Resume(row, number, -1)
    return Resume(matcher.start, matcher.match_number, matcher.covered)


def window_close(matcher, row: int, horizon: int, every_run: bool) -> int | None:
    """When (microseconds, past ``horizon``) the watermark closes a window (``Matcher.window``)
    that holds ``matcher`` back, None if none does: a standard matcher's, of its start ``row``;
    FlinkCEP's, the last of its runs waiting on the next row, or with ``every_run`` (each live
    run's close decides something: a timeout, a frontier) the first of its live runs."""
    within, opens = matcher.window()
    if within is None:
        return None
    if isinstance(matcher, FlinkMatcher) and every_run:
        closes = [opens[t[0]] + within for t in matcher.threads if opens[t[0]] is not None]
        close = min((c for c in closes if c > horizon), default=None)
    elif isinstance(matcher, FlinkMatcher):
        held = [t[0] for t in matcher.threads if matcher.machine.holds[t[1]] is not None]
        starts = [opens[s] for s in held if opens[s] is not None]
        close = max(starts) + within if starts else None
    else:
        first = opens[row] if row < len(opens) else None
        close = first + within if first is not None else None
    return int(np.ceil(close)) if close is not None and close > horizon else None


def resume(matcher, point: Resume) -> None:
    """Set a freshly reset ``matcher`` to continue from ``point``."""
    matcher.match_number = point.number
    matcher.pos = point.row
    if isinstance(matcher, FlinkMatcher):
        matcher.quiet = (point.row, point.number)
    else:
        matcher.start = point.row
        matcher.covered = point.covered


def arrow_schema(columns: tuple) -> pa.Schema:
    """The Arrow schema Spark gives ``columns`` (``Column``s) in Python."""
    from pyspark.sql.types import StructType

    return spark_arrow_schema(StructType.fromJson({"type": "struct", "fields": [
        {"name": c.name, "type": json.loads(c.type_json), "nullable": True, "metadata": {}} for c in columns]}))


class ShardStepper:
    """Steps the shards of one ``StreamSpec`` (one matcher, reset for every key)."""

    held_extra: tuple = ()  # a subclass's held columns after META

    def __init__(self, spec: StreamSpec, input_schema: pa.Schema, output_schema: pa.Schema):
        self.spec = spec
        self.plan = plan = EnginePlan.from_json(spec.plan)
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.held_schema = pa.schema([*input_schema, pa.field(POS, pa.int64()), pa.field(META, META_TYPE),
                                      *self.held_extra])
        self.keys = plan.partition
        self.event_time = spec.order[0].column
        self.context = spec.context
        self.late = any(o.kind is OutputKind.LATE for o in plan.output)  # late rows are output
        self.sort_keys = self._sort_keys()
        self._engine(plan)

    def _engine(self, plan: EnginePlan) -> None:
        """The matcher and emitter a step runs per key."""
        self.tail = reads_across_gaps(plan, self.context)
        # standard semantics decide a start once: the kept rows, read again with the watermark
        # they were read with, decide nothing (the resume point is the first start they left
        # undecided); FlinkCEP's resume point lies before matches already reported
        self.replay = plan.semantics is Semantics.FLINKCEP
        self.runner = runner = PartitionRunner(plan, self.output_schema)
        self.matcher = matcher = runner.matcher
        tiers = matcher.tiers if isinstance(matcher, StandardMatcher) else ()
        if tiers:  # the runs tier decides only at the partition end
            matcher.tiers = tuple(t for t in tiers if not isinstance(t, RunsTier))
        # the lazy DFA, whose symbols and candidate starts ``_cache`` computes
        self.dfa = next((t.dfa for t in tiers if isinstance(t, DfaTier)), None)
        self.rows = runner.rows
        self.value_types = runner.value_types
        # measures reading only their match's rows are emitted for all keys of a step at once
        self.values: dict = {name: [] for name, _ in self.value_types}
        self.emitter = None if any(_reads_beside(a.expr) for a in plan.atoms) else Emitter(
            plan.atoms, plan.rows, plan.program.vars, self.values, lambda: self.size, plan.ansi, plan.zone)
        self.size = 0
        self.indexes = [isinstance(a.expr, Nav) for a in plan.atoms]  # atoms emitted as row indexes

    def empty(self) -> pa.Table:
        return self.held_schema.empty_table()

    # ---- the stored state --------------------------------------------------------------
    def restore(self, stored: StoredState | None) -> Shard | None:
        """The shard a stored state holds; a state the query cannot continue from exactly (its
        checkpoint was written by a query whose matches differ) is refused, naming the change."""
        if stored is None:
            return None
        old = wire_decode(json.loads(stored.fingerprint))
        new = self.spec.fingerprint
        changes = [name for name, digest in new.parts if dict(old.parts).get(name) != digest]
        changes += [name for name, _ in old.parts if name not in dict(new.parts) and name not in new.unread]
        held = stored.held.schema
        missing = [f.name for f in self.input_schema if held.get_field_index(f.name) < 0 or
                   not held.field(f.name).type.equals(f.type)]
        if missing:
            changes.append("the columns the engine reads (now also " + ", ".join(missing) + ")")
        if new.context > old.context:
            changes.append(f"how far PREV reads back ({new.context} rows; the state holds {old.context})")
        if new.tail and not old.tail:
            changes.append("MATCH_NUMBER, ^ or PREV across idle keys (the state dropped idle keys)")
        if changes:
            raise MatchRecognizeError(
                "the checkpoint of this streaming MATCH_RECOGNIZE was written by a query whose matches differ: "
                + "; ".join(dict.fromkeys(changes)) + " changed since. Its state (partial matches, resume points, "
                "MATCH_NUMBERs) belongs to that query: start this one with a new checkpoint location, or run the "
                "query as it was")
        return Shard(conform(stored.held.select(self.held_schema.names), self.held_schema), stored.horizon)

    def stored(self, shard: Shard, timer: int = -1) -> StoredState:
        return StoredState(json.dumps(wire_encode(self.spec.fingerprint)), shard.horizon, shard.held, timer)

    # ---- a step ------------------------------------------------------------------------
    def step(self, shard: Shard | None, new: pa.Table | None, watermark_ms: int) -> Step:
        """A step of ``shard`` after rows ``new`` arrived (or none: its timer fired) with the
        watermark at ``watermark_ms``."""
        horizon = watermark_ms * 1000
        ended = horizon >= END_OF_STREAM
        table = self.empty() if shard is None else shard.held
        late = None
        if new is not None and new.num_rows:
            # late: at or behind the shard's last watermark, or without event time (NONE)
            behind = self._micros(new) <= (NONE if shard is None else shard.horizon)
            if behind.any():
                late, new = new.filter(behind), new.filter(~behind)
            if new.num_rows:
                new = self._pending(new)
                table = pa.concat_tables([table, new])
                table = table.take(pc.sort_indices(self._sort_table(table), sort_keys=self.sort_keys))
        with collector_paused():  # (the matches a step holds are acyclic tuples, as a matcher's)
            done = self._step(table, horizon, ended) if table.num_rows else Step(None, None, None, None)
        if done.shard is None and not ended:  # (its keys' rows at or before the watermark are late)
            done = done._replace(shard=Shard(self.empty(), horizon), timer=-(-END_OF_STREAM // 1000))
        if late is None:
            return done
        if self.late:
            rows = self._late_rows(late)
            output = rows if done.output is None else pa.concat_batches([done.output, rows])
            return done._replace(output=output, late=late)
        return done._replace(late=late)

    def _pending(self, new: pa.Table) -> pa.Table:
        """New rows ``new`` as held rows not released yet."""
        return new.append_column(POS, pa.array(np.full(new.num_rows, PENDING), pa.int64())) \
            .append_column(META, pa.nulls(new.num_rows, META_TYPE))

    def _late_rows(self, late: pa.Table) -> pa.RecordBatch:
        """Output rows for late input rows: the input row in the LATE column (and in the
        columns an output row carries), every other column NULL."""
        columns = []
        for field, output in zip(self.output_schema, self.plan.output):
            if output.kind is OutputKind.CARRY:
                column = late.column(output.column)
            elif output.kind is OutputKind.LATE:
                inputs = conform(late.select([f.name for f in field.type]), pa.schema(list(field.type)))
                column = pa.StructArray.from_arrays([c.combine_chunks() for c in inputs.columns],
                                                    fields=list(field.type))
            else:
                column = pa.nulls(late.num_rows, field.type)
            columns.append(column)
        return conform(pa.table(columns, names=self.output_schema.names), self.output_schema).combine_chunks().to_batches()[0]

    def _keys(self, table: pa.Table, horizon: int, ended: bool) -> Keys:
        """The keys of the held table ``table`` at a step with the watermark at ``horizon``."""
        starts = self._segments(table)
        pos = table.column(POS).to_numpy()
        times = self._micros(table)
        has_meta = pos[starts] == 0
        pending = pos == PENDING
        released = pending & ((times <= horizon) | ended)
        return Keys(starts, np.append(starts[1:], table.num_rows), pos, times, has_meta, pending, released,
                    np.add.reduceat((pos > 0) & ~pending, starts), np.add.reduceat(released, starts),
                    self._meta(table, starts, has_meta))

    def _step(self, table: pa.Table, horizon: int, ended: bool) -> Step:
        starts, ends, pos, times, has_meta, pending, released, kept, fresh, meta = self._keys(table, horizon, ended)
        due = (meta["deadline"] != NONE) & (meta["deadline"] <= horizon)
        stepped = (fresh > 0) | due | ended
        first_kept = starts + has_meta
        work_rows = np.where(stepped, kept + fresh, 0)
        index = _ranges(first_kept, work_rows)
        work = table.select(self.input_schema.names).take(pa.array(index, pa.int64()))
        work_starts = np.cumsum(work_rows) - work_rows
        columns = self._decode(work, work_starts[stepped], work_rows[stepped])
        self._cache(columns, work.num_rows, work_starts[stepped] + work_rows[stepped] - 1)
        self.size = work.num_rows
        for name, values in columns.values.items():
            self.values[name][:] = values

        found_keys, chunks = [], []  # (matches, the offset of its rows in ``work``) per stepped key
        pieces, positions, metas = [], [], []
        deadlines = []
        for s in range(len(starts)):
            lo, hi = int(starts[s]), int(ends[s])
            if not stepped[s]:
                pieces.append(np.arange(lo, hi))
                positions.append(pos[lo:hi])
                deadlines.append(meta["deadline"][s])
                continue
            off, k, f = int(work_starts[s]), int(kept[s]), int(fresh[s])
            point = Resume(int(meta["row"][s]), int(meta["number"][s]), int(meta["covered"][s]))
            found = self._run(table, lo, columns, off, k, f, int(meta["dropped"][s]), point, int(meta["horizon"][s]),
                              horizon, ended)
            if self.emitter is None:
                chunks.append(_shifted(self.runner.emitter.emit(found), off, self.indexes))
            elif found:
                found_keys.append((found, off))
            if ended:
                continue
            point = resume_point(self.matcher)
            base = max(0, point.row - self.context)
            waiting = hi - (lo + int(has_meta[s]) + k + f)  # rows not released
            keep = k + f - base
            if not keep and not waiting and not self.tail:
                continue  # the key can no longer contribute: its state goes
            deadline = self._deadline(point, horizon)
            metas.append((lo, (int(meta["dropped"][s]) + base, point.row - base, point.number, point.covered - base,
                               horizon, NONE if deadline is None else deadline)))
            keep_key(pieces, positions, len(metas), index[off + base:off + k + f], hi, waiting)
            deadlines.append(NONE if deadline is None else deadline)

        if found_keys:
            chunks = [self._emit(found_keys)]
        output = output_batch(self.output_schema, self.plan, self.runner.atom_types,
                              _merged(chunks), work) if chunks else None
        held = self._held(table, pieces, positions, metas)
        if held is None:
            return Step(None, output, None, None)
        return Step(Shard(held, horizon), output, None, timer_ms(times[pending & ~released], deadlines))

    def _emit(self, found_keys: list) -> Emitted:
        """The output of every stepped key's matches, (matches, offset of its rows) each: ``Match``
        tuples are moved to their rows in the step's work at once, in the emitter."""
        if all(set(map(type, found)) <= {Match} for found, _ in found_keys):
            counts = np.fromiter((len(found) for found, _ in found_keys), np.int64, len(found_keys))
            offsets = np.fromiter((off for _, off in found_keys), np.int64, len(found_keys))
            return self.emitter.emit([m for found, _ in found_keys for m in found], np.repeat(offsets, counts))
        return self.emitter.emit([shifted(m, off) for found, off in found_keys for m in found])

    def _run(self, table, lo, columns, off, kept, fresh, dropped, point, previous, horizon, ended) -> list:
        """Replay key's kept rows, then read its released ones; the new matches."""
        rows, matcher = self.rows, self.matcher
        rows.clear()
        matcher.reset()
        rows.dropped = dropped
        resume(matcher, point)
        try:
            if kept and self.replay:
                rows.append(kept, **columns.slice(off, off + kept))
                matcher.horizon = None if previous == NONE else previous
                matcher.replaying = True  # what it reports, an earlier step reported
                try:
                    matcher.feed()
                finally:
                    matcher.replaying = False
                rows.append(fresh, **columns.slice(off + kept, off + kept + fresh))
            else:
                rows.append(kept + fresh, **columns.slice(off, off + kept + fresh))
                self._preload(off, off + kept + fresh)
            if ended:
                return matcher.finish()
            matcher.horizon = horizon
            return matcher.feed()
        except LimitExceeded as e:
            key = ", ".join(f"{name} = {table.column(name)[lo].as_py()!r}" for name in self.keys)
            where = f"partition ({key})" if key else "the partition"
            raise MatchRecognizeError(f"{e.message}, in {where} at its row {e.row + rows.dropped + 1}") from None

    def _cache(self, columns: Columns, count: int, last: np.ndarray):
        """What the matcher derives from every row's masks, computed for all stepped keys at
        once: the lazy DFA's symbols and candidate starts, or the Pike VM's row classes (a
        key's last row, ``last``, has no next row yet)."""
        matcher = self.matcher
        self.symbols = self.starts = self.classes = None
        if self.replay or not count:
            return
        if self.dfa is not None:
            symbols = self.dfa.symbols_of(columns.masks, count)
            ends = np.zeros(count, dtype=bool)
            ends[last] = True
            self.symbols = symbols.tolist()
            self.starts = np.flatnonzero(self.dfa.candidates(symbols, ends)).tolist()
        elif isinstance(matcher, StandardMatcher):
            self.classes = matcher.machine.classes_of(columns.masks, count).tolist()

    def _preload(self, lo: int, hi: int):
        """Hand the matcher what ``_cache`` computed for its rows ``lo`` to ``hi`` - 1."""
        if self.symbols is not None:
            dfa = self.dfa
            dfa.symbols.extend(self.symbols[lo:hi])
            dfa.starts.extend(start - lo for start in
                              self.starts[bisect.bisect_left(self.starts, lo):bisect.bisect_left(self.starts, hi)])
        elif self.classes is not None:
            self.matcher.classes.extend(self.classes[lo:hi])

    def _deadline(self, point: Resume, horizon: int) -> int | None:
        """When (microseconds) the watermark closes the WITHIN window that holds the matcher
        back, if one does."""
        return window_close(self.matcher, point.row, horizon, every_run=self.plan.timeouts)

    # ---- the held table ----------------------------------------------------------------
    def _held(self, table, pieces, positions, metas, extra: list = ()) -> pa.Table | None:
        """The next held table: ``pieces`` index ``table`` (a negative index -k: the k-th new
        meta row of ``metas``, (row of its key in ``table``, META fields); ``extra``: the meta
        rows' values of the held columns after META, if any)."""
        if not pieces:
            return None
        index = np.concatenate(pieces)
        if not len(index):
            return None
        source = table
        if metas:
            firsts = pa.array([lo for lo, _ in metas], pa.int64())
            inputs = [table.column(name).take(firsts) if name in self.keys else pa.nulls(len(metas), field.type)
                      for name, field in zip(self.input_schema.names, self.input_schema)]
            fields = list(zip(*[values for _, values in metas]))
            struct = pa.StructArray.from_arrays([pa.array(f, pa.int64()) for f in fields], fields=list(META_TYPE))
            rows = pa.Table.from_arrays([*inputs, pa.nulls(len(metas), pa.int64()), struct, *extra],
                                        schema=self.held_schema)
            source = pa.concat_tables([table, rows])
            index = np.where(index < 0, table.num_rows - 1 - index, index)
        held = source.take(pa.array(index, pa.int64()))
        return held.set_column(held.schema.get_field_index(POS), POS, pa.array(np.concatenate(positions), pa.int64()))

    def _meta(self, table, starts, has_meta) -> dict:
        """{META field: per key numpy array (0 / NONE where the key has no meta row)}."""
        column = table.column(META).take(pa.array(starts, pa.int64())).combine_chunks()
        out = {}
        for k, name in enumerate(META_FIELDS):
            values = column.field(k).fill_null(NONE if name in ("horizon", "deadline") else 0).to_numpy()
            out[name] = np.where(has_meta, values, NONE if name in ("horizon", "deadline") else 0)
        out["covered"] = np.where(has_meta, out["covered"], -1)
        return out

    # ---- columns ----------------------------------------------------------------------
    def _sort_keys(self) -> list:
        """Keys (in ``_sort_table``'s columns): by key, meta row first, kept rows in the order
        they were read, pending rows in ORDER BY order as Spark sorts (NULLs first or last as
        the key says; NaN above every other number: last ascending, first descending)."""
        keys = []
        for k, _ in enumerate(self.keys):
            keys += [(f"n{k}", "descending"), (f"k{k}", "ascending")]
        keys.append(("pos", "ascending"))
        for k, key in enumerate(self.spec.order):
            direction = "descending" if key.descending else "ascending"
            keys.append((f"m{k}", "descending" if key.nulls_first else "ascending"))
            if pa.types.is_floating(self.input_schema.field(key.column).type):
                keys.append((f"q{k}", direction))
            keys.append((f"o{k}", direction))
        return keys

    def _sort_table(self, table: pa.Table) -> pa.Table:
        columns = {}
        for k, name in enumerate(self.keys):
            column = table.column(name)
            columns[f"n{k}"], columns[f"k{k}"] = pc.is_null(column), column
        columns["pos"] = table.column(POS)
        for k, key in enumerate(self.spec.order):
            column = table.column(key.column)
            columns[f"m{k}"], columns[f"o{k}"] = pc.is_null(column), column
            if pa.types.is_floating(column.type):
                columns[f"q{k}"] = pc.fill_null(pc.is_nan(column), False)
        return pa.table(columns)

    def _segments(self, table: pa.Table) -> np.ndarray:
        """The first row of each key's run of rows (sorted by key)."""
        n = table.num_rows
        change = np.zeros(n, dtype=bool)
        change[0] = True
        for name in self.keys:
            column = table.column(name)
            change[1:] |= _differs(column.slice(1), column.slice(0, n - 1))
        return np.flatnonzero(change)

    def _micros(self, table: pa.Table) -> np.ndarray:
        """The event time of each row in microseconds (NULL: ``NONE``)."""
        column = table.column(self.event_time).cast(pa.int64())
        return pc.fill_null(column, NONE).to_numpy()

    def _decode(self, work: pa.Table, starts: np.ndarray, lengths: np.ndarray) -> Columns:
        """What the matcher reads of ``work`` (the stepped keys' rows, each key's from ``starts``)."""
        plan = self.plan
        masks = {name: pc.fill_null(work.column(name), False).to_numpy(zero_copy_only=False)
                 for name in plan.masks}
        if plan.derived:
            first = np.repeat(starts, lengths)  # each row's key's first row
            lagged = {}
            for mask in plan.derived:
                for comparison in mask.comparisons:
                    for column, lag in (comparison.left, comparison.right):
                        if (column, lag) not in lagged:
                            rows = np.arange(work.num_rows) - lag
                            lagged[(column, lag)] = work.column(column).take(
                                pa.array(np.maximum(rows, 0), mask=rows < first, type=pa.int64()))
            masks.update((mask.name, derive_mask(mask.comparisons, lagged)) for mask in plan.derived)
        values = {name: from_arrow(kind, work.column(name)) for name, kind in self.value_types}
        order = order_numbers(work.column(plan.order_key)) if plan.order_key else None
        return Columns(masks, values, order)


class Columns(NamedTuple):
    """The matcher's view of the stepped rows: masks (numpy), values and WITHIN keys (lists)."""
    masks: dict
    values: dict
    order: list | None

    def slice(self, lo: int, hi: int) -> dict:
        """``Rows.append`` arguments for rows ``lo`` to ``hi`` - 1."""
        return {"masks": {name: mask[lo:hi] for name, mask in self.masks.items()},
                "values": {name: values[lo:hi] for name, values in self.values.items()},
                "order": None if self.order is None else self.order[lo:hi]}


def _differs(a, b) -> np.ndarray:
    """Row by row: do ``a`` and ``b`` hold different partition keys (NULL equals NULL, NaN
    equals NaN, as Spark groups them)?"""
    if pa.types.is_struct(a.type):
        out = np.zeros(len(a), dtype=bool)
        a, b = a.combine_chunks(), b.combine_chunks()
        for k in range(a.type.num_fields):
            out |= _differs(a.field(k), b.field(k))
        return out | (pc.is_null(a).to_numpy(zero_copy_only=False) != pc.is_null(b).to_numpy(zero_copy_only=False))
    same = pc.equal(a, b)
    if pa.types.is_floating(a.type):
        same = pc.or_kleene(same, pc.and_(pc.is_nan(a), pc.is_nan(b)))
    same = pc.fill_null(same, False)
    both_null = pc.and_(pc.is_null(a), pc.is_null(b))
    return ~pc.or_(same, both_null).to_numpy(zero_copy_only=False)


def keep_key(pieces: list, positions: list, meta: int, kept: np.ndarray, hi: int, waiting: int) -> None:
    """Hold a key: its ``meta``-th new meta row (resolved in ``ShardStepper._held``), the rows
    ``kept`` (POS 1, 2, ...) and its ``waiting`` pending rows, the last before ``hi``."""
    pieces += [np.array([-meta]), kept, np.arange(hi - waiting, hi)]
    positions += [np.zeros(1, np.int64), np.arange(1, len(kept) + 1, dtype=np.int64),
                  np.full(waiting, PENDING, np.int64)]


def timer_ms(pending_times: np.ndarray, deadlines: list) -> int:
    """The shard's timer (ms): its first pending row or window close (``deadlines``, µs;
    NONE: none), at the latest when the stream ends."""
    wake = min(END_OF_STREAM, int(np.min(pending_times, initial=END_OF_STREAM)),
               *(int(d) for d in deadlines if d != NONE))
    return -(-wake // 1000)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenated ranges ``starts[i]`` .. ``starts[i] + lengths[i]`` - 1."""
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - offsets, lengths)


def _earliest(timer, wake):
    return timer if wake == NONE or wake is None else wake if timer is None else min(timer, wake)


def _shifted(emitted: Emitted, offset: int, indexes: list) -> Emitted:
    """``emitted`` with its row indexes (sources, and the atoms flagged in ``indexes``) moved
    by ``offset``."""
    move = lambda chunk: pc.add(chunk, offset) if isinstance(chunk, pa.Array) else \
        [None if v is None else v + offset for v in chunk]
    return Emitted([move(chunk) for chunk in emitted.sources],
                   [[move(chunk) for chunk in column] if index else column for column, index in zip(emitted.columns, indexes)],
                   emitted.timed_out)


def _merged(parts: list) -> Emitted:
    return Emitted([c for p in parts for c in p.sources],
                   [[c for p in parts for c in p.columns[k]] for k in range(len(parts[0].columns))],
                   [c for p in parts for c in p.timed_out])


class ShardProcessor:
    """The worker side of the stateful operator (sql_ext.streaming): a shard's step between its
    state store value (``state``: get / update / clear) and its timer (``handle``: registerTimer /
    deleteTimer; event time, or processing time), packets in, packets out."""

    def __init__(self, spec_json: str, stepper=None, floor_ms: int | None = None):
        """``stepper(spec, input_schema, output_schema)``: the stepper (default ``ShardStepper``;
        ``udtf.stream_layers.stepper`` also steps statements with LAYERs); ``floor_ms``: on a
        checkpoint state version 3 wrote, its last watermark (``udtf.state_versions``)."""
        spec = StreamSpec.from_json(spec_json)
        self.stepper = (stepper or ShardStepper)(spec, arrow_schema(spec.inputs), arrow_schema(spec.outputs))
        self.reader = Reader(self.stepper.event_time, META, floor_ms)

    def step(self, state, handle, packets: list, watermark_ms: int, fired: int | None = None) -> list:
        """The output packets of a step over the rows of ``packets`` (None when a timer fired)
        with the clock (the watermark, or the processing time) at ``watermark_ms``."""
        stepper = self.stepper
        stored = self.reader.read(state.get())
        if stored is None and self.reader.floor_ms is not None:  # (a shard version 3 may have cleared)
            stored = stepper.stored(Shard(stepper.empty(), self.reader.floor_ms * 1000))
        previous = -1 if stored is None else stored.timer
        new = None
        if packets:
            new = pa.concat_tables([conform(from_ipc(p), stepper.input_schema) for p in packets])
        done = stepper.step(stepper.restore(stored), new, watermark_ms)
        timer = -1 if done.timer is None else done.timer
        if timer != previous:
            if previous >= 0 and previous != fired:
                handle.deleteTimer(previous)
            if timer >= 0:
                handle.registerTimer(timer)
        if done.shard is None:
            state.clear()
        else:
            state.update(dump_state(stepper.stored(done.shard, timer)))
        return [] if done.output is None else [to_ipc(done.output)]
