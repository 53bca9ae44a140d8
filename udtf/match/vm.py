"""The stepping rules both output policies share: a ``Program`` bound to its conditions.

A *thread* is one run of the DST: (state, facts, chain).  ``facts`` are the running folds the
DEFINE conditions read (see ``udtf.expr.FactTable``); ``chain`` is the run's captured rows as
a parent-pointer list ``(row, var, excluded, parent)`` shared between forks (SASE's shared
buffer), so forking a run is O(1).  Epsilon closures are precomputed per state (EPSCLS).
"""
from __future__ import annotations

import numpy as np

from ..program import ACCEPT, WAITS, Kind, Program, closures, growing, literals, required
from ..plan import Semantics
from ..rows import Match, MatchKind
from .conditions import Conditions

CLASS_MASKS = 12  # masks that make up a row's class (further masks are read per run)
KEEP = "keep"  # the plan of a state whose runs ignore the row and stay as they are
DEAD = (False, ())  # the plan of a state that waits for no row and has no move over the row


class Machine:
    """Waiting states, epsilon closures, and the moves of a thread over one row: per state and
    row class, a plan with the masks' part of every guard decided (``plan``)."""

    def __init__(self, program: Program, conditions: Conditions, semantics: Semantics, within=None, span=None):
        self.rows = conditions.rows
        self.table = conditions.table
        self.within_limit = within  # max distance between first and last row, in ``rows.order`` units
        self.span = span  # or a WITHIN over the rows' intervals (``spans.SpanWindow``)
        self.stateful = bool(conditions.table.facts)
        self.initial_facts = conditions.table.initial
        self.start_state = program.start
        # (kind, guard, target) of a state that waits for the next row, else None
        self.holds = [(state.kind, conditions.guard(state.guard) if state.kind is Kind.PEEK else None, state.target)
                      if state.kind in WAITS else None for state in program.states]
        exits = semantics is Semantics.STANDARD
        self.closure = (closures(program, False, exits), closures(program, True, exits))
        self.need = required(program)
        self.growing = growing(program)  # per state: can a run in it still store a row
        # a variable's necessary row-level condition: its mask (None: any row may do)
        self.masks = {v: c.mask for v, c in conditions.define.items() if c.mask is not None}
        self.conditions = conditions
        self.program = program
        self.waiting = any(h is not None for h in self.holds)
        # the masks the transitions read: a row's class is their bits (``classes``)
        names: dict = {}
        for state in program.states:
            for t in state.transitions:
                for guard in (t.guard, t.stop):
                    for literal in literals(guard) if guard is not None else ():
                        condition = conditions.of(literal)
                        if condition is not None and condition.mask is not None:
                            names.setdefault(condition.mask, None)
        self.class_masks = list(names)[:CLASS_MASKS]
        self.plans: dict = {}  # row class -> the plan of each state (``plans_for``)
        self.dead_pairs: dict = {}  # (class, class) -> ``dead``
        # can two runs come to be in one state with the same rows captured (``FlinkMatcher``)?
        # Not when no state waits, every epsilon closure holds one state a run can be in, and no
        # state has two ignoring transitions or two that store a row alike: a row then extends
        # the rows of each run in its own way
        self.forks = self.waiting or any(
            sum(s != ACCEPT for s in closure) > 1 for table in self.closure for closure in table) or any(
            sum(t.var < 0 for t in state.transitions) > 1 or
            len({(t.var, t.excluded) for t in state.transitions if t.var >= 0}) <
            sum(t.var >= 0 for t in state.transitions) for state in program.states)

    def classes(self, lo: int, hi: int) -> list:
        """The class of rows ``lo`` to ``hi`` - 1: bit i = mask ``class_masks[i]`` (vectorized)."""
        return self.classes_of({name: np.frombuffer(self.rows.masks[name], dtype=np.uint8, count=hi - lo, offset=lo)
                                for name in self.class_masks}, hi - lo).tolist()

    def classes_of(self, masks: dict, count: int) -> np.ndarray:
        """The class of ``count`` rows from their masks (name -> array of 0/1)."""
        out = np.zeros(count, dtype=np.int64)
        for bit, name in enumerate(self.class_masks):
            out |= masks[name].astype(np.int64) << bit
        return out

    def dead(self, first: int, second: int) -> bool:
        """Does no run from the start state survive a row of class ``first`` followed by one
        of class ``second``, taking every residual condition as true (and none accepts or
        waits before)?  Then no match starts at a row of class ``first`` whose next row has
        class ``second`` (not at the partition start, where ``^`` may pass)."""
        key = (first, second)
        found = self.dead_pairs.get(key)
        if found is None:
            found = self.dead_pairs[key] = self._dead(first, second)
        return found

    def _dead(self, first: int, second: int) -> bool:
        entry = self.closure[False][self.start_state]
        if ACCEPT in entry or any(self.holds[s] is not None for s in entry):
            return False
        after: set = set()
        plans, then = self.plans_for(first), self.plans_for(second)
        for state in entry:
            plan = plans[state]
            for move in () if plan is KEEP else plan[1]:
                if move[1] >= 0:  # a run never starts with an ignored row
                    after.update(move[4])
        if ACCEPT in after or any(self.holds[s] is not None for s in after):
            return False
        return not any(then[s] is KEEP or then[s][1] for s in after)

    def plans_for(self, cls: int) -> list:
        """The plan of each state over a row of class ``cls`` (see ``plan``), memoized."""
        found = self.plans.get(cls)
        if found is None:
            found = self.plans[cls] = [self.plan(state, cls) for state in range(len(self.program.states))]
        return found

    def plan(self, state: int, cls: int):
        """The moves of a run in ``state`` over a row of class ``cls``, in priority order:
        KEEP (the one move ignores the row and stays in ``state``: the run is unchanged),
        DEAD (no move, and the state waits for no row: its runs end here; ``StandardMatcher``
        drops them without a step), or ``(tested, moves)``: each move ``(test, var, excluded,
        target, closure, fold)`` fires when ``test`` (None, or ``fn(row, facts, memo)``: the
        rest of its guard and stop, see ``Conditions.residual``) holds; ``closure`` = the
        epsilon closure of ``target``; ``fold(facts, row)`` folds a stored row (None: no
        facts; where the move's condition is its own variable's over the match state alone,
        ``Conditions.probe``: None where the condition fails); ``tested``: some move has a test
        (a fresh memo is needed)."""
        known = {name: bool(cls >> bit & 1) for bit, name in enumerate(self.class_masks)}
        conditions, moves = self.conditions, []
        transitions = self.program.states[state].transitions
        # (a literal two transitions read is evaluated once per run and row, through the memo)
        read = [lit for t in transitions for g in (t.guard, t.stop) if g is not None for lit in literals(g)]
        for t in transitions:
            probe = conditions.probe(t.guard, t.stop, t.var, known) if read.count(t.guard) == 1 else None
            if probe is False:
                continue
            if probe is not None:  # the condition's test and the move's fold in one
                moves.append((None, t.var, t.excluded, t.target, self.closure[False][t.target], probe))
                continue
            test = conditions.residual_move(t.guard, t.stop, known)
            if test is False:
                continue
            fold = self.table.folder(t.var) if t.var >= 0 and self.stateful else None
            moves.append((None if test is True else test, t.var, t.excluded, t.target,
                          self.closure[False][t.target], fold))
        if len(moves) == 1 and moves[0][0] is None and moves[0][1] < 0 and self.closure[False][moves[0][3]] == (state,):
            return KEEP
        if not moves and self.holds[state] is None:
            return DEAD
        return any(m[0] is not None for m in moves), tuple(moves)

    def deadlines(self) -> list:
        """Per state, the last row a run in it can still read and accept from, once the whole
        partition is in ``rows``: every variable the state needs must find a row whose mask
        holds at or after the run's next row (the linear-time cut of runs that cannot end)."""
        n, last = self.rows.size, {}
        for v, name in self.masks.items():
            hits = np.flatnonzero(np.frombuffer(self.rows.masks[name], dtype=np.uint8, count=n))
            last[v] = int(hits[-1]) if len(hits) else -1
        return [min((last[v] for v in need if v in last), default=n) for need in self.need]

    def add(self, state, facts, chain, at_start, out, seen, accept) -> bool:
        """Add the epsilon closure of ``state`` to ``out``; ``accept(facts, chain)`` returns True
        to cut everything of lower priority.  ``seen`` (or None) holds the (state, facts) keys
        already present: an equivalent thread of lower priority is dropped.  True when cut."""
        for s in self.closure[at_start][state]:
            if s == ACCEPT:
                if accept(facts, chain):
                    return True
                continue
            if seen is not None:
                key = (s, facts)
                if key in seen:
                    continue
                seen.add(key)
            out.append((s, facts, chain))
        return False

    def release(self, state, facts, chain, row, out, accept, expired=False, visited=frozenset()) -> bool:
        """Resolve a thread held before ``row`` is read.  ``row`` None: the partition ended, every
        hold passes; ``expired``: ``row`` lies beyond the run's WITHIN window, so a notNext or a
        trailing notFollowedBy passes but ``$`` does not.  The threads it releases go to ``out`` in
        priority order; ``accept(facts, chain)`` is called as in ``add``.  True when cut.  A
        hold reached again without reading a row is not resolved twice."""
        if state in visited:
            return False
        kind, guard, target = self.holds[state]
        if row is not None:
            if kind is Kind.EOL or (kind is Kind.EXPIRE and not expired):
                return False
            if kind is Kind.PEEK and not expired and guard is not None and not guard(row, facts):
                return False
        position = self.rows.size if row is None else row
        local: list = []
        cut = self.add(target, facts, chain, position + self.rows.dropped == 0, local, None, accept)
        visited = visited | {state}
        for s, f, c in local:
            if self.holds[s] is None:
                out.append((s, f, c))
            elif self.release(s, f, c, row, out, accept, expired, visited):
                return True
        return cut

    def within(self, start: int, row: int) -> bool:
        """Do ``start`` and ``row`` lie within the WITHIN window (always, without one)?"""
        if self.span is not None:
            return self.span.admits(start, row)
        if self.within_limit is None:
            return True
        first, last = self.rows.order[start], self.rows.order[row]
        return first is not None and last is not None and last - first <= self.within_limit

    def timed_out(self, threads) -> list:
        """The timed-out partial matches of ``threads`` (``(..., state, facts, chain)`` tuples
        ending so) whose WITHIN window closed: each distinct partial match of a run that could
        still store a row, once, in run order.  A run that can only wait to be confirmed (a
        trailing notFollowedBy) is not one: the window close confirms it."""
        found: dict = {}
        for *_, state, _facts, chain in threads:
            if chain is not None and self.growing[state]:
                rows = self.rows_of(chain)
                found.setdefault(rows, Match(None, rows[0][0], rows[-1][0], rows, MatchKind.TIMED_OUT))
        return list(found.values())

    @staticmethod
    def rows_of(chain) -> tuple:
        """The (row, var, excluded) captures of a chain, ascending."""
        rows = []
        while chain is not None:
            row, var, excluded, chain = chain
            rows.append((row, var, excluded))
        rows.reverse()
        return tuple(rows)


def shifted(chain, shift: int, memo: dict):
    """A capture chain with its row indexes moved down by ``shift``; chains sharing a tail
    (``memo``: id of an old link -> its new one) still share it."""
    pending = []
    while chain is not None and id(chain) not in memo:
        pending.append(chain)
        chain = chain[3]
    new = memo[id(chain)] if chain is not None else None
    for link in reversed(pending):
        new = memo[id(link)] = (link[0] - shift, link[1], link[2], new)
    return new
