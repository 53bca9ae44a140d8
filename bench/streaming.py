"""Rows/s of MATCH_RECOGNIZE on Structured Streaming against its floor and the batch query.

    PYTHONPATH=. .venv/bin/python bench/streaming.py                     # 400k rows, 100 keys, 8 batches, 2 runs
    PYTHONPATH=. .venv/bin/python bench/streaming.py --rows 1000000 --batches 10

Data: per key one row a second (``ts``), ``x`` pseudo-random in 0..9, written once as parquet
files (one per micro-batch, then the end-of-stream marker row) under ``--data-dir``.  In one
session, each variant reads them and is timed to its end (``.write.format("noop")``):

* ``floor``: the same streaming read (``maxFilesPerTrigger=1``, watermark 10 s), grouped by
  key into a no-op ``transformWithStateInPandas`` processor in event-time mode;
* ``stream``: ``sql_ext.stream`` of ``QUERY`` on that read (available-now trigger);
* ``batch``: ``spark.sql`` of ``QUERY`` over the files at rest.

Each variant runs ``--runs`` times round-robin (the first run of each warms the workers up);
reported: the fastest run's seconds and rows/s, stream/floor and stream/batch (target:
stream/floor <= 1.5).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time

QUERY = """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.ts) AS start_ts, LAST(C.ts) AS end_ts, COUNT(B.*) AS bs
  PATTERN (A B+ C) WITHIN INTERVAL '30' SECOND
  DEFINE A AS x < 2, B AS x BETWEEN 2 AND 6, C AS x > 7) AS m"""
SCHEMA = "k bigint, ts timestamp, x bigint"
KEEP = "ts < TIMESTAMP '9000-01-01'"


def write_data(spark, path: str, rows: int, keys: int, batches: int) -> None:
    """``batches`` parquet files of consecutive event-time slices, then the marker file."""
    if os.path.exists(os.path.join(path, "_done")):
        return
    shutil.rmtree(path, ignore_errors=True)
    per = rows // batches
    for b in range(batches):
        (spark.range(b * per, (b + 1) * per).selectExpr(
            f"id % {keys} AS k", f"timestamp_seconds(id DIV {keys}) AS ts", "abs(hash(id)) % 10 AS x")
         .coalesce(1).write.mode("append").parquet(path))
    spark.sql("SELECT CAST(-1 AS BIGINT) AS k, TIMESTAMP '9999-01-02' AS ts, CAST(0 AS BIGINT) AS x") \
        .coalesce(1).write.mode("append").parquet(path)
    open(os.path.join(path, "_done"), "w").close()


def streaming_read(spark, path: str):
    return (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(path)
            .withWatermark("ts", "10 seconds").where(KEEP))


def run_stream(df, checkpoint: str) -> float:
    shutil.rmtree(checkpoint, ignore_errors=True)
    started = time.time()
    df.writeStream.format("noop").outputMode("append").option("checkpointLocation", checkpoint) \
        .trigger(availableNow=True).start().awaitTermination()
    return time.time() - started


def floor(spark, path: str, checkpoint: str) -> float:
    from pyspark.sql.streaming import StatefulProcessor

    class NoOp(StatefulProcessor):
        def init(self, handle):
            pass

        def handleInputRows(self, key, rows, timerValues):
            for _ in rows:
                pass
            return iter([])

        def close(self):
            pass

    df = streaming_read(spark, path).groupBy("k").transformWithStateInPandas(
        NoOp(), "k bigint", "Append", "EventTime")
    return run_stream(df, checkpoint)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "sparkcep-bench-streaming"))
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    import sql_ext
    from sql_examples.local_spark import get_spark

    spark = sql_ext.enable(get_spark(app_name="sparkcep-bench-streaming"))
    spark.conf.set("spark.sql.streaming.stateStore.providerClass",
                   "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
    data = os.path.join(args.data_dir, f"{args.rows}-{args.keys}-{args.batches}")
    write_data(spark, data, args.rows, args.keys, args.batches)
    work = tempfile.mkdtemp(prefix="sparkcep-bench-streaming-")
    seconds: dict = {}
    try:
        for _ in range(args.runs):  # round-robin; the fastest run of each counts
            times = {"floor": floor(spark, data, f"{work}/floor")}
            streaming_read(spark, data).createOrReplaceTempView("events")
            times["stream"] = run_stream(sql_ext.stream(spark, QUERY), f"{work}/stream")
            spark.read.schema(SCHEMA).parquet(data).where(KEEP).createOrReplaceTempView("events")
            started = time.time()
            spark.sql(QUERY).write.format("noop").mode("overwrite").save()
            times["batch"] = time.time() - started
            seconds = {name: min(t, seconds.get(name, t)) for name, t in times.items()}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report = {"rows": args.rows, "keys": args.keys, "micro_batches": args.batches,
              **{f"{name}_s": round(s, 2) for name, s in seconds.items()},
              **{f"{name}_rows_per_s": round(args.rows / s) for name, s in seconds.items()},
              "stream_over_floor": round(seconds["stream"] / seconds["floor"], 2),
              "stream_over_batch": round(seconds["stream"] / seconds["batch"], 2)}
    print(json.dumps(report) if args.json else "\n".join(f"{k}: {v}" for k, v in report.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
