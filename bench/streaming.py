"""MATCH_RECOGNIZE on Structured Streaming against Spark's own floor, the batch query and FlinkCEP.

    PYTHONPATH=. .venv/bin/python bench/streaming.py                        # every part, as below
    PYTHONPATH=. .venv/bin/python bench/streaming.py --parts throughput --rows 400000 --batches 8

Parts, all in one SparkSession (local[2]), each variant timed to its end:

* ``throughput``: ``QUERY`` over ``--rows`` rows (per key one row a second, ``x`` pseudo-random
  in 0..9) in ``--batches`` parquet files, read as a stream one file per micro-batch
  (watermark 10 s, then an end-of-stream marker row) into a ``noop`` sink: ``floor`` (Spark's
  own no-op stateful query: ``groupBy(k).transformWithState`` of a processor that reads its
  rows, event-time mode), ``stream`` (``sql_ext.stream``), ``batch`` (``spark.sql`` over the
  files at rest).  ``--runs`` rounds, round-robin; the fastest run of each counts.
* ``floors``: where a micro-batch's time goes, over the ``throughput`` files (one run each):
  ``stateless`` (the stream read into a ``noop`` sink: Spark's cost of a micro-batch),
  ``packet_floor`` (``sql_ext.stream``'s pipeline without the matcher: the rows packed into one
  Arrow packet per shard and input batch, ``groupBy(shard).transformWithState`` of a processor
  that reads the packets and does nothing: the floor of its design), ``stream``, ``batch``, and ``incremental_bound``: a lower bound of the
  micro-batch incremental design (``foreachBatch`` running the batch query over the
  micro-batch's rows alone - no carried state, so no held rows replayed nor stored - and
  appending its output to a Delta table written idempotently, ``txnAppId`` / ``txnVersion`` =
  the batch id): any such design does at least this work per micro-batch.  Each stateful
  variant also reports its ``breakdown`` (``breakdown()``): per micro-batch, the query's phases
  (``durationMs``) and, summed over the operator's tasks, its state store's work
  (``stateOperators``: the processor's time, the commit, of which the snapshot upload or the
  changelog write).
* ``settings``: ``packet_floor`` and ``stream`` with Spark's defaults and with the settings
  docs/streaming.md recommends (``SETTINGS``: RocksDB changelog checkpointing, one shard per
  core), side by side, and the batch query; the task CPU seconds of each (``cpu_s``: the JVM's
  and the Python workers', which the machine's load distorts less than the wall clock).
* ``overhead``: a micro-batch's phases, with the settings docs/streaming.md recommends, for
  ``stateless``, ``floor`` and ``stream`` side by side, at 100 rows per micro-batch (2,000 rows,
  10 keys) and at ``--rows`` / ``--batches``: per phase (``durationMs``) the first micro-batch
  (it plans the stateful operator's state schema: ``first``) and the median of the others
  (``median``), ``overhead_ms`` the median micro-batch of ``stream`` less that of ``floor``.
* ``state``: ``--short-keys`` short-lived keys (5 events a second apart each, 20 new keys a
  second) through ``SHORT_QUERY`` (``A -> ~B WITHIN 15 s``); after each micro-batch, the keys
  the state holds (read back with Spark's state data source) and the state store's rows.
* ``flink``: ``FLINK_QUERY`` (``A ->> B WITHIN 6 s``, FlinkCEP semantics) over the events of
  bench/flinkcep.py's formula with ``--keys`` keys, one event a millisecond (about one a second
  per key), as a stream of ``--batches`` files (watermark delay 0: the events are in order)
  against a Flink 2.3 DataStream job (``keyBy`` + ``CEP.pattern``, event time, local
  MiniCluster, parallelism 2; bench/flink/BenchFlinkCep.java, JVM start excluded), and the
  ``packet_floor`` and ``batch`` (``spark.sql`` over the files at rest, into parquet) of the
  same query, all with the settings docs/streaming.md recommends (``settings_of``); the match
  counts and checksums of stream, batch and Flink must agree.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

QUERY = """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.ts) AS start_ts, LAST(C.ts) AS end_ts, COUNT(B.*) AS bs
  PATTERN (A B+ C) WITHIN INTERVAL '30' SECOND
  DEFINE A AS x < 2, B AS x BETWEEN 2 AND 6, C AS x > 7) AS m"""
SCHEMA = "k bigint, ts timestamp, x bigint"
KEEP = "ts < TIMESTAMP '9000-01-01'"
END = "TIMESTAMP '9999-01-02'"

SHORT_QUERY = """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.ts AS started
  SEMANTICS FLINKCEP
  PATTERN (A -> ~B) WITHIN INTERVAL '15' SECOND
  DEFINE A AS x = 0, B AS x = 4) AS m"""

FLINK_QUERY = """
SELECT a_id, b_id FROM events MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.id AS a_id, B.id AS b_id
  ONE ROW PER MATCH AFTER MATCH NO SKIP SEMANTICS FLINKCEP
  PATTERN (A ->> B) WITHIN INTERVAL '6' SECOND
  DEFINE A AS name = 1, B AS name = 2) AS m"""


# ---- data ---------------------------------------------------------------------------------------

def write_files(spark, path: str, frames) -> str:
    """One parquet file per DataFrame of ``frames``, then the end-of-stream marker (once)."""
    if not os.path.exists(os.path.join(path, "_done")):
        shutil.rmtree(path, ignore_errors=True)
        for frame in frames:
            frame.coalesce(1).write.mode("append").parquet(path)
        open(os.path.join(path, "_done"), "w").close()
    return path


def one_a_second(spark, path: str, rows: int, keys: int, batches: int) -> str:
    per = rows // batches
    frames = [spark.range(b * per, (b + 1) * per).selectExpr(
        f"id % {keys} AS k", f"timestamp_seconds(id DIV {keys}) AS ts", "abs(hash(id)) % 10 AS x")
        for b in range(batches)]
    marker = spark.sql(f"SELECT CAST(-1 AS BIGINT) AS k, {END} AS ts, CAST(0 AS BIGINT) AS x")
    return write_files(spark, path, frames + [marker])


def short_lived(spark, path: str, keys: int, batches: int) -> str:
    """Key i has 5 events at 0.05 i + 0..4 s; its first has x = 0, the others x in 1..9."""
    per = -(-keys * 5 // batches)
    events = spark.range(keys * 5).selectExpr(
        "id DIV 5 AS k", "timestamp_micros(CAST(50000 * (id DIV 5) + 1000000 * (id % 5) AS BIGINT)) AS ts",
        "CASE WHEN id % 5 = 0 THEN 0 ELSE 1 + abs(hash(id)) % 9 END AS x").orderBy("ts")
    rows = events.collect()
    frames = [spark.createDataFrame(rows[b * per:(b + 1) * per], SCHEMA) for b in range(batches)]
    marker = spark.sql(f"SELECT CAST(-1 AS BIGINT) AS k, {END} AS ts, CAST(0 AS BIGINT) AS x")
    return write_files(spark, path, [f for f in frames if f.count()] + [marker])


def flink_events(spark, path: str, rows: int, keys: int, batches: int, seed: int) -> str:
    import pyarrow as pa

    from bench.flinkcep import generate

    data = pa.table(generate(rows, keys, seed, spacing=1))
    per = rows // batches
    frames = [spark.createDataFrame(data.slice(b * per, per).to_pandas()).selectExpr(
        "CAST(k AS BIGINT) AS k", "id", "CAST(name AS BIGINT) AS name", "timestamp_millis(ts_ms) AS ts")
        for b in range(batches)]
    marker = spark.sql(f"SELECT CAST(-1 AS BIGINT) AS k, CAST(0 AS BIGINT) AS id, CAST(0 AS BIGINT) AS name, {END} AS ts")
    return write_files(spark, path, frames + [marker])


# ---- running --------------------------------------------------------------------------------

def read_stream(spark, path: str, schema: str, delay: str):
    return (spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(path)
            .withWatermark("ts", delay).where(KEEP))


# the settings docs/streaming.md recommends for a stream on a machine of CORES cores (``settings``)
CHANGELOG = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
CORES = 2


def settings_of(cores: int) -> dict:
    return {CHANGELOG: "true", SHUFFLE_PARTITIONS: str(cores)}


@contextlib.contextmanager
def session_settings(spark, confs: dict):
    """The session with ``confs`` set, as it was after."""
    saved = {key: spark.conf.get(key, None) for key in confs}
    for key, value in confs.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in saved.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)


def run_stream(df, checkpoint: str, sink=None):
    """Run ``df`` with an available-now trigger: (seconds, the query's progress reports)."""
    shutil.rmtree(checkpoint, ignore_errors=True)
    writer = df.writeStream.outputMode("append").option("checkpointLocation", checkpoint)
    writer = writer.format("noop") if sink is None else writer.format("parquet").option("path", sink)
    started = time.perf_counter()
    query = writer.trigger(availableNow=True).start()
    query.awaitTermination()
    return time.perf_counter() - started, query.recentProgress


def no_op():
    """A stateful processor that reads its rows and does nothing."""
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

    return NoOp()


def floor_query(spark, path: str):
    return read_stream(spark, path, SCHEMA, "10 seconds").groupBy("k").transformWithState(
        no_op(), "k bigint", "Append", "EventTime")


def packet_floor_query(spark, path: str, schema: str = SCHEMA, delay: str = "10 seconds"):
    from sql_ext.spark.streaming import SHARD, _packer, shard_expression
    from udtf.transport import PACKET_DDL

    shard = shard_expression(spark, ["k"], int(spark.conf.get("spark.sql.shuffle.partitions")))
    columns = [c.split()[0] for c in schema.split(",")]
    return read_stream(spark, path, schema, delay) \
        .selectExpr(f"{shard} AS `{SHARD}`", *columns) \
        .mapInArrow(_packer(SHARD), PACKET_DDL) \
        .groupBy("shard").transformWithState(no_op(), "shard bigint", "Append", "EventTime")


def incremental_bound(spark, path: str, work: str) -> tuple:
    """(seconds, progress) of ``foreachBatch``: the batch query over each micro-batch's rows,
    appended to a Delta table idempotently (the micro-batch incremental design without its
    carried state)."""
    import sql_ext

    table = f"{work}/incremental_out"
    shutil.rmtree(table, ignore_errors=True)

    def each(frame, batch_id):
        session = frame.sparkSession
        frame.createOrReplaceTempView("events")
        sql_ext.enable(session).sql(QUERY).write.format("delta").mode("append") \
            .option("txnAppId", "bench-incremental").option("txnVersion", batch_id).save(table)

    checkpoint = f"{work}/incremental"
    shutil.rmtree(checkpoint, ignore_errors=True)
    started = time.perf_counter()
    query = read_stream(spark, path, SCHEMA, "10 seconds").writeStream.option("checkpointLocation", checkpoint) \
        .foreachBatch(each).trigger(availableNow=True).start()
    query.awaitTermination()
    return time.perf_counter() - started, query.recentProgress


def floors(spark, data: str, work: str) -> dict:
    import sql_ext

    seconds, progress = {}, {}
    seconds["stateless"], progress["stateless"] = run_stream(read_stream(spark, data, SCHEMA, "10 seconds"),
                                                             f"{work}/stateless")
    seconds["packet_floor"], progress["packet_floor"] = run_stream(packet_floor_query(spark, data), f"{work}/packets")
    read_stream(spark, data, SCHEMA, "10 seconds").createOrReplaceTempView("events")
    seconds["stream"], progress["stream"] = run_stream(sql_ext.stream(spark, QUERY), f"{work}/stream")
    seconds["incremental_bound"], progress["incremental_bound"] = incremental_bound(spark, data, work)
    spark.read.schema(SCHEMA).parquet(data).where(KEEP).createOrReplaceTempView("events")
    started = time.perf_counter()
    spark.sql(QUERY).write.format("noop").mode("overwrite").save()
    seconds["batch"] = time.perf_counter() - started
    return {"seconds": {k: round(v, 2) for k, v in seconds.items()},
            "over_batch": {k: round(seconds["batch"] / v, 3) for k, v in seconds.items() if k != "batch"},
            "median_batch_ms": {k: median_batch_ms(p) for k, p in progress.items()},
            "breakdown": {k: breakdown(p) for k, p in progress.items() if k in ("packet_floor", "stream")}}


def phase_medians(progress) -> dict:
    """Per phase (``durationMs``, ms): the first micro-batch's and the median of the later ones
    (a query's first micro-batch also validates and writes the state schema)."""
    first, later = progress[0]["durationMs"], [p["durationMs"] for p in progress[1:]]
    return {"first": dict(sorted(first.items())),
            "median": {name: statistics.median(d.get(name, 0) for d in later) for name in sorted(first)}}


def overhead(spark, data: str, work: str, cores: int) -> dict:
    """``stateless``, ``floor`` and ``stream`` over ``data`` with ``settings_of(cores)``: the
    phases of each (``phase_medians``) and ``overhead_ms``, the median micro-batch of ``stream``
    less that of ``floor`` (issue 27: at most 1 s at 100 rows)."""
    import sql_ext

    with session_settings(spark, settings_of(cores)):
        progress = {"stateless": run_stream(read_stream(spark, data, SCHEMA, "10 seconds"), f"{work}/o-stateless")[1],
                    "floor": run_stream(floor_query(spark, data), f"{work}/o-floor")[1]}
        read_stream(spark, data, SCHEMA, "10 seconds").createOrReplaceTempView("events")
        progress["stream"] = run_stream(sql_ext.stream(spark, QUERY), f"{work}/o-stream")[1]
    phases = {name: phase_medians(p) for name, p in progress.items()}
    trigger = {name: ph["median"]["triggerExecution"] for name, ph in phases.items()}
    return {"phases": phases, "overhead_ms": trigger["stream"] - trigger["floor"],
            "over_stateless_ms": trigger["stream"] - trigger["stateless"]}


def median_batch_ms(progress) -> float:
    return statistics.median(p["durationMs"]["triggerExecution"] for p in progress)


# the state store's metrics of a breakdown: (name, the operator's metric, or its custom metric)
STORE_METRICS = (("processor", "allUpdatesTimeMs"), ("commit", "commitTimeMs"),
                 ("commit_snapshot_upload", "rocksdbCommitFileSyncLatencyMs"),
                 ("commit_snapshot_zip", "rocksdbSaveZipFilesLatencyMs"),
                 ("commit_changelog", "rocksdbChangeLogWriterCommitLatencyMs"),
                 ("commit_rocksdb_checkpoint", "rocksdbCommitCheckpointLatency"),
                 ("load", "rocksdbLoadLatencyMs"))


def breakdown(progress) -> dict:
    """Where a micro-batch's time goes, in ms per micro-batch (the mean over ``progress``):
    ``phases`` are the query's (``durationMs``: planning, running the micro-batch's job, the
    offset and commit logs), ``task_ms`` the stateful operator's summed over its tasks (they run
    ``local[2]``'s two at a time): the processor's time (its Python runner included), the state
    store's commit and, within it, the RocksDB snapshot's upload (zip and copy) or the changelog
    file's write, and the store's load."""
    n = len(progress)
    phases = {}
    for p in progress:
        for name, ms in p["durationMs"].items():
            phases[name] = phases.get(name, 0) + ms / n
    task_ms = {}
    for p in progress:
        for operator in p["stateOperators"]:
            metrics = {**operator["customMetrics"], **operator}
            for name, metric in STORE_METRICS:
                task_ms[name] = task_ms.get(name, 0) + metrics.get(metric, 0) / n
    return {"micro_batches": n, "phases": {k: round(v) for k, v in sorted(phases.items())},
            "task_ms": {k: round(v) for k, v in task_ms.items()}}


def cpu_seconds() -> float:
    """CPU seconds of this process and its descendants so far (the JVM, the Python workers;
    the reaped ones too, through their parents' counts)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, used = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(pid)], used[int(pid)] = int(fields[1]), sum(map(int, fields[11:15]))

    def mine(pid):
        while pid > 1:
            if pid == os.getpid():
                return True
            pid = parent.get(pid, 0)
        return False

    return sum(t for pid, t in used.items() if mine(pid)) / tick


def settings(spark, data: str, work: str, cores: int) -> dict:
    """``packet_floor`` and ``stream``, with the session's settings and with ``settings_of(cores)``,
    then the batch query: seconds, task CPU seconds, the breakdown of each."""
    import sql_ext

    result = {}

    def timed(name, run):
        cpu = cpu_seconds()
        seconds, progress = run()
        result[name] = {"seconds": round(seconds, 2), "cpu_s": round(cpu_seconds() - cpu, 1),
                        **({"breakdown": breakdown(progress)} if progress else {})}

    for label, confs in (("", {}), ("_recommended", settings_of(cores))):
        with session_settings(spark, confs):
            timed(f"packet_floor{label}", lambda: run_stream(packet_floor_query(spark, data), f"{work}/p{label}"))
            read_stream(spark, data, SCHEMA, "10 seconds").createOrReplaceTempView("events")
            timed(f"stream{label}", lambda: run_stream(sql_ext.stream(spark, QUERY), f"{work}/s{label}"))
    spark.read.schema(SCHEMA).parquet(data).where(KEEP).createOrReplaceTempView("events")

    def batch():
        started = time.perf_counter()
        spark.sql(QUERY).write.format("noop").mode("overwrite").save()
        return time.perf_counter() - started, None

    timed("batch", batch)
    seconds = {name: r["seconds"] for name, r in result.items()}
    result["over_batch"] = {k: round(seconds["batch"] / v, 3) for k, v in seconds.items() if k != "batch"}
    result["stream_over_floor"] = {label or "default": round(seconds[f"packet_floor{label}"] / seconds[f"stream{label}"], 3)
                                   for label in ("", "_recommended")}
    return result


def throughput(spark, data: str, work: str, runs: int) -> dict:
    import sql_ext

    seconds: dict = {}
    progress: dict = {}
    for _ in range(runs):  # round-robin; the fastest run of each counts
        times = {}
        times["floor"], progress["floor"] = run_stream(floor_query(spark, data), f"{work}/floor")
        read_stream(spark, data, SCHEMA, "10 seconds").createOrReplaceTempView("events")
        times["stream"], progress["stream"] = run_stream(sql_ext.stream(spark, QUERY), f"{work}/stream")
        spark.read.schema(SCHEMA).parquet(data).where(KEEP).createOrReplaceTempView("events")
        started = time.perf_counter()
        spark.sql(QUERY).write.format("noop").mode("overwrite").save()
        times["batch"] = time.perf_counter() - started
        print("  " + ", ".join(f"{k} {v:.1f} s" for k, v in times.items()), flush=True)
        seconds = {name: min(t, seconds.get(name, t)) for name, t in times.items()}
    return {"seconds": seconds, "median_batch_ms": {k: median_batch_ms(p) for k, p in progress.items()}}


def state_series(spark, data: str, work: str) -> dict:
    """Keys held and state store rows after each micro-batch of the short-lived keys."""
    import pyarrow.compute as pc

    import sql_ext
    from udtf.stream import POS
    from udtf.transport import from_ipc

    read_stream(spark, data, SCHEMA, "2 seconds").createOrReplaceTempView("events")
    checkpoint = f"{work}/state"
    seconds, progress = run_stream(sql_ext.stream(spark, SHORT_QUERY), checkpoint)
    series = []
    for p in progress:
        batch = p["batchId"]
        state = spark.read.format("statestore").option("stateVarName", "match_recognize") \
            .option("batchId", batch).load(checkpoint).collect()
        keys = sum(pc.sum(pc.equal(from_ipc(r.value.held).column(POS), 0)).as_py() or 0 for r in state)
        series.append({"batch": batch, "input_rows": p["numInputRows"],
                       "watermark": p.get("eventTime", {}).get("watermark"),
                       "keys_held": keys, "state_rows": p["stateOperators"][0]["numRowsTotal"]})
    return {"seconds": seconds, "series": series}


def flink_comparison(spark, data: str, work: str, args) -> dict:
    """With the settings docs/streaming.md recommends: the packet floor, the stream and the batch
    query over the same files (seconds, task CPU seconds), then the Flink job; every answer
    (match count, id sums) must be Flink's."""
    import subprocess

    import sql_ext
    from bench.flinkcep import build_flink

    schema = "k bigint, id bigint, name bigint, ts timestamp"
    seconds, cpu, answers = {}, {}, {}

    def timed(name, run):
        before = cpu_seconds()
        seconds[name] = run()
        cpu[name] = round(cpu_seconds() - before, 1)

    def answer(sink):
        row = spark.read.parquet(sink).selectExpr("COUNT(*) AS m", "SUM(a_id) AS f", "SUM(b_id) AS l").collect()[0]
        return {"matches": row.m, "sum_first": row.f or 0, "sum_last": row.l or 0}

    with session_settings(spark, settings_of(CORES)):
        timed("packet_floor", lambda: run_stream(packet_floor_query(spark, data, schema, "0 seconds"),
                                                 f"{work}/flink_floor")[0])
        read_stream(spark, data, schema, "0 seconds").createOrReplaceTempView("events")
        sink = f"{work}/flink_out"
        shutil.rmtree(sink, ignore_errors=True)
        timed("stream", lambda: run_stream(sql_ext.stream(spark, FLINK_QUERY), f"{work}/flink_cp", sink=sink)[0])
        answers["stream"] = answer(sink)
        spark.read.schema(schema).parquet(data).where(KEEP).createOrReplaceTempView("events")
        batch_sink = f"{work}/flink_batch_out"

        def batch():
            started = time.perf_counter()
            spark.sql(FLINK_QUERY).write.mode("overwrite").parquet(batch_sink)
            return time.perf_counter() - started

        timed("batch", batch)
        answers["batch"] = answer(batch_sink)
    java, cp = build_flink()
    done = subprocess.run([java, "-Xmx4g", "-XX:+UseSerialGC", "-cp", cp, "BenchFlinkCep", f"--rows={args.rows}",
                           f"--keys={args.keys}", f"--seed={args.seed}", "--mode=job", "--parallelism=2",
                           "--query=q2", "--spacing=1"], capture_output=True, text=True, check=True)
    flink = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][0])
    seconds["flink"] = flink["seconds"]
    answers["flink"] = {k: flink[k] for k in answers["stream"]}
    same = all(a == answers["flink"] for a in answers.values())
    return {"seconds": {k: round(v, 2) for k, v in seconds.items()}, "cpu_s": cpu,
            "rows_per_s": {k: round(args.rows / v) for k, v in seconds.items()},
            "stream_over_flink": round(seconds["flink"] / seconds["stream"], 3),
            "stream_over_batch": round(seconds["batch"] / seconds["stream"], 3),
            "stream_over_floor": round(seconds["packet_floor"] / seconds["stream"], 3),
            "answers": answers, "equal": same}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default="throughput,overhead,state,flink")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--short-keys", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "sparkcep-bench-streaming"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    parts = args.parts.split(",")
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "tests" / "flink"))

    import sql_ext
    from sql_examples.local_spark import get_spark

    spark = sql_ext.enable(get_spark(app_name="sparkcep-bench-streaming"))
    spark.conf.set("spark.sql.streaming.stateStore.providerClass",
                   "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
    work = tempfile.mkdtemp(prefix="sparkcep-bench-streaming-")
    report: dict = {"rows": args.rows, "keys": args.keys, "micro_batches": args.batches}
    try:
        if "throughput" in parts:
            data = one_a_second(spark, f"{args.data_dir}/a-{args.rows}-{args.keys}-{args.batches}",
                                args.rows, args.keys, args.batches)
            result = throughput(spark, data, work, args.runs)
            s = result["seconds"]
            report["throughput"] = {**{f"{k}_s": round(v, 2) for k, v in s.items()},
                                    **{f"{k}_rows_per_s": round(args.rows / v) for k, v in s.items()},
                                    "stream_over_batch": round(s["batch"] / s["stream"], 3),
                                    "stream_over_floor": round(s["floor"] / s["stream"], 3),
                                    "median_batch_ms": result["median_batch_ms"]}
        if "floors" in parts:
            data = one_a_second(spark, f"{args.data_dir}/a-{args.rows}-{args.keys}-{args.batches}",
                                args.rows, args.keys, args.batches)
            report["floors"] = floors(spark, data, work)
        if "settings" in parts:
            data = one_a_second(spark, f"{args.data_dir}/a-{args.rows}-{args.keys}-{args.batches}",
                                args.rows, args.keys, args.batches)
            report["settings"] = settings(spark, data, work, CORES)
        if "overhead" in parts:
            small = one_a_second(spark, f"{args.data_dir}/a-2000-10-20", 2000, 10, 20)
            data = one_a_second(spark, f"{args.data_dir}/a-{args.rows}-{args.keys}-{args.batches}",
                                args.rows, args.keys, args.batches)
            report["overhead"] = {"100": overhead(spark, small, work, CORES),
                                  str(args.rows // args.batches): overhead(spark, data, work, CORES)}
        if "state" in parts:
            data = short_lived(spark, f"{args.data_dir}/short-{args.short_keys}", args.short_keys, 10)
            report["state"] = state_series(spark, data, work)
        if "flink" in parts:
            data = flink_events(spark, f"{args.data_dir}/flink-{args.rows}-{args.keys}-{args.batches}-{args.seed}",
                                args.rows, args.keys, args.batches, args.seed)
            report["flink"] = flink_comparison(spark, data, work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report) if args.json else json.dumps(report, indent=1))
    ok = report.get("flink", {}).get("equal", True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
