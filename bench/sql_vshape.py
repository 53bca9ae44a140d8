"""V-shape ticker query on Spark: sparkcep vs. a hand-written window query vs. a no-op UDTF.

    python bench/sql_vshape.py [--rows 2000000] [--symbols 100] [--runs 3] [--profile]

The query (the issue's benchmark)::

    SELECT * FROM ticks MATCH_RECOGNIZE (
      PARTITION BY symbol ORDER BY ts
      MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
      ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
      PATTERN (STRT DOWN+ UP+)
      DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)) AS m

Data: per symbol ``ts = 0..n-1`` and ``price = 100 + cumulative sum of +-1 steps`` (never
flat), fixed seed, generated with numpy and written once as parquet (reused by later runs with
the same parameters).  Rows are laid out in time order with the symbols interleaved, like a
tick feed, in several files so every core reads.

Variants, all in one session over the same parquet table, each run ``--runs`` times
(round-robin) with a full ``.write.format("noop")`` action; the time includes ``spark.sql``
(for sparkcep: the rewrite and its schema look-ups):

* ``window``      the same rows with plain window functions (``WINDOW_SQL``, derivation below);
* ``noop``        a no-op ``arrow_udtf`` over ``TABLE(SELECT symbol, ts, price FROM ticks
                  DISTRIBUTE BY symbol SORT BY symbol, ts)``: the shuffle, sort and Arrow
                  transfer that sparkcep also pays;
* ``noop_masks``  (diagnostic) the no-op UDTF over sparkcep's exact TABLE argument (with any
                  columns sparkcep has Spark precompute; the ``PREV`` masks of this query are
                  derived in the UDTF, so none);
* ``sparkcep``    ``sql_ext.enable(spark)`` then ``spark.sql(query)``.

Before timing, on ``--verify-rows`` rows (default 200k) the script checks that sparkcep, the
window query and a brute-force greedy matcher in Python give exactly the same rows (sorted,
collected) and aborts otherwise; this also warms up the JVM and the Python workers.
``--check-full`` also compares count and checksums of sparkcep and the window query at the
benchmark size.  ``--profile`` runs an instrumented copy of sparkcep's UDTF once and prints
where the time inside the Python worker goes.

Deriving the window query.  With +-1 steps every row but a symbol's first is D (down) or U
(up); they form alternating maximal runs.  Number the down runs D_1, D_2, ... and pair each
with the up run U_j right after it (a last D run with no U after it never matches).  From a
start row s the match exists iff row s+1 is D and its D run is followed by a U row; then
DOWN+ takes the whole D run and UP+ the whole U run (they are disjoint, so greedy never
backtracks), and the next start is the row after U_j, i.e. the first row of D_{j+1}:

* pair 1 always matches, STRT = the row just before D_1's first row;
* after a matched pair j-1 the start is D_j's first row, so pair j matches iff |D_j| >= 2
  (STRT = first row of D_j, DOWN = the rest); if |D_j| = 1 the scan moves through U_j and
  reaches U_j's last row without a match (pair j unmatched);
* after an unmatched pair j-1 the scan stands on U_{j-1}'s last row, so pair j matches with
  STRT = that row, whatever |D_j|;
* so matched(j) = |D_j| >= 2 or not matched(j-1), with a virtual unmatched pair 0.  With L(j)
  the index of the last pair before j with |D| >= 2 (-1 if none): matched(j-1) iff
  (j - 1 - L(j)) is even, and a pair with |D_j| = 1 matches iff (j - L(j)) is even;
* bottom_ts = last row of D_j, end_ts = last row of U_j.

In SQL: level 1 computes the direction of each row, of the previous and the next row (LAG /
LEAD); level 2 keeps the last row of each run (row 0 counts as a run of its own, so its ts is
"the row before D_1" when D_1 starts at row 1) and reads the neighbouring runs with LAG/LEAD;
level 3 keeps the down runs and computes L(j) with a running MAX.  All windows are PARTITION
BY symbol ORDER BY ts, so Spark shuffles and sorts once.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

MR_SQL = """SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)) AS m"""

# Valid for prices that never stay flat (see the module docstring).
WINDOW_SQL = """
WITH l1 AS (
  SELECT symbol, ts,
         SIGN(price - (LAG(price, 1) OVER w)) AS dir,               -- -1 D, +1 U, NULL row 0
         SIGN((LAG(price, 1) OVER w) - (LAG(price, 2) OVER w)) AS prev_dir,
         SIGN((LEAD(price, 1) OVER w) - price) AS next_dir,
         LEAD(ts, 1) OVER w AS next_ts
  FROM ticks
  WINDOW w AS (PARTITION BY symbol ORDER BY ts)
),
ends AS (  -- the last row of each maximal run of one direction (row 0 is a run of its own)
  SELECT symbol, ts, dir, next_ts, (dir = -1 AND prev_dir = -1) AS long_down
  FROM l1
  WHERE NOT (dir <=> next_dir)
),
l2 AS (
  SELECT symbol, ts, dir, long_down,
         LAG(ts, 1) OVER w AS pre_ts,          -- the row before this run
         LAG(next_ts, 1) OVER w AS first_ts,   -- the first row of this run
         LEAD(dir, 1) OVER w AS after_dir,     -- +1: an up run follows
         LEAD(ts, 1) OVER w AS end_ts,         -- the last row of that up run
         COUNT(CASE WHEN dir = -1 THEN 1 END)
           OVER (PARTITION BY symbol ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS j
  FROM ends
  WINDOW w AS (PARTITION BY symbol ORDER BY ts)
),
l3 AS (  -- down runs; last_long = index of the last earlier pair with |D| >= 2
  SELECT symbol, ts, pre_ts, first_ts, after_dir, end_ts, long_down, j,
         COALESCE(MAX(CASE WHEN long_down THEN j END)
           OVER (PARTITION BY symbol ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), -1)
           AS last_long
  FROM l2
  WHERE dir = -1
)
SELECT symbol,
       CASE WHEN (j - 1 - last_long) % 2 = 0 THEN first_ts ELSE pre_ts END AS start_ts,
       ts AS bottom_ts,
       end_ts
FROM l3
WHERE after_dir = 1 AND (long_down OR (j - last_long) % 2 = 0)
"""

NOOP_SQL = """SELECT * FROM bench_vshape_noop(TABLE(
  SELECT symbol, ts, price FROM ticks DISTRIBUTE BY symbol SORT BY symbol, ts))"""


# ---- data ------------------------------------------------------------------------------
def generate(path: Path, rows: int, symbols: int, seed: int, files: int) -> int:
    """Write the tick table as parquet under ``path`` (once); return the row count."""
    per = rows // symbols
    total = per * symbols
    done = path / "_DONE"
    if done.exists():
        return total
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.parquet"):
        old.unlink()
    rng = np.random.default_rng(seed)
    steps = rng.choice(np.array([-1, 1], dtype=np.int64), size=(per, symbols))
    steps[0, :] = 0
    price = (100 + np.cumsum(steps, axis=0)).reshape(-1)  # time-major: row = ts * symbols + s
    ts = np.repeat(np.arange(per, dtype=np.int64), symbols)
    names = pa.array([f"S{s:03d}" for s in range(symbols)])
    codes = np.tile(np.arange(symbols, dtype=np.int32), per)
    symbol = pa.DictionaryArray.from_arrays(pa.array(codes), names).cast(pa.string())
    table = pa.table({"symbol": symbol, "ts": ts, "price": price})
    chunk = -(-total // files)
    for k in range(files):
        pq.write_table(table.slice(k * chunk, chunk), path / f"part-{k:05d}.parquet")
    done.write_text(json.dumps({"rows": total, "symbols": symbols, "seed": seed}))
    return total


def brute_force(path: Path) -> list:
    """The greedy matches by definition: for each start row in order, the preferred match;
    resume after its last row.  DOWN and UP are disjoint, so greedy DOWN+ then UP+ is exact."""
    table = pq.read_table(path).sort_by([("symbol", "ascending"), ("ts", "ascending")])
    symbol = table.column("symbol").to_pylist()
    ts = table.column("ts").to_pylist()
    price = table.column("price").to_pylist()
    out = []
    lo = 0
    while lo < len(symbol):
        hi = lo
        while hi < len(symbol) and symbol[hi] == symbol[lo]:
            hi += 1
        p, t = price[lo:hi], ts[lo:hi]
        n = hi - lo
        down = [False] + [p[i] < p[i - 1] for i in range(1, n)]
        up = [False] + [p[i] > p[i - 1] for i in range(1, n)]
        s = 0
        while s < n:
            i = s + 1
            if i < n and down[i]:
                while i < n and down[i]:
                    i += 1
                bottom = i - 1
                if i < n and up[i]:
                    while i < n and up[i]:
                        i += 1
                    out.append((symbol[lo], t[s], t[bottom], t[i - 1]))
                    s = i
                    continue
            s += 1
        lo = hi
    return sorted(out)


# ---- session -------------------------------------------------------------------------------
def session(cores: int, shuffle_partitions: int | None, batch: int | None, conf: dict | None = None):
    extra = {"spark.executorEnv.PYTHONPATH": str(REPO), **(conf or {})}
    if shuffle_partitions:
        extra["spark.sql.shuffle.partitions"] = str(shuffle_partitions)
    if batch:
        extra["spark.sql.execution.arrow.maxRecordsPerBatch"] = str(batch)
    from sql_examples.local_spark import get_spark

    try:
        return get_spark("sparkcep-bench-vshape", cores=cores, extra_conf=extra), "get_spark (Delta)"
    except RuntimeError as e:  # no Delta jars (`make jars` not run): same session without Delta
        print(f"note: {e}; using a plain local session", file=sys.stderr)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(f"local[{cores}]").appName("sparkcep-bench-vshape")
               .config("spark.driver.memory", "4g")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.default.parallelism", str(cores))
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    for key, value in extra.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark, "plain local session (no Delta jars)"


# ---- UDTFs -----------------------------------------------------------------------------------
class Noop:
    """Consumes every Arrow batch and returns nothing."""

    def eval(self, batch):
        return iter(())

    def terminate(self):
        return iter(())


PROFILE_SCHEMA = ("rows bigint, batches bigint, out_rows bigint, wall double, eval double, "
                  "segments double, load double, match double, emit double, output double")


STAGES = ("segments", "load", "match", "emit", "output")


def instrument(runner, t: dict) -> None:
    """Time the stages of ``runner`` (a ``udtf.arrow.PartitionRunner``) into ``t``, own time
    each: ``segments`` (partition boundaries), ``load`` (masks and values Arrow -> Python),
    ``match`` (the matcher), ``emit`` (matches -> atom columns), ``output`` (the output Arrow
    batch: ``output_batch``); the callers' own time (``feed``, ``_append``, ``_flush``) is not
    counted in any."""
    import udtf.arrow

    def timed(name, fn, generator=False):
        def call(*args, **kwargs):
            start = time.perf_counter()
            try:
                result = fn(*args, **kwargs)
                return list(result) if generator else result
            finally:
                t[name] += time.perf_counter() - start
        return call

    # instance attributes shadow the methods (Matcher.finish calls self.feed)
    runner.matcher.feed = timed("match", runner.matcher.feed)
    runner.emitter.emit = timed("emit", runner.emitter.emit)
    runner._segments = timed("segments", runner._segments, generator=True)
    runner.load = timed("load", runner.load)
    flush, output_batch = runner._flush, udtf.arrow.output_batch

    def timed_flush():  # output_batch is a module function: timed while this flush runs
        udtf.arrow.output_batch = timed("output", output_batch)
        try:
            return flush()
        finally:
            udtf.arrow.output_batch = output_batch

    runner._flush = timed_flush


def make_profiled_udtf(plan, return_type):
    """A copy of sparkcep's UDTF (``udtf.arrow.make_udtf``) that times the parts of
    ``PartitionRunner`` and returns one row of timings per task instead of the matches."""
    from pyspark.sql.functions import arrow_udtf
    from pyspark.sql.pandas.types import to_arrow_schema

    plan_json, schema_json = plan.to_json(), return_type.json()

    class Profiled:
        def __init__(self):
            from pyspark.sql.types import StructType

            from udtf.arrow import PartitionRunner
            from udtf.plan import EnginePlan

            t = self.t = defaultdict(float)
            self.rows = self.batches = self.out_rows = 0
            self.first = None
            schema = to_arrow_schema(StructType.fromJson(json.loads(schema_json)), timezone="UTC")
            runner = self.runner = PartitionRunner(EnginePlan.from_json(plan_json), schema)

            instrument(runner, t)

        def _consume(self, outputs):
            for batch in outputs:
                self.out_rows += batch.num_rows

        def eval(self, batch):
            start = time.perf_counter()
            if self.first is None:
                self.first = start
            self.rows += batch.num_rows
            self.batches += 1
            self._consume(self.runner.feed(batch))
            self.t["eval"] += time.perf_counter() - start
            return iter(())

        def terminate(self):
            if self.first is None:
                return  # no input rows: emitting would hit Spark 4.2's NPE (see tests)
            start = time.perf_counter()
            self._consume(self.runner.finish())
            end = time.perf_counter()
            self.t["eval"] += end - start
            t = self.t
            yield pa.table({
                "rows": [self.rows], "batches": [self.batches], "out_rows": [self.out_rows],
                "wall": [end - self.first], "eval": [t["eval"]], "segments": [t["segments"]],
                **{stage: [t[stage]] for stage in STAGES},
            })

    return arrow_udtf(Profiled, returnType=PROFILE_SCHEMA)


def table_argument(sql: str, name: str) -> str:
    """The ``TABLE(...)`` argument of the call of ``name`` in the transpiled ``sql``."""
    start = sql.lower().index(name.lower() + "(") + len(name)
    depth = 0
    for i in range(start, len(sql)):
        depth += {"(": 1, ")": -1}.get(sql[i], 0)
        if depth == 0:
            return sql[start + 1:i]
    raise ValueError("unbalanced parentheses")


# ---- runs ------------------------------------------------------------------------------------
def run_once(spark, sql: str) -> tuple:
    start = time.perf_counter()
    df = spark.sql(sql)
    planned = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    end = time.perf_counter()
    return end - start, planned - start


def use_table(spark, path: Path):
    spark.read.parquet(str(path)).createOrReplaceTempView("ticks")


def verify(spark, path: Path, args) -> dict:
    use_table(spark, path)
    truth = brute_force(path)
    got_mr = sorted(tuple(r) for r in spark.sql(MR_SQL).collect())
    got_window = sorted(tuple(r) for r in spark.sql(WINDOW_SQL).collect())
    spark.sql(NOOP_SQL).write.format("noop").mode("overwrite").save()  # warm-up
    for label, got in (("sparkcep", got_mr), ("window query", got_window)):
        if got != truth:
            missing = sorted(set(truth) - set(got))[:5]
            extra = sorted(set(got) - set(truth))[:5]
            raise SystemExit(f"VERIFY FAILED: {label} differs from the brute-force matches "
                             f"({len(got)} vs {len(truth)} rows; missing {missing}; extra {extra})")
    return {"rows": len(truth)}


CHECK_SQL = ("SELECT count(*) AS n, sum(hash(symbol, start_ts, bottom_ts, end_ts)) AS h, "
             "sum(end_ts - start_ts) AS span FROM ({}) AS q")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--symbols", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--verify-rows", type=int, default=200_000, help="0 skips the check")
    parser.add_argument("--check-full", action="store_true",
                        help="also compare count/checksum of sparkcep and the window query at --rows")
    parser.add_argument("--profile", action="store_true", help="time the parts of the UDTF (one extra run)")
    parser.add_argument("--variants", default="window,noop,noop_masks,sparkcep")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--shuffle-partitions", type=int, default=None, help="default: the session's (4)")
    parser.add_argument("--batch", type=int, default=None, help="spark.sql.execution.arrow.maxRecordsPerBatch")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="extra Spark conf (repeatable), e.g. spark.sql.adaptive.enabled=false")
    parser.add_argument("--files", type=int, default=8, help="parquet files of the input")
    parser.add_argument("--data-dir", default=os.environ.get("SPARKCEP_BENCH_DATA", "/tmp/sparkcep-bench-vshape"))
    parser.add_argument("--explain", action="store_true", help="print the physical plans")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    data = Path(args.data_dir)
    full_path = data / f"rows{args.rows}_sym{args.symbols}_seed{args.seed}"
    rows = generate(full_path, args.rows, args.symbols, args.seed, args.files)
    print(f"data: {rows:,} rows, {args.symbols} symbols -> {full_path}  ({time.perf_counter() - t0:.1f}s)")

    extra = dict(kv.split("=", 1) for kv in args.conf)
    spark, kind = session(args.cores, args.shuffle_partitions, args.batch, extra)
    import sql_ext
    import udtf.arrow
    from pyspark.sql.functions import arrow_udtf

    sql_ext.enable(spark)
    spark.udtf.register("bench_vshape_noop", arrow_udtf(Noop, returnType="n bigint"))
    conf = {k: spark.conf.get(k) for k in ("spark.sql.shuffle.partitions", "spark.sql.execution.arrow.maxRecordsPerBatch",
                                           "spark.sql.adaptive.enabled", *extra)}
    print("load average at start: {:.1f} {:.1f} {:.1f} ({} CPUs)".format(*os.getloadavg(), os.cpu_count()))
    print(f"session: {kind}, local[{args.cores}], {conf}, pyspark {spark.version}, python {sys.version.split()[0]}")

    result = {"rows": rows, "symbols": args.symbols, "cores": args.cores, "conf": conf}
    if args.verify_rows:
        vpath = data / f"rows{args.verify_rows}_sym{args.symbols}_seed{args.seed}"
        vrows = generate(vpath, args.verify_rows, args.symbols, args.seed, args.files)
        start = time.perf_counter()
        checked = verify(spark, vpath, args)
        print(f"verify: {vrows:,} rows: sparkcep == window query == brute force "
              f"({checked['rows']:,} matches)  ({time.perf_counter() - start:.1f}s)")
        result["verified_rows"] = vrows

    use_table(spark, full_path)
    # sparkcep's plan and UDTF for this query (captured while it registers), for the diagnostics
    captured = {}
    original = udtf.arrow.make_udtf

    def capture(plan, return_type, **kwargs):
        captured.update(plan=plan, return_type=return_type)
        return original(plan, return_type, **kwargs)

    udtf.arrow.make_udtf = capture
    try:
        start = time.perf_counter()
        transpiled = sql_ext.transpile(MR_SQL, spark)
        result["transpile_s"] = time.perf_counter() - start
    finally:
        udtf.arrow.make_udtf = original
    name = next(w for w in transpiled.replace("(", " ").split() if w.lower().startswith("sparkcep_mr_"))
    mr_input = table_argument(transpiled, name)
    variants = {
        "window": WINDOW_SQL,
        "noop": NOOP_SQL,
        "noop_masks": f"SELECT * FROM bench_vshape_noop({mr_input})",
        "sparkcep": MR_SQL,
    }
    chosen = [v.strip() for v in args.variants.split(",") if v.strip()]
    if args.explain:
        for v in chosen:
            print(f"---- {v}: physical plan")
            spark.sql(variants[v]).explain()
        print("---- sparkcep transpiled:\n" + transpiled)

    if args.check_full:
        start = time.perf_counter()
        a = spark.sql(CHECK_SQL.format(transpiled)).collect()[0]
        b = spark.sql(CHECK_SQL.format(WINDOW_SQL)).collect()[0]
        if tuple(a) != tuple(b):
            raise SystemExit(f"CHECK FAILED at {rows:,} rows: sparkcep {tuple(a)} vs window {tuple(b)}")
        print(f"check: {rows:,} rows: sparkcep and window query agree: {a.n:,} matches, "
              f"checksum {a.h}  ({time.perf_counter() - start:.1f}s)")
        result["matches"] = a.n

    times = {v: [] for v in chosen}
    plans = {v: [] for v in chosen}
    for k in range(args.runs):
        for v in chosen:
            total, plan_s = run_once(spark, variants[v])
            times[v].append(total)
            plans[v].append(plan_s)
            print(f"run {k + 1}/{args.runs} {v:10s} {total:7.2f}s  (spark.sql {plan_s:.2f}s)", flush=True)

    med = {v: statistics.median(ts) for v, ts in times.items()}
    best = {v: min(ts) for v, ts in times.items()}
    print(f"\nV-shape, {rows:,} rows, {args.symbols} symbols, local[{args.cores}], {args.runs} runs each")
    print(f"{'variant':12} {'median s':>9} {'min s':>7} {'rows/s (median)':>16}  runs")
    for v in chosen:
        print(f"{v:12} {med[v]:9.2f} {best[v]:7.2f} {rows / med[v]:16,.0f}  " + " ".join(f"{t:.2f}" for t in times[v]))
    ratios = {}
    if "sparkcep" in med:
        print(f"{'ratio':21} {'median':>6} {'min':>6}")
        for base, target in (("window", 1.5), ("noop", 1.3), ("noop_masks", None)):
            if base in med:
                r = ratios[f"sparkcep/{base}"] = med["sparkcep"] / med[base]
                r_min = ratios[f"sparkcep/{base} (min)"] = best["sparkcep"] / best[base]
                verdict = "" if target is None else f"  target <= {target}: {'MET' if r <= target else 'MISSED'}"
                print(f"sparkcep/{base:12s} {r:6.2f} {r_min:6.2f}{verdict}")
    result.update(times=times, spark_sql_s=plans, median=med, min=best, ratios=ratios)

    if args.profile:
        spark.udtf.register("bench_vshape_profiled", make_profiled_udtf(captured["plan"], captured["return_type"]))
        start = time.perf_counter()
        parts = spark.sql(f"SELECT * FROM bench_vshape_profiled({mr_input})").collect()
        elapsed = time.perf_counter() - start
        agg = {f: sum(getattr(p, f) for p in parts) for f in parts[0].asDict()}
        engine = agg["match"] + agg["emit"]
        print(f"\nprofile: instrumented sparkcep UDTF, one run {elapsed:.2f}s wall, {len(parts)} tasks, "
              f"{agg['rows']:,} rows in {agg['batches']:,} batches -> {agg['out_rows']:,} matches")
        print("  rows per task: " + ", ".join(f"{p.rows:,}" for p in parts)
              + f"; summed over tasks (they run {args.cores} at a time):")
        lines = [
            ("task wall, first eval -> end of terminate", agg["wall"]),
            ("  inside eval/terminate (sparkcep code)", agg["eval"]),
            ("    partition boundaries (_segments)", agg["segments"]),
            ("    load: masks/values Arrow -> Python", agg["load"]),
            ("    matcher (DFA / Pike VM)", agg["match"]),
            ("    emitter (matches -> atom columns)", agg["emit"]),
            ("    output_batch (the output Arrow batch)", agg["output"]),
            ("  outside eval (pyspark: read/deserialize input)", agg["wall"] - agg["eval"]),
        ]
        for label, seconds in lines:
            print(f"  {label:48s} {seconds:8.2f}s {100 * seconds / max(agg['wall'], 1e-9):5.1f}%")
        print(f"  engine (matcher + emitter) throughput per core: {agg['rows'] / max(engine, 1e-9):,.0f} rows/s; "
              f"all sparkcep code: {agg['rows'] / max(agg['eval'], 1e-9):,.0f} rows/s")
        result["profile"] = agg

    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=str))
    print("load average at end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    print(f"total {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
