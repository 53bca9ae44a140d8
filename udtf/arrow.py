"""Arrow in, Arrow out: drive the engine over pre-distributed, pre-sorted record batches.

Spark feeds ``TABLE(SELECT ... DISTRIBUTE BY keys SORT BY keys, order)``: the rows of a
partition are contiguous and in order, a partition may straddle batches.  ``PartitionRunner``
finds partition boundaries with vectorized compute, feeds each partition's rows to a
``Matcher`` batch by batch, and turns matches into output batches (values of navigation
atoms and carried columns are taken from the original Arrow columns, so types stay exact).

Partitions are Spark's groups (its grouping equality: NaN = NaN, -0.0 = 0.0, strings by their
collation, nested values element by element).  Keys whose Arrow equality is that equality
(``arrow_groups``) are compared here; otherwise Spark marks the first row of each partition
(``EnginePlan.starts``: a window's ``row_number() = 1`` over the keys, which also sorts them).
"""
from __future__ import annotations

import inspect
import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .emit import Emitter
from .errors import LimitExceeded, MatchRecognizeError, reported
from .expr import lookback, type_of
from .match import Conditions, MatchBlock, Options, forget, matcher
from .match.spans import SpanWindow
from .plan import EnginePlan, OutputKind, RowsMode
from .rows import Match, Rows
from .sparksql.types import TypeKind, SqlType, arrow_type, from_arrow, to_arrow


FORGET_AT = 1 << 16  # rows of a partition held before the runner tries to release some


def arrow_groups(t: SqlType) -> bool:
    """Is Arrow's equality on Spark's Arrow form of ``t`` Spark's grouping equality?  Not for
    floating point (NaN, -0.0), collated strings, nested and other types."""
    return t.kind in (TypeKind.BOOLEAN, TypeKind.TINYINT, TypeKind.SMALLINT, TypeKind.INT, TypeKind.BIGINT,
                      TypeKind.DECIMAL, TypeKind.BINARY, TypeKind.DATE, TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ, TypeKind.DAY_TIME_INTERVAL) or \
        (t.kind is TypeKind.STRING and not t.collation)


def shown(column: pa.Array) -> str:
    """The first value of ``column`` as an error message shows it (a temporal one as Arrow
    prints it: as_py() cannot make every Spark value a datetime)."""
    if pa.types.is_temporal(column.type):
        return repr(pc.cast(column.slice(0, 1), pa.string())[0].as_py())
    return repr(column[0].as_py())


class PartitionRunner:
    """Runs one ``EnginePlan`` over a stream of record batches.  ``grouped``: the caller feeds
    one partition at a time and says where it ends (``reset`` / ``finish``), as streaming does
    per grouping key."""

    def __init__(self, plan: EnginePlan, output_schema: pa.Schema, grouped: bool = False):
        self.plan = plan
        self.schema = output_schema
        self.keys = plan.partition
        self.grouped = grouped
        self.last_key = None  # partition key of the last row seen
        self.key = None  # the current partition's first row, its key columns only (a RecordBatch)
        self.batches: list = []  # batches of the current partition
        self.rows = plan_rows(plan)
        self.value_types = [(v.name, SqlType.parse(v.type)) for v in plan.values]
        self.matcher = plan_matcher(plan, self.rows)
        self.emitter = plan_emitter(plan, self.rows)
        # a window's output also has the rows of each match, for the functions over its frame
        self.members = any(o.kind is OutputKind.FRAME_ROW for o in plan.output)
        self.atom_types = [SqlType.parse(type_of(a.expr)) for a in plan.atoms]
        self.pending: list = []  # matches of the current partition not yet emitted
        self.derived = {mask.name: mask.comparisons for mask in plan.derived}
        self.lags: dict = {}  # column -> largest PREV offset the derived masks read
        for comparisons in self.derived.values():
            for comparison in comparisons:
                for column, lag in (comparison.left, comparison.right):
                    self.lags[column] = max(lag, self.lags.get(column, 0))
        self.history: dict = {}  # column -> its last ``lags[column]`` values in the partition
        self.lookback = plan_lookback(plan)

    # ---- batches ---------------------------------------------------------------------
    def feed(self, batch: pa.RecordBatch):
        """Consume one batch; yield output batches for partitions (or matches) completed."""
        if batch.num_rows == 0:
            return
        for lo, hi, new_partition in self._segments(batch):
            if new_partition and self._open():
                yield from self._close_partition()
            if new_partition:
                self.key = batch.select(self.keys).slice(lo, 1)
            self._append(batch.slice(lo, hi - lo))
        out = self._flush()
        self._forget()
        if out is not None:
            yield out

    def finish(self):
        if self._open():
            yield from self._close_partition()

    def _open(self) -> bool:
        """Has the current partition any rows (some may have been released)?"""
        return self.rows.size + self.rows.dropped > 0

    def advance(self):
        """Yield what the matcher decides from the rows it has (streaming: after its
        ``horizon`` moved, with no new row)."""
        self.pending += self._located(self.matcher.feed)
        out = self._flush()
        if out is not None:
            yield out

    def _segments(self, batch: pa.RecordBatch):
        """(lo, hi, starts_new_partition) runs of rows of one partition within the batch."""
        n = batch.num_rows
        if self.plan.starts is not None and not self.grouped:
            change = pc.fill_null(batch.column(self.plan.starts), False).to_numpy(zero_copy_only=False)
        else:
            change = np.zeros(n, dtype=bool)
            change[0] = not self._open()
            if self.keys and not self.grouped:
                self._compare_keys(batch, change)
        starts = np.flatnonzero(change).tolist()
        bounds = ([0] if not starts or starts[0] != 0 else []) + starts + [n]
        for lo, hi in zip(bounds, bounds[1:]):
            yield lo, hi, bool(change[lo])

    def _compare_keys(self, batch: pa.RecordBatch, change: np.ndarray) -> None:
        """Mark in ``change`` the rows whose keys differ from the previous row's (the keys are
        all ``arrow_groups``; NULL equals NULL)."""
        n = batch.num_rows
        for name in self.keys:
            col = batch.column(name)
            if n > 1:
                a, b = col.slice(1), col.slice(0, n - 1)
                differs = pc.fill_null(pc.not_equal(a, b), True)
                same_null = pc.and_(pc.is_null(a), pc.is_null(b))
                differs = pc.and_(differs, pc.invert(same_null))
                change[1:] |= differs.to_numpy(zero_copy_only=False)
        # Arrow scalars: as_py() cannot make every Spark value a datetime (year 1 in a zone west of UTC)
        first_key = tuple(batch.column(name)[0] for name in self.keys)
        change[0] |= self.last_key is None or first_key != self.last_key
        self.last_key = tuple(batch.column(name)[n - 1] for name in self.keys)

    def _append(self, part: pa.RecordBatch):
        self.load(part)
        self.pending += self._located(self.matcher.feed, part.num_rows)

    def load(self, part: pa.RecordBatch):
        """Append the rows of ``part`` (of the current partition) for the matcher to read."""
        plan = self.plan
        masks = {name: pc.fill_null(part.column(name), False).to_numpy(zero_copy_only=False)
                 for name in plan.masks}
        if self.derived:
            lagged = self._lagged(part)
            masks.update((name, derive_mask(comparisons, lagged)) for name, comparisons in self.derived.items())
        values = {name: from_arrow(kind, part.column(name)) for name, kind in self.value_types}
        order = order_numbers(part.column(plan.order_key)) if plan.order_key else None
        self.batches.append(part)
        self.rows.append(part.num_rows, masks=masks, values=values, order=order)

    def _forget(self):
        """Release the rows of the current partition that no run can read any more (matches
        were flushed), once they are at least half of those held: memory stays bounded by
        the live runs, not the partition."""
        held = self.rows.size
        if held < FORGET_AT or 2 * (self.matcher.low_water() - self.lookback) < held:
            return
        shift = forget(self.matcher, self.lookback)
        kept = []
        for batch in self.batches:
            if shift >= batch.num_rows:
                shift -= batch.num_rows
            else:
                kept.append(batch.slice(shift))
                shift = 0
        self.batches = kept

    def _lagged(self, part: pa.RecordBatch) -> dict:
        """{(column, lag): the column's values ``lag`` rows back in the partition (NULL before
        its first row)} for the columns the derived masks read."""
        out = {}
        for column, most in self.lags.items():
            current = part.column(column)
            prior = self.history.get(column)
            full = pa.concat_arrays([pa.nulls(most, current.type) if prior is None else prior, current])
            for lag in range(most + 1):
                out[(column, lag)] = full.slice(most - lag, len(current))
            self.history[column] = full.slice(len(full) - most)
        return out

    def _located(self, step, *args) -> list:
        """``step(*args)`` of the matcher; a limit it exceeds names the partition and the row."""
        try:
            return step(*args)
        except LimitExceeded as e:
            raise self.located(e) from None

    def located(self, e: LimitExceeded) -> MatchRecognizeError:
        """The error of the limit ``e``, naming the partition and the row."""
        key = "" if self.key is None else ", ".join(f"{name} = {shown(self.key.column(name))}" for name in self.keys)
        where = f"partition ({key})" if key else "the partition"
        return MatchRecognizeError(f"{e.message}, in {where} at its row {e.row + self.rows.dropped + 1}", *self.plan.at)

    def _close_partition(self):
        self.pending += self._located(self.matcher.finish)
        out = self._flush()
        self.reset()
        if out is not None:
            yield out

    def reset(self):
        """Forget the current partition (its rows, history and matcher state)."""
        self.batches = []
        self.history = {}
        self.pending = []
        self.rows.clear()
        self.matcher.reset()

    # ---- output ----------------------------------------------------------------------
    def _flush(self):
        if not self.pending:
            return None
        matches, self.pending = self.pending, []
        return output_batch(self.schema, self.plan, self.atom_types, self.emitter.emit(matches),
                            pa.Table.from_batches(self.batches), matches if self.members else None,
                            self.rows.dropped)


def plan_rows(plan: EnginePlan) -> Rows:
    """Empty rows of ``plan``'s masks and values."""
    return Rows(masks=(*plan.masks, *(d.name for d in plan.derived)), values=[v.name for v in plan.values])


def plan_matcher(plan: EnginePlan, rows: Rows):
    """The matcher of ``plan`` over ``rows`` (its conditions compiled against them)."""
    conditions = Conditions(plan.define, plan.until, plan.program.vars, rows, plan.ansi, plan.zone,
                            windowed=plan.frame is not None)
    span = None if plan.span is None else SpanWindow(
        plan.span.limit, plan.span.admits, plan.span.start, plan.span.end, rows, plan.ansi, plan.zone)
    options = Options(semantics=plan.semantics, skip=plan.skip, within=plan.within, span=span,
                      unmatched=plan.rows is RowsMode.ALL_WITH_UNMATCHED,
                      limits=plan.limits, lookahead=plan.lookahead, timeouts=plan.timeouts,
                      distinct=plan.distinct, frame=plan.frame)
    return matcher(plan.program, conditions, options)


def plan_emitter(plan: EnginePlan, rows: Rows) -> Emitter:
    """The emitter of ``plan``'s measure atoms over ``rows``' values (read as they are then)."""
    return Emitter(plan.atoms, plan.rows, plan.program.vars, rows.values, lambda: rows.size, plan.ansi, plan.zone,
                   plan.frame)


def plan_lookback(plan: EnginePlan) -> int:
    """Rows before a live run that ``plan``'s navigation (conditions and measures) may still read."""
    return max((lookback(e) for e in (*(c.expr for c in (*plan.define, *plan.until)), *(a.expr for a in plan.atoms))),
               default=0)


def output_batch(schema: pa.Schema, plan: EnginePlan, atom_types: list, emitted, table: pa.Table,
                 framed: list | None = None, dropped: int = 0):
    """The output rows of ``emitted`` (``emit.Emitted``, its row indexes into ``table``) as a
    batch of ``schema`` (one of ``plan.output`` per field), or None when there are none.  A
    window's (``framed``: its matches) gains each match's rows after them (``frame_rows``);
    ``dropped`` rows of the partition precede ``table``."""
    atoms = emitted.columns
    sources = pa.concat_arrays([pa.array(chunk, type=pa.int64()) for chunk in emitted.sources]) \
        if emitted.sources else pa.array([], pa.int64())
    if not len(sources):
        return None
    heads, extra = len(sources), 0
    if framed is not None:  # each match's rows after the rows themselves (``frame_rows``)
        owners, slots, rows = frame_rows(framed, sources.to_numpy())
        sources, extra = pa.array(rows), len(rows) - heads
    columns = []
    for field, output in zip(schema, plan.output):
        if output.kind is OutputKind.CARRY:
            column = table.column(output.column).take(sources)
            if plan.rows is RowsMode.ONE and plan.frame is None:  # a partition key, as GROUP BY gives it
                column = normalized_floats(column.combine_chunks())
        elif output.kind is OutputKind.TIMED_OUT:
            column = pa.array([flag for chunk in emitted.timed_out for flag in chunk] + [False] * extra,
                              type=pa.bool_())
        elif output.kind is OutputKind.LATE:
            column = pa.nulls(len(sources), field.type)
        elif output.kind is OutputKind.OWNER:
            column = pa.array((owners if framed is not None else sources.to_numpy()) + dropped)
        elif output.kind is OutputKind.FRAME_ROW:
            column = pa.array(slots)
        elif output.kind is OutputKind.TAKE:
            index = pa.concat_arrays([chunk if isinstance(chunk, pa.Array) else pa.array(chunk, type=pa.int64())
                                      for chunk in atoms[output.atom]] + [pa.nulls(extra, pa.int64())])
            column = table.column(output.column).take(index)
        else:
            column = atom_column(atom_types[output.atom], atoms[output.atom], extra)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if column.type != field.type:
            column = column.cast(field.type)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=schema)


# kinds whose Python values are the numbers of an int64 / double Arrow chunk (``to_arrow``)
_FROM_INT64 = frozenset((TypeKind.TINYINT, TypeKind.SMALLINT, TypeKind.INT, TypeKind.DATE, TypeKind.TIMESTAMP,
                         TypeKind.TIMESTAMP_NTZ, TypeKind.DAY_TIME_INTERVAL))


def atom_column(t: SqlType, chunks: list, extra: int) -> pa.Array:
    """The values of an atom of type ``t`` from its chunks (``emit.Emitter.emit``), then
    ``extra`` NULLs: each chunk converted alone (``_chunk_column``)."""
    arrow = arrow_type(t)
    columns = [_chunk_column(t, arrow, chunk) for chunk in chunks]
    return pa.concat_arrays(columns + [to_arrow(t, [None] * extra)] if extra or not columns else columns)


def _chunk_column(t: SqlType, arrow: pa.DataType, chunk) -> pa.Array:
    """An Arrow chunk of ``t``'s Arrow type as it is; one of int64 numbers of an integral,
    date, timestamp or interval type, or of doubles of a FLOAT, cast (as ``to_arrow`` builds
    those from the same numbers: a date from int32 days, a float rounded to single precision);
    any other chunk through its Python values."""
    if isinstance(chunk, pa.Array):
        if chunk.type == arrow:
            return chunk
        if chunk.type == pa.int64() and t.kind in _FROM_INT64:
            return (chunk.cast(pa.int32()) if t.kind is TypeKind.DATE else chunk).cast(arrow)
        if chunk.type == pa.float64() and t.kind is TypeKind.FLOAT:
            return chunk.cast(arrow)
        chunk = chunk.to_pylist()
    return to_arrow(t, chunk if isinstance(chunk, list) else list(chunk))


def normalized_floats(column: pa.Array) -> pa.Array:
    """``column`` with every -0.0 in it 0.0, at any depth (Spark's NormalizeFloatingNumbers,
    which GROUP BY applies to its keys: the group of -0.0 and 0.0 reports 0.0)."""
    t = column.type
    if column.offset and not pa.types.is_floating(t):  # (a slice: rebuilt from its own buffers)
        column = column.take(pa.array(np.arange(len(column))))
    if pa.types.is_floating(t):
        return pc.add(column, pa.scalar(0.0, t))  # -0.0 + 0.0 is 0.0; NaN and NULL stay
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return type(column).from_arrays(column.offsets, normalized_floats(column.values), type=t,
                                        mask=column.is_null() if column.null_count else None)
    if pa.types.is_struct(t):
        return pa.StructArray.from_arrays([normalized_floats(column.field(i)) for i in range(t.num_fields)],
                                          fields=list(t), mask=column.is_null() if column.null_count else None)
    return column


def order_numbers(column) -> list:
    """The WITHIN key's values as numbers: a timestamp's microseconds (with or without a zone:
    the same count), a date's days."""
    if pa.types.is_date(column.type):
        column = pc.cast(column, pa.int32())
    return pc.cast(column, pa.int64()).to_pylist()


def frame_rows(matches, heads: np.ndarray) -> tuple:
    """(owner, slot, row) arrays of a window's output rows: the rows ``heads`` themselves (slot
    0), then for each match its rows start..end (slots 1, 2, ...) owned by its owner (a
    block's: its start): a function over the window is computed over the rows of slot > 0 of an
    owner."""
    found = [m for m in matches if isinstance(m, Match)]
    blocks = [b for b in matches if isinstance(b, MatchBlock)]
    owners = np.concatenate([np.fromiter((m.owner for m in found), dtype=np.int64, count=len(found)),
                             *(np.asarray(b.starts, dtype=np.int64) for b in blocks)])
    starts = np.concatenate([np.fromiter((m.start for m in found), dtype=np.int64, count=len(found)),
                             *(np.asarray(b.starts, dtype=np.int64) for b in blocks)])
    lengths = np.concatenate([np.fromiter((m.end - m.start + 1 for m in found), dtype=np.int64, count=len(found)),
                              *(np.asarray(b.lengths, dtype=np.int64) for b in blocks)])
    first = np.repeat(np.cumsum(lengths) - lengths, lengths)  # index of each row's first in its match
    slots = np.arange(int(lengths.sum()), dtype=np.int64) - first + 1
    rows = np.repeat(starts, lengths) + slots - 1
    return (np.concatenate([heads, np.repeat(owners, lengths)]),
            np.concatenate([np.zeros(len(heads), dtype=np.int32), slots.astype(np.int32)]),
            np.concatenate([heads, rows]))


# Spark's comparison operators as Arrow compute functions (NULL where either side is)
COMPARE = {"=": pc.equal, "<>": pc.not_equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater,
            ">=": pc.greater_equal}


def derive_mask(comparisons, lagged: dict) -> np.ndarray:
    """The AND of ``plan.Comparison``s over ``lagged`` columns ({(column, lag): array}), NULL
    counting as false (Spark's ``COALESCE(a < LAG(b, k) AND ..., false)``)."""
    mask = None
    for op, left, right in comparisons:
        value = pc.fill_null(COMPARE[op](lagged[tuple(left)], lagged[tuple(right)]), False)
        mask = value if mask is None else pc.and_(mask, value)
    return mask.to_numpy(zero_copy_only=False)


def spark_arrow_schema(struct) -> pa.Schema:
    """The Arrow schema of the Spark ``StructType`` ``struct`` as pyspark hands its rows to
    Python, timestamps as UTC instants (pyspark 4.1 does so by default; 4.2 asks for the zone)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(struct, timezone="UTC")
    return to_arrow_schema(struct)


def _void_nullable(t):
    """The pyspark DataType ``t`` with every NULL-typed element, map value and struct field
    declared nullable: Spark types ``collect_list`` over a VOID column ARRAY<VOID> without
    NULLs (it skips them), which Arrow cannot declare (a null-typed field is always nullable)."""
    from pyspark.sql.types import ArrayType, MapType, NullType, StructField, StructType

    if isinstance(t, StructType):
        return StructType([StructField(f.name, _void_nullable(f.dataType),
                                       f.nullable or isinstance(f.dataType, NullType), f.metadata) for f in t.fields])
    if isinstance(t, ArrayType):
        return ArrayType(_void_nullable(t.elementType), t.containsNull or isinstance(t.elementType, NullType))
    if isinstance(t, MapType):
        return MapType(_void_nullable(t.keyType), _void_nullable(t.valueType),
                       t.valueContainsNull or isinstance(t.valueType, NullType))
    return t


def make_udtf(plan: EnginePlan, return_type, *, connect: bool = False, runner=PartitionRunner):
    """An ``arrow_udtf`` running ``plan``; ``return_type`` is the Spark StructType of its output;
    ``connect``: for a Spark Connect session (else a classic one); ``runner(plan, schema)``: what
    its batches are fed to (``udtf.chunks.runner``: the chunked plan's runners too).

    The class is pickled by value, the engine by reference: the workers import ``udtf`` (the
    same version: ``EnginePlan.from_json`` checks it; sql_ext.spark.shipping sends it where needed).
    The first batch's column types are checked against those the plan was made for: a
    temporary view keeps the rewritten SQL, so its input may have changed types since."""
    if connect:
        from pyspark.sql.connect.functions import arrow_udtf
    else:
        from pyspark.sql.functions import arrow_udtf
    return_type = _void_nullable(return_type)
    plan_json = plan.to_json()
    schema_json = return_type.json()

    class MatchRecognize:
        def __init__(self):
            from pyspark.sql.types import StructType

            schema = spark_arrow_schema(StructType.fromJson(json.loads(schema_json)))
            engine_plan = EnginePlan.from_json(plan_json)
            self.runner = runner(engine_plan, schema)
            self.expected = expected_input(engine_plan, schema)

        def feed(self, batch: pa.RecordBatch):
            try:
                if self.expected is not None:
                    check_input(self.expected, batch.schema)
                    self.expected = None
                yield from self.runner.feed(batch)
            except MatchRecognizeError as e:
                raise reported(e) from None

        def terminate(self):
            try:
                yield from self.runner.finish()
            except MatchRecognizeError as e:
                raise reported(e) from None

    # the UDTF protocol's name for the per-batch method (nothing is evaluated as code)
    MatchRecognize.eval = MatchRecognize.feed
    return arrow_udtf(MatchRecognize, returnType=return_type)


def _kind(t: pa.DataType):
    """The coarse kind of an Arrow type (Spark's type as any of its Arrow encodings), or None
    for types not checked."""
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t):
        return f"int{t.bit_width}"
    if pa.types.is_floating(t):
        return f"float{t.bit_width}"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view", bool)(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "binary"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    return None


_SPARK_NAMES = {"boolean": "BOOLEAN", "int8": "TINYINT", "int16": "SMALLINT", "int32": "INT", "int64": "BIGINT",
                "float32": "FLOAT", "float64": "DOUBLE", "string": "STRING", "binary": "BINARY", "date": "DATE",
                "timestamp": "TIMESTAMP", "timestamp_ntz": "TIMESTAMP_NTZ"}


def expected_input(plan: EnginePlan, output_schema: pa.Schema) -> dict:
    """{input column: coarse kind} the plan was made for: masks, values and the columns the
    output carries or takes (which keep their input type)."""
    expected = {name: "boolean" for name in plan.masks}
    for name, kind in ((v.name, SqlType.parse(v.type)) for v in plan.values):
        try:
            expected[name] = _kind(arrow_type(kind))
        except Exception:  # a type without a plain Arrow form: not checked
            pass
    for field, output in zip(output_schema, plan.output):
        if output.kind in (OutputKind.CARRY, OutputKind.TAKE) and output.column not in expected:
            expected[output.column] = _kind(field.type)
    return {name: kind for name, kind in expected.items() if kind is not None}


def check_input(expected: dict, schema: pa.Schema) -> None:
    """Raise when an input column's type is not the one the plan was made for."""
    for name, kind in expected.items():
        index = schema.get_field_index(name)
        if index < 0:
            continue
        actual = _kind(schema.field(index).type)
        if actual is not None and actual != kind:
            what = f"column {name}" if not name.startswith("__mr") else "an expression of the clause"
            spark_name = lambda k: _SPARK_NAMES.get(k, k.upper())
            raise MatchRecognizeError(
                f"[INCOMPATIBLE_VIEW_SCHEMA_CHANGE] MATCH_RECOGNIZE: the input of this query changed since it was "
                f"rewritten: {what} is {spark_name(actual)}, it was {spark_name(kind)}. A temporary view keeps "
                f"the rewritten SQL: create it again (CREATE OR REPLACE TEMP VIEW ...) after its input changes.")
