"""Match-state expressions evaluated for many runs at once, with numpy (``match.lanes``).

A *lane* is one run of a flat sequence (``program.SeqItem``s, each variable once) from its own
start row.  A ``View`` gives, per lane, the row being read and where each element of the
sequence lies so far (its first row and its row count, the row read included), and the state
of each aggregate over those rows; ``compile_condition`` turns an ``expr`` record into
``fn(view) -> Vec``.

The subset covered is what a numpy evaluation gives exactly as ``udtf.sparksql`` does:
integral and DOUBLE values (no NULL in the columns read, no NaN), literals, columns,
navigations, SUM / AVG / COUNT / MIN / MAX, comparisons, ``+ - *``, AND / OR / NOT and
widening casts.  Anything else raises ``Unsupported`` when compiling; a value the subset cannot
vouch for at run time (an integer leaving its type's range, a NaN) marks its lane ``unsure``,
and the Pike VM decides that lane's start row instead (it raises or wraps as Spark does).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from ..expr import Agg, Call, Cast, Col, Lit, Nav, NavMode, type_of
from ..sparksql import aggregates
from ..sparksql.functions import lookup

INTEGRAL = {"tinyint": (-(1 << 7), (1 << 7) - 1), "smallint": (-(1 << 15), (1 << 15) - 1),
            "int": (-(1 << 31), (1 << 31) - 1), "bigint": (-(1 << 62), (1 << 62) - 1)}
# (bigint is held to +-2**62, so one more + or - of two such values cannot leave int64; the
# values between 2**62 and 2**63 are left to the Pike VM)
NUMERIC = {*INTEGRAL, "double"}


class Unsupported(Exception):
    """An expression outside the subset ``compile_condition`` evaluates."""


class Vec(NamedTuple):
    """Values per lane: ``valid`` False = NULL, ``unsure`` True = left to the Pike VM (either
    None: all False / all True resp. none)."""
    values: np.ndarray
    valid: np.ndarray | None = None
    unsure: np.ndarray | None = None


class View(NamedTuple):
    """The lanes at one row: ``row`` (the row read), ``first`` / ``count`` (per element, an array
    over the lanes: its first row and row count, the row read included), ``aggs`` (the state of
    each aggregate, the row read folded in), ``columns`` (name -> array over the partition's
    rows held) and ``size`` (rows held).  Arrays are over the lanes, or lanes x rows ahead
    (``match.lanes`` reading ahead; a lane's fixed facts then have shape lanes x 1); ``valid``:
    name -> which of those rows are not NULL, for a ``Compiler(nullable=True)``'s columns (a
    column not in it has no NULL)."""
    row: np.ndarray
    first: list
    count: list
    aggs: list
    columns: dict
    size: int
    valid: dict | None = None


def _and(a, b):
    if a is None:
        return b
    return a if b is None else a & b


def _or(a, b):
    if a is None:
        return b
    return a if b is None else a | b


def _checked(values: np.ndarray, type_: str, valid, unsure):
    """``values`` of ``type_`` with lanes out of its range (integral) or NaN (double) unsure."""
    if type_ == "double":
        bad = np.isnan(values)
    else:
        lo, hi = INTEGRAL[type_]
        bad = (values < lo) | (values > hi)
    if bad.any():
        bad = bad if valid is None else bad & valid
        unsure = _or(unsure, bad)
    return Vec(values, valid, unsure)


def column_array(values: list, type_: str, nan: bool = False) -> np.ndarray:
    """A column's values (Python) as numpy; Unsupported for NULLs, NaN (unless ``nan``) or an
    unhandled type."""
    if type_ not in NUMERIC and type_ != "boolean":
        raise Unsupported(type_)
    if type_ == "boolean":
        if None in values:
            raise Unsupported("NULL")
        return np.array(values, dtype=bool)
    try:
        out = np.array(values, dtype=np.float64 if type_ == "double" else np.int64)  # (an int beyond int64 raises)
    except (TypeError, OverflowError):
        raise Unsupported("NULL") from None
    if type_ == "double" and not nan and np.isnan(out).any():
        raise Unsupported("NaN")
    if type_ == "bigint" and len(out) and (out.min() < -(1 << 62) or out.max() > (1 << 62) - 1):
        raise Unsupported("bigint beyond 2**62")
    return out


class Compiler:
    """Compiles expressions over a sequence: ``elements`` maps a variable to its element
    index.  ``aggs`` collects the aggregates the compiled expressions read (``View.aggs``
    follows its order).  ``nullable``: a column may hold NULLs (``View.valid``), which every
    vectorized function but AND / OR (three-valued) propagates, and a DOUBLE NaN, which compares
    in Spark's order (NaN = NaN, above every other value) instead of leaving its lane unsure."""

    def __init__(self, elements: dict, nullable: bool = False):
        self.elements = elements
        self.nullable = nullable
        self.aggs: list = []
        self.columns: dict = {}  # name -> Spark type, of the columns read

    def condition(self, expr) -> Callable:
        """``fn(view) -> (holds, unsure)`` for a boolean expression: it holds when TRUE."""
        if type_of(expr) != "boolean":
            raise Unsupported("not boolean")
        fn = self.compile(expr)

        def holds(view):
            vec = fn(view)
            values = vec.values if vec.valid is None else vec.values & vec.valid
            return values, vec.unsure

        return holds

    def compile(self, expr, row_only: bool = False) -> Callable:
        if isinstance(expr, Lit):
            return self._literal(expr)
        if isinstance(expr, Col):
            if expr.type not in NUMERIC and expr.type != "boolean":
                raise Unsupported(expr.type)
            self.columns[expr.name] = expr.type
            name = expr.name
            if self.nullable:
                return lambda view: Vec(view.columns[name][view.row], None if name not in view.valid else
                                        view.valid[name][view.row])
            return lambda view: Vec(view.columns[name][view.row])
        if isinstance(expr, Cast):
            return self._cast(expr, row_only)
        if isinstance(expr, Call):
            return self._call(expr, row_only)
        if row_only:
            raise Unsupported(type(expr).__name__)
        if isinstance(expr, Nav):
            return self._nav(expr)
        if isinstance(expr, Agg):
            return self._agg(expr)
        raise Unsupported(type(expr).__name__)

    def _literal(self, expr: Lit):
        """A literal of its type's dtype; NULL is that dtype's zeros, none of them valid."""
        value = expr.value
        if expr.type in INTEGRAL:
            lo, hi = INTEGRAL[expr.type]
            if value is not None and not lo <= value <= hi:
                raise Unsupported("literal beyond 2**62")
            dtype = np.int64
        elif expr.type == "double":
            if value is not None and value != value and not self.nullable:
                raise Unsupported("NaN")
            dtype = np.float64
        elif expr.type == "boolean":
            dtype = bool
        elif value is None:  # an untyped NULL (Spark's VOID)
            dtype = bool
        else:
            raise Unsupported(expr.type)
        if value is None:
            return lambda view: Vec(np.zeros(view.row.shape, dtype=dtype), np.zeros(view.row.shape, dtype=bool))
        return lambda view: Vec(np.full(view.row.shape, value, dtype=dtype))

    def _cast(self, expr: Cast, row_only: bool):
        steps = (expr.source, *expr.through)
        for source, target in zip(steps, steps[1:]):
            widening = source == target or (source in INTEGRAL and (
                target == "double" or (target in INTEGRAL and INTEGRAL[target][1] >= INTEGRAL[source][1])))
            if not widening:
                raise Unsupported(f"CAST {source} AS {target}")
        arg = self.compile(expr.arg, row_only)
        if steps[-1] != "double" or steps[0] == "double":
            return arg

        def to_double(view):
            vec = arg(view)
            return Vec(vec.values.astype(np.float64), vec.valid, vec.unsure)

        return to_double

    def _call(self, expr: Call, row_only: bool):
        ufunc = lookup(expr.fn).vector  # the function's vectorized form, if it has one
        if ufunc is None:
            raise Unsupported(expr.fn)
        args, types = [self.compile(a, row_only) for a in expr.args], set(expr.arg_types)
        if ufunc in ("logical_and", "logical_or") and len(args) == 2:
            return _kleene(args[0], args[1], ufunc == "logical_and")
        if ufunc == "logical_not" and len(args) == 1:
            (arg,) = args
            return lambda view: _not(arg(view))
        op = getattr(np, ufunc)
        if expr.type == "boolean" and len(args) == 2 and (types <= INTEGRAL.keys() or len(types) == 1) \
                and types <= NUMERIC | {"boolean"}:  # a comparison
            if self.nullable and types == {"double"}:
                return _binary(args, _NAN_ORDER[ufunc])
            return _binary(args, lambda a, b: op(a, b))
        if expr.type in NUMERIC and len(args) == 2 and (
                types == {"double"} if expr.type == "double" else types <= INTEGRAL.keys()):
            type_ = expr.type
            if type_ == "double":  # (IEEE arithmetic, Java's: a NaN is a value where its order is Spark's)
                return _binary(args, op, None if self.nullable else type_)

            def integral(a, b):  # a product may leave int64: where it could, a value out of range
                if ufunc == "multiply":
                    return np.where(np.abs(a.astype(np.float64) * b.astype(np.float64)) < 2.0 ** 62, a * b, 1 << 62)
                return op(a, b)

            return _binary(args, integral, type_)
        raise Unsupported(expr.fn)

    def _range(self, vars_):
        """``fn(view) -> (lo, total)``: the first row and row count of variable set ``vars_``
        so far (the elements it names must be consecutive in the sequence)."""
        if vars_ is None:
            return lambda view: (view.first[0], sum(view.count))
        try:
            ks = sorted(self.elements[v] for v in vars_)
        except KeyError:
            raise Unsupported("variable outside the sequence") from None
        if ks != list(range(ks[0], ks[-1] + 1)):
            raise Unsupported("variables not consecutive")
        k1, k2 = ks[0], ks[-1] + 1
        if k2 == k1 + 1:
            return lambda view: (view.first[k1], view.count[k1])

        def span(view):
            counts = view.count[k1:k2]
            lo = view.first[k2 - 1]
            for k in range(k2 - 2, k1 - 1, -1):
                lo = np.where(counts[k - k1] > 0, view.first[k], lo)
            return lo, sum(counts)

        return span

    def _nav(self, expr: Nav):
        if expr.column is None or expr.type not in NUMERIC | {"boolean"}:
            raise Unsupported("navigation")
        self.columns[expr.column] = expr.type
        span, name = self._range(expr.vars), expr.column
        logical, physical, first = expr.logical, expr.physical, expr.mode is NavMode.FIRST

        def nav(view):
            lo, total = span(view)
            target = lo + logical if first else lo + total - 1 - logical
            valid = total > logical  # (then the target is a row read, unless moved physically)
            if physical:
                target = target + physical
                valid = valid & (target >= 0) & (target < view.size)
            if valid.all():
                return Vec(view.columns[name][target])
            return Vec(view.columns[name][np.where(valid, target, 0)], valid)

        return nav

    def _agg(self, expr: Agg):
        form = aggregates.lookup(expr.fn).vector  # the aggregate's vectorized form, if it has one
        if form is None or expr.distinct or expr.filter is not None or len(expr.args) > 1 or \
                (form != "count" and (len(expr.args) != 1 or expr.arg_types[0] not in NUMERIC)):
            raise Unsupported(f"aggregate {expr.fn}")
        self._range(expr.vars)  # the same restriction on its variables
        members = frozenset(range(len(self.elements))) if expr.vars is None else \
            frozenset(self.elements[v] for v in expr.vars)
        arg = self.compile(expr.args[0], row_only=True) if expr.args else None
        fold = Fold(form, expr.arg_types[0] if expr.args else None, members, arg)
        slot = len(self.aggs)
        self.aggs.append(fold)
        return lambda view: fold.result(view.aggs[slot])


class Fold:
    """An aggregate over lanes: its state is a tuple of arrays (one entry per lane), the last
    one ``unsure``; ``add`` folds in the row each lane reads, in row order, as
    ``udtf.sparksql.aggregates`` does (sequential double sums, SUM of integers exact).
    ``form``: the aggregate's ``Aggregate.vector``: count, add (SUM), mean (AVG), minimum or
    maximum (numpy's ufunc)."""

    def __init__(self, form: str, arg_type, members: frozenset, arg):
        self.form, self.arg_type, self.members, self.arg = form, arg_type, members, arg

    def initial(self, n: int) -> tuple:
        unsure = np.zeros(n, dtype=bool)
        if self.form == "count":
            return np.zeros(n, dtype=np.int64), unsure
        dtype = np.float64 if self.form == "mean" or self.arg_type == "double" else np.int64
        return np.zeros(n, dtype=dtype), np.zeros(n, dtype=np.int64), unsure

    def add(self, state: tuple, view: View) -> tuple:
        if self.arg is None:  # COUNT(*)
            return state[0] + 1, state[1]
        vec = self.arg(view)
        x, valid = vec.values, vec.valid
        unsure = _or(state[-1], vec.unsure) if vec.unsure is not None else state[-1]
        if self.form == "count":
            return state[0] + (1 if valid is None else valid), unsure
        total, n = state[0], state[1]
        grown = n + 1 if valid is None else n + valid
        if self.form == "mean":
            added = total + x.astype(np.float64)
        elif self.form == "add":
            added = np.where(n > 0, total, 0) + x  # SUM: the first value, or the sum plus it
            if added.dtype == np.int64:
                unsure = unsure | (added < -(1 << 62)) | (added > (1 << 62) - 1)
        else:
            added = np.where(n > 0, getattr(np, self.form)(total, x), x)
        if valid is not None:
            added = np.where(valid, added, total)
        return added, grown, unsure

    def accumulate(self, state: tuple, view: View) -> tuple | None:
        """The states after each of the rows ``view.row`` (lanes x rows ahead, in row order) is
        folded in after ``state``: entry ``[i, j]`` has rows ``0 .. j`` of lane ``i`` folded, as
        ``add`` row by row gives (the same sequential operations); None where the argument
        can be NULL (``add`` then decides row by row)."""
        shape = view.row.shape
        ahead = np.arange(1, shape[1] + 1)
        before = state[-1][:, None]
        if self.arg is None:  # COUNT(*)
            return state[0][:, None] + ahead, np.broadcast_to(before, shape)
        vec = self.arg(view)
        if vec.valid is not None:
            return None
        unsure = before if vec.unsure is None else before | np.logical_or.accumulate(
            np.broadcast_to(vec.unsure, shape), axis=1)
        if self.form == "count":
            return state[0][:, None] + ahead, np.broadcast_to(unsure, shape)
        x, (total, n) = np.broadcast_to(vec.values, shape), state[:2]
        if self.form == "mean":
            folded = np.add.accumulate(np.concatenate([total[:, None], x.astype(np.float64)], axis=1), axis=1)
        elif self.form == "add":
            start = np.where(n > 0, total, 0)  # SUM: the first value, or the sum plus it
            folded = np.add.accumulate(np.concatenate([start[:, None], x], axis=1), axis=1)
            if folded.dtype == np.int64:
                unsure = unsure | np.logical_or.accumulate((folded[:, 1:] < -(1 << 62)) | (folded[:, 1:] > (1 << 62) - 1),
                                                           axis=1)
        else:
            start = np.where(n > 0, total, x[:, 0])
            op = getattr(np, self.form)
            folded = op.accumulate(np.concatenate([start[:, None], x], axis=1), axis=1)
        return folded[:, 1:], n[:, None] + ahead, np.broadcast_to(unsure, shape)

    def result(self, state: tuple) -> Vec:
        unsure = state[-1] if state[-1].any() else None
        if self.form == "count":
            return Vec(state[0], None, unsure)
        total, n = state[0], state[1]
        valid = n > 0
        if self.form == "mean":
            values = total / np.where(valid, n, 1)
            return _checked(values, "double", valid, unsure)
        return Vec(total, valid, unsure)


def _nan_less(a, b):
    return (a < b) | (np.isnan(b) & ~np.isnan(a))


def _nan_equal(a, b):
    return (a == b) | (np.isnan(a) & np.isnan(b))


# comparisons of doubles in Spark's order: NaN equal to itself and above every other value
_NAN_ORDER = {"equal": _nan_equal, "not_equal": lambda a, b: ~_nan_equal(a, b), "less": _nan_less,
              "less_equal": lambda a, b: _nan_less(a, b) | _nan_equal(a, b),
              "greater": lambda a, b: _nan_less(b, a), "greater_equal": lambda a, b: _nan_less(b, a) | _nan_equal(a, b)}


def _binary(args, op, checked_type: str | None = None):
    left, right = args

    def apply(view):
        a, b = left(view), right(view)
        values = op(a.values, b.values)
        valid, unsure = _and(a.valid, b.valid), _or(a.unsure, b.unsure)
        if checked_type is not None:
            return _checked(values, checked_type, valid, unsure)
        return Vec(values, valid, unsure)

    return apply


def _not(vec: Vec) -> Vec:
    return Vec(~vec.values, vec.valid, vec.unsure)


def _kleene(left, right, conjunction: bool):
    """AND / OR in three-valued logic (FALSE / TRUE absorbs NULL)."""
    def apply(view):
        a, b = left(view), right(view)
        unsure = _or(a.unsure, b.unsure)
        if a.valid is None and b.valid is None:
            return Vec(a.values & b.values if conjunction else a.values | b.values, None, unsure)
        av = True if a.valid is None else a.valid
        bv = True if b.valid is None else b.valid
        at, bt = a.values & av, b.values & bv  # known TRUE
        af, bf = ~a.values & av, ~b.values & bv  # known FALSE
        if conjunction:
            false = af | bf
            true = at & bt
        else:
            true = at | bt
            false = af & bf
        return Vec(true, true | false, unsure)

    return apply
