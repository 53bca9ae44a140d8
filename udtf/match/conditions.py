"""DEFINE / UNTIL conditions compiled against a partition's rows: guard formulas become
``fn(row, facts) -> bool`` closures (None = always true), or are partially evaluated for a
row whose masks are known (``residual``)."""
from __future__ import annotations

from operator import itemgetter

from ..expr import Agg, Call, Cast, FactTable, Lit, MatchNumber, Scope, children, compile_expr, facts_of
from ..program import Def, fold_guard
from ..rows import Rows
from ..sparksql.types import SqlType, TypeKind

SHARED_VALUES = 4096  # values one condition keeps in its ``Conditions.shared`` memo (then it starts over)
# the aggregate types whose equal values are the same value (not -0.0 / 0.0, Decimal 1.0 / 1.00,
# timestamps in two zones): a condition over them is a function of the aggregates' states
_EXACT = {TypeKind.TINYINT, TypeKind.SMALLINT, TypeKind.INT, TypeKind.BIGINT, TypeKind.BOOLEAN, TypeKind.STRING}


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
        # per (DEFINE or not, variable) of a condition over the match state alone (``state_only``):
        # its value per value of what it reads, shared by every run, row and start that has those values
        self.shared: dict = {}

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

    def probe(self, guard, stop, var: int, known: dict):
        """A move storing its row as ``var`` under ``guard`` = ``Def(var)`` alone (no stop), its
        condition over the match state: ``fn(facts, row) -> facts``, the run's facts folded over
        the row where the condition holds on them (as ``residual``'s test, then the move's fold,
        would give), else None; False where the row's masks rule it out.  None: another guard,
        or a condition without match state (``residual_move`` and the move's fold do it)."""
        if stop is not None or not isinstance(guard, Def) or guard.var != var:
            return None
        condition = self.define.get(var)
        if condition is None or condition.expr is None:
            return None
        column = self._mask_column(condition, known)
        if column is False:
            return False
        fn = compile_expr(condition.expr, self.scope)
        if state_only(condition.expr):
            fn = self._shared(guard, condition.expr, fn)
        table, fold = self.table, self.table.folder(var)
        if column is None:
            def checked(facts, row):
                folded = fold(facts, row)
                return folded if fn((row, folded, table.match_number)) is True else None
        else:
            def checked(facts, row):
                if column[row] != 1:
                    return None
                folded = fold(facts, row)
                return folded if fn((row, folded, table.match_number)) is True else None
        return checked

    def _residual_literal(self, literal, known: dict):
        condition = self.of(literal)
        if condition is None:
            return True
        column = self._mask_column(condition, known)
        if column is False:
            return False
        if condition.expr is None:
            return True if column is None else lambda row, facts, memo: column[row] == 1
        fn = compile_expr(condition.expr, self.scope)
        table, var = self.table, literal.var
        if state_only(condition.expr):
            fn = self._shared(literal, condition.expr, fn)
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

    def _mask_column(self, condition, known: dict):
        """The column of ``condition``'s mask still to test on a row: None where it has no mask
        or ``known`` says it holds, False where ``known`` says it fails."""
        mask = condition.mask
        if mask is not None and mask in known:
            if not known[mask]:
                return False
            mask = None
        return self.rows.masks[mask] if mask is not None else None

    def _shared(self, literal, expr, fn):
        """``fn`` of a condition over the match state alone (``state_only``), evaluated once per
        value of what it reads - the states of its aggregates in the facts it is handed (folded
        over the row for a DEFINE), and MATCH_NUMBER() - whichever run, row, start or partition
        has them (up to ``SHARED_VALUES`` values, then anew; a state holding NaN is never found)."""
        # (Def(v) and Until(v) are equal NamedTuples: the key tells DEFINE from UNTIL)
        shared = self.shared.setdefault((isinstance(literal, Def), literal.var), {})
        table = self.table
        slots = [table.index[fact] for fact in facts_of(expr, {})]
        # what it reads of the facts: all of them, none, one state, or a tuple of states
        project = (None if slots == list(range(len(table.facts))) else (lambda facts: ()) if not slots
                   else itemgetter(*slots))
        numbered = _reads(expr, MatchNumber)

        def evaluate(args):  # args: (row, facts, match number), as ``fn`` takes them
            read = args[1] if project is None else project(args[1])
            if numbered:
                read = (args[2], read)
            value = shared.get(read)
            if value is None:
                if len(shared) >= SHARED_VALUES:
                    shared.clear()
                value = shared[read] = fn(args) is True
            return value
        return evaluate


def state_only(expr) -> bool:
    """Is ``expr`` a function of the match state alone: literals, operators and casts over
    aggregates of an integral, boolean or string type and MATCH_NUMBER() (no column of the row,
    no navigation, no CLASSIFIER()), reading at least one of them?  E.g. ``COUNT(B.*) <= 4``,
    ``COUNT(*) <= 5``, ``SUM(A.x) < 30``, ``MAX(A.price) - MIN(A.price) <= 3``,
    ``MATCH_NUMBER() % 2 = 0``.  The invariant ``Conditions._shared`` keys on: two aggregate
    states equal as Python values give the same result, which holds where the result is of these
    types (a double in a MAX_BY state only orders; -0.0 and 0.0, Decimal 1.0 and 1.00, one
    instant in two zones are equal values with different results); no function is
    nondeterministic, and an aggregate's state folds in whatever its arguments read."""
    return _state(expr) is True


def _state(expr):
    """True: ``expr`` reads what ``state_only`` allows and nothing else; None: it reads
    nothing (a constant); False: it reads something else."""
    if isinstance(expr, Lit):
        return None
    if isinstance(expr, MatchNumber):
        return True
    if isinstance(expr, Agg):
        return SqlType.parse(expr.type).kind in _EXACT
    if isinstance(expr, (Call, Cast)):
        found = [_state(a) for a in children(expr)]
        return False if False in found else (True if True in found else None)
    return False


def _reads(expr, kind) -> bool:
    """Does ``expr`` (outside its aggregates' arguments) hold a node of type ``kind``?"""
    return isinstance(expr, kind) or any(_reads(a, kind) for a in children(expr))


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
