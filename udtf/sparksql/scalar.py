"""Spark's scalar semantics at run time (worker side): casts and functions as specialized callables.

Build once per expression node, call per row:

* ``cast(src, dst, ansi, try_=False, zone="UTC")`` -> ``f(value)``: Spark's ``CAST`` (``try_``:
  TRY_CAST, errors become NULL).  Implicit casts chosen by ``functions.resolve`` use ``try_=False``.
* the builders ``*_fn(name, arg_types, result_type, ansi, zone)`` -> ``f(*values)``: a function
  over already evaluated (and already cast, ``arg_types`` = ``Signature.args``) argument values;
* the lazy forms ``lazy_*(name, arg_types, result_type, ansi, zone, children)`` -> ``g(row)``:
  the calls that evaluate their arguments in an order of their own (AND/OR short-circuit,
  CASE/IF/COALESCE/IN/BETWEEN/NULLIF evaluate lazily), given one ``child(row)`` per argument.

The function registry (``functions``) names the builder of each function and how its arguments
are evaluated; ``functions.compile_call`` is the one entry point wherever errors must match Spark's.

``zone`` is spark.sql.session.timeZone (a Spark zone id, ``sparksql.zone``): the casts between
TIMESTAMP and DATE / TIMESTAMP_NTZ / STRING and TIMESTAMP +- an interval read it, and
building one of them raises ``zone.ZoneError`` when this Python cannot load the zone.  A zone
whose offset is always zero builds the same callables as ``"UTC"``.

Values use the representation documented in ``sqltypes``.  Errors are ``SparkError`` whose
``error_class`` is Spark's (``ARITHMETIC_OVERFLOW``, ``DIVIDE_BY_ZERO``, ``REMAINDER_BY_ZERO``,
``CAST_INVALID_INPUT``, ``CAST_OVERFLOW``, ``NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION``,
``BINARY_ARITHMETIC_OVERFLOW`` ...).
"""
from __future__ import annotations

import functools
import itertools
import math
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal
from typing import Callable, Sequence

from . import collation
from . import format as fmt
from . import zone as _zone
from .castability import can_cast, cast_mode
from .errors import SparkAnalysisError, SparkError
from .types import INTEGRAL_RANGE, TypeKind, SqlType, round_float32

__all__ = ["cast", "cast_through", "fit_decimal", "compare", "equal_nan", "DEC_CTX", "sort_key"]

DEC_CTX = Context(prec=400, rounding=ROUND_HALF_UP, Emax=999999, Emin=-999999)
_DECIMAL128 = Context(prec=34, rounding=ROUND_HALF_EVEN, Emax=6144, Emin=-6143)
# Spark's Decimal * / % use MathContext(38, HALF_UP) before rounding to the result type
DEC38 = Context(prec=38, rounding=ROUND_HALF_UP, Emax=999999, Emin=-999999)
# unary minus / abs go through Scala BigDecimal (MathContext.DECIMAL128: 34 digits, HALF_EVEN)
DEC128 = Context(prec=34, rounding=ROUND_HALF_EVEN, Emax=999999, Emin=-999999)
_US_PER_DAY = 86_400_000_000
_INF = float("inf")


def _err(cls: str, msg: str = "") -> SparkError:
    return SparkError(cls, msg)


def _overflow(msg="overflow") -> SparkError:
    return SparkError("ARITHMETIC_OVERFLOW", msg)


# ---- integers and decimals --------------------------------------------------------------

def _wrap(v: int, bits: int) -> int:
    m = 1 << bits
    v &= m - 1
    return v - m if v >= m >> 1 else v


_BITS = {TypeKind.TINYINT: 8, TypeKind.SMALLINT: 16, TypeKind.INT: 32, TypeKind.BIGINT: 64}


def _quant(scale: int) -> Decimal:
    return Decimal(1).scaleb(-scale)


def fit_decimal(d: Decimal, precision: int, scale: int, ansi: bool, rounding=ROUND_HALF_UP,
                what: str = "") -> Decimal | None:
    """Decimal.changePrecision: round (HALF_UP) to ``scale``; more than ``precision`` digits is an
    overflow: NULL, or ``[NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION]`` when ``ansi``."""
    q = d.quantize(_quant(scale), rounding=rounding, context=DEC_CTX)
    if q.is_zero():
        return q.copy_abs()  # Java's BigDecimal has no negative zero
    if q.adjusted() >= precision - scale:
        if ansi:
            raise _err("NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION",
                       f"{what or d} cannot be represented as Decimal({precision}, {scale}).")
        return None
    return q


# ---- comparisons ------------------------------------------------------------------------

def equal_nan(a, b) -> bool:
    """Spark equality on doubles: NaN = NaN, -0.0 = 0.0."""
    return a == b or (a != a and b != b)


def _lt_float(a, b):
    # NaN is greater than every other value
    if a != a:
        return False
    if b != b:
        return True
    return a < b


def compare(t: SqlType) -> Callable[[object, object], int]:
    """A three-way comparator (-1, 0, 1) for non-null values of ``t`` with Spark's ordering:
    NaN above every other double, -0.0 = 0.0, strings by their collation, arrays and structs
    element by element with NULL first."""
    if t.is_floating:
        def cmp_float(a, b):
            if equal_nan(a, b):
                return 0
            return -1 if _lt_float(a, b) else 1
        return cmp_float
    if t.kind is TypeKind.STRING and not collation.binary(t.collation):
        k = collation_key(t)
        return lambda a, b: _cmp_plain(k(a), k(b))
    if t.kind in (TypeKind.ARRAY, TypeKind.STRUCT):
        elements = t.kind is TypeKind.ARRAY
        parts = compare(t.element) if elements else [compare(f) for _, f in t.fields]

        def cmp_nested(a, b):
            for c, x, y in zip(itertools.repeat(parts) if elements else parts, a, b):
                if x is None or y is None:
                    if x is None and y is None:
                        continue
                    return -1 if x is None else 1
                r = c(x, y)
                if r:
                    return r
            return _cmp_plain(len(a), len(b))
        return cmp_nested
    if not t.is_orderable:
        raise SparkAnalysisError("DATATYPE_MISMATCH.INVALID_ORDERING_TYPE", f'"{str(t).upper()}" is not orderable')
    return _cmp_plain


def _cmp_plain(a, b) -> int:
    return (a > b) - (a < b)


def collation_key(t: SqlType) -> Callable[[str], str]:
    """The collation key of the string type ``t``; an ICU collation is not available."""
    k = collation.key(t.collation)
    if k is None:
        raise NotImplementedError(f"comparing STRING COLLATE {t.collation} (an ICU collation)")
    return k


def normalize(t: SqlType) -> Callable[[object], object]:
    """Spark's NormalizeFloatingNumbers for grouping and DISTINCT: -0.0 becomes 0.0, at any
    depth of a nested value (NaN stays NaN); the identity for types without floats."""
    if not any(inner.is_floating for inner in t.walk()):
        return _identity
    if t.is_floating:
        return lambda v: v + 0.0 if v is not None else None  # -0.0 + 0.0 is 0.0
    if t.kind is TypeKind.ARRAY:
        el = normalize(t.element)
        return lambda v: None if v is None else tuple(map(el, v))
    if t.kind is TypeKind.MAP:
        k, el = normalize(t.key), normalize(t.element)
        return lambda v: None if v is None else tuple((k(x), el(y)) for x, y in v)
    fields = [normalize(f) for _, f in t.fields]
    return lambda v: None if v is None else tuple(f(x) for f, x in zip(fields, v))


_NAN_KEY = ("NaN",)


def group_key(t: SqlType) -> Callable[[object], object]:
    """A hashable key per value of ``t``, equal for the values Spark groups together (DISTINCT,
    GROUP BY): NaN = NaN, -0.0 = 0.0, strings by their collation, maps entry by entry in their
    order (as Spark's DISTINCT: map(1, 2, 3, 4) is not map(3, 4, 1, 2)), variants by their bytes
    -- at any depth."""
    if t.is_floating:
        return lambda v: v if v is None else _NAN_KEY if v != v else v + 0.0
    if t.kind is TypeKind.STRING and not collation.binary(t.collation):
        return _null_safe(collation_key(t))
    if t.kind is TypeKind.ARRAY:
        el = group_key(t.element)
        return lambda v: None if v is None else tuple(el(x) for x in v)
    if t.kind is TypeKind.STRUCT:
        fields = [group_key(f) for _, f in t.fields]
        return lambda v: None if v is None else tuple(f(x) for f, x in zip(fields, v))
    if t.kind is TypeKind.MAP:
        k, el = group_key(t.key), group_key(t.element)
        return lambda v: None if v is None else tuple((k(x), el(y)) for x, y in v)
    if t.kind is TypeKind.OTHER:
        raise SparkAnalysisError("DATATYPE_MISMATCH.INVALID_ORDERING_TYPE", f'"{str(t).upper()}" cannot be compared')
    return _identity  # a VARIANT by its bytes, as Spark's collect_set


def sort_key(t: SqlType):
    """A key function ordering values of ``t`` as Spark does (for min/max/sorting)."""
    import functools
    return functools.cmp_to_key(compare(t))


# ---- casts ------------------------------------------------------------------------------

def cast(src: SqlType, dst: SqlType, ansi: bool, try_: bool = False,
         zone: str = "UTC") -> Callable[[object], object]:
    """Spark's ``CAST(x AS dst)`` from ``src`` (``try_``: TRY_CAST) in session zone ``zone``.
    None maps to None.  A cast Spark's analysis refuses (``castability``) is a
    ``SparkAnalysisError``."""
    if not can_cast(src, dst, cast_mode(ansi, try_)):
        raise SparkAnalysisError("DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION",
                                 f'cannot cast "{str(src).upper()}" to "{str(dst).upper()}"')
    if try_:
        inner = _cast(src, dst, True, zone)

        def try_cast(v):
            try:
                return inner(v)
            except SparkError:
                return None
        return try_cast
    return _cast(src, dst, ansi, zone)


def cast_through(src: SqlType, through: Sequence[SqlType], ansi: bool,
                 zone: str = "UTC") -> Callable[[object], object]:
    """Casts to each type of ``through`` (``Signature.casts(...)[i]``) in turn; identity when empty."""
    fns = []
    for dst in through:
        fns.append(_cast(src, dst, ansi, zone))
        src = dst
    if not fns:
        return _identity
    if len(fns) == 1:
        return fns[0]
    f1, f2 = fns[0], fns[1]
    return lambda v: f2(f1(v))


def cast_raises(src: SqlType, through: Sequence[SqlType]) -> bool:
    """May ``cast_through(src, through, ...)`` raise?  (False only for casts that never fail:
    integral widenings and numbers to DOUBLE.)"""
    for dst in through:
        if not (src == dst or (src.is_integral and dst.is_integral and dst.int_range[0] <= src.int_range[0]
                               and src.int_range[1] <= dst.int_range[1])
                or (dst.kind is TypeKind.DOUBLE and src.is_numeric)):
            return True
        src = dst
    return False


def _identity(v):
    return v


identity = _identity  # what ``cast`` / ``cast_through`` return for a cast that changes no value


def _null_safe(f):
    def g(v):
        return None if v is None else f(v)
    return g


def _invalid(v, src: SqlType, dst: SqlType) -> SparkError:
    return _err("CAST_INVALID_INPUT",
                f"The value '{v}' of the type \"{str(src).upper()}\" cannot be cast to "
                f"\"{str(dst).upper()}\" because it is malformed.")


def _cast_overflow(v, src, dst) -> SparkError:
    return _err("CAST_OVERFLOW", f"The value {v} of the type \"{str(src).upper()}\" cannot be "
                                 f"cast to \"{str(dst).upper()}\" due to an overflow.")


def _cast(src: SqlType, dst: SqlType, ansi: bool, zone: str):
    if src == dst:
        return _identity
    if src.is_void:
        return lambda v: None
    sk, dk = src.kind, dst.kind
    if dk is TypeKind.STRING:
        return _null_safe(to_string_fn(src, ansi, zone))
    if sk is TypeKind.STRING:
        return _null_safe(_from_string(dst, ansi, src, zone))
    if dst.is_integral:
        lo, hi = dst.int_range
        bits = _BITS[dk]
        if src.is_integral and lo <= src.int_range[0] and src.int_range[1] <= hi:
            return _identity  # a widening: every value fits
        if src.is_integral:
            def int_to_int(v):
                if v is None:
                    return None
                if lo <= v <= hi:
                    return v
                if ansi:
                    raise _cast_overflow(f"{v}", src, dst)
                return _wrap(v, bits)
            return int_to_int
        if src.is_floating:
            def float_to_int(v):
                if v is None:
                    return None
                if v != v or v in (_INF, -_INF):
                    if ansi:
                        raise _cast_overflow(v, src, dst)
                    if v != v:
                        return 0
                    i = (1 << 63) - 1 if v > 0 else -(1 << 63)
                else:
                    i = int(v)  # truncation toward zero
                if lo <= i <= hi:
                    return i
                if ansi:
                    raise _cast_overflow(v, src, dst)
                if bits == 64:
                    return max(lo, min(hi, i))
                # Java: (int) d saturates to int, then narrows by wrapping
                i = max(-(1 << 31), min((1 << 31) - 1, i))
                return _wrap(i, bits)
            return float_to_int
        if src.is_decimal:
            def dec_to_int(v):
                if v is None:
                    return None
                i = int(v)  # truncation
                if lo <= i <= hi:
                    return i
                if ansi:
                    raise _cast_overflow(v, src, dst)
                return _wrap(i, bits)
            return dec_to_int
        if sk is TypeKind.BOOLEAN:
            return _null_safe(lambda v: 1 if v else 0)
        if sk in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ):
            def ts_to_int(v):
                if v is None:
                    return None
                s = v // 1_000_000
                if lo <= s <= hi:
                    return s
                if ansi:
                    raise _cast_overflow(v, src, dst)
                return None  # castToInt/Short/Byte of a timestamp: NULL, not a wrapped value
            return ts_to_int
    if dk is TypeKind.DOUBLE:
        if src.is_integral or src.is_floating:
            return _null_safe(float)
        if src.is_decimal:
            return _null_safe(float)
        if sk is TypeKind.BOOLEAN:
            return _null_safe(lambda v: 1.0 if v else 0.0)
        if src.is_timestamp:
            return _null_safe(lambda v: v / 1_000_000)
    if dk is TypeKind.FLOAT:
        if src.is_integral:
            return _null_safe(fmt.int_to_float32)
        if sk is TypeKind.DOUBLE:
            return _null_safe(round_float32)
        if src.is_decimal:
            return _null_safe(fmt.decimal_to_float32)
        if sk is TypeKind.BOOLEAN:
            return _null_safe(lambda v: 1.0 if v else 0.0)
    if dk is TypeKind.DECIMAL:
        p, s = dst.precision, dst.scale
        if src.is_integral or src.is_decimal:
            return _null_safe(lambda v: fit_decimal(Decimal(v), p, s, ansi))
        if src.is_floating:
            def float_to_dec(v):
                if v is None or v != v or v in (_INF, -_INF):
                    return None
                # Scala BigDecimal(double) goes through Double.toString (shortest digits)
                return fit_decimal(Decimal(repr(v)), p, s, ansi, what=fmt.double_to_string(v))
            return float_to_dec
        if sk is TypeKind.BOOLEAN:
            return _null_safe(lambda v: fit_decimal(Decimal(1 if v else 0), p, s, ansi))
    if dk is TypeKind.BOOLEAN:
        if src.is_numeric:
            return _null_safe(lambda v: v != 0)
        if src.is_timestamp:
            return _null_safe(lambda v: v != 0)
        if sk is TypeKind.DATE and not ansi:
            return lambda v: None
    if (dst.is_numeric) and sk is TypeKind.DATE and not ansi:
        return lambda v: None  # non-ANSI CAST(date AS numeric) is always NULL
    if src.is_datetime and dst.is_datetime:
        return _datetime_cast(sk, dk, zone)
    if dk in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ):
        if src.is_integral:
            return _null_safe(lambda v: _ts_from_seconds(v, ansi))
        if src.is_floating or src.is_decimal:
            def num_to_ts(v):
                if v is None:
                    return None
                lo, hi = INTEGRAL_RANGE[TypeKind.BIGINT]
                if isinstance(v, Decimal):
                    # (d.toBigDecimal * 1e6).longValue: a Scala BigDecimal multiplies in
                    # DECIMAL128 (34 digits, half even); the low 64 bits, in both modes
                    return _wrap(int(_DECIMAL128.multiply(v, 1_000_000)), 64)
                x = v * 1_000_000
                if x != x or x in (_INF, -_INF) or not lo <= x <= hi:
                    if ansi:
                        raise _cast_overflow(v, src, dst)
                    return None
                return int(x)
            return num_to_ts
    if dk is TypeKind.BINARY and sk is TypeKind.STRING:
        return _null_safe(lambda v: v.encode())
    if dk is TypeKind.ARRAY and sk is TypeKind.ARRAY:
        el = _cast(src.element, dst.element, ansi, zone)
        return _null_safe(lambda v: tuple(None if x is None else el(x) for x in v))
    if dk is TypeKind.STRUCT and sk is TypeKind.STRUCT and len(src.fields) == len(dst.fields):
        fields = [_cast(a, b, ansi, zone) for (_, a), (_, b) in zip(src.fields, dst.fields)]  # by position
        return _null_safe(lambda v: tuple(None if x is None else f(x) for f, x in zip(fields, v)))
    if dk is TypeKind.MAP and sk is TypeKind.MAP:  # (entry by entry, in order; equal keys kept)
        key, el = _cast(src.key, dst.key, ansi, zone), _cast(src.element, dst.element, ansi, zone)
        return _null_safe(lambda v: tuple((key(x), None if y is None else el(y)) for x, y in v))
    if src.is_interval and dst.is_interval and sk is dk:
        return _identity
    raise NotImplementedError(f"cast {src} to {dst}")


def _datetime_cast(sk: TypeKind, dk: TypeKind, zone: str):
    """A cast between DATE, TIMESTAMP and TIMESTAMP_NTZ (``sk`` != ``dk``): TIMESTAMP values
    are instants, the others wall clocks in ``zone`` (null-safe)."""
    if TypeKind.TIMESTAMP in (sk, dk):
        tz = _zone.resolve(zone)
        if tz is not None:
            return _null_safe(_ZONED_CASTS[sk, dk](tz))
    if dk is TypeKind.DATE:
        return _null_safe(lambda v: v // _US_PER_DAY)
    if sk is TypeKind.DATE:
        return _null_safe(lambda v: v * _US_PER_DAY)
    return _identity  # between TIMESTAMP and TIMESTAMP_NTZ in a zone at offset zero


# casts from and to TIMESTAMP in a zone not always at offset zero: tz -> (value -> value)
_ZONED_CASTS = {
    (TypeKind.TIMESTAMP, TypeKind.DATE): lambda tz: lambda v: _zone.local_micros(v, tz) // _US_PER_DAY,
    (TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ): lambda tz: lambda v: _zone.local_micros(v, tz),
    (TypeKind.DATE, TypeKind.TIMESTAMP): lambda tz: lambda v: _zone.start_of_day(v, tz),
    (TypeKind.TIMESTAMP_NTZ, TypeKind.TIMESTAMP): lambda tz: lambda v: _zone.instant_micros(v, tz),
}


def _ts_from_seconds(v: int, ansi: bool):
    # SECONDS.toMicros saturates at the bigint range in both modes
    lo, hi = INTEGRAL_RANGE[TypeKind.BIGINT]
    return max(lo, min(hi, v * 1_000_000))


def to_string_fn(src: SqlType, ansi: bool, zone: str = "UTC") -> Callable[[object], str]:
    """CAST(value AS STRING) for non-null values of ``src``; a TIMESTAMP prints its wall clock
    in ``zone``."""
    k = src.kind
    if src.is_integral:
        return str
    if k is TypeKind.DOUBLE:
        return fmt.double_to_string
    if k is TypeKind.FLOAT:
        return fmt.float_to_string
    if k is TypeKind.DECIMAL:
        return lambda d: fmt.decimal_to_string(d, plain=ansi)
    if k is TypeKind.BOOLEAN:
        return lambda b: "true" if b else "false"
    if k is TypeKind.DATE:
        return fmt.date_to_string
    if k is TypeKind.TIMESTAMP and _zone.resolve(zone) is not None:
        tz = _zone.resolve(zone)
        return lambda v: fmt.timestamp_to_string(_zone.local_micros(v, tz))
    if k in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ):
        return fmt.timestamp_to_string
    if k is TypeKind.BINARY:
        return lambda b: b.decode("utf-8", "replace")
    if k is TypeKind.STRING:
        return _identity
    if k is TypeKind.ARRAY:
        el = to_string_fn(src.element, ansi, zone)
        return lambda a: "[" + ", ".join("null" if x is None else el(x) for x in a) + "]"
    if src.is_interval:
        return lambda v: fmt.interval_to_string(v, src.kind is TypeKind.YEAR_MONTH_INTERVAL, src.start, src.end)
    raise NotImplementedError(f"cast {src} to string")


def _from_string(dst: SqlType, ansi: bool, src: SqlType, zone: str):
    k = dst.kind

    def bad(v):
        if ansi:
            raise _invalid(v, src, dst)
        return None

    if dst.is_integral:
        lo, hi = dst.int_range

        def str_to_int(v):
            r = fmt.parse_integral(v, lo, hi, ansi)
            return bad(v) if r is None else r
        return str_to_int
    if k is TypeKind.DOUBLE:
        def str_to_double(v):
            r = fmt.parse_double(v)
            return bad(v) if r is None else r
        return str_to_double
    if k is TypeKind.FLOAT:
        def str_to_float(v):
            r = fmt.parse_float(v)
            return bad(v) if r is None else r
        return str_to_float
    if k is TypeKind.DECIMAL:
        p, s = dst.precision, dst.scale

        def str_to_dec(v):
            r = fmt.parse_decimal(v)
            if r is None:
                return bad(v)
            return fit_decimal(r, p, s, ansi, what=v.strip())
        return str_to_dec
    if k is TypeKind.BOOLEAN:
        def str_to_bool(v):
            r = fmt.parse_boolean(v)
            return bad(v) if r is None else r
        return str_to_bool
    if k is TypeKind.DATE:
        def str_to_date(v):
            r = fmt.parse_date(v)
            return bad(v) if r is None else r
        return str_to_date
    if k is TypeKind.TIMESTAMP:
        tz = _zone.resolve(zone)

        def str_to_ts(v):
            r = fmt.parse_timestamp(v, tz)
            return bad(v) if r is None else r
        return str_to_ts
    if k is TypeKind.TIMESTAMP_NTZ:
        def str_to_ntz(v):
            r = fmt.parse_timestamp_ntz(v)
            return bad(v) if r is None else r
        return str_to_ntz
    if k is TypeKind.BINARY:
        return lambda v: v.encode()
    raise NotImplementedError(f"cast string to {dst}")


# ---- functions ----------------------------------------------------------------------------

def _strict(fn):
    code = getattr(fn, "__code__", None)
    n = None if code is None or fn.__defaults__ else code.co_argcount
    if n == 1:
        return lambda a: None if a is None else fn(a)
    if n == 2:
        return lambda a, b: None if a is None or b is None else fn(a, b)

    def g(*args):
        for a in args:
            if a is None:
                return None
        return fn(*args)
    return g


# -- arithmetic

def _int_check(kind: TypeKind, ansi: bool, op: str):
    lo, hi = INTEGRAL_RANGE[kind]
    bits = _BITS[kind]
    small = kind in (TypeKind.TINYINT, TypeKind.SMALLINT)

    def check(v, a=None, b=None):
        if lo <= v <= hi:
            return v
        if ansi:
            if small:
                raise _err("BINARY_ARITHMETIC_OVERFLOW", f"{a} {op} {b} caused overflow.")
            raise _overflow("overflow.")
        return _wrap(v, bits)
    return check


def arithmetic_fn(f, types, result, ansi, zone):
    l, r = types
    op = f
    if result.kind is TypeKind.DECIMAL and l.is_decimal and r.is_decimal:
        return _strict(_decimal_arith(f, result, ansi))
    if f == "div":
        if l.is_decimal:
            def dec_div(a, b):
                if b == 0:
                    if ansi:
                        raise _err("DIVIDE_BY_ZERO", "Division by zero.")
                    return None
                # (a quot b).toLong: BigInteger.longValue keeps the low 64 bits in both modes
                return _wrap(int(DEC38.divide_int(a, b)), 64)
            return _strict(dec_div)

        def int_div(a, b):
            if b == 0:
                if ansi:
                    raise _err("DIVIDE_BY_ZERO", "Division by zero.")
                return None
            q = abs(a) // abs(b)
            if (a < 0) != (b < 0):
                q = -q
            if q > (1 << 63) - 1:
                if ansi:
                    raise _overflow("Overflow in integral divide.")
                return _wrap(q, 64)
            return q
        return _strict(int_div)
    k = result.kind
    if k in (TypeKind.DOUBLE, TypeKind.FLOAT):
        r32 = k is TypeKind.FLOAT
        if f == "+":
            fn = (lambda a, b: round_float32(a + b)) if r32 else (lambda a, b: a + b)
        elif f == "-":
            fn = (lambda a, b: round_float32(a - b)) if r32 else (lambda a, b: a - b)
        elif f == "*":
            fn = (lambda a, b: round_float32(a * b)) if r32 else (lambda a, b: a * b)
        elif f == "/":
            def fdiv(a, b):
                if b == 0:
                    if ansi:
                        raise _err("DIVIDE_BY_ZERO", "Division by zero.")
                    return None
                q = a / b
                return round_float32(q) if r32 else q
            fn = fdiv
        elif f in ("%", "pmod"):
            def fmod(a, b):
                if b == 0:
                    if ansi:
                        raise _err("REMAINDER_BY_ZERO", "Remainder by zero.")
                    return None
                m = _java_fmod(a, b)
                if f == "pmod" and m < 0:  # Pmod: r = a % n; if (r < 0) (r + n) % n, in float or double
                    m = _java_fmod(round_float32(m + b) if r32 else m + b, b)
                return round_float32(m) if r32 else m
            fn = fmod
        else:
            raise ValueError(f)
        return _strict(fn)
    if result.is_integral:
        check = _int_check(k, ansi, op)
        if f == "+":
            fn = lambda a, b: check(a + b, a, b)
        elif f == "-":
            fn = lambda a, b: check(a - b, a, b)
        elif f == "*":
            fn = lambda a, b: check(a * b, a, b)
        elif f in ("%", "pmod"):
            def imod(a, b):
                if b == 0:
                    if ansi:
                        raise _err("REMAINDER_BY_ZERO", "Remainder by zero.")
                    return None
                m = _java_rem(a, b)
                if f == "pmod" and m < 0:  # Pmod: (r + n) % n in Java int / long arithmetic
                    m = _java_rem(_wrap(m + b, 64 if k is TypeKind.BIGINT else 32), b)
                return m
            fn = imod
        else:
            raise ValueError(f)
        return _strict(fn)
    if result.is_interval or result.is_datetime:
        return _strict(_datetime_arith(f, types, result, ansi, zone))
    if result.is_void:
        return lambda a, b: None
    raise ValueError(f"{f}{types}->{result}")


def _java_fmod(a: float, b: float) -> float:
    """Java's ``a % b`` for doubles (NaN for an infinite dividend or a zero divisor)."""
    if a != a or b != b or a in (_INF, -_INF) or b == 0:
        return math.nan
    if b in (_INF, -_INF):
        return a
    return math.fmod(a, b)


def _java_rem(a, b):
    m = abs(a) % abs(b)
    return -m if a < 0 else m


def _decimal_arith(f, result: SqlType, ansi: bool):
    p, s = result.precision, result.scale
    q = _quant(s)

    def fit(v):
        r = v.quantize(q, rounding=ROUND_HALF_UP, context=DEC_CTX)
        if r.is_zero():
            return r.copy_abs()
        if r.adjusted() >= p - s:
            if ansi:
                raise _err("NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION",
                           f"{v} cannot be represented as Decimal({p}, {s}).")
            return None
        return r
    if f == "+":
        return lambda a, b: fit(DEC_CTX.add(a, b))
    if f == "-":
        return lambda a, b: fit(DEC_CTX.subtract(a, b))
    if f == "*":
        return lambda a, b: fit(DEC38.multiply(a, b))
    q38 = _quant(38)
    if f == "/":
        def ddiv(a, b):
            if b == 0:
                if ansi:
                    raise _err("DIVIDE_BY_ZERO", "Division by zero.")
                return None
            # Spark divides to 38 significant digits (HALF_UP), then rounds to the result scale
            return fit(DEC38.divide(a, b))
        return ddiv
    if f in ("%", "pmod"):
        def drem(a, b):
            if b == 0:
                if ansi:
                    raise _err("REMAINDER_BY_ZERO", "Remainder by zero.")
                return None
            m = DEC_CTX.remainder(a, b)
            if f == "pmod" and m < 0:
                m = DEC_CTX.remainder(m + b, b)
            return fit(m)
        return drem
    raise ValueError(f)


def _datetime_arith(f, types, result, ansi, zone):
    l, r = types
    K = TypeKind
    if f == "+" and (r.is_datetime and not l.is_datetime):
        inner = _datetime_arith(f, (r, l), result, ansi, zone)
        return lambda a, b: inner(b, a)
    if l.kind is K.DATE and r.kind in (K.TINYINT, K.SMALLINT, K.INT):
        return (lambda a, b: _date_check(a + b, ansi)) if f == "+" else \
            (lambda a, b: _date_check(a - b, ansi))
    if l.kind is K.DATE and r.kind is K.DATE and f == "-":
        return lambda a, b: (a - b) * _US_PER_DAY
    if l.kind is K.DATE and r.kind is K.DAY_TIME_INTERVAL and result.kind is K.DATE:
        def date_plus_days(a, b):
            days = int(b / _US_PER_DAY)
            return _date_check(a + days if f == "+" else a - days, ansi)
        return date_plus_days
    if l.kind is K.DATE and r.kind is K.YEAR_MONTH_INTERVAL:
        return lambda a, b: _add_months_date(a, b if f == "+" else -b)
    if l.kind is K.TIMESTAMP and r.kind is K.DAY_TIME_INTERVAL and _zone.resolve(zone) is not None:
        return _zoned_ts_day_time(_zone.resolve(zone), -1 if f == "-" else 1, ansi)
    if l.is_timestamp and r.kind is K.DAY_TIME_INTERVAL:
        return (lambda a, b: _ts_check(a + b, ansi)) if f == "+" else (lambda a, b: _ts_check(a - b, ansi))
    if l.kind is K.TIMESTAMP and r.kind is K.YEAR_MONTH_INTERVAL and _zone.resolve(zone) is not None:
        return _zoned_ts_months(_zone.resolve(zone), -1 if f == "-" else 1)
    if l.is_timestamp and r.kind is K.YEAR_MONTH_INTERVAL:
        def ts_months(a, b):
            days, rem = divmod(a, _US_PER_DAY)
            return _add_months_date(days, b if f == "+" else -b) * _US_PER_DAY + rem
        return ts_months
    if l.kind is K.TIMESTAMP and r.kind is K.TIMESTAMP and f == "-" and _zone.resolve(zone) is not None:
        tz = _zone.resolve(zone)  # SubtractTimestamps: the distance of the wall clocks in the session zone
        return lambda a, b: _zone.local_micros(a, tz) - _zone.local_micros(b, tz)
    if l.is_datetime and r.is_datetime and f == "-":
        return lambda a, b: a - b
    if l.is_interval and r.is_interval:
        lo, hi = INTEGRAL_RANGE[K.BIGINT] if l.kind is K.DAY_TIME_INTERVAL else INTEGRAL_RANGE[K.INT]

        def iv(a, b):
            v = a + b if f == "+" else a - b
            if not lo <= v <= hi:
                raise _overflow("integer overflow")
            return v
        return iv
    raise ValueError(f"{f}{types}")


def _zoned_ts_months(tz, sign: int):
    """DateTimeUtils.timestampAddMonths: months added to the wall clock in ``tz``, back to an
    instant keeping the original offset where the new wall clock is ambiguous."""
    def ts_months(a, b):
        local = _zone.local_micros(a, tz)
        days, rem = divmod(local, _US_PER_DAY)
        moved = _add_months_date(days, sign * b) * _US_PER_DAY + rem
        return _zone.instant_micros(moved, tz, prefer=local - a)
    return ts_months


def _zoned_ts_day_time(tz, sign: int, ansi: bool):
    """DateTimeUtils.timestampAddDayTime: the interval's whole days (truncated toward zero) added
    to the wall clock in ``tz`` (keeping the offset where ambiguous), the rest to the instant."""
    def ts_day_time(a, b):
        b *= sign
        days = abs(b) // _US_PER_DAY * (1 if b >= 0 else -1)
        local = _zone.local_micros(a, tz)
        moved = _zone.instant_micros(local + days * _US_PER_DAY, tz, prefer=local - a)
        return _ts_check(moved + b - days * _US_PER_DAY, ansi)
    return ts_day_time


def _date_check(d: int, ansi: bool) -> int:
    if not -(1 << 31) <= d < (1 << 31):
        raise _overflow("integer overflow")
    return d


def _ts_check(t: int, ansi: bool) -> int:
    lo, hi = INTEGRAL_RANGE[TypeKind.BIGINT]
    if not lo <= t <= hi:
        raise _overflow("long overflow")
    return t


def _add_months_date(days: int, months: int) -> int:
    import datetime as dt
    import calendar
    d = dt.date.fromordinal(days + dt.date(1970, 1, 1).toordinal())
    m0 = d.year * 12 + d.month - 1 + months
    y, m = divmod(m0, 12)
    day = min(d.day, calendar.monthrange(y, m + 1)[1])
    return dt.date(y, m + 1, day).toordinal() - dt.date(1970, 1, 1).toordinal()


# -- comparisons

def comparison_fn(f, types, result, ansi, zone):
    t = types[0]
    if t.is_void:
        return (lambda a, b: True if a is None and b is None else False) if f == "<=>" else \
            (lambda a, b: None)
    if t.is_floating:
        eq = equal_nan
        lt = _lt_float
        table = {"=": eq, "<>": lambda a, b: not eq(a, b), "<": lt,
                 "<=": lambda a, b: not lt(b, a), ">": lambda a, b: lt(b, a),
                 ">=": lambda a, b: not lt(a, b)}
    elif t.kind in (TypeKind.ARRAY, TypeKind.STRUCT) or (t.kind is TypeKind.STRING and not collation.binary(t.collation)):
        c = compare(t)
        table = {"=": lambda a, b: c(a, b) == 0, "<>": lambda a, b: c(a, b) != 0,
                 "<": lambda a, b: c(a, b) < 0, "<=": lambda a, b: c(a, b) <= 0,
                 ">": lambda a, b: c(a, b) > 0, ">=": lambda a, b: c(a, b) >= 0}
    else:
        import operator
        table = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le,
                 ">": operator.gt, ">=": operator.ge}
    if f == "<=>":
        eq = table["="]

        def nseq(a, b):
            if a is None or b is None:
                return a is None and b is None
            return eq(a, b)
        return nseq
    if f == "is_distinct_from":
        eq = table["="]
        return lambda a, b: (a is None) != (b is None) if a is None or b is None else not eq(a, b)
    return _strict(table[f])


# -- logic and null tests (eager value forms; the lazy ones are below)

def _and(a, b):
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _or(a, b):
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def logic_fn(f, types, result, ansi, zone):
    if f == "and":
        return _and
    if f == "or":
        return _or
    return lambda a: None if a is None else not a


def in_fn(f, types, result, ansi, zone):
    eq = comparison_fn("=", types[:2], result, ansi, zone)

    def in_(v, *items):
        if v is None:
            return None
        has_null = False
        for x in items:
            if x is None:
                has_null = True
            elif eq(v, x):
                return True
        return None if has_null else False
    return in_


def between_fn(f, types, result, ansi, zone):
    ge = _cmp_sides(">=", types[0], types[1], ansi, zone)
    le = _cmp_sides("<=", types[0], types[2], ansi, zone)

    def between(v, lo, hi):
        return _and(ge(v, lambda: lo), le(v, lambda: hi))
    return between


def case_fn(f, types, result, ansi, zone):
    n = len(types)

    def case(*vals):
        for i in range(0, n - 1, 2):
            if vals[i] is True:
                return vals[i + 1]
        return vals[-1] if n % 2 == 1 else None
    return case


def coalesce_fn(f, types, result, ansi, zone):
    def coalesce(*vals):
        for v in vals:
            if v is not None:
                return v
        return None
    return coalesce


def nullif_fn(f, types, result, ansi, zone):
    eq = _cmp_sides("=", types[0], types[1], ansi, zone)

    def nullif(a, b):
        return None if a is not None and eq(a, lambda: b) else a
    return nullif


def greatest_fn(f, types, result, ansi, zone):
    c = compare(result)
    want = 1 if f == "greatest" else -1

    def pick(*vals):
        best = None
        for v in vals:
            if v is not None and (best is None or c(v, best) == want):
                best = v
        return best
    return pick


def null_test_fn(f, types, result, ansi, zone):
    return (lambda v: v is None) if f == "is_null" else (lambda v: v is not None)


# -- numeric functions

def neg_abs_fn(f, types, result, ansi, zone):
    t = types[0]
    if t.is_integral or t.is_interval:
        lo, hi = t.int_range if t.is_integral else INTEGRAL_RANGE[
            TypeKind.BIGINT if t.kind is TypeKind.DAY_TIME_INTERVAL else TypeKind.INT]
        bits = _BITS.get(t.kind, 64 if t.kind is TypeKind.DAY_TIME_INTERVAL else 32)

        def neg(v):
            r = -v if f == "negative" or (f == "abs" and v < 0) else v
            if r > hi:
                if ansi:
                    raise _overflow("overflow.")
                return _wrap(r, bits)
            return r
        return _strict(neg) if f != "positive" else _strict(lambda v: v)
    if f == "positive":
        return _strict(lambda v: v)
    if t.is_decimal:
        p, sc = t.precision, t.scale

        def dec_neg(v):
            if f == "abs" and not v.is_signed():
                return v
            r = DEC128.minus(v)
            if r.is_zero():
                return r.copy_abs()
            # rounding to 34 digits can carry into a new digit: Spark fails in either mode
            q = r.quantize(_quant(sc), rounding=ROUND_HALF_UP, context=DEC_CTX)
            if q.adjusted() >= p - sc:
                raise _err("NUMERIC_VALUE_OUT_OF_RANGE.WITHOUT_SUGGESTION",
                           f"{q} cannot be represented as Decimal({p}, {sc}).")
            return q
        return _strict(dec_neg)
    return _strict((lambda v: -v) if f == "negative" else abs)


def double_fn(f, types, result, ansi, zone):
    def sqrt(x):
        return math.sqrt(x) if x >= 0 else (math.nan if x == x else x)

    def exp(x):
        try:
            return math.exp(x)
        except OverflowError:
            return _INF

    def ln(x):
        if x <= 0:
            return None
        return math.log(x)

    def log10(x):
        if x <= 0:
            return None
        return math.log10(x)

    def logarithm(base, x):  # Spark's log(base, x): StrictMath.log(x) / StrictMath.log(base)
        if base <= 0 or x <= 0:
            return None
        return math.log(x) / math.log(base)

    def pow_(a, b):
        if b != b:
            return math.nan
        if a == 0 and b < 0:  # Java: 0 ** negative is +-Infinity
            odd = float(b).is_integer() and abs(b) < 2 ** 53 and int(b) % 2 == 1
            return -_INF if odd and math.copysign(1, a) < 0 else _INF
        try:
            return math.pow(a, b)
        except OverflowError:
            return _INF if a > 0 or float(b).is_integer() and int(b) % 2 == 0 else -_INF
        except ValueError:
            return math.nan
    return _strict({"sqrt": sqrt, "exp": exp, "ln": ln, "log10": log10, "logarithm": logarithm,
                    "pow": pow_}[f])


def sign_fn(f, types, result, ansi, zone):
    def sign(x):
        if x != x:
            return math.nan
        return 1.0 if x > 0 else -1.0 if x < 0 else x  # Math.signum keeps -0.0
    return _strict(sign)


def round_fn(f, types, result, ansi, zone):
    t = types[0]
    mode = ROUND_HALF_UP if f == "round" else ROUND_HALF_EVEN
    scale_arg = len(types) == 2

    def rounder(x, scale=0):
        if t.is_decimal:
            r = x.quantize(_quant(max(scale, 0)) if scale >= 0 else Decimal(1).scaleb(-scale),
                           rounding=mode, context=DEC_CTX)
            return fit_decimal(r, result.precision, result.scale, ansi)
        if t.is_integral:
            if scale >= 0:
                return x
            m = 10 ** (-scale)
            d = Decimal(x).quantize(Decimal(1).scaleb(-scale), rounding=mode, context=DEC_CTX)
            v = int(d)
            lo, hi = t.int_range
            if not lo <= v <= hi:
                if ansi:
                    raise _overflow("overflow.")
                return _wrap(v, _BITS[t.kind])
            return v
        # float/double: BigDecimal(x).setScale(scale, mode) -> double (NaN/Inf unchanged)
        if x != x or x in (_INF, -_INF):
            return x
        d = Decimal(repr(x) if t.kind is TypeKind.DOUBLE else fmt.float_to_string(x).replace("E", "e"))
        r = d.quantize(Decimal(1).scaleb(-scale), rounding=mode, context=DEC_CTX)
        # via BigDecimal, which has no negative zero: round(-0.0) is 0.0
        return round_float32(float(r)) + 0.0 if t.kind is TypeKind.FLOAT else float(r) + 0.0
    if scale_arg:
        return _strict(lambda x, s: rounder(x, s))
    return _strict(rounder)


def floor_ceil_fn(f, types, result, ansi, zone):
    t = types[0]
    mode = ROUND_FLOOR if f == "floor" else ROUND_CEILING
    if len(types) == 2:
        def fc2(x, scale):
            r = Decimal(x).quantize(Decimal(1).scaleb(-scale), rounding=mode, context=DEC_CTX)
            return fit_decimal(r, result.precision, result.scale, ansi)
        return _strict(fc2)
    if t.is_decimal:
        def fcd(x):
            r = x.to_integral_value(rounding=mode, context=DEC_CTX)
            return fit_decimal(r, result.precision, result.scale, ansi)
        return _strict(fcd)
    if t.is_integral:
        return _strict(lambda x: x)
    fl = math.floor if f == "floor" else math.ceil
    lo, hi = INTEGRAL_RANGE[TypeKind.BIGINT]

    def fcf(x):
        if x != x:
            return 0
        if x in (_INF, -_INF):
            return hi if x > 0 else lo
        v = fl(x)
        return max(lo, min(hi, v))
    return _strict(fcf)


# -- strings

def concat_fn(f, types, result, ansi, zone):
    if result.kind is TypeKind.ARRAY:
        def concat_arrays(*vals):
            if any(v is None for v in vals):
                return None
            return tuple(x for v in vals for x in v)
        return concat_arrays
    if result.kind is TypeKind.BINARY:
        def concat_bin(*vals):
            if any(v is None for v in vals):
                return None
            return b"".join(vals)
        return concat_bin

    def concat(*vals):
        if any(v is None for v in vals):
            return None
        return "".join(vals)
    return concat


def string_fn(f, types, result, ansi, zone):
    if f == "length":
        return _strict(len)
    if f == "upper":
        return _strict(str.upper)
    if f == "lower":
        return _strict(str.lower)
    if f == "trim":
        return _strict(lambda s: s.strip(" "))
    if f == "ltrim":
        return _strict(lambda s: s.lstrip(" "))
    if f == "rtrim":
        return _strict(lambda s: s.rstrip(" "))
    raise ValueError(f)


def string_search_fn(f, types, result, ansi, zone):
    """contains / startswith / endswith / replace under the strings' collation: UTF8_BINARY
    by code points, UTF8_LCASE as ``collation.lcase_*`` (whole code points lower-cased); an
    empty search string is found everywhere, and replace leaves the source as it is."""
    lcase = not collation.binary(next(t for t in types if t.is_string).collation or "")
    if f == "contains":
        return (lambda s, p: collation.lcase_find(s, p) >= 0) if lcase else (lambda s, p: p in s)
    if f == "startswith":
        return collation.lcase_starts_with if lcase else str.startswith
    if f == "endswith":
        return collation.lcase_ends_with if lcase else str.endswith

    def replace(s, search, replacement=""):
        if lcase:
            return collation.lcase_replace(s, search, replacement)
        return s.replace(search, replacement) if search else s
    return replace


def _finder(types) -> Callable[[str, str, int], int]:
    """``find(s, sub, start)`` under the strings' collation: the code point index of the first
    match from ``start``, or -1 (UTF8_LCASE: ``collation.lcase_find``)."""
    lcase = any(t.is_string and not collation.binary(t.collation or "") for t in types)
    return collation.lcase_find if lcase else str.find


def position_fn(f, types, result, ansi, zone):
    """StringInstr(str, substr): the 1-based code point position of the first ``substr``, 0 if
    none (an empty one is at 1)."""
    find = _finder(types)
    return lambda s, sub: find(s, sub, 0) + 1


def locate_fn(f, types, result, ansi, zone):
    """StringLocate over values: a NULL ``pos`` is 0, else NULL ``substr`` or ``str`` NULL;
    ``pos`` < 1 is 0, an empty ``substr`` 1 wherever ``pos`` is (UTF8String.indexOf, and under
    UTF8_LCASE too), else the 1-based position of the first ``substr`` from ``pos``."""
    find = _finder(types)

    def locate(sub, s, pos):
        if pos is None:
            return 0
        if sub is None or s is None:
            return None
        if pos < 1:
            return 0
        return 1 if not sub else find(s, sub, pos - 1) + 1
    return locate


def lazy_locate(f, types, result, ansi, zone, ch):
    """StringLocate(substr, str, pos) evaluates ``pos`` first (NULL: 0, without the others), then
    ``substr`` (NULL: NULL, without ``str``), then ``str``."""
    sub_, str_, pos_ = ch
    core = locate_fn(f, types, result, ansi, zone)

    def locate(row):
        pos = pos_(row)
        if pos is None:
            return 0
        sub = sub_(row)
        return None if sub is None else core(sub, str_(row), pos)
    return locate


def pad_fn(f, types, result, ansi, zone):
    """UTF8String.lpad / rpad: ``pad`` repeated to fill ``n`` code points, cut where it ends;
    no padding needed (or an empty ``pad``): the first ``n`` code points ('' for ``n`` < 0)."""
    left = f == "lpad"

    def pad(s, n, fill=" "):
        spaces = n - len(s)
        if spaces <= 0 or not fill:
            return s[:max(n, 0)]
        filled = (fill * (spaces // len(fill) + 1))[:spaces]
        return filled + s if left else s + filled
    return pad


def left_right_fn(f, types, result, ansi, zone):
    """Left: Substring(str, 1, len); Right: '' for len <= 0, else Substring(str, -len, len)."""
    sub = substring_fn("substring", types, result, ansi, zone)
    if f == "left":
        return lambda s, n: sub(s, 1, n)
    return lambda s, n: s[:0] if n <= 0 else sub(s, -n, n)


def lazy_nanvl(f, types, result, ansi, zone, ch):
    """NaNvl: ``x``, then ``y`` only where ``x`` is NaN (NULL ``x`` is NULL)."""
    x, y = ch

    def nanvl(row):
        v = x(row)
        return y(row) if v is not None and v != v else v
    return nanvl


def substring_fn(f, types, result, ansi, zone):
    def substring(s, pos, length=(1 << 31) - 1):
        # UTF8String.substringSQL
        n = len(s)
        start = pos - 1 if pos > 0 else (n + pos if pos < 0 else 0)
        end = min(max(start + length, -(1 << 31)), (1 << 31) - 1)  # (long) start + length, clamped
        start = max(start, 0)
        end = min(end, n)
        if start >= end:
            return s[:0]
        return s[start:end]
    return _strict(substring)


def date_fn(f, types, result, ansi, zone):
    if f == "datediff":
        return _strict(lambda a, b: a - b)
    if f == "date_add":
        return _strict(lambda d, n: d + n)
    return _strict(lambda d, n: d - n)


def lazy_logic(f, types, result, ansi, zone, ch):
    a, b = ch
    if f == "and":
        def and_(row):
            x = a(row)
            if x is False:
                return False
            y = b(row)
            if y is False:
                return False
            return None if x is None or y is None else True
        return and_

    def or_(row):
        x = a(row)
        if x is True:
            return True
        y = b(row)
        if y is True:
            return True
        return None if x is None or y is None else False
    return or_


def lazy_case(f, types, result, ansi, zone, ch):
    n = len(ch)
    pairs = tuple((ch[i], ch[i + 1]) for i in range(0, n - 1, 2))
    default = ch[-1] if n % 2 == 1 else (lambda row: None)

    def case(row):
        for c, v in pairs:
            if c(row) is True:
                return v(row)
        return default(row)
    return case


def lazy_coalesce(f, types, result, ansi, zone, ch):
    def coalesce(row):
        for c in ch:
            v = c(row)
            if v is not None:
                return v
        return None
    return coalesce


def lazy_in(f, types, result, ansi, zone, ch):
    eq = comparison_fn("=", types[:2], result, ansi, zone)
    value, items = ch[0], ch[1:]

    def in_(row):
        v = value(row)
        if v is None:
            return None
        has_null = False
        for c in items:
            x = c(row)
            if x is None:
                has_null = True
            elif eq(v, x):
                return True
        return None if has_null else False
    return in_


def _cmp_sides(f, ta, tb, ansi, zone):
    """``(a, b_thunk) -> bool | None``: a comparison in Spark's order -- the left side cast to
    the common type first, the right side evaluated (``b_thunk()``) and cast only when that is
    not NULL (a BinaryComparison stops at its first NULL operand)."""
    from .coercion import comparison_type
    w = comparison_type(f, ta, tb, ansi)
    ca, cb = cast(ta, w, ansi, zone=zone), cast(tb, w, ansi, zone=zone)
    op = comparison_fn(f, (w, w), None, ansi, zone)

    def compare(a, b_thunk):
        x = ca(a)
        if x is None:
            return None
        y = b_thunk()
        if y is None:
            return None
        y = cb(y)
        return None if y is None else op(x, y)
    return compare


def lazy_between(f, types, result, ansi, zone, ch):
    # Spark 4 rewrites BETWEEN to ``With(v) { x => x >= lo AND x <= hi }``: v once, each
    # comparison in Spark's order (``_cmp_sides``), AND skipping the second when the first is false
    tv, tlo, thi = types
    ge = _cmp_sides(">=", tv, tlo, ansi, zone)
    le = _cmp_sides("<=", tv, thi, ansi, zone)
    cv, clo, chi = ch

    def between(row):
        v = cv(row)
        x = ge(v, lambda: clo(row))
        if x is False:
            return False
        y = le(v, lambda: chi(row))
        if y is False:
            return False
        return None if x is None or y is None else True
    return between


def lazy_nullif(f, types, result, ansi, zone, ch):
    # Spark 4: ``With(a) { x => IF(x = b, NULL, x) }``: b is evaluated only when a (cast to the
    # comparison type) is not NULL
    eq = _cmp_sides("=", types[0], types[1], ansi, zone)
    a, b = ch

    def nullif(row):
        x = a(row)
        if x is None:
            return None
        return None if eq(x, lambda: b(row)) else x
    return nullif


# ---- LIKE ---------------------------------------------------------------------------------

def _like_error(pattern: str, sub: str, detail: str) -> SparkError:
    shown = pattern.replace("\\", "\\\\").replace("'", "\\'")
    return SparkError(f"INVALID_FORMAT.{sub}", f"The format is invalid: '{shown}'. {detail}")


@functools.lru_cache(maxsize=256)
def like_regex(pattern: str, escape: str) -> re.Pattern:
    """Spark's ``StringUtils.escapeLikeRegex``: ``_`` any one character, ``%`` any sequence
    (newlines too), the escape character before ``_``, ``%`` or itself that character, before
    anything else or at the end Spark's INVALID_FORMAT error; matched as a whole."""
    out, chars = [], iter(pattern)
    for c in chars:
        if c == escape:
            nxt = next(chars, None)
            if nxt is None:
                raise _like_error(pattern, "ESC_AT_THE_END", "The escape character is not allowed to end with.")
            if nxt not in ("_", "%", escape):
                raise _like_error(pattern, "ESC_IN_THE_MIDDLE",
                                  f"The escape character is not allowed to precede '{nxt}'.")
            out.append(re.escape(nxt))
        elif c == "_":
            out.append(".")
        elif c == "%":
            out.append(".*")
        else:
            out.append(re.escape(c))
    return re.compile("".join(out), re.DOTALL)


def like_fn(f, types, result, ansi, zone):
    """``like`` / ``ilike`` (Spark's ILike: ``Like(lower(str), lower(pattern), escape)``) over
    evaluated values; the default escape is the backslash."""
    lower = string_fn("lower", types[:1], types[0], ansi, zone) if f == "ilike" else None

    def like(s, pattern, escape="\\"):
        if lower is not None:
            s, pattern = lower(s), lower(pattern)
        return like_regex(pattern, escape).fullmatch(s) is not None
    return like


# ---- arrays -------------------------------------------------------------------------------

def array_join_fn(f, types, result, ansi, zone):
    """ArrayJoin: the non-NULL elements (already STRING) joined by the delimiter; with a
    replacement, a NULL element is the replacement."""
    def array_join(arr, delimiter, replacement=None):
        if replacement is None:
            return delimiter.join(v for v in arr if v is not None)
        return delimiter.join(replacement if v is None else v for v in arr)
    return array_join


def _map_lookup(key_type: SqlType):
    """ElementAt of a map: the value of the first key equal to the key (NaN = NaN, -0.0 = 0.0,
    strings by collation, as Spark's ordering), NULL when none is (in both modes)."""
    key = group_key(key_type)

    def lookup(m, k):
        wanted = key(k)
        return next((v for x, v in m if key(x) == wanted), None)
    return lookup


def element_at_fn(f, types, result, ansi, zone):
    """ElementAt over an array: 1-based, negative from the end; index 0 is Spark's
    INVALID_INDEX_OF_ZERO; out of range NULL, or under ANSI (not try_element_at)
    INVALID_ARRAY_INDEX_IN_ELEMENT_AT."""
    if types[0].kind is TypeKind.MAP:
        return _map_lookup(types[1])
    fail = ansi and f == "element_at"

    def element_at(arr, i):
        n = len(arr)
        if n < abs(i):
            if fail:
                raise SparkError("INVALID_ARRAY_INDEX_IN_ELEMENT_AT",
                                 f"The index {i} is out of bounds. The array has {n} elements. Use `try_element_at` "
                                 "to tolerate accessing element at invalid index and return NULL instead.")
            return None
        if i == 0:
            raise SparkError("INVALID_INDEX_OF_ZERO", "The index 0 is invalid. An index shall be either < 0 or > 0 "
                                                      "(the first element has index 1).")
        return arr[i - 1] if i > 0 else arr[n + i]
    return element_at


def subscript_fn(f, types, result, ansi, zone):
    """``a[i]`` (GetArrayItem): 0-based at the index's ``intValue()`` (its low 32 bits); out of
    range (negative too) NULL, or under ANSI (not ``get``) INVALID_ARRAY_INDEX.  ``m[k]``
    (GetMapValue): the value of the first equal key, NULL when none is (in both modes)."""
    if types[0].kind is TypeKind.MAP:
        return _map_lookup(types[1])
    fail = ansi and f == "subscript"

    def item(arr, i):
        i = (i + (1 << 31)) % (1 << 32) - (1 << 31)
        n = len(arr)
        if 0 <= i < n:
            return arr[i]
        if fail:
            raise SparkError("INVALID_ARRAY_INDEX",
                             f"The index {i} is out of bounds. The array has {n} elements. Use the SQL function "
                             "`get()` to tolerate accessing element at invalid index and return NULL instead.")
        return None
    return item


def array_extreme_fn(f, types, result, ansi, zone):
    """ArrayMax / ArrayMin: the first greatest (least) non-NULL element by Spark's ordering of
    the element type (NaN above every double, -0.0 = 0.0, strings by collation); NULL when
    there is none."""
    if types[0].is_void:  # (array_max(NULL): never called, NULL in is NULL out)
        return lambda arr: None
    cmp = compare(types[0].element)
    sign = 1 if f == "array_max" else -1

    def extreme(arr):
        best = None
        for v in arr:
            if v is not None and (best is None or sign * cmp(v, best) > 0):
                best = v
        return best
    return extreme


def array_search_fn(f, types, result, ansi, zone):
    """ArrayContains: TRUE if a non-NULL element equals the value (Spark's ordering: NaN = NaN,
    -0.0 = 0.0, strings by collation, at any depth), else NULL if an element is NULL, else
    FALSE.  ArrayPosition: the 1-based position of the first such element, else 0."""
    key = group_key(types[1])

    def contains(arr, value):
        wanted, nulls = key(value), False
        for v in arr:
            if v is None:
                nulls = True
            elif key(v) == wanted:
                return True
        return None if nulls else False

    def position(arr, value):
        wanted = key(value)
        return next((i for i, v in enumerate(arr, 1) if v is not None and key(v) == wanted), 0)
    return contains if f == "array_contains" else position


def size_fn(f, types, result, ansi, zone):
    """Size of an array or a map: its number of elements (NULLs counted); of NULL, -1 for
    ``legacy_size`` (spark.sql.legacy.sizeOfNull without ANSI), else NULL."""
    null = -1 if f == "legacy_size" else None
    return lambda v: null if v is None else len(v)


def array_fn(f, types, result, ansi, zone):
    """CreateArray: the values (NULLs too) as an array."""
    return lambda *values: tuple(values)


def like_quantified_fn(f, types, result, ansi, zone):
    """Spark's LikeAny / LikeAll / NotLikeAny / NotLikeAll (ILIKE: of ``lower(str)`` and the
    lower-cased patterns) over a string and literal (non-NULL) patterns: every pattern compiled
    first (an invalid one raises whatever the others give), then ANY: whether one matches (NOT:
    one does not), ALL: whether each does (NOT: none does)."""
    lower = string_fn("lower", types[:1], types[0], ansi, zone) if "ilike" in f else None
    negated, every = f.startswith("not_"), f.endswith("_all")

    def quantified(s, *patterns):
        if lower is not None:
            s, patterns = lower(s), [lower(p) for p in patterns]
        compiled = [like_regex(p, "\\") for p in patterns]
        hits = [(r.fullmatch(s) is not None) != negated for r in compiled]
        return all(hits) if every else any(hits)
    return quantified
