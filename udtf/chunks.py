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
from .match import expand
from .match.base import next_start
from .match.seams import Fact, Run, chunk_runs, stitch
from .expr import MatchNumber
from .plan import EnginePlan, OutputKind, RowsMode
from .rows import Match, MatchKind

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


def runner(plan: EnginePlan, schema: pa.Schema):
    """What a UDTF running ``plan`` feeds its batches to (``arrow.make_udtf``): the chunk's or the
    stitch's runner for the chunked plan (``plan.chunk``), else a ``PartitionRunner``."""
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
        c, plan = self.chunk, self.chunking
        base = int(table.column(self.rn)[0].as_py())
        last = base + table.num_rows  # the rows after it are not the partition's
        lo, hi = c * plan.rows, min((c + 1) * plan.rows, last)
        if lo >= hi:
            return
        matcher = self.inner.matcher

        def chain(a: int, stop: int) -> Run:
            first, end = max(base, a - plan.behind), min(last, stop + plan.ahead)
            self._load(table, base, first, end)
            out, error = matcher.chain(a - first)
            if error is not None:
                stop = min(stop, matcher.start + first)
                if isinstance(error, LimitExceeded):
                    error = self.inner.located(error)
            found = tuple(m._replace(start=m.start + first, end=m.end + first,
                                     rows=tuple((r + first, v, x) for r, v, x in m.rows))
                          for m in expand(out) if m.kind is MatchKind.MATCH and m.start + first < stop)
            raised = error if error is not None and matcher.start + first == stop else None
            return Run(a, stop, found, raised)

        entries = lo + plan.longest if lo else lo
        runs = chunk_runs(chain, lo, hi, entries, self.plan.skip)
        self._load(table, base, base, last)  # (``base``: lo - behind, or the partition's first row)
        matches = [m for run in runs for m in run.matches]
        local = [m._replace(number=k + 1, start=m.start - base, end=m.end - base,
                            rows=tuple((r - base, v, x) for r, v, x in m.rows)) for k, m in enumerate(matches)]
        errors = [None] * len(matches)
        batches = self._emitted(local, errors)
        yield self._facts(runs, matches, errors, c, last)
        starts = np.array([m.start for m in matches], dtype=np.int64)
        for batch in batches:
            numbers = batch.column(self.number).to_numpy(zero_copy_only=False).astype(np.int64)
            yield self._extended(batch, c, ROW_MATCH, starts[numbers - 1])
        if self.plan.rows is RowsMode.ALL_WITH_UNMATCHED:
            unmatched = [Match(None, r - base, r - base, (), MatchKind.UNMATCHED) for r in range(lo, hi)]
            for batch in self._emitted(unmatched, [None] * len(unmatched)):
                yield self._extended(batch, c, ROW_UNMATCHED, np.arange(lo, hi, dtype=np.int64))

    def _emitted(self, matches: list, errors: list) -> list:
        """The output batches of ``matches`` (numbered 1, 2, ...: the column ``self.number``
        names the match of each row); a match whose measures raise is left out, its error in
        ``errors``: the stitch raises it if the serial chain has that match."""
        inner = self.inner
        emit = lambda ms: output_batch(inner.schema, inner.plan, inner.atom_types, inner.emitter.emit(ms),
                                       pa.Table.from_batches(inner.batches), None, inner.rows.dropped)
        try:
            batch = emit(matches) if matches else None
            return [] if batch is None else [batch]
        except MatchRecognizeError:
            pass
        out = []
        for k, m in enumerate(matches):
            try:
                batch = emit([m])
            except MatchRecognizeError as e:
                errors[k] = _error_text(e)
                continue
            if batch is not None:
                out.append(batch)
        return out

    def _facts(self, runs: list, matches: list, errors: list, c: int, last: int):
        """The fact rows of chunk ``c``'s ``runs`` (a run's ``next``: ``last``, the rows of the
        partition it knows of) and of their ``matches`` (``errors``: their measures')."""
        kind, index, at, to, nxt, error = [], [], [], [], [], []
        faults = iter(errors)
        for k, run in enumerate(runs):
            kind.append(FACT_RUN)
            index.append(k)
            at.append(run.start)
            to.append(run.stop)
            nxt.append(last)
            error.append(None if run.error is None else _error_text(run.error))
            for m in run.matches:
                kind.append(FACT_MATCH)
                index.append(k)
                at.append(m.start)
                to.append(m.end)
                nxt.append(next_start(self.plan.skip, m.start, m.end, m.rows))
                error.append(next(faults))
        width = len(self.plan.output)
        nulls = [pa.nulls(len(kind), f.type) for f in list(self.schema)[:width]]
        extra = [pa.array([c] * len(kind), pa.int64()), pa.array(kind, pa.int32()), pa.array(index, pa.int32()),
                 pa.array(at, pa.int64()), pa.array(to, pa.int64()), pa.array(nxt, pa.int64()),
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
        name = lambda what: table.column(column(self.prefix, what)).to_pylist()
        facts = zip(*(name(w) for w in ("chunk", "run", "kind", "at", "to", "next", "error")))
        runs, matches, faults, size = {}, {}, {}, 0
        for chunk, index, kind, at, to, nxt, error in facts:
            if kind == FACT_RUN:
                runs[chunk, index] = Run(at, to, (), None if error is None else _error(error))
                size = max(size, nxt)
            else:
                matches.setdefault((chunk, index), []).append(Fact(at, to, nxt))
                if error is not None:  # (a match is told by its start: the chains never share one)
                    faults[at] = _error(error)
        full = [run._replace(matches=tuple(sorted(matches.get(key, ()), key=lambda f: f.start)))
                for key, run in runs.items()]
        chosen = stitch(full, self.plan.skip, size, self.plan.rows is RowsMode.ALL_WITH_UNMATCHED)
        kind, at, to, number = [], [], [], []
        for m in chosen:
            if m.kind is MatchKind.MATCH:
                if m.start in faults:
                    raise faults[m.start]
                kind.append(ROW_MATCH)
                at.append(m.start)
                to.append(m.start)
                number.append(m.number)
            elif kind and kind[-1] == ROW_UNMATCHED and to[-1] == m.start - 1:
                to[-1] = m.start
            else:
                kind.append(ROW_UNMATCHED)
                at.append(m.start)
                to.append(m.start)
                number.append(None)
        arrays = [pa.array(kind, pa.int32()), pa.array(at, pa.int64()), pa.array(to, pa.int64()),
                  pa.array(number, pa.int64())]
        yield pa.RecordBatch.from_arrays(arrays, schema=self.schema)
