"""Match-state expressions: the part of DEFINE / MEASURES that Spark cannot precompute.

An expression is plain JSON data (it travels inside the plan to Spark workers)::

    ["lit", v]                       a literal (JSON value);   ["dec", "1.50"] a decimal literal
    ["col", name]                    a precomputed column at the current row
    ["nav", name, vs, "first"|"last", logical_n, physical_n]
                                     column ``name`` at the logical_n-th first/last row of
                                     variable set ``vs``, moved physical_n rows (PREV < 0 < NEXT)
    ["agg", fn, vs, name|None]       running aggregate fn in count/sum/avg/min/max over rows of vs
                                     (name None: COUNT(*) / COUNT(v.*))
    ["navrow", vs, "first"|"last", logical_n, physical_n]
                                     the row index such a navigation lands on (or None)
    ["classifier", vs]               variable of the last row of vs
    ["match_number"]
    ["call", op, arg...]             SQL operators over the above (see ``_OPS``), with SQL NULLs

``vs`` is a sorted list of variable indexes, or None for every row of the match.

Evaluation runs over *facts*: a tuple of running folds (count, sum, first/last row, ...) that
a run carries.  ``FactTable`` lists the folds an expression set needs; ``fold`` advances them
by one row.  Only the folds the conditions need are kept, so a run's facts are exactly the
data that decides its future (the key of Pike-VM thread equivalence).
"""
from __future__ import annotations

import datetime
import decimal
import operator

from .errors import MatchRecognizeError

_DECIMAL_CONTEXT = decimal.Context(prec=76)

# fact kinds: ("count", vs) ("nn", vs, col) ("sum", vs, col) ("min", vs, col) ("max", vs, col)
#             ("first", vs) ("last", vs) ("lastvar", vs): a row index / variable
#             ("firstn", vs, n) ("lastn", vs, n): the first / last n + 1 row indexes of vs


def _vs_key(vs):
    return None if vs is None else tuple(vs)


def facts_of(expr, out: dict) -> dict:
    """Collect into ``out`` (an ordered dict used as a set) the facts ``expr`` reads."""
    kind = expr[0]
    if kind in ("nav", "navrow"):
        vs, mode, logical = expr[-4:-1]
        out[(mode, _vs_key(vs)) if not logical else (mode + "n", _vs_key(vs), logical)] = None
    elif kind == "agg":
        _, fn, vs, col = expr
        vs = _vs_key(vs)
        if fn == "count":
            out[("count", vs) if col is None else ("nn", vs, col)] = None
        elif fn == "avg":
            out[("sum", vs, col)] = None
            out[("nn", vs, col)] = None
        else:
            out[(fn, vs, col)] = None
    elif kind == "classifier":
        out[("lastvar", _vs_key(expr[1]))] = None
    elif kind == "call":
        for arg in expr[2:]:
            facts_of(arg, out)
    elif kind == "case":
        for arg in expr[1:]:
            facts_of(arg, out)
    return out


class FactTable:
    """The folds a set of expressions reads, and how one row advances them."""

    def __init__(self, facts, columns):
        self.facts = list(facts)
        self.index = {f: i for i, f in enumerate(self.facts)}
        self.initial = tuple(0 if f[0] in ("count", "nn") else () if f[0] in ("firstn", "lastn") else None
                             for f in self.facts)
        self.columns = columns  # name -> python list of values (extended in place)
        self._updaters = [self._updater(f) for f in self.facts]

    def _updater(self, fact):
        kind, vs = fact[0], fact[1]
        member = (lambda v: True) if vs is None else frozenset(vs).__contains__
        if kind == "count":
            return lambda old, row, var: old + 1 if member(var) else old
        if kind == "first":
            return lambda old, row, var: row if old is None and member(var) else old
        if kind == "last":
            return lambda old, row, var: row if member(var) else old
        if kind == "lastvar":
            return lambda old, row, var: var if member(var) else old
        if kind == "firstn":
            keep = fact[2] + 1
            return lambda old, row, var: old + (row,) if member(var) and len(old) < keep else old
        if kind == "lastn":
            keep = fact[2] + 1
            return lambda old, row, var: (old + (row,))[-keep:] if member(var) else old
        values = self.columns[fact[2]]
        if kind == "nn":
            return lambda old, row, var: old + 1 if member(var) and values[row] is not None else old
        combine = {"sum": _add, "min": min, "max": max}[kind]

        def update(old, row, var):
            if not member(var):
                return old
            value = values[row]
            if value is None:
                return old
            return value if old is None else combine(old, value)

        return update

    def fold(self, facts: tuple, row: int, var: int) -> tuple:
        """Facts after mapping ``row`` to variable ``var``."""
        return tuple(update(old, row, var) for update, old in zip(self._updaters, facts))


def _add(a, b):
    if isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal):
        return _DECIMAL_CONTEXT.add(decimal.Decimal(a), decimal.Decimal(b))
    return a + b


def _null_safe(fn):
    def apply(*args):
        if any(a is None for a in args):
            return None
        try:
            return fn(*args)
        except TypeError:
            types = " and ".join(type(a).__name__ for a in args)
            raise MatchRecognizeError(f"operator not supported on {types} over match state") from None

    return apply


def _shift_date(fn):
    """date +/- integer = date moved by days, as in Spark."""
    def apply(a, b):
        if isinstance(a, datetime.date) and not isinstance(a, datetime.datetime) and isinstance(b, int):
            return fn(a, datetime.timedelta(days=b))
        return fn(a, b)

    return apply


def _divide(a, b):
    if b == 0:
        raise MatchRecognizeError("division by zero in a MATCH_RECOGNIZE expression")
    if isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal):
        return _DECIMAL_CONTEXT.divide(decimal.Decimal(a), decimal.Decimal(b))
    return a / b


def _modulo(a, b):
    if b == 0:
        raise MatchRecognizeError("division by zero in a MATCH_RECOGNIZE expression")
    return _sql_mod(a, b)


def _sql_mod(a, b):
    # SQL % keeps the sign of the dividend (Python's keeps the divisor's)
    if isinstance(a, int) and isinstance(b, int):
        r = abs(a) % abs(b)
        return -r if a < 0 else r
    return (decimal.Decimal(a) if isinstance(a, decimal.Decimal) else a) - b * int(a / b)


def _numeric(fn):
    def apply(a, b):
        if isinstance(a, decimal.Decimal) != isinstance(b, decimal.Decimal) and not (
            isinstance(a, float) or isinstance(b, float)
        ):
            a, b = decimal.Decimal(a), decimal.Decimal(b)
        return fn(a, b)

    return apply


_OPS = {
    "+": _null_safe(_shift_date(_numeric(_add))),
    "-": _null_safe(_shift_date(_numeric(operator.sub))),
    "*": _null_safe(_numeric(operator.mul)),
    "/": _null_safe(_divide),
    "%": _null_safe(_modulo),
    "neg": _null_safe(operator.neg),
    "abs": _null_safe(abs),
    "=": _null_safe(operator.eq),
    "<>": _null_safe(operator.ne),
    "<": _null_safe(operator.lt),
    "<=": _null_safe(operator.le),
    ">": _null_safe(operator.gt),
    ">=": _null_safe(operator.ge),
    "is_null": lambda a: a is None,
    "is_not_null": lambda a: a is not None,
    "least": lambda *a: min((x for x in a if x is not None), default=None),
    "greatest": lambda *a: max((x for x in a if x is not None), default=None),
}


def _not(a):
    return None if a is None else not a


class Scope:
    """Where expressions are evaluated: the partition's columns and how rows map to variables.

    ``columns``: name -> python list of values; ``size()``: rows known in the partition
    (navigation past it yields NULL); ``var_names``: index -> variable name.
    """

    def __init__(self, facts: FactTable, var_names, size):
        self.facts = facts
        self.columns = facts.columns
        self.var_names = var_names
        self.size = size


def compile_expr(expr, scope: Scope):
    """Return ``fn(row, facts, chain, match_number) -> value`` for ``expr``.

    ``row`` is the current row, ``facts`` the run's fold tuple *including* the current row,
    ``chain`` the run's capture chain (row, var, excluded, parent) for deep logical navigation.
    """
    kind = expr[0]
    if kind == "lit":
        value = expr[1]
        return lambda row, facts, mn: value
    if kind == "dec":
        value = decimal.Decimal(expr[1])
        return lambda row, facts, mn: value
    if kind == "col":
        values = scope.columns[expr[1]]
        return lambda row, facts, mn: values[row]
    if kind == "match_number":
        return lambda row, facts, mn: mn
    if kind == "classifier":
        slot = scope.facts.index[("lastvar", _vs_key(expr[1]))]
        names = scope.var_names
        return lambda row, facts, mn: None if facts[slot] is None else names[facts[slot]]
    if kind == "agg":
        return _compile_agg(expr, scope)
    if kind == "nav":
        values = scope.columns[expr[1]]
        landing = _compile_nav(expr[2:], scope)

        def nav(row, facts, mn):
            target = landing(row, facts, mn)
            return None if target is None else values[target]

        return nav
    if kind == "navrow":
        return _compile_nav(expr[1:], scope)
    if kind == "case":
        # ["case", cond1, val1, cond2, val2, ..., else]
        parts = [compile_expr(e, scope) for e in expr[1:]]
        pairs, default = list(zip(parts[0:-1:2], parts[1:-1:2])), parts[-1]

        def case(row, facts, mn):
            for cond, value in pairs:
                if cond(row, facts, mn) is True:
                    return value(row, facts, mn)
            return default(row, facts, mn)

        return case
    if kind != "call":
        raise MatchRecognizeError(f"unknown expression node {kind!r}")
    op, args = expr[1], [compile_expr(e, scope) for e in expr[2:]]
    if op == "and":
        def conj(row, facts, mn):
            result = True
            for arg in args:
                value = arg(row, facts, mn)
                if value is False:
                    return False
                if value is None:
                    result = None
            return result

        return conj
    if op == "or":
        def disj(row, facts, mn):
            result = False
            for arg in args:
                value = arg(row, facts, mn)
                if value is True:
                    return True
                if value is None:
                    result = None
            return result

        return disj
    if op == "not":
        (arg,) = args
        return lambda row, facts, mn: _not(arg(row, facts, mn))
    if op == "coalesce":
        def coalesce(row, facts, mn):
            for arg in args:
                value = arg(row, facts, mn)
                if value is not None:
                    return value
            return None

        return coalesce
    if op == "in":
        probe, options = args[0], args[1:]

        def member(row, facts, mn):
            value = probe(row, facts, mn)
            if value is None:
                return None
            saw_null = False
            for option in options:
                other = option(row, facts, mn)
                if other is None:
                    saw_null = True
                elif other == value:
                    return True
            return None if saw_null else False

        return member
    fn = _OPS.get(op)
    if fn is None:
        raise MatchRecognizeError(f"operator {op!r} is not supported over match state")
    if len(args) == 1:
        (a,) = args
        return lambda row, facts, mn: fn(a(row, facts, mn))
    if len(args) == 2:
        a, b = args
        return lambda row, facts, mn: fn(a(row, facts, mn), b(row, facts, mn))
    return lambda row, facts, mn: fn(*(arg(row, facts, mn) for arg in args))


def _compile_agg(expr, scope: Scope):
    _, fn, vs, col = expr
    vs = _vs_key(vs)
    index = scope.facts.index
    if fn == "count":
        slot = index[("count", vs) if col is None else ("nn", vs, col)]
        return lambda row, facts, mn: facts[slot]
    if fn == "avg":
        total, count = index[("sum", vs, col)], index[("nn", vs, col)]

        def average(row, facts, mn):
            if not facts[count]:
                return None
            s = facts[total]
            if isinstance(s, decimal.Decimal):
                return _DECIMAL_CONTEXT.divide(s, decimal.Decimal(facts[count]))
            return s / facts[count]

        return average
    slot = index[(fn, vs, col)]
    return lambda row, facts, mn: facts[slot]


def _compile_nav(spec, scope: Scope):
    """``fn -> row index`` of a navigation ``[vs, mode, logical_n, physical_n]`` (None outside
    the partition or when the variable set has too few rows)."""
    vs, mode, logical, physical = spec
    size = scope.size
    if not logical:
        slot = scope.facts.index[(mode, _vs_key(vs))]

        def nav(row, facts, mn):
            target = facts[slot]
            if target is None:
                return None
            target += physical
            return target if 0 <= target < size() else None

        return nav
    slot = scope.facts.index[(mode + "n", _vs_key(vs), logical)]
    pick = logical if mode == "first" else -1 - logical

    def deep_nav(row, facts, mn):
        rows = facts[slot]
        if len(rows) <= logical:
            return None
        target = rows[pick] + physical
        return target if 0 <= target < size() else None

    return deep_nav
