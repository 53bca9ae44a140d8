"""Spark's aggregate functions as running folds over the rows of a match (worker side).

``aggregate(name, arg_types, distinct, ansi, ignore_nulls=False)`` returns a ``Fold``:

* ``arg_types``: the type each argument is implicitly cast to first (``scalar.cast``), e.g.
  ``sum(int)`` reads bigint, ``avg(float)`` reads double;
* ``result_type``: Spark's result type (``sum(decimal(p,s))`` = decimal(min(38,p+10),s),
  ``avg(decimal(p,s))`` = decimal(p+4,s+4) bounded, ``stddev`` = double, ...);
* ``initial``, ``step(state, *values) -> state`` and ``result(state) -> value``.

Invariants: states are immutable and hashable (runs of the matcher fork and share them; runs
with equal states may be merged); ``step`` never mutates its input.  ``collect_list`` keeps a
persistent cons chain (``Chain``), so n rows cost O(n) memory in total across forks.  Rows are
folded in match order; Spark processes one partition in row order, so order-dependent results
(first/last, collect_list, listagg, max_by ties) agree with ``SELECT agg(x) FROM ...`` over a
single partition.  ``FILTER (WHERE ...)`` is the caller's job: skip ``step`` for rows failing it.
``count(*)`` is ``aggregate("count", (), ...)``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Sequence

from .scalar import DEC38, DEC_CTX, compare, fit_decimal
from .errors import SparkAnalysisError, SparkError
from .types import BIGINT, BOOLEAN, DOUBLE, STRING, Kind, SqlType, array, decimal

__all__ = ["Fold", "Chain", "aggregate", "AGGREGATES"]


@dataclass(frozen=True, slots=True)
class Fold:
    arg_types: tuple[SqlType, ...]
    result_type: SqlType
    initial: Any
    step: Callable[..., Any]
    result: Callable[[Any], Any]


class Chain:
    """An immutable cons list ``(value, parent)`` with its length and a precomputed hash;
    equality walks iteratively (no recursion limit) and stops at a shared tail."""
    __slots__ = ("value", "parent", "length", "_hash")

    def __init__(self, value, parent: Chain | None):
        self.value = value
        self.parent = parent
        self.length = 1 if parent is None else parent.length + 1
        self._hash = hash((value, None if parent is None else parent._hash))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        a, b = self, other
        if not isinstance(b, Chain):
            return NotImplemented
        if a.length != b.length or a._hash != b._hash:
            return False
        while a is not b:
            if a is None or b is None or a.value != b.value:
                return False
            a, b = a.parent, b.parent
        return True

    def to_tuple(self) -> tuple:
        out = []
        c = self
        while c is not None:
            out.append(c.value)
            c = c.parent
        out.reverse()
        return tuple(out)


def _cons(chain, value):
    return Chain(value, chain)


def _items(chain) -> tuple:
    return () if chain is None else chain.to_tuple()


def _norm(t: SqlType):
    """Spark normalizes floats for DISTINCT/sets: NaN = NaN, -0.0 = 0.0."""
    if t.is_floating:
        return lambda v: math.nan if v != v else (0.0 if v == 0 else v)
    return lambda v: v


_NAN_KEY = ("NaN",)


def _key(v):
    return _NAN_KEY if isinstance(v, float) and v != v else v


# ---- helpers per family --------------------------------------------------------------------

def _overflow(cls="ARITHMETIC_OVERFLOW", msg="overflow."):
    return SparkError(cls, msg)


def _sum(t: SqlType, ansi: bool) -> Fold:
    if t.is_integral or t.is_string and False:
        lo, hi = -(1 << 63), (1 << 63) - 1

        def step(s, v):
            if v is None:
                return s
            r = v if s is None else s + v
            if not lo <= r <= hi:
                if ansi:
                    raise _overflow()
                r = ((r + (1 << 63)) % (1 << 64)) - (1 << 63)
            return r
        return Fold((BIGINT,), BIGINT, None, step, lambda s: s)
    if t.is_decimal:
        p, sc = min(38, t.precision + 10), t.scale
        rt = decimal(p, sc)

        # state: (sum or None, overflowed)
        def dstep(s, v):
            if v is None:
                return s
            total, over = s
            if over:
                return s
            # no overflow check while summing (DecimalAddNoOverflowCheck): only the final
            # sum must fit (CheckOverflowInSum)
            total = v if total is None else DEC_CTX.add(total, v)
            return (total, False)

        def dres(s):
            total, over = s
            if total is None:
                return None
            # the final sum must fit: NULL, or NUMERIC_VALUE_OUT_OF_RANGE as Spark's window and
            # VALUES aggregates raise (a hash aggregate's partial buffer says ARITHMETIC_OVERFLOW)
            return fit_decimal(total, p, sc, ansi)
        return Fold((t,), rt, (None, False), dstep, dres)
    if t.is_numeric or t.is_string:
        def fstep(s, v):
            if v is None:
                return s
            return (0.0 if s is None else s) + v  # Sum: coalesce(sum, 0.0) + x, so sum(-0.0) is 0.0
        return Fold((DOUBLE,), DOUBLE, None, fstep, lambda s: s)
    if t.is_interval:
        def istep(s, v):
            return s if v is None else (v if s is None else s + v)
        return Fold((t,), t, None, istep, lambda s: s)
    raise SparkAnalysisError("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                             f"sum does not accept {str(t).upper()}")


def _avg(t: SqlType, ansi: bool) -> Fold:
    if t.is_decimal:
        p, sc = t.precision, t.scale
        rt = decimal(min(38, p + 4), min(38, sc + 4))

        def step(s, v):
            if v is None:
                return s
            total, n, over = s
            if over:
                return (total, n + 1, over)
            total = v if total is None else DEC_CTX.add(total, v)
            return (total, n + 1, False)

        def res(s):
            total, n, over = s
            if n == 0:
                return None
            # the sum is not checked (its buffer is unbounded); only the average must fit
            # Divide(sum, CAST(count AS decimal(20,0))): MathContext(38), then the result type
            return fit_decimal(DEC38.divide(total, Decimal(n)), rt.precision, rt.scale, ansi)
        return Fold((t,), rt, (None, 0, False), step, res)
    if t.is_numeric or t.is_string:
        def fstep(s, v):
            if v is None:
                return s
            total, n = s
            return (total + v, n + 1)

        def fres(s):
            total, n = s
            return None if n == 0 else total / n
        return Fold((DOUBLE,), DOUBLE, (0.0, 0), fstep, fres)
    raise SparkAnalysisError("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                             f"avg does not accept {str(t).upper()}")


def _moments(name: str) -> Fold:
    """CentralMomentAgg (order 2): Welford updates in doubles, exactly as Spark orders them."""
    def step(s, v):
        if v is None:
            return s
        n, avg, m2 = s
        n = n + 1.0
        delta = v - avg
        delta_n = delta / n
        return (n, avg + delta_n, m2 + delta * (delta - delta_n))

    def res(s):
        n, _, m2 = s
        if n == 0.0:
            return None
        if name in ("var_pop",):
            return m2 / n
        if name == "stddev_pop":
            return math.sqrt(m2 / n)
        if n == 1.0:
            return None  # divide by zero: NULL (spark.sql.legacy.statisticalAggregate=false)
        if name == "var_samp":
            return m2 / (n - 1.0)
        return math.sqrt(m2 / (n - 1.0))
    return Fold((DOUBLE,), DOUBLE, (0.0, 0.0, 0.0), step, res)


def _extremum(t: SqlType, want: int) -> Fold:
    c = compare(t)

    def step(s, v):
        if v is None:
            return s
        return v if s is None or c(v, s) == want else s
    return Fold((t,), t, None, step, lambda s: s)


def _by(xt: SqlType, yt: SqlType, want: int) -> Fold:
    c = compare(yt)

    # state: (x, y) — on ties the last row with the extreme y wins
    def step(s, x, y):
        if y is None:
            return s
        if s is None or c(y, s[1]) != -want:
            return (x, y)
        return s
    return Fold((xt, yt), xt, None, step, lambda s: None if s is None else s[0])


def _first_last(t: SqlType, last: bool, ignore_nulls: bool) -> Fold:
    # state: (seen, value)
    if last:
        def lstep(s, v):
            if v is None and ignore_nulls:
                return s
            return (True, v)
        return Fold((t,), t, (False, None), lstep, lambda s: s[1])

    def fstep(s, v):
        if s[0] or (v is None and ignore_nulls):
            return s
        return (True, v)
    return Fold((t,), t, (False, None), fstep, lambda s: s[1])


def _bool(name: str) -> Fold:
    if name == "count_if":
        return Fold((BOOLEAN,), BIGINT, 0, lambda s, v: s + 1 if v is True else s, lambda s: s)
    if name == "bool_and":
        def astep(s, v):
            if v is None:
                return s
            return v if s is None else (s and v)
        return Fold((BOOLEAN,), BOOLEAN, None, astep, lambda s: s)

    def ostep(s, v):
        if v is None:
            return s
        return v if s is None else (s or v)
    return Fold((BOOLEAN,), BOOLEAN, None, ostep, lambda s: s)


def _collect(t: SqlType, distinct: bool) -> Fold:
    if distinct:  # collect_set: insertion order of first occurrences (see docs)
        norm = _norm(t)

        def sstep(s, v):
            if v is None:
                return s
            chain, seen = s
            k = _key(norm(v))
            if k in seen:
                return s
            return (_cons(chain, norm(v)), seen | {k})
        return Fold((t,), array(t), (None, frozenset()), sstep, lambda s: _items(s[0]))

    def lstep(s, v):
        return s if v is None else _cons(s, v)
    return Fold((t,), array(t), None, lstep, _items)


def _listagg(t: SqlType, with_delim: bool) -> Fold:
    def step(s, v, d=""):
        if v is None:
            return s
        return (_cons(s[0], v), d if s[0] is not None else s[1])

    def res(s):
        items = _items(s[0])
        if not items:
            return None
        return (s[1] or "").join(items) if with_delim else "".join(items)

    def step_d(s, v, d):
        if v is None:
            return s
        return (_cons(s[0], v), s[1] if s[1] is not None else d)
    if with_delim:
        return Fold((t, t), t, (None, None), step_d, res)
    return Fold((t,), t, (None, None), step, res)


def _count(n_args: int) -> Fold:
    if n_args == 0:
        return Fold((), BIGINT, 0, lambda s: s + 1, lambda s: s)

    def step(s, *vs):
        return s if any(v is None for v in vs) else s + 1
    return Fold((), BIGINT, 0, step, lambda s: s)


def _distinct(fold: Fold, t: SqlType) -> Fold:
    """Feeds ``fold`` each distinct non-null value once (floats normalized)."""
    norm = _norm(t)
    inner = fold.step

    def step(s, v):
        if v is None:
            return s
        seen, st = s
        k = _key(norm(v))
        if k in seen:
            return s
        return (seen | {k}, inner(st, norm(v)))
    return Fold(fold.arg_types, fold.result_type, (frozenset(), fold.initial), step,
                lambda s: fold.result(s[1]))


_ALIASES = {"mean": "avg", "first_value": "first", "any_value": "first", "last_value": "last",
            "every": "bool_and", "some": "bool_or", "any": "bool_or", "array_agg": "collect_list",
            "std": "stddev_samp", "stddev": "stddev_samp", "variance": "var_samp",
            "string_agg": "listagg"}
AGGREGATES = frozenset(("count", "sum", "avg", "min", "max", "first", "last", "count_if",
                        "bool_and", "bool_or", "collect_list", "collect_set", "max_by",
                        "min_by", "stddev_samp", "stddev_pop", "var_samp", "var_pop", "listagg",
                        "approx_count_distinct")) | frozenset(_ALIASES)


def aggregate(name: str, arg_types: Sequence[SqlType], distinct: bool, ansi: bool,
              ignore_nulls: bool = False) -> Fold:
    """The fold for ``name(DISTINCT? args)``; ``ignore_nulls`` for first/last."""
    f = name.strip().lower()
    f = _ALIASES.get(f, f)
    types = tuple(arg_types)
    t = types[0] if types else None
    if f == "count":
        if distinct:
            if len(types) != 1:
                raise NotImplementedError("count(DISTINCT a, b)")
            inner = _count(1)
            d = _distinct(Fold((t,), BIGINT, 0, lambda s, v: s + 1, lambda s: s), t)
            return Fold((t,), BIGINT, d.initial, d.step, d.result)
        c = _count(len(types))
        return Fold(types, BIGINT, c.initial, c.step, c.result)
    if f == "approx_count_distinct":
        # exact distinct count (Spark's HLL++ is exact for small cardinalities; see docs)
        d = _distinct(Fold((t,), BIGINT, 0, lambda s, v: s + 1, lambda s: s), t)
        return Fold((t,), BIGINT, d.initial, d.step, d.result)
    if f == "sum":
        fold = _sum(t if not t.is_string else DOUBLE, ansi)
    elif f == "avg":
        fold = _avg(t if not t.is_string else DOUBLE, ansi)
    elif f in ("stddev_samp", "stddev_pop", "var_samp", "var_pop"):
        if not (t.is_numeric or t.is_string or t.is_void):
            raise SparkAnalysisError("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                                     f"{f} requires DOUBLE, not {str(t).upper()}")
        fold = _moments(f)
    elif f in ("min", "max"):
        fold = _extremum(t, 1 if f == "max" else -1)
        if distinct:
            return fold  # DISTINCT does not change min/max
    elif f in ("max_by", "min_by"):
        return _by(types[0], types[1], 1 if f == "max_by" else -1)
    elif f in ("first", "last"):
        return _first_last(t, f == "last", ignore_nulls)
    elif f in ("count_if", "bool_and", "bool_or"):
        if not (t.kind is Kind.BOOLEAN or t.is_void):
            raise SparkAnalysisError("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                                     f"{f} requires BOOLEAN, not {str(t).upper()}")
        fold = _bool(f)
    elif f in ("collect_list", "collect_set"):
        return _collect(t, distinct or f == "collect_set")
    elif f == "listagg":
        if distinct:
            raise NotImplementedError("listagg(DISTINCT ...)")
        return _listagg(STRING if t.is_void else t, len(types) == 2)
    else:
        raise SparkAnalysisError("UNRESOLVED_ROUTINE", f"aggregate {name!r} is not supported")
    return _distinct(fold, fold.arg_types[0]) if distinct else fold
