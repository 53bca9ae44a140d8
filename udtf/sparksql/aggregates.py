"""Spark's aggregate functions as running folds over the rows of a match (worker side), and
their registry: one ``Aggregate`` record per aggregate (``AGGREGATES``: name and aliases, its
parameters, how Spark types its arguments and result, the fold, what DISTINCT does, its
vectorized form), from which everything else is derived; ``REFUSED``: Spark's aggregates the
engine refuses, each with the reason.

``aggregate(name, args, distinct, ansi)`` returns a ``Fold``; ``args`` are the arguments'
types, a ``coercion.Literal`` (type and value) for a literal argument:

* ``arg_types``: the type each argument is implicitly cast to first (``scalar.cast``), e.g.
  ``sum(int)`` reads bigint, ``avg(float)`` reads double;
* ``result_type``: Spark's result type (``sum(decimal(p,s))`` = decimal(min(38,p+10),s),
  ``avg(decimal(p,s))`` = decimal(p+4,s+4) bounded, ``stddev`` = double, ...);
* ``initial``, ``step(state, *values) -> state`` and ``result(state) -> value``.

Invariants: states are immutable and hashable (runs of the matcher fork and share them; runs
with equal states may be merged); ``step`` never mutates its input.  ``collect_list`` keeps a
persistent cons list (``ConsList``), so n rows cost O(n) memory in total across forks.  Rows are
folded in match order; Spark processes one partition in row order, so order-dependent results
(first/last, collect_list, listagg, max_by ties) agree with ``SELECT agg(x) FROM ...`` over a
single partition.  ``FILTER (WHERE ...)`` is the caller's job: skip ``step`` for rows failing it.
``count(*)`` is ``aggregate("count", (), ...)``; IGNORE NULLS is the literal ``true`` after
the argument of FIRST / LAST / ANY_VALUE, as Spark's ``first(x, true)`` spells it.
"""
from __future__ import annotations

import math
import operator
import struct
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any, Callable, NamedTuple, Sequence

from .coercion import Literal, Signature
from .errors import SparkAnalysisError, SparkError
from .scalar import DEC38, DEC_CTX, compare, fit_decimal, group_key, normalize
from .types import (BIGINT, BINARY, BOOLEAN, DOUBLE, INT, STRING, TypeKind, SqlType, array, decimal,
                    INTEGRAL_RANGE)

__all__ = ["Fold", "ConsList", "Param", "Aggregate", "Distinct", "AGGREGATES", "REFUSED", "NAMES", "lookup",
           "signature", "aggregate"]

Arg = SqlType | Literal


@dataclass(frozen=True, slots=True)
class Fold:
    """``result_raises``: may ``result`` raise a Spark error (else only ``step`` may);
    ``distinct_key``: what DISTINCT tells apart, a function of the arguments (None: the
    arguments themselves)."""
    arg_types: tuple[SqlType, ...]
    result_type: SqlType
    initial: Any
    step: Callable[..., Any]
    result: Callable[[Any], Any]
    result_raises: bool = True
    distinct_key: Callable[..., Any] | None = None


class ConsList:
    """An immutable cons list ``(value, parent)`` with its length and a precomputed hash;
    equality walks iteratively (no recursion limit) and stops at a shared tail."""
    __slots__ = ("value", "parent", "length", "_hash")

    def __init__(self, value, parent: ConsList | None):
        self.value = value
        self.parent = parent
        self.length = 1 if parent is None else parent.length + 1
        self._hash = hash((value, None if parent is None else parent._hash))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        a, b = self, other
        if not isinstance(b, ConsList):
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
    return ConsList(value, chain)


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

def _t(arg: Arg) -> SqlType:
    return arg.type if isinstance(arg, Literal) else arg


def _mismatch(name: str, t: SqlType, wanted: str) -> SparkAnalysisError:
    return SparkAnalysisError("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                              f"{name} requires {wanted}, not {str(t).upper()}")


def _numeric(name: str, t: SqlType, also=()) -> SqlType:
    """ImplicitCastInputTypes(NumericType): a number keeps its type, a STRING or NULL (or one of
    ``also``) is cast to DOUBLE."""
    if t.is_numeric:
        return t
    if t.is_string or t.is_void or t.kind in also:
        return DOUBLE
    raise _mismatch(name, t, "a numeric argument")


def _sum_sig(name, args, ansi) -> Signature:
    """Sum / TrySum: TypeCollection(NumericType, the ANSI intervals); a TIMESTAMP is cast to DOUBLE."""
    t = _t(args[0])
    if t.is_interval:
        return Signature((t,), t)
    t = _numeric(name, t, (TypeKind.TIMESTAMP,))
    if t.is_integral:
        return Signature((BIGINT,), BIGINT)
    if t.is_decimal:
        return Signature((t,), decimal(min(38, t.precision + 10), t.scale))
    return Signature((DOUBLE,), DOUBLE)


def _avg_type(name, t: SqlType) -> tuple[SqlType, SqlType]:
    """(the argument's type, the result type) of Average over ``t``."""
    if t.is_interval:
        return t, t
    t = _numeric(name, t, (TypeKind.TIMESTAMP,))
    if t.is_decimal:
        return t, decimal(min(38, t.precision + 4), min(38, t.scale + 4))
    return DOUBLE, DOUBLE


def _avg_sig(name, args, ansi) -> Signature:
    arg, result = _avg_type(name, _t(args[0]))
    return Signature((arg,), result)


def _doubles_sig(name, args, ansi) -> Signature:
    """ImplicitCastInputTypes(DoubleType, ...): numbers, STRING and NULL are cast to DOUBLE."""
    for a in args:
        t = _t(a)
        if not (t.is_numeric or t.is_string or t.is_void):
            raise _mismatch(name, t, "DOUBLE")
    return Signature((DOUBLE,) * len(args), DOUBLE)


def _regr_count_sig(name, args, ansi) -> Signature:
    return Signature(tuple(_numeric(name, _t(a)) for a in args), BIGINT)


def _regr_avg_sig(which: int):
    """RegrAvgY / RegrAvgX: Average of argument ``which`` over the rows where both are not NULL."""
    def sig(name, args, ansi) -> Signature:
        types = [_numeric(name, _t(a)) for a in args]
        arg, result = _avg_type(name, types[which])
        types[which] = arg
        return Signature(tuple(types), result)
    return sig


def _boolean_sig(result: SqlType):
    def sig(name, args, ansi) -> Signature:
        t = _t(args[0])
        if not (t.kind is TypeKind.BOOLEAN or t.is_void or (ansi and t.is_string)):
            raise _mismatch(name, t, "BOOLEAN")
        return Signature((BOOLEAN,), result)
    return sig


def _same_sig(name, args, ansi) -> Signature:
    """The argument's own type (constant parameters after it keep theirs)."""
    types = tuple(_t(a) for a in args)
    return Signature(types, types[0])


def _orderable_sig(name, args, ansi) -> Signature:
    t = _t(args[0])
    if not t.is_orderable:
        raise SparkAnalysisError("DATATYPE_MISMATCH.INVALID_ORDERING_TYPE", f"{name} does not support ordering on "
                                 f"type {str(t).upper()}")
    return _same_sig(name, args, ansi)


def _by_sig(name, args, ansi) -> Signature:
    x, y = _t(args[0]), _t(args[1])
    if not y.is_orderable:
        raise SparkAnalysisError("DATATYPE_MISMATCH.INVALID_ORDERING_TYPE", f"{name} does not support ordering on "
                                 f"type {str(y).upper()}")
    return Signature((x, y), x)


def _collect_sig(name, args, ansi) -> Signature:
    t = _t(args[0])
    return Signature((t,), array(t))


def _listagg_sig(name, args, ansi) -> Signature:
    """ListAgg: BINARY values join as BINARY, a string keeps its collation, any other atomic
    value is cast to STRING; the delimiter is a literal of the same type, collation included
    (or NULL)."""
    t = _t(args[0])
    if t.kind in (TypeKind.BINARY, TypeKind.STRING):
        kind = t
    elif t.is_atomic or t.is_void:
        kind = STRING
    else:
        raise _mismatch(name, t, "STRING or BINARY")
    if len(args) == 2:
        d = _t(args[1])
        if not (d.is_void or d.kind is kind.kind):
            raise _mismatch(name, d, f"a {str(kind).upper()} delimiter")
        if not d.is_void and d != kind:
            raise SparkAnalysisError("DATATYPE_MISMATCH.DATA_DIFF_TYPES",
                                     f"Input to `{name}` should all be the same type, but it's "
                                     f"(\"{str(kind).upper()}\" or \"{str(d).upper()}\").")
    return Signature((kind,) * len(args), kind)


def _integral_sig(name, args, ansi) -> Signature:
    """ExpectsInputTypes(IntegralType): no implicit cast, but NULL is an INT."""
    t = INT if _t(args[0]).is_void else _t(args[0])
    if not t.is_integral:
        raise _mismatch(name, t, "an integral argument (TINYINT, SMALLINT, INT or BIGINT)")
    return Signature((t,), t)


def _count_sig(name, args, ansi) -> Signature:
    return Signature(tuple(_t(a) for a in args), BIGINT)


def _approx_count_distinct_sig(name, args, ansi) -> Signature:
    if len(args) == 2 and not 0.0 < float(args[1].value or 0) <= 1.0:  # (Spark's p >= 4 needs rsd <= 0.39)
        raise SparkAnalysisError("DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE", f"{name}: the relative SD must be in (0, 1]")
    return Signature((_t(args[0]),) + ((DOUBLE,) if len(args) == 2 else ()), BIGINT)


def _percentile_sig(name, args, ansi) -> Signature:
    """Percentile: a number (DOUBLE from a STRING or NULL) or an ANSI interval, a literal
    percentage in [0, 1], an integral frequency; the result is a DOUBLE, or the interval type."""
    t = _t(args[0])
    if not t.is_interval:
        t = _numeric(name, t)
    percentage = args[1]
    if percentage.value is None:
        raise SparkAnalysisError("DATATYPE_MISMATCH.UNEXPECTED_NULL", f"{name}: the percentage must not be NULL")
    if not 0.0 <= float(percentage.value) <= 1.0:
        raise SparkAnalysisError("DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE",
                                 f"{name}: the percentage must be between 0.0 and 1.0, not {percentage.value}")
    frequency = ()
    if len(args) == 3:
        f = _t(args[2])
        if not (f.is_integral or f.is_void):
            raise _mismatch(name, f, "an integral frequency")
        frequency = (BIGINT,)
    return Signature((t, DOUBLE, *frequency), t if t.is_interval else DOUBLE)


def _percentile_cont_sig(name, args, ansi) -> Signature:
    """percentile_cont(p) WITHIN GROUP (ORDER BY key [DESC]): percentile's typing of the key and
    the percentage; DESC a BOOLEAN."""
    sig = _percentile_sig(name, args[:2], ansi)
    return Signature((*sig.args, BOOLEAN), sig.result)


def _median_sig(name, args, ansi) -> Signature:
    t = _t(args[0])
    t = t if t.is_interval else _numeric(name, t)
    return Signature((t,), t if t.is_interval else DOUBLE)


def _bitmap_construct_sig(name, args, ansi) -> Signature:
    t = _t(args[0])
    if not (t.is_numeric or t.is_string or t.is_void):
        raise _mismatch(name, t, "BIGINT")
    return Signature((BIGINT,), BINARY)


def _bitmap_sig(name, args, ansi) -> Signature:
    t = _t(args[0])
    if t.kind is not TypeKind.BINARY:
        raise _mismatch(name, t, "BINARY")
    return Signature((BINARY,), BINARY)


# ---- folds over the cast arguments -----------------------------------------------------------

def _overflow(msg="overflow."):
    return SparkError("ARITHMETIC_OVERFLOW", msg)


def _sum(fail: bool | None):
    """Sum (``fail`` None: ANSI decides whether an overflow raises or wraps) or TrySum
    (``fail`` False: an overflow makes the sum NULL for good)."""
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        t = sig.args[0]
        try_ = fail is False
        if t.is_integral or t.is_interval:
            lo, hi = INTEGRAL_RANGE[TypeKind.INT if t.kind is TypeKind.YEAR_MONTH_INTERVAL else TypeKind.BIGINT]
            raises = not try_ and (ansi or t.is_interval)  # (interval arithmetic always checks)

            # state: (sum or None, overflowed)
            def step(s, v):
                total, overflowed = s
                if v is None or overflowed:
                    return s
                r = v if total is None else total + v
                if not lo <= r <= hi:
                    if raises and t.is_interval:
                        raise SparkError("INTERVAL_ARITHMETIC_OVERFLOW.WITH_SUGGESTION", "Integer overflow.")
                    if raises:
                        raise _overflow()
                    if try_:
                        return (None, True)
                    r = ((r - lo) % (1 << 64)) + lo
                return (r, False)
            return Fold(sig.args, sig.result, (None, False), step, lambda s: s[0], result_raises=False)
        if t.is_decimal:
            p, sc = sig.result.precision, sig.result.scale

            def dstep(s, v):
                # no overflow check while summing (DecimalAddNoOverflowCheck): only the final
                # sum must fit (CheckOverflowInSum)
                return s if v is None else v if s is None else DEC_CTX.add(s, v)

            def dres(s):
                # the final sum must fit: NULL, or NUMERIC_VALUE_OUT_OF_RANGE as Spark's window and
                # VALUES aggregates raise (a hash aggregate's partial buffer says ARITHMETIC_OVERFLOW)
                return None if s is None else fit_decimal(s, p, sc, ansi and not try_)
            return Fold(sig.args, sig.result, None, dstep, dres, result_raises=not try_)

        def fstep(s, v):
            if v is None:
                return s
            return (0.0 if s is None else s) + v  # Sum: coalesce(sum, 0.0) + x, so sum(-0.0) is 0.0
        return Fold(sig.args, sig.result, None, fstep, lambda s: s, result_raises=False)
    return fold


def _avg(fail: bool | None):
    """Average (``fail`` None: ANSI decides) or TryAverage (``fail`` False: NULL on overflow)."""
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        t, rt = sig.args[0], sig.result
        try_ = fail is False
        if t.is_decimal:
            def step(s, v):
                total, n = s
                return s if v is None else (v if total is None else DEC_CTX.add(total, v), n + 1)

            def res(s):
                total, n = s
                if n == 0:
                    return None
                # the sum is not checked (its buffer is unbounded); only the average must fit
                # Divide(sum, CAST(count AS decimal(20,0))): MathContext(38), then the result type
                return fit_decimal(DEC38.divide(total, Decimal(n)), rt.precision, rt.scale, ansi and not try_)
            return Fold(sig.args, rt, (None, 0), step, res, result_raises=not try_)
        if t.is_interval:
            inner = _sum(fail)(sig, args, ansi)

            def istep(s, v):
                total, n = s
                return s if v is None else (inner.step(total, v), n + 1)

            def ires(s):
                (total, overflowed), n = s
                if n == 0 or total is None:
                    return None
                # DivideYMInterval / DivideDTInterval: rounded half away from zero
                q, r = divmod(abs(total), n)
                q += 2 * r >= n
                return q if total >= 0 else -q
            return Fold(sig.args, rt, (inner.initial, 0), istep, ires, result_raises=False)

        def fstep(s, v):
            if v is None:
                return s
            total, n = s
            return (total + v, n + 1)

        def fres(s):
            total, n = s
            return None if n == 0 else total / n
        return Fold(sig.args, rt, (0.0, 0), fstep, fres, result_raises=False)
    return fold


def _divider(ansi: bool):
    """Spark's Divide of two doubles: by zero, DIVIDE_BY_ZERO under ANSI, else NULL."""
    def divide(a: float, b: float):
        if b == 0.0:
            if ansi:
                raise SparkError("DIVIDE_BY_ZERO", "Division by zero.")
            return None
        return a / b
    return divide


def _moments(order: int, result: Callable):
    """CentralMomentAgg of ``order`` (2 to 4): Welford's updates in doubles, in Spark's order of
    operations; ``result(divide, n, m2, m3, m4)`` for n > 0 (NULL over no rows), ``divide``
    being Spark's (``_divider``)."""
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        divide = _divider(ansi)

        def step(s, v):
            if v is None:
                return s
            n, avg, m2, m3, m4 = s
            n = n + 1.0
            delta = v - avg
            delta_n = delta / n
            avg = avg + delta_n
            new_m2 = m2 + delta * (delta - delta_n)
            if order >= 3:
                delta2, delta_n2 = delta * delta, delta_n * delta_n
                new_m3 = m3 - 3.0 * delta_n * new_m2 + delta * (delta2 - delta_n2)
                if order >= 4:
                    m4 = m4 - 4.0 * delta_n * new_m3 - 6.0 * delta_n2 * new_m2 + \
                        delta * (delta * delta2 - delta_n * delta_n2)
                m3 = new_m3
            return (n, avg, new_m2, m3, m4)

        def res(s):
            n, _, m2, m3, m4 = s
            return None if n == 0.0 else result(divide, n, m2, m3, m4)
        return Fold(sig.args, sig.result, (0.0, 0.0, 0.0, 0.0, 0.0), step, res)
    return fold


def _variance(sample: bool, root: bool):
    """var_pop / var_samp / stddev_pop / stddev_samp: a sample statistic is NULL for one row
    (spark.sql.legacy.statisticalAggregate=false)."""
    def result(divide, n, m2, *_):
        if sample and n == 1.0:
            return None
        v = divide(m2, n - 1.0 if sample else n)
        return math.sqrt(v) if root else v
    return result


def _skewness(divide, n, m2, m3, m4):
    return None if m2 == 0.0 else divide(math.sqrt(n) * m3, math.sqrt(m2 * m2 * m2))


def _kurtosis(divide, n, m2, m3, m4):
    if m2 == 0.0:
        return None
    q = divide(n * m4, m2 * m2)
    return None if q is None else q - 3.0


def _co_moments(correlation: bool, result: Callable):
    """Covariance (``correlation`` False: n, x avg, y avg, ck) or PearsonCorrelation (also the
    x and y second moments) over the rows where both arguments are not NULL, in Spark's order
    of operations; ``result(divide, n, x_avg, y_avg, ck, x_mk, y_mk)``."""
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        divide = _divider(ansi)

        def step(s, x, y):
            if x is None or y is None:
                return s
            n, x_avg, y_avg, ck, x_mk, y_mk = s
            n = n + 1.0
            dx = x - x_avg
            dy = y - y_avg
            x_avg = x_avg + dx / n
            y_avg = y_avg + dy / n
            ck = ck + dx * (y - y_avg)
            if correlation:
                x_mk, y_mk = x_mk + dx * (x - x_avg), y_mk + dy * (y - y_avg)
            return (n, x_avg, y_avg, ck, x_mk, y_mk)
        return Fold(sig.args, sig.result, (0.0,) * 6, step, lambda s: result(divide, *s))
    return fold


def _covariance(sample: bool):
    def result(divide, n, x_avg, y_avg, ck, *_):
        return None if n < 1.0 + sample else divide(ck, n - 1.0 if sample else n)
    return result


def _corr(divide, n, x_avg, y_avg, ck, x_mk, y_mk):
    return None if n < 2.0 else divide(ck, math.sqrt(x_mk * y_mk))


def _regr_r2(divide, n, x_avg, y_avg, ck, x_mk, y_mk):
    """RegrR2(y, x) = PearsonCorrelation(y, x): NULL where x is constant, 1 where y is."""
    if y_mk == 0.0:
        return None
    if x_mk == 0.0:
        return 1.0
    corr = divide(ck, math.sqrt(x_mk * y_mk))
    return None if corr is None else corr * corr


def _regression(intercept: bool):
    """RegrSlope / RegrIntercept (y, x): CovPopulation(x, y) and VariancePop(x), both over the
    rows where neither argument is NULL."""
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        covar = _co_moments(False, lambda divide, *s: s)(sig, args, ansi)
        var = _moments(2, lambda divide, *s: s)(sig, args, ansi)

        def step(s, y, x):
            return s if y is None or x is None else (covar.step(s[0], x, y), var.step(s[1], x))

        def res(s):
            n, x_avg, y_avg, ck, _, _ = s[0]
            m2 = s[1][2]
            if m2 == 0.0:
                return None
            return y_avg - ck / m2 * x_avg if intercept else ck / m2
        return Fold(sig.args, sig.result, (covar.initial, var.initial), step, res, result_raises=False)
    return fold


def _pairs(inner: Callable, which: int):
    """``inner`` over argument ``which`` of the rows where neither argument is NULL: Spark's
    replacement ``inner(If(y IS NULL OR x IS NULL, NULL, (y, x)[which]))``, so DISTINCT tells
    that value apart (``Fold.distinct_key``)."""
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        f = inner(Signature((sig.args[which],), sig.result), args, ansi)

        def value(y, x):
            return None if y is None or x is None else (y, x)[which]

        def step(s, y, x):
            return f.step(s, value(y, x))
        return Fold(sig.args, sig.result, f.initial, step, f.result, f.result_raises, value)
    return fold


def _second_moment(divide, n, m2, *_):
    return m2


def _extremum(want: int):
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        c = compare(sig.args[0])

        def step(s, v):
            if v is None:
                return s
            return v if s is None or c(v, s) == want else s
        return Fold(sig.args, sig.result, None, step, lambda s: s, result_raises=False)
    return fold


def _by(want: int):
    def fold(sig: Signature, args, ansi: bool) -> Fold:
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
    """First / Last; a second argument ``true`` ignores NULLs (Spark's ``ignoreNulls``)."""
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        ignore_nulls = len(args) == 2 and args[1].value is True

        # state: (seen, value)
        def step(s, v, *_):
            if (s[0] and not last) or (v is None and ignore_nulls):
                return s
            return (True, v)
        return Fold(sig.args, sig.result, (False, None), step, lambda s: s[1])
    return fold


def _bitwise(op):
    """BitAggregate: ``op`` over the non-null values (a bitwise op of one integral type cannot overflow)."""
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        def step(s, v):
            return s if v is None else v if s is None else op(s, v)
        return Fold(sig.args, sig.result, None, step, lambda s: s, result_raises=False)
    return fold


def _count_if(sig: Signature, args, ansi: bool) -> Fold:
    return Fold(sig.args, sig.result, 0, lambda s, v: s + 1 if v is True else s, lambda s: s)


def _bool(conjunction: bool):
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        def step(s, v):
            if v is None:
                return s
            return v if s is None else ((s and v) if conjunction else (s or v))
        return Fold(sig.args, sig.result, None, step, lambda s: s)
    return fold


def _collect_list(sig: Signature, args, ansi: bool) -> Fold:
    def lstep(s, v):
        return s if v is None else _cons(s, v)
    return Fold(sig.args, sig.result, None, lstep, _items)


def _collect_set(sig: Signature, args, ansi: bool) -> Fold:
    """collect_set: the distinct values in the order of their first occurrences (see docs); Spark
    refuses maps and collated strings."""
    if any(inner.kind is TypeKind.MAP or (inner.is_string and inner.collation) for inner in sig.args[0].walk()):
        raise SparkAnalysisError("DATATYPE_MISMATCH.UNSUPPORTED_INPUT_TYPE",
                                 'The input of `collect_set` can\'t be "MAP" or "COLLATED STRING" type data.')
    return _distinct(_collect_list(sig, args, ansi))


def _listagg(sig: Signature, args, ansi: bool) -> Fold:
    """ListAgg: the non-null values joined by the delimiter (none without one, or a NULL one)."""
    delimiter = args[1].value if len(args) == 2 else None
    empty = b"" if sig.result.kind is TypeKind.BINARY else ""

    def step(s, v, *_):
        return s if v is None else _cons(s, v)

    def res(s):
        return None if s is None else (delimiter or empty).join(_items(s))
    return Fold(sig.args, sig.result, None, step, res)


def _count(sig: Signature, args, ansi: bool) -> Fold:
    if not sig.args:
        return Fold(sig.args, sig.result, 0, lambda s: s + 1, lambda s: s, result_raises=False)

    def step(s, *vs):
        return s if any(v is None for v in vs) else s + 1
    return Fold(sig.args, sig.result, 0, step, lambda s: s, result_raises=False)




def _percentile(ordered: bool = False):
    """The interpolated percentile of the non-null values with their frequencies: the counts of
    each value, sorted at the end as Spark sorts them; the position of percentage p is
    (count - 1) * p.  ``ordered``: the
    arguments are (key, percentage, DESC), each row counted once."""
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        t = sig.args[0]
        percentage = float(args[1].value) if len(args) > 1 else 0.5
        reverse = ordered and bool(args[2].value)
        key = _sort_key(t)
        to_double = float

        def step(s, v, p=None, frequency=1):
            if ordered:
                frequency = 1
            if v is None or frequency is None:
                return s
            if frequency < 0:
                raise SparkError("NEGATIVE_VALUES_IN_FREQUENCY_EXPRESSION",
                                 f"Found the negative value in frequency expression: {frequency}.")
            return s if frequency == 0 else _cons(s, (v, frequency))

        def res(s):
            if s is None:
                return None
            # Spark counts boxed values: -0.0 and 0.0 apart (Java's equals), every NaN one
            # value; its sort keeps the two zeros, equal to it, in its hash map's order: -0.0 first
            counts: dict = {}
            for v, f in _items(s):
                k = _key(v) if not isinstance(v, float) or v != v else (v, math.copysign(1.0, v))
                counts[k] = (v, counts.get(k, (v, 0))[1] + f)
            zeros_first = sorted(counts.values(), key=lambda vf: _zero_sign(vf[0]))
            ordered = sorted(zeros_first, key=lambda vf: key(vf[0]), reverse=reverse)
            cumulative, total = [], 0
            for v, f in ordered:
                total += f
                cumulative.append((v, total))
            position = (total - 1) * percentage
            lower, higher = math.floor(position), math.ceil(position)
            low = _at(cumulative, lower + 1)
            if higher == lower:
                value = to_double(low)
            else:
                high = _at(cumulative, higher + 1)
                value = to_double(low) if high == low else \
                    (higher - position) * to_double(low) + (position - lower) * to_double(high)
            return _from_double(value, t)
        return Fold(sig.args, sig.result, None, step, res)
    return fold


def _zero_sign(v) -> float:
    """-1.0 for -0.0, else 1.0."""
    return math.copysign(1.0, v) if isinstance(v, float) and v == 0 else 1.0


def _at(cumulative, rank: int):
    """The value whose cumulative count first reaches ``rank``."""
    for v, total in cumulative:
        if total >= rank:
            return v
    return cumulative[-1][0]


def _from_double(value: float, t: SqlType):
    """The percentile of an interval: the double truncated to its microseconds or months (toLong)."""
    return int(value) if t.is_interval else value


def _sort_key(t: SqlType):
    import functools
    return functools.cmp_to_key(compare(t))


def _mode(sig: Signature, args, ansi: bool) -> Fold:
    """Mode: the most frequent non-null value (floats normalized); of the tied ones the smallest
    (Spark's ``mode(x, true)``; ``mode(x)`` may return any of them).  Spark counts BINARY
    values by reference, so each of its rows counts once, apart from equal ones."""
    key = _sort_key(sig.args[0])
    norm = _norm(sig.args[0])
    apart = sig.args[0].kind is TypeKind.BINARY

    def step(s, v, *_):
        return s if v is None else _cons(s, v)

    def res(s):
        if s is None:
            return None
        counts: dict = {}
        for i, v in enumerate(_items(s)):
            k = i if apart else _key(norm(v))
            counts[k] = (norm(v), counts.get(k, (v, 0))[1] + 1)
        most = max(n for _, n in counts.values())
        tied = [v for v, n in counts.values() if n == most]
        return min(tied, key=key)
    return Fold(sig.args, sig.result, None, step, res)


_BITMAP_BITS = 8 * 4096


def _bitmap_construct(sig: Signature, args, ansi: bool) -> Fold:
    """BitmapConstructAgg: a 4 KiB bitmap with the bit of each position (0 to 32767) set."""
    def step(s, v):
        if v is None:
            return s
        if not 0 <= v < _BITMAP_BITS:
            raise SparkError("INVALID_BITMAP_POSITION",
                             f"The 0-indexed bitmap position {v} is out of bounds. The bitmap has "
                             f"{_BITMAP_BITS} bits ({_BITMAP_BITS // 8} bytes).")
        return s | (1 << v)
    return Fold(sig.args, sig.result, 0, step, lambda s: s.to_bytes(_BITMAP_BITS // 8, "little"))


def _bitmap(op, initial: int):
    """BitmapOrAgg / BitmapAndAgg: the bytes of the bitmaps combined, each as long as the result
    (4 KiB; a shorter one counts as zero bytes after its end)."""
    def fold(sig: Signature, args, ansi: bool) -> Fold:
        def step(s, v):
            return s if v is None else op(s, int.from_bytes(v[:_BITMAP_BITS // 8], "little"))
        return Fold(sig.args, sig.result, initial, step, lambda s: s.to_bytes(_BITMAP_BITS // 8, "little"))
    return fold


def _distinct(fold: Fold) -> Fold:
    """Feeds ``fold`` the rows of each distinct combination of its arguments (or of its
    ``distinct_key``) once (floats normalized, as Spark groups them), NULLs included: ``fold``
    skips those itself."""
    norms = [normalize(t) for t in fold.arg_types]
    keys = [group_key(t) for t in fold.arg_types]
    inner, key = fold.step, fold.distinct_key

    def step(s, *vs):
        seen, st = s
        vs = tuple(v if v is None else n(v) for n, v in zip(norms, vs))
        k = _key(key(*vs)) if key is not None else tuple(g(v) for g, v in zip(keys, vs))
        if k in seen:
            return s
        return (seen | {k}, inner(st, *vs))
    return Fold(fold.arg_types, fold.result_type, (frozenset(), fold.initial), step,
                lambda s: fold.result(s[1]), fold.result_raises)


# ---- approx_count_distinct: Spark's HyperLogLog++ -----------------------------------------

_M64 = (1 << 64) - 1
_P1, _P2, _P3, _P4, _P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                           0x27D4EB2F165667C5)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _xx_round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M64, 31) * _P1) & _M64


def _xxhash64(data: bytes, seed: int) -> int:
    """XXH64 (xxHash's 64-bit hash, little-endian) of ``data``, unsigned."""
    n, i, seed = len(data), 0, seed & _M64
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed, (seed - _P1) & _M64]
        while i + 32 <= n:
            v = [_xx_round(v[k], int.from_bytes(data[i + 8 * k:i + 8 * k + 8], "little")) for k in range(4)]
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M64
        for lane in v:
            h = ((h ^ _xx_round(0, lane)) * _P1 + _P4) & _M64
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while i + 8 <= n:
        h = (_rotl(h ^ _xx_round(0, int.from_bytes(data[i:i + 8], "little")), 27) * _P1 + _P4) & _M64
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (int.from_bytes(data[i:i + 4], "little") * _P1) & _M64, 23) * _P2 + _P3) & _M64
        i += 4
    for byte in data[i:]:
        h = (_rotl(h ^ (byte * _P5) & _M64, 11) * _P1) & _M64
    h = ((h ^ (h >> 33)) * _P2) & _M64
    h = ((h ^ (h >> 29)) * _P3) & _M64
    return h ^ (h >> 32)


def _spark_hash(t: SqlType):
    """Spark's XxHash64Function.hash(value, t, seed) of a non-null value: ``(value, seed) -> hash``
    over the value's binary form (ints as 4 bytes, longs as 8, a float as its bits, -0.0 as 0, a
    NaN as Java's canonical NaN, a decimal as its unscaled long or BigInteger bytes, an array
    element by element, a NULL element leaving the hash as it is)."""
    k = t.kind
    if k in (TypeKind.BOOLEAN, TypeKind.TINYINT, TypeKind.SMALLINT, TypeKind.INT, TypeKind.DATE,
             TypeKind.YEAR_MONTH_INTERVAL):
        return lambda v, seed: _xxhash64(int(v).to_bytes(4, "little", signed=True), seed)
    if k in (TypeKind.BIGINT, TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ, TypeKind.DAY_TIME_INTERVAL):
        return lambda v, seed: _xxhash64(v.to_bytes(8, "little", signed=True), seed)
    if k is TypeKind.FLOAT:
        return lambda v, seed: _xxhash64(b"\x00\x00\xc0\x7f" if v != v else struct.pack("<f", v + 0.0), seed)
    if k is TypeKind.DOUBLE:
        return lambda v, seed: _xxhash64(struct.pack("<Q", 0x7FF8000000000000) if v != v else
                                         struct.pack("<d", v + 0.0), seed)
    if k is TypeKind.DECIMAL:
        scale, long = t.scale, t.precision <= 18

        def decimal_hash(v, seed):
            unscaled = int(v.scaleb(scale))
            if long:
                return _xxhash64(unscaled.to_bytes(8, "little", signed=True), seed)
            size = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
            return _xxhash64(unscaled.to_bytes(size, "big", signed=True), seed)
        return decimal_hash
    if k is TypeKind.STRING:
        return lambda v, seed: _xxhash64(v.encode(), seed)
    if k is TypeKind.BINARY:
        return _xxhash64
    if k is TypeKind.ARRAY:
        element = _spark_hash(t.element)

        def array_hash(v, seed):
            for x in v:
                seed = seed if x is None else element(x, seed)
            return seed
        return array_hash
    if k is TypeKind.VOID:
        return lambda v, seed: seed  # (never called: every value is NULL)
    raise _mismatch("approx_count_distinct", t, "a hashable type")


# HLL++'s thresholds below which linear counting estimates (precision 4 to 18; Heule, Nunkesser
# and Hall, "HyperLogLog in Practice", appendix)
_HLL_THRESHOLDS = (10, 20, 40, 80, 220, 400, 900, 1800, 3100, 6500, 15500, 20000, 50000, 120000, 350000)


def _approx_count_distinct(sig: Signature, args, ansi: bool) -> Fold:
    """HyperLogLogPlusPlus: 2**p registers of 6 bits (in one int) holding the most leading zeros
    (plus one) of the XXH64 hashes (seed 42) routed to them; the estimate is linear counting
    while HLL++ takes it, the raw HLL estimate from 5 * 2**p on.  In between, HLL++ corrects the
    raw estimate with its empirical bias tables, which the engine does not carry: an error."""
    rsd = float(args[1].value) if len(args) == 2 else 0.05
    p = math.ceil(2.0 * math.log(1.106 / rsd) / math.log(2.0))
    m, shift, padding = 1 << p, 64 - p, 1 << (p - 1)
    alpha_m2 = {4: 0.673, 5: 0.697, 6: 0.709}.get(p, 0.7213 / (1.0 + 1.079 / m)) * m * m
    t = sig.args[0]
    hashed = _spark_hash(t)
    norm = _norm(t)

    def step(s, v, *_):
        if v is None:
            return s
        x = hashed(norm(v), 42)
        idx = x >> shift
        pw = 64 - (((x << p) & _M64) | padding).bit_length() + 1
        current = (s >> (6 * idx)) & 63
        return s if pw <= current else s ^ ((current ^ pw) << (6 * idx))

    def result(s):
        z_inverse, zeros = 0.0, 0.0
        for idx in range(m):
            register = (s >> (6 * idx)) & 63
            z_inverse += 1.0 / (1 << register)
            zeros += register == 0
        e = alpha_m2 / z_inverse
        if zeros > 0:
            h = m * math.log(m / zeros)
            if (p < 19 and h <= _HLL_THRESHOLDS[p - 4]) or e <= 2.5 * m:
                return math.floor(h + 0.5)  # (Java's Math.round)
        if p < 19 and e < 5.0 * m:
            raise SparkError("UNSUPPORTED_FEATURE",
                             f"approx_count_distinct: about {round(e)} distinct values with relativeSD {rsd}: "
                             "Spark corrects this estimate with HyperLogLog++'s bias tables, which sparkcep "
                             "does not carry")
        return math.floor(e + 0.5)
    return Fold(sig.args, sig.result, 0, step, result)


# ---- the registry ---------------------------------------------------------------------------

class Param(NamedTuple):
    """A parameter: values of the aggregated rows, or (``constant``) a literal of that type Spark
    evaluates once; ``optional`` ones may be left out (with those after them)."""
    name: str
    constant: SqlType | None = None
    optional: bool = False


class Distinct(Enum):
    """What ``agg(DISTINCT ...)`` does."""
    ONCE = "once"  # each distinct combination of the arguments folded once (Spark's distinct aggregation)
    SAME = "same"  # the result does not change (Spark's EliminateDistinct)
    REFUSED = "refused"  # an error


@dataclass(frozen=True)
class Aggregate:
    """One Spark aggregate.  ``params``: its parameters as Spark's usage names them;
    ``types(name, args, ansi) -> Signature``: the type Spark casts each argument to and its
    result type (``SparkAnalysisError`` where Spark's analysis fails; a literal argument comes
    as a ``coercion.Literal``); ``fold(signature, args, ansi) -> Fold`` over the cast values;
    FILTER needs nothing of it (the caller skips the rows); ``vector``: its fold over many lanes
    at once in ``udtf.match.vector`` (numpy), if any; ``ordered``: it sorts by the one key of
    WITHIN GROUP (ORDER BY key [DESC]), which it requires: the key is its first argument, DESC
    its last (a BOOLEAN constant), as Spark's analyzer passes them."""
    name: str
    params: tuple[Param, ...]
    types: Callable[..., Signature]
    fold: Callable[..., Fold]
    aliases: tuple[str, ...] = ()
    distinct: Distinct = Distinct.ONCE
    vector: str | None = None
    ordered: bool = False


_X = (Param("expr"),)
_YX = (Param("y"), Param("x"))
_IGNORE_NULLS = Param("ignoreNulls", BOOLEAN, optional=True)


def _moment(name, result, order=2, aliases=()) -> Aggregate:
    return Aggregate(name, _X, _doubles_sig, _moments(order, result), aliases)


def _co_moment(name, correlation, result) -> Aggregate:
    return Aggregate(name, (Param("expr1"), Param("expr2")), _doubles_sig, _co_moments(correlation, result))


AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate("count", (Param("expr", optional=True), Param("expr", optional=True)), _count_sig, _count,
              vector="count"),
    Aggregate("sum", _X, _sum_sig, _sum(None), vector="add"),
    Aggregate("try_sum", _X, _sum_sig, _sum(False)),
    Aggregate("avg", _X, _avg_sig, _avg(None), ("mean",), vector="mean"),
    Aggregate("try_avg", _X, _avg_sig, _avg(False)),
    Aggregate("min", _X, _orderable_sig, _extremum(-1), distinct=Distinct.SAME, vector="minimum"),
    Aggregate("max", _X, _orderable_sig, _extremum(1), distinct=Distinct.SAME, vector="maximum"),
    Aggregate("first", (Param("expr"), _IGNORE_NULLS), _same_sig, _first_last(False),
              ("first_value", "any_value"), Distinct.SAME),
    Aggregate("last", (Param("expr"), _IGNORE_NULLS), _same_sig, _first_last(True), ("last_value",),
              Distinct.SAME),
    # (DISTINCT: the same tied row; Spark may pick another of them, in its hash order)
    Aggregate("max_by", (Param("x"), Param("y")), _by_sig, _by(1), distinct=Distinct.SAME),
    Aggregate("min_by", (Param("x"), Param("y")), _by_sig, _by(-1), distinct=Distinct.SAME),
    Aggregate("count_if", _X, _boolean_sig(BIGINT), _count_if),
    Aggregate("bool_and", _X, _boolean_sig(BOOLEAN), _bool(True), ("every",), Distinct.SAME),
    Aggregate("bool_or", _X, _boolean_sig(BOOLEAN), _bool(False), ("some", "any"), Distinct.SAME),
    Aggregate("bit_and", _X, _integral_sig, _bitwise(operator.and_), distinct=Distinct.SAME),
    Aggregate("bit_or", _X, _integral_sig, _bitwise(operator.or_), distinct=Distinct.SAME),
    Aggregate("bit_xor", _X, _integral_sig, _bitwise(operator.xor)),
    Aggregate("collect_list", _X, _collect_sig, _collect_list, ("array_agg",)),
    Aggregate("collect_set", _X, _collect_sig, _collect_set, distinct=Distinct.SAME),
    Aggregate("listagg", (Param("expr"), Param("delimiter", STRING, optional=True)), _listagg_sig, _listagg,
              ("string_agg",)),
    _moment("stddev_samp", _variance(True, True), aliases=("std", "stddev")),
    _moment("stddev_pop", _variance(False, True)),
    _moment("var_samp", _variance(True, False), aliases=("variance",)),
    _moment("var_pop", _variance(False, False)),
    _moment("skewness", _skewness, 3),
    _moment("kurtosis", _kurtosis, 4),
    _co_moment("covar_pop", False, _covariance(False)),
    _co_moment("covar_samp", False, _covariance(True)),
    _co_moment("corr", True, _corr),
    Aggregate("regr_count", _YX, _regr_count_sig, _count),
    Aggregate("regr_avgy", _YX, _regr_avg_sig(0), _pairs(_avg(None), 0)),
    Aggregate("regr_avgx", _YX, _regr_avg_sig(1), _pairs(_avg(None), 1)),
    Aggregate("regr_sxx", _YX, _doubles_sig, _pairs(_moments(2, _second_moment), 1)),
    Aggregate("regr_syy", _YX, _doubles_sig, _pairs(_moments(2, _second_moment), 0)),
    Aggregate("regr_sxy", _YX, _doubles_sig, _co_moments(False, lambda divide, n, x_avg, y_avg, ck, *_:
                                                         None if n == 0.0 else ck)),
    Aggregate("regr_r2", _YX, _doubles_sig, _co_moments(True, _regr_r2)),
    Aggregate("regr_slope", _YX, _doubles_sig, _regression(False)),
    Aggregate("regr_intercept", _YX, _doubles_sig, _regression(True)),
    Aggregate("percentile", (Param("col"), Param("percentage", DOUBLE), Param("frequency", optional=True)),
              _percentile_sig, _percentile()),
    Aggregate("percentile_cont", (Param("key"), Param("percentage", DOUBLE), Param("reverse", BOOLEAN, optional=True)),
              _percentile_cont_sig, _percentile(ordered=True), distinct=Distinct.REFUSED, ordered=True),
    Aggregate("median", _X, _median_sig, _percentile()),
    Aggregate("mode", (Param("col"), Param("deterministic", BOOLEAN, optional=True)), _same_sig, _mode,
              distinct=Distinct.REFUSED),
    Aggregate("approx_count_distinct", (Param("expr"), Param("relativeSD", DOUBLE, optional=True)),
              _approx_count_distinct_sig, _approx_count_distinct, distinct=Distinct.SAME),
    Aggregate("bitmap_construct_agg", (Param("child"),), _bitmap_construct_sig, _bitmap_construct,
              distinct=Distinct.SAME),
    Aggregate("bitmap_or_agg", (Param("child"),), _bitmap_sig, _bitmap(operator.or_, 0), distinct=Distinct.SAME),
    Aggregate("bitmap_and_agg", (Param("child"),), _bitmap_sig, _bitmap(operator.and_, (1 << _BITMAP_BITS) - 1),
              distinct=Distinct.SAME),
)

_SKETCH = "returns a serialized sketch (BINARY) whose bytes are Apache DataSketches'"
# Spark's aggregates the engine does not compute, and why (an error at the call)
REFUSED = {
    **{name: _SKETCH for name in (
        "hll_sketch_agg", "hll_union_agg", "theta_sketch_agg", "theta_union_agg", "theta_intersection_agg",
        "kll_sketch_agg_bigint", "kll_sketch_agg_double", "kll_sketch_agg_float", "kll_merge_agg_bigint",
        "kll_merge_agg_double", "kll_merge_agg_float", "tuple_sketch_agg_double", "tuple_sketch_agg_integer",
        "tuple_union_agg_double", "tuple_union_agg_integer", "tuple_intersection_agg_double",
        "tuple_intersection_agg_integer", "approx_top_k_accumulate", "approx_top_k_combine")},
    "count_min_sketch": "returns a serialized Count-Min sketch (BINARY) built with Spark's hashing",
    "approx_top_k": "returns an array of structs (STRUCT values are not supported over match state)",
    "histogram_numeric": "returns an array of structs (STRUCT values are not supported over match state)",
    "approx_percentile": "its result depends on Spark's quantile summaries (not implemented)",
    "percentile_approx": "its result depends on Spark's quantile summaries (not implemented)",
    "grouping": "it tells the grouping sets of a GROUP BY apart; a match has none",
    "grouping_id": "it tells the grouping sets of a GROUP BY apart; a match has none",
    "measure": "it reads a measure of a metric view",
    "schema_of_variant_agg": "VARIANT values are not supported over match state",
    "vector_avg": "its ARRAY<FLOAT> vector arithmetic is not implemented",
    "vector_sum": "its ARRAY<FLOAT> vector arithmetic is not implemented",
    "percentile_disc": "its discrete position (Spark's, not percentile's) is not implemented; percentile_cont is",
}

_BY_NAME = {n: a for a in AGGREGATES for n in (a.name, *a.aliases)}
assert len(_BY_NAME) == sum(1 + len(a.aliases) for a in AGGREGATES), "a name is registered twice"
assert not set(_BY_NAME) & set(REFUSED), "an aggregate is registered and refused"
NAMES = frozenset(_BY_NAME)


def lookup(name: str) -> Aggregate:
    """The record of aggregate ``name`` (case-insensitive, an alias too)."""
    found = _BY_NAME.get(name.strip().lower())
    if found is None:
        f = name.strip().lower()
        reason = REFUSED.get(f, "it is not a Spark aggregate")
        raise SparkAnalysisError("UNSUPPORTED_FEATURE", f"aggregate {f.upper()} is not supported: {reason}")
    return found


def signature(name: str, args: Sequence[Arg], ansi: bool) -> Signature:
    """Spark's analysis of ``name(args)``: the number of arguments, literals where Spark
    wants constants, then the aggregate's own typing rule."""
    agg = lookup(name)
    args = tuple(args)
    fewest = sum(not p.optional for p in agg.params)
    if not fewest <= len(args) <= len(agg.params) and not (agg.name == "count" and args):
        counts = f"{fewest}" if fewest == len(agg.params) else f"{fewest} to {len(agg.params)}"
        raise SparkAnalysisError("WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
                                 f"The `{name}` requires {counts} parameters but the actual number is {len(args)}.")
    for param, arg in zip(agg.params, args):
        if param.constant is None:
            continue
        if not isinstance(arg, Literal):
            raise SparkAnalysisError("DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
                                     f"the `{param.name}` of `{name}` must be a constant")
        # (a STRING constant may be BINARY or collated: listagg's delimiter, whose type its own rule matches)
        if not (arg.type == param.constant or arg.type.is_void or (param.constant.is_numeric and arg.type.is_numeric)
                or param.constant.is_string and arg.type.kind in (TypeKind.BINARY, TypeKind.STRING)):
            raise _mismatch(name, arg.type, f"a {str(param.constant).upper()} {param.name}")
    return agg.types(agg.name, args, ansi)


def aggregate(name: str, args: Sequence[Arg], distinct: bool, ansi: bool) -> Fold:
    """The fold for ``name(DISTINCT? args)`` (``args``: types, or ``Literal``s)."""
    agg = lookup(name)
    sig = signature(name, args, ansi)
    fold = agg.fold(sig, tuple(args), ansi)
    if not distinct or agg.distinct is Distinct.SAME:
        return fold
    if agg.distinct is Distinct.REFUSED:
        raise SparkAnalysisError("UNSUPPORTED_FEATURE", f"{agg.name}(DISTINCT ...) is not supported")
    return _distinct(fold)
