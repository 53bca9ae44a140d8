"""One partition on many cores, the UDTFs' side of the chunked plan (issue 28 item 3;
docs/architecture.md, "Chunks"; the SQL: ``sql_ext.compiler.chunked``).

The chunk UDTF (``ChunkRunner``) gets, for each chunk c, the partition's rows numbered ``rn``
from c x rows - behind to (c + 1) x rows - 1 + ahead, in order: it owns the attempt rows
[c x rows, (c + 1) x rows).  It reports its runs (``seams.chunk_runs``) as *fact* rows (a run:
its start, stop, error and the partition's rows it knows of; a match: its start, end and next
attempt row, and the error its measures raise), the output rows of every match of its runs (``at``: the match's start), and
with WITH UNMATCHED ROWS each row it owns as an unmatched row (``at``: the row).  Row numbers
are the partition's (``rn``), so that ``^`` and the limits' messages are the serial run's.

The stitch UDTF (``Stitcher``) reads every fact in one task, follows the serial chain
(``seams.stitch``) and says which rows to keep: (MATCH, start, start, MATCH_NUMBER) per match of
the chain, (UNMATCHED, first, last, NULL) per stretch of rows no match of it covers.  An error
is raised where the serial run raises it: on the chain only.
"""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from .arrow import PartitionRunner, output_batch
from .errors import LimitExceeded, MatchRecognizeError
from .hierarchy import HierarchyRunner
from .match import MatchBlock, expand, shifted
from .match.base import next_start
from .match.seams import Chain, Facts, Run, chunk_runs, path, unmatched_rows
from .expr import MatchNumber
from .plan import EnginePlan, OutputKind, RowsMode, SkipMode
from .rows import Match, MatchKind, Unmatched

FACT_RUN, FACT_MATCH, ROW_MATCH, ROW_UNMATCHED = range(4)  # the chunk UDTF's ``kind`` column

# the chunk UDTF's columns after the plan's output: (name suffix, Arrow type)
EXTRA = (("chunk", pa.int64()), ("kind", pa.int32()), ("run", pa.int32()), ("at", pa.int64()),
         ("to", pa.int64()), ("next", pa.int64()), ("error", pa.string()))
# the stitch UDTF's output
STITCHED = (("kind", pa.int32()), ("at", pa.int64()), ("to", pa.int64()), ("number", pa.int64()))


def column(prefix: str, what: str) -> str:
    """The chunked plan's column ``what`` (``rn``, ``chunk``, or one of ``EXTRA``)."""
    return f"{prefix}_{what}"


def _error_text(e: MatchRecognizeError) -> str:
    return json.dumps([e.message, e.line, e.column])


def _error(text: str) -> MatchRecognizeError:
    message, line, col = json.loads(text)
    return MatchRecognizeError(message, line, col)


def _facts_of(items: list, base: int, skip) -> Facts:
    """The ``Facts`` (rows of the partition) of a matcher's ``items`` (``Match``es and
    ``MatchBlock``s, rows counted from the partition's row ``base``)."""
    parts = [np.zeros((3, 0), dtype=np.int64)]
    for item in items:
        if isinstance(item, MatchBlock) and skip.mode in (SkipMode.PAST_LAST_ROW, SkipMode.TO_NEXT_ROW):
            starts, ends = item.starts, item.ends
            nexts = np.where((ends < starts) | (skip.mode is SkipMode.TO_NEXT_ROW), starts + 1, ends + 1)
            parts.append(np.stack([starts, ends, nexts]).astype(np.int64))
        else:
            parts.append(np.array([(m.start, m.end, next_start(skip, m.start, m.end, m.rows))
                                   for m in expand([item])], dtype=np.int64).reshape(-1, 3).T)
    starts, ends, nexts = np.concatenate(parts, axis=1) + base
    return Facts(starts, ends, nexts)


def _head(items: list, count: int) -> list:
    """The first ``count`` matches of ``items`` (``Match``es and ``MatchBlock``s)."""
    out = []
    for item in items:
        if count <= 0:
            break
        if isinstance(item, MatchBlock):
            if len(item) > count:
                item = MatchBlock(item.elements, item.starts[:count], item.ends[:count], item.takes[:count],
                                  int(item.numbers[0]))
            count -= len(item)
        else:
            count -= 1
        out.append(item)
    return out


def runner(plan: EnginePlan, schema: pa.Schema):
    """What a UDTF running ``plan`` feeds its batches to (``arrow.make_udtf``): the chunk's or the
    stitch's runner for the chunked plan (``plan.chunk``), the layer stack's for a statement with
    LAYERs in one pass (``plan.hierarchy``), else a ``PartitionRunner``."""
    if plan.hierarchy is not None:
        return HierarchyRunner(plan, schema)
    if plan.chunk is None:
        return PartitionRunner(plan, schema)
    return (Stitcher if plan.chunk.stitch else ChunkRunner)(plan, schema)


class ChunkRunner:
    """The chunk UDTF: the rows of consecutive chunks (sorted by chunk, then ``rn``) in, each
    chunk's facts and output rows out once its rows are all in."""

    def __init__(self, plan: EnginePlan, schema: pa.Schema):
        width, prefix = len(plan.output), plan.chunk.prefix
        self.plan, self.schema, self.chunking = plan, schema, plan.chunk
        self.inner = PartitionRunner(plan._replace(chunk=None), pa.schema(list(schema)[:width]))
        self.rn, self.chunk_column = column(prefix, "rn"), column(prefix, "chunk")
        self.number = next(k for k, o in enumerate(plan.output)
                           if o.kind is OutputKind.VALUE and isinstance(plan.atoms[o.atom].expr, MatchNumber))
        self.chunk = None
        self.batches: list = []

    def feed(self, batch: pa.RecordBatch):
        chunks = batch.column(self.chunk_column).to_numpy(zero_copy_only=False)
        bounds = [0, *(np.flatnonzero(chunks[1:] != chunks[:-1]) + 1).tolist(), len(chunks)]
        for lo, hi in zip(bounds, bounds[1:]):
            if lo == hi:
                continue
            if self.chunk is not None and chunks[lo] != self.chunk:
                yield from self.finish()
            self.chunk = int(chunks[lo])
            self.batches.append(batch.slice(lo, hi - lo))

    def finish(self):
        if self.batches:
            table = pa.Table.from_batches(self.batches).combine_chunks()
            self.batches = []
            yield from self._chunk(table)

    def _load(self, table: pa.Table, base: int, first: int, end: int):
        """The inner runner holding the partition's rows ``first`` to ``end`` - 1 (``table``'s
        first row is the partition's row ``base``)."""
        inner = self.inner
        inner.reset()
        inner.rows.dropped = first
        for part in table.slice(first - base, end - first).to_batches():
            inner.load(part)  # (also kept in ``inner.batches``)

    def _chunk(self, table: pa.Table):
        c, plan, skip = self.chunk, self.chunking, self.plan.skip
        base = int(table.column(self.rn)[0].as_py())
        last = base + table.num_rows  # the rows after it are not the partition's
        lo, hi = c * plan.rows, min((c + 1) * plan.rows, last)
        if lo >= hi:
            return
        matcher = self.inner.matcher
        found = {}  # a run's first attempt row -> its matches as the matcher gave them, rows from ``base``

        def chain(a: int, stop: int) -> Run:
            first, end = max(base, a - plan.behind), min(last, stop + plan.ahead)
            self._load(table, base, first, end)
            out, error = matcher.chain(a - first)
            if error is not None:
                stop = min(stop, matcher.start + first)
                if isinstance(error, LimitExceeded):
                    error = self.inner.located(error)
            items = [shifted(m, first - base) for m in out
                     if isinstance(m, MatchBlock) or isinstance(m, Match) and m.kind is MatchKind.MATCH]
            found[a] = items
            raised = error if error is not None and matcher.start + first == stop else None
            return Run(a, stop, _facts_of(items, base, skip).before(stop), raised)

        entries = lo + plan.longest if lo else lo
        runs = chunk_runs(chain, lo, hi, entries, skip)
        self._load(table, base, base, last)  # (``base``: lo - behind, or the partition's first row)
        local, number = [], 1  # the runs' matches numbered in turn, as the matcher gave them
        for run in runs:
            for item in _head(found[run.start], len(run.matches)):
                local.append(shifted(item, 0, number))
                number += len(item) if isinstance(item, MatchBlock) else 1
        starts = np.concatenate([run.matches.starts for run in runs])
        errors = [None] * len(starts)
        batches = self._emitted(local, errors)
        yield self._facts(runs, errors, c, last)
        for batch in batches:
            numbers = batch.column(self.number).to_numpy(zero_copy_only=False).astype(np.int64)
            yield self._extended(batch, c, ROW_MATCH, starts[numbers - 1])
        if self.plan.rows is RowsMode.ALL_WITH_UNMATCHED:
            unmatched = [Unmatched(range(lo - base, hi - base))]
            for batch in self._emitted(unmatched, [None] * (hi - lo)):
                yield self._extended(batch, c, ROW_UNMATCHED, np.arange(lo, hi, dtype=np.int64))

    def _emitted(self, matches: list, errors: list) -> list:
        """The output batches of ``matches`` (``Match``es and ``MatchBlock``s numbered 1, 2, ...:
        the column ``self.number`` names the match of each row); a match whose measures raise
        is left out, its error in ``errors``: the stitch raises it if the serial chain has that
        match."""
        inner = self.inner
        emit = lambda ms: output_batch(inner.schema, inner.plan, inner.atom_types, inner.emitter.emit(ms),
                                       pa.Table.from_batches(inner.batches), None, inner.rows.dropped)
        try:
            batch = emit(matches) if matches else None
            return [] if batch is None else [batch]
        except MatchRecognizeError:
            pass
        out = []
        for k, m in enumerate(expand(matches)):
            try:
                batch = emit([m])
            except MatchRecognizeError as e:
                errors[k] = _error_text(e)
                continue
            if batch is not None:
                out.append(batch)
        return out

    def _facts(self, runs: list, errors: list, c: int, last: int):
        """The fact rows of chunk ``c``'s ``runs`` (a run's ``next``: ``last``, the rows of the
        partition it knows of) and of their matches (``errors``: their measures', in turn)."""
        counts = np.array([len(run.matches) + 1 for run in runs])
        firsts = np.cumsum(counts) - counts  # each run's fact, then its matches'
        kind = np.full(counts.sum(), FACT_MATCH, dtype=np.int32)
        kind[firsts] = FACT_RUN
        index = np.repeat(np.arange(len(runs), dtype=np.int32), counts)
        joined = lambda own, of_matches: np.concatenate([x for run in runs for x in ([own(run)], of_matches(run))])
        at = joined(lambda run: run.start, lambda run: run.matches.starts)
        to = joined(lambda run: run.stop, lambda run: run.matches.ends)
        nxt = joined(lambda run: last, lambda run: run.matches.nexts)
        error = [None] * len(kind)
        for k, run in zip(firsts.tolist(), runs):
            error[k] = None if run.error is None else _error_text(run.error)
        for k, fault in zip(np.flatnonzero(kind == FACT_MATCH).tolist(), errors):
            error[k] = fault
        width = len(self.plan.output)
        nulls = [pa.nulls(len(kind), f.type) for f in list(self.schema)[:width]]
        extra = [pa.array(np.full(len(kind), c, dtype=np.int64)), pa.array(kind), pa.array(index),
                 pa.array(at.astype(np.int64)), pa.array(to.astype(np.int64)), pa.array(nxt.astype(np.int64)),
                 pa.array(error, pa.string())]
        return pa.RecordBatch.from_arrays(nulls + extra, schema=self.schema)

    def _extended(self, batch: pa.RecordBatch, c: int, kind: int, at: np.ndarray) -> pa.RecordBatch:
        """Output rows of chunk ``c`` (``kind``: a match's or unmatched) with their ``at``."""
        n = batch.num_rows
        extra = [pa.array(np.full(n, c, dtype=np.int64)), pa.array(np.full(n, kind, dtype=np.int32)),
                 pa.nulls(n, pa.int32()), pa.array(at), pa.nulls(n, pa.int64()), pa.nulls(n, pa.int64()),
                 pa.nulls(n, pa.string())]
        return pa.RecordBatch.from_arrays(list(batch.columns) + extra, schema=self.schema)


class Stitcher:
    """The stitch UDTF: every fact of the chunk UDTF in (one task), the rows to keep out."""

    def __init__(self, plan: EnginePlan, schema: pa.Schema):
        self.plan, self.schema, self.prefix = plan, schema, plan.chunk.prefix
        self.batches: list = []

    def feed(self, batch: pa.RecordBatch):
        self.batches.append(batch)
        return iter(())

    def finish(self):
        if not self.batches:
            return
        table = pa.Table.from_batches(self.batches)
        self.batches = []
        name = lambda what: table.column(column(self.prefix, what)).to_numpy(zero_copy_only=False)
        chunk, run, kind, at, to, nxt = (name(w) for w in ("chunk", "run", "kind", "at", "to", "next"))
        errors = table.column(column(self.prefix, "error"))
        order = np.lexsort((at, kind, run, chunk))  # each run's fact, then its matches in turn
        chunk, run, kind, at, to, nxt = (a[order] for a in (chunk, run, kind, at, to, nxt))
        firsts = np.flatnonzero(kind == FACT_RUN)
        bounds = [*firsts.tolist(), len(kind)]
        text = errors.take(pa.array(order)).to_pylist() if errors.null_count < len(errors) else None
        chains = {}  # each run's chain -> the index of its first match's fact
        for lo, hi in zip(bounds, bounds[1:]):
            error = None if text is None or text[lo] is None else _error(text[lo])
            run = Run(int(at[lo]), int(to[lo]), (), error)
            chains[Chain(run, self.plan.skip, at[lo + 1:hi], nxt[lo + 1:hi])] = lo + 1
        size = int(nxt[firsts].max())
        slices, error = path(list(chains), size)
        picked = np.concatenate([np.arange(chains[c] + k0, chains[c] + k1) for c, k0, k1 in slices] or
                                [np.zeros(0, dtype=np.int64)])
        if text is not None:
            fault = next((text[k] for k in picked.tolist() if text[k] is not None), None)
            if fault is not None:
                raise _error(fault)
        if error is not None:
            raise error
        starts = at[picked]
        kinds, ats, tos = [np.full(len(picked), ROW_MATCH, dtype=np.int32)], [starts], [starts]
        numbers = [pa.array(np.arange(1, len(picked) + 1, dtype=np.int64))]
        if self.plan.rows is RowsMode.ALL_WITH_UNMATCHED:
            first, last = unmatched_rows(starts, to[picked], size)
            kinds.append(np.full(len(first), ROW_UNMATCHED, dtype=np.int32))
            ats.append(first)
            tos.append(last)
            numbers.append(pa.nulls(len(first), pa.int64()))
        arrays = [pa.array(np.concatenate(kinds)), pa.array(np.concatenate(ats).astype(np.int64)),
                  pa.array(np.concatenate(tos).astype(np.int64)), pa.concat_arrays(numbers)]
        yield pa.RecordBatch.from_arrays(arrays, schema=self.schema)
