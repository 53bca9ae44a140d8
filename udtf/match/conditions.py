"""DEFINE / UNTIL conditions compiled against a partition's rows: guard formulas become
``fn(row, facts) -> bool`` closures (None = always true)."""
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

    def __init__(self, define, until, var_names, rows: Rows, ansi: bool = True):
        self.define = {c.var: c for c in define}
        self.until = {c.var: c for c in until}
        needed: dict = {}
        for condition in (*define, *until):
            if condition.expr is not None:
                facts_of(condition.expr, needed)
        self.table = FactTable(list(needed), rows.values, var_names, ansi)
        self.scope = Scope(self.table, lambda: rows.size)
        self.rows = rows

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
