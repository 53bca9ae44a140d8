"""A statement with LAYERs on Structured Streaming (docs/hierarchies.md, "On a stream"): the
layer stack of the batch one pass (``udtf.hierarchy.HierarchyRunner``) stepped per key inside
the streaming operator, with ``udtf.stream``'s held table, watermark, late rows and timers.

A key's state is what the one pass needs to go on: the rows it read since its last *quiet
point* (kept, ``POS`` 1, 2, ...), the rows the watermark has not released (``PENDING``) and a
meta row saying how many rows were dropped before the kept ones, how many of the top's matches
were emitted (``Meta.number``) and, in the column ``LAYERS``, every layer's MATCH_NUMBER at the
quiet point.  A quiet point is a row before which the stack holds nothing: every layer's
matcher decided every item it read, no event waits for a reader, every layer reading rows read
them all.  A fresh stack started there, with the layers' MATCH_NUMBERs, reports what the whole
key's stack reports from there on (no layer reads back across it: with PREV or ``^`` in some
layer no point is quiet and the key keeps its rows).

A step replays the kept rows and reads the released ones through the one pass (in chunks,
noting the last quiet point after each), and emits the top's matches numbered past those
emitted: the one pass reports a match only once no later row can change it (each layer's
frontier, ``udtf.match.layers``), and its MATCH_NUMBERs are the order of report, so a replay
reports the earlier matches again, under the same numbers, and only those.

Windows: after the rows, the stack is fed the watermark (``LayerStack.feed``'s horizon), so
a layer whose window (its WITHIN, or its WITHIN over the members' span) closed before it
decides what a later row would have; the meta row keeps the first close still to come on a
layer's live run (``Meta.deadline``, ``udtf.stream.window_close``), the shard's timer fires at
the earliest of those and of its pending rows, and a key whose close passed is stepped with no
new row.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from .hierarchy import HierarchyRunner
from .plan import EnginePlan
from .program import Kind
from .stream import (NONE, Shard, ShardStepper, Step, StreamSpec, keep_key, lookback,
                     reads_across_gaps, resume_point, timer_ms, window_close)

LAYERS = "__sparkcep_layers"  # on a meta row: each layer's MATCH_NUMBER at the quiet point (the top's last)
CHUNK = 64  # rows fed to the stack between two looks for a quiet point


def stepper(spec: StreamSpec, input_schema: pa.Schema, output_schema: pa.Schema) -> ShardStepper:
    """The stepper of ``spec``: the layer stack's where the plan has LAYERs."""
    kind = LayeredStepper if EnginePlan.from_json(spec.plan).hierarchy is not None else ShardStepper
    return kind(spec, input_schema, output_schema)


class StreamedHierarchy(HierarchyRunner):
    """The one pass over one key's rows from a quiet point, emitting the top's matches numbered
    past ``emitted``."""

    def __init__(self, plan: EnginePlan, output_schema: pa.Schema):
        super().__init__(plan, output_schema)
        self.matchers = self.stack.matchers()  # (no refined layer on a stream: the compiler refuses one)
        self.emitted = 0
        plans = [*(layer.plan for layer in plan.hierarchy.layers), plan]
        runners = [*self.below, self]
        # no layer reads back across a quiet point (PREV, ^): the rows before it can go
        self.trims = not any(runner.lookback or any(s.kind is Kind.BOL for s in p.program.states)
                             for runner, p in zip(runners, plans))
        # a key with nothing held keeps its meta row (MATCH_NUMBER, ^ or PREV read across idle gaps)
        self.tail = any(reads_across_gaps(p, lookback(p)) for p in plans)

    def _output(self, matches: list) -> list:
        super()._output([m for m in matches if m.number > self.emitted])
        return [()] * len(matches)

    def run(self, rows: pa.Table, dropped: int, numbers: list | None, emitted: int, horizon: int, ended: bool):
        """Read ``rows`` (a key's rows from its quiet point; ``dropped`` rows before them, the
        layers' MATCH_NUMBERs ``numbers`` there, ``emitted`` top matches emitted), the rows to
        come lying past ``horizon``: (output batch or None, the last quiet point in ``rows``,
        the MATCH_NUMBERs there, the top's matches emitted after them, when the watermark next
        closes a window holding a layer back (microseconds, None: never))."""
        self.reset()
        self.key = rows.select(self.keys).slice(0, 1)
        self.row_base = dropped
        matchers = self.matchers
        if numbers is not None:
            for matcher, number in zip(matchers, numbers):
                matcher.match_number = number
        self.emitted = emitted
        quiet, at_quiet = 0, [m.match_number for m in matchers]
        for batch in rows.to_batches(max_chunksize=CHUNK):
            self._append(batch)
            if self.trims and not ended and self._quiet():
                quiet, at_quiet = self.stack.size, [m.match_number for m in matchers]
        if ended:
            self._located(self.stack.finish)
            return self._flush(), quiet, at_quiet, max(emitted, matchers[-1].match_number), None
        # every row is read: the windows the watermark closed are decided (only now: a chunk's
        # next rows may lie before it)
        self._located(self.stack.feed, 0, horizon)
        if self.trims and self._quiet():
            quiet, at_quiet = self.stack.size, [m.match_number for m in matchers]
        closes = [window_close(m, resume_point(m).row, horizon, every_run=True) for m in matchers]
        wake = min((c for c in closes if c is not None), default=None)
        # (a replay may not reach a match an earlier watermark decided: a layer it reads now
        # holds a run that the window, closed for the match, does not decide)
        return self._flush(), quiet, at_quiet, max(emitted, matchers[-1].match_number), wake

    def _quiet(self) -> bool:
        """Does the stack hold nothing a later row could still use?"""
        stack = self.stack
        return all(stack.decided(i) and not held and not released and (not layer.reads_rows or fed == stack.size)
                   for i, (layer, held, released, fed) in enumerate(zip(stack.layers, stack.held, stack.released,
                                                                        stack.rows_fed)))


class LayeredStepper(ShardStepper):
    """``ShardStepper`` for a plan with LAYERs: each stepped key runs ``StreamedHierarchy``
    (see the module docstring for its held rows)."""

    held_extra = (pa.field(LAYERS, pa.list_(pa.int64())),)

    def _engine(self, plan: EnginePlan) -> None:
        self.runner = StreamedHierarchy(plan, self.output_schema)
        self.tail = self.runner.tail

    def _pending(self, new: pa.Table) -> pa.Table:
        return super()._pending(new).append_column(LAYERS, pa.nulls(new.num_rows, pa.list_(pa.int64())))

    def _meta_columns(self, metas: list) -> list:
        return [pa.array([numbers for _, _, numbers in metas], pa.list_(pa.int64()))]

    def _step(self, table: pa.Table, horizon: int, ended: bool) -> Step:
        starts, ends, pos, times, has_meta, pending, released, kept, fresh, meta = self._keys(table, horizon, ended)
        numbers = table.column(LAYERS)
        inputs = table.select(self.input_schema.names)
        outputs, pieces, positions, metas = [], [], [], []
        deadlines = []  # of the keys held, when a window closes (NONE: never)
        for s in range(len(starts)):
            lo, hi = int(starts[s]), int(ends[s])
            first, k, f = lo + int(has_meta[s]), int(kept[s]), int(fresh[s])
            due = k > 0 and NONE != meta["deadline"][s] <= horizon  # (a window closed on a run it holds)
            if not f and not due and not ended:
                pieces.append(np.arange(lo, hi))
                positions.append(pos[lo:hi])
                deadlines.append(meta["deadline"][s])
                continue
            if ended and not k + f:
                continue  # (a meta row alone: its key is done)
            dropped, emitted = int(meta["dropped"][s]), int(meta["number"][s])
            output, quiet, at_quiet, emitted, deadline = self.runner.run(
                inputs.slice(first, k + f), dropped, numbers[lo].as_py() if has_meta[s] else None, emitted,
                horizon, ended)
            if output is not None:
                outputs.append(output)
            if ended:
                continue
            waiting = hi - (first + k + f)  # rows not released
            keep = k + f - quiet
            if not keep and not waiting and not self.tail:
                continue  # the key can no longer contribute: its state goes
            deadline = NONE if deadline is None else deadline
            deadlines.append(deadline)
            metas.append((lo, (dropped + quiet, 0, emitted, -1, horizon, deadline), at_quiet))
            keep_key(pieces, positions, len(metas), np.arange(first + quiet, first + k + f), hi, waiting)
        output = pa.concat_batches(outputs) if outputs else None
        held = self._held(table, pieces, positions, [(lo, values) for lo, values, _ in metas],
                          self._meta_columns(metas) if metas else [])
        if held is None:
            return Step(None, output, None, None)
        return Step(Shard(held, horizon), output, None, timer_ms(times[pending & ~released], deadlines))
