"""Deterministic streams for the streaming tier: a Python streaming data source replaying
scripted micro-batches, and helpers to run a streaming query to its end.

``scripted`` (option ``path``): a JSON file ``{"schema": DDL, "batches": [[row, ...], ...]}``,
one scripted batch per micro-batch; a row is a list of values in schema order, TIMESTAMP
columns as microseconds since the epoch.  Offsets are batch counts, so a restarted query reads
exactly the batches it had not committed.  ``SupportsTriggerAvailableNow`` lets a query run
every scripted batch and stop.
"""
from __future__ import annotations

import datetime as dt
import json
import os

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, SupportsTriggerAvailableNow

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
# a row at END_TS pushes the watermark (delay <= 1 day) past udtf.stream.END_OF_STREAM
END_TS = dt.datetime(9999, 1, 2, tzinfo=dt.timezone.utc)


def micros(value: dt.datetime) -> int:
    return (value - EPOCH) // dt.timedelta(microseconds=1)


class _Batch(InputPartition):
    def __init__(self, index: int):
        self.index = index


class ScriptedReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options):
        self.path = options["path"]
        self.target = None

    def _count(self) -> int:
        with open(self.path) as f:
            return len(json.load(f)["batches"])

    def initialOffset(self):
        return {"i": 0}

    def prepareForTriggerAvailableNow(self):
        self.target = self._count()

    def latestOffset(self, start, limit):
        end = self._count() if self.target is None else self.target
        if isinstance(limit, ReadAllAvailable):
            return {"i": end}
        return {"i": min(end, start["i"] + 1)}

    def getDefaultReadLimit(self):
        from pyspark.sql.streaming.datasource import ReadMaxRows

        return ReadMaxRows(1)

    def partitions(self, start, end):
        return [_Batch(i) for i in range(start["i"], end["i"])]

    def read(self, partition):
        with open(self.path) as f:
            script = json.load(f)
        stamps = [c.split()[1].lower() == "timestamp" for c in script["schema"].split(",")]  # flat schemas
        for row in script["batches"][partition.index]:
            yield tuple(EPOCH + dt.timedelta(microseconds=v) if stamp and v is not None else v
                        for v, stamp in zip(row, stamps))


class ScriptedSource(DataSource):
    @classmethod
    def name(cls):
        return "scripted"

    def schema(self):
        with open(self.options["path"]) as f:
            return json.load(f)["schema"]

    def streamReader(self, schema):
        return ScriptedReader(self.options)


def write_script(path: str, schema: str, batches: list) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"schema": schema, "batches": batches}, f)
    return path


def scripted(spark, path: str, event_time: str, delay: str):
    """The streaming DataFrame of the script at ``path`` with a watermark on ``event_time``."""
    return _script(spark, path).withWatermark(event_time, delay)


def arriving(spark, path: str):
    """The streaming DataFrame of the script at ``path`` with its rows' arrival time (the
    micro-batch's ``current_timestamp()``) in a column ``arrival``."""
    from pyspark.sql import functions as F

    return _script(spark, path).withColumn("arrival", F.current_timestamp())


def _script(spark, path: str):
    import sys

    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import tests/
    spark.dataSource.register(ScriptedSource)
    return spark.readStream.format("scripted").option("path", path).load()


def run_until(df, checkpoint: str, done, timeout: float = 240):
    """Run the streaming DataFrame ``df`` with a 200 ms processing-time trigger until
    ``done(rows)`` holds of its collected rows (batch id, row), at most ``timeout`` seconds;
    (those rows, the query's progress reports).

    The query stops only once the last batch that delivered rows is in the checkpoint's
    commit log: a foreachBatch sink is replayed from the last committed batch, so stopping
    between the delivery and the commit would hand the batch's rows to the next run again
    (this collecting sink is not idempotent by batch id)."""
    import time

    got: list = []
    writer = df.writeStream.outputMode("append").option("checkpointLocation", checkpoint) \
        .foreachBatch(lambda frame, batch: got.extend((batch, tuple(r)) for r in frame.collect()))
    query = writer.trigger(processingTime="200 milliseconds").start()
    try:
        deadline = time.monotonic() + timeout
        while not done(list(got)) and time.monotonic() < deadline and query.isActive:
            time.sleep(0.5)
        delivered = [batch for batch, _ in got]
        while delivered and query.isActive and time.monotonic() < deadline \
                and not os.path.exists(os.path.join(checkpoint, "commits", str(max(delivered)))):
            time.sleep(0.1)
        if query.exception() is not None:
            raise query.exception()
        progress = query.recentProgress
    finally:
        query.stop()
    return list(got), progress


def run_to_end(df, checkpoint: str):
    """Run the streaming DataFrame ``df`` with an available-now trigger; (collected rows per
    batch id, the query's progress reports)."""
    got: list = []
    writer = df.writeStream.outputMode("append").option("checkpointLocation", checkpoint) \
        .foreachBatch(lambda frame, batch: got.extend((batch, tuple(r)) for r in frame.collect()))
    query = writer.trigger(availableNow=True).start()
    query.awaitTermination()
    return got, query.recentProgress
