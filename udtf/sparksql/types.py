"""Spark SQL data types as immutable values, and their Python representation in the engine.

``SqlType.parse(s)`` reads Spark's ``DataType.simpleString()`` forms and ``str(t)`` gives them
back (``parse(str(t)) == t``).  Python representation of a value of each type (``None`` is
NULL for every type):

=====================  =====================================================================
type                   Python value
=====================  =====================================================================
boolean                ``bool``
tinyint..bigint        ``int`` within the type's two's-complement range
float                  ``float`` holding an exact float32 value (``round_float32``)
double                 ``float``
decimal(p,s)           ``decimal.Decimal`` with exponent ``-s`` and at most ``p`` digits
string                 ``str``
binary                 ``bytes``
date                   ``int`` days since 1970-01-01
timestamp              ``int`` microseconds since 1970-01-01T00:00Z (a UTC instant)
timestamp_ntz          ``int`` microseconds since 1970-01-01T00:00 (wall clock, no zone)
interval day..second   ``int`` microseconds
interval year..month   ``int`` months
void                   always ``None``
array<T>               ``tuple`` of T's values (hashable)
=====================  =====================================================================

Arrow: Spark sends timestamp as ``timestamp[us, tz=UTC]``, timestamp_ntz as ``timestamp[us]``,
date as ``date32``, decimal as ``decimal128(p,s)``, day-time intervals as ``duration[us]``;
``from_arrow``/``to_arrow`` convert columns to/from the representation above.
"""
from __future__ import annotations

import enum
import re
import struct
from dataclasses import dataclass
from decimal import Context, Decimal

__all__ = ["Kind", "SqlType", "round_float32", "from_arrow", "to_arrow", "arrow_type",
           "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "STRING",
           "BINARY", "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "VOID", "decimal", "array",
           "MAX_PRECISION", "INTEGRAL_RANGE"]

MAX_PRECISION = 38


class Kind(enum.Enum):
    BOOLEAN = "boolean"
    TINYINT = "tinyint"
    SMALLINT = "smallint"
    INT = "int"
    BIGINT = "bigint"
    FLOAT = "float"
    DOUBLE = "double"
    DECIMAL = "decimal"
    STRING = "string"
    BINARY = "binary"
    DATE = "date"
    TIMESTAMP = "timestamp"
    TIMESTAMP_NTZ = "timestamp_ntz"
    DAY_TIME_INTERVAL = "interval day to second"
    YEAR_MONTH_INTERVAL = "interval year to month"
    VOID = "void"
    ARRAY = "array"


_INTEGRAL = (Kind.TINYINT, Kind.SMALLINT, Kind.INT, Kind.BIGINT)
INTEGRAL_RANGE = {
    Kind.TINYINT: (-(1 << 7), (1 << 7) - 1),
    Kind.SMALLINT: (-(1 << 15), (1 << 15) - 1),
    Kind.INT: (-(1 << 31), (1 << 31) - 1),
    Kind.BIGINT: (-(1 << 63), (1 << 63) - 1),
}
DAY_TIME_FIELDS = ("day", "hour", "minute", "second")
YEAR_MONTH_FIELDS = ("year", "month")


@dataclass(frozen=True, slots=True)
class SqlType:
    """One Spark data type.  ``precision``/``scale`` only for decimal; ``start``/``end`` are
    field indexes (into DAY_TIME_FIELDS / YEAR_MONTH_FIELDS) for intervals; ``element`` for
    arrays."""
    kind: Kind
    precision: int = 0
    scale: int = 0
    start: int = 0
    end: int = 0
    element: SqlType | None = None

    # ---- predicates -------------------------------------------------------------------
    @property
    def is_integral(self) -> bool:
        return self.kind in _INTEGRAL

    @property
    def is_decimal(self) -> bool:
        return self.kind is Kind.DECIMAL

    @property
    def is_fractional(self) -> bool:  # Spark's FractionalType: float, double, decimal
        return self.kind in (Kind.FLOAT, Kind.DOUBLE, Kind.DECIMAL)

    @property
    def is_floating(self) -> bool:
        return self.kind in (Kind.FLOAT, Kind.DOUBLE)

    @property
    def is_numeric(self) -> bool:
        return self.kind in _INTEGRAL or self.is_fractional

    @property
    def is_string(self) -> bool:
        return self.kind is Kind.STRING

    @property
    def is_datetime(self) -> bool:  # Spark's DatetimeType
        return self.kind in (Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ)

    @property
    def is_timestamp(self) -> bool:  # Spark's AnyTimestampType
        return self.kind in (Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ)

    @property
    def is_interval(self) -> bool:  # Spark's AnsiIntervalType
        return self.kind in (Kind.DAY_TIME_INTERVAL, Kind.YEAR_MONTH_INTERVAL)

    @property
    def is_void(self) -> bool:
        return self.kind is Kind.VOID

    @property
    def is_atomic(self) -> bool:
        return self.kind not in (Kind.ARRAY, Kind.VOID)

    @property
    def is_orderable(self) -> bool:
        return self.kind is not Kind.ARRAY or (self.element is not None and self.element.is_orderable)

    @property
    def int_range(self) -> tuple[int, int]:
        return INTEGRAL_RANGE[self.kind]

    # ---- text form ----------------------------------------------------------------------
    def __str__(self) -> str:
        k = self.kind
        if k is Kind.DECIMAL:
            return f"decimal({self.precision},{self.scale})"
        if k is Kind.ARRAY:
            return f"array<{self.element}>"
        if k is Kind.DAY_TIME_INTERVAL:
            return _interval_name(DAY_TIME_FIELDS, self.start, self.end)
        if k is Kind.YEAR_MONTH_INTERVAL:
            return _interval_name(YEAR_MONTH_FIELDS, self.start, self.end)
        return k.value

    def __repr__(self) -> str:
        return f"SqlType({str(self)!r})"

    @staticmethod
    def parse(text: str) -> SqlType:
        """Parse a ``simpleString()`` form (case-insensitive; ``integer``/``long``/... aliases
        and ``decimal`` = decimal(10,0) accepted)."""
        s = " ".join(text.strip().lower().split())
        if s in _BY_NAME:
            return _BY_NAME[s]
        m = re.fullmatch(r"(?:decimal|dec|numeric)\s*\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\)", s)
        if m:
            return decimal(int(m.group(1)), int(m.group(2) or 0))
        m = re.fullmatch(r"array\s*<(.*)>", s)
        if m:
            return array(SqlType.parse(m.group(1)))
        m = re.fullmatch(r"interval (\w+)(?: to (\w+))?", s)
        if m:
            a, b = m.group(1), m.group(2) or m.group(1)
            for fields, kind in ((DAY_TIME_FIELDS, Kind.DAY_TIME_INTERVAL),
                                 (YEAR_MONTH_FIELDS, Kind.YEAR_MONTH_INTERVAL)):
                if a in fields and b in fields and fields.index(a) <= fields.index(b):
                    return SqlType(kind, start=fields.index(a), end=fields.index(b))
        raise ValueError(f"unknown Spark type: {text!r}")


def _interval_name(fields, start, end) -> str:
    if start == end:
        return f"interval {fields[start]}"
    return f"interval {fields[start]} to {fields[end]}"


BOOLEAN = SqlType(Kind.BOOLEAN)
TINYINT = SqlType(Kind.TINYINT)
SMALLINT = SqlType(Kind.SMALLINT)
INT = SqlType(Kind.INT)
BIGINT = SqlType(Kind.BIGINT)
FLOAT = SqlType(Kind.FLOAT)
DOUBLE = SqlType(Kind.DOUBLE)
STRING = SqlType(Kind.STRING)
BINARY = SqlType(Kind.BINARY)
DATE = SqlType(Kind.DATE)
TIMESTAMP = SqlType(Kind.TIMESTAMP)
TIMESTAMP_NTZ = SqlType(Kind.TIMESTAMP_NTZ)
VOID = SqlType(Kind.VOID)
DAY_TIME = SqlType(Kind.DAY_TIME_INTERVAL, start=0, end=3)
YEAR_MONTH = SqlType(Kind.YEAR_MONTH_INTERVAL, start=0, end=1)


def decimal(precision: int, scale: int = 0) -> SqlType:
    if not (1 <= precision <= MAX_PRECISION and 0 <= scale <= precision):
        raise ValueError(f"invalid decimal({precision},{scale})")
    return SqlType(Kind.DECIMAL, precision=precision, scale=scale)


def array(element: SqlType) -> SqlType:
    return SqlType(Kind.ARRAY, element=element)


_BY_NAME = {
    "boolean": BOOLEAN, "tinyint": TINYINT, "byte": TINYINT, "smallint": SMALLINT,
    "short": SMALLINT, "int": INT, "integer": INT, "bigint": BIGINT, "long": BIGINT,
    "float": FLOAT, "real": FLOAT, "double": DOUBLE, "string": STRING, "binary": BINARY,
    "date": DATE, "timestamp": TIMESTAMP, "timestamp_ltz": TIMESTAMP,
    "timestamp_ntz": TIMESTAMP_NTZ, "void": VOID, "null": VOID,
    "decimal": SqlType(Kind.DECIMAL, precision=10, scale=0),
}

_F32 = struct.Struct("<f")


def round_float32(x: float) -> float:
    """``x`` rounded to the nearest float32 (as Java's ``(float) x``); overflow gives ±inf."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:  # |x| beyond float32's range: Java rounds to infinity
        if x != x:
            return x
        # values just above FLT_MAX that round down to it
        if abs(x) < 3.4028235677973366e38:
            return 3.4028234663852886e38 if x > 0 else -3.4028234663852886e38
        return float("inf") if x > 0 else float("-inf")


# ---- Arrow conversion -------------------------------------------------------------------

def arrow_type(t: SqlType):
    """The Arrow type Spark uses for ``t`` in Arrow batches."""
    import pyarrow as pa
    k = t.kind
    simple = {
        Kind.BOOLEAN: pa.bool_(), Kind.TINYINT: pa.int8(), Kind.SMALLINT: pa.int16(),
        Kind.INT: pa.int32(), Kind.BIGINT: pa.int64(), Kind.FLOAT: pa.float32(),
        Kind.DOUBLE: pa.float64(), Kind.STRING: pa.string(), Kind.BINARY: pa.binary(),
        Kind.DATE: pa.date32(), Kind.TIMESTAMP: pa.timestamp("us", tz="UTC"),
        Kind.TIMESTAMP_NTZ: pa.timestamp("us"), Kind.DAY_TIME_INTERVAL: pa.duration("us"),
        Kind.YEAR_MONTH_INTERVAL: pa.int32(), Kind.VOID: pa.null(),
    }
    if k in simple:
        return simple[k]
    if k is Kind.DECIMAL:
        return pa.decimal128(t.precision, t.scale)
    return pa.list_(arrow_type(t.element))


def from_arrow(t: SqlType, column) -> list:
    """Python values (the representation above) of a pyarrow Array/ChunkedArray of type ``t``."""
    import pyarrow as pa
    import pyarrow.compute as pc
    k = t.kind
    if k in (Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ, Kind.DAY_TIME_INTERVAL):
        return pc.cast(column, pa.int64()).to_pylist()
    if k is Kind.DATE:
        return pc.cast(column, pa.int32()).to_pylist()
    if k is Kind.YEAR_MONTH_INTERVAL:
        if pa.types.is_interval(column.type):  # month_day_nano
            return [None if v is None else v.months for v in column.to_pylist()]
        return pc.cast(column, pa.int32()).to_pylist()
    if k is Kind.DECIMAL:
        exp = Decimal(1).scaleb(-t.scale)
        wide = Context(prec=2 * MAX_PRECISION)  # the default context's 28 digits cannot hold decimal(38,s)
        return [None if v is None else v.quantize(exp, context=wide) for v in column.to_pylist()]
    if k is Kind.ARRAY:
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        flat = from_arrow(t.element, column.flatten())
        out, pos = [], 0
        for n in pc.list_value_length(column).to_pylist():
            if n is None:
                out.append(None)
            else:
                out.append(tuple(flat[pos:pos + n]))
                pos += n
        return out
    return column.to_pylist()


def to_arrow(t: SqlType, values):
    """A pyarrow Array of Spark's Arrow type for ``t`` from Python values."""
    import pyarrow as pa
    k = t.kind
    if k in (Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ, Kind.DAY_TIME_INTERVAL):
        return pa.array(values, pa.int64()).cast(arrow_type(t))
    if k is Kind.DATE:
        return pa.array(values, pa.int32()).cast(pa.date32())
    if k is Kind.ARRAY:
        return pa.array([None if v is None else list(v) for v in values], arrow_type(t))
    return pa.array(values, arrow_type(t))
