"""Flat sequences whose conditions read the match state, decided for many start rows at once.

In standard semantics the match of a start row depends on that row and the data only, so the
matches of all start rows can be computed together: one *lane* per start row, all lanes
advanced one row per step with numpy (``match.vector`` evaluates the conditions), and AFTER
MATCH SKIP then chains the lanes' outcomes, as ``match.runs`` does for masks.

A lane walks the first path of preferment order: a greedy element goes on while its condition
holds (up to its maximum), then the next element must take the row; a reluctant one hands the
row to the next element when it can.  If that walk reaches the end of the pattern, its match is
the preferred one.  If it fails, the match is that of some path branching off where the walk
chose one of two viable moves; a lane that chose so is left to the Pike VM (``StandardMatcher``,
which asks this tier first), as is a lane whose conditions ``match.vector`` cannot vouch for
or that reads more than ``LONG`` rows.
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

import numpy as np

from ..plan import SkipMode
from .runs import block, skip_past_last
from .standard import StandardMatcher, Tier, Verdict
from .vector import Compiler, Unsupported, View, column_array

LONG = 128  # rows a lane reads before its start row is left to the Pike VM
FIRST_CHUNK, CHUNK = 2048, 1 << 16  # start rows decided by the first pass, by each later one
STEP_COST = 4  # lane steps that cost at most one thread step of the Pike VM (measured: 5-8)
SAMPLE = 256  # rows the Pike VM advances the chain by before its thread steps per row count
SKIM, SKIM_MIN = 32768, 4  # lanes x rows ahead a skim evaluates at most; rows ahead it reads at least


class Outcome(IntEnum):
    MATCH = 1
    NONE = 2  # no match from this start row
    VM = 3  # the Pike VM decides this start row
    OPEN = 4  # undecided until more rows arrive


class Element(NamedTuple):
    """One element of the sequence: its quantifier, and its condition as a mask name (or
    None) and ``fn(view) -> (holds, unsure)`` (or None)."""
    var: int
    min: int
    max: int
    greedy: bool
    mask: str | None
    holds: object


class LaneProgram(NamedTuple):
    elements: tuple
    aggs: tuple  # ``vector.Fold``s, in ``View.aggs`` order
    columns: dict  # name -> Spark type


def lane_program(sequence: tuple, conditions) -> LaneProgram | None:
    """The sequence's conditions compiled over lanes, or None outside ``match.vector``'s subset
    (a variable twice in the sequence, an UNTIL, an expression it does not cover)."""
    index = {item.var: k for k, item in enumerate(sequence)}
    if len(index) < len(sequence) or conditions.until:
        return None
    compiler, elements = Compiler(index), []
    for item in sequence:
        condition = conditions.define.get(item.var)
        try:
            holds = compiler.condition(condition.expr) if condition is not None and condition.expr is not None else None
        except Unsupported:
            return None
        elements.append(Element(item.var, item.min, item.max if item.max is not None else 1 << 62, item.greedy,
                                condition.mask if condition is not None else None, holds))
    return LaneProgram(tuple(elements), tuple(compiler.aggs), compiler.columns)


class Decided(NamedTuple):
    """The outcomes of start rows ``lo`` .. ``lo + len(kind) - 1``: ``end`` and ``takes`` (rows
    per element) of each MATCH."""
    lo: int
    kind: np.ndarray
    end: np.ndarray
    takes: np.ndarray
    limit: int  # the rows before it were read
    final: bool  # the partition was complete


class LaneTier(Tier):
    """Decides start rows by lanes (standard semantics, AFTER MATCH SKIP PAST LAST ROW or TO NEXT
    ROW); passes to the Pike VM the start rows the lanes leave to it, and the whole partition
    once its data leaves ``match.vector``'s subset (a NULL, a NaN)."""

    def __init__(self, lanes: LaneProgram, sequence: tuple, rows, options):
        self.lanes = lanes
        self.sequence = sequence
        self.rows = rows
        self.options = options
        # lane steps walked, and rows the chain advanced over them; thread steps of the Pike VM,
        # and rows it advanced the chain by (kept across partitions: where the lanes cost more
        # than the Pike VM on this query's data, they stay off)
        self.lane_steps = self.advanced = self.vm_steps = self.vm_rows = 0

    def reset(self):
        self.columns = {name: column_array([], type_) for name, type_ in self.lanes.columns.items()}
        self.masks = {e.mask: np.zeros(0, dtype=bool) for e in self.lanes.elements if e.mask is not None}
        self.held = 0  # rows converted to arrays
        self.decided = None
        self.off = False  # the Pike VM decides the rest of the partition
        self.vm_start = None  # the start row the Pike VM is deciding

    def rebase(self, shift: int):
        self.columns = {name: values[shift:] for name, values in self.columns.items()}
        self.masks = {name: mask[shift:] for name, mask in self.masks.items()}
        self.held = max(0, self.held - shift)
        if self.vm_start is not None:
            self.vm_start -= shift
        if self.decided is not None:
            d = self.decided
            self.decided = d._replace(lo=d.lo - shift, end=d.end - shift, limit=d.limit - shift)

    def _sync(self):
        size, held = self.rows.size, self.held
        if held == size:
            return
        for name, type_ in self.lanes.columns.items():
            self.columns[name] = np.concatenate([self.columns[name], column_array(self.rows.values[name][held:], type_)])
        for name in self.masks:
            more = np.frombuffer(self.rows.masks[name], dtype=np.uint8, count=size - held, offset=held).astype(bool)
            self.masks[name] = np.concatenate([self.masks[name], more])
        self.held = size

    def decide(self, m: StandardMatcher, out) -> Verdict:
        """Decide start rows from ``m.start`` on by their lanes' outcomes."""
        if self.vm_start is not None:  # the Pike VM decided the start rows from there on
            self.vm_steps += m.steps
            self.vm_rows += m.start - self.vm_start
            self.vm_start = None
        if self.off:
            return Verdict.PASS
        try:
            self._sync()
        except Unsupported:
            self.off = True
            return Verdict.PASS
        past_last = self.options.skip.mode is SkipMode.PAST_LAST_ROW
        while True:
            start, limit, final = m.start, m.limit(), m.finished
            if start >= limit:
                return Verdict.WAIT
            d = self.decided
            if d is None or not d.lo <= start < d.lo + len(d.kind) or d.kind[start - d.lo] == Outcome.OPEN:
                if self.lane_steps > STEP_COST * self._vm_cost() * self.advanced + FIRST_CHUNK:
                    # lanes of start rows the chain skips may cost more than the Pike VM: once
                    # it has decided enough rows to tell, it takes the query if they do
                    self.off = self.vm_rows >= SAMPLE
                    self.vm_start = start
                    return Verdict.PASS
                chunk = CHUNK if self.advanced else FIRST_CHUNK
                d = self.decided = self._walk(start, min(limit, start + chunk), limit, final)
            chosen, stop = _kept_outcomes(d.kind, start - d.lo, d.end - d.lo, past_last)
            if len(chosen):
                ends = d.end[chosen]
                out.append(block(self.sequence, chosen + d.lo, ends, d.takes[chosen], m.match_number + 1))
                m.match_number += len(chosen)
                m.covered = max(m.covered, int(ends.max()))
            m.start = stop + d.lo
            self.advanced += m.start - start
            if stop < len(d.kind):
                if d.kind[stop] == Outcome.VM:
                    self.vm_start = m.start
                    return Verdict.PASS
                if (d.limit, d.final) == (limit, final):
                    return Verdict.WAIT  # OPEN: wait for rows (else decide it again, over the rows now held)

    def _vm_cost(self) -> float:
        """Thread steps of the Pike VM per row it advances the chain by (1 until measured)."""
        return self.vm_steps / self.vm_rows if self.vm_rows >= SAMPLE else 1.0

    def _walk(self, lo: int, hi: int, limit: int, final: bool) -> Decided:
        """Walk the lanes of start rows ``lo`` .. ``hi`` - 1 over the rows before ``limit``
        (``final``: they are the whole partition)."""
        elements, aggs = self.lanes.elements, self.lanes.aggs
        last, size = len(elements) - 1, self.rows.size
        n = hi - lo
        kind, end = np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int64)
        takes = np.zeros((n, last + 1), dtype=np.int64)
        reach = min(LONG, self.options.limits.match_rows)
        # per element: the last row a lane in it may read (every later element's mask must hold
        # on a row at or after it), once the partition is complete
        deadline = np.full(last + 1, size)
        if final:
            hit = {name: (int(np.flatnonzero(mask)[-1]) if mask.any() else -1) for name, mask in self.masks.items()}
            deadline[:] = [min([hit[e.mask] for e in elements[k + 1:] if e.mask is not None], default=size)
                           for k in range(last + 1)]
        zeros = (np.zeros(n, dtype=np.int64),) * (last + 1)  # (never written in place)
        lanes = _Lanes(np.arange(n), np.arange(lo, hi), np.zeros(n, dtype=np.int64), zeros, zeros,
                       np.zeros(n, dtype=bool), [fold.initial(n) for fold in aggs])
        min_last, greedy_last = elements[last].min, elements[last].greedy
        while len(lanes.lane):
            self.lane_steps += len(lanes.lane)
            lane, row, elem, count, branched = lanes.lane, lanes.row, lanes.elem, lanes.count, lanes.branched
            fail = np.where(branched, Outcome.VM, Outcome.NONE)
            # outcomes decided before the row is read
            accept = (elem == last) & (count[last] >= min_last)
            if greedy_last:
                accept &= (row >= size) if final else False
            fate = np.where(accept, Outcome.MATCH, np.where(
                row >= limit, Outcome.OPEN if not final else fail, np.where(
                    row - lane - lo >= reach, Outcome.VM, np.where(row > deadline[elem], fail, 0))))
            lanes = self._settle(lanes, fate, kind, end, takes)
            if not len(lanes.lane):
                break
            lanes = self._read(lanes, kind, end, takes)
            if 0 < len(lanes.lane) * SKIM_MIN <= SKIM:
                # (the rows a lane may read before one of the outcomes above is due)
                stop = np.minimum(np.minimum(limit, lanes.lane + lo + reach), deadline[lanes.elem] + 1)
                lanes = self._skim(lanes, stop)
        return Decided(lo, kind, end, takes, limit, final)

    def _read(self, lanes, kind, end, takes):
        """Every lane reads its row: it goes on in its element or moves to the next one, or its
        outcome is recorded (it then ends before the row).  The lanes that went on."""
        elements, last = self.lanes.elements, len(self.lanes.elements) - 1
        went_on = []
        for k, element in enumerate(elements):
            g = np.flatnonzero(lanes.elem == k)
            if not len(g):
                continue
            r, first, count = lanes.row[g], [f[g] for f in lanes.first], [c[g] for c in lanes.count]
            states = [tuple(part[g] for part in state) for state in lanes.states]
            c = count[k]
            stay = self._option(k, r, first, count, states, c < element.max)
            branched = lanes.branched[g]
            if k < last:
                on = self._option(k + 1, r, first, count, states, c >= element.min)
                preferred, other = (stay, on) if element.greedy else (on, stay)
                went, unsure, accept = stay.ok | on.ok, stay.unsure | on.unsure, False
                branched = branched | (stay.ok & on.ok)
            else:
                preferred = other = stay
                went, unsure, accept = stay.ok, stay.unsure, ~stay.ok & (c >= element.min)
            fail = np.where(branched, Outcome.VM, Outcome.NONE)
            fate = np.where(unsure, Outcome.VM, np.where(went, 0, np.where(accept, Outcome.MATCH, fail)))
            done = fate != 0
            if done.any():
                _record(kind, end, takes, lanes.lane[g[done]], fate[done], r[done], [column[done] for column in count])
            keep = ~done
            if not keep.any():
                continue
            pick = None if other is preferred else preferred.ok[keep]  # else the other was taken

            def taken(a, b):
                return a[keep] if a is b or pick is None else np.where(pick, a[keep], b[keep])

            g = g[keep]
            went_on.append(_Lanes(
                lanes.lane[g], r[keep] + 1, np.where(pick, preferred.element, other.element) if pick is not None
                else np.full(len(g), preferred.element),
                tuple(map(taken, preferred.first, other.first)), tuple(map(taken, preferred.count, other.count)),
                branched[keep], [tuple(map(taken, p, o)) for p, o in zip(preferred.states, other.states)]))
        if len(went_on) == 1:
            return went_on[0]
        if not went_on:
            return _subset(lanes, np.zeros(len(lanes.lane), dtype=bool))
        return _Lanes(*(np.concatenate([getattr(part, name) for part in went_on])
                        for name in ("lane", "row", "elem")),
                      *(tuple(map(np.concatenate, zip(*(getattr(part, name) for part in went_on))))
                        for name in ("first", "count")),
                      np.concatenate([part.branched for part in went_on]),
                      [tuple(map(np.concatenate, zip(*parts))) for parts in zip(*(part.states for part in went_on))])

    def _skim(self, lanes: "_Lanes", stop) -> "_Lanes":
        """Lanes in a greedy loop element that stay in it on each of their next rows (before
        ``stop``) advance over those rows at once: the rows ahead are evaluated together, as
        ``_read`` would one by one, up to the first row where the lane would leave the element,
        end, or not be vouched for (``_read`` then reads that row).  A row where the next
        element could have taken it too marks the lane ``branched``."""
        width = min(SKIM // len(lanes.lane), LONG)
        ahead = np.arange(width)
        elements, aggs, last = self.lanes.elements, self.lanes.aggs, len(self.lanes.elements) - 1
        row, count, branched, states = lanes.row, list(lanes.count), lanes.branched, list(lanes.states)
        for k, element in enumerate(elements):
            if not element.greedy or element.max == 1:
                continue
            g = np.flatnonzero((lanes.elem == k) & (count[k] >= 1))
            if not len(g):
                continue
            room = np.minimum(stop[g] - row[g], element.max - count[k][g])  # rows it may stay for
            g, room = g[room > 0], room[room > 0]
            if not len(g):
                continue
            r, c = row[g], count[k][g]
            inside = ahead < room[:, None]
            steps = np.minimum(ahead, (room - 1)[:, None])  # (a lane's rows past its room repeat its last)
            first = [f[g][:, None] for f in lanes.first]
            before = [part[:, None] for part in (cnt[g] for cnt in count)]
            view = View(r[:, None] + steps, first, [*before[:k], c[:, None] + steps + 1, *before[k + 1:]], [],
                        self.columns, self.rows.size)
            held = [tuple(part[g] for part in state) for state in states]  # the lanes' aggregates
            # per aggregate: its states after each row ahead (None: element k leaves it alone)
            folded = [fold.accumulate(state, view) if k in fold.members else None for fold, state in zip(aggs, held)]
            if any(grown is None and k in fold.members for fold, grown in zip(aggs, folded)):
                continue  # (an argument that may be NULL: read row by row)
            stay_ok, stay_unsure = self._holds(element, view._replace(aggs=[
                grown if grown is not None else tuple(part[:, None] for part in state)
                for grown, state in zip(folded, held)]), inside)
            go = stay_ok & ~stay_unsure
            if k < last:
                on_ok, on_unsure = self._skim_on(k, view, c, steps, folded, held)
                go &= ~on_unsure
            blocked = ~go
            n = np.where(blocked.any(axis=1), blocked.argmax(axis=1), width)  # rows each lane stays for
            moved = np.flatnonzero(n)
            if not len(moved):
                continue
            n, g = n[moved], g[moved]
            self.lane_steps += int(n.sum())
            row = row.copy()
            row[g] += n
            count[k] = count[k].copy()
            count[k][g] += n
            if k < last:
                branched = branched.copy()
                branched[g] |= (stay_ok[moved] & on_ok[moved] & (ahead < n[:, None])).any(axis=1)
            for a, grown in enumerate(folded):
                if grown is not None:
                    states[a] = tuple(part.copy() for part in states[a])
                    for part, values in zip(states[a], grown):
                        part[g] = values[moved, n - 1]
        return lanes._replace(row=row, count=tuple(count), branched=branched, states=states)

    def _skim_on(self, k: int, view: View, c, steps, folded: list, held: list):
        """(ok, unsure) of element ``k + 1`` taking each row ahead of ``view``'s lanes, in element
        ``k`` with ``c`` rows before the first of them (``steps`` rows before each), aggregates
        ``held`` before the first and ``folded`` after each."""
        element = self.lanes.elements[k]
        first, count = list(view.first), list(view.count)
        count[k] = c[:, None] + steps  # (the rows before the one read)
        first[k + 1] = np.where(count[k + 1] == 0, view.row, first[k + 1])
        count[k + 1] = count[k + 1] + 1
        on_view = view._replace(first=first, count=count)
        on_states = []
        for fold, grown, state in zip(self.lanes.aggs, folded, held):
            if grown is None:  # (the aggregate leaves element k out)
                prior = tuple(part[:, None] for part in state)
            else:  # its state before each row ahead
                prior = tuple(np.concatenate([part[:, None], values[:, :-1]], axis=1) for part, values in zip(state, grown))
            on_states.append(fold.add(prior, on_view) if k + 1 in fold.members else prior)
        return self._holds(self.lanes.elements[k + 1], on_view._replace(aggs=on_states), count[k] >= element.min)

    def _holds(self, element: Element, view: View, allowed):
        """(ok, unsure) of ``element`` taking ``view``'s rows (its aggregates with them folded
        in), where ``allowed``."""
        ok = allowed
        if element.mask is not None:
            ok = ok & self.masks[element.mask][view.row]
        unsure = np.zeros(ok.shape, dtype=bool)
        if element.holds is not None and ok.any():
            holds, doubt = element.holds(view)
            if doubt is not None:
                unsure = doubt & ok
            ok = ok & holds & ~unsure
        return ok, unsure

    @staticmethod
    def _settle(lanes, fate, kind, end, takes):
        """Record the outcomes ``fate`` (0: undecided) and keep the undecided lanes."""
        done = fate != 0
        if not done.any():
            return lanes
        _record(kind, end, takes, lanes.lane[done], fate[done], lanes.row[done],
                [column[done] for column in lanes.count])
        return _subset(lanes, ~done)

    def _option(self, k: int, r, first: list, count: list, states: list, allowed) -> "_Option":
        """Lanes at rows ``r`` (their ``first`` / ``count`` per element, aggregate ``states``)
        mapping their row to element ``k``, where ``allowed``.  The arrays of the elements and
        aggregates the row leaves alone are shared with the lanes'."""
        element = self.lanes.elements[k]
        if not allowed.any():
            return _Option(k, allowed, allowed, first, count, states)
        first, count = list(first), list(count)
        first[k] = np.where(count[k] == 0, r, first[k])
        count[k] = count[k] + 1
        view = View(r, first, count, [], self.columns, self.rows.size)
        states = [fold.add(state, view) if k in fold.members else state
                  for fold, state in zip(self.lanes.aggs, states)]
        ok, unsure = self._holds(element, view._replace(aggs=states), allowed)
        return _Option(k, ok, unsure, first, count, states)


class _Lanes(NamedTuple):
    """The undecided lanes: ``lane`` (index of its start row), the ``row`` it reads next, its
    element ``elem``, ``first`` / ``count`` (per element, an array over the lanes), ``branched``
    (it passed a row where another move was viable too), the aggregates' ``states``."""
    lane: np.ndarray
    row: np.ndarray
    elem: np.ndarray
    first: tuple
    count: tuple
    branched: np.ndarray
    states: list


def _record(kind, end, takes, ids, fate, rows, counts: list):
    """Record outcome ``fate`` of lanes ``ids``, which end before their ``rows`` with ``counts``
    rows per element."""
    kind[ids] = fate
    end[ids] = rows - 1
    takes[ids] = np.stack(counts, axis=1)


def _subset(lanes: _Lanes, keep) -> _Lanes:
    return _Lanes(lanes.lane[keep], lanes.row[keep], lanes.elem[keep], tuple(f[keep] for f in lanes.first),
                  tuple(c[keep] for c in lanes.count), lanes.branched[keep],
                  [tuple(part[keep] for part in state) for state in lanes.states])


class _Option(NamedTuple):
    """A move of lanes to ``element``: where it is taken (``ok``), where the vector evaluation
    cannot vouch for it (``unsure``), and the lanes' placement and aggregates after it."""
    element: int
    ok: np.ndarray
    unsure: np.ndarray
    first: list
    count: list
    states: list


def _kept_outcomes(kind: np.ndarray, at: int, ends: np.ndarray, past_last: bool):
    """(the indexes of the MATCH outcomes AFTER MATCH SKIP keeps from index ``at`` on, the
    index of the first outcome it reaches that is not decided by lanes, or ``len(kind)``)."""
    stop_mask = (kind == Outcome.VM) | (kind == Outcome.OPEN)
    if not past_last:
        stops = np.flatnonzero(stop_mask[at:])
        stop = at + int(stops[0]) if len(stops) else len(kind)
        return np.flatnonzero(kind[at:stop] == Outcome.MATCH) + at, stop
    candidates = np.flatnonzero(kind[at:] != Outcome.NONE) + at
    chosen, k = skip_past_last(candidates, ends, stop_mask[candidates])
    if k < len(candidates):
        return chosen, int(candidates[k])
    return chosen, max(len(kind), int(ends[chosen[-1]]) + 1) if len(chosen) else len(kind)
