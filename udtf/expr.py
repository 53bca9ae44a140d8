"""Match-state expressions: the part of DEFINE / MEASURES that Spark cannot precompute.

An expression is a tree of the records below (they travel inside the engine plan)::

    Lit(value)                   a literal (JSON value);   DecimalLit("1.50") a decimal literal
    Col(name)                    a precomputed column at the current row
    Nav(column, vars, mode, logical, physical)
                                 ``column`` at the logical-th FIRST/LAST row of variable set
                                 ``vars``, moved ``physical`` rows (PREV < 0 < NEXT); with
                                 ``column`` None: the row index it lands on (or None)
    Agg(fn, vars, column)        running aggregate fn in count/sum/avg/min/max over rows of vars
                                 (column None: COUNT(*) / COUNT(v.*))
    Classifier(vars)             variable of the last row of vars
    MatchNumber()
    Call(op, args)               SQL operators over the above (see ``_OPS``), with SQL NULLs
    Case(whens, default)         CASE WHEN c THEN v ... ELSE default END; whens = ((c, v), ...)

``vars`` is a sorted tuple of variable indexes, or None for every row of the match.

Evaluation runs over *facts*: a tuple of running folds (count, sum, first/last row, ...) that
a run carries.  ``FactTable`` lists the folds an expression set needs; ``fold`` advances them
by one row.  Only the folds the conditions need are kept, so a run's facts are exactly the
data that decides its future (the key of Pike-VM thread equivalence).
"""
from __future__ import annotations

import datetime
import decimal
import operator
from enum import Enum
from typing import NamedTuple

from .errors import MatchRecognizeError
from .wire import record


@record
class NavMode(str, Enum):
    FIRST = "first"
    LAST = "last"


@record
class Lit(NamedTuple):
    value: object


@record
class DecimalLit(NamedTuple):
    text: str


@record
class Col(NamedTuple):
    name: str


@record
class Nav(NamedTuple):
    column: str | None
    vars: tuple | None
    mode: NavMode
    logical: int
    physical: int


@record
class Agg(NamedTuple):
    fn: str
    vars: tuple | None
    column: str | None


@record
class Classifier(NamedTuple):
    vars: tuple | None


@record
class MatchNumber(NamedTuple):
    pass


@record
class Call(NamedTuple):
    op: str
    args: tuple


@record
class Case(NamedTuple):
    whens: tuple  # ((condition, value), ...)
    default: object


class Fact(NamedTuple):
    """A running fold: ``kind`` in count (rows), nn (non-NULL values of ``arg``), sum / min /
    max (of column ``arg``), first / last (row index), lastvar (variable), firstn / lastn (the
    first / last ``arg`` + 1 row indexes), over the rows mapped to ``vars``."""
    kind: str
    vars: tuple | None
    arg: object = None


_DECIMAL_CONTEXT = decimal.Context(prec=76)

def facts_of(expr, out: dict) -> dict:
    """Collect into ``out`` (an ordered dict used as a set) the facts ``expr`` reads."""
    if isinstance(expr, Nav):
        if expr.logical:
            out[Fact(expr.mode.value + "n", expr.vars, expr.logical)] = None
        else:
            out[Fact(expr.mode.value, expr.vars)] = None
    elif isinstance(expr, Agg):
        if expr.fn == "count":
            out[Fact("count", expr.vars) if expr.column is None else Fact("nn", expr.vars, expr.column)] = None
        elif expr.fn == "avg":
            out[Fact("sum", expr.vars, expr.column)] = None
            out[Fact("nn", expr.vars, expr.column)] = None
        else:
            out[Fact(expr.fn, expr.vars, expr.column)] = None
    elif isinstance(expr, Classifier):
        out[Fact("lastvar", expr.vars)] = None
    elif isinstance(expr, Call):
        for arg in expr.args:
            facts_of(arg, out)
    elif isinstance(expr, Case):
        for condition, value in expr.whens:
            facts_of(condition, out)
            facts_of(value, out)
        facts_of(expr.default, out)
    return out


class FactTable:
    """The folds a set of expressions reads, and how one row advances them."""

    def __init__(self, facts, columns):
        self.facts = list(facts)
        self.index = {f: i for i, f in enumerate(self.facts)}
        self.initial = tuple(0 if f.kind in ("count", "nn") else () if f.kind in ("firstn", "lastn") else None
                             for f in self.facts)
        self.columns = columns  # name -> python list of values (extended in place)
        self._updaters = [self._updater(f) for f in self.facts]

    def _updater(self, fact: Fact):
        kind, vs = fact.kind, fact.vars
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
            keep = fact.arg + 1
            return lambda old, row, var: old + (row,) if member(var) and len(old) < keep else old
        if kind == "lastn":
            keep = fact.arg + 1
            return lambda old, row, var: (old + (row,))[-keep:] if member(var) else old
        values = self.columns[fact.arg]
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
    """Return ``fn(row, facts, match_number) -> value`` for ``expr``.

    ``row`` is the current row, ``facts`` the run's fold tuple *including* the current row.
    """
    if isinstance(expr, Lit):
        value = expr.value
        return lambda row, facts, mn: value
    if isinstance(expr, DecimalLit):
        value = decimal.Decimal(expr.text)
        return lambda row, facts, mn: value
    if isinstance(expr, Col):
        values = scope.columns[expr.name]
        return lambda row, facts, mn: values[row]
    if isinstance(expr, MatchNumber):
        return lambda row, facts, mn: mn
    if isinstance(expr, Classifier):
        slot = scope.facts.index[Fact("lastvar", expr.vars)]
        names = scope.var_names
        return lambda row, facts, mn: None if facts[slot] is None else names[facts[slot]]
    if isinstance(expr, Agg):
        return _compile_agg(expr, scope)
    if isinstance(expr, Nav):
        landing = _compile_nav(expr, scope)
        if expr.column is None:
            return landing
        values = scope.columns[expr.column]

        def nav(row, facts, mn):
            target = landing(row, facts, mn)
            return None if target is None else values[target]

        return nav
    if isinstance(expr, Case):
        pairs = [(compile_expr(c, scope), compile_expr(v, scope)) for c, v in expr.whens]
        default = compile_expr(expr.default, scope)

        def case(row, facts, mn):
            for cond, value in pairs:
                if cond(row, facts, mn) is True:
                    return value(row, facts, mn)
            return default(row, facts, mn)

        return case
    if not isinstance(expr, Call):
        raise MatchRecognizeError(f"unknown expression node {type(expr).__name__}")
    op, args = expr.op, [compile_expr(e, scope) for e in expr.args]
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


def _compile_agg(expr: Agg, scope: Scope):
    index = scope.facts.index
    if expr.fn == "count":
        slot = index[Fact("count", expr.vars) if expr.column is None else Fact("nn", expr.vars, expr.column)]
        return lambda row, facts, mn: facts[slot]
    if expr.fn == "avg":
        total, count = index[Fact("sum", expr.vars, expr.column)], index[Fact("nn", expr.vars, expr.column)]

        def average(row, facts, mn):
            if not facts[count]:
                return None
            s = facts[total]
            if isinstance(s, decimal.Decimal):
                return _DECIMAL_CONTEXT.divide(s, decimal.Decimal(facts[count]))
            return s / facts[count]

        return average
    slot = index[Fact(expr.fn, expr.vars, expr.column)]
    return lambda row, facts, mn: facts[slot]


def _compile_nav(expr: Nav, scope: Scope):
    """``fn -> row index`` of a navigation (None outside the partition or when the variable
    set has too few rows)."""
    logical, physical = expr.logical, expr.physical
    size = scope.size
    if not logical:
        slot = scope.facts.index[Fact(expr.mode.value, expr.vars)]

        def nav(row, facts, mn):
            target = facts[slot]
            if target is None:
                return None
            target += physical
            return target if 0 <= target < size() else None

        return nav
    slot = scope.facts.index[Fact(expr.mode.value + "n", expr.vars, logical)]
    pick = logical if expr.mode is NavMode.FIRST else -1 - logical

    def deep_nav(row, facts, mn):
        rows = facts[slot]
        if len(rows) <= logical:
            return None
        target = rows[pick] + physical
        return target if 0 <= target < size() else None

    return deep_nav
