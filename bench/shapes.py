"""Random MATCH_RECOGNIZE shapes over the ticker data: sparkcep vs a live Trino 476 vs Spark's floor.

    python bench/shapes.py [--rows 2000000] [--symbols 100] [--shapes 50] [--start 0] [--seed 1]
                           [--runs 2] [--timeout 60] [--json out.json] [--show 10]
    python bench/shapes.py --report a.json b.json ...      # the distribution over several chunks
    python bench/shapes.py --engine [--named] ...           # sparkcep's engine alone, no Trino

The data is bench/vs_trino.py's (both engines generate the same ``sym, ts, price, x`` rows from
the same integer formulas).  Shape ``i`` is drawn from ``random.Random(f"{seed}:{i}")`` alone,
so ``--start``/``--shapes`` cut one reproducible sequence into chunks.  A shape is a pattern
(sequences, alternation, groups, greedy and reluctant quantifiers, PERMUTE, exclusion, anchors),
DEFINE conditions with and without match state (masks of the row and its neighbours; another
variable's rows, FIRST/LAST, running aggregates, MATCH_NUMBER), 1-12 measures of every kind
(navigation with offsets, aggregates, CLASSIFIER, MATCH_NUMBER, RUNNING/FINAL, SUBSET
references; aggregates also over expressions, with FILTER or DISTINCT, of DECIMAL or STRING
values: ``Generator.wide_aggregate``, drawn from a second ``Random`` of the shape so the first
draws what it drew before), one of the five rows-per-match modes and one of the five skip modes.  Every
unbounded loop reads a condition that fails every few rows (a mask or a bounded running
aggregate, and for a loop over several variables a shared mask), so matches stay short and the
shape measures the engine, not a quadratic pattern.

Each shape runs wrapped in a checksum (``count(*)``; per measure its count and a sum tying the
value to the partition key; CLASSIFIER through a CASE over the variable names; arrays by their
size), on sparkcep (``spark.sql`` + collect), on Trino and on the floor: a no-op Arrow UDTF over
sparkcep's exact ``TABLE(...)`` argument that returns as many rows as sparkcep's answer has
(each batch's rows, repeated or cut in that proportion).  Best of ``--runs``, the engines
interleaved.  Checksums must be equal (doubles to 1e-9 relative); a Trino statement over
``--timeout`` is a win for sparkcep (its ratio is taken against the timeout) and is not
compared; sparkcep over ``4 * --timeout`` is cancelled and counted as the worst shape.
"""
from __future__ import annotations

import argparse
import enum
import json
import math
import os
import random
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

TABLE = "t_ticks"
VARS = "ABCDE"


class Kind(enum.Enum):
    """What a measure's value is, for its checksum."""
    NUM = "num"
    STR = "str"                            # CLASSIFIER(): a variable name
    BOOL = "bool"
    ARR = "arr"
    TEXT = "text"                          # a letter A-J


@dataclass(frozen=True)
class Measure:
    """``trino``: the same measure in Trino's words where they differ (Trino refuses DISTINCT and
    FILTER in a pattern's aggregates: an array's distinct values, a CASE)."""
    sql: str
    kind: Kind
    trino: str | None = None


@dataclass(frozen=True)
class Shape:
    """One generated query (its MATCH_RECOGNIZE text is the same in both dialects)."""
    index: int
    pattern: str
    defines: tuple[tuple[str, str], ...]
    subsets: tuple[tuple[str, tuple[str, ...]], ...]
    measures: tuple[Measure, ...]
    rows: str
    skip: str
    features: frozenset[str]

    def query(self, table: str, dialect: str = "spark") -> str:
        subset = ("\n  SUBSET " + ", ".join(f"{n} = ({', '.join(m)})" for n, m in self.subsets)) if self.subsets else ""
        measures = ", ".join(f"{m.trino if dialect == 'trino' and m.trino else m.sql} AS m{i}"
                             for i, m in enumerate(self.measures))
        define = ", ".join(f"{v} AS {c}" for v, c in self.defines) or "A AS true"
        return (f"SELECT * FROM {table} MATCH_RECOGNIZE (\n  PARTITION BY sym ORDER BY ts\n"
                f"  MEASURES {measures}\n  {self.rows}\n  AFTER MATCH {self.skip}\n"
                f"  PATTERN ({self.pattern}){subset}\n  DEFINE {define}) AS m")

    def checksum(self, dialect: str) -> str:
        table = TABLE if dialect == "spark" else f"memory.default.{TABLE}"
        terms = ["count(*) AS n"] + (["sum(ts) AS t"] if self.rows.startswith("ALL") else [])
        names = " ".join(f"WHEN '{v}' THEN {2 ** i}" for i, v in enumerate(VARS))
        for i, m in enumerate(self.measures):
            col = f"m{i}"
            value = {Kind.NUM: f"{col} * (sym % 7 + 1)",
                     Kind.STR: f"CASE {col} {names} ELSE 100 END * (sym % 7 + 1)",
                     Kind.BOOL: f"CASE WHEN {col} THEN sym % 7 + 1 ELSE 0 END",
                     Kind.TEXT: f"{'instr' if dialect == 'spark' else 'strpos'}('ABCDEFGHIJ', {col}) * (sym % 7 + 1)",
                     Kind.ARR: (f"CASE WHEN {col} IS NULL THEN 0 ELSE size({col}) END" if dialect == "spark"
                                else f"coalesce(cardinality({col}), 0)")}[m.kind]
            # (an ARRAY_AGG over no rows: Spark's [] where Trino's is NULL, known.py spark-array-agg)
            terms += ([] if m.kind is Kind.ARR else [f"count({col})"]) + [f"sum({value})"]
        return f"SELECT {', '.join(terms)} FROM ({self.query(table, dialect)}) q"

    def describe(self) -> str:
        return (f"PATTERN ({self.pattern}) {self.rows} {self.skip}; {len(self.measures)} measures; "
                + ", ".join(sorted(self.features)))


# ---- the generator -------------------------------------------------------------------------
MASKS = ["price > PREV(price)", "price < PREV(price)", "price >= PREV(price, 2)", "price < PREV(price, 3)",
         "NEXT(price) > price", "x < {k}", "x >= {k}", "x % 3 <> {r}", "x % 2 = {r2}",
         "price > PREV(price) AND x < {k}", "price < PREV(price) OR x = {r}"]
BREAKERS = ["x < 8", "x <> {r}", "x % 4 <> {r}", "price <> PREV(price, 2)"]


def _distinct_sum(sem: str, v: str) -> str:
    """Trino's text for ``SUM(DISTINCT v.x)``: Trino refuses DISTINCT in a pattern's aggregates
    and a lambda (``reduce``) in pattern recognition, so the distinct values of ``x`` (0-9 in
    the data of both engines) are summed one by one; NULL over no row, as the sum is."""
    present = " + ".join(f"IF(contains({sem}ARRAY_AGG({v}.x), {k}), {k}, 0)" for k in range(1, 10))
    return f"IF({sem}COUNT({v}.x) = 0, NULL, {present})"


class Generator:
    """Shape ``i`` from its own seeded ``random.Random``."""

    def __init__(self, seed: int):
        self.seed = seed

    def shape(self, index: int) -> Shape:
        r = self.r = random.Random(f"{self.seed}:{index}")
        self.wide = random.Random(f"{self.seed}:{index}:wide")  # (its own: ``r``'s draws stay those of before)
        self.features: set[str] = set()
        self.loop_vars: set[str] = set()
        self.compound_loop_vars: set[str] = set()
        self.fresh = iter(VARS)
        self.used: list[str] = []
        self.masks_only = r.random() < 0.35
        skip_to = r.random() < 0.2
        items = [self.element() for _ in range(r.choice([1, 2, 2, 3, 3, 4]))]
        skip = r.choice(["SKIP PAST LAST ROW", "SKIP TO NEXT ROW"])
        if skip_to:                        # a first row and a later variable surely in the match
            first = self.var()
            last = next(self.fresh, None) or r.choice([v for v in VARS if v != first])
            self.used.append(last)
            plus = r.choice(["", "+"])
            if plus:
                self.loop_vars.add(first)
            items = [first + plus, *items, last]
            skip = f"SKIP TO {r.choice(['FIRST ', 'LAST ', ''])}{last}"
            self.features.add("skip to var")
        if r.random() < 0.08:
            items.insert(0, "^")
            self.features.add("anchor")
        if r.random() < 0.08:
            items.append("$")
            self.features.add("anchor")
        pattern = " ".join(items)
        pvars = list(dict.fromkeys(self.used))
        subsets = ()
        if len(pvars) >= 2 and r.random() < 0.25:
            subsets = (("U", tuple(sorted(r.sample(pvars, 2)))),)
            self.features.add("subset")
        refs = pvars + [n for n, _ in subsets]
        rows = r.choice(["ONE ROW PER MATCH"] * 3 + ["ALL ROWS PER MATCH"] * 2 + [
            "ALL ROWS PER MATCH SHOW EMPTY MATCHES", "ALL ROWS PER MATCH OMIT EMPTY MATCHES",
            "ALL ROWS PER MATCH WITH UNMATCHED ROWS"])
        if "exclusion" in self.features and "UNMATCHED" in rows:
            rows = "ALL ROWS PER MATCH"    # (exclusion with unmatched rows is an error in the standard)
        breaker = r.choice(BREAKERS).format(r=r.randint(0, 3))
        breaker_vars = self.compound_loop_vars
        defines = []
        for v in pvars:
            cond = self.condition(v, [o for o in refs if o != v])
            if v in breaker_vars:
                cond = f"({cond}) AND {breaker}" if cond else breaker
            if cond:
                defines.append((v, cond))
        r.shuffle(defines)
        measures = tuple(self.measure(pvars, refs, rows) for _ in range(r.choice([1, 2, 3, 4, 5, 6, 8, 10, 12])))
        self.features.add("state" if any(self.is_state(c) for _, c in defines) else "masks")
        return Shape(index, pattern, tuple(defines), subsets, measures, rows, skip, frozenset(self.features))

    # pattern --------------------------------------------------------------------------------
    def var(self) -> str:
        r = self.r
        if self.used and r.random() < 0.15:
            v = r.choice(self.used)
            self.features.add("repeated var")
        else:
            v = next(self.fresh, None) or r.choice(self.used)
        self.used.append(v)
        return v

    def quantifier(self, compound: bool) -> tuple[str, bool]:
        """(text, unbounded)."""
        r = self.r
        q = r.choice(["", "", "+", "*", "?", "{2}", "{1,3}", "{,2}", "{2,}"] if not compound
                     else ["", "+", "*", "?", "{2}", "{1,3}", "{,2}"])
        if q and r.random() < 0.25:
            q += "?"
            self.features.add("reluctant")
        elif q in ("+", "*", "{2,}"):
            self.features.add("greedy")
        return q, q.rstrip("?") in ("+", "*", "{2,}")

    def element(self) -> str:
        r = self.r
        roll = r.random()
        if roll < 0.5 or len(VARS) - len(set(self.used)) < 2:
            mark = len(self.used)
            v = self.var()
            q, unbounded = self.quantifier(False)
            if unbounded:
                self.loop_vars.update(self.used[mark:])
            return v + q
        mark = len(self.used)
        if roll < 0.65:
            inner, what = " ".join(self.var() for _ in range(2)), "group"
        elif roll < 0.82:
            inner, what = f"{self.var()} | {self.var()} {self.var()}" if r.random() < 0.5 else \
                f"{self.var()} | {self.var()}", "alternation"
        elif roll < 0.92:
            self.features.add("permute")
            text = "PERMUTE(" + ", ".join(self.var() for _ in range(r.choice([2, 2, 3]))) + ")"
            q, unbounded = ("", False) if r.random() < 0.7 else ("{1,2}", False)
            return text + q
        else:
            self.features.add("exclusion")
            v = self.var()
            q, unbounded = self.quantifier(False)
            if unbounded:
                self.loop_vars.add(v)
            return "{- " + v + q + " -}"
        self.features.add(what)
        q, unbounded = self.quantifier(True)
        if unbounded:
            self.loop_vars.update(self.used[mark:])
            self.compound_loop_vars.update(self.used[mark:])
        return f"({inner}){q}"

    # conditions ------------------------------------------------------------------------------
    def mask(self) -> str:
        r = self.r
        return r.choice(MASKS).format(k=r.randint(2, 8), r=r.randint(0, 2), r2=r.randint(0, 1))

    def bounded_state(self, v: str) -> str:
        r = self.r
        return r.choice([f"SUM({v}.x) < {r.randint(8, 40)}", f"COUNT({v}.*) <= {r.randint(2, 6)}",
                         f"MAX({v}.price) - MIN({v}.price) <= {r.randint(1, 5)}",
                         f"COUNT(*) <= {r.randint(3, 12)}"])

    def free_state(self, v: str, others: list[str]) -> str:
        r = self.r
        o = r.choice(others) if others else v
        k = r.randint(0, 4)
        return r.choice([f"price > {o}.price", f"price < {o}.price + {k}", f"price - FIRST({o}.price) <= {k}",
                         f"price > LAST({o}.price, 1)", f"AVG({v}.price) < {o}.price + {k}",
                         f"price >= FIRST({v}.price)", f"MATCH_NUMBER() % 2 = {r.randint(0, 1)}",
                         f"COALESCE(PREV({o}.price), price) <= price"])

    def condition(self, v: str, others: list[str]) -> str:
        """A DEFINE condition; a variable of an unbounded loop always gets one that fails every
        few rows; elsewhere it may be missing (TRUE) or read match state alone."""
        r = self.r
        roll = r.random()
        if self.masks_only:
            return "" if roll < 0.1 and v not in self.loop_vars else self.mask()
        if v in self.loop_vars:
            if roll < 0.4:
                return self.mask()
            if roll < 0.6:
                return f"{self.mask()} AND {self.free_state(v, others)}"
            if roll < 0.85:
                return self.bounded_state(v)
            return f"{self.bounded_state(v)} AND {self.mask()}"
        if roll < 0.1:
            return ""
        if roll < 0.5:
            return self.mask()
        if roll < 0.75:
            return self.free_state(v, others)
        return f"{self.mask()} AND {self.free_state(v, others)}"

    @staticmethod
    def is_state(cond: str) -> bool:
        return any(s in cond for s in (".price", ".x", ".*", "COUNT(", "MATCH_NUMBER"))

    # measures --------------------------------------------------------------------------------
    def measure(self, pvars: list[str], refs: list[str], rows: str) -> Measure:
        r = self.r
        v = r.choice(refs)
        w = r.choice(pvars)
        n = r.randint(0, 3)
        sem = r.choice(["", "", "RUNNING ", "FINAL "]) if rows.startswith("ALL") or r.random() < 0.1 else ""
        if sem:
            self.features.add(sem.strip().lower())
        roll = r.random()
        if roll < 0.08:
            self.features.add("classifier")
            return Measure("CLASSIFIER()", Kind.STR)
        if roll < 0.14:
            self.features.add("match_number")
            return Measure("MATCH_NUMBER()", Kind.NUM)
        if roll < 0.42:
            self.features.add("navigation")
            return Measure(r.choice([
                f"{v}.price", f"{sem}FIRST({v}.ts)", f"{sem}LAST({v}.price)", f"{sem}FIRST({v}.price, {n})",
                f"{sem}LAST({v}.ts, {n})", f"PREV({w}.price, {n})", f"NEXT(price, {n})",
                f"PREV({sem}LAST({w}.price), {max(n, 1)})", f"{sem}LAST({w}.price) - {sem}FIRST({v}.price)",
                "price", "x"]), Kind.NUM)
        self.features.add("aggregate")
        k = r.randint(2, 7)
        choice = r.choice([
            (f"{sem}COUNT(*)", Kind.NUM), (f"{sem}COUNT({v}.*)", Kind.NUM), (f"{sem}SUM({v}.price)", Kind.NUM),
            (f"{sem}SUM(x)", Kind.NUM), (f"{sem}AVG({v}.price)", Kind.NUM), (f"{sem}MIN({v}.price)", Kind.NUM),
            (f"{sem}MAX(x)", Kind.NUM), (f"{sem}MAX_BY({w}.price, {w}.ts)", Kind.NUM),
            (f"{sem}MIN_BY(x, ts)", Kind.NUM), (f"{sem}COUNT_IF(x < {k})", Kind.NUM),
            (f"{sem}BOOL_AND({w}.price > 100)", Kind.BOOL), (f"{sem}BOOL_OR(x = {k})", Kind.BOOL),
            (f"{sem}STDDEV({v}.price)", Kind.NUM), (f"{sem}VARIANCE(x)", Kind.NUM),
            (f"{sem}ARRAY_AGG({w}.x)", Kind.ARR),
            (f"{sem}SUM({w}.x) * {sem}COUNT(*) - {sem}MAX({w}.price)", Kind.NUM)])
        return Measure(*choice) if self.wide.random() < 0.6 else self.wide_aggregate(v, w, sem)

    def wide_aggregate(self, v: str, w: str, sem: str) -> Measure:
        """An aggregate over an expression, with FILTER or DISTINCT, of DECIMAL or STRING values."""
        r = self.wide
        k = r.randint(2, 7)
        feature, sql, kind, trino = r.choice([
            ("agg expression", f"{sem}SUM({w}.price * {w}.x)", Kind.NUM, None),
            ("agg expression", f"{sem}AVG({v}.price - {v}.x)", Kind.NUM, None),
            ("agg expression", f"{sem}MAX({w}.price + {w}.x * {k})", Kind.NUM, None),
            ("agg expression", f"{sem}MIN({v}.price - {v}.x)", Kind.NUM, None),
            ("agg expression", f"{sem}STDDEV({w}.price * 2 - {w}.x)", Kind.NUM, None),
            ("filter", f"{sem}SUM({w}.x) FILTER (WHERE {w}.price > {w}.x + 100)", Kind.NUM,
             f"{sem}SUM(CASE WHEN {w}.price > {w}.x + 100 THEN {w}.x END)"),
            ("filter", f"{sem}AVG({v}.price) FILTER (WHERE {v}.x < {k})", Kind.NUM,
             f"{sem}AVG(CASE WHEN {v}.x < {k} THEN {v}.price END)"),
            ("filter", f"{sem}COUNT(*) FILTER (WHERE x >= {k})", Kind.NUM, f"{sem}COUNT_IF(x >= {k})"),
            ("distinct", f"{sem}COUNT(DISTINCT {w}.x)", Kind.NUM,
             f"coalesce(cardinality(array_distinct({sem}ARRAY_AGG({w}.x))), 0)"),
            ("distinct", f"{sem}SUM(DISTINCT {v}.x)", Kind.NUM,
             _distinct_sum(sem, v)),
            ("decimal", f"{sem}SUM({w}.price * 0.25)", Kind.NUM, None),
            ("decimal", f"{sem}MAX({v}.price * 1.5 - {v}.x)", Kind.NUM, None),
            ("string", f"{sem}MIN(substr('ABCDEFGHIJ', {w}.x + 1, 1))", Kind.TEXT, None),
            ("string", f"{sem}MAX(substr('ABCDEFGHIJ', {v}.x + 1, 1))", Kind.TEXT, None)])
        self.features.add(feature)
        return Measure(sql, kind, trino)

def named_shapes() -> list[Shape]:
    """The shapes of issue 28's table (outside bench/vs_trino.py), numbered -1, -2, ..."""
    vshape = ("STRT DOWN+ UP+", (("DOWN", "price < PREV(price)"), ("UP", "price > PREV(price)")))
    num = lambda *sqls: tuple(Measure(s, Kind.NUM) for s in sqls)
    shapes = [
        ("ten measures V-shape", *vshape, (), num(
            "STRT.ts", "LAST(DOWN.ts)", "LAST(UP.ts)", "MIN(DOWN.price)", "MAX(UP.price)", "COUNT(DOWN.*)",
            "SUM(UP.price)", "FIRST(DOWN.price, 1)", "LAST(UP.price, 1)", "MATCH_NUMBER()"),
         "ONE ROW PER MATCH", "SKIP PAST LAST ROW"),
        ("ALL ROWS WITH UNMATCHED ROWS", *vshape, (), (Measure("CLASSIFIER()", Kind.STR),),
         "ALL ROWS PER MATCH WITH UNMATCHED ROWS", "SKIP PAST LAST ROW"),
        ("alternation of two-row groups in a loop", "S (U U | D D)+ X",
         (("U", "price > PREV(price)"), ("D", "price < PREV(price)"), ("X", "x < 3")), (),
         num("FIRST(S.ts)", "LAST(X.ts)"), "ONE ROW PER MATCH", "SKIP PAST LAST ROW"),
        ("SUBSET COUNT, LAST of another variable in DEFINE", "A B+ C",
         (("B", "price >= LAST(A.price) AND COUNT(U.*) <= 6"), ("C", "price < LAST(B.price)")),
         (("U", ("A", "B")),), num("FIRST(A.ts)", "COUNT(U.*)", "LAST(C.ts)"), "ONE ROW PER MATCH",
         "SKIP PAST LAST ROW"),
        ("SKIP TO NEXT ROW, overlapping", "A B+ C", (("B", "price > PREV(price)"), ("C", "x < 4")), (),
         num("FIRST(A.ts)", "LAST(C.ts)"), "ONE ROW PER MATCH", "SKIP TO NEXT ROW"),
    ]
    return [Shape(-1 - i, pattern, defines, subsets, measures, rows, skip, frozenset({name}))
            for i, (name, pattern, defines, subsets, measures, rows, skip) in enumerate(shapes)]


# ---- running --------------------------------------------------------------------------------
def same(a, b) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is None or y is None:
            if x is not y:
                return False
        elif isinstance(x, float) or isinstance(y, float):
            if not math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-9):
                return False
        elif x != y:
            return False
    return True


class Bench:
    def __init__(self, args):
        from vs_trino import Spark
        self.args = args
        self.spark = Spark(args.cores)
        self.group = 0

    def sparkcep(self, sql: str, limit: float):
        """``spark.sql(sql).collect()``, its jobs cancelled after ``limit`` seconds."""
        sc = self.spark.spark.sparkContext
        self.group += 1
        group = f"bench-shapes-{self.group}"
        sc.setJobGroup(group, group, interruptOnCancel=True)
        timer = threading.Timer(limit, sc.cancelJobGroup, (group,))
        timer.start()
        try:
            return tuple(self.spark.spark.sql(sql).collect()[0])
        finally:
            timer.cancel()

    def floor_sql(self, sql: str, out_rows: int) -> str:
        """A count over a no-op Arrow UDTF fed sparkcep's ``TABLE(...)`` argument for ``sql``,
        returning ``out_rows / input rows`` rows per row it is given."""
        import re

        import numpy as np
        import pyarrow as pa
        from pyspark.sql.functions import arrow_udtf

        import sql_ext
        from sql_vshape import table_argument

        spark = self.spark.spark
        rewritten = sql_ext.transpile(sql, spark)
        argument = table_argument(rewritten, re.search(r"sparkcep_mr_\w+", rewritten).group(0))
        schema = spark.sql(f"SELECT * FROM {argument[len('TABLE'):]}").schema
        fraction = out_rows / self.args.rows

        @arrow_udtf(returnType=schema)
        class Floor:
            def eval(self, batch):
                n = batch.num_rows
                take = int(round(n * fraction))
                yield pa.Table.from_batches([batch.take(pa.array(np.arange(take) % max(n, 1)))])

        spark.udtf.register("bench_shapes_floor", Floor)
        return f"SELECT count(*) FROM bench_shapes_floor({argument})"

    def measure(self, shape: Shape, trino) -> dict:
        args = self.args
        result = {"index": shape.index, "sql": shape.query(TABLE), "features": sorted(shape.features),
                  "measures": len(shape.measures), "rows_mode": shape.rows, "skip": shape.skip}
        spark_sql, trino_sql = shape.checksum("spark"), shape.checksum("trino")
        runs = {"sparkcep": lambda: self.sparkcep(spark_sql, 4 * args.timeout),
                "trino": lambda: tuple(trino.execute(trino_sql)[0])}
        best, answers = {}, {}
        for run in range(args.runs):
            for engine, fn in list(runs.items()):
                start = time.perf_counter()
                try:
                    answers[engine] = fn()
                except Exception as e:  # noqa: BLE001 (an error is an answer: compared below)
                    answers[engine] = "error: " + str(e).strip().splitlines()[0][:200]
                    del runs[engine]
                    continue
                best[engine] = min(best.get(engine, math.inf), time.perf_counter() - start)
            if run == 0 and "sparkcep" in runs and "floor" not in runs:
                try:
                    floor = self.floor_sql(spark_sql, answers["sparkcep"][0])
                    runs["floor"] = lambda: self.sparkcep(floor, 4 * args.timeout)
                    start = time.perf_counter()
                    answers["floor"] = runs["floor"]()
                    best["floor"] = time.perf_counter() - start
                except Exception as e:  # noqa: BLE001
                    answers["floor"] = "error: " + str(e).strip().splitlines()[0][:200]
                    runs.pop("floor", None)
        mine, theirs = answers["sparkcep"], answers["trino"]
        trino_timeout = isinstance(theirs, str) and ("EXCEEDED_TIME_LIMIT" in theirs or "time limit" in theirs)
        sparkcep_timeout = isinstance(mine, str) and "cancel" in mine.lower()
        if sparkcep_timeout:
            verdict = "sparkcep timeout"
        elif isinstance(mine, str) or isinstance(theirs, str):
            verdict = "trino timeout" if trino_timeout and not isinstance(mine, str) else \
                "both raise" if isinstance(mine, str) and isinstance(theirs, str) else "DIFFERENT"
        else:
            verdict = "same" if same(mine, theirs) else "DIFFERENT"
        result.update(verdict=verdict, sparkcep=str(mine), trino=str(theirs),
                      sparkcep_s=best.get("sparkcep"), trino_s=best.get("trino"), floor_s=best.get("floor"))
        if "sparkcep" in best:
            trino_s = args.timeout if trino_timeout else best.get("trino")
            result["ratio_trino"] = best["sparkcep"] / trino_s if trino_s else None
            result["ratio_floor"] = best["sparkcep"] / best["floor"] if best.get("floor") else None
        elif sparkcep_timeout:
            result["ratio_trino"] = result["ratio_floor"] = math.inf
        return result


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return math.nan
    position = q * (len(values) - 1)
    lo, hi = math.floor(position), math.ceil(position)
    return values[lo] + (values[hi] - values[lo]) * (position - lo)


def report(results: list[dict], show: int) -> str:
    timed = [r for r in results if r.get("ratio_trino") is not None]
    lines = [f"{len(results)} shapes, {len(timed)} timed; verdicts: "
             + ", ".join(f"{v} {sum(r['verdict'] == v for r in results)}"
                         for v in sorted({r['verdict'] for r in results})), "",
             "| ratio | median | p90 | p95 | max |", "|---|---:|---:|---:|---:|"]
    for key, label in (("ratio_trino", "sparkcep / Trino"), ("ratio_floor", "sparkcep / floor")):
        values = [r[key] for r in timed if r.get(key) is not None]
        lines.append(f"| {label} ({len(values)}) | {percentile(values, .5):.2f} | {percentile(values, .9):.2f} "
                     f"| {percentile(values, .95):.2f} | {max(values, default=math.nan):.2f} |")
    lines += ["", f"Worst {show} by sparkcep / Trino:", "",
              "| # | sparkcep / Trino | sparkcep / floor | sparkcep s | Trino s | floor s | measures | shape |",
              "|---:|---:|---:|---:|---:|---:|---:|---|"]
    worst = sorted(timed, key=lambda r: -r["ratio_trino"])[:show]
    for r in worst:
        pattern = r["sql"].split("PATTERN (", 1)[1].split(")\n", 1)[0] if "PATTERN (" in r["sql"] else "?"
        lines.append(f"| {r['index']} | {r['ratio_trino']:.2f} | {fmt(r.get('ratio_floor'))} | {fmt(r['sparkcep_s'])} "
                     f"| {fmt(r['trino_s'])} | {fmt(r['floor_s'])} | {r['measures']} | `{pattern.replace('|', PIPE)}` "
                     f"{r['rows_mode']}, {r['skip']} |")
    lines.append("")
    for r in worst:
        lines += [f"-- shape {r['index']} ({r['ratio_trino']:.2f} x Trino)", r["sql"], ""]
    for r in results:
        if r["verdict"] == "DIFFERENT":
            lines += [f"-- DIFFERENT: shape {r['index']}: sparkcep {r['sparkcep']} vs Trino {r['trino']}", r["sql"], ""]
    return "\n".join(lines)


PIPE = "\\|"                            # (a | inside a Markdown table cell)


def fmt(value) -> str:
    return "-" if value is None else f"{value:.2f}"


class EngineAlone:
    """sparkcep's engine in this process, no Spark workers: ``udtf.arrow.PartitionRunner`` (what
    the UDTF runs) over the Arrow batches of a shape's ``TABLE(...)`` argument, collected from
    Spark first (so the time is the engine's alone: no shuffle, no Arrow trips)."""

    def __init__(self, args):
        from vs_trino import Spark
        self.dump = None if args.dump is None else Path(args.dump)
        if self.dump is not None:
            self.dump.mkdir(parents=True, exist_ok=True)
        self.spark = Spark(args.cores)
        self.spark.load(TABLE, args.rows, args.symbols)

    def prepare(self, shape: Shape, stages: dict | None = None):
        """A function running the engine over the shape's input once, returning its row count
        (``stages``: see ``engine_run``)."""
        import re

        import udtf.arrow
        from sql_vshape import table_argument

        import sql_ext
        from pyspark.sql.pandas.types import to_arrow_schema

        captured = {}
        original = udtf.arrow.make_udtf

        def capture(plan, return_type, **kwargs):
            captured.update(plan=plan, return_type=return_type)
            return original(plan, return_type, **kwargs)

        udtf.arrow.make_udtf = capture
        try:
            rewritten = sql_ext.transpile(shape.checksum("spark"), self.spark.spark)
        finally:
            udtf.arrow.make_udtf = original
        argument = table_argument(rewritten, re.search(r"sparkcep_mr_\w+", rewritten).group(0))
        batches = self.spark.spark.sql(f"SELECT * FROM {argument[len('TABLE'):]}").toArrow().to_batches(10_000)
        schema = to_arrow_schema(captured["return_type"], timezone="UTC")

        if self.dump is not None:  # (for --replay: the same input under another checkout's engine)
            with pa.OSFile(str(self.dump / f"{shape.index}.arrow"), "wb") as sink:
                with pa.ipc.new_file(sink, batches[0].schema if batches else pa.schema([])) as writer:
                    for batch in batches:
                        writer.write_batch(batch)
            (self.dump / f"{shape.index}.json").write_text(json.dumps(
                {"plan": captured["plan"].to_json(), "schema": schema.serialize().to_pybytes().hex(),
                 "describe": shape.describe()}))
        return engine_run(captured["plan"], schema, batches, stages)


def engine_run(plan, schema, batches, stages: dict | None = None, sink: list | None = None):
    """A function running ``udtf.arrow.PartitionRunner`` over ``batches`` once, returning the
    number of rows out; with ``stages``, its stages' seconds added there (``sql_vshape.instrument``);
    with ``sink``, its output batches appended there."""
    import itertools

    import udtf.arrow

    def run() -> int:
        runner = udtf.arrow.PartitionRunner(plan, schema)
        if stages is not None:
            from sql_vshape import instrument
            instrument(runner, stages)
        out = itertools.chain((b for batch in batches for b in runner.feed(batch)), runner.finish())
        return sum(b.num_rows for b in (out if sink is None else map(lambda b: sink.append(b) or b, out)))

    return run


def digest(schema: pa.Schema, batches: list) -> str:
    """A hash of the values of ``batches`` (rows in order), whatever their chunking."""
    import hashlib

    table = pa.Table.from_batches(batches, schema)
    return hashlib.sha1(repr([column.to_pylist() for column in table.columns]).encode()).hexdigest()[:12]


def replay(args) -> None:
    """Time (CPU seconds) the engine of this checkout and of ``--against`` (another checkout, in a child
    process) on the inputs ``--dump`` wrote, shape by shape, runs interleaved, best of
    ``--runs``; print both per shape (and whether their answers differ) and their distributions."""
    import subprocess

    folder = Path(args.replay)
    shapes = sorted(int(p.stem) for p in folder.glob("*.json"))
    children = {}
    for name, path in (("after", Path.cwd()), ("before", Path(args.against))):
        children[name] = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--replay-child", str(folder)],
            cwd=path, env={**os.environ, "PYTHONPATH": f"{path}:{path / 'bench'}"},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    times = {name: [] for name in children}
    for index in shapes:
        best, outs = {}, {}
        for _ in range(args.runs):
            for name, child in children.items():
                child.stdin.write(f"{index}\n")
                child.stdin.flush()
                seconds, out, values = child.stdout.readline().split()
                best[name] = min(best.get(name, math.inf), float(seconds))
                outs[name] = (int(out), values)
        for name in children:
            times[name].append((best[name], index))
        same = "" if outs["before"] == outs["after"] else f"  ANSWERS DIFFER {outs['before']} != {outs['after']}"
        print(f"shape {index:4d} before {best['before']:6.3f} s after {best['after']:6.3f} s "
              f"x{best['after'] / max(best['before'], 1e-9):5.2f}  {outs['after'][0]:,} rows{same} | "
              f"{json.loads((folder / f'{index}.json').read_text())['describe']}", flush=True)
    for child in children.values():
        child.stdin.close()
        child.wait()
    for name, pairs in times.items():
        seconds = [t for t, _ in pairs]
        worst = ", ".join(f"{i} ({t:.2f} s)" for t, i in sorted(pairs, reverse=True)[:args.show])
        print(f"{name:6}: median {percentile(seconds, .5):.3f} s, p90 {percentile(seconds, .9):.3f} s, "
              f"max {max(seconds):.3f} s over {len(seconds)} shapes; slowest {worst}")


def replay_child(folder: Path) -> None:
    """--replay's child: for each shape index read from stdin, '<seconds> <rows out> <digest of
    the rows out>' (the digest from one more run, untimed, the first time)."""
    from udtf.plan import EnginePlan

    digests = {}
    for line in sys.stdin:
        index = int(line)
        meta = json.loads((folder / f"{index}.json").read_text())
        with pa.memory_map(str(folder / f"{index}.arrow")) as source:
            batches = pa.ipc.open_file(source).read_all().to_batches()
        schema = pa.ipc.read_schema(pa.py_buffer(bytes.fromhex(meta["schema"])))
        run = engine_run(EnginePlan.from_json(meta["plan"]), schema, batches)
        start = time.process_time()  # CPU seconds: the load of other processes distorts them little
        out = run()
        seconds = time.process_time() - start
        if index not in digests:
            sink = []
            engine_run(EnginePlan.from_json(meta["plan"]), schema, batches, sink=sink)()
            digests[index] = digest(schema, sink)
        print(f"{seconds:.6f} {out} {digests[index]}", flush=True)


def engine_times(args, shapes: list[Shape]) -> None:
    """Seconds of the engine alone per shape, slowest first."""
    from collections import defaultdict

    from sql_vshape import STAGES

    engine = EngineAlone(args)
    times = []
    for shape in shapes:
        stages = defaultdict(float) if args.stages else None
        run = engine.prepare(shape, stages)
        start = time.perf_counter()
        out = run()
        times.append((time.perf_counter() - start, out, shape))
        split = "" if stages is None else " (" + ", ".join(f"{s} {stages[s]:.2f}" for s in STAGES) + \
            f", rest {times[-1][0] - sum(stages.values()):.2f})"
        print(f"shape {shape.index:4d} engine {times[-1][0]:6.2f} s{split}, {out:,} rows | {shape.describe()}",
              flush=True)
    per_row = [seconds * 1e6 / args.rows for seconds, _, _ in times]
    print(f"\nengine µs per input row over {len(times)} shapes: median {percentile(per_row, .5):.2f}, "
          f"p95 {percentile(per_row, .95):.2f}, max {max(per_row):.2f}")
    print("\nslowest:")
    for seconds, out, shape in sorted(times, key=lambda t: -t[0])[:args.show]:
        print(f"shape {shape.index:4d} engine {seconds:6.2f} s, {out:,} rows | {shape.describe()}")


def profile(args, index: int) -> None:
    """cProfile of the engine alone on shape ``index``."""
    import cProfile
    import pstats

    shape = named_shapes()[-1 - index] if index < 0 else Generator(args.seed).shape(index)
    print(f"-- shape {index}: {shape.describe()}\n{shape.query(TABLE)}")
    run = EngineAlone(args).prepare(shape)
    profiler = cProfile.Profile()
    start = time.perf_counter()
    out = profiler.runcall(run)
    print(f"{args.rows:,} rows -> {out:,} rows in {time.perf_counter() - start:.2f} s (profiled)")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(30)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--symbols", type=int, default=100)
    parser.add_argument("--shapes", type=int, default=50)
    parser.add_argument("--start", type=int, default=0, help="index of the first shape")
    parser.add_argument("--only", type=int, nargs="+", metavar="INDEX", help="these shapes instead of a range")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60.0, help="Trino statement limit, seconds")
    parser.add_argument("--budget", type=float, default=math.inf,
                        help="start no shape after this many seconds (chunks under a time limit)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--show", type=int, default=10, help="how many worst shapes to print")
    parser.add_argument("--print", action="store_true", help="print the shapes' SQL and stop")
    parser.add_argument("--engine", action="store_true",
                        help="time sparkcep's engine alone (in this process, no Trino) on each shape")
    parser.add_argument("--stages", action="store_true",
                        help="with --engine: split each shape's engine time into its stages (sql_vshape.instrument)")
    parser.add_argument("--profile", type=int, metavar="INDEX", help="cProfile sparkcep's engine on this shape")
    parser.add_argument("--named", action="store_true", help="the shapes of issue 28's table instead of drawn ones")
    parser.add_argument("--dump", metavar="DIR", help="with --engine: write each shape's engine input here")
    parser.add_argument("--replay", metavar="DIR", help="time this checkout's engine against --against's on "
                        "the inputs --dump wrote (no Spark)")
    parser.add_argument("--against", metavar="CHECKOUT", help="with --replay: the other checkout (e.g. main's)")
    parser.add_argument("--replay-child", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--report", nargs="+", metavar="JSON", help="report over these result files and stop")
    args = parser.parse_args(argv)
    if args.report:
        results = [r for path in args.report for r in json.loads(Path(path).read_text())["results"]]
        print(report(results, args.show))
        return 0
    if args.profile is not None:
        profile(args, args.profile)
        return 0
    if args.replay_child:
        replay_child(Path(args.replay_child))
        return 0
    if args.replay:
        replay(args)
        return 0
    generator = Generator(args.seed)
    indexes = args.only or range(args.start, args.start + args.shapes)
    shapes = named_shapes() if args.named else [generator.shape(i) for i in indexes]
    if args.engine:
        engine_times(args, shapes)
        return 0
    if args.print:
        for s in shapes:
            print(f"-- shape {s.index}: {s.describe()}\n{s.query(TABLE)}\n")
        return 0
    from vs_trino import Trino
    from server import TrinoServer  # (tests/trino/server.py, on the path vs_trino sets)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # (so that Trino is stopped by its pid)

    bench = Bench(args)
    load = os.getloadavg()[0]
    print(f"load average at start: {load:.1f}; {args.rows:,} rows, {args.symbols} symbols; "
          f"shapes {args.start}..{args.start + args.shapes - 1} of seed {args.seed}", flush=True)
    results = []
    with TrinoServer(heap="6G", query_memory="4GB") as server:
        trino = Trino(server)
        bench.spark.load(TABLE, args.rows, args.symbols)
        trino.load(TABLE, args.rows, args.symbols)
        trino.execute(f"SET SESSION query_max_execution_time = '{int(args.timeout)}s'")   # (after the load)
        warm = shapes[0]               # (untimed: the Python workers' start, both engines' first plans)
        bench.sparkcep(warm.checksum("spark"), 4 * args.timeout)
        trino.execute(warm.checksum("trino"))
        began = time.monotonic()
        for shape in shapes:
            if time.monotonic() - began > args.budget:
                print(f"budget spent: stopping before shape {shape.index}", flush=True)
                break
            result = bench.measure(shape, trino)
            results.append(result)
            print(f"shape {shape.index:4d} {result['verdict']:13} x trino {fmt(result.get('ratio_trino')):>6} "
                  f"x floor {fmt(result.get('ratio_floor')):>6}  sparkcep {fmt(result['sparkcep_s'])} s "
                  f"trino {fmt(result['trino_s'])} s floor {fmt(result['floor_s'])} s | {shape.describe()}",
                  flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(
                    {"rows": args.rows, "symbols": args.symbols, "seed": args.seed, "runs": args.runs,
                     "load_at_start": load, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                     "results": results}, indent=1))
    print(report(results, args.show))
    return 1 if any(r["verdict"] == "DIFFERENT" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
