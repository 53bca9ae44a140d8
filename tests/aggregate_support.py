"""Every registered aggregate (``udtf.sparksql.aggregates``) against Spark, derived from the
registry: cases, the table they read, and the checks (``tests/test_sql_aggregates.py``).

For each aggregate, each way to call it (its required parameters, then each optional one;
constant parameters take literals of their type) and each type of its value parameters (all
of ``TYPES`` for the first, then ``PARTNERS`` for the second), the library's typing decides:

* a call it refuses must be refused by Spark's analyzer too (``typing_disagreements``);
* a call it accepts becomes cases -- plain, DISTINCT (unless the registry refuses it) and with
  a FILTER -- that ``tests.match_state_support`` compares with Spark: RUNNING (Spark's window
  aggregate, ROWS UNBOUNDED PRECEDING) and FINAL (the whole match) in MEASURES, the running
  value in DEFINE, Spark's errors as errors, in batches of ``BATCH`` per query.

What Spark leaves open is compared as Spark defines it: a set's order (``collect_set``, a
DISTINCT ``collect_list`` / ``listagg``), the order in which a DISTINCT floating aggregate folds
its values (Spark's hash order: within 1e-9 relative, or 1e-12 of the arguments' largest
magnitude, ``Case.scale``, where the result cancels to about 0 -- ``regr_intercept(DISTINCT x, x)``
is 0 up to the last bits of ``avg(x)``, which Spark's own order decides), ``mode(x)`` among tied
values (the smallest, as ``mode(x, true)`` gives).

The suite runs ``sample``: every aggregate over every type of each of its parameters and each
arity, plain, and each of DISTINCT / FILTER once per arity -- each through the library and
MATCH_RECOGNIZE (RUNNING, FINAL, DEFINE); ``SPARKCEP_AGGREGATES_FULL=1`` runs every case (only
the variant types through MATCH_RECOGNIZE)."""
from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass
from decimal import Decimal

from tests import match_state_support as M
from spark_confs import in_ansi_mode
from udtf.sparksql import aggregates
from udtf.sparksql.coercion import Literal, literal
from udtf.sparksql.errors import SparkAnalysisError
from udtf.sparksql.types import STRING, TypeKind, SqlType

# (no INTERVAL YEAR TO MONTH: Spark's Arrow conversion cannot carry it into the engine at all)
TYPES = ["tinyint", "smallint", "int", "bigint", "float", "double", "decimal(10,2)", "decimal(38,0)", "string",
         "boolean", "date", "timestamp", "timestamp_ntz", "binary", "interval day to second", "array<int>", "void"]
VARIANTS = ["int", "double", "decimal(10,2)", "string", "date", "interval day to second"]  # DISTINCT, FILTER
EXAMPLES = {"boolean": ["true", "false"], "string": ["'-'"], "double": ["0.25"]}
FILTER = "t % 3 <> 2"
BATCH = 120
DAY = 86_400_000_000


def _pool(t: SqlType) -> list:
    k = t.kind
    if k is TypeKind.STRING:  # (numbers, for the aggregates that cast them: one bad string fails them all with ANSI)
        return ["-7", " 7 ", "1.5", "NaN", "Infinity", "0", "-0", "1e2", "2147483648", "-1.0E-7", "12.", "+4"]
    if k is TypeKind.DAY_TIME_INTERVAL:
        return [0, 1_500_000, -DAY, 7 * DAY + 3, 106_751_991 * DAY, -106_751_991 * DAY, 60_000_000]
    if k is TypeKind.YEAR_MONTH_INTERVAL:
        return [0, 1, -13, 25, 2_147_483_647, -2_147_483_647, 12]
    if k is TypeKind.BINARY:
        return [b"", b"\x00\x01", b"\xff", b"a", b"\x01" * 5]
    if k is TypeKind.ARRAY:
        return [(), (1, 2), (None,), (3,), (-1, 2147483647)]
    if k is TypeKind.VOID:
        return [None]
    return M.value_pool(t)


def _sql(t: SqlType, v) -> str:
    k = t.kind
    if v is None:
        return "NULL" if k is TypeKind.VOID else f"CAST(NULL AS {str(t).upper()})"
    if k is TypeKind.DAY_TIME_INTERVAL:
        return f"make_dt_interval(0, 0, 0, {Decimal(v).scaleb(-6)})" if abs(v) < DAY * 1000 else \
            f"make_dt_interval({v // DAY}, 0, 0, {Decimal(v % DAY).scaleb(-6)})"
    if k is TypeKind.YEAR_MONTH_INTERVAL:
        return f"make_ym_interval(0, {v})"
    if k is TypeKind.BINARY:
        return f"X'{v.hex()}'"
    if k is TypeKind.ARRAY:
        return f"CAST(array({', '.join('NULL' if x is None else str(x) for x in v)}) AS ARRAY<INT>)"
    return M.sql_value(t, v)


class Table:
    """``msa_seq(k, t, st, fl, x0..)``, one column per type of ``TYPES`` (``column[type]``),
    the harness's segments (``st`` starts a match) and ``msa_base`` (``seg``, ``cls``)."""

    def __init__(self, spark, rng: random.Random, partitions: int = 3, rows: int = 8):
        self.columns = {f"x{i}": SqlType.parse(t) for i, t in enumerate(TYPES)}
        self.column = {t: f"x{i}" for i, t in enumerate(TYPES)}
        self.rows = []
        for k in range(partitions):
            for t in range(1, rows + 1):
                st = t == 1 or rng.random() < 0.15
                values = []
                for ty in self.columns.values():
                    pool = _pool(ty)
                    small = M._SMALL.get(str(ty))
                    x = rng.random()
                    values.append(None if x < 0.15 else rng.choice(small) if small and x < 0.7 else rng.choice(pool))
                self.rows.append((k, t, str(st).lower(), str(rng.random() < 0.6).lower(), *values))
        types = list(self.columns.values())
        data = ", ".join("(" + ", ".join([str(x) for x in row[:4]] + [_sql(ty, v) for ty, v in zip(types, row[4:])])
                         + ")" for row in self.rows)
        spark.sql(f"SELECT * FROM VALUES {data} AS s(k, t, st, fl, {', '.join(self.columns)})"
                  ).createOrReplaceTempView("msa_seq")
        spark.sql("SELECT *, sum(IF(st, 1, 0)) OVER (PARTITION BY k ORDER BY t ROWS UNBOUNDED PRECEDING) AS seg, "
                  "CASE WHEN st THEN 'S' WHEN fl THEN 'A' ELSE 'B' END AS cls FROM msa_seq"
                  ).createOrReplaceTempView("msa_base")

    def ddl(self) -> str:
        return ", ".join(f"{c} {t}" for c, t in self.columns.items())

    def segments(self) -> list:
        """The rows of each match (``st`` starts one), in order."""
        out = []
        for row in self.rows:
            if row[2] == "true":
                out.append([])
            out[-1].append(row)
        return out


@dataclass
class Case(M.AggCase):
    """A case of the harness whose comparison rules come from the registry (see module doc)."""
    set_like: bool = False
    floating: bool = False
    call: "Call | None" = None
    ansi: bool = True
    variant: bool = False  # over a type of ``VARIANTS`` (or COUNT(*)): also run through MATCH_RECOGNIZE
    ours: tuple = ()  # ``library(...)``
    scale: float = 0.0  # the largest finite magnitude of its numeric arguments in the table

    @property
    def filtered(self) -> bool:
        return "FILTER" in self.mr

    @property
    def unordered(self) -> bool:
        return self.set_like

    @property
    def inexact(self) -> bool:
        return self.distinct and self.floating

    @property
    def grouped(self) -> bool:
        return self.distinct or self.fn == "median"  # (Spark has no median over a window frame)

    @property
    def overflow_order(self) -> bool:
        """A DISTINCT try_sum / try_avg: NULL where an intermediate sum overflows, which depends
        on the order Spark adds the values in (its hash order)."""
        return self.distinct and self.fn in ("try_sum", "try_avg")


@dataclass
class Call:
    """One way to call an aggregate: its arguments (SQL over the table's columns) and how the
    library types them (``None``: refused)."""
    agg: aggregates.Aggregate
    args: list
    signature: object


def calls(table: Table, ansi: bool) -> list:
    """Every call of every registered aggregate over the table's types (see module doc)."""
    out = []
    for agg in aggregates.AGGREGATES:
        for shape in _shapes(agg):
            for columns in _columns(shape, table):
                described = [table.columns[c] if p.constant is None else _literal(c) for p, c in zip(shape, columns)]
                try:
                    sig = aggregates.signature(agg.name, described, ansi)
                except SparkAnalysisError:
                    sig = None
                out.append(Call(agg, columns, sig))
        if agg.name == "count":
            out.append(Call(agg, ["*"], aggregates.signature("count", [], ansi)))
    return out


def _literal(text: str) -> Literal:
    return Literal(STRING, text[1:-1]) if text.startswith("'") else literal(text)


def _shapes(agg: aggregates.Aggregate) -> list:
    required = [p for p in agg.params if not p.optional]
    return [agg.params[:n] for n in range(len(required), len(agg.params) + 1) if n]


def _columns(shape, table: Table):
    """The argument lists of ``shape``: each type of ``TYPES`` in every value parameter (the
    others of the same type, and then INT), constants over ``EXAMPLES``."""
    values = [i for i, p in enumerate(shape) if p.constant is None]
    constants = [EXAMPLES[str(p.constant)] if p.constant is not None else None for p in shape]
    seen = set()
    for position in values:
        for t in TYPES:
            typed = [[table.column[t if i == position or position == values[0] else "int"]]
                     if c is None else c for i, c in enumerate(constants)]
            for columns in _product(typed):
                if tuple(columns) not in seen:
                    seen.add(tuple(columns))
                    yield columns


def _product(lists):
    if not lists:
        yield []
        return
    for head in lists[0]:
        for tail in _product(lists[1:]):
            yield [head] + tail


def cases(accepted: list, ansi: bool, start: int = 0) -> list:
    """The harness's cases of the accepted calls: plain, DISTINCT and FILTER."""
    out = []
    for call in accepted:
        agg, sig = call.agg, call.signature
        floating = any(t.is_floating for t in sig.args) or sig.result.is_floating
        variants = call.args == ["*"] or str(sig.args[0]) in VARIANTS
        for distinct, filtered in ((False, False), (True, False), (False, True)):
            if (distinct or filtered) and not variants or distinct and (
                    agg.distinct is aggregates.Distinct.REFUSED or call.args == ["*"]):
                continue
            if agg.ordered and call.args[-1] != "false":  # (the oracle sorts ascending: see ``_oracle``)
                continue
            # (inside MATCH_RECOGNIZE FIRST / LAST navigate: the aggregates are first_value / last_value)
            written = {"first": "first_value", "last": "last_value"}.get(agg.name, agg.name)
            mr = f"{written}({'DISTINCT ' if distinct else ''}{', '.join(call.args)})" if not agg.ordered else \
                f"{written}({', '.join(call.args[1:-1])}) WITHIN GROUP (ORDER BY {call.args[0]})"
            if filtered:
                mr += f" FILTER (WHERE {FILTER})"
            # DISTINCT that does not change the result is compared without it (a window has none)
            distinct = distinct and agg.distinct is not aggregates.Distinct.SAME
            oracle = _oracle(agg, call.args, "DISTINCT " if distinct else "")
            oracle = _filtered(agg, call.args, oracle, distinct) if filtered else oracle + " {over}"
            set_like = agg.name == "collect_set" or (distinct and agg.name in ("collect_list", "listagg"))
            out.append(Case(start + len(out), mr, oracle, agg.name, distinct, set_like=set_like,
                            floating=floating, call=call, ansi=ansi, variant=variants))
    return out


def _oracle(agg, args, d: str) -> str:
    if agg.name == "mode" and len(args) == 1 or agg.name == "mode" and args[1] == "false":
        return f"mode({d}{args[0]}, true)"  # mode(x) may give any tied value: ours is the smallest
    if agg.name == "percentile_cont":  # Spark's window takes no frame for it: ascending, it is percentile
        return f"percentile({d}{', '.join(args[:-1])})"
    return f"{agg.name}({d}{', '.join(args)})"


def _filtered(agg, args, oracle: str, distinct: bool) -> str:
    """``oracle`` with the FILTER.  Spark's window first() / last() ignore a FILTER (they give
    the frame's first or last row): the filtered rows' first / last through collect_list."""
    if agg.name in ("first", "last") and not distinct:
        ignore = len(args) == 2 and args[1] == "true"
        kept = f"{FILTER}{f' AND {args[0]} IS NOT NULL' if ignore else ''}"
        return (f"try_element_at(collect_list(named_struct('v', {args[0]})) FILTER (WHERE {kept}) {{over}}, "
                f"{-1 if agg.name == 'last' else 1}).v")
    return f"{oracle} FILTER (WHERE {FILTER}) {{over}}"


def sample(cases: list, table: Table) -> list:
    """The cases (in order) that each bring a new (aggregate, DISTINCT, FILTER, arity) or, plain,
    a new (aggregate, parameter position, type): every aggregate over every type it accepts."""
    seen, out = set(), []
    for c in cases:
        mode = (c.fn, c.distinct, c.filtered)
        keys = {mode + ("arity", len(c.call.args))}
        if not c.distinct and not c.filtered:
            keys |= {mode + (i, str(table.columns[a])) for i, a in enumerate(c.call.args) if a in table.columns}
        if not keys <= seen:
            seen |= keys
            out.append(c)
    return out


def _scale(table: Table, args: list) -> float:
    out = 0.0
    for a in args:
        if a not in table.columns or not (table.columns[a].is_numeric or table.columns[a].kind is TypeKind.STRING):
            continue
        i = 4 + list(table.columns).index(a)
        for row in table.rows:
            try:
                v = abs(float(row[i]))
            except (TypeError, ValueError):
                continue
            if math.isfinite(v):
                out = max(out, v)
    return out


def typing_disagreements(spark, refused: list) -> list:
    """The calls the library refuses that Spark's analyzer accepts."""
    out = []
    for call in refused:
        sql = f"SELECT {call.agg.name}({', '.join(call.args)}) FROM msa_seq"
        try:
            t = spark.sql(sql).schema[0].dataType.simpleString()
        except Exception:  # noqa: BLE001 - refused by Spark too
            continue
        out.append((sql, f"Spark types it {t}"))
    return out


def spark_aggregates(spark) -> set:
    """Spark's aggregate functions: the built-in functions of group agg_funcs, and those whose
    class is an AggregateFunction outside the window functions."""
    jvm = spark._jvm
    registry = jvm.org.apache.spark.sql.catalyst.analysis.FunctionRegistry.builtin()
    base = jvm.java.lang.Class.forName("org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction")
    out = set()
    it = registry.listFunction().iterator()
    while it.hasNext():
        name = it.next()
        info = registry.lookupFunction(name)
        if info.isEmpty():
            continue
        info = info.get()
        group = info.getGroup() or ""
        try:
            is_aggregate = base.isAssignableFrom(jvm.java.lang.Class.forName(info.getClassName()))
        except Exception:  # noqa: BLE001 - a class Spark cannot load here
            is_aggregate = False
        if group == "agg_funcs" or (is_aggregate and group != "window_funcs"):
            out.add(name.funcName().lower())
    return out


def library(table: Table, case) -> tuple:
    """The library's values of ``case`` (``udtf.sparksql.aggregates``, fed the table's rows as the
    engine feeds a match's): ({(k, t): RUNNING value}, {(k, t): FINAL value}, the error classes
    its matches raise)."""
    from udtf.sparksql.errors import SparkError
    from udtf.sparksql.scalar import cast
    ansi = case.ansi
    args = [a for a in case.call.args if a != "*"]
    described = [table.columns[a] if a in table.columns else _literal(a) for a in args]
    fold = aggregates.aggregate(case.fn, described, case.distinct, ansi)
    readers = []
    for a, source, target in zip(args, described, fold.arg_types):
        if a in table.columns:
            i, convert = 4 + list(table.columns).index(a), cast(source, target, ansi)
            readers.append(lambda row, i=i, convert=convert: convert(row[i]))
        else:
            value = cast(source.type, target, ansi)(source.value)
            readers.append(lambda row, value=value: value)
    keep = (lambda row: row[1] % 3 != 2) if case.filtered else (lambda row: True)
    running, final, errors = {}, {}, set()
    for rows in table.segments():
        try:
            # (Spark's window reads the arguments of a partition's rows before it aggregates them)
            values = [[r(row) for r in readers] for row in rows]
            state = fold.initial
            for row, vs in zip(rows, values):
                if keep(row):
                    state = fold.step(state, *vs)
                running[(row[0], row[1])] = fold.result(state)
        except SparkError as e:
            errors.add(e.error_class)
            continue
        for row in rows:
            final[(row[0], row[1])] = fold.result(state)
    return running, final, frozenset(errors)


def library_mismatches(case, expected: dict, types: dict) -> tuple:
    """(values compared, mismatches) of the library's values of ``case`` against Spark's
    (``expected``: ``match_state_support._oracle``'s)."""
    compared, out = 0, []
    running, final, _ = case.ours
    for (k, t), want in expected.items():
        for name, ours in ((f"r{case.q}", running.get((k, t))), (f"f{case.q}", final.get((k, t)))):
            theirs = _engine_value(SqlType.parse(types[name]), want[name])
            compared += 1
            if not M._agg_same(case, _comparable(ours), _comparable(theirs)):
                out.append((case.mr, f"{name} at k={k} t={t}: Spark {theirs!r}", f"library {ours!r}"))
    return compared, out


def _engine_value(t: SqlType, v):
    return v if v is None else M.collected(t, v)


def _comparable(v):
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, tuple):
        return [_comparable(x) for x in v]
    return v


@dataclass
class Outcome:
    calls: int = 0
    typed: int = 0
    cases: int = 0
    library_values: int = 0  # (case, row, RUNNING / FINAL) values of the library compared
    errors: int = 0  # cases whose error class was compared (library; SQL where ``sql``)
    typing: list = None  # calls the library refuses and Spark accepts
    library: list = None  # mismatches of the library's values or errors
    report: M.Report = None  # the SQL comparisons (``match_state_support``)

    def summary(self) -> str:
        return (f"{self.calls} calls ({self.typed} typed), {self.cases} cases: {self.library_values} library "
                f"values, {self.errors} error classes; SQL: {self.report.summary()}")


@in_ansi_mode
def run(spark, ansi: bool, seed: str, sql: bool = True) -> Outcome:
    """Every registered aggregate over ``Table`` against Spark (see module doc): the library's
    folds over every case of ``sample`` (of all with SPARKCEP_AGGREGATES_FULL=1) and, with ``sql``,
    through MATCH_RECOGNIZE (MEASURES and DEFINE) too (the full set: those over ``VARIANTS``); of the cases raising errors, one per aggregate and errors."""
    table = Table(spark, random.Random(seed))
    every = calls(table, ansi)
    typed = [c for c in every if c.signature is not None]
    out = Outcome(len(every), len(typed), typing=typing_disagreements(spark, [c for c in every if c.signature is None]),
                  library=[], report=M.Report())
    full = os.environ.get("SPARKCEP_AGGREGATES_FULL") == "1"
    all_cases = cases(typed, ansi) if full else sample(cases(typed, ansi), table)
    out.cases = len(all_cases)
    for c in all_cases:
        c.ours = library(table, c)
        c.scale = _scale(table, c.call.args)
    fine = [c for c in all_cases if not c.ours[2]]
    for start in range(0, len(fine), BATCH):
        batch = fine[start:start + BATCH]
        expected, types = M._oracle(spark, batch, out.report)
        good = [c for c in batch if c.error is None]
        for c in batch:
            if c.error is not None:
                out.library.append((c.mr, f"Spark raises {c.error}", "the library does not"))
                continue
            c.type = types[f"r{c.q}"]
            n, mismatches = library_mismatches(c, expected, types)
            out.library_values += n
            out.library += mismatches
        good = [c for c in good if c.variant or not full]
        if sql:
            M._compare_measures(spark, table, good, expected, types, ansi, out.report)
            M._check_define_aggregates(spark, table, [c for c in good if not c.unordered and not c.inexact],
                                       expected, ansi, out.report)
    seen = set()
    for c in all_cases:
        if not c.ours[2] or (c.fn, c.ours[2]) in seen:
            continue
        seen.add((c.fn, c.ours[2]))
        M._oracle(spark, [c], out.report)
        out.errors += 1
        if c.error not in c.ours[2]:  # (Spark raises the error of the match it computes first)
            out.library.append((c.mr, f"Spark raises {c.error}", f"the library raises {sorted(c.ours[2])}"))
        elif sql:
            M._aggregate_error(spark, table, c, ansi, out.report)
    return out


# ---- aggregates over expressions, with FILTER and DISTINCT -----------------------------------
EXPRESSION_TYPES = ["int", "bigint", "double", "decimal(10,2)"]
EXPRESSION_VALUES = {"int": [0, 1, -1, 7, 42, 5], "bigint": [0, 1, -1, 7, 10_000_000_000],
                     "double": [0.1, 0.2, 0.3, -0.0, 0.0, 1.5, -2.5, 3.0],
                     "decimal(10,2)": [Decimal("1.25"), Decimal("-0.50"), Decimal("0.00"), Decimal("3.10")]}


class ExpressionTable(M.AggTable):
    """``msa_seq`` / ``msa_base`` as ``Table``'s, with one column per type of ``EXPRESSION_TYPES``;
    ``odd``: NULLs and NaN among the values, else none (the emitter's vectorized path)."""

    def __init__(self, spark, rng: random.Random, odd: bool, partitions: int = 4, rows: int = 12):
        self.columns = {f"x{i}": SqlType.parse(t) for i, t in enumerate(EXPRESSION_TYPES)}
        self.rows = []
        for k in range(partitions):
            for t in range(1, rows + 1):
                values = []
                for name in EXPRESSION_TYPES:
                    pool = EXPRESSION_VALUES[name] + ([math.nan] if odd and name == "double" else [])
                    values.append(None if odd and rng.random() < 0.15 else rng.choice(pool))
                st = t == 1 or rng.random() < 0.2
                self.rows.append((k, t, str(st).lower(), str(rng.random() < 0.6).lower(), *values))
        self._register(spark)


def expression_cases(table: ExpressionTable) -> list:
    """Aggregates of each column over expressions of it and ``t``, with FILTER, with DISTINCT."""
    out = []
    for c in table.columns:
        for mr, fn in ((f"sum({c} * 2 - t)", "sum"), (f"avg({c} - t)", "avg"), (f"min({c} + t)", "min"),
                       (f"max({c} * t)", "max"), (f"count({c} - t)", "count"), (f"stddev({c} + t)", "stddev"),
                       (f"sum({c}) FILTER (WHERE {c} > t)", "sum"), (f"avg({c} * t) FILTER (WHERE t % 2 = 0)", "avg"),
                       (f"count(DISTINCT {c} - t)", "count"), (f"sum(DISTINCT {c} * 2)", "sum"),
                       (f"avg(DISTINCT {c})", "avg"), (f"max_by(t, {c}) FILTER (WHERE t > 2)", "max_by"),
                       (f"bool_or({c} > t) FILTER (WHERE t < 5)", "bool_or")):
            out.append(M.AggCase(len(out), mr, f"{mr} {{over}}", fn, "DISTINCT" in mr))
    return out


@in_ansi_mode
def expressions(spark, ansi: bool, seed: str, odd: bool) -> tuple:
    """(report, cases compared) of ``expression_cases`` through MATCH_RECOGNIZE (RUNNING and
    FINAL) against Spark's window aggregates; the cases Spark raises on, their errors."""
    table = ExpressionTable(spark, random.Random(seed), odd)
    cases = expression_cases(table)
    report = M.Report()
    expected, types = M._oracle(spark, cases, report)
    good = [c for c in cases if c.error is None]
    for c in good:
        c.type = types[f"r{c.q}"]
    M._compare_measures(spark, table, good, expected, types, ansi, report)
    for c in cases:
        if c.error is not None:
            M._aggregate_error(spark, table, c, ansi, report)
    return report, len(good)
