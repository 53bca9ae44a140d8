"""A lazily built DFA for standard semantics when every condition is a precomputed mask.

Then a run's future depends only on its DST state, so the priority-ordered list of live
states of one start (after thread equivalence) is a DFA state, and a row is just the bitmask
of its condition masks (its *symbol*).  Transitions are computed on first use by the same
stepping rules as the Pike VM and memoized, so matching a start costs one dict lookup per
row.  Each transition also records, for every thread it produces, which thread it came from
and what the row was mapped to, so the preferred match's classification is rebuilt by
walking back from the accepting thread.  Rows that start no match are skipped with a
vectorized filter on the first symbol.
"""
from __future__ import annotations

import bisect

import numpy as np

from ..plan import SkipMode
from ..program import ACCEPT, Kind, Program, fold_guard, literals
from ..rows import Match, unmatched as report_unmatched
from .conditions import Conditions
from .standard import StandardMatcher, Tier, Verdict

MAX_MASKS = 16
MAX_STATES = 10_000  # memoized DFA states kept; the memo is flushed beyond (as RE2 does)


class _State:
    __slots__ = ("threads", "initial", "moves", "waits_end")

    def __init__(self, threads: tuple, initial: bool, waits_end: bool):
        self.threads = threads  # DST consume / eol states, in priority order
        self.initial = initial  # no row consumed yet (a run never starts by ignoring a row)
        self.waits_end = waits_end  # a thread waits at '$' (accepts at the partition end)
        self.moves: dict = {}  # symbol -> (next _State | None, accept record | None, parents)


def dfa_masks(program: Program, conditions: Conditions) -> list | None:
    """The mask columns a DFA over ``program`` reads (bit i = mask i), or None when a
    condition reads match state, a state waits on the next row, or there are too many."""
    masks: dict = {}
    for state in program.states:
        if state.kind in (Kind.PEEK, Kind.EXPIRE):
            return None
        for t in state.transitions:
            for guard in (t.guard, t.stop):
                for literal in literals(guard) if guard is not None else ():
                    condition = conditions.of(literal)
                    if condition is None:
                        continue
                    if condition.expr is not None:
                        return None
                    masks.setdefault(condition.mask, len(masks))
    return list(masks) if len(masks) <= MAX_MASKS else None


class LazyDFA:
    def __init__(self, program: Program, conditions: Conditions, closure, masks: list):
        self.closure = closure  # the Pike VM's epsilon closures (not at the partition start)
        self.start_state = program.start
        self.kind = [s.kind for s in program.states]
        self.masks = masks
        self.rows = conditions.rows
        bits = {name: 1 << i for i, name in enumerate(masks)}

        def symbol_test(literal):
            condition = conditions.of(literal)
            if condition is None:
                return None
            bit = bits[condition.mask]
            return lambda sym: sym & bit != 0

        def compile_guard(guard):
            fn = fold_guard(guard, true=None, literal=symbol_test,
                            not_=lambda p: (lambda sym: False) if p is None else (lambda sym: not p(sym)),
                            all_=lambda ps: _combine(all, ps), some=lambda ps: _combine(any, ps))
            return fn or (lambda sym: True)

        self.transitions = [
            tuple((compile_guard(t.guard), compile_guard(t.stop) if t.stop is not None else None,
                   t.var, t.excluded, t.target) for t in s.transitions)
            for s in program.states]
        self.states: dict = {}
        self.initial = [self._initial(at_start) for at_start in (False, True)]
        self.symbols: list = []  # per partition row
        self.starts: list = []  # rows (> 0) where a non-empty match may begin, ascending
        self.alive, self.alive2 = self._start_filters()

    def _start_filters(self):
        """Tables over the symbols of a start row (and of the row after it): can a match begin
        there?  The two-row table is built only while it stays small."""
        width = 1 << len(self.masks)
        alive = np.zeros(width, dtype=bool)
        alive2 = np.zeros((width, width), dtype=bool) if width <= 256 else None
        state, _ = self.initial[False]
        if state is None:
            return alive, alive2
        for sym in range(width):
            nxt, accept, _ = self.move(state, sym)
            alive[sym] = nxt is not None or accept is not None
            if alive2 is not None and alive[sym]:
                if accept is not None or nxt is None:
                    alive2[sym, :] = True
                else:
                    for sym2 in range(width):
                        after, accept2, _ = self.move(nxt, sym2)
                        alive2[sym, sym2] = after is not None or accept2 is not None
        return alive, alive2

    def reset(self):
        self.symbols.clear()
        self.starts.clear()

    def rebase(self, shift: int):
        del self.symbols[:shift]
        kept = bisect.bisect_left(self.starts, shift)
        self.starts[:] = [s - shift for s in self.starts[kept:]]

    def sync(self):
        """Symbols and candidate starts of the rows appended since the last call (vectorized)."""
        have, size = len(self.symbols), self.rows.size
        if have >= size:
            return
        sym = self.symbols_of({name: np.frombuffer(self.rows.masks[name], dtype=np.uint8, count=size - have,
                                                   offset=have) for name in self.masks}, size - have)
        self.symbols.extend(sym.tolist())
        self.starts.extend((np.flatnonzero(self.candidates(sym)) + have).tolist())

    def symbols_of(self, masks: dict, count: int) -> np.ndarray:
        """The symbol of each of ``count`` rows, from their masks (name -> array of 0/1)."""
        sym = np.zeros(count, dtype=np.uint32)
        for bit, name in enumerate(self.masks):
            sym |= masks[name].astype(np.uint32) << bit
        return sym

    def candidates(self, sym: np.ndarray, last=None) -> np.ndarray:
        """Can a match begin at each row of symbols ``sym``?  One row ahead is looked at, but
        not past the last row nor past the rows flagged in ``last`` (whose next row is not
        known yet)."""
        candidates = self.alive[sym]
        if self.alive2 is not None and len(sym) > 1:
            ahead = self.alive2[sym[:-1], sym[1:]]
            if last is not None:
                ahead |= last[:-1]
            candidates[:-1] &= ahead
        return candidates

    def _intern(self, threads: tuple, initial: bool) -> _State | None:
        if not threads:
            return None
        key = (threads, initial)
        state = self.states.get(key)
        if state is None:
            if len(self.states) >= MAX_STATES:
                for old in self.states.values():
                    old.moves.clear()
                self.states.clear()
            state = self.states[key] = _State(threads, initial, any(self.kind[s] is Kind.EOL for s in threads))
        return state

    def _initial(self, at_start: bool):
        threads, accept_empty = [], False
        for s in self.closure[at_start][self.start_state]:
            if s == ACCEPT:
                accept_empty = True
                break
            if s not in threads:
                threads.append(s)
        return self._intern(tuple(threads), True), accept_empty

    def move(self, state: _State, sym: int):
        """(next state, accept record, parents) for reading a row with symbol ``sym``.

        ``parents[i]`` = (index of the thread in ``state``, var, excluded) for thread i of the
        next state; the accept record has the same shape for the accepting transition."""
        found = state.moves.get(sym)
        if found is not None:
            return found
        threads, parents, seen = [], [], set()
        accept = None
        for origin, current in enumerate(state.threads):
            for guard, stop, var, excluded, target in self.transitions[current]:
                if not guard(sym) or (stop is not None and stop(sym)):
                    continue
                if var < 0 and state.initial:
                    continue
                for s in self.closure[False][target]:
                    if s == ACCEPT:
                        accept = (origin, var, excluded)
                        break
                    if s not in seen:
                        seen.add(s)
                        threads.append(s)
                        parents.append((origin, var, excluded))
                if accept is not None:
                    break
            if accept is not None:
                break
        found = (self._intern(tuple(threads), False), accept, tuple(parents))
        state.moves[sym] = found
        return found


def _combine(quantifier, parts):
    parts = [p or (lambda sym: True) for p in parts]
    return lambda sym: quantifier(p(sym) for p in parts)


class DfaTier(Tier):
    """Decides start rows with a ``LazyDFA``; the Pike VM takes a start whose threads wait at
    ``$`` when the partition ends."""

    def __init__(self, dfa: LazyDFA):
        self.dfa = dfa

    def reset(self):
        self.dfa.reset()
        self.state_deadlines: dict = {}

    def rebase(self, shift: int):
        self.dfa.rebase(shift)

    def _deadline(self, m: StandardMatcher, state) -> int:
        """The last row a DFA state can read and still accept from (complete partition)."""
        found = self.state_deadlines.get(state)
        if found is None:
            deadline = m.deadlines()
            found = self.state_deadlines[state] = max(deadline[t] for t in state.threads)
        return found

    def decide(self, m: StandardMatcher, out) -> Verdict:
        """Decide starts with the DFA, from ``m.start`` on, in one tight loop."""
        dfa = self.dfa
        dfa.sync()
        symbols, starts = dfa.symbols, dfa.starts
        options, rows = m.options, m.rows
        limit, size, finished = m.limit(), rows.size, m.finished
        unmatched, within, window = options.unmatched, options.within is not None, options.span
        simple_skip = options.skip.mode in (SkipMode.PAST_LAST_ROW, SkipMode.TO_NEXT_ROW)
        past_last = options.skip.mode is SkipMode.PAST_LAST_ROW
        move, order, span = dfa.move, rows.order, options.within
        initial, initial0 = dfa.initial[False], dfa.initial[True]
        start = m.start
        k = bisect.bisect_left(starts, start)
        while start < size:
            state, accept_empty = initial0 if start + rows.dropped == 0 else initial
            if start > 0 and not accept_empty:
                while k < len(starts) and starts[k] < start:
                    k += 1
                candidate = starts[k] if k < len(starts) else limit
                if candidate > start:
                    m.start = start
                    m.decide_unmatched(out, min(candidate, size))
                    start = candidate
                    if start >= limit:
                        break
            best = (start - 1, None, 0) if accept_empty else None
            trail, row, span_end = [], start, start + options.limits.match_rows
            first = order[start] if within else None
            while state is not None:
                if row >= limit:
                    if finished and not state.waits_end:
                        break  # the partition ended: the live threads can never accept
                    m.pos = row
                    if m.closed(start):
                        break  # no row to come lies in the window
                    m.start = start
                    return Verdict.PASS if finished else Verdict.WAIT
                if within and (first is None or order[row] is None or order[row] - first > span):
                    break  # ``row`` lies outside the WITHIN window (``Machine.within``)
                if window is not None and not window.admits(start, row):
                    break  # ... or the span from ``start`` to ``row`` (``spans.SpanWindow``)
                if finished and row > self._deadline(m, state):
                    break  # no thread can find the rows it still needs
                if row >= span_end:
                    m.check_span(start, row)
                sym = symbols[row]
                state, accept, parents = state.moves.get(sym) or move(state, sym)
                trail.append(parents)
                if accept is not None:
                    best = (row, accept, len(trail))
                row += 1
            m.start = start
            if best is None:
                if unmatched and start > m.covered:
                    report_unmatched(out, start, start + 1)
                start += 1
                continue
            end, accept, length = best
            found = []
            if accept is not None:
                origin, var, excluded = accept
                if var >= 0:
                    found.append((end, var, excluded))
                for j in range(length - 2, -1, -1):
                    origin, var, excluded = trail[j][origin]
                    if var >= 0:
                        found.append((start + j, var, excluded))
                found.reverse()
            found = tuple(found)
            if not simple_skip:
                m.decide(out, end, found)
                start = m.start
                continue
            m.match_number += 1
            out.append(Match(m.match_number, start, end, found))
            if end >= start:
                m.covered = max(m.covered, end)
                start = end + 1 if past_last else start + 1
            else:
                start += 1
        m.start = start
        return Verdict.WAIT
