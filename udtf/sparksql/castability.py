"""Which casts Spark's analysis accepts: ``Cast.canCast`` (a CAST without ANSI), ``canAnsiCast``
(a CAST under spark.sql.ansi.enabled) and ``canTryCast`` (every TRY_CAST), by type pair.

Types written in SQL are nullable at every depth, so of Spark's nullability rules only one
decides anything: a map's keys cannot be cast where a key could become NULL (``forceNullable``)
without ANSI and under TRY_CAST.  What the engine then evaluates is ``scalar.cast``'s business.
"""
from __future__ import annotations

import enum

from .types import TypeKind, SqlType

__all__ = ["CastMode", "can_cast", "cast_mode"]


class CastMode(enum.Enum):
    LEGACY = "legacy"  # CAST, spark.sql.ansi.enabled=false
    ANSI = "ansi"  # CAST, spark.sql.ansi.enabled=true
    TRY = "try"  # TRY_CAST


def cast_mode(ansi: bool, try_: bool) -> CastMode:
    return CastMode.TRY if try_ else CastMode.ANSI if ansi else CastMode.LEGACY


K = TypeKind
_INTEGRAL = frozenset((K.TINYINT, K.SMALLINT, K.INT, K.BIGINT))
_NUMERIC = _INTEGRAL | {K.FLOAT, K.DOUBLE, K.DECIMAL}
_INTERVALS = frozenset((K.DAY_TIME_INTERVAL, K.YEAR_MONTH_INTERVAL))

# (from, to) kinds every mode accepts: canAnsiCast's atomic pairs, which canCast shares
_BOTH = frozenset(
    {(K.STRING, K.BINARY), (K.STRING, K.BOOLEAN), (K.STRING, K.DATE), (K.STRING, K.TIMESTAMP),
     (K.STRING, K.TIMESTAMP_NTZ), (K.DATE, K.TIMESTAMP), (K.DATE, K.TIMESTAMP_NTZ), (K.TIMESTAMP, K.DATE),
     (K.TIMESTAMP, K.TIMESTAMP_NTZ), (K.TIMESTAMP_NTZ, K.TIMESTAMP), (K.TIMESTAMP_NTZ, K.DATE),
    }
    | {(K.STRING, i) for i in _INTERVALS} | {(i, i) for i in _INTERVALS}
    | {(n, K.BOOLEAN) for n in _NUMERIC} | {(n, K.TIMESTAMP) for n in _NUMERIC}
    | {(a, b) for a in _NUMERIC | {K.STRING, K.BOOLEAN, K.TIMESTAMP} for b in _NUMERIC}
    | {(i, n) for i in _INTERVALS for n in _INTEGRAL | {K.DECIMAL}}
    | {(n, i) for n in _INTEGRAL | {K.DECIMAL} for i in _INTERVALS})
# what only canCast (no ANSI) adds
_LEGACY_ONLY = frozenset(
    {(K.DATE, K.BOOLEAN), (K.TIMESTAMP, K.BOOLEAN), (K.BOOLEAN, K.TIMESTAMP)}
    | {(i, K.BINARY) for i in _INTEGRAL} | {(K.DATE, n) for n in _NUMERIC})

_VARIANT_LEAVES = _NUMERIC | {K.BOOLEAN, K.STRING, K.BINARY, K.DATE, K.TIMESTAMP, K.TIMESTAMP_NTZ, K.VARIANT}


def can_cast(src: SqlType, dst: SqlType, mode: CastMode) -> bool:
    """Does Spark's analysis accept ``CAST(<src> AS <dst>)`` in ``mode``?"""
    if src == dst or src.kind is K.VOID or dst.kind is K.STRING:
        return True
    s, d = src.kind, dst.kind
    if K.OTHER in (s, d):  # CALENDAR INTERVAL, TIME, user types: from a string at most
        return s is K.STRING and dst.text.lower() == "interval"
    if s is K.VARIANT:
        return _variant_leaf(dst, True)
    if d is K.VARIANT:
        return _variant_leaf(src, False)
    # canTryCast is canAnsiCast but for nested types, which it casts as canCast does
    inner = CastMode.LEGACY if mode is CastMode.TRY else mode
    if s is K.ARRAY and d is K.ARRAY:
        return can_cast(src.element, dst.element, inner)
    if s is K.MAP and d is K.MAP:
        return can_cast(src.key, dst.key, inner) and can_cast(src.element, dst.element, inner) and \
            (inner is CastMode.ANSI or not force_nullable(src.key, dst.key))
    if s is K.STRUCT and d is K.STRUCT:
        return len(src.fields) == len(dst.fields) and \
            all(can_cast(a, b, inner) for (_, a), (_, b) in zip(src.fields, dst.fields))
    if (s, d) in _BOTH:
        return True
    if mode is CastMode.LEGACY:
        if (s, d) in _LEGACY_ONLY:
            return True
        # an integral number to a single-field interval (INTERVAL DAY, INTERVAL MONTH, ...)
        return s in _INTEGRAL and d in _INTERVALS and dst.start == dst.end
    return False


def _variant_leaf(t: SqlType, structs_and_maps: bool) -> bool:
    """``VariantGet.checkDataType``: what a VARIANT casts to (and, without structs and maps,
    from)."""
    if t.kind in _VARIANT_LEAVES:
        return True
    if t.kind is K.ARRAY:
        return _variant_leaf(t.element, structs_and_maps)
    if t.kind is K.MAP:
        return structs_and_maps and t.key.is_string and _variant_leaf(t.element, structs_and_maps)
    if t.kind is K.STRUCT:
        return structs_and_maps and all(_variant_leaf(f, structs_and_maps) for _, f in t.fields)
    return False


_DECIMAL_OF = {K.TINYINT: (3, 0), K.SMALLINT: (5, 0), K.INT: (10, 0), K.BIGINT: (20, 0), K.BOOLEAN: (1, 0)}


def force_nullable(src: SqlType, dst: SqlType) -> bool:
    """``Cast.forceNullable``: may casting a non-NULL ``src`` value to ``dst`` give NULL?"""
    s, d = src.kind, dst.kind
    if s is K.VOID or src == dst:
        return False
    if s is K.VARIANT:
        return True
    if s is K.STRING:
        return d not in (K.BINARY, K.STRING)
    if d is K.STRING:
        return False
    if s is K.TIMESTAMP and d in (K.TINYINT, K.SMALLINT, K.INT):
        return True
    if src.is_floating and d is K.TIMESTAMP:
        return True
    if (s, d) in ((K.TIMESTAMP, K.DATE), (K.DATE, K.TIMESTAMP)):
        return False
    if K.DATE in (s, d):
        return True
    if d is K.OTHER and dst.text.lower() == "interval":
        return True
    if d is K.DECIMAL and not _null_safe_to_decimal(src, dst):
        return True
    return src.is_fractional and dst.is_integral


def _null_safe_to_decimal(src: SqlType, dst: SqlType) -> bool:
    """``Cast.canNullSafeCastToDecimal``: does every ``src`` value fit ``dst``?"""
    if src.kind in _DECIMAL_OF:
        p, s = _DECIMAL_OF[src.kind]
        return dst.precision - dst.scale >= p - s and dst.scale >= s
    if src.is_decimal:
        return dst.precision - dst.scale > src.precision - src.scale or \
            (dst.precision - dst.scale >= src.precision - src.scale and dst.scale >= src.scale)
    return False
