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

import numpy as np

from .evaluate import ACCEPT

MAX_MASKS = 16
MAX_STATES = 10_000  # memoized DFA states kept; the memo is flushed beyond (as RE2 does)


class _State:
    __slots__ = ("threads", "initial", "moves", "waits_end")

    def __init__(self, threads: tuple, initial: bool, waits_end: bool):
        self.threads = threads  # DST consume / eol states, in priority order
        self.initial = initial  # no row consumed yet (a run never starts by ignoring a row)
        self.waits_end = waits_end  # a thread waits at '$' (accepts at the partition end)
        self.moves: dict = {}  # symbol -> (next _State | None, accept record | None, parents)


class LazyDFA:
    """Built from a Matcher's compiled DST; ``None`` from ``build`` when not applicable."""

    @classmethod
    def build(cls, matcher, program: dict, conditions):
        literals: dict = {}  # (kind, var) -> bit

        def bits(formula):
            kind = formula[0]
            if kind == "true":
                return True
            if kind in ("def", "until"):
                spec = (conditions.define if kind == "def" else conditions.until).get(formula[1])
                if spec is None:
                    return True
                if spec[1] is not None:
                    return False  # reads match state
                literals.setdefault(spec[0], len(literals))
                return True
            return all(bits(f) for f in formula[1:])

        for state in program["states"]:
            if state[0] in ("peek", "expire"):
                return None
            if state[0] == "consume":
                for guard, stop, *_ in state[1]:
                    if not bits(guard) or (stop is not None and not bits(stop)):
                        return None
        if len(literals) > MAX_MASKS:
            return None
        return cls(matcher, program, conditions, literals)

    def __init__(self, matcher, program, conditions, literals: dict):
        self.closure = matcher.closure
        self.start_state = program["start"]
        self.kind = [s[0] for s in program["states"]]
        self.masks = list(literals)  # bit i = mask self.masks[i]
        self.rows = conditions.rows

        def compile_guard(formula):
            kind = formula[0]
            if kind == "true":
                return lambda sym: True
            if kind in ("def", "until"):
                spec = (conditions.define if kind == "def" else conditions.until).get(formula[1])
                if spec is None:
                    return lambda sym: True
                bit = 1 << literals[spec[0]]
                return lambda sym: sym & bit != 0
            parts = [compile_guard(f) for f in formula[1:]]
            if kind == "not":
                return lambda sym: not parts[0](sym)
            if kind == "and":
                return lambda sym: all(p(sym) for p in parts)
            return lambda sym: any(p(sym) for p in parts)

        self.transitions = [
            tuple((compile_guard(g), compile_guard(st) if st else None, var, excl, target)
                  for g, st, var, excl, target in s[1]) if s[0] == "consume" else ()
            for s in program["states"]]
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
                    # the next row may be missing (partition end): keep the start when it ends here
        return alive, alive2

    def reset(self):
        self.symbols.clear()
        self.starts.clear()

    def sync(self):
        """Symbols and candidate starts of the rows appended since the last call (vectorized)."""
        have, size = len(self.symbols), self.rows.size
        if have >= size:
            return
        sym = np.zeros(size - have, dtype=np.uint32)
        for bit, name in enumerate(self.masks):
            mask = np.frombuffer(self.rows.masks[name], dtype=np.uint8, count=size - have, offset=have)
            sym |= mask.astype(np.uint32) << bit
        self.symbols.extend(sym.tolist())
        candidates = self.alive[sym]
        if self.alive2 is not None:
            # look one row ahead; the last row's successor is not known yet, so keep it
            candidates[:-1] &= self.alive2[sym[:-1], sym[1:]]
        self.starts.extend((np.flatnonzero(candidates) + have).tolist())

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
            state = self.states[key] = _State(threads, initial, any(self.kind[s] == "eol" for s in threads))
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
