"""DEFINE conditions that can never hold, found before matching and dropped.

A variable's condition is evaluated with the row tentatively mapped to it, over the rows the run
mapped before.  A navigation or CLASSIFIER over variables no path of the program can have mapped
as many rows to by then as its logical offset needs (e.g. each of them comes only later in the
pattern, or ``LAST(C.price, 1)`` where the pattern has one ``C``) lands on no row: NULL; an
aggregate over variables with no row mapped yet has its value over no row.  A condition that is
then NULL or FALSE whatever the row, and cannot raise on the way (nor can folding the row into
the run's facts), never holds: its ``Def``
literals become FALSE in the program's guards (transitions left with a FALSE guard are dropped)
and its condition leaves the conditions, so the runs carry none of its folds and the faster tiers
may apply (a pattern left with masks only runs on the DFA).  Repeated to a fixpoint: a variable
that can no longer be mapped leaves the variables after it fewer rows to read.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from ..expr import Agg, Call, Cast, Classifier, Col, Lit, MatchNumber, Nav, children, fold_of
from ..program import TRUE, All, Always, Def, Kind, Not, Program, Until, literals
from ..sparksql import scalar
from ..sparksql.errors import SparkError
from ..sparksql.functions import Order, lookup
from ..sparksql.types import SqlType
from .conditions import Conditions

FALSE = Not(TRUE)
CAP = 64  # rows of a variable counted before a run is taken to have any number of them


class _Verdict(NamedTuple):
    null: bool  # surely NULL
    never: bool  # surely NULL or FALSE
    safe: bool  # surely raises no error


_UNKNOWN = _Verdict(False, False, False)


def fold_never(program: Program, conditions: Conditions) -> tuple[Program, Conditions]:
    """``program`` and ``conditions`` without the variables whose condition never holds (the
    same objects when there is none)."""
    dead: set = set()
    cap = _cap(conditions)
    while True:
        found = {v for v, most in _most(program, dead, cap).items()
                 if v not in dead and _never_holds(conditions, v, most, cap)}
        if not found:
            break
        dead |= found
    if not dead:
        return program, conditions
    return _pruned(program, dead), conditions.without(dead)


def _never_holds(conditions: Conditions, var: int, most: tuple, cap: int) -> bool:
    condition = conditions.define.get(var)
    if condition is None or condition.expr is None:
        return False
    # folding the row into the run's aggregates over ``var`` comes first and may raise
    if any(f.kind == "agg" and (f.vars is None or var in f.vars) and not _counts(f.arg)
           for f in conditions.table.facts):
        return False
    verdict = _verdict(condition.expr, most, cap)
    return verdict.never and verdict.safe


def _counts(agg: Agg) -> bool:
    """COUNT(*) / COUNT(v.*): a fold that cannot raise."""
    return agg.fn.lower() == "count" and not agg.args and agg.filter is None


def _rows(vars_, most: tuple, cap: int) -> float:
    """The most rows of ``vars_`` (None: every variable) in the run (a count at ``cap``: any)."""
    counts = most if vars_ is None else [most[v] for v in vars_]
    return math.inf if cap in counts else sum(counts)


def _verdict(expr, most: tuple, cap: int) -> _Verdict:
    """What ``expr`` surely gives when the run has at most ``most[v]`` rows of each variable v
    (``cap``: any number)."""
    if isinstance(expr, Lit):
        return _Verdict(expr.value is None, expr.value is None or expr.value is False, True)
    if isinstance(expr, (Col, MatchNumber)):
        return _Verdict(False, False, True)
    if isinstance(expr, (Nav, Classifier)):
        null = _rows(expr.vars, most, cap) <= expr.logical  # too few rows to land on
        return _Verdict(null, null, True)
    if isinstance(expr, Agg):
        fold = fold_of(expr, True, "UTC")
        if _rows(expr.vars, most, cap):
            return _Verdict(False, False, not fold.result_raises)
        try:
            value = fold.result(fold.initial)
        except SparkError:
            return _UNKNOWN
        return _Verdict(value is None, value is None or value is False, True)
    parts = [_verdict(child, most, cap) for child in children(expr)]
    safe = all(p.safe for p in parts)
    if isinstance(expr, Cast):  # a NULL casts to NULL
        if parts[0].null:
            return _Verdict(True, True, safe)
        raises = not expr.safe and scalar.cast_raises(SqlType.parse(expr.source), [SqlType.parse(t) for t in expr.through])
        return _Verdict(False, False, safe and not raises)
    if not isinstance(expr, Call):
        return _UNKNOWN
    function = lookup(expr.fn)
    name = function.name
    if name == "and":
        return _Verdict(all(p.null for p in parts), any(p.never for p in parts), safe)
    if name == "or":
        return _Verdict(all(p.null for p in parts), all(p.never for p in parts), safe)
    if name == "not":
        return _Verdict(parts[0].null, parts[0].null, safe)
    if function.null_intolerant and function.order in (Order.STRICT, Order.DIVISOR_FIRST) and \
            any(p.null for p in parts):
        return _Verdict(True, True, safe)  # the function is not applied
    return _Verdict(False, False, safe and not function.raises([SqlType.parse(t) for t in expr.arg_types]))


def _most(program: Program, dead: set, cap: int) -> dict:
    """For each variable with a ``Def`` literal on a reachable state: per variable, the most rows
    a run may have mapped to it when that literal is evaluated (the row itself counted), at
    most ``cap`` (= ``cap`` or more)."""
    states, count = program.states, len(program.vars)
    most: list = [None] * len(states)  # per state: per variable, the most rows some path to it maps
    most[program.start] = (0,) * count
    pending = [program.start]
    while pending:
        index = pending.pop()
        state, here = states[index], most[index]
        if state.kind is Kind.CONSUME:
            moves = [(t.target, _plus(here, t.var, cap)) for t in state.transitions
                     if _simplified(t.guard, dead) != FALSE]
        else:
            moves = [(t, here) for t in state.targets]
        for target, value in moves:
            old = most[target]
            joined = value if old is None else tuple(map(max, old, value))
            if joined != old:
                most[target] = joined
                pending.append(target)
    found: dict = {}
    for index, state in enumerate(states):
        if most[index] is None:
            continue
        guards = [g for t in state.transitions for g in (t.guard, t.stop) if g is not None]
        if state.kind is Kind.PEEK and state.guard is not None:
            guards.append(state.guard)
        for guard in guards:
            for literal in literals(guard):
                if isinstance(literal, Def):
                    here = _plus(most[index], literal.var, cap)
                    old = found.get(literal.var)
                    found[literal.var] = here if old is None else tuple(map(max, old, here))
    return found


def _plus(counts: tuple, var: int, cap: int) -> tuple:
    if var < 0 or counts[var] >= cap:
        return counts
    return counts[:var] + (counts[var] + 1,) + counts[var + 1:]


def _cap(conditions: Conditions) -> int:
    """One more than the deepest logical offset the conditions navigate by (at most ``CAP``):
    the counts ``_most`` tells apart."""
    deepest = [0]

    def walk(expr):
        if isinstance(expr, (Nav, Classifier)):
            deepest[0] = max(deepest[0], expr.logical)
        for child in children(expr):
            walk(child)

    for condition in conditions.define.values():
        if condition.expr is not None:
            walk(condition.expr)
    return min(deepest[0] + 1, CAP)


def _simplified(guard, dead: set):
    """``guard`` with ``Def(v)`` FALSE for ``v`` in ``dead``; a junction keeps its parts up to
    a deciding constant (they are still evaluated, for their errors)."""
    if guard is None or isinstance(guard, (Always, Until)):
        return guard
    if isinstance(guard, Def):
        return FALSE if guard.var in dead else guard
    if isinstance(guard, Not):
        inner = _simplified(guard.guard, dead)
        return TRUE if inner == FALSE else FALSE if inner == TRUE else Not(inner)
    decides, neutral = (FALSE, TRUE) if isinstance(guard, All) else (TRUE, FALSE)
    parts = []
    for part in (_simplified(g, dead) for g in guard.guards):
        if part == neutral:
            continue
        parts.append(part)
        if part == decides:
            break
    if not parts:
        return neutral
    if len(parts) == 1:
        return parts[0]
    return type(guard)(tuple(parts))


def _pruned(program: Program, dead: set) -> Program:
    states = []
    for state in program.states:
        if state.kind is Kind.CONSUME:
            transitions = []
            for t in state.transitions:
                guard, stop = _simplified(t.guard, dead), _simplified(t.stop, dead)
                if guard != FALSE:
                    transitions.append(t._replace(guard=guard, stop=None if stop == FALSE else stop))
            state = state._replace(transitions=tuple(transitions))
        elif state.kind is Kind.PEEK:
            state = state._replace(guard=_simplified(state.guard, dead))
        states.append(state)
    sequence = program.sequence
    if sequence is not None and any(item.var in dead for item in sequence):
        sequence = None
    return program._replace(states=tuple(states), sequence=sequence)
