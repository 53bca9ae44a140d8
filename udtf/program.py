"""The compiled pattern: a data stream transducer (DST) as a passive program.

A ``Program`` is a tuple of ``State`` records (index = state id) and a start state::

    SPLIT   targets               ordered epsilon moves (targets[0] preferred); an unbounded
                                  loop's SPLIT also names its ``exit``
    CONSUME transitions           ordered transitions reading one row
    BOL     targets=(t,)          epsilon, only at the partition start            (^)
    EOL     targets=(t,)          epsilon, only at the partition end              ($)
    PEEK    guard, targets=(t,)   epsilon, only if ``guard`` holds on the next row or there
                                  is no next row of the run (notNext)
    EXPIRE  targets=(t,)          epsilon, only once the run has no next row: the next row
                                  lies beyond WITHIN or the partition ended (a trailing
                                  notFollowedBy)
    ACCEPT

A ``Transition`` fires on a row when its ``guard`` holds and its ``stop`` (the enclosing UNTIL
conditions, or None) does not; ``var`` -1 ignores the row (relaxed contiguity), otherwise the
row is stored in ``var`` (``excluded``: inside ``{- -}``).  Guards are formulas over the
DEFINE conditions: ``Def(v)`` (v's condition, the row tentatively mapped to v), ``Until(v)``
(v's UNTIL condition, the row not mapped), ``Not``, ``All``, ``Some`` and ``TRUE``; every
interpreter of them is a ``fold_guard``.

``sequence`` describes a strict sequence of quantified variables (see ``match.runs``), or is
None.  This module holds data and pure functions over it only; it never reads rows.
"""
from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from .wire import decode, encode, record

ACCEPT = -1  # in an epsilon closure: the run accepts


@record
class Kind(str, Enum):
    SPLIT = "split"
    CONSUME = "consume"
    BOL = "bol"
    EOL = "eol"
    PEEK = "peek"
    EXPIRE = "expire"
    ACCEPT = "accept"


# ---- guards ----------------------------------------------------------------------------
@record
class Always(NamedTuple):
    pass


@record
class Def(NamedTuple):
    var: int


@record
class Until(NamedTuple):
    var: int


@record
class Not(NamedTuple):
    guard: object


@record
class All(NamedTuple):
    guards: tuple


@record
class Some(NamedTuple):
    guards: tuple


TRUE = Always()


def all_of(*guards):
    """The conjunction of ``guards`` (None entries ignored), simplified."""
    parts = tuple(g for g in guards if g is not None and g != TRUE)
    return TRUE if not parts else parts[0] if len(parts) == 1 else All(parts)


def some_of(*guards):
    """The disjunction of ``guards`` (None entries ignored); None when there are none."""
    parts = tuple(g for g in guards if g is not None)
    return None if not parts else parts[0] if len(parts) == 1 else Some(parts)


def fold_guard(guard, *, true, literal, not_, all_, some):
    """Interpret ``guard`` bottom-up: ``literal(Def | Until)``, ``not_(x)``, ``all_([x...])``,
    ``some([x...])``, ``true`` for TRUE."""
    def go(g):
        if isinstance(g, Always):
            return true
        if isinstance(g, (Def, Until)):
            return literal(g)
        if isinstance(g, Not):
            return not_(go(g.guard))
        return (all_ if isinstance(g, All) else some)([go(part) for part in g.guards])

    return go(guard)


def literals(guard) -> list:
    """The ``Def`` / ``Until`` literals of ``guard``, left to right."""
    return fold_guard(guard, true=[], literal=lambda lit: [lit], not_=lambda x: x,
                      all_=lambda xs: [lit for x in xs for lit in x],
                      some=lambda xs: [lit for x in xs for lit in x])


# ---- states ----------------------------------------------------------------------------
@record
class Transition(NamedTuple):
    guard: object
    stop: object  # a guard or None
    var: int  # -1: the row is ignored
    excluded: bool
    target: int


@record
class State(NamedTuple):
    kind: Kind
    targets: tuple = ()
    transitions: tuple = ()  # CONSUME only
    guard: object = None  # PEEK only
    exit: int | None = None  # SPLIT of a quantifier's choice: where leaving it goes
    again: int | None = None  # SPLIT of an optional bounded iteration: the next choice, which
    # its body leads to (an unbounded loop's body leads back to the loop itself)

    @property
    def target(self) -> int:
        """The one successor of a BOL / EOL / PEEK / EXPIRE state."""
        return self.targets[0]


@record
class SeqItem(NamedTuple):
    """One element of a flat sequence: ``var`` repeated ``min``..``max`` times (None = no bound)."""
    var: int
    min: int
    max: int | None
    greedy: bool


@record
class Program(NamedTuple):
    states: tuple
    start: int
    vars: tuple  # variable names; index = variable id
    sequence: tuple | None = None  # of SeqItem

    @property
    def accept(self) -> int:
        return next(i for i, s in enumerate(self.states) if s.kind is Kind.ACCEPT)

    def to_json(self):
        return encode(self)

    @staticmethod
    def from_json(data) -> Program:
        return decode(data)


WAITS = (Kind.PEEK, Kind.EOL, Kind.EXPIRE)  # states that wait for the next row (or its absence)


def closures(program: Program, at_start: bool, empty_iteration_exits: bool) -> tuple:
    """For each state, the CONSUME / waiting states and ACCEPT reachable by epsilon moves, in
    priority order, each once (the paper's EPSCLS).  ``at_start``: at the partition's first
    row (``^`` passes).  ``empty_iteration_exits``: a path that comes back to an unbounded loop
    without reading a row leaves the loop, and so does one that reaches the next choice of a
    bounded quantifier, as in regular expressions (standard semantics, ISO/IEC 19075-5 7.2.8);
    otherwise such a loop path is dropped (the paper).  ``path`` holds the quantifier choices
    the walk is inside; one left by its exit is off the path, so an enclosing loop's next
    iteration enters it afresh: what a walk reaches from a state depends on them."""
    states = program.states
    result = []
    for origin in range(len(states)):
        found, seen, path = [], set(), []

        def walk(s):
            state = states[s]
            choice = state.exit is not None  # a quantifier's choice (an unbounded loop's, too)
            if choice and s in path:  # an iteration that read no row
                if empty_iteration_exits:
                    leave(s, state.exit)
                return
            if empty_iteration_exits:  # the next choice after an optional iteration that read no row
                same = next((p for p in path if p >= 0 and states[p].again == s), None)
                if same is not None:
                    leave(same, states[same].exit)
                    return
            key = (s, frozenset(p for p in path if p >= 0))
            if key in seen:
                return
            seen.add(key)
            if state.kind is Kind.SPLIT or (state.kind is Kind.BOL and at_start):
                if choice:
                    path.append(s)
                for target in state.targets:
                    if choice and target == state.exit:
                        leave(s, target)
                    else:
                        walk(target)
                if choice:
                    path.pop()
            elif state.kind is Kind.ACCEPT:
                if ACCEPT not in found:
                    found.append(ACCEPT)
            elif state.kind is not Kind.BOL and s not in found:
                found.append(s)

        def leave(choice, target):
            """Walk ``target`` out of ``choice``: its quantifier's instance has ended."""
            at = path.index(choice)
            path[at] = -1
            walk(target)
            path[at] = choice

        walk(origin)
        result.append(tuple(found))
    return tuple(result)


def required(program: Program) -> tuple:
    """For each state, the variables every path from it to ACCEPT stores a row in (a greatest
    fixpoint over the transitions): a run in that state cannot accept unless each of them can
    still take a row."""
    states = program.states
    everything = frozenset(range(len(program.vars)))
    need = [frozenset() if s.kind is Kind.ACCEPT else everything for s in states]
    changed = True
    while changed:
        changed = False
        for index, state in enumerate(states):
            if state.kind is Kind.ACCEPT:
                continue
            if state.kind is Kind.CONSUME:
                options = [need[t.target] | ({t.var} if t.var >= 0 else frozenset()) for t in state.transitions]
            else:
                options = [need[t] for t in state.targets]
            value = frozenset.intersection(*options) if options else everything
            if value != need[index]:
                need[index], changed = value, True
    return tuple(need)


def growing(program: Program) -> tuple:
    """For each state, can a run in it still store a row and then accept?  (``^`` never
    passes: the run has read a row.)  A run that cannot only waits to be confirmed (a trailing
    notFollowedBy) or to die."""
    states = program.states

    def fixpoint(holds) -> list:
        value = [False] * len(states)
        changed = True
        while changed:
            changed = False
            for index, state in enumerate(states):
                if not value[index] and state.kind is not Kind.BOL and holds(state, value):
                    value[index] = changed = True
        return value

    accepts = fixpoint(lambda state, value: state.kind is Kind.ACCEPT or any(
        value[t.target] for t in state.transitions) or any(value[t] for t in state.targets))
    return tuple(fixpoint(lambda state, value: any(
        (t.var >= 0 and accepts[t.target]) or value[t.target] for t in state.transitions)
        or any(value[t] for t in state.targets)))
