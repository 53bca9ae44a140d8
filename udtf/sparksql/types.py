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
struct<...>            ``tuple`` of its fields' values, in field order
map<K,V>               ``tuple`` of (key, value) pairs, in the map's order
variant                ``tuple`` (value, metadata) of its binary encoding (not compared)
=====================  =====================================================================

A string type carries its collation (``string collate UTF8_LCASE``; '' is UTF8_BINARY), which
decides how its values compare (``sparksql.collation``).  Types the engine never evaluates
(the calendar ``interval``, ``time(p)``, ``geometry``, ...) parse as ``TypeKind.OTHER`` with Spark's
text, so columns of them can still be carried.

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

__all__ = ["TypeKind", "SqlType", "round_float32", "from_arrow", "to_arrow", "arrow_type",
           "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "STRING",
           "BINARY", "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "VOID", "decimal", "array",
           "MAX_PRECISION", "INTEGRAL_RANGE", "quote_name"]

MAX_PRECISION = 38


class TypeKind(enum.Enum):
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
    STRUCT = "struct"
    MAP = "map"
    VARIANT = "variant"
    OTHER = "other"


_INTEGRAL = (TypeKind.TINYINT, TypeKind.SMALLINT, TypeKind.INT, TypeKind.BIGINT)
INTEGRAL_RANGE = {
    TypeKind.TINYINT: (-(1 << 7), (1 << 7) - 1),
    TypeKind.SMALLINT: (-(1 << 15), (1 << 15) - 1),
    TypeKind.INT: (-(1 << 31), (1 << 31) - 1),
    TypeKind.BIGINT: (-(1 << 63), (1 << 63) - 1),
}
DAY_TIME_FIELDS = ("day", "hour", "minute", "second")
YEAR_MONTH_FIELDS = ("year", "month")


@dataclass(frozen=True, slots=True)
class SqlType:
    """One Spark data type.  ``precision``/``scale`` only for decimal; ``start``/``end`` are
    field indexes (into DAY_TIME_FIELDS / YEAR_MONTH_FIELDS) for intervals; ``element`` for
    arrays (and a map's values), ``key`` a map's keys, ``fields`` a struct's ((name, type),
    ...); ``collation`` a string's ('' for UTF8_BINARY); ``text`` Spark's name of an OTHER."""
    kind: TypeKind
    precision: int = 0
    scale: int = 0
    start: int = 0
    end: int = 0
    element: SqlType | None = None
    key: SqlType | None = None
    fields: tuple = ()
    collation: str = ""
    text: str = ""

    # ---- predicates -------------------------------------------------------------------
    @property
    def is_integral(self) -> bool:
        return self.kind in _INTEGRAL

    @property
    def is_decimal(self) -> bool:
        return self.kind is TypeKind.DECIMAL

    @property
    def is_fractional(self) -> bool:  # Spark's FractionalType: float, double, decimal
        return self.kind in (TypeKind.FLOAT, TypeKind.DOUBLE, TypeKind.DECIMAL)

    @property
    def is_floating(self) -> bool:
        return self.kind in (TypeKind.FLOAT, TypeKind.DOUBLE)

    @property
    def is_numeric(self) -> bool:
        return self.kind in _INTEGRAL or self.is_fractional

    @property
    def is_string(self) -> bool:
        return self.kind is TypeKind.STRING

    @property
    def is_datetime(self) -> bool:  # Spark's DatetimeType
        return self.kind in (TypeKind.DATE, TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ)

    @property
    def is_timestamp(self) -> bool:  # Spark's AnyTimestampType
        return self.kind in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ)

    @property
    def is_interval(self) -> bool:  # Spark's AnsiIntervalType
        return self.kind in (TypeKind.DAY_TIME_INTERVAL, TypeKind.YEAR_MONTH_INTERVAL)

    @property
    def is_void(self) -> bool:
        return self.kind is TypeKind.VOID

    @property
    def is_atomic(self) -> bool:
        return self.kind not in (TypeKind.ARRAY, TypeKind.STRUCT, TypeKind.MAP, TypeKind.VARIANT, TypeKind.VOID,
                                 TypeKind.OTHER)

    @property
    def is_orderable(self) -> bool:
        """Spark's RowOrdering.isOrderable: not a map, a variant, ..., nor made of one."""
        if self.kind is TypeKind.ARRAY:
            return self.element.is_orderable
        if self.kind is TypeKind.STRUCT:
            return all(t.is_orderable for _, t in self.fields)
        return self.kind not in (TypeKind.MAP, TypeKind.VARIANT, TypeKind.OTHER)

    def walk(self):
        """This type and every type nested in it."""
        yield self
        for inner in (self.key, self.element, *(t for _, t in self.fields)):
            if inner is not None:
                yield from inner.walk()

    @property
    def int_range(self) -> tuple[int, int]:
        return INTEGRAL_RANGE[self.kind]

    # ---- text form ----------------------------------------------------------------------
    def __str__(self) -> str:
        k = self.kind
        if k is TypeKind.DECIMAL:
            return f"decimal({self.precision},{self.scale})"
        if k is TypeKind.ARRAY:
            return f"array<{self.element}>"
        if k is TypeKind.MAP:
            return f"map<{self.key},{self.element}>"
        if k is TypeKind.STRUCT:
            return "struct<" + ",".join(f"{quote_name(name)}:{t}" for name, t in self.fields) + ">"
        if k is TypeKind.STRING and self.collation:
            return f"string collate {self.collation}"
        if k is TypeKind.OTHER:
            return self.text
        if k is TypeKind.DAY_TIME_INTERVAL:
            return _interval_name(DAY_TIME_FIELDS, self.start, self.end)
        if k is TypeKind.YEAR_MONTH_INTERVAL:
            return _interval_name(YEAR_MONTH_FIELDS, self.start, self.end)
        return k.value

    def __repr__(self) -> str:
        return f"SqlType({str(self)!r})"

    @staticmethod
    def parse(text: str) -> SqlType:
        """Parse a ``simpleString()`` form (keywords case-insensitive; ``integer``/``long``/...
        aliases and ``decimal`` = decimal(10,0) accepted; struct field names as written, or
        quoted with backticks); a name this module does not know is an ``OTHER``."""
        parser = _Parser(text)
        t = parser.type()
        if parser.rest():
            raise ValueError(f"unknown Spark type: {text!r}")
        return t


def quote_name(name: str) -> str:
    """A struct field name as type texts write it: backquoted unless a plain identifier."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name
    return "`" + name.replace("`", "``") + "`"


class _Parser:
    """Recursive descent over a type text: ``type := array<type> | map<type,type> |
    struct<name:type,...> | string [collate name] | decimal(p,s) | interval f [to f] | name``."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def rest(self) -> str:
        return self.text[self.pos:].strip()

    def _skip(self):
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _expect(self, char: str):
        self._skip()
        if not self.text.startswith(char, self.pos):
            raise ValueError(f"unknown Spark type: {self.text!r}")
        self.pos += 1

    def _word(self) -> str:
        self._skip()
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(self.text, self.pos)
        if not m:
            raise ValueError(f"unknown Spark type: {self.text!r}")
        self.pos = m.end()
        return m.group()

    def _peek_word(self) -> str:
        self._skip()
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(self.text, self.pos)
        return m.group().lower() if m else ""

    def type(self) -> SqlType:
        start = self.pos
        word = self._word().lower()
        if word == "array":
            self._expect("<")
            element = self.type()
            self._expect(">")
            return array(element)
        if word == "map":
            self._expect("<")
            key = self.type()
            self._expect(",")
            value = self.type()
            self._expect(">")
            return SqlType(TypeKind.MAP, key=key, element=value)
        if word == "struct":
            self._expect("<")
            fields = []
            self._skip()
            while not self.text.startswith(">", self.pos):
                if fields:
                    self._expect(",")
                fields.append((self._field_name(), self.type()))
                self._skip()
            self._expect(">")
            return SqlType(TypeKind.STRUCT, fields=tuple(fields))
        if word == "string" and self._peek_word() == "collate":
            self._word()
            name = self._word()
            return STRING if name.upper() == "UTF8_BINARY" else SqlType(TypeKind.STRING, collation=name)
        if word in ("decimal", "dec", "numeric"):
            self._skip()
            if not self.text.startswith("(", self.pos):
                return _BY_NAME["decimal"]
            m = re.compile(r"\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\)").match(self.text, self.pos)
            if not m:
                raise ValueError(f"unknown Spark type: {self.text!r}")
            self.pos = m.end()
            return decimal(int(m.group(1)), int(m.group(2) or 0))
        if word == "interval" and self._peek_word():
            a = self._word().lower()
            b = a
            if self._peek_word() == "to":
                self._word()
                b = self._word().lower()
            for names, kind in ((DAY_TIME_FIELDS, TypeKind.DAY_TIME_INTERVAL),
                                (YEAR_MONTH_FIELDS, TypeKind.YEAR_MONTH_INTERVAL)):
                if a in names and b in names and names.index(a) <= names.index(b):
                    return SqlType(kind, start=names.index(a), end=names.index(b))
            raise ValueError(f"unknown Spark type: {self.text!r}")
        if word in _BY_NAME:
            return _BY_NAME[word]
        # a type the engine does not evaluate: its whole text, arguments included
        depth = 0
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c in "(<":
                depth += 1
            elif c in ")>" and depth:
                depth -= 1
            elif c in ",>" and not depth:
                break
            self.pos += 1
        return SqlType(TypeKind.OTHER, text=self.text[start:self.pos].strip())

    def _field_name(self) -> str:
        self._skip()
        if self.text.startswith("`", self.pos):
            m = re.compile(r"`((?:[^`]|``)*)`").match(self.text, self.pos)
            if not m:
                raise ValueError(f"unknown Spark type: {self.text!r}")
            self.pos = m.end()
            name = m.group(1).replace("``", "`")
        else:
            end = self.text.index(":", self.pos)
            name = self.text[self.pos:end].strip()
            self.pos = end
        self._expect(":")
        return name


def _interval_name(fields, start, end) -> str:
    if start == end:
        return f"interval {fields[start]}"
    return f"interval {fields[start]} to {fields[end]}"


BOOLEAN = SqlType(TypeKind.BOOLEAN)
TINYINT = SqlType(TypeKind.TINYINT)
SMALLINT = SqlType(TypeKind.SMALLINT)
INT = SqlType(TypeKind.INT)
BIGINT = SqlType(TypeKind.BIGINT)
FLOAT = SqlType(TypeKind.FLOAT)
DOUBLE = SqlType(TypeKind.DOUBLE)
STRING = SqlType(TypeKind.STRING)
BINARY = SqlType(TypeKind.BINARY)
DATE = SqlType(TypeKind.DATE)
TIMESTAMP = SqlType(TypeKind.TIMESTAMP)
TIMESTAMP_NTZ = SqlType(TypeKind.TIMESTAMP_NTZ)
VOID = SqlType(TypeKind.VOID)
DAY_TIME = SqlType(TypeKind.DAY_TIME_INTERVAL, start=0, end=3)
YEAR_MONTH = SqlType(TypeKind.YEAR_MONTH_INTERVAL, start=0, end=1)


def decimal(precision: int, scale: int = 0) -> SqlType:
    if not (1 <= precision <= MAX_PRECISION and 0 <= scale <= precision):
        raise ValueError(f"invalid decimal({precision},{scale})")
    return SqlType(TypeKind.DECIMAL, precision=precision, scale=scale)


def array(element: SqlType) -> SqlType:
    return SqlType(TypeKind.ARRAY, element=element)


_BY_NAME = {
    "boolean": BOOLEAN, "tinyint": TINYINT, "byte": TINYINT, "smallint": SMALLINT,
    "short": SMALLINT, "int": INT, "integer": INT, "bigint": BIGINT, "long": BIGINT,
    "float": FLOAT, "real": FLOAT, "double": DOUBLE, "string": STRING, "binary": BINARY,
    "date": DATE, "timestamp": TIMESTAMP, "timestamp_ltz": TIMESTAMP,
    "timestamp_ntz": TIMESTAMP_NTZ, "void": VOID, "null": VOID, "variant": SqlType(TypeKind.VARIANT),
    "decimal": SqlType(TypeKind.DECIMAL, precision=10, scale=0),
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
        TypeKind.BOOLEAN: pa.bool_(), TypeKind.TINYINT: pa.int8(), TypeKind.SMALLINT: pa.int16(),
        TypeKind.INT: pa.int32(), TypeKind.BIGINT: pa.int64(), TypeKind.FLOAT: pa.float32(),
        TypeKind.DOUBLE: pa.float64(), TypeKind.STRING: pa.string(), TypeKind.BINARY: pa.binary(),
        TypeKind.DATE: pa.date32(), TypeKind.TIMESTAMP: pa.timestamp("us", tz="UTC"),
        TypeKind.TIMESTAMP_NTZ: pa.timestamp("us"), TypeKind.DAY_TIME_INTERVAL: pa.duration("us"),
        TypeKind.YEAR_MONTH_INTERVAL: pa.int32(), TypeKind.VOID: pa.null(),
    }
    if k in simple:
        return simple[k]
    if k is TypeKind.DECIMAL:
        return pa.decimal128(t.precision, t.scale)
    if k is TypeKind.ARRAY:
        return pa.list_(arrow_type(t.element))
    if k is TypeKind.MAP:
        return pa.map_(arrow_type(t.key), arrow_type(t.element))
    if k is TypeKind.STRUCT:
        return pa.struct([pa.field(name, arrow_type(f)) for name, f in t.fields])
    if k is TypeKind.VARIANT:  # as pyspark.sql.pandas.types.to_arrow_type
        return pa.struct([pa.field("value", pa.binary(), nullable=False),
                          pa.field("metadata", pa.binary(), nullable=False, metadata={b"variant": b"true"})])
    raise ValueError(f"no Arrow type for {t}")


def from_arrow(t: SqlType, column) -> list:
    """Python values (the representation above) of a pyarrow Array/ChunkedArray of type ``t``."""
    import pyarrow as pa
    import pyarrow.compute as pc
    k = t.kind
    if isinstance(column, pa.ChunkedArray) and k in (TypeKind.ARRAY, TypeKind.MAP, TypeKind.STRUCT):
        column = column.combine_chunks()
    if k in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ, TypeKind.DAY_TIME_INTERVAL):
        return pc.cast(column, pa.int64()).to_pylist()
    if k is TypeKind.DATE:
        return pc.cast(column, pa.int32()).to_pylist()
    if k is TypeKind.YEAR_MONTH_INTERVAL:
        if pa.types.is_interval(column.type):  # month_day_nano
            return [None if v is None else v.months for v in column.to_pylist()]
        return pc.cast(column, pa.int32()).to_pylist()
    if k is TypeKind.DECIMAL:
        if t.scale >= 0:  # (Arrow's Decimal of unscaled u is u's digits at exponent -scale: "0E-10", "1.23E-8")
            return column.to_pylist()
        exp = Decimal(1).scaleb(-t.scale)
        wide = Context(prec=2 * MAX_PRECISION)  # the default context's 28 digits cannot hold decimal(38,s)
        return [None if v is None else v.quantize(exp, context=wide) for v in column.to_pylist()]
    if k is TypeKind.ARRAY:
        flat = from_arrow(t.element, column.flatten())
        return _nest(column.is_valid().to_pylist(), pc.list_value_length(column).fill_null(0).to_pylist(), flat)
    if k is TypeKind.MAP:
        offsets = column.offsets.to_pylist()  # into the unsliced keys and items
        first, last = offsets[0], offsets[-1]
        keys = from_arrow(t.key, column.keys.slice(first, last - first))
        items = from_arrow(t.element, column.items.slice(first, last - first))
        lengths = [b - a for a, b in zip(offsets, offsets[1:])]
        return _nest(column.is_valid().to_pylist(), lengths, list(zip(keys, items)))
    if k in (TypeKind.STRUCT, TypeKind.VARIANT):
        fields = t.fields if k is TypeKind.STRUCT else (("value", BINARY), ("metadata", BINARY))
        children = [from_arrow(f, child) for (_, f), child in zip(fields, column.flatten())]
        valid = column.is_valid().to_pylist()
        return [tuple(values) if ok else None for ok, *values in zip(valid, *children)] if children else \
            [() if ok else None for ok in valid]
    return column.to_pylist()


def _nest(valid: list, lengths: list, flat: list) -> list:
    """Tuples of ``lengths[i]`` consecutive items of ``flat`` (None where not ``valid``)."""
    out, pos = [], 0
    for ok, n in zip(valid, lengths):
        out.append(tuple(flat[pos:pos + n]) if ok else None)
        pos += n
    return out


def to_arrow(t: SqlType, values):
    """A pyarrow Array of Spark's Arrow type for ``t`` from Python values."""
    import pyarrow as pa
    k = t.kind
    if k in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ, TypeKind.DAY_TIME_INTERVAL):
        return pa.array(values, pa.int64()).cast(arrow_type(t))
    if k is TypeKind.DATE:
        return pa.array(values, pa.int32()).cast(pa.date32())
    if k in (TypeKind.ARRAY, TypeKind.MAP):
        values = list(values)
        mask = pa.array([v is None for v in values], pa.bool_())
        offsets = [0]
        for v in values:
            offsets.append(offsets[-1] + (0 if v is None else len(v)))
        offsets = pa.array(offsets, pa.int32())
        if k is TypeKind.ARRAY:
            flat = to_arrow(t.element, [x for v in values if v is not None for x in v])
            return pa.ListArray.from_arrays(offsets, flat, type=arrow_type(t), mask=mask)
        pairs = [p for v in values if v is not None for p in v]
        keys = to_arrow(t.key, [p[0] for p in pairs])
        items = to_arrow(t.element, [p[1] for p in pairs])
        return pa.MapArray.from_arrays(offsets, keys, items, type=arrow_type(t), mask=mask)
    if k in (TypeKind.STRUCT, TypeKind.VARIANT):
        values = list(values)
        fields = t.fields if k is TypeKind.STRUCT else (("value", BINARY), ("metadata", BINARY))
        children = [to_arrow(f, [None if v is None else v[i] for v in values]) for i, (_, f) in enumerate(fields)]
        mask = pa.array([v is None for v in values], pa.bool_())
        return pa.StructArray.from_arrays(children, fields=list(arrow_type(t)), mask=mask)
    return pa.array(values, arrow_type(t))
