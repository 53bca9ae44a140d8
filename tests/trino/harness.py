"""Run abstract queries (querygen.Query) on sparkcep and on Trino, compare, minimize.

* :class:`SparkEngine` runs many queries in ONE Spark job: each ``spark.sql(query)`` (the
  sparkcep rewrite; analysis errors surface here, per query) becomes
  ``SELECT <i> AS q, to_json(struct(*)) AS r`` and the frames are UNION ALL-ed; a batch whose
  job fails is bisected down to the failing query.
* :class:`TrinoEngine` runs the queries as separate statements on a few concurrent connections.
* :func:`compare` normalizes values (numbers -> Decimal, dates/timestamps -> ISO text, booleans
  tagged) and compares the result rows as multisets, plus the column names.  Both engines
  raising counts as agreement; a Trino timeout is not compared.
* :func:`minimize` shrinks a disagreeing (query, table) pair to a small repro.

CLI (a campaign): ``python tests/trino/harness.py [--queries N] [--seed S] [--extended]``
(starts Spark and Trino itself; see tests/trino/README.md).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from functools import reduce

import querygen as qg
from server import load_table

TS_FORMAT = "yyyy-MM-dd HH:mm:ss.SSSSSS"


@dataclass
class Outcome:
    columns: list[str] | None = None
    rows: list[tuple] | None = None        # normalized values
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def show(self, limit: int = 40) -> str:
        if self.error is not None:
            return "ERROR: " + self.error
        lines = [" | ".join(self.columns or [])]
        for r in sorted(self.rows, key=_sort_key)[:limit]:
            lines.append(" | ".join(_show_value(v) for v in r))
        if len(self.rows) > limit:
            lines.append(f"... ({len(self.rows)} rows)")
        return "\n".join(lines) if self.rows else lines[0] + "\n(no rows)"


def _show_value(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, Bool):
        return "true" if v.value else "false"
    if isinstance(v, Decimal):
        return format(v.normalize(), "f") if v == v.to_integral_value() else str(v.normalize())
    return str(v)


def _sort_key(row):
    return tuple((0, "") if v is None else (1, _show_value(v)) for v in row)


@dataclass(frozen=True)
class Bool:
    value: bool


def normalize(v):
    """One comparable form for a value from either engine."""
    if v is None:
        return None
    if isinstance(v, bool):
        return Bool(v)
    if isinstance(v, float):
        if v != v:
            return "NaN"
        if v in (float("inf"), float("-inf")):
            return str(v)
        return Decimal(repr(v))
    if isinstance(v, int):
        return Decimal(v)
    if isinstance(v, Decimal):
        return v
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ", timespec="microseconds")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return tuple(normalize(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, normalize(x)) for k, x in v.items())
    return v


def _short(exc: BaseException) -> str:
    text = str(exc)
    m = re.search(r"(MatchRecognizeError[^\n]*)", text)
    if m:
        return m.group(1)[:400]
    m = re.search(r"\[([A-Z_]+(?:\.[A-Z_]+)?)\][^\n]*", text)
    if m:
        return f"{type(exc).__name__}: {m.group(0)[:400]}"
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return f"{type(exc).__name__}: {first[:400]}"


# ---------------------------------------------------------------------------------------------
# Engines
# ---------------------------------------------------------------------------------------------

class SparkEngine:
    """sparkcep through ``spark.sql`` (``sql_ext.enable`` applied), batched into UNION ALL jobs."""

    def __init__(self, spark, batch: int = 60):
        import sql_ext

        self.spark = sql_ext.enable(spark)
        self.batch = batch
        self.jobs = 0
        self.timings = Counter()

    def load(self, tables) -> None:
        """Each table a temporary view of its query's analysed plan (a DataFrame's view): a view
        made by ``CREATE TEMP VIEW ... AS`` keeps its SQL text, which Spark parses and analyses
        again at every reference (about 20-90 ms a look-up of these VALUES, 7x the DataFrame's)."""
        for t in tables:
            self.spark.sql(t.spark_query()).createOrReplaceTempView(t.name)

    def drop(self, names) -> None:
        for n in names:
            self.spark.catalog.dropTempView(n)

    def run_many(self, sqls: list[str], alone=None) -> list[Outcome]:
        """Each query's outcome, its jobs run here (``frame``)."""
        out, jobs = self.frame(sqls, alone)
        for job in jobs:
            job()
        return out  # type: ignore[return-value]

    def run_against(self, sqls: list[str], trino_futures, step: int | None = None) -> tuple[list[Outcome], float]:
        """Each query's outcome, and the seconds spent waiting for Trino.  ``trino_futures[i]``:
        Trino's outcome of query i, running ahead on its threads; Spark takes the queries
        ``step`` (default ``batch``) at a time, and runs those Trino refused one per job (they are
        likely to fail in Spark too, and a failing query in a UNION ALL job costs a bisection).
        A step's Spark jobs run on a thread of their own while this one has Spark analyse the
        next step (``spark.sql`` is mostly the driver's and this process's work, a job the
        executors' and the Python workers'); Trino's outcomes are awaited only once the step is
        analysed."""
        step = step or self.batch
        parts: list[list] = []
        wait = 0.0
        jobs = []

        def refused(futures) -> list[bool]:
            nonlocal wait
            w0 = time.monotonic()
            flags = [not f.result().ok for f in futures]
            wait += time.monotonic() - w0
            return flags
        with ThreadPoolExecutor(1, thread_name_prefix="spark-jobs") as pool:
            for start in range(0, len(sqls), step):
                out, batch_jobs = self.frame(sqls[start:start + step],
                                             alone=lambda s=start: refused(trino_futures[s:s + step]))
                parts.append(out)
                jobs += [pool.submit(job) for job in batch_jobs]
            for job in jobs:
                job.result()
        return [o for out in parts for o in out], wait

    def frame(self, sqls: list[str], alone=None) -> tuple[list, list]:
        """``spark.sql`` of each query (its errors are its outcome at once), framed for a UNION
        ALL: (the outcomes, None where a job still has to fill them in; those jobs, each a
        callable that runs one Spark job and fills in its queries' outcomes).  ``alone[i]``:
        query i gets a job of its own (expected to fail); ``alone`` may be a function giving that
        list, called once every query is analysed."""
        from udtf.errors import MatchRecognizeError

        out: list[Outcome | None] = [None] * len(sqls)
        single: list[tuple[int, object, list[str]]] = []
        pending: list[tuple[int, object, list[str]]] = []
        framed_all: list[tuple[int, object, list[str]]] = []
        opts = f"map('ignoreNullFields', 'false', 'timestampFormat', '{TS_FORMAT}')"
        for i, sql in enumerate(sqls):
            try:
                t0 = time.monotonic()
                df = self.spark.sql(sql)
                self.timings["spark.sql"] += time.monotonic() - t0
                cols = df.columns
                framed = df.selectExpr(f"{i} AS q", f"to_json(struct(*), {opts}) AS r")
            except MatchRecognizeError as e:
                out[i] = Outcome(error=f"MatchRecognizeError: {e}")
                continue
            except Exception as e:  # Spark analysis / parse errors
                out[i] = Outcome(error=_short(e))
                continue
            framed_all.append((i, framed, cols))
        alone = alone() if callable(alone) else alone
        for i, framed, cols in framed_all:
            (single if alone and alone[i] else pending).append((i, framed, cols))
        jobs = [lambda c=c: self._timed("single jobs", [c], out) for c in single]
        jobs += [lambda s=start: self._timed("union jobs", pending[s:s + self.batch], out)
                 for start in range(0, len(pending), self.batch)]
        return out, jobs

    def _timed(self, what: str, chunk, out) -> None:
        t0 = time.monotonic()
        self._run_chunk(chunk, out)
        self.timings[what] += time.monotonic() - t0
        self.timings[what + " n"] += 1

    def _run_chunk(self, chunk, out) -> None:
        if not chunk:
            return
        try:
            self.jobs += 1
            union = reduce(lambda a, b: a.unionAll(b), [f for _, f, _ in chunk])
            got = union.collect()
        except Exception as e:
            if len(chunk) == 1:
                out[chunk[0][0]] = Outcome(error=_short(e))
                return
            mid = len(chunk) // 2
            self._run_chunk(chunk[:mid], out)
            self._run_chunk(chunk[mid:], out)
            return
        per: dict[int, list[tuple]] = {i: [] for i, _, _ in chunk}
        for row in got:
            pairs = json.loads(row["r"], parse_float=Decimal, object_pairs_hook=lambda kv: kv)
            per[row["q"]].append(tuple(normalize(v) for _, v in pairs))
        for i, _, cols in chunk:
            out[i] = Outcome(columns=[c.lower() for c in cols], rows=per[i])


# Session settings for the tier: one shuffle partition and no AQE (each MATCH_RECOGNIZE
# repartitions its input; a UNION ALL of 60 of them is 60 tiny shuffle stages, which AQE would
# plan one by one)
TIER_SPARK_CONFS = {"spark.sql.shuffle.partitions": "1", "spark.sql.adaptive.enabled": "false",
                    "spark.sql.leafNodeDefaultParallelism": "1"}


class TrinoEngine:
    """Trino: each query its own statement, ``threads`` connections in parallel."""

    def __init__(self, server, threads: int = 4, max_seconds: int = 60):
        self.server = server
        self.threads = threads
        # Trino's matcher can take exponential time on some patterns (seen: a {2,} loop over
        # a body of excluded/optional alternatives); such a query fails with
        # EXCEEDED_TIME_LIMIT instead of holding a core
        self.max_seconds = max_seconds
        self._local = threading.local()
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="trino")

    def _conn(self):
        c = getattr(self._local, "conn", None)
        if c is None:
            c = self._local.conn = self.server.connect(
                session_properties={"query_max_execution_time": f"{self.max_seconds}s"})
        return c

    def load(self, tables) -> None:
        def one(t):
            load_table(self._conn(), t.name, t.trino_columns(), t.rows)
        list(self.pool.map(one, tables))

    def drop(self, names) -> None:
        def one(n):
            cur = self._conn().cursor()
            cur.execute(f"DROP TABLE IF EXISTS memory.default.{n}")
            cur.fetchall()
        list(self.pool.map(one, names))

    def run_one(self, sql: str) -> Outcome:
        import trino.exceptions as te

        cur = self._conn().cursor()
        try:
            cur.execute(sql)
            rows = cur.fetchall()
        except te.TrinoUserError as e:
            return Outcome(error=f"TrinoUserError {e.error_name}: {e.message}")
        except te.TrinoQueryError as e:
            return Outcome(error=f"{type(e).__name__} {e.error_name}: {e.message}")
        cols = [d[0].lower() for d in cur.description]
        return Outcome(columns=cols, rows=[tuple(normalize(v) for v in r) for r in rows])

    def submit_many(self, sqls: list[str]):
        return [self.pool.submit(self.run_one, s) for s in sqls]

    def run_many(self, sqls: list[str]) -> list[Outcome]:
        return [f.result() for f in self.submit_many(sqls)]

    def close(self) -> None:
        self.pool.shutdown(wait=True)


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------

def kind(spark: Outcome, trino: Outcome) -> str:
    if trino.error and "EXCEEDED_TIME_LIMIT" in trino.error:
        return "trino-timeout"             # no answer to compare with (Trino's matcher backtracks)
    if spark.ok and trino.ok:
        return "rows"
    if not spark.ok and not trino.ok:
        return "both-raise"
    return "sparkcep-raises" if not spark.ok else "trino-raises"


def error_class(error: str | None) -> str | None:
    """The stable part of an error message (for keeping a disagreement while minimizing)."""
    if error is None:
        return None
    if error.startswith("TrinoUserError"):
        return error.split(":", 1)[0]
    text = re.sub(r"line \d+:\d+:?", "", error)
    return re.sub(r"\b[A-Z]\b", "V", text)[:60]


def signature(spark: Outcome, trino: Outcome) -> tuple:
    return kind(spark, trino), error_class(spark.error), error_class(trino.error)


def compare(spark: Outcome, trino: Outcome) -> str | None:
    """None when the engines agree, else a one-line description of the difference."""
    k = kind(spark, trino)
    if k in ("both-raise", "trino-timeout"):
        return None
    if k == "sparkcep-raises":
        return f"sparkcep raises, Trino returns {len(trino.rows)} rows: {spark.error}"
    if k == "trino-raises":
        return f"Trino raises, sparkcep returns {len(spark.rows)} rows: {trino.error}"
    if spark.columns != trino.columns:
        return f"columns differ: sparkcep {spark.columns} vs Trino {trino.columns}"
    a, b = Counter(spark.rows), Counter(trino.rows)
    if a != b:
        only_s = sum((a - b).values())
        only_t = sum((b - a).values())
        return f"rows differ: {only_s} only in sparkcep, {only_t} only in Trino"
    return None


@dataclass
class Case:
    """One compared query."""
    query: qg.Query
    table: qg.Table
    spark: Outcome
    trino: Outcome
    diff: str | None = None
    known: str | None = None               # id of the known disagreement it matches

    @property
    def kind(self) -> str:
        return kind(self.spark, self.trino)

    @property
    def signature(self) -> tuple:
        return signature(self.spark, self.trino)

    def report(self) -> str:
        return "\n".join([
            f"-- {self.diff}" + (f"  [known: {self.known}]" if self.known else ""),
            "-- data (table " + self.table.name + "):",
            self.table.describe(),
            "-- sparkcep (Spark SQL):",
            self.query.render("spark"),
            "-- Trino SQL:",
            self.query.render("trino"),
            "-- sparkcep result:",
            self.spark.show(),
            "-- Trino result:",
            self.trino.show(),
        ])


class Runner:
    """Both engines over a set of tables; ``run`` compares a list of queries."""

    def __init__(self, spark_engine: SparkEngine, trino_engine: TrinoEngine):
        self.spark = spark_engine
        self.trino = trino_engine
        self.tables: dict[str, qg.Table] = {}
        self.stats = Counter()
        self.timings = Counter()

    def load(self, tables) -> None:
        t0 = time.monotonic()
        self.trino.load(tables)
        self.timings["trino_load"] += time.monotonic() - t0
        t0 = time.monotonic()
        self.spark.load(tables)
        self.timings["spark_load"] += time.monotonic() - t0
        for t in tables:
            self.tables[t.name] = t

    def drop(self, names) -> None:
        names = [n for n in names if n in self.tables]
        self.trino.drop(names)
        self.spark.drop(names)
        for n in names:
            self.tables.pop(n, None)

    def run(self, queries: list[qg.Query]) -> list[Case]:
        """Both engines' outcomes of ``queries`` compared (``SparkEngine.run_against``: Trino runs
        ahead, Spark pipelines analysis and jobs)."""
        t0 = time.monotonic()
        futures = self.trino.submit_many([q.render("trino") for q in queries])
        s_out, wait = self.spark.run_against([q.render("spark") for q in queries], futures)
        t_out = [f.result() for f in futures]
        self.timings["wall"] += time.monotonic() - t0
        self.timings["waiting_for_trino"] += wait
        self.timings["queries"] += len(queries)
        cases = []
        for q, s, t in zip(queries, s_out, t_out):
            c = Case(q, self.tables[q.table], s, t, compare(s, t))
            self.stats[c.kind + ("-disagree" if c.diff else "")] += 1
            cases.append(c)
        return cases


# ---------------------------------------------------------------------------------------------
# Minimization
# ---------------------------------------------------------------------------------------------

def _pat_reductions(p: qg.Pat):
    """Patterns one step simpler than ``p``."""
    if isinstance(p, qg.PSeq):
        for i in range(len(p.items)):
            rest = p.items[:i] + p.items[i + 1:]
            if rest:
                yield rest[0] if len(rest) == 1 else qg.PSeq(rest)
    if isinstance(p, qg.PAlt):
        for i in range(len(p.options)):
            rest = p.options[:i] + p.options[i + 1:]
            yield rest[0] if len(rest) == 1 else qg.PAlt(rest)
    if isinstance(p, qg.PPermute):
        for i in range(len(p.items)):
            rest = p.items[:i] + p.items[i + 1:]
            if rest:
                yield qg.PPermute(rest)
        yield qg.PSeq(list(p.items)) if len(p.items) > 1 else p.items[0]
    if isinstance(p, (qg.PGroup, qg.PExclude)):
        yield p.inner
    if isinstance(p, qg.PQuant):
        yield p.inner
        if p.reluctant:
            yield dataclasses.replace(p, reluctant=False)
        for simpler in ("*", "+", "?"):
            if p.text != simpler and len(p.text) > 1:
                yield dataclasses.replace(p, text=simpler)
    # recurse into children
    for attr in ("items", "options"):
        kids = getattr(p, attr, None)
        if kids:
            for i, kid in enumerate(kids):
                for r in _pat_reductions(kid):
                    yield dataclasses.replace(p, **{attr: kids[:i] + [r] + kids[i + 1:]})
    if isinstance(p, (qg.PGroup, qg.PExclude, qg.PQuant)):
        for r in _pat_reductions(p.inner):
            yield dataclasses.replace(p, inner=r)


def _expr_reductions(e: qg.Expr):
    for c in e.children():
        if not isinstance(c, qg.Raw) or isinstance(e, qg.Op) and e.op in ("AND", "OR"):
            yield c
    if isinstance(e, qg.Func) and e.semantics:
        yield dataclasses.replace(e, semantics="")


def _condition_reductions(e: qg.Expr):
    """Simpler boolean conditions: a side of AND/OR, the operand of NOT."""
    if isinstance(e, qg.Op) and e.op in ("AND", "OR"):
        yield e.left
        yield e.right
    if isinstance(e, qg.Unary) and e.template.startswith("NOT"):
        yield e.arg


def query_reductions(q: qg.Query):
    if isinstance(q, qg.WindowQuery):
        for i in range(len(q.calls)):
            if len(q.calls) > 1:
                yield q.replace(calls=q.calls[:i] + q.calls[i + 1:])
        if q.frame_end is not None:
            yield q.replace(frame_end=None)
        if q.search:
            yield q.replace(search="")
    for i in range(len(q.measures)):
        yield q.replace(measures=q.measures[:i] + q.measures[i + 1:])
    for i, (e, n) in enumerate(q.measures):
        for r in _expr_reductions(e):
            yield q.replace(measures=q.measures[:i] + [(r, n)] + q.measures[i + 1:])
    for i in range(len(q.defines)):
        if len(q.defines) > 1:             # DEFINE is mandatory in Trino: keep one
            yield q.replace(defines=q.defines[:i] + q.defines[i + 1:])
    for i, (v, e) in enumerate(q.defines):
        for r in _condition_reductions(e):
            yield q.replace(defines=q.defines[:i] + [(v, r)] + q.defines[i + 1:])
    if q.skip != ("past",):
        yield q.replace(skip=("past",))
    if q.rows not in ("one", ""):
        yield q.replace(rows="all") if q.rows != "all" else q.replace(rows="one")
    if q.partition:
        yield q.replace(partition=False)
    if q.order != [("id", False, False)]:
        yield q.replace(order=[("id", False, False)])
    for i in range(len(q.subsets)):
        yield q.replace(subsets=q.subsets[:i] + q.subsets[i + 1:])
    for p in _pat_reductions(q.pattern):
        vars_left = set(qg.pattern_vars(p))
        kept = [(v, e) for v, e in q.defines if v in vars_left or v not in qg.pattern_vars(q.pattern)]
        if kept and len(kept) < len(q.defines):
            yield q.replace(pattern=p, defines=kept)
        yield q.replace(pattern=p)


def table_reductions(t: qg.Table):
    keys = []
    for r in t.rows:
        if r[0] not in keys:
            keys.append(r[0])
    if len(keys) > 1:
        for k in keys:
            yield [r for r in t.rows if r[0] != k]
    n = len(t.rows)
    size = n // 2
    while size >= 2:                       # ddmin-style: drop runs of rows first
        for start in range(0, n, size):
            yield t.rows[:start] + t.rows[start + size:]
        size //= 2
    for i in range(len(t.rows)):
        yield t.rows[:i] + t.rows[i + 1:]
    # NULL out a value
    for i, r in enumerate(t.rows):
        for j in range(2, len(r)):
            if r[j] is not None:
                yield t.rows[:i] + [r[:j] + (None,) + r[j + 1:]] + t.rows[i + 1:]


def minimize(runner: Runner, case: Case, *, max_rounds: int = 80, chunk: int = 16,
             log=lambda s: None) -> Case:
    """Greedy one-step reductions of query and data, keeping the disagreement kind."""
    best = case
    counter = [0]

    def fresh_table(rows) -> qg.Table:
        counter[0] += 1
        return qg.Table(f"trmin_{id(case) % 100000}_{counter[0]}", rows)

    for _ in range(max_rounds):
        cands: list[tuple[qg.Query, qg.Table | None]] = []
        seen = set()
        for q in query_reductions(best.query):
            key = q.render("spark")
            if key not in seen:
                seen.add(key)
                cands.append((q, None))
        for rows in table_reductions(best.table):
            cands.append((best.query, rows))
        improved = False
        for start in range(0, len(cands), chunk):
            part = cands[start:start + chunk]
            new_tables = []
            queries = []
            for q, rows in part:
                if rows is None:
                    queries.append(q)
                else:
                    t = fresh_table(rows)
                    new_tables.append(t)
                    queries.append(q.replace(table=t.name))
            if new_tables:
                runner.load(new_tables)
            results = runner.run(queries)
            hit = next((c for c in results if c.diff and c.signature == best.signature), None)
            runner.drop([t.name for t in new_tables if hit is None or t.name != hit.query.table])
            if hit is not None:
                if best.table.name.startswith("trmin_") and best.table.name != hit.query.table:
                    runner.drop([best.table.name])
                best = hit
                improved = True
                log(f"  reduced: {len(best.table.rows)} rows, {len(best.query.render('spark'))} chars")
                break
        if not improved:
            break
    return best


# ---------------------------------------------------------------------------------------------
# CLI: a campaign
# ---------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    import argparse
    import os
    import sys

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tables", type=int, default=24)
    ap.add_argument("--extended", action="store_true")
    ap.add_argument("--windows", action="store_true", help="row pattern recognition in a window (R020) instead")
    ap.add_argument("--minimize", type=int, default=20, help="minimize at most this many unexpected cases")
    ap.add_argument("--out", default="-", help="report file (default stdout)")
    ap.add_argument("--batch", type=int, default=60)
    args = ap.parse_args(argv)

    sys.path.insert(0, str(qg_root()))
    from sql_examples.local_spark import get_spark

    import known as known_mod
    from server import TrinoServer

    t0 = time.monotonic()
    with TrinoServer() as srv:
        print(f"trino up in {srv.start_seconds}", file=sys.stderr)
        spark = get_spark(app_name="sparkcep-trino-campaign")
        for key, value in TIER_SPARK_CONFS.items():
            spark.conf.set(key, value)
        runner = Runner(SparkEngine(spark, batch=args.batch), TrinoEngine(srv))
        gen = qg.Generator(args.seed, extended=args.extended)
        tables, queries = (gen.window_corpus if args.windows else gen.corpus)(args.queries, args.tables)
        runner.load(tables)
        cases = []
        for start in range(0, len(queries), 300):
            cases += runner.run(queries[start:start + 300])
            print(f"{len(cases)} queries, {time.monotonic() - t0:.0f} s, {dict(runner.stats)}", file=sys.stderr)
        bad = [c for c in cases if c.diff]
        for c in bad:
            c.known = known_mod.classify(c.query, c)
        unexpected = [c for c in bad if not c.known]
        out = open(args.out, "w") if args.out != "-" else sys.stdout
        print(f"# {len(cases)} queries, {len(bad)} disagreements, {len(unexpected)} unexpected", file=out)
        print(f"# stats {dict(runner.stats)}; timings {dict(runner.timings)}", file=out)
        print(f"# spark timings {dict(runner.spark.timings)} jobs {runner.spark.jobs}", file=out)
        print(f"# by known id: {Counter(c.known for c in bad)}", file=out)
        both = Counter((c.spark.error[:90], c.trino.error[:90]) for c in cases if c.kind == "both-raise")
        print("# both raise:", file=out)
        for (se, te), n in both.most_common():
            print(f"#   {n:4d}  {se}  ||  {te}", file=out)
        unexpected.sort(key=lambda c: len(c.query.render('spark')) + 40 * len(c.table.rows))
        for n, c in enumerate(unexpected):
            if n < args.minimize:
                print(f"minimizing {n + 1}/{min(len(unexpected), args.minimize)}", file=sys.stderr)
                c = minimize(runner, c, log=lambda s: print(s, file=sys.stderr))
            print("\n" + "=" * 100 + f"\n## unexpected #{n + 1}\n" + c.report(), file=out)
            out.flush()
        runner.trino.close()
    return 0


def qg_root():
    from pathlib import Path
    return Path(__file__).resolve().parents[2]


if __name__ == "__main__":
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    raise SystemExit(main())
