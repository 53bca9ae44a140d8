"""FlinkCEP queries on Spark (sparkcep, spark.sql) side by side with real FlinkCEP 2.3.

    python bench/flinkcep.py [--rows 1000000] [--keys 4] [--runs 2] [--flink-modes nfa,job]

Queries (FLINKCEP semantics, AFTER MATCH NO SKIP, PARTITION BY k ORDER BY ts):

* ``q1`` -- the paper's Example 1 (Fu & Wu): ``PATTERN (P->+)``,
  ``DEFINE P AS name = 1 AND SUM(P.price) <= 10 UNTIL name = 2`` (a relaxed Kleene loop with an
  iterative condition and until);
* ``q2`` -- ``PATTERN (A ->> B) WITHIN INTERVAL '6' SECOND``, ``A AS name = 1, B AS name = 2``
  (skip till any match: every later b within 6 s).

Data (generated on both sides from one formula, bench/flink/BenchFlinkCep.java): row i of
``--rows``, ``h = splitmix64(seed * 2^32 + i)``: ``id = i + 1``, ``k = i % --keys``,
``name = 1 + h % 3``, ``price = (h >> 8) % 10``, ``ts = 250 i + (h >> 16) % 250`` ms (so per key
about one event a second).

Spark: ``sql_ext.enable(spark)``, the rows (written once as parquet under ``--data-dir``) as a
cached temp view, each query ``--runs`` times;
the time is ``spark.sql(query).collect()`` of ``COUNT(*)`` and checksums over ``ONE ROW PER
MATCH`` (so it includes the rewrite, the shuffle/sort and the UDTF).  Flink (separate JVM,
after Spark): ``nfa`` = Flink's NFA/SharedBuffer driven directly, one NFA per key, single
thread (the CEP library alone); ``job`` = a DataStream job on a local MiniCluster,
``keyBy(k)`` + ``CEP.pattern`` with parallelism ``--cores``.  Flink's times exclude JVM start
and include generating the events.  Flink's ``within`` keeps ``last - first < within`` while
SQL WITHIN keeps ``<=``: the Flink query uses 6001 ms (equal on integer milliseconds).

The script checks that every engine reports the same number of matches and the same checksums
(sums of the first and last event ids of the matches and of their sizes) and exits 1 if not.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "flink"))

JAVA_SOURCE = REPO / "bench" / "flink" / "BenchFlinkCep.java"

QUERIES = {
    "q1": """
SELECT COUNT(*) AS matches, SUM(first_id) AS sum_first, SUM(last_id) AS sum_last, SUM(size) AS sum_size
FROM events MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES FIRST(P.id) AS first_id, LAST(P.id) AS last_id, COUNT(P.*) AS size
  ONE ROW PER MATCH AFTER MATCH NO SKIP SEMANTICS FLINKCEP
  PATTERN (P->+)
  DEFINE P AS name = 1 AND SUM(P.price) <= 10 UNTIL name = 2) AS m""",
    "q2": """
SELECT COUNT(*) AS matches, SUM(a_id) AS sum_first, SUM(b_id) AS sum_last, 2 * COUNT(*) AS sum_size
FROM events MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.id AS a_id, B.id AS b_id
  ONE ROW PER MATCH AFTER MATCH NO SKIP SEMANTICS FLINKCEP
  PATTERN (A ->> B) WITHIN INTERVAL '6' SECOND
  DEFINE A AS name = 1, B AS name = 2) AS m""",
}
LABELS = {"q1": "paper Example 1: P->+ SUM<=10 UNTIL", "q2": "A ->> B WITHIN 6 s"}


def generate(rows: int, keys: int, seed: int, spacing: int = 250):
    """The events as numpy columns (the formula of BenchFlinkCep.java; ``spacing``: ms between
    consecutive events, plus a jitter below it)."""
    i = np.arange(rows, dtype=np.uint64)
    z = np.uint64(seed) * np.uint64(1 << 32) + i + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    h = z ^ (z >> np.uint64(31))
    return {
        "k": (i % np.uint64(keys)).astype(np.int32),
        "id": (i + np.uint64(1)).astype(np.int64),
        "name": (np.uint64(1) + h % np.uint64(3)).astype(np.int32),
        "price": ((h >> np.uint64(8)) % np.uint64(10)).astype(np.int32),
        "ts_ms": (np.uint64(spacing) * i + (h >> np.uint64(16)) % np.uint64(spacing)).astype(np.int64),
    }


# ---- Spark ------------------------------------------------------------------------------------

def spark_session(cores: int):
    from sql_examples.local_spark import get_spark

    return get_spark("sparkcep-bench-flinkcep", cores=cores,
                     extra_conf={"spark.executorEnv.PYTHONPATH": str(REPO)})


def run_spark(args) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    import sql_ext

    path = Path(args.data_dir) / f"rows{args.rows}-keys{args.keys}-seed{args.seed}.parquet"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        pq.write_table(pa.table(generate(args.rows, args.keys, args.seed)), tmp)
        os.replace(tmp, path)
    spark = spark_session(args.cores)
    sql_ext.enable(spark)
    df = spark.read.parquet(str(path)).selectExpr("k", "id", "name", "price", "timestamp_millis(ts_ms) AS ts").cache()
    assert df.count() == args.rows
    df.createOrReplaceTempView("events")
    out = {}
    for q in args.queries:
        times, result = [], None
        for _ in range(args.runs):
            t = time.perf_counter()
            row = spark.sql(QUERIES[q]).collect()[0]
            times.append(time.perf_counter() - t)
            result = {k: int(row[k] or 0) for k in ("matches", "sum_first", "sum_last", "sum_size")}
        out[q] = dict(result, seconds=min(times), all_seconds=times)
        print(f"  spark {q}: {times} s, {result['matches']} matches", flush=True)
    df.unpersist()
    return out


# ---- Flink ------------------------------------------------------------------------------------

def build_flink() -> tuple:
    import flinkcep

    reason = flinkcep.unavailable_reason()
    if reason:
        raise SystemExit(f"FlinkCEP not available: {reason} (make flink-env)")
    driver = flinkcep.build()  # CepDriver classes (Event, MemStateStore)
    src = JAVA_SOURCE.read_bytes()
    key = hashlib.sha256(src + str(driver).encode()).hexdigest()[:16]
    out = flinkcep.BUILD_ROOT / f"bench-{key}"
    if not (out / "BenchFlinkCep.class").exists():
        tmp = out.with_name(out.name + f".tmp{os.getpid()}")
        tmp.mkdir(parents=True, exist_ok=True)
        subprocess.run([flinkcep._tool("javac"), "-nowarn", "-Xlint:none", "-cp",
                        os.pathsep.join([str(driver), str(flinkcep.lib_dir() / "*")]), "-d", str(tmp),
                        str(JAVA_SOURCE)], check=True)
        os.replace(tmp, out)
    return flinkcep._tool("java"), os.pathsep.join([str(out), str(driver), str(flinkcep.lib_dir() / "*")])


def run_flink(args, mode: str) -> dict:
    java, cp = build_flink()
    cmd = [java, "-Xmx4g", "-XX:+UseSerialGC", "-cp", cp, "BenchFlinkCep", f"--rows={args.rows}",
           f"--keys={args.keys}", f"--seed={args.seed}", f"--mode={mode}", f"--parallelism={args.cores}",
           f"--query={args.queries[0] if len(args.queries) == 1 else 'both'}"]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"BenchFlinkCep failed:\n{proc.stderr[-3000:]}")
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            out[r["query"]] = r
            print(f"  flink {mode} {r['query']}: {r['seconds']:.2f} s, {r['matches']} matches", flush=True)
    print(f"  flink {mode} JVM wall time {wall:.1f} s", flush=True)
    return out


# ---- main -------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=4, help="partitions (PARTITION BY k / keyBy)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--runs", type=int, default=2, help="Spark runs per query (the best is reported)")
    ap.add_argument("--cores", type=int, default=2, help="Spark local[N] and Flink job parallelism")
    ap.add_argument("--queries", default="q1,q2")
    ap.add_argument("--data-dir", default="/tmp/sparkcep-bench-flinkcep", help="generated parquet (reused)")
    ap.add_argument("--flink-modes", default="nfa,job", help="nfa, job, both comma-separated, or none")
    args = ap.parse_args(argv)
    args.queries = [q for q in args.queries.split(",") if q]
    modes = [m for m in args.flink_modes.split(",") if m and m != "none"]

    print(f"rows={args.rows:,} keys={args.keys} seed={args.seed} cores={args.cores}", flush=True)
    import flinkcep

    if modes and not flinkcep.available():
        print(f"FlinkCEP not available, Spark only: {flinkcep.unavailable_reason()} (make flink-env)")
        modes = []
    results = {"spark": run_spark(args)}
    for mode in modes:
        results[f"flink-{mode}"] = run_flink(args, mode)

    ok = True
    print(f"\n{'query':38} {'engine':11} {'matches':>10} {'seconds':>8} {'rows/s':>11}  checksums")
    for q in args.queries:
        ref = results["spark"][q]
        for engine, res in results.items():
            r = res[q]
            same = all(r[k] == ref[k] for k in ("matches", "sum_first", "sum_last", "sum_size"))
            ok &= same
            print(f"{LABELS[q]:38} {engine:11} {r['matches']:10,d} {r['seconds']:8.2f} "
                  f"{args.rows / r['seconds']:11,.0f}  {'same' if same else 'DIFFERENT ' + str(r)}")
    print("match counts and checksums agree" if ok else "MISMATCH between engines")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
