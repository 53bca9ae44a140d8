"""The fixed cost of one statement: ``spark.sql(stmt)`` (rewrite and analysis) and
``.collect()`` over 10 rows, per statement shape, with the JVM round trips it makes.

Shapes: MATCH_RECOGNIZE statements (simple, DEFINE/MEASURES, over a temporary view, nested,
CREATE TEMP VIEW, with LAYERs) through ``sql_ext.enable(spark)``, and the floor: Spark SQL of
the same size without MATCH_RECOGNIZE (a window query) and a no-op Arrow UDTF call over the
same TABLE argument.  Each shape runs ``--runs`` times round-robin after one warm-up; the
medians are printed (ms).  Round trips are counted on the py4j client of the session's
gateway (every Python -> JVM command: ``spark.sql``, ``DataFrame.schema``, conf reads,
UDTF registration, ...) for one ``spark.sql`` of each shape after the warm-up.

    PYTHONPATH=. .venv/bin/python bench/latency.py                 # 20 runs
    PYTHONPATH=. .venv/bin/python bench/latency.py --runs 5 --json out.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROWS = [("s1", k, p) for k, p in enumerate((10, 9, 8, 9, 11, 12, 10, 9, 13, 14))]

_SIMPLE = """SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES A.ts AS a_ts
  PATTERN (A B)
  DEFINE B AS price > A.price)"""

_MEASURES = """SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts,
           MIN(DOWN.price) AS low, COUNT(*) AS n, MATCH_NUMBER() AS m
  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price))"""

_VIEW = """SELECT * FROM ticks_view MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES A.ts AS a_ts, LAST(B.price) AS b_price
  PATTERN (A B+)
  DEFINE B AS price > PREV(price))"""

_NESTED = """SELECT * FROM (
  SELECT * FROM ticks MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES A.ts AS t, A.price AS p
    PATTERN (A)
    DEFINE A AS price > 8)
) MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY t
  MEASURES FIRST(X.t) AS first_t, COUNT(*) AS n
  PATTERN (X Y+)
  DEFINE Y AS p > PREV(p))"""

_CREATE_VIEW = "CREATE OR REPLACE TEMP VIEW mr_view AS " + _SIMPLE

_LAYERS = """SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  LAYER rise AS (
    MEASURES MAX(price) AS peak
    PATTERN (UP{2,})
    DEFINE UP AS price > PREV(price))
  MEASURES R.peak AS peak, D.ts AS down_ts
  PATTERN (R D)
  DEFINE R FROM rise, D AS price < 10) AS m"""

_WINDOW = """SELECT symbol, ts, price, price - LAG(price) OVER (PARTITION BY symbol ORDER BY ts) AS d,
  MIN(price) OVER (PARTITION BY symbol ORDER BY ts) AS low
FROM ticks WHERE price > 8"""

_NOOP = "SELECT * FROM sparkcep_bench_noop(TABLE(SELECT symbol, ts, price FROM ticks) PARTITION BY symbol ORDER BY ts)"

SHAPES = {"simple": _SIMPLE, "measures": _MEASURES, "view": _VIEW, "nested": _NESTED,
          "create_view": _CREATE_VIEW, "layers": _LAYERS, "floor_window": _WINDOW, "floor_noop_udtf": _NOOP}


class RoundTrips:
    """Counts the py4j commands sent to the JVM (but the deletes of collected Python proxies,
    which depend on the garbage collector's timing), and among them ``SparkSession.sql``: each
    parses and analyses a query, the expensive kind."""

    def __init__(self, spark):
        self.client = spark.sparkContext._gateway._gateway_client
        self.count = self.analyses = 0
        original = self.client.send_command

        def send_command(command, *args, **kwargs):
            lines = command.split("\n")
            if lines[0] != "m" or lines[1] != "d":
                self.count += 1
            self.analyses += lines[0] == "c" and lines[2:3] == ["sql"]
            return original(command, *args, **kwargs)

        self.client.send_command = send_command


def _register_noop(spark) -> None:
    import pyarrow as pa
    from pyspark.sql.functions import arrow_udtf

    @arrow_udtf(returnType="symbol string, ts bigint, price bigint")
    class Noop:
        def eval(self, batch: pa.RecordBatch):
            yield batch.select(["symbol", "ts", "price"]).slice(0, 0)

    spark.udtf.register("sparkcep_bench_noop", Noop)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    import sql_ext
    from sql_examples.local_spark import get_spark

    spark = get_spark(app_name="sparkcep-bench-latency", delta=False)
    spark.sparkContext.setLogLevel("ERROR")
    spark.createDataFrame(ROWS, "symbol string, ts bigint, price bigint").createOrReplaceTempView("ticks")
    spark.sql("CREATE OR REPLACE TEMP VIEW ticks_view AS SELECT symbol, ts, price FROM ticks WHERE price > 0")
    _register_noop(spark)
    sql_ext.enable(spark)
    shapes = {name: SHAPES[name] for name in args.shapes.split(",")}
    trips = RoundTrips(spark)
    calls = {}
    for name, sql in shapes.items():  # warm-up, then one counted spark.sql
        spark.sql(sql).collect()
        before = trips.count, trips.analyses
        spark.sql(sql)
        calls[name] = trips.count - before[0], trips.analyses - before[1]
    times = {name: ([], []) for name in shapes}
    for _ in range(args.runs):
        for name, sql in shapes.items():
            t0 = time.perf_counter()
            df = spark.sql(sql)
            t1 = time.perf_counter()
            df.collect()
            t2 = time.perf_counter()
            times[name][0].append((t1 - t0) * 1e3)
            times[name][1].append((t2 - t1) * 1e3)
    figures = {name: {"round_trips": calls[name][0], "analyses": calls[name][1], "sql_ms": statistics.median(times[name][0]),
                      "collect_ms": statistics.median(times[name][1])} for name in shapes}
    print(f"{'shape':16} {'round trips':>11} {'analyses':>8} {'spark.sql ms':>12} {'collect ms':>10}")
    for name, f in figures.items():
        print(f"{name:16} {f['round_trips']:11d} {f['analyses']:8d} {f['sql_ms']:12.1f} {f['collect_ms']:10.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
