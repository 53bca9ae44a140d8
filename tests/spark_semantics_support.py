"""Random typed expressions for the differential tests of the Spark semantics library.

``Gen(rng).expr(depth)`` builds a random expression tree over a fixed table ``t`` (``COLUMNS``,
``ROWS``) and Spark literals; ``compile_tree`` resolves it with ``functions.resolve`` and compiles
it with ``functions.compile_call`` into ``row -> value``; ``run_batch`` evaluates a batch of trees in
Spark (one query for all expressions our library predicts error-free, one small query per
predicted error) and returns the mismatches.
"""
from __future__ import annotations

import datetime as dt
import math
import random
from dataclasses import dataclass, field
from decimal import Decimal

from spark_confs import in_ansi_mode
from udtf.sparksql import scalar
from udtf.sparksql.coercion import Literal, literal
from udtf.sparksql.functions import compile_call, function, resolve
from udtf.sparksql.errors import SparkAnalysisError, SparkError
from udtf.sparksql.types import (BIGINT, BOOLEAN, DATE, DOUBLE, FLOAT, INT, STRING, TIMESTAMP, TypeKind,
                           SqlType, decimal, round_float32)

I32 = (1 << 31) - 1
I64 = (1 << 63) - 1
F32 = round_float32

# column name -> (type, values per row); values in the engine representation
COLUMNS: dict[str, tuple[SqlType, list]] = {
    "i": (INT, [-7, 0, 1, I32, -I32 - 1, None, 42, -1]),
    "l": (BIGINT, [10_000_000_000, -1, I64, -I64 - 1, 0, None, 7, 3]),
    "b": (SqlType(TypeKind.TINYINT), [127, -128, 0, None, 1, -1, 5, 100]),
    "s": (SqlType(TypeKind.SMALLINT), [32767, -32768, 0, 300, None, -5, 1, 2]),
    "d": (DOUBLE, [0.1, math.nan, math.inf, -0.0, None, 1e308, -2.5, 3.0]),
    "f": (FLOAT, [F32(1.1), F32(-0.0), math.inf, F32(3.4e38), None, math.nan, F32(2.5), F32(0.1)]),
    "m": (decimal(10, 2), [Decimal("12.34"), Decimal("-99999999.99"), Decimal("0.00"), None,
                           Decimal("0.05"), Decimal("99999999.99"), Decimal("-0.50"), Decimal("1.00")]),
    "w": (decimal(38, 6), [Decimal("1.000000"), Decimal("99999999999999999999999999999999.999999"),
                           None, Decimal("-0.000001"), Decimal("0.333333"), Decimal("0.000000"),
                           Decimal("12345.678900"), Decimal("-2.500000")]),
    "x": (STRING, ["-7", " 7 ", "1.5", "abc", "", None, "2020-02-29", "1e2"]),
    "y": (STRING, ["NaN", "Infinity", "0", "2020-01-01 10:00:00", "true", "12.", " -3 ", None]),
    "dt": (DATE, [0, -1, 18321, None, 11016, 19782, -719162, 365]),
    "ts": (TIMESTAMP, [0, -1, 1_582_934_400_123_456, None, 86_400_000_000, 1_700_000_000_000_000,
                       -62_135_596_800_000_000, 951_782_400_000_001]),
    "bo": (BOOLEAN, [True, False, None, True, False, True, None, False]),
}
ROWS = 8

LITERALS = ["0", "1", "7", "2", "2147483647", "10000000000", "9223372036854775807", "0.1", "0.2",
            "1.5", "100.25", "1e3", "1.5D", "1.5F", "0.1F", "1.5BD", "100L", "10Y", "127Y", "10S",
            "NULL", "true", "false", "'-7'", "'1.5'", "' 7 '", "'abc'", "''", "'2020-02-29'",
            "'2020-01-01 10:00:00'", "'1e2'", "'NaN'", "'true'", "DATE'2020-02-29'",
            "DATE'1970-01-01'", "TIMESTAMP'2020-01-01 10:00:00'", "INTERVAL '1' DAY",
            "INTERVAL '2' HOUR", "INTERVAL '1' MONTH", "0.0000001", "99999999999999999999.99"]


def literal_value(text: str) -> Literal:
    """Type/value of one of ``LITERALS`` (strings, dates, timestamps, intervals too)."""
    if text.startswith("'"):
        return Literal(STRING, text[1:-1])
    if text.startswith("DATE'"):
        d = dt.date.fromisoformat(text[5:-1])
        return Literal(DATE, (d - dt.date(1970, 1, 1)).days)
    if text.startswith("TIMESTAMP'"):
        t = dt.datetime.fromisoformat(text[10:-1]).replace(tzinfo=dt.timezone.utc)
        return Literal(TIMESTAMP, int(t.timestamp()) * 1_000_000)
    if text.startswith("INTERVAL"):
        n = int(text.split("'")[1])
        unit = text.split()[-1]
        if unit == "DAY":
            return Literal(SqlType.parse("interval day"), n * 86_400_000_000)
        if unit == "HOUR":
            return Literal(SqlType.parse("interval hour"), n * 3_600_000_000)
        return Literal(SqlType.parse("interval month"), n)
    return literal(text)


@dataclass
class Node:
    fn: str  # "col", "lit", or a function name
    args: list = field(default_factory=list)
    text: str = ""  # column name / literal text / cast target

    def sql(self) -> str:
        f, a = self.fn, [x.sql() for x in self.args]
        if f in ("col", "lit"):
            return self.text
        if f in ("+", "-", "*", "/", "%", "div", "=", "<>", "<", "<=", ">", ">=", "<=>",
                 "and", "or", "||"):
            return f"({a[0]} {f.upper() if f.isalpha() else f} {a[1]})"
        if f == "negative":
            return f"(- {a[0]})"
        if f == "not":
            return f"(NOT {a[0]})"
        if f == "is_null":
            return f"({a[0]} IS NULL)"
        if f == "is_not_null":
            return f"({a[0]} IS NOT NULL)"
        if f == "is_distinct_from":
            return f"({a[0]} IS DISTINCT FROM {a[1]})"
        if f == "in":
            return f"({a[0]} IN ({', '.join(a[1:])}))"
        if f == "between":
            return f"({a[0]} BETWEEN {a[1]} AND {a[2]})"
        if f == "case":
            parts = [f"WHEN {a[i]} THEN {a[i + 1]}" for i in range(0, len(a) - 1, 2)]
            if len(a) % 2:
                parts.append(f"ELSE {a[-1]}")
            return "CASE " + " ".join(parts) + " END"
        if f == "cast":
            return f"CAST({a[0]} AS {self.text})"
        if f == "try_cast":
            return f"TRY_CAST({a[0]} AS {self.text})"
        return f"{f}({', '.join(a)})"


BINARY = ["+", "-", "*", "/", "%", "div", "=", "<>", "<", "<=", ">", ">=", "<=>", "and", "or",
          "||", "is_distinct_from"]
FUNCS = {  # name -> arities
    "negative": (1,), "not": (1,), "is_null": (1,), "is_not_null": (1,), "in": (2, 3, 4),
    "between": (3,), "case": (2, 3, 4, 5), "if": (3,), "coalesce": (1, 2, 3), "nvl": (2,),
    "nullif": (2,), "abs": (1,), "greatest": (2, 3), "least": (2, 3), "round": (1, 2),
    "bround": (2,), "floor": (1,), "ceil": (1,), "sign": (1,), "sqrt": (1,), "exp": (1,),
    "ln": (1,), "log10": (1,), "power": (2,), "concat": (1, 2, 3), "length": (1,),
    "upper": (1,), "lower": (1,), "substring": (2, 3), "trim": (1,), "date_add": (2,),
    "date_sub": (2,), "datediff": (2,), "cast": (1,), "try_cast": (1,),
}
CAST_TARGETS = ["int", "bigint", "tinyint", "smallint", "double", "float", "decimal(10,2)",
                "decimal(5,1)", "decimal(38,10)", "string", "boolean", "date", "timestamp"]


class Gen:
    def __init__(self, rng: random.Random):
        self.r = rng

    def leaf(self) -> Node:
        if self.r.random() < 0.6:
            return Node("col", text=self.r.choice(list(COLUMNS)))
        return Node("lit", text=self.r.choice(LITERALS))

    def expr(self, depth: int) -> Node:
        r = self.r
        if depth == 0 or r.random() < 0.25:
            return self.leaf()
        if r.random() < 0.45:
            f = r.choice(BINARY)
            return Node(f, [self.expr(depth - 1), self.expr(depth - 1)])
        f = r.choice(list(FUNCS))
        n = r.choice(FUNCS[f])
        args = [self.expr(depth - 1) for _ in range(n)]
        if f in ("round", "bround") and n == 2:
            args[1] = Node("lit", text=r.choice(["0", "1", "2", "-1", "3"]))
        if f in ("cast", "try_cast"):
            return Node(f, args, text=r.choice(CAST_TARGETS))
        return Node(f, args)


class Compiled:
    __slots__ = ("type", "eval", "lit")

    def __init__(self, t, ev, lit=None):
        self.type, self.eval, self.lit = t, ev, lit


def compile_tree(node: Node, ansi: bool) -> Compiled:
    """Resolve and compile ``node``; raises SparkAnalysisError where Spark's analysis fails."""
    f = node.fn
    if f == "col":
        t, _ = COLUMNS[node.text]
        i = list(COLUMNS).index(node.text)
        return Compiled(t, lambda row, i=i: row[i])
    if f == "lit":
        lit = literal_value(node.text)
        v = lit.value
        return Compiled(lit.type, lambda row, v=v: v, lit)
    kids = [compile_tree(a, ansi) for a in node.args]
    if f in ("cast", "try_cast"):
        dst = SqlType.parse(node.text)
        src = kids[0].type
        c = scalar.cast(src, dst, ansi, try_=(f == "try_cast"))  # (raises where Spark's analysis would)
        ev = kids[0].eval
        return Compiled(dst, lambda row: c(ev(row)))
    args = [k.lit if k.lit is not None else k.type for k in kids]
    sig = resolve(f, args, ansi)
    evs = []
    for k, chain in zip(kids, sig.casts([k.type for k in kids])):
        if not chain:
            evs.append(k.eval)
        else:
            c = scalar.cast_through(k.type, chain, ansi)
            evs.append(lambda row, c=c, e=k.eval: c(e(row)))
    return Compiled(sig.result, compile_call(f, sig.args, sig.result, ansi, evs))


def evaluate(c: Compiled):
    """Per-row results: a value list, or ('error', class) at the first row that raises."""
    out = []
    for row in zip(*(v for _, v in COLUMNS.values())):
        try:
            out.append(c.eval(row))
        except SparkError as e:
            return ("error", e.error_class)
        except Exception as e:  # noqa: BLE001 - a crash of our library is a mismatch
            return ("error", f"CRASH {type(e).__name__}: {e}")
    return out


# ---- Spark side ------------------------------------------------------------------------

def _sql_value(t: SqlType, v) -> str:
    if v is None:
        return f"CAST(NULL AS {str(t).upper()})"
    k = t.kind
    if k is TypeKind.DATE:
        return f"date_from_unix_date({v})"
    if k is TypeKind.TIMESTAMP:
        return f"timestamp_micros({v})"
    if k in (TypeKind.DOUBLE, TypeKind.FLOAT):
        if v != v or v in (math.inf, -math.inf):
            text = "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
        else:
            text = repr(v)
        return f"CAST('{text}' AS {str(t).upper()})"
    if k is TypeKind.STRING:
        return "'" + v.replace("'", "\\'") + "'"
    if k is TypeKind.BOOLEAN:
        return "true" if v else "false"
    return f"CAST('{v}' AS {str(t)})"


def table_sql() -> str:
    names = list(COLUMNS)
    rows = []
    for i in range(ROWS):
        rows.append("(" + ", ".join(_sql_value(COLUMNS[n][0], COLUMNS[n][1][i]) for n in names) + ")")
    return f"SELECT * FROM VALUES {', '.join(rows)} AS t({', '.join(names)})"


def spark_value(t: SqlType, v):
    """Spark's collected value -> engine representation (for wrapped date/timestamp columns the
    query already returns ints)."""
    if v is None:
        return None
    if isinstance(v, dt.timedelta):
        return (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds
    return v


def wrap(t: SqlType, sql: str) -> str:
    if t.kind is TypeKind.YEAR_MONTH_INTERVAL:  # pyspark cannot collect year-month intervals
        return f"CAST({sql} AS STRING)"
    if t.kind is TypeKind.DATE:
        return f"unix_date({sql})"
    if t.kind is TypeKind.TIMESTAMP:
        return f"unix_micros({sql})"
    if t.kind is TypeKind.TIMESTAMP_NTZ:
        return f"unix_micros(CAST({sql} AS TIMESTAMP))"
    return sql


TRANSCENDENTAL = ("exp(", "ln(", "log10(", "power(")


def same(a, b, ulps: int = 0) -> bool:
    """Equal values; floats bit for bit (NaN = NaN, -0.0 != 0.0) or within ``ulps``."""
    if isinstance(a, float) and isinstance(b, float):
        if a != a and b != b:
            return True
        if ulps and a != b and math.isfinite(a) and math.isfinite(b):
            return abs(a - b) <= ulps * math.ulp(max(abs(a), abs(b)))
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return a == b  # pyspark does not keep the scale; ours is checked by check_scale
    if type(a) is not type(b) and not (a is None or b is None):
        if isinstance(a, bool) or isinstance(b, bool):
            return False
    return a == b


def check_scale(t: SqlType, values) -> bool:
    """Our decimals carry exactly the type's scale and fit its precision."""
    if t.kind is not TypeKind.DECIMAL:
        return True
    for v in values:
        if v is not None:
            _, digits, exp = v.as_tuple()
            if exp != -t.scale or len(digits) > t.precision or v.is_signed() and v.is_zero():
                return False
    return True


def error_class(exc) -> str:
    text = str(exc)
    if text.startswith("["):
        return text[1:text.index("]")]
    get = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    if get:
        try:
            c = get()
            if c:
                return c
        except Exception:
            pass
    return text.split("\n")[0][:120]


@dataclass
class Outcome:
    checked: int = 0
    types_checked: int = 0
    analysis_errors_checked: int = 0
    runtime_errors_checked: int = 0
    unsupported: int = 0
    set_order_differs: int = 0
    mismatches: list = field(default_factory=list)


@in_ansi_mode
def run_batch(spark, trees: list[Node], ansi: bool, outcome: Outcome, max_analysis_checks=20):
    """Compare our resolution and evaluation of ``trees`` with Spark's, in ANSI mode ``ansi``."""
    base = table_sql()
    ok, errs, analysis = [], [], []
    for node in trees:
        try:
            c = compile_tree(node, ansi)
        except SparkAnalysisError as e:
            analysis.append((node, e))
            continue
        except NotImplementedError:
            outcome.unsupported += 1
            continue
        except Exception as e:  # noqa: BLE001 - a crash of our library is a mismatch
            outcome.mismatches.append((ansi, node.sql(), f"ours: CRASH {type(e).__name__}: {e}", ""))
            continue
        res = evaluate(c)
        (errs if isinstance(res, tuple) else ok).append((node, c, res))
    # analysis errors: Spark must fail analysis too
    for node, e in analysis[:max_analysis_checks]:
        outcome.analysis_errors_checked += 1
        try:
            schema = spark.sql(f"SELECT {node.sql()} AS c FROM ({base})").schema
            outcome.mismatches.append((ansi, node.sql(), f"ours: {e.error_class}",
                                       f"spark: {schema[0].dataType.simpleString()}"))
        except Exception as ex:  # noqa: BLE001 - any analysis failure counts
            cls = error_class(ex)
            # Spark failed analysis as we predicted; with several faults in one tree the first
            # one reported may differ, so only a failure of a different kind is a mismatch
            if type(ex).__name__ not in ("AnalysisException", "ParseException") and "[" not in str(ex)[:1]:
                outcome.mismatches.append((ansi, node.sql(), f"ours: {e.error_class}", f"spark: {cls}"))
    if ok:
        _check_values(spark, base, ok, ansi, outcome)
    for node, c, res in errs:
        outcome.runtime_errors_checked += 1
        _check_one_error(spark, base, node, c, res, ansi, outcome)


def _check_values(spark, base, items, ansi, outcome):
    cols = ", ".join(f"{wrap(c.type, n.sql())} AS c{i}" for i, (n, c, _) in enumerate(items))
    types_sql = ", ".join(f"{n.sql()} AS c{i}" for i, (n, c, _) in enumerate(items))
    try:
        schema = spark.sql(f"SELECT {types_sql} FROM ({base})").schema
    except Exception as ex:  # noqa: BLE001
        if len(items) == 1:
            n, c, _ = items[0]
            outcome.mismatches.append((ansi, n.sql(), f"ours: {c.type}", f"spark analysis: {error_class(ex)}"))
            return
        h = len(items) // 2
        _check_values(spark, base, items[:h], ansi, outcome)
        _check_values(spark, base, items[h:], ansi, outcome)
        return
    bad = set()
    for i, (n, c, _) in enumerate(items):
        outcome.types_checked += 1
        st = schema[i].dataType.simpleString()
        if st != str(c.type):
            outcome.mismatches.append((ansi, n.sql(), f"ours: {c.type}", f"spark type: {st}"))
            bad.add(i)
    good = [it for i, it in enumerate(items) if i not in bad]
    if good:
        _collect(spark, base, good, ansi, outcome)


def _collect(spark, base, items, ansi, outcome):
    cols = ", ".join(f"{wrap(c.type, n.sql())} AS c{i}" for i, (n, c, _) in enumerate(items))
    try:
        rows = spark.sql(f"SELECT {cols} FROM ({base})").collect()
    except Exception as ex:  # noqa: BLE001
        if len(items) == 1:
            n, c, res = items[0]
            outcome.mismatches.append((ansi, n.sql(), f"ours: {res}", f"spark error: {error_class(ex)}"))
            return
        h = len(items) // 2
        _collect(spark, base, items[:h], ansi, outcome)
        _collect(spark, base, items[h:], ansi, outcome)
        return
    for i, (n, c, res) in enumerate(items):
        outcome.checked += 1
        theirs = [spark_value(c.type, r[i]) for r in rows]
        if c.type.kind is TypeKind.YEAR_MONTH_INTERVAL:
            to_s = scalar.cast(c.type, STRING, ansi)
            res = [to_s(v) for v in res]
        text = n.sql()
        # Java's Math.exp/log/pow are not Python's libm: allow a few ulps where they appear
        ulps = 4 if any(t in text for t in TRANSCENDENTAL) else 0
        if ulps and c.type.is_string:
            continue  # a 1-ulp difference of Math.exp shows in the digits of its text
        if not all(same(a, b, ulps) for a, b in zip(res, theirs)) or not check_scale(c.type, res):
            outcome.mismatches.append((ansi, n.sql(), f"ours: {res}", f"spark: {theirs}"))


def _check_one_error(spark, base, node, c, res, ansi, outcome):
    try:
        schema = spark.sql(f"SELECT {node.sql()} AS c FROM ({base})").schema
        st = schema[0].dataType.simpleString()
        outcome.types_checked += 1
        if st != str(c.type):
            outcome.mismatches.append((ansi, node.sql(), f"ours: {c.type}", f"spark type: {st}"))
            return
        rows = spark.sql(f"SELECT {wrap(c.type, node.sql())} AS c FROM ({base})").collect()
        outcome.mismatches.append((ansi, node.sql(), f"ours: {res}",
                                   f"spark: {[spark_value(c.type, r[0]) for r in rows]}"))
    except Exception as ex:  # noqa: BLE001
        cls = error_class(ex)
        if cls != res[1]:
            outcome.mismatches.append((ansi, node.sql(), f"ours: {res}", f"spark error: {cls}"))


# ---- aggregates ----------------------------------------------------------------------------

AGG_CASES = [  # (sql function, our name, distinct, ignore_nulls, arg count, column types allowed)
    ("count({})", "count", False, False, 1, None), ("count(DISTINCT {})", "count", True, False, 1, None),
    ("sum({})", "sum", False, False, 1, "num"), ("sum(DISTINCT {})", "sum", True, False, 1, "num"),
    ("avg({})", "avg", False, False, 1, "num"), ("min({})", "min", False, False, 1, None),
    ("max({})", "max", False, False, 1, None), ("first({})", "first", False, False, 1, None),
    ("last({})", "last", False, False, 1, None), ("first({}, true)", "first", False, True, 1, None),
    ("last({}, true)", "last", False, True, 1, None), ("collect_list({})", "collect_list", False, False, 1, None),
    ("collect_set({})", "collect_set", False, False, 1, None),
    ("stddev({})", "stddev", False, False, 1, "num"), ("stddev_pop({})", "stddev_pop", False, False, 1, "num"),
    ("variance({})", "variance", False, False, 1, "num"), ("var_pop({})", "var_pop", False, False, 1, "num"),
    ("approx_count_distinct({})", "approx_count_distinct", False, False, 1, None),
    ("max_by({}, {})", "max_by", False, False, 2, None), ("min_by({}, {})", "min_by", False, False, 2, None),
    ("count_if({} > 0)", None, False, False, 1, "num"), ("avg(DISTINCT {})", "avg", True, False, 1, "num"),
    ("listagg({}, '-')", "listagg", False, False, 1, "str"), ("string_agg({})", "string_agg", False, False, 1, "str"),
    ("bool_and({})", "bool_and", False, False, 1, "bool"), ("bool_or({})", "bool_or", False, False, 1, "bool"),
]

AGG_TYPES = [INT, BIGINT, SqlType(TypeKind.TINYINT), DOUBLE, FLOAT, decimal(10, 2), decimal(38, 0),
             STRING, DATE, BOOLEAN]


def agg_values(rng: random.Random, t: SqlType, n: int) -> list:
    k = t.kind
    pools = {
        TypeKind.INT: [0, 1, -1, 7, I32, -I32 - 1, 5, 5],
        TypeKind.BIGINT: [0, 1, I64, -I64 - 1, 10_000_000_000, 3],
        TypeKind.TINYINT: [127, -128, 0, 1, 5],
        TypeKind.DOUBLE: [0.1, 0.2, 0.3, -0.0, 0.0, 1e308, 1e-300, math.nan, math.inf, 3.5, 1e16, 1.0],
        TypeKind.FLOAT: [F32(0.1), F32(1.1), F32(-0.0), F32(3.4e38), F32(2.5), math.nan],
        TypeKind.STRING: ["a", "b", "", "zz", "a"],
        TypeKind.DATE: [0, -1, 18321, 365],
        TypeKind.BOOLEAN: [True, False],
    }
    if k is TypeKind.DECIMAL:
        ctx = scalar.DEC_CTX
        big = ctx.subtract(ctx.power(Decimal(10), t.precision - t.scale), Decimal(1).scaleb(-t.scale))
        pool = [Decimal("1.25"), Decimal("-3.5"), Decimal("0.01"), big, ctx.minus(big), Decimal("7")]
        pool = [v.quantize(Decimal(1).scaleb(-t.scale), context=scalar.DEC_CTX) for v in pool]
    else:
        pool = pools[k]
    return [None if rng.random() < 0.15 else rng.choice(pool) for _ in range(n)]


@in_ansi_mode
def run_aggregates(spark, rng: random.Random, ansi: bool, outcome: Outcome, rows: int = 6):
    from udtf.sparksql.aggregates import aggregate
    cols = {f"c{i}": (t, agg_values(rng, t, rows)) for i, t in enumerate(AGG_TYPES)}
    names = list(cols)
    data = [[cols[n][1][r] for n in names] for r in range(rows)]
    values_sql = ", ".join("(" + ", ".join(_sql_value(cols[n][0], row[i]) for i, n in enumerate(names)) + ")"
                           for row in data)
    # one partition: Spark then folds the rows in order, as an aggregate over a match does
    # (a floating sum merged from two partial sums may differ in its last bits)
    base = f"SELECT /*+ COALESCE(1) */ * FROM VALUES {values_sql} AS t({', '.join(names)})"
    spark.sql(base).collect()  # the table itself must evaluate
    items = []
    for sql_fmt, name, distinct, ign, nargs, kind in AGG_CASES:
        for n in names:
            t = cols[n][0]
            if kind == "num" and not t.is_numeric or kind == "str" and not t.is_string \
                    or kind == "bool" and t.kind is not TypeKind.BOOLEAN:
                continue
            if name in ("min", "max", "max_by", "min_by") and t.kind is TypeKind.BOOLEAN and False:
                continue
            other = rng.choice(names) if nargs == 2 else None
            sql = sql_fmt.format(n, other) if nargs == 2 else sql_fmt.format(n)
            if name is None:  # count_if(x > 0): the condition through our scalar library
                tree = Node(">", [Node("col", text=n), Node("lit", text="0")])
                try:
                    cond = compile_tree_cols(tree, cols, ansi)
                except SparkAnalysisError:
                    continue
                fold = aggregate("count_if", [BOOLEAN], False, ansi)
                seq = [(cond(row),) for row in data]
            else:
                args = [t] if nargs == 1 else [t, cols[other][0]]
                if sql_fmt.startswith("listagg"):
                    fold = aggregate(name, [t, Literal(STRING, "-")], distinct, ansi)
                    seq = [(row[names.index(n)], "-") for row in data]
                    st = fold.initial
                    for vals in seq:
                        st = fold.step(st, *vals)
                    items.append((sql, fold, fold.result(st), name))
                    continue
                try:
                    fold = aggregate(name, args + [Literal(BOOLEAN, True)] * ign, distinct, ansi)
                except (SparkAnalysisError, NotImplementedError):
                    continue
                idx = [names.index(n)] + ([names.index(other)] if other else [])
                casts = [scalar.cast(a, b, ansi) for a, b in zip(args, fold.arg_types or args)]
                seq = [tuple(c(row[i]) for c, i in zip(casts, idx)) for row in data]
            try:
                st = fold.initial
                for vals in seq:
                    st = fold.step(st, *vals)
                ours = fold.result(st)
            except SparkError as e:
                ours = ("error", e.error_class)
            items.append((sql, fold, ours, name))
    _agg_query(spark, base, items, ansi, outcome)


def compile_tree_cols(tree, cols, ansi):
    t = cols[tree.args[0].text][0]
    i = list(cols).index(tree.args[0].text)
    sig = resolve(">", [t, literal("0")], ansi)
    chains = sig.casts([t, INT])
    ca = scalar.cast_through(t, chains[0], ansi)
    cb = scalar.cast_through(INT, chains[1], ansi)
    fn = function(">", sig.args, sig.result, ansi)
    return lambda row: None if row[i] is None else fn(ca(row[i]), cb(0))


def _agg_query(spark, base, items, ansi, outcome):
    good = [it for it in items if not isinstance(it[2], tuple) or it[2][:1] != ("error",)]
    errs = [it for it in items if it not in good]
    if good:
        cols = ", ".join(f"{wrap(f.result_type, s)} AS a{i}" for i, (s, f, _, _) in enumerate(good))
        try:
            df = spark.sql(f"SELECT {cols} FROM ({base})")
            schema = spark.sql(f"SELECT {', '.join(s for s, _, _, _ in good)} FROM ({base})").schema
            row = df.collect()[0]
        except Exception as ex:  # noqa: BLE001
            if len(good) == 1:
                s, f, ours, _ = good[0]
                outcome.mismatches.append((ansi, s, f"ours: {ours}", f"spark error: {error_class(ex)}"))
                return
            h = len(good) // 2
            _agg_query(spark, base, good[:h], ansi, outcome)
            _agg_query(spark, base, good[h:], ansi, outcome)
            return
        for i, (s, f, ours, name) in enumerate(good):
            outcome.checked += 1
            st = schema[i].dataType.simpleString()
            theirs = row[i]
            if st != str(f.result_type).replace("array<", "array<"):
                outcome.mismatches.append((ansi, s, f"ours type: {f.result_type}", f"spark type: {st}"))
                continue
            if isinstance(theirs, list):
                theirs = tuple(spark_value(f.result_type.element, v) for v in theirs)
                if f.result_type.element.kind is TypeKind.DATE:
                    import datetime as _d
                    theirs = tuple(None if v is None else (v - _d.date(1970, 1, 1)).days for v in theirs)
                if name == "collect_set":  # order: compare as sets (see docs)
                    key = lambda v: (str(type(v)), repr(v))  # noqa: E731
                    ours_c, theirs_c = sorted(ours, key=key), sorted(theirs, key=key)
                    if len(ours_c) != len(theirs_c) or not all(same(a, b) for a, b in zip(ours_c, theirs_c)):
                        outcome.mismatches.append((ansi, s, f"ours: {ours}", f"spark: {theirs}"))
                    elif ours != theirs:
                        outcome.set_order_differs += 1
                    continue
                if len(ours) != len(theirs) or not all(same(a, b) for a, b in zip(ours, theirs)):
                    outcome.mismatches.append((ansi, s, f"ours: {ours}", f"spark: {theirs}"))
                continue
            theirs = spark_value(f.result_type, theirs)
            if not same(ours, theirs):
                outcome.mismatches.append((ansi, s, f"ours: {ours}", f"spark: {theirs}"))
    for s, f, ours, _ in errs:
        outcome.runtime_errors_checked += 1
        try:
            r = spark.sql(f"SELECT {wrap(f.result_type, s)} FROM ({base})").collect()[0][0]
            outcome.mismatches.append((ansi, s, f"ours: {ours}", f"spark: {r}"))
        except Exception as ex:  # noqa: BLE001
            if error_class(ex) != ours[1]:
                outcome.mismatches.append((ansi, s, f"ours: {ours}", f"spark error: {error_class(ex)}"))
