"""One partition on all cores (issue 28 item 3): the chunked plan against the serial plan.

    python bench/chunks.py [--rows 2000000] [--cores 2] [--chunk-rows 0] [--runs 3]

Data: one partition (no PARTITION BY), ``ts`` a timestamp one second apart, ``price`` a random
walk of +-1 steps (never flat), fixed seed, written once as parquet under
``/tmp/sparkcep-bench-chunks/`` and reused.  Two queries, both bounded in rows:

* ``mask``   a mask-only V-shape, ``STRT DOWN{1,8} UP{1,8}`` (DEFINE reads PREV only);
* ``state``  a WITHIN-bounded pattern with match state, ``STRT UP{1,20} DOWN WITHIN 40 s``
             (DEFINE reads ``STRT.price`` and ``LAST(UP.price)``).

In one session, each query runs ``--runs`` times round-robin under the serial plan
(``spark.sparkcep.chunkRows`` 0) and the chunked plan (``--chunk-rows``; 0: rows / (4 x
cores)), each time a full ``.write.format("noop")``; the time includes ``spark.sql``.  The
baseline is the serial plan in the same ``local[cores]`` session: its matching runs in one
task (one core), while its scan and sort still use every core -- so it is at least as fast as
the same query under ``local[1]``, and serial/chunked is the gain a user gets by turning the
chunked plan on.  Before timing, each plan's rows are compared (count and an order-free
checksum of every column); the script aborts if they differ.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from sql_vshape import session  # noqa: E402

CHUNK_ROWS = "spark.sparkcep.chunkRows"

QUERIES = {
    "mask": """SELECT * FROM ticks MATCH_RECOGNIZE (
        ORDER BY ts
        MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts, MATCH_NUMBER() AS mn
        ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
        PATTERN (STRT DOWN{1,8} UP{1,8})
        DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)) AS m""",
    "state": """SELECT * FROM ticks MATCH_RECOGNIZE (
        ORDER BY ts
        MEASURES STRT.ts AS start_ts, LAST(UP.ts) AS top_ts, MAX(UP.price) AS top, MATCH_NUMBER() AS mn
        ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
        PATTERN (STRT UP{1,20} DOWN) WITHIN INTERVAL '40' SECOND
        DEFINE UP AS price > STRT.price, DOWN AS price < LAST(UP.price)) AS m""",
}


def generate(path: Path, rows: int, seed: int, files: int = 8) -> int:
    """Write the table as parquet under ``path`` (once); return the row count."""
    done = path / "_DONE"
    if done.exists() and json.loads(done.read_text()) == {"rows": rows, "seed": seed}:
        return rows
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.parquet"):
        old.unlink()
    rng = np.random.default_rng(seed)
    steps = rng.choice(np.array([-1, 1], dtype=np.int64), size=rows)
    steps[0] = 0
    order = rng.permutation(rows)  # (files in no particular order: the plan sorts)
    ts = (np.arange(rows, dtype=np.int64) * 1_000_000 + 1_700_000_000_000_000)[order]
    table = pa.table({"ts": pa.array(ts, pa.timestamp("us", tz="UTC")), "price": (100 + np.cumsum(steps))[order]})
    size = -(-rows // files)
    for k in range(files):
        pq.write_table(table.slice(k * size, size), path / f"part-{k:05d}.parquet")
    done.write_text(json.dumps({"rows": rows, "seed": seed}))
    return rows


def timed(spark, sql: str) -> float:
    start = time.perf_counter()
    spark.sql(sql).write.format("noop").mode("overwrite").save()
    return time.perf_counter() - start


def checksum(spark, sql: str) -> tuple:
    """Count and an order-free checksum of every column of ``sql``'s rows."""
    row = spark.sql(f"SELECT count(*) AS n, sum(CAST(xxhash64(*) AS DECIMAL(38, 0))) AS h FROM ({sql})").collect()[0]
    return row.n, row.h


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--chunk-rows", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--query", choices=sorted(QUERIES), action="append")
    parser.add_argument("--data-dir", default="/tmp/sparkcep-bench-chunks")
    args = parser.parse_args(argv)
    rows = generate(Path(args.data_dir), args.rows, args.seed)
    chunk_rows = args.chunk_rows or -(-rows // (4 * args.cores))
    spark, kind = session(args.cores, None, None)
    import sql_ext

    sql_ext.enable(spark)
    spark.read.parquet(args.data_dir).createOrReplaceTempView("ticks")
    plans = {"serial": "0", "chunked": str(chunk_rows)}
    print(f"session: {kind}, local[{args.cores}], {rows:,} rows in one partition, chunks of {chunk_rows:,} rows, "
          f"{args.runs} runs each, pyspark {spark.version}")
    for name in args.query or sorted(QUERIES):
        sql = QUERIES[name]
        sums = {}
        for plan, value in plans.items():
            spark.conf.set(CHUNK_ROWS, value)
            sums[plan] = checksum(spark, sql)
        if sums["serial"] != sums["chunked"]:
            print(f"{name}: the plans' rows differ: {sums}")
            return 1
        times = {plan: [] for plan in plans}
        for _ in range(args.runs):
            for plan, value in plans.items():
                spark.conf.set(CHUNK_ROWS, value)
                times[plan].append(timed(spark, sql))
        median = {plan: statistics.median(t) for plan, t in times.items()}
        print(f"{name}: {sums['serial'][0]:,} rows, equal checksums; "
              + ", ".join(f"{p} {median[p]:.2f} s (min {min(times[p]):.2f})" for p in plans)
              + f"; serial/chunked {median['serial'] / median['chunked']:.2f}x", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
