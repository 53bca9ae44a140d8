"""Spark's analyzer type rules for scalar functions and operators (driver side, pure).

Each ``*_sig(function, args, ansi)`` is one of Spark's typing rules: the ``Signature`` Spark's
analyzer gives the call -- the type each argument is implicitly cast to (``TypeCoercion`` when
``ansi`` is false, ``AnsiTypeCoercion`` when true) and the result type.  The function registry
(``functions``) names the rule of each function, and ``functions.resolve(name, arg_types,
ansi)`` applies it; the caller casts argument ``i`` from its own type to ``args[i]``
(``scalar.cast(src, args[i], ansi)``; identity when equal).  Where Spark's analysis fails,
``SparkAnalysisError`` carries Spark's error class (``DATATYPE_MISMATCH.*``).

An argument may be a ``Literal`` (type and value) instead of a bare ``SqlType``: Spark types an
integral *literal* next to a decimal by its digits (``1 + 0.1`` is decimal(3,1), ``x + 0.1`` with
``x INT`` is decimal(12,1)).  ``literal(text)`` types a Spark SQL literal token.

``case_sig`` takes ``cond1, value1, ..., [else]`` with an odd count meaning an ELSE value;
``in_sig`` takes ``value, item1, item2, ...``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Sequence

from .errors import SparkAnalysisError
from .types import (BIGINT, BOOLEAN, DATE, DOUBLE, FLOAT, INT, MAX_PRECISION, STRING,
                       TIMESTAMP, TIMESTAMP_NTZ, VOID, TypeKind, SqlType, decimal, DAY_TIME)

__all__ = ["Literal", "Signature", "literal", "decimal_for", "wider_decimal", "adjust_precision_scale",
           "implicit_cast", "common_type", "comparison_type"]


@dataclass(frozen=True, slots=True)
class Literal:
    """An argument that is a literal: its type and its value (engine representation)."""
    type: SqlType
    value: object


@dataclass(frozen=True, slots=True)
class Signature:
    """``args``: the type each argument is cast to before the call; ``result``: the call's type.
    ``via``: empty, or per argument an intermediate type (or None) the argument is cast to
    first: ANSI ``string_col / int_col`` is ``CAST(CAST(s AS BIGINT) AS DOUBLE) / ...``, so
    ``'1.5'`` fails as a BIGINT even though the division is in DOUBLE."""
    args: tuple[SqlType, ...]
    result: SqlType
    via: tuple[SqlType | None, ...] = ()

    def casts(self, arg_types: Sequence[SqlType]) -> tuple[tuple[SqlType, ...], ...]:
        """Per argument, the chain of types to cast through (empty: no cast)."""
        out = []
        for i, (src, dst) in enumerate(zip(arg_types, self.args)):
            chain = []
            mid = self.via[i] if self.via else None
            if mid is not None and mid != src:
                chain.append(mid)
            if dst != (chain[-1] if chain else src):
                chain.append(dst)
            out.append(tuple(chain))
        return tuple(out)


Arg = SqlType | Literal

_NUMERIC_ORDER = (TypeKind.TINYINT, TypeKind.SMALLINT, TypeKind.INT, TypeKind.BIGINT, TypeKind.FLOAT, TypeKind.DOUBLE)
_INT_DIGITS = {TypeKind.TINYINT: 3, TypeKind.SMALLINT: 5, TypeKind.INT: 10, TypeKind.BIGINT: 20}


def _t(a: Arg) -> SqlType:
    return a.type if isinstance(a, Literal) else a


def _sql(t: SqlType) -> str:
    return '"' + str(t).upper() + '"'


def _mismatch(sub: str, msg: str) -> SparkAnalysisError:
    return SparkAnalysisError(f"DATATYPE_MISMATCH.{sub}", msg)


# ---- decimal rules (DecimalPrecision / DecimalType) ---------------------------------------

def decimal_for(a: Arg) -> SqlType:
    """DecimalType.forType (integral: 3/5/10/20 digits), or fromLiteral for integral literals."""
    t = _t(a)
    if t.is_decimal:
        return t
    if isinstance(a, Literal) and t.kind in (TypeKind.SMALLINT, TypeKind.INT, TypeKind.BIGINT) \
            and a.value is not None:
        return decimal(max(len(str(abs(a.value))), 1), 0)
    if t.is_integral:
        return decimal(_INT_DIGITS[t.kind], 0)
    if t.kind is TypeKind.FLOAT:
        return decimal(14, 7)
    if t.kind is TypeKind.DOUBLE:
        return decimal(30, 15)
    raise ValueError(t)


def _bounded(p: int, s: int) -> SqlType:
    return decimal(min(p, MAX_PRECISION), min(s, MAX_PRECISION))


def adjust_precision_scale(p: int, s: int) -> SqlType:
    """DecimalType.adjustPrecisionScale (spark.sql.decimalOperations.allowPrecisionLoss=true)."""
    if p <= MAX_PRECISION:
        return decimal(p, s)
    int_digits = p - s
    min_scale = min(s, 6)
    return decimal(MAX_PRECISION, max(MAX_PRECISION - int_digits, min_scale))


def wider_decimal(t1: SqlType, t2: SqlType) -> SqlType:
    """DecimalPrecision.widerDecimalType: room for both integer parts and the larger scale;
    beyond 38 digits the scale gives way (boundedPreferIntegralDigits)."""
    scale = max(t1.scale, t2.scale)
    rng = max(t1.precision - t1.scale, t2.precision - t2.scale)
    if rng + scale <= MAX_PRECISION:
        return decimal(rng + scale, scale)
    diff = rng + scale - MAX_PRECISION
    return decimal(MAX_PRECISION, max(0, scale - diff))


def _decimal_wider_than(d: SqlType, t: SqlType) -> bool:
    o = decimal_for(t)
    return d.precision - d.scale >= o.precision - o.scale and d.scale >= o.scale


# ---- common types -----------------------------------------------------------------------

def _tightest(t1: SqlType, t2: SqlType, ansi: bool) -> SqlType | None:
    """findTightestCommonType."""
    if t1 == t2:
        return t1
    if t1.is_void:
        return t2
    if t2.is_void:
        return t1
    if t1.is_integral and t2.is_decimal and _decimal_wider_than(t2, t1):
        return t2
    if t2.is_integral and t1.is_decimal and _decimal_wider_than(t1, t2):
        return t1
    if t1.is_numeric and t2.is_numeric and not t1.is_decimal and not t2.is_decimal:
        wider = _NUMERIC_ORDER[max(_NUMERIC_ORDER.index(t1.kind), _NUMERIC_ORDER.index(t2.kind))]
        if ansi and wider is TypeKind.FLOAT and (t1.is_integral or t2.is_integral):
            return DOUBLE
        return SqlType(wider)
    if t1.is_datetime and t2.is_datetime:
        if TypeKind.TIMESTAMP in (t1.kind, t2.kind):
            return TIMESTAMP
        return SqlType(TypeKind.TIMESTAMP_NTZ)
    if t1.is_interval and t2.kind is t1.kind:
        return SqlType(t1.kind, start=min(t1.start, t2.start), end=max(t1.end, t2.end))
    if t1.kind is TypeKind.ARRAY and t2.kind is TypeKind.ARRAY:
        e = _tightest(t1.element, t2.element, ansi)
        return None if e is None else SqlType(TypeKind.ARRAY, element=e)
    if t1.kind is TypeKind.STRUCT and t2.kind is TypeKind.STRUCT and len(t1.fields) == len(t2.fields):
        fields = [(name, _tightest(a, b, ansi)) for (name, a), (_, b) in zip(t1.fields, t2.fields)]
        return None if any(f is None for _, f in fields) else SqlType(TypeKind.STRUCT, fields=tuple(fields))
    return None


def _wider_decimal_types(t1: SqlType, t2: SqlType) -> SqlType | None:
    """findWiderTypeForDecimal."""
    if t1.is_decimal and t2.is_decimal:
        return wider_decimal(t1, t2)
    if t1.is_integral and t2.is_decimal:
        return wider_decimal(decimal_for(t1), t2)
    if t1.is_decimal and t2.is_integral:
        return wider_decimal(t1, decimal_for(t2))
    if (t1.is_fractional and t2.is_decimal) or (t1.is_decimal and t2.is_fractional):
        return DOUBLE
    return None


def _ansi_string_wider(t1: SqlType, t2: SqlType) -> SqlType | None:
    """AnsiStringPromotionTypeCoercion.findWiderTypeForString."""
    if t1.is_string:
        if t2.is_integral:
            return BIGINT
        if t2.is_fractional:
            return DOUBLE
        if t2.is_void:
            return STRING
        if t2.is_interval:
            return None
        if t2.is_atomic:
            return t2
        return None
    if t2.is_string:
        return _ansi_string_wider(t2, t1)
    return None


def _string_promotion(t1: SqlType, t2: SqlType) -> SqlType | None:
    """Non-ANSI stringPromotion: atomic (but binary/boolean) + string -> string."""
    for a, b in ((t1, t2), (t2, t1)):
        if a.is_string and b.is_atomic and b.kind not in (TypeKind.BINARY, TypeKind.BOOLEAN):
            return STRING
    return None


def _wider_two(t1: SqlType, t2: SqlType, ansi: bool, strings: bool = True) -> SqlType | None:
    """findWiderTypeForTwo (``strings=False``: ...WithoutStringPromotion)."""
    r = _tightest(t1, t2, ansi) or _wider_decimal_types(t1, t2)
    if r is None and strings:
        r = _ansi_string_wider(t1, t2) if ansi else _string_promotion(t1, t2)
    if r is None and t1.kind is TypeKind.ARRAY and t2.kind is TypeKind.ARRAY:
        e = _wider_two(t1.element, t2.element, ansi, strings)
        r = None if e is None else SqlType(TypeKind.ARRAY, element=e)
    return r


def common_type(types: Sequence[SqlType], ansi: bool, strings: bool = True) -> SqlType | None:
    """findWiderCommonType (non-ANSI folds the string types first, as Spark does)."""
    if not ansi and strings:
        st = [t for t in types if _has_string(t)]
        seen = []
        for t in st:
            if t not in seen:
                seen.append(t)
        types = seen + [t for t in types if not _has_string(t)]
    r: SqlType | None = VOID
    for t in types:
        r = _wider_two(r, t, ansi, strings)
        if r is None:
            return None
    return r


def _has_string(t: SqlType) -> bool:
    return t.is_string or (t.kind is TypeKind.ARRAY and _has_string(t.element))


# ---- implicit casts to an expected input type (ImplicitTypeCasts.implicitCast) -------------

class Expect:
    """Abstract expected types of ``ExpectsInputTypes``."""
    NUMERIC = "numeric"
    INTEGRAL = "integral"
    DECIMAL = "decimal"
    STRING = "string"
    BOOLEAN = "boolean"
    DATE = "date"
    TIMESTAMP = "timestamp"
    DOUBLE = "double"
    INT = "int"
    BIGINT = "bigint"


def implicit_cast(t: SqlType, want: SqlType, ansi: bool) -> SqlType | None:
    """Can ``t`` be implicitly cast to the concrete type ``want``?  Returns ``want`` or None."""
    if t == want:
        return t
    if t.is_void:
        return want
    if ansi:
        if t.is_string:
            return want if want.is_atomic else None
        return want if _can_ansi_store_assign(t, want) else None
    # non-ANSI ImplicitTypeCasts.implicitCast
    if t.is_numeric and want.is_numeric:
        return want
    if t.is_string and (want.is_numeric or want.kind in (TypeKind.DATE, TypeKind.TIMESTAMP, TypeKind.BINARY,
                                                         TypeKind.BOOLEAN, TypeKind.TIMESTAMP_NTZ)):
        return want
    if t.is_datetime and want.is_datetime:
        return want
    if t.is_atomic and want.is_string and t.kind is not TypeKind.BINARY:
        return want
    if t.is_atomic and want.is_string:
        return want
    return None


def _can_ansi_store_assign(t: SqlType, want: SqlType) -> bool:
    if t.is_numeric and want.is_numeric:
        return True
    if want.is_string and t.is_atomic:
        return True
    if t.kind is TypeKind.DATE and want.is_timestamp:
        return True
    if t.is_datetime and want.is_datetime:
        return True
    return False


# ---- literals ---------------------------------------------------------------------------

_DEC_RE = re.compile(r"(\d+\.?\d*|\.\d+)")
_EXP_RE = re.compile(r"(\d+\.?\d*|\.\d+)[eE][+-]?\d+")


def literal(text: str) -> Literal:
    """Type and value of a Spark SQL numeric/boolean/NULL literal token (an optional leading
    ``-`` belongs to the literal, as in Spark's grammar)."""
    s = text.strip()
    if s.startswith("-") and s[1:].isdigit():
        v = -int(s[1:])
        for t in (INT, BIGINT):
            if t.int_range[0] <= v:
                return Literal(t, v)
        d = Decimal(v)
        return Literal(_decimal_literal_type(d), d)
    if s.startswith("-") and len(s) > 1:
        lit = literal(s[1:])
        v = lit.value
        if lit.type.is_integral and isinstance(v, int):
            lo, _ = lit.type.int_range
            if -v < lo:
                raise SparkAnalysisError("INVALID_NUMERIC_LITERAL_RANGE", f"{text} out of range")
        return Literal(lit.type, -v)
    u = s.upper()
    if u == "NULL":
        return Literal(VOID, None)
    if u in ("TRUE", "FALSE"):
        return Literal(BOOLEAN, u == "TRUE")
    suffix = u[-2:] if u.endswith("BD") else u[-1:]
    body = s[: len(s) - len(suffix)] if suffix in ("BD", "L", "Y", "S", "D", "F") and not u[-1].isdigit() else s
    if body is s:
        suffix = ""
    if suffix == "BD":
        d = Decimal(body)
        return Literal(_decimal_literal_type(d), d)
    if suffix in ("D", "F"):
        if suffix == "F":
            from .types import round_float32
            return Literal(FLOAT, round_float32(float(body)))
        return Literal(DOUBLE, float(body))
    if suffix in ("L", "Y", "S"):
        v = int(body)
        t = {"L": BIGINT, "Y": SqlType(TypeKind.TINYINT), "S": SqlType(TypeKind.SMALLINT)}[suffix]
        lo, hi = t.int_range
        if not lo <= v <= hi:
            raise SparkAnalysisError("INVALID_NUMERIC_LITERAL_RANGE", f"{text} out of range")
        return Literal(t, v)
    if _EXP_RE.fullmatch(body):
        return Literal(DOUBLE, float(body))
    if body.isdigit():
        v = int(body)
        if v <= 2147483647:
            return Literal(INT, v)
        if v <= (1 << 63) - 1:
            return Literal(BIGINT, v)
        d = Decimal(body)
        return Literal(_decimal_literal_type(d), d)
    if _DEC_RE.fullmatch(body):
        d = Decimal(body)
        return Literal(_decimal_literal_type(d), d)
    raise ValueError(f"not a Spark literal: {text!r}")


def _decimal_literal_type(d: Decimal) -> SqlType:
    """Spark types a decimal literal by its digits: precision = max(digits, scale), scale >= 0."""
    sign, digits, exp = d.as_tuple()
    scale = max(-exp, 0)
    ndigits = len(digits) if any(digits) else 1
    if exp > 0:
        ndigits += exp
    precision = max(ndigits, scale)
    if -exp > 0 and ndigits < scale:
        precision = scale
    if precision > MAX_PRECISION:
        return DOUBLE  # Spark falls back to a double literal
    return decimal(max(precision, 1), scale)


# ---- resolution per function ----------------------------------------------------------------

def _arity(f, args, *counts):
    """Spark's WRONG_NUM_ARGS where ``len(args)`` is none of ``counts`` (its text: "1", or
    "one of 1 and 2" for several)."""
    if len(args) not in counts:
        *most, last = sorted(counts)
        expected = f"one of {', '.join(map(str, most))} and {last}" if most else str(last)
        raise SparkAnalysisError(
            "WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
            f"The `{f}` requires {expected} parameters but the actual number is {len(args)}.")


def _string_promote_binary(l: SqlType, r: SqlType, ansi: bool, arithmetic: bool):
    """PromoteStrings for a binary arithmetic operator."""
    if ansi:
        w = _ansi_string_wider(l, r)
        if w is not None:
            return (w if not l.is_void else w), (w if not r.is_void else w)
        return l, r
    if arithmetic:
        if l.is_string and not r.is_interval:
            l = DOUBLE
        if r.is_string and not l.is_interval:
            r = DOUBLE
    return l, r


def arithmetic_sig(f: str, args: list, ansi: bool) -> Signature:
    _arity(f, args, 2)
    a, b = args
    l, r = _t(a), _t(b)
    # ANSI promotes strings first (date - '2020-01-01' is date - date); without ANSI the
    # datetime operations see the original types.
    if ansi and (l.is_string or r.is_string) and (l.is_datetime or r.is_datetime):
        w = _ansi_string_wider(l, r)
        if w is not None:
            l2 = w if l.is_string else l
            r2 = w if r.is_string else r
            dt = _datetime_arith(f, l2, r2, ansi)
            if dt is not None:
                return Signature(dt.args, dt.result, (None, None))
    dt = _datetime_arith(f, l, r, ansi)
    if dt is not None:
        return dt
    if (l.is_interval and (r.is_numeric or r.is_string)) or (r.is_interval and (l.is_numeric or l.is_string)):
        raise NotImplementedError("interval arithmetic with numbers is not supported")
    l2, r2 = _string_promote_binary(l, r, ansi, arithmetic=True)
    if (l2, r2) != (l, r):
        dt = _datetime_arith(f, l2, r2, ansi)
        if dt is not None:
            return dt
        via = (l2 if l2 != l else None, r2 if r2 != r else None)
        a = l2 if l2 != l else a
        b = r2 if r2 != r else b
        sig = arithmetic_sig(f, [a, b], ansi)
        return Signature(sig.args, sig.result, via)
    if l.is_void and r.is_void:
        if f == "/":
            return Signature((DOUBLE, DOUBLE), DOUBLE)
        if f == "div":
            return Signature((BIGINT, BIGINT), BIGINT)
        return Signature((VOID, VOID), VOID) if False else Signature((DOUBLE, DOUBLE), DOUBLE) \
            if f == "/" else Signature((VOID, VOID), VOID)
    if f == "div":
        _integral_divide_types(l, r)
    for t in (l, r):
        if not (t.is_numeric or t.is_void):
            if l != r and not (l.is_void or r.is_void):
                raise _mismatch("BINARY_OP_DIFF_TYPES",
                                f"the left and right operands of the binary operator have "
                                f"incompatible types ({_sql(l)} and {_sql(r)}).")
            raise _mismatch("BINARY_OP_WRONG_TYPE",
                            f"the binary operator requires the input type (\"NUMERIC\" or ...), "
                            f"not {_sql(t)}.")
    if l.is_void:
        l = r if not r.is_void else l
        a = l
    if r.is_void:
        r = l
        b = r
    if f == "div":  # IntegralDivide: BIGINT or DECIMAL operands (``_integral_divide_types``), result BIGINT
        if l.is_decimal or r.is_decimal:
            return Signature((decimal_for(a), decimal_for(b)), BIGINT)
        return Signature((BIGINT, BIGINT), BIGINT)
    if l.is_decimal or r.is_decimal:
        if l.is_floating or r.is_floating:
            return _plain_arith(f, DOUBLE)
        dl, dr = decimal_for(a), decimal_for(b)
        return Signature((dl, dr), decimal_result(f, dl, dr))
    if f == "/":
        return Signature((DOUBLE, DOUBLE), DOUBLE)
    w = _tightest(l, r, ansi)
    return _plain_arith(f, w)


def _integral_divide_types(l: SqlType, r: SqlType) -> None:
    """Spark's analysis of ``l div r`` over numbers (or NULL): DecimalPrecision casts a decimal
    next to a FLOAT or DOUBLE to DOUBLE, IntegralDivision an integral to BIGINT, and a NULL
    takes the other side's type where that is BIGINT or a decimal; then different types are
    BINARY_OP_DIFF_TYPES (``1.5D div 1``: DOUBLE and BIGINT) and a type other than BIGINT or
    DECIMAL is BINARY_OP_WRONG_TYPE (``1.5D div 1.5D``)."""
    def promoted(t: SqlType, other: SqlType) -> SqlType:
        if t.is_decimal and other.is_floating:
            return DOUBLE
        if t.is_integral:  # next to a decimal, DecimalPrecision makes it one
            return t if other.is_decimal else BIGINT
        return t
    l2, r2 = promoted(l, r), promoted(r, l)
    if l2.is_void and (r2 == BIGINT or r2.is_decimal or r2.is_void):
        return
    if r2.is_void and (l2 == BIGINT or l2.is_decimal):
        return
    if (l2.is_decimal or r2.is_decimal) and (l2.is_integral or l2.is_decimal) and (r2.is_integral or r2.is_decimal):
        return
    if l2 != r2:
        raise _mismatch("BINARY_OP_DIFF_TYPES", f"the left and right operands of the binary operator have "
                                                f"incompatible types ({_sql(l2)} and {_sql(r2)}).")
    if not (l2 == BIGINT or l2.is_decimal):
        raise _mismatch("BINARY_OP_WRONG_TYPE",
                        f"the binary operator requires the input type (\"BIGINT\" or \"DECIMAL\" or "
                        f"\"INTERVAL YEAR TO MONTH\" or \"INTERVAL DAY TO SECOND\"), not {_sql(l2)}.")


def _plain_arith(f, w):
    if f == "/":
        w = DOUBLE
    return Signature((w, w), w)


def decimal_result(f: str, t1: SqlType, t2: SqlType) -> SqlType:
    """Result type of decimal ``t1 f t2`` (allowPrecisionLoss=true)."""
    p1, s1, p2, s2 = t1.precision, t1.scale, t2.precision, t2.scale
    if f in ("+", "-"):
        s = max(s1, s2)
        return adjust_precision_scale(max(p1 - s1, p2 - s2) + s + 1, s)
    if f == "*":
        return adjust_precision_scale(p1 + p2 + 1, s1 + s2)
    if f == "/":
        s = max(6, s1 + p2 + 1)
        return adjust_precision_scale(p1 - s1 + s2 + s, s)
    if f in ("%", "pmod"):
        s = max(s1, s2)
        return adjust_precision_scale(min(p1 - s1, p2 - s2) + s, s)
    raise ValueError(f)


def _datetime_arith(f: str, l: SqlType, r: SqlType, ansi: bool) -> Signature | None:
    K = TypeKind
    small_int = (K.TINYINT, K.SMALLINT, K.INT)
    if f == "+":
        if l.kind is K.DATE and r.kind is K.DAY_TIME_INTERVAL:
            if (r.start, r.end) == (0, 0):
                return Signature((l, r), DATE)
            return Signature((TIMESTAMP, r), TIMESTAMP)
        if r.kind is K.DATE and l.kind is K.DAY_TIME_INTERVAL:
            return _swap(_datetime_arith(f, r, l, ansi))
        if l.is_timestamp and r.kind in (K.DAY_TIME_INTERVAL, K.YEAR_MONTH_INTERVAL):
            return Signature((l, r), l)
        if r.is_timestamp and l.kind in (K.DAY_TIME_INTERVAL, K.YEAR_MONTH_INTERVAL):
            return _swap(_datetime_arith(f, r, l, ansi))
        if l.kind is K.DATE and r.kind is K.YEAR_MONTH_INTERVAL:
            return Signature((l, r), DATE)
        if r.kind is K.DATE and l.kind is K.YEAR_MONTH_INTERVAL:
            return _swap(_datetime_arith(f, r, l, ansi))
        if l.kind is K.DATE and r.kind is not K.DATE and not r.is_interval:
            return _date_add_sig("date_add", l, r, ansi)
        if r.kind is K.DATE and not l.is_interval:
            return _swap(_date_add_sig("date_add", r, l, ansi))
        if l.is_interval and r.is_interval and l.kind is r.kind:
            w = _tightest(l, r, ansi)
            return Signature((w, w), w)
    if f == "-":
        if l.kind is K.DATE and r.kind is K.DAY_TIME_INTERVAL:
            if (r.start, r.end) == (0, 0):
                return Signature((l, r), DATE)
            return Signature((TIMESTAMP, r), TIMESTAMP)
        if l.is_timestamp and r.kind in (K.DAY_TIME_INTERVAL, K.YEAR_MONTH_INTERVAL):
            return Signature((l, r), l)
        if l.kind is K.DATE and r.kind is K.YEAR_MONTH_INTERVAL:
            return Signature((l, r), DATE)
        if l.kind is K.DATE and r.kind is K.DATE:
            return Signature((l, r), SqlType(K.DAY_TIME_INTERVAL, start=0, end=0))
        if l.is_datetime and r.is_datetime:
            # SubtractTimestamps of two types: both sides as TIMESTAMP_NTZ when either is one (a
            # wall clock stays one, even in a gap of the session zone), else as TIMESTAMP
            w = TIMESTAMP_NTZ if K.TIMESTAMP_NTZ in (l.kind, r.kind) else TIMESTAMP
            return Signature((w, w), DAY_TIME)
        # BinaryArithmeticWithDatetimeResolver: (_, DATE) is SubtractDates and a timestamp on
        # either side SubtractTimestamps, the other side (a string) cast implicitly -- a string
        # beside a timestamp only under ANSI (without it Spark refuses TIMESTAMP - STRING)
        if l.is_string and r.kind is K.DATE:
            return Signature((DATE, r), SqlType(K.DAY_TIME_INTERVAL, start=0, end=0))
        if ansi and l.is_string and r.is_timestamp:
            return Signature((r, r), DAY_TIME)
        if ansi and l.is_timestamp and r.is_string:
            return Signature((l, l), DAY_TIME)
        if l.kind is K.DATE and not r.is_interval:
            return _date_add_sig("date_sub", l, r, ansi)
        if l.is_interval and r.is_interval and l.kind is r.kind:
            w = _tightest(l, r, ansi)
            return Signature((w, w), w)
    return None


def _swap(sig: Signature | None) -> Signature | None:
    if sig is None:
        return None
    return Signature(tuple(reversed(sig.args)), sig.result)


def _date_add_sig(f: str, start: SqlType, days: Arg, ansi: bool) -> Signature:
    """DateAdd/DateSub(startDate: date, days: int|smallint|tinyint); a string ``days`` is cast
    to int under ANSI, and without ANSI only when it is a literal."""
    days_lit = isinstance(days, Literal)
    days_lit_value = days.value if days_lit else None
    days = _t(days)
    start = _t(start)
    if start.is_string or start.is_timestamp or start.is_void:
        s = DATE
    elif start.kind is TypeKind.DATE:
        s = DATE
    else:
        raise _mismatch("UNEXPECTED_INPUT_TYPE",
                        f"The first parameter requires the \"DATE\" type, however has the type "
                        f"{_sql(start)}.")
    if days.kind in (TypeKind.TINYINT, TypeKind.SMALLINT, TypeKind.INT):
        d = days
    elif days.is_void or (days.is_string and (ansi or days_lit)):
        d = INT
        if days_lit and not ansi and days.is_string:
            from .format import parse_integral
            if parse_integral(days_lit_value, -(1 << 31), (1 << 31) - 1, True) is None:
                raise SparkAnalysisError("SECOND_FUNCTION_ARGUMENT_NOT_INTEGER",
                                         f"The second argument of `{f}` function needs to be an "
                                         f"integer.")
    else:
        raise _mismatch("UNEXPECTED_INPUT_TYPE",
                        f"The second parameter requires the (\"INT\" or \"SMALLINT\" or "
                        f"\"TINYINT\") type, however has the type {_sql(days)}.")
    return Signature((s, d), DATE)


def comparison_sig(f: str, args: list, ansi: bool) -> Signature:
    _arity(f, args, 2)
    a, b = args
    l, r = _t(a), _t(b)
    if f == "is_distinct_from":
        f = "<=>"
    w = comparison_type(f, a, b, ansi)
    return Signature((w, w), BOOLEAN)


def comparison_type(f: str, a: Arg, b: Arg, ansi: bool) -> SqlType:
    """The common type both sides of a comparison are cast to."""
    l, r = _t(a), _t(b)
    if l == r:
        w = l
    elif ansi:
        w = _ansi_string_wider(l, r)
        if w is None:
            if (l.is_decimal and r.is_integral) or (r.is_decimal and l.is_integral):
                w = wider_decimal(decimal_for(a), decimal_for(b))
            else:
                w = _wider_two(l, r, ansi, strings=False)
    else:
        w = _noansi_cmp_string(l, r)
        if w is None and f in ("=", "<=>", "<>") and ((l.kind is TypeKind.BOOLEAN and r.is_numeric)
                                                 or (r.kind is TypeKind.BOOLEAN and l.is_numeric)):
            w = r if l.kind is TypeKind.BOOLEAN else l
        if w is None:
            if (l.is_decimal and r.is_integral) or (r.is_decimal and l.is_integral):
                w = wider_decimal(decimal_for(a), decimal_for(b))
            else:
                w = _wider_two(l, r, ansi, strings=False)
    if w is None:
        raise _mismatch("BINARY_OP_DIFF_TYPES",
                        f"the left and right operands of the binary operator have incompatible "
                        f"types ({_sql(l)} and {_sql(r)}).")
    if not w.is_orderable:
        raise _mismatch("INVALID_ORDERING_TYPE", f"The `{f}` does not support ordering on type {_sql(w)}.")
    if w.is_void:
        w = VOID
    return w


def _noansi_cmp_string(l: SqlType, r: SqlType) -> SqlType | None:
    """TypeCoercion.findCommonTypeForBinaryComparison."""
    for s, o in ((l, r), (r, l)):
        if s.is_string and not o.is_string:
            if o.kind in (TypeKind.DATE, TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ):
                return o
            if o.is_void:
                return STRING
            if o.is_decimal:  # Spark 4: a decimal of scale 0 keeps its type; others compare as DOUBLE
                return o if o.scale == 0 else DOUBLE
            if o.is_interval:
                return None
            if o.is_atomic:
                return o
    if l.is_datetime and r.is_datetime and l != r:
        return _tightest(l, r, False)
    return None


def logic_sig(f, args, ansi):
    """AND/OR take booleans; a string next to a boolean is cast (ANSI only); NOT takes a
    string only under ANSI."""
    _arity(f, args, 1 if f == "not" else 2)
    types = [_t(a) for a in args]
    if f == "not":
        t = types[0]
        if t.kind is TypeKind.BOOLEAN or t.is_void or (t.is_string and ansi):
            return Signature((BOOLEAN,), BOOLEAN)
        raise _mismatch("UNEXPECTED_INPUT_TYPE",
                        f"The first parameter requires the \"BOOLEAN\" type, however has the "
                        f"type {_sql(t)}.")
    l, r = types
    if l != r and not (l.is_void or r.is_void):
        w = _ansi_string_wider(l, r) if ansi else None
        if w is None or w.kind is not TypeKind.BOOLEAN:
            raise _mismatch("BINARY_OP_DIFF_TYPES",
                            f"the left and right operands of the binary operator have "
                            f"incompatible types ({_sql(l)} and {_sql(r)}).")
        return Signature((BOOLEAN, BOOLEAN), BOOLEAN)
    for t in types:
        if not (t.kind is TypeKind.BOOLEAN or t.is_void):
            if not ansi and l != r:
                raise _mismatch("BINARY_OP_DIFF_TYPES",
                                f"the left and right operands of the binary operator have "
                                f"incompatible types ({_sql(l)} and {_sql(r)}).")
            raise _mismatch("BINARY_OP_WRONG_TYPE",
                            f"the binary operator requires the input type \"BOOLEAN\", not "
                            f"{_sql(t)}.")
    return Signature((BOOLEAN, BOOLEAN), BOOLEAN)


def null_test_sig(f, args, ansi):
    _arity(f, args, 1)
    return Signature((_t(args[0]),), BOOLEAN)


def in_sig(f, args, ansi):
    if len(args) < 2:
        raise SparkAnalysisError("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", "IN needs a list")
    types = [_t(a) for a in args]
    if all(t == types[0] for t in types):
        w = types[0]
    else:
        w = common_type(types, ansi)
    if w is None:
        raise _mismatch("DATA_DIFF_TYPES",
                        "Input to `in` should all be the same type, but it's "
                        f"[{', '.join(_sql(t) for t in types)}].")
    return Signature(tuple(w for _ in args), BOOLEAN)


def between_sig(f, args, ansi):
    """``v BETWEEN lo AND hi`` is ``v >= lo AND v <= hi``: each comparison has its own common
    type, so the arguments keep their types and the function casts internally."""
    _arity(f, args, 3)
    v, lo, hi = args
    comparison_type(">=", v, lo, ansi)
    comparison_type("<=", v, hi, ansi)
    return Signature(tuple(_t(a) for a in args), BOOLEAN)


def _merge(name, types, ansi, strings=True):
    if all(t == types[0] for t in types):
        return types[0]
    w = common_type(types, ansi, strings)
    if w is None:
        raise _mismatch("DATA_DIFF_TYPES",
                        f"Input to `{name}` should all be the same type, but it's "
                        f"[{', '.join(_sql(t) for t in types)}].")
    return w


def case_sig(f, args, ansi):
    n = len(args)
    if n < 2:
        raise SparkAnalysisError("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", "CASE needs a branch")
    conds = [_t(args[i]) for i in range(0, n - 1, 2)]
    values = [_t(args[i]) for i in range(1, n, 2)]
    if n % 2 == 1:
        values.append(_t(args[-1]))
    for c in conds:
        if not (c.kind is TypeKind.BOOLEAN or c.is_void):
            raise _mismatch("UNEXPECTED_INPUT_TYPE",
                            f"WHEN expressions in CaseWhen should all be boolean type, but the "
                            f"1th when expression's type is {_sql(c)}")
    w = _merge("casewhen", values, ansi)
    out = []
    for i in range(n):
        out.append(BOOLEAN if (i % 2 == 0 and i < n - 1 or (n % 2 == 0 and i % 2 == 0)) else w)
    if n % 2 == 1:
        out[-1] = w
    return Signature(tuple(out), w)


def if_sig(f, args, ansi):
    _arity(f, args, 3)
    c, a, b = (_t(x) for x in args)
    if not (c.kind is TypeKind.BOOLEAN or c.is_void):
        raise _mismatch("UNEXPECTED_INPUT_TYPE",
                        f"The first parameter requires the \"BOOLEAN\" type, however has the "
                        f"type {_sql(c)}.")
    w = _merge("if", [a, b], ansi)
    return Signature((BOOLEAN, w, w), w)


def coalesce_sig(f, args, ansi):
    if not args:
        raise SparkAnalysisError("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", "coalesce needs arguments")
    w = _merge(f, [_t(a) for a in args], ansi)
    return Signature(tuple(w for _ in args), w)


def nullif_sig(f, args, ansi):
    """NULLIF(a, b) = IF(a = b, NULL, a): the comparison casts internally, the result is ``a``
    with its own type, so the arguments keep their types."""
    _arity(f, args, 2)
    a, b = args
    comparison_type("=", a, b, ansi)
    return Signature((_t(a), _t(b)), _t(a))


def greatest_sig(f, args, ansi):
    if len(args) < 2:
        raise SparkAnalysisError("WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
                                 f"The `{f}` requires > 1 parameters")
    types = [_t(a) for a in args]
    w = _merge(f, types, ansi, strings=False)
    if not w.is_orderable:
        raise _mismatch("INVALID_ORDERING_TYPE", f"{_sql(w)} is not orderable")
    return Signature(tuple(w for _ in args), w)


def numeric_unary_sig(f, args, ansi):
    _arity(f, args, 1)
    t = _t(args[0])
    if t.is_string:
        t = DOUBLE
    if t.is_void:
        t = DOUBLE if f in ("abs",) else t
    if not (t.is_numeric or t.is_interval or t.is_void):
        raise _mismatch("UNEXPECTED_INPUT_TYPE",
                        f"The first parameter requires the (\"NUMERIC\" or \"INTERVAL DAY TO "
                        f"SECOND\" or \"INTERVAL YEAR TO MONTH\") type, however has the type "
                        f"{_sql(t)}.")
    return Signature((t,), t)


def double_sig(f, args, ansi):
    _arity(f, args, 2 if f in ("pow", "logarithm") else 1)
    out = []
    for a in args:
        t = _t(a)
        if not (t.is_numeric or t.is_void or t.is_string):
            raise _mismatch("UNEXPECTED_INPUT_TYPE",
                            f"The first parameter requires the \"DOUBLE\" type, however has the "
                            f"type {_sql(t)}.")
        out.append(DOUBLE)
    return Signature(tuple(out), DOUBLE)


def round_sig(f, args, ansi):
    _arity(f, args, 1, 2)
    t = _t(args[0])
    if len(args) == 2:
        s = args[1]
        if not (isinstance(s, Literal) and _t(s).kind in (TypeKind.INT, TypeKind.SMALLINT, TypeKind.TINYINT)):
            raise _mismatch("NON_FOLDABLE_INPUT", "The scale of round must be an INT literal")
        scale = s.value
    else:
        scale = 0
    if t.is_string or t.is_void:
        t = DOUBLE
    if not t.is_numeric:
        raise _mismatch("UNEXPECTED_INPUT_TYPE",
                        f"The first parameter requires the \"NUMERIC\" type, however has the type "
                        f"{_sql(t)}.")
    if t.is_decimal:
        p, s0 = t.precision, t.scale
        integral_least = p - s0 + 1
        if scale < 0:
            res = decimal(min(max(integral_least, -scale + 1), MAX_PRECISION), 0)
        else:
            ns = min(s0, scale)
            res = decimal(min(integral_least + ns, MAX_PRECISION), ns)
    else:
        res = t
    sargs = (t,) if len(args) == 1 else (t, INT)
    return Signature(sargs, res)


def floor_ceil_sig(f, args, ansi):
    if len(args) == 2:
        t = _t(args[0])
        if t.is_string:
            t = DOUBLE
        s = args[1]
        if not (isinstance(s, Literal) and _t(s).kind in (TypeKind.INT, TypeKind.SMALLINT, TypeKind.TINYINT)):
            raise _mismatch("NON_FOLDABLE_INPUT", "The scale of floor/ceil must be an INT literal")
        if t.is_decimal:
            p, s0 = t.precision, t.scale
            integral_least = p - s0 + 1
            if s.value < 0:
                res = decimal(min(max(integral_least, -s.value + 1), MAX_PRECISION), 0)
            else:
                ns = min(s0, s.value)
                res = decimal(min(integral_least + ns, MAX_PRECISION), ns)
            return Signature((t, INT), res)
        if t.is_integral:
            td = decimal_for(t)
            integral_least = td.precision + 1
            if s.value < 0:
                res = decimal(min(max(integral_least, -s.value + 1), MAX_PRECISION), 0)
            else:
                res = decimal(min(integral_least, MAX_PRECISION), 0)
            return Signature((td, INT), res)
        if t.is_floating:
            # RoundCeil/RoundFloor cast floats to decimal(30,15) then round
            td = decimal(30, 15)
            integral_least = 16
            if s.value < 0:
                res = decimal(max(integral_least, -s.value + 1), 0)
            else:
                ns = min(15, s.value)
                res = decimal(integral_least + ns, ns)
            return Signature((td, INT), res)
        raise _mismatch("UNEXPECTED_INPUT_TYPE", f"{f} does not accept {_sql(t)}")
    _arity(f, args, 1)
    t = _t(args[0])
    if t.is_string or t.is_void:
        t = DOUBLE
    if t.is_decimal:
        p, s = t.precision, t.scale
        return Signature((t,), decimal(min(p - s + 1, MAX_PRECISION), 0) if s > 0 else t)
    if t.is_numeric:
        tt = t if t.is_floating else BIGINT
        if t.kind is TypeKind.FLOAT:
            tt = DOUBLE
        return Signature((tt,), BIGINT)
    raise _mismatch("UNEXPECTED_INPUT_TYPE",
                    f"The first parameter requires the (\"DECIMAL\" or \"DOUBLE\" or \"BIGINT\") "
                    f"type, however has the type {_sql(t)}.")


def sign_sig(f, args, ansi):
    _arity(f, args, 1)
    t = _t(args[0])
    if t.is_interval:
        return Signature((t,), DOUBLE)
    if not (t.is_numeric or t.is_string or t.is_void):
        raise _mismatch("UNEXPECTED_INPUT_TYPE", f"sign does not accept {_sql(t)}")
    return Signature((DOUBLE,), DOUBLE)


def _to_string(t: SqlType, ansi: bool) -> SqlType:
    if t.is_string or t.is_void:
        return STRING
    if t.kind is TypeKind.BINARY:
        return t
    if implicit_cast(t, STRING, ansi) is None or t.kind is TypeKind.ARRAY:
        raise _mismatch("UNEXPECTED_INPUT_TYPE",
                        f"The parameter requires the \"STRING\" type, however has the type "
                        f"{_sql(t)}.")
    return STRING


def concat_sig(f, args, ansi):
    types = [_t(a) for a in args]
    if types and all(t.kind is TypeKind.ARRAY for t in types):
        w = _merge("concat", types, ansi)
        return Signature(tuple(w for _ in types), w)
    if types and all(t.kind is TypeKind.BINARY for t in types):
        return Signature(tuple(types), types[0])
    out = tuple(STRING if t.kind is not TypeKind.BINARY else STRING for t in types)
    for t in types:
        _to_string(t, ansi)
    return Signature(out, STRING)


def string_sig(f, args, ansi):
    _arity(f, args, 1)
    t = _t(args[0])
    if f == "length" and t.kind is TypeKind.BINARY:
        return Signature((t,), INT)
    s = _to_string(t, ansi)
    if s.kind is TypeKind.BINARY:
        s = STRING
    return Signature((s,), INT if f == "length" else STRING)


def string_search_sig(f, args, ansi):
    """Contains / StartsWith / EndsWith (a BOOLEAN) and StringReplace (src, search[, replace]:
    a string of src's type), ImplicitCastInputTypes: an atomic argument cast to STRING, of the
    strings' collation (``sql_ext``'s CollationTypeCoercion gives them one).  UTF8_BINARY and
    UTF8_LCASE only (the _RTRIM ones and ICU's are refused); BINARY arguments (Spark's binary
    forms) are refused."""
    if f == "replace":
        _arity(f, args, 2, 3)
    else:
        _arity(f, args, 2)
    types = [_t(a) for a in args]
    string = next((t for t in types if t.is_string), STRING)
    out = []
    for i, t in enumerate(types):
        if t.kind is TypeKind.BINARY:
            raise NotImplementedError(f"`{f}` of BINARY")
        cast = t if t.is_string else implicit_cast(t, string, ansi) if t.is_atomic or t.is_void else None
        if cast is None:
            raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The {_ORDINALS[i]} parameter requires the \"STRING\" type, "
                                                     f"however has the type {_sql(t)}.")
        out.append(cast)
    _searched_collation(f, out)
    return Signature(tuple(out), string if f == "replace" else BOOLEAN)


_ORDINALS = ("first", "second", "third")


def _string_params(f, args, ansi, params: str) -> list:
    """ImplicitCastInputTypes over ``params`` ('s': a STRING, of the strings' collation; 'i': an
    INT): an atomic argument implicitly cast, else UNEXPECTED_INPUT_TYPE; a BINARY one (Spark's
    binary forms) refused."""
    types = [_t(a) for a in args]
    string = next((t for t in types if t.is_string), STRING)
    out = []
    for i, (t, p) in enumerate(zip(types, params)):
        if t.kind is TypeKind.BINARY:
            raise NotImplementedError(f"`{f}` of BINARY")
        want = string if p == "s" else INT
        cast = t if t == want else implicit_cast(t, want, ansi) if t.is_atomic or t.is_void else None
        if cast is None:
            raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The {_ORDINALS[i]} parameter requires the "
                                                     f"{_sql(STRING if p == 's' else INT)} "
                                                     f"type, however has the type {_sql(t)}.")
        out.append(cast)
    return out


def _searched_collation(f, types) -> None:
    """Refuse searching strings of another collation than UTF8_BINARY and UTF8_LCASE."""
    for t in types:
        if t.is_string and (t.collation or "UTF8_BINARY").upper() not in ("UTF8_BINARY", "UTF8_LCASE"):
            raise NotImplementedError(f"`{f}` over STRING COLLATE {t.collation} (only UTF8_BINARY and UTF8_LCASE)")


def position_sig(f, args, ansi):
    """StringInstr(str, substr) / StringLocate(substr, str, pos): STRINGs and an INT position;
    INT.  UTF8_BINARY and UTF8_LCASE only."""
    _arity(f, args, 2) if f == "instr" else _arity(f, args, 3)
    out = _string_params(f, args, ansi, "ss" if f == "instr" else "ssi")
    _searched_collation(f, out)
    return Signature(tuple(out), INT)


def pad_sig(f, args, ansi):
    """StringLPad / StringRPad(str, len, pad): STRINGs and an INT length; the string's type."""
    _arity(f, args, 2, 3)
    out = _string_params(f, args, ansi, "sis")
    return Signature(tuple(out), out[0])


def left_right_sig(f, args, ansi):
    """Left / Right(str, len) (Substring(str, 1, len); '' for len <= 0 and Substring(str, -len,
    len)): a STRING and an INT; the string's type."""
    _arity(f, args, 2)
    out = _string_params(f, args, ansi, "si")
    return Signature(tuple(out), out[0])


def nanvl_sig(f, args, ansi):
    """NaNvl(x, y): each a DOUBLE or FLOAT, anything else implicitly cast to DOUBLE (a NULL
    ``y`` to ``x``'s type); a FLOAT next to a DOUBLE is cast to DOUBLE; ``x``'s type."""
    _arity(f, args, 2)
    l, r = _t(args[0]), _t(args[1])
    out = []
    for i, t in enumerate((l, r)):
        if t in (DOUBLE, FLOAT):
            out.append(t)
        elif t.is_void and i == 1 and l == FLOAT:
            out.append(FLOAT)
        else:
            cast = implicit_cast(t, DOUBLE, ansi)
            if cast is None:
                raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The {_ORDINALS[i]} parameter requires the (\"DOUBLE\" or "
                                                         f"\"FLOAT\") type, however has the type {_sql(t)}.")
            out.append(cast)
    if out[0] != out[1]:
        out = [DOUBLE, DOUBLE]
    return Signature(tuple(out), out[0])


def substring_sig(f, args, ansi):
    _arity(f, args, 2, 3)
    t = _t(args[0])
    s = _to_string(t, ansi) if t.kind is not TypeKind.BINARY else t
    rest = []
    for a in args[1:]:
        at = _t(a)
        c = implicit_cast(at, INT, ansi) if not at.is_integral else INT
        if c is None:
            raise _mismatch("UNEXPECTED_INPUT_TYPE",
                            f"The second parameter requires the \"INT\" type, however has the "
                            f"type {_sql(at)}.")
        rest.append(INT)
    return Signature((s, *rest), s)


def date_sig(f, args, ansi):
    if f == "datediff":
        _arity(f, args, 2)
        out = []
        for a in args:
            t = _t(a)
            if t.kind is TypeKind.DATE or t.is_string or t.is_timestamp or t.is_void:
                out.append(DATE)
            else:
                raise _mismatch("UNEXPECTED_INPUT_TYPE",
                                f"The first parameter requires the \"DATE\" type, however has "
                                f"the type {_sql(t)}.")
        return Signature(tuple(out), INT)
    _arity(f, args, 2)
    return _date_add_sig(f, args[0], args[1], ansi)


# ---- LIKE and arrays (over match state: aggregates' arrays, strings of variables) -----------

def like_sig(f, args, ansi):
    """``like`` / ``ilike`` (str, pattern[, escape]): Like's ImplicitCastInputTypes (an atomic
    argument is cast to STRING, BINARY too); ``escape`` (ESCAPE) is a literal string of one
    (UTF-16) character, else Spark's parser error INVALID_ESC.  Spark's UTF8_LCASE matching (a
    case-insensitive regex) is not implemented: a string of another collation than UTF8_BINARY
    is refused (``NotImplementedError``)."""
    _arity(f, args, 2, 3)
    out = []
    for i, a in enumerate(args[:2]):
        t = _t(a)
        if t.is_string and t.collation and t.collation.upper() != "UTF8_BINARY":
            raise NotImplementedError(f"matching STRING COLLATE {t.collation} (only UTF8_BINARY)")
        cast = STRING if t.is_string else implicit_cast(t, STRING, ansi)
        if cast is None or t.kind is TypeKind.ARRAY:
            raise _mismatch("UNEXPECTED_INPUT_TYPE",
                            f"The {('first', 'second')[i]} parameter requires the \"STRING\" type, however "
                            f"has the type {_sql(t)}.")
        out.append(STRING)
    if len(args) == 3:
        esc = args[2]
        text = esc.value if isinstance(esc, Literal) and esc.type.is_string else None
        if not isinstance(text, str) or len(text.encode("utf-16-le")) != 2:
            raise SparkAnalysisError("INVALID_ESC", f"Found an invalid escape string: '{text}'. The escape string "
                                                    "must contain only one character.")
        out.append(STRING)
    return Signature(tuple(out), BOOLEAN)


def _array_arg(f, t: SqlType, which: str, wants: str) -> SqlType:
    if t.kind is not TypeKind.ARRAY:
        raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The {which} parameter requires the {wants} type, however "
                                                 f"has the type {_sql(t)}.")
    return t


def array_join_sig(f, args, ansi):
    """ArrayJoin(array, delimiter[, nullReplacement]): the array's atomic elements cast to STRING
    (as Spark casts them, in the session zone), the delimiter and replacement STRING (or NULL)."""
    _arity(f, args, 2, 3)
    t = _t(args[0])
    if t.is_void:
        t = SqlType(TypeKind.ARRAY, element=STRING)
    e = _array_arg(f, t, "first", '"ARRAY<STRING>"').element
    if not (e.is_string or e.is_void or e.is_atomic and implicit_cast(e, STRING, ansi) is not None):
        raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The first parameter requires the \"ARRAY<STRING>\" type, however "
                                                 f"has the type {_sql(t)}.")
    out = [SqlType(TypeKind.ARRAY, element=e if e.is_string else STRING)]
    for i, a in enumerate(args[1:]):
        s = _t(a)
        if not (s.is_string or s.is_void):
            raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The {('second', 'third')[i]} parameter requires the "
                                                     f"\"STRING\" type, however has the type {_sql(s)}.")
        out.append(s if s.is_string else STRING)
    return Signature(tuple(out), STRING)


def element_at_sig(f, args, ansi):
    """ElementAt(array, index): an integral index other than BIGINT, cast to INT; the element's
    type.  ElementAt(map, key): ``_map_lookup_sig``."""
    _arity(f, args, 2)
    t = _t(args[0])
    if t.kind is TypeKind.MAP:
        return _map_lookup_sig(f, t, _t(args[1]))
    _array_arg(f, t, "first", '("ARRAY" or "MAP")')
    i = _t(args[1])
    if not i.is_integral or i.kind is TypeKind.BIGINT:
        raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The second parameter requires the \"INT\" type, however "
                                                 f"has the type {_sql(i)}.")
    return Signature((t, INT), t.element)


def subscript_sig(f, args, ansi):
    """``a[i]`` (GetArrayItem): an integral index of any width, kept (the element is read at its
    ``intValue()``); the element's type.  ``m[k]`` (GetMapValue): the key implicitly cast to the
    map's key type (``m['1']``, ``m[1.5]`` over INT keys); the value's type.  Of a STRUCT (field
    access) or keys of a collated string: refused."""
    _arity(f, args, 2)
    c, i = _t(args[0]), _t(args[1])
    if c.kind is TypeKind.MAP:
        key = implicit_cast(i, c.key, ansi)
        if key is None or (i.is_string and c.key.is_string and i != c.key):
            raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The second parameter requires the {_sql(c.key)} type, however "
                                                     f"has the type {_sql(i)}.")
        _binary_strings(f, c.key)
        return Signature((c, c.key), c.element)
    if c.kind is not TypeKind.ARRAY:
        raise NotImplementedError(f"a subscript of {_sql(c)} (only of an ARRAY or a MAP)")
    if not (i.is_integral or i.is_void):
        raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The second parameter requires the \"INTEGRAL\" type, however "
                                                 f"has the type {_sql(i)}.")
    return Signature((c, i), c.element)


def get_sig(f, args, ansi):
    """Get(array, index): an ARRAY, the index implicitly cast to INT (``get(a, '1')``, ``get(a,
    1.9)``); the element's type."""
    _arity(f, args, 2)
    c, i = _t(args[0]), _t(args[1])
    _array_arg(f, c, "first", '"ARRAY"')
    index = implicit_cast(i, INT, ansi)
    if index is None:
        raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The second parameter requires the \"INT\" type, however "
                                                 f"has the type {_sql(i)}.")
    return Signature((c, INT), c.element)


def array_extreme_sig(f, args, ansi):
    """ArrayMax / ArrayMin(array): an array of an orderable element type; the element's type
    (NULL of VOID: VOID)."""
    _arity(f, args, 1)
    if _t(args[0]).is_void:
        return Signature((VOID,), VOID)
    t = _array_arg(f, _t(args[0]), "first", '"ARRAY"')
    if not t.element.is_orderable:
        raise _mismatch("INVALID_ORDERING_TYPE", f"The `{f}` does not support ordering on type {_sql(t.element)}.")
    return Signature((t,), t.element)


def _map_lookup_sig(f, m: SqlType, key: SqlType) -> Signature:
    """ElementAt(map, key): the map's keys and the key cast to their tightest common type
    (TypeCoercion's findTightestCommonType, in both modes: ``1.0`` against INT keys is
    MAP_FUNCTION_DIFF_TYPES), which must be orderable; the value's type."""
    w = _compared(f, _tightest(m.key, key, False), "MAP", "key", m, key)
    return Signature((SqlType(TypeKind.MAP, key=w, element=m.element), w), m.element)


def _compared(f: str, w: SqlType | None, container: str, part: str, c: SqlType, value: SqlType) -> SqlType:
    """``w``, the type an ARRAY's elements or a MAP's keys (``part`` of ``c``) and ``value`` are
    compared as: <container>_FUNCTION_DIFF_TYPES when there is none, INVALID_ORDERING_TYPE when
    it is not orderable."""
    if w is None:
        raise _mismatch(f"{container}_FUNCTION_DIFF_TYPES",
                        f"Input to `{f}` should have been \"{container}\" followed by a value with same {part} type, "
                        f"but it's [{_sql(c)}, {_sql(value)}].")
    if not w.is_orderable:
        raise _mismatch("INVALID_ORDERING_TYPE", f"The `{f}` does not support ordering on type {_sql(w)}.")
    _binary_strings(f, w)
    return w


def _binary_strings(f: str, t: SqlType) -> None:
    """Refuse (``NotImplementedError``) comparing strings of another collation than UTF8_BINARY:
    which collation Spark's CollationTypeCoercion gives an array or map function's operands
    is not replicated."""
    for inner in t.walk():
        if inner.is_string and inner.collation and inner.collation.upper() != "UTF8_BINARY":
            raise NotImplementedError(f"comparing STRING COLLATE {inner.collation} (only UTF8_BINARY)")


def _null_typed(f: str) -> SparkAnalysisError:
    return _mismatch("NULL_TYPE", f"Null typed values cannot be used as arguments of `{f}`.")


def array_search_sig(f, args, ansi):
    """ArrayContains / ArrayPosition(array, value): the elements and the value cast to their
    wider type without string promotion (ArrayContains: TypeCoercion's
    findWiderTypeWithoutStringPromotionForTwo, in both modes: INT against ``1.5`` is DECIMAL,
    against ``'1'`` ARRAY_FUNCTION_DIFF_TYPES) or tightest common type (ArrayPosition:
    DECIMAL(2,1) against DECIMAL(22,2) is ARRAY_FUNCTION_DIFF_TYPES), which must be orderable;
    BOOLEAN / BIGINT.  A NULL literal array is NULL_TYPE, and so is a
    NULL literal value of array_contains (array_position casts it to the element type)."""
    _arity(f, args, 2)
    a, v = _t(args[0]), _t(args[1])
    if a.is_void or v.is_void and f == "array_contains":
        raise _null_typed(f)
    _array_arg(f, a, "first", '"ARRAY"')
    if f == "array_contains":
        w = _wider_two(a.element, v, False, strings=False)
    else:
        w = _tightest(a.element, v, False)
    w = _compared(f, w, "ARRAY", "element", a, v)
    return Signature((SqlType(TypeKind.ARRAY, element=w), w), BOOLEAN if f == "array_contains" else BIGINT)


def size_sig(f, args, ansi):
    """Size / cardinality(array or map): INT (of a NULL literal too)."""
    _arity(f, args, 1)
    t = _t(args[0])
    if not (t.is_void or t.kind in (TypeKind.ARRAY, TypeKind.MAP)):
        raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The first parameter requires the (\"ARRAY\" or \"MAP\") type, "
                                                 f"however has the type {_sql(t)}.")
    return Signature((t,), INT)


def array_size_sig(f, args, ansi):
    """ArraySize(array): INT (of a NULL literal too); never Size's legacy -1."""
    _arity(f, args, 1)
    t = _t(args[0])
    if not (t.is_void or t.kind is TypeKind.ARRAY):
        raise _mismatch("UNEXPECTED_INPUT_TYPE", f"The first parameter requires the \"ARRAY\" type, "
                                                 f"however has the type {_sql(t)}.")
    return Signature((t,), INT)


def array_sig(f, args, ansi):
    """CreateArray(v, ...): ARRAY of the values' wider common type (findWiderCommonType of the
    mode: with string promotion, ANSI's or not), VOID of none."""
    types = [_t(a) for a in args]
    w = _merge(f, types, ansi) if types else VOID
    return Signature(tuple(w for _ in types), SqlType(TypeKind.ARRAY, element=w))


def like_quantified_sig(f, args, ansi):
    """``[NOT] LIKE / ILIKE ANY / ALL`` (str, pattern, ...): MultiLikeBase's ImplicitCastInputTypes
    (an atomic ``str`` cast to STRING); the patterns are string literals (``calls``).  Matching a
    string of another collation than UTF8_BINARY is refused as LIKE's."""
    if len(args) < 2:
        raise SparkAnalysisError("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", f"`{f}` needs a pattern")
    like_sig("like", args[:2], ansi)
    for p in args[2:]:
        like_sig("like", [args[0], p], ansi)
    return Signature(tuple(STRING for _ in args), BOOLEAN)
