"""Spark's aggregate functions as running folds over the rows of a match (worker side), and
their registry: one ``Aggregate`` record per aggregate (``AGGREGATES``: name and aliases, how
Spark types its arguments and result, the fold, what DISTINCT does, whether it takes IGNORE
NULLS, its vectorized form), from which everything else is derived.

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
import operator
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any, Callable, Sequence

from .coercion import Signature
from .errors import SparkAnalysisError, SparkError
from .scalar import DEC38, DEC_CTX, compare, fit_decimal
from .types import BIGINT, BOOLEAN, DOUBLE, INT, STRING, Kind, SqlType, array, decimal

__all__ = ["Fold", "Chain", "Aggregate", "Distinct", "AGGREGATES", "NAMES", "lookup", "aggregate"]


@dataclass(frozen=True, slots=True)
class Fold:
    """``result_raises``: may ``result`` raise a Spark error (else only ``step`` may)."""
    arg_types: tuple[SqlType, ...]
    result_type: SqlType
    initial: Any
    step: Callable[..., Any]
    result: Callable[[Any], Any]
    result_raises: bool = True


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


# ---- typing: Spark's input casts and result type per aggregate ---------------------------

def _mismatch(name: str, t: SqlType, wanted: str) -> SparkAnalysisError:
    return SparkAnalysisError("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                              f"{name} requires {wanted}, not {str(t).upper()}")


def _sum_sig(name, types, ansi) -> Signature:
    t = DOUBLE if types[0].is_string else types[0]
    if t.is_integral:
        return Signature((BIGINT,), BIGINT)
    if t.is_decimal:
        return Signature((t,), decimal(min(38, t.precision + 10), t.scale))
    if t.is_numeric:
        return Signature((DOUBLE,), DOUBLE)
    if t.is_interval:
        return Signature((t,), t)
    raise _mismatch(name, t, "a numeric or interval argument")


def _avg_sig(name, types, ansi) -> Signature:
    t = DOUBLE if types[0].is_string else types[0]
    if t.is_decimal:
        return Signature((t,), decimal(min(38, t.precision + 4), min(38, t.scale + 4)))
    if t.is_numeric:
        return Signature((DOUBLE,), DOUBLE)
    raise _mismatch(name, t, "a numeric argument")


def _double_sig(name, types, ansi) -> Signature:
    t = types[0]
    if not (t.is_numeric or t.is_string or t.is_void):
        raise _mismatch(name, t, "DOUBLE")
    return Signature((DOUBLE,), DOUBLE)


def _boolean_sig(result: SqlType | None):
    def sig(name, types, ansi) -> Signature:
        t = types[0]
        if not (t.kind is Kind.BOOLEAN or t.is_void):
            raise _mismatch(name, t, "BOOLEAN")
        return Signature((BOOLEAN,), result or BOOLEAN)
    return sig


def _same_sig(name, types, ansi) -> Signature:
    return Signature((types[0],), types[0])


def _by_sig(name, types, ansi) -> Signature:
    return Signature((types[0], types[1]), types[0])


def _collect_sig(name, types, ansi) -> Signature:
    return Signature((types[0],), array(types[0]))


def _listagg_sig(name, types, ansi) -> Signature:
    t = STRING if types[0].is_void else types[0]
    return Signature((t,) * len(types), t)


def _integral_sig(name, types, ansi) -> Signature:
    """ExpectsInputTypes(IntegralType): no implicit cast, but NULL is an INT."""
    t = INT if types[0].is_void else types[0]
    if not t.is_integral:
        raise _mismatch(name, t, "an integral argument (TINYINT, SMALLINT, INT or BIGINT)")
    return Signature((t,), t)


def _count_sig(name, types, ansi) -> Signature:
    return Signature(tuple(types), BIGINT)


# ---- folds over the cast arguments -----------------------------------------------------------

def _overflow(cls="ARITHMETIC_OVERFLOW", msg="overflow."):
    return SparkError(cls, msg)


def _sum(sig: Signature, ansi: bool) -> Fold:
    t = sig.args[0]
    if t.is_integral:
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
        return Fold(sig.args, sig.result, None, step, lambda s: s, result_raises=False)
    if t.is_decimal:
        p, sc = sig.result.precision, sig.result.scale

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
        return Fold(sig.args, sig.result, (None, False), dstep, dres)
    if t.is_interval:
        def istep(s, v):
            return s if v is None else (v if s is None else s + v)
        return Fold(sig.args, sig.result, None, istep, lambda s: s)

    def fstep(s, v):
        if v is None:
            return s
        return (0.0 if s is None else s) + v  # Sum: coalesce(sum, 0.0) + x, so sum(-0.0) is 0.0
    return Fold(sig.args, sig.result, None, fstep, lambda s: s, result_raises=False)


def _avg(sig: Signature, ansi: bool) -> Fold:
    t, rt = sig.args[0], sig.result
    if t.is_decimal:
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
        return Fold(sig.args, rt, (None, 0, False), step, res)

    def fstep(s, v):
        if v is None:
            return s
        total, n = s
        return (total + v, n + 1)

    def fres(s):
        total, n = s
        return None if n == 0 else total / n
    return Fold(sig.args, rt, (0.0, 0), fstep, fres, result_raises=False)


def _moments(name: str):
    """CentralMomentAgg (order 2): Welford updates in doubles, exactly as Spark orders them."""
    def fold(sig: Signature, ansi: bool) -> Fold:
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
            if name == "var_pop":
                return m2 / n
            if name == "stddev_pop":
                return math.sqrt(m2 / n)
            if n == 1.0:
                return None  # divide by zero: NULL (spark.sql.legacy.statisticalAggregate=false)
            if name == "var_samp":
                return m2 / (n - 1.0)
            return math.sqrt(m2 / (n - 1.0))
        return Fold(sig.args, sig.result, (0.0, 0.0, 0.0), step, res)
    return fold


def _extremum(want: int):
    def fold(sig: Signature, ansi: bool) -> Fold:
        c = compare(sig.args[0])

        def step(s, v):
            if v is None:
                return s
            return v if s is None or c(v, s) == want else s
        return Fold(sig.args, sig.result, None, step, lambda s: s, result_raises=False)
    return fold


def _by(want: int):
    def fold(sig: Signature, ansi: bool) -> Fold:
        c = compare(sig.args[1])

        # state: (x, y) -- on ties the last row with the extreme y wins
        def step(s, x, y):
            if y is None:
                return s
            if s is None or c(y, s[1]) != -want:
                return (x, y)
            return s
        return Fold(sig.args, sig.result, None, step, lambda s: None if s is None else s[0])
    return fold


def _first_last(last: bool):
    # state: (seen, value)
    def fold(sig: Signature, ansi: bool, ignore_nulls: bool = False) -> Fold:
        if last:
            def lstep(s, v):
                if v is None and ignore_nulls:
                    return s
                return (True, v)
            return Fold(sig.args, sig.result, (False, None), lstep, lambda s: s[1])

        def fstep(s, v):
            if s[0] or (v is None and ignore_nulls):
                return s
            return (True, v)
        return Fold(sig.args, sig.result, (False, None), fstep, lambda s: s[1])
    return fold


def _bitwise(op):
    """BitAggregate: ``op`` over the non-null values (a bitwise op of one integral type cannot overflow)."""
    def fold(sig: Signature, ansi: bool) -> Fold:
        def step(s, v):
            return s if v is None else v if s is None else op(s, v)
        return Fold(sig.args, sig.result, None, step, lambda s: s, result_raises=False)
    return fold


def _count_if(sig: Signature, ansi: bool) -> Fold:
    return Fold(sig.args, sig.result, 0, lambda s, v: s + 1 if v is True else s, lambda s: s)


def _bool(conjunction: bool):
    def fold(sig: Signature, ansi: bool) -> Fold:
        def step(s, v):
            if v is None:
                return s
            return v if s is None else ((s and v) if conjunction else (s or v))
        return Fold(sig.args, sig.result, None, step, lambda s: s)
    return fold


def _collect_set(sig: Signature, ansi: bool) -> Fold:
    """collect_set: insertion order of first occurrences (see docs)."""
    norm = _norm(sig.args[0])

    def sstep(s, v):
        if v is None:
            return s
        chain, seen = s
        k = _key(norm(v))
        if k in seen:
            return s
        return (_cons(chain, norm(v)), seen | {k})
    return Fold(sig.args, sig.result, (None, frozenset()), sstep, lambda s: _items(s[0]))


def _collect_list(sig: Signature, ansi: bool) -> Fold:
    def lstep(s, v):
        return s if v is None else _cons(s, v)
    return Fold(sig.args, sig.result, None, lstep, _items)


def _listagg(sig: Signature, ansi: bool) -> Fold:
    def step(s, v, d=""):
        if v is None:
            return s
        return (_cons(s[0], v), d if s[0] is not None else s[1])

    def res(s):
        items = _items(s[0])
        if not items:
            return None
        return (s[1] or "").join(items) if len(sig.args) == 2 else "".join(items)

    def step_d(s, v, d):
        if v is None:
            return s
        return (_cons(s[0], v), s[1] if s[1] is not None else d)
    return Fold(sig.args, sig.result, (None, None), step_d if len(sig.args) == 2 else step, res)


def _count(sig: Signature, ansi: bool) -> Fold:
    if not sig.args:
        return Fold(sig.args, sig.result, 0, lambda s: s + 1, lambda s: s, result_raises=False)

    def step(s, *vs):
        return s if any(v is None for v in vs) else s + 1
    return Fold(sig.args, sig.result, 0, step, lambda s: s, result_raises=False)


def _distinct(fold: Fold) -> Fold:
    """Feeds ``fold`` each distinct non-null value once (floats normalized)."""
    norm = _norm(fold.arg_types[0])
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
                lambda s: fold.result(s[1]), fold.result_raises)


# ---- the registry ---------------------------------------------------------------------------

class Distinct(Enum):
    """What ``agg(DISTINCT ...)`` does."""
    ONCE = "once"  # each distinct non-null value folded once (Spark's distinct aggregation)
    SAME = "same"  # the result does not change
    REFUSED = "refused"  # an error


@dataclass(frozen=True)
class Aggregate:
    """One Spark aggregate.  ``types(name, arg_types, ansi) -> Signature``: the type Spark casts
    each argument to and its result type (``SparkAnalysisError`` where Spark's analysis fails);
    ``fold(signature, ansi) -> Fold`` over the cast values (also given ``ignore_nulls`` when
    ``ignore_nulls``: FIRST / LAST); FILTER needs nothing of it (the caller skips the rows);
    ``vector``: its fold over many lanes at once in ``udtf.match.vector`` (numpy), if any."""
    name: str
    types: Callable[..., Signature]
    fold: Callable[..., Fold]
    aliases: tuple[str, ...] = ()
    distinct: Distinct = Distinct.ONCE
    ignore_nulls: bool = False
    vector: str | None = None


def _moment(name, aliases=()) -> Aggregate:
    return Aggregate(name, _double_sig, _moments(name), aliases)


AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("count", _count_sig, _count, vector="count"),
    Aggregate("sum", _sum_sig, _sum, vector="add"),
    Aggregate("avg", _avg_sig, _avg, ("mean",), vector="mean"),
    Aggregate("min", _same_sig, _extremum(-1), distinct=Distinct.SAME, vector="minimum"),
    Aggregate("max", _same_sig, _extremum(1), distinct=Distinct.SAME, vector="maximum"),
    Aggregate("first", _same_sig, _first_last(False), ("first_value", "any_value"), Distinct.SAME,
              ignore_nulls=True),
    Aggregate("last", _same_sig, _first_last(True), ("last_value",), Distinct.SAME, ignore_nulls=True),
    Aggregate("max_by", _by_sig, _by(1), distinct=Distinct.SAME),
    Aggregate("min_by", _by_sig, _by(-1), distinct=Distinct.SAME),
    Aggregate("count_if", _boolean_sig(BIGINT), _count_if),
    Aggregate("bit_or", _integral_sig, _bitwise(operator.or_), distinct=Distinct.SAME),
    Aggregate("bool_and", _boolean_sig(None), _bool(True), ("every",)),
    Aggregate("bool_or", _boolean_sig(None), _bool(False), ("some", "any")),
    Aggregate("collect_list", _collect_sig, _collect_list, ("array_agg",)),
    Aggregate("collect_set", _collect_sig, _collect_set, distinct=Distinct.SAME),
    _moment("stddev_samp", ("std", "stddev")),
    _moment("stddev_pop"),
    _moment("var_samp", ("variance",)),
    _moment("var_pop"),
    Aggregate("listagg", _listagg_sig, _listagg, ("string_agg",), Distinct.REFUSED),
    # exact distinct count (Spark's HLL++ is exact for small cardinalities; see docs)
    Aggregate("approx_count_distinct", _count_sig, lambda sig, ansi: _distinct(_count(sig, ansi)),
              distinct=Distinct.SAME),
)

_BY_NAME = {n: a for a in AGGREGATES for n in (a.name, *a.aliases)}
assert len(_BY_NAME) == sum(1 + len(a.aliases) for a in AGGREGATES), "a name is registered twice"
NAMES = frozenset(_BY_NAME)


def lookup(name: str) -> Aggregate:
    """The record of aggregate ``name`` (case-insensitive, an alias too)."""
    found = _BY_NAME.get(name.strip().lower())
    if found is None:
        raise SparkAnalysisError("UNRESOLVED_ROUTINE", f"aggregate {name!r} is not supported")
    return found


def aggregate(name: str, arg_types: Sequence[SqlType], distinct: bool, ansi: bool,
              ignore_nulls: bool = False) -> Fold:
    """The fold for ``name(DISTINCT? args)``; ``ignore_nulls`` for first/last."""
    agg = lookup(name)
    sig = agg.types(agg.name, tuple(arg_types), ansi)
    fold = agg.fold(sig, ansi, ignore_nulls) if agg.ignore_nulls else agg.fold(sig, ansi)
    if not distinct or agg.distinct is Distinct.SAME:
        return fold
    if agg.distinct is Distinct.REFUSED or len(sig.args) != 1:
        raise NotImplementedError(f"{agg.name}(DISTINCT ...)")
    return _distinct(fold)
