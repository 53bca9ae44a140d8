"""DEFINE / UNTIL conditions compiled against a partition's rows: guard formulas become
``fn(row, facts) -> bool`` closures (None = always true), or are partially evaluated for a
row whose masks are known (``residual``)."""
from __future__ import annotations

from ..expr import FactTable, Scope, compile_expr, facts_of
from ..program import Def, fold_guard
from ..rows import Rows


def _never(row, facts):
    return False


def _negate(inner):
    if inner is None:
        return _never
    return lambda row, facts: not inner(row, facts)


def _all(parts):
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return lambda row, facts: all(p(row, facts) for p in parts)


def _some(parts):
    if any(p is None for p in parts):
        return None
    return lambda row, facts: any(p(row, facts) for p in parts)


class Conditions:
    """The conditions of each variable (``udtf.plan.Condition``s; a variable without one is
    TRUE), the folds their match-state expressions read, and the rows they read them from."""

    def __init__(self, define, until, var_names, rows: Rows, ansi: bool = True, zone: str = "UTC",
                 windowed: bool = False):
        self._args = (until, var_names, rows, ansi, zone, windowed)
        self.define = {c.var: c for c in define}
        self.until = {c.var: c for c in until}
        needed: dict = {}
        for condition in (*define, *until):
            if condition.expr is not None:
                facts_of(condition.expr, needed)
        self.table = table = FactTable(list(needed), rows.values, var_names, ansi, zone)
        # navigation lands in the partition, or in a window (R020) in the frame of the row whose
        # match is sought: [frame[0], frame[1]), set by the matcher for each attempt
        self.frame = [0, 0]
        frame = self.frame
        self.scope = Scope(table, (lambda: (frame[0], min(frame[1], rows.size))) if windowed else
                           (lambda: (0, rows.size)))
        self.rows = rows

    def without(self, vars_) -> Conditions:
        """These conditions but the DEFINEs of ``vars_``, over the same rows (their folds gone)."""
        return Conditions([c for v, c in self.define.items() if v not in vars_], *self._args)

    def of(self, literal):
        """The condition a guard literal (``Def`` / ``Until``) stands for, or None (TRUE)."""
        return (self.define if isinstance(literal, Def) else self.until).get(literal.var)

    def literal(self, literal):
        """``fn(row, facts) -> bool`` for a ``Def`` / ``Until`` literal (None: always true)."""
        condition = self.of(literal)
        if condition is None:
            return None
        mask = self.rows.masks[condition.mask] if condition.mask is not None else None
        if condition.expr is None:
            return lambda row, facts: mask[row] == 1
        fn = compile_expr(condition.expr, self.scope)
        table = self.table
        if isinstance(literal, Def):
            fold, var = table.fold, literal.var
            state = lambda row, facts: fn((row, fold(facts, row, var), table.match_number)) is True
        else:  # the row considered by UNTIL is not mapped
            state = lambda row, facts: fn((row, facts, table.match_number)) is True
        if mask is None:
            return state
        return lambda row, facts: mask[row] == 1 and state(row, facts)

    def guard(self, guard):
        """Compile a guard formula; None means always true."""
        return fold_guard(guard, true=None, literal=self.literal, not_=_negate, all_=_all, some=_some)

    def residual(self, guard, known: dict):
        """``guard`` partially evaluated on a row whose masks ``known`` gives ({mask name:
        bool}): True, False, or ``fn(row, facts, memo) -> bool`` over the rest.  ``memo`` (a
        dict, one per run and row) shares between the guards of a run's transitions what
        they evaluate: each literal's value (key ``("def" | "until", var)``) and the run's
        facts folded over the row for variable ``v`` (key ``v``)."""
        return fold_guard(guard, true=True, literal=lambda lit: self._residual_literal(lit, known),
                          not_=_residual_not, all_=lambda ps: _residual_junction(ps, False),
                          some=lambda ps: _residual_junction(ps, True))

    def residual_move(self, guard, stop, known: dict):
        """A transition's ``guard`` and not its ``stop`` (or None), as ``residual`` (the stop
        is evaluated only when the guard holds)."""
        test = self.residual(guard, known)
        if stop is None:
            return test
        return _residual_junction([test, _residual_not(self.residual(stop, known))], False)

    def _residual_literal(self, literal, known: dict):
        condition = self.of(literal)
        if condition is None:
            return True
        mask = condition.mask
        if mask is not None and mask in known:
            if not known[mask]:
                return False
            mask = None
        column = self.rows.masks[mask] if mask is not None else None
        if condition.expr is None:
            return True if column is None else lambda row, facts, memo: column[row] == 1
        fn = compile_expr(condition.expr, self.scope)
        table, var = self.table, literal.var
        if isinstance(literal, Def):
            key, fold = ("def", var), table.folder(var)

            def state(row, facts, memo):
                value = memo.get(key)
                if value is None:
                    folded = memo.get(var)
                    if folded is None:
                        folded = memo[var] = fold(facts, row)
                    value = memo[key] = fn((row, folded, table.match_number)) is True
                return value
        else:  # the row considered by UNTIL is not mapped
            key = ("until", var)

            def state(row, facts, memo):
                value = memo.get(key)
                if value is None:
                    value = memo[key] = fn((row, facts, table.match_number)) is True
                return value
        if column is None:
            return state
        return lambda row, facts, memo: column[row] == 1 and state(row, facts, memo)


def _residual_not(inner):
    if inner is True or inner is False:
        return not inner
    return lambda row, facts, memo: not inner(row, facts, memo)


def _residual_junction(parts, absorbing: bool):
    """AND (``absorbing`` False) / OR (True) of partially evaluated parts, left to right: the
    residual parts before an absorbing constant are still evaluated (their errors), as the
    unevaluated formula would."""
    residual = []
    for part in parts:
        if part is absorbing:
            if not residual:
                return absorbing
            return _prefix_then(residual, absorbing)
        if part is not (not absorbing):
            residual.append(part)
    if not residual:
        return not absorbing
    if len(residual) == 1:
        return residual[0]
    if absorbing:
        return lambda row, facts, memo: any(p(row, facts, memo) for p in residual)
    return lambda row, facts, memo: all(p(row, facts, memo) for p in residual)


def _prefix_then(residual, value: bool):
    """Evaluate ``residual`` left to right as AND (value False) / OR (True) would, then give
    ``value``: the constant decides, the parts only raise their errors."""
    def evaluate(row, facts, memo):
        for p in residual:
            if p(row, facts, memo) is value:
                break
        return value
    return evaluate
