"""A differential fuzz of the streaming path against batch, on random query shapes
(bench/shapes.py's generator, with WITHIN, both SEMANTICS and ties in the event time added).

A shape is planned twice through Spark: as a streaming statement (``FuzzCatalog``: the
``StreamCatalog`` rewrite, its processor's ``StreamSpec`` captured instead of started, its input
computed over a static table) and as the batch statement ``spark.sql`` runs.  Then:

* ``engine_case``: the input rows through ``udtf.stream.ShardStepper`` - arriving in random
  chunks, out of order within the watermark delay and sometimes beyond it (late), keys spread
  over shards, the watermark moved as Structured Streaming moves it, timers fired once it
  passes them, every state through its stored encoding and a fresh stepper at random (a
  restart) - must emit what ``udtf.arrow.PartitionRunner`` emits for the same plan over the
  rows the stream did not set aside as late;
* ``statement_rows``: the stream's output, put where the streaming view would be, read by the
  rest of the rewritten statement, must equal ``spark.sql`` of the batch statement over the
  same rows (the streaming planner against the batch planner).

A statement the stream refuses must be one ``check_final`` names (``$``, or a greedy unbounded
loop of always-true variables in standard semantics without WITHIN).
"""
from __future__ import annotations

import datetime as dt
import math
import random
import re
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from shapes import Generator  # noqa: E402

from stream_driver import drive  # noqa: E402
from sql_ext.compiler.lower import stream_view  # noqa: E402
from sql_ext.compiler.rewrite import rewrite_sql  # noqa: E402
from sql_ext.spark.streaming import StreamCatalog  # noqa: E402
from udtf.arrow import PartitionRunner  # noqa: E402
from udtf.plan import EnginePlan  # noqa: E402
from udtf.stream import ShardStepper, arrow_schema  # noqa: E402
from udtf.transport import dump_state, load_state  # noqa: E402

SECOND = 1_000_000
T0 = 1_700_000_000 * SECOND
SCHEMA = "sym INT, ts TIMESTAMP, seq BIGINT, price INT, x INT"
REFUSALS = ("PATTERN anchor $ on a stream", "a greedy unbounded loop over")


class FuzzCatalog(StreamCatalog):
    """The streaming rewrite of a statement over a static input: the processor's spec and the
    query of its input rows are kept (``captured``) instead of a ``transformWithState`` view."""

    def register_stream(self, lowered, analysis, computed, computed_fields, input_fields):
        source = self._ask(computed)
        spec = self.stream_spec(lowered, analysis, source.schema, computed_fields, input_fields)
        self.captured = (spec, source.selectExpr(*[f"`{c.name}`" for c in spec.inputs]), lowered)
        self.spark.createDataFrame([], _struct(spec)).createOrReplaceTempView(stream_view(lowered.name))


def shape_sql(seed: int, index: int, table: str) -> tuple:
    """(statement, description): shape ``index`` of bench/shapes.py's seed ``seed``, ordered by
    ``ts, seq`` (ties in ``ts`` decided), maybe with WITHIN and maybe in FlinkCEP semantics."""
    r = random.Random(f"stream:{seed}:{index}")
    shape = Generator(seed).shape(index)
    sql = shape.query(table).replace("ORDER BY ts", "ORDER BY ts, seq")
    extra = []
    if r.random() < 0.4:
        seconds = r.choice([2, 4, 8, 20])
        sql = re.sub(r"(\n  PATTERN \(.*\))", rf"\1 WITHIN INTERVAL '{seconds}' SECOND", sql)
        extra.append(f"WITHIN {seconds}s")
    if r.random() < 0.2:
        sql = sql.replace("\n  PATTERN", "\n  SEMANTICS FLINKCEP\n  PATTERN")
        extra.append("FLINKCEP")
    if r.random() < 0.15:
        sql = sql.replace("PARTITION BY sym ", "")
        extra.append("no PARTITION BY")
    return sql, f"shape {seed}:{index} " + shape.describe() + ("; " + ", ".join(extra) if extra else "")


def rows_for(seed: int, keys: int, per_key: int) -> list:
    """Rows of ``SCHEMA`` (ts in microseconds): several keys of up to ``per_key`` rows (the last
    key NULL, if there are three or more), steps of 0-2 s (ties), some with microseconds (the
    watermark is in milliseconds), NULL prices and x now and then."""
    r = random.Random(f"rows:{seed}")
    out, seq = [], 0
    for k in range(keys):
        t = T0 + r.randrange(5) * SECOND
        price = 100
        for _ in range(r.randint(per_key // 3, per_key)):  # (keys ending at different times)
            t += r.choice([0, 1, 1, 1, 2]) * SECOND + (r.randrange(2000) if r.random() < 0.2 else 0)
            price += r.randint(-3, 3)
            seq += 1
            out.append({"sym": None if k == keys - 1 >= 2 else k, "ts": t, "seq": seq, "price": None if r.random() < 0.03 else price,
                        "x": None if r.random() < 0.03 else r.randint(0, 9)})
    return out


def load_rows(spark, name: str, rows: list) -> None:
    """``rows`` as the temporary view ``name``, its ``ts`` marked as a watermark column (as
    ``withWatermark`` marks a stream's)."""
    from pyspark.sql import functions as F

    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    data = [(r["sym"], epoch + dt.timedelta(microseconds=r["ts"]), r["seq"], r["price"], r["x"]) for r in rows]
    frame = spark.createDataFrame(data, SCHEMA)
    frame.withColumn("ts", F.col("ts").alias("ts", metadata={"spark.watermarkDelayMs": 3000})) \
        .createOrReplaceTempView(name)


class Planned:
    """A statement's streaming plan: its spec, the engine input (Arrow, in the spec's input
    schema, with ``__arrival`` order) and what the rewritten statement reads."""

    def __init__(self, spark, sql: str):
        catalog = FuzzCatalog(spark)
        self.rewritten, _ = rewrite_sql(sql, catalog)
        self.spec, source, self.lowered = catalog.captured
        self.plan = EnginePlan.from_json(self.spec.plan)
        self.input_schema = arrow_schema(self.spec.inputs)
        self.output_schema = arrow_schema(self.spec.outputs)
        table = source.toArrow()
        self.input = pa.Table.from_arrays([table.column(n).cast(f.type) for n, f in
                                           zip(self.input_schema.names, self.input_schema)], schema=self.input_schema)

    def stepper(self) -> ShardStepper:
        return ShardStepper(self.spec, self.input_schema, self.output_schema)


def sort_input(planned: Planned, table: pa.Table) -> pa.Table:
    """``table`` in the batch UDTF's order: by PARTITION BY, then ORDER BY."""
    keys = [(k, "ascending") for k in planned.plan.partition]
    for o in planned.spec.order:
        keys.append((o.column, "descending" if o.descending else "ascending"))
    return table.take(pc.sort_indices(table, sort_keys=keys))


def batch_engine(planned: Planned, table: pa.Table) -> pa.Table:
    runner = PartitionRunner(planned.plan, planned.output_schema)
    out = []
    for batch in sort_input(planned, table).to_batches(max_chunksize=64):
        out += runner.feed(batch)
    out += runner.finish()
    return pa.Table.from_batches(out, planned.output_schema)


class Arrival:
    """How a stream delivers ``table``'s rows: each row's arrival rank (event time plus a
    jitter below ``delay``, a few rows ``late`` beyond it), micro-batch sizes, shards per key
    and restarts."""

    def __init__(self, seed: int, n: int, times: list, delay: int, late: float):
        r = random.Random(f"arrival:{seed}")
        self.delay = delay
        beyond = [r.random() < late for _ in times]
        self.beyond = {i for i, b in enumerate(beyond) if b}  # the rows that may arrive late
        # a late row arrives up to 4 delays behind, or with the last rows (when its key may have ended)
        jitter = [t + r.randrange(delay) + (0 if not b else r.randrange(delay, 4 * delay) if r.random() < .7 else
                                            math.inf) for t, b in zip(times, beyond)]
        order = sorted(range(n), key=lambda i: (jitter[i], r.random()))
        self.order = [i for i in order if jitter[i] != math.inf]
        self.stragglers = [i for i in order if jitter[i] == math.inf]  # a batch of their own, at the end
        self.sizes = []
        left = len(self.order)
        while left > 0:
            size = r.choice([0, 1, 1, 2, 3, 5, 8, 20, 60] if n > 60 else [0, 1, 1, 2, 3, 5])
            self.sizes.append(min(size, left))
            left -= size
        self.shards = r.randint(1, 3)
        self.restart = r.random() * 0.5  # chance of a fresh stepper before a step
        self.idle = r.random() < 0.5  # empty micro-batches between data ones (the watermark moves)
        self.r = r


def stream_engine(planned: Planned, table: pa.Table, arrival: Arrival) -> tuple:
    """(the union of the stepper's output, the indexes of ``table``'s rows set aside as late)."""
    stepper = planned.stepper()
    keys = planned.plan.partition
    key_of = [tuple(table.column(k)[i].as_py() for k in keys) for i in range(table.num_rows)]
    shard_of = {}
    for key in sorted(set(key_of), key=repr):
        shard_of[key] = arrival.r.randrange(arrival.shards)
    ts = table.column(planned.spec.order[0].column).cast(pa.int64()).to_pylist()
    stored: dict = {}
    out: list = []
    late: list = []
    r = arrival.r
    with_index = table.append_column("__i", pa.array(range(table.num_rows), pa.int64()))

    def step(shard, indexes, watermark_ms):
        nonlocal stepper
        if r.random() < arrival.restart:
            stepper = planned.stepper()
        state = stepper.restore(load_state(stored.get(shard)))
        new = None
        if indexes:
            new = with_index.take(pa.array(indexes, pa.int64())).select(planned.input_schema.names)
        done = stepper.step(state, new, watermark_ms)
        if done.late is not None:
            late.extend(_late_indexes(with_index, indexes, done.late, planned))
        stored[shard] = None if done.shard is None else dump_state(stepper.stored(done.shard))
        if done.output is not None:
            out.append(done.output)
        return done.timer

    batches, at = [], 0
    for size in arrival.sizes:
        batches.append(arrival.order[at:at + size])
        at += size
        if arrival.idle and r.random() < 0.3:
            batches.append([])
    if arrival.stragglers:
        batches += [[], arrival.stragglers]
    drive(batches, lambda i: shard_of[key_of[i]], lambda i: ts[i], arrival.delay, step)
    left = [s for s, state in stored.items() if state is not None]
    assert not left, f"state left after the end of the stream in shards {left}"
    output = pa.Table.from_batches(out, planned.output_schema) if out else planned.output_schema.empty_table()
    return output, late


def _late_indexes(with_index, indexes, late: pa.Table, planned) -> list:
    """The indexes (in the input) of the rows ``late`` holds, out of the step's ``indexes``."""
    offered = with_index.take(pa.array(indexes, pa.int64()))
    names = planned.input_schema.names
    wanted = {}
    for row in late.select(names).to_pylist():
        key = repr(tuple(row.values()))
        wanted[key] = wanted.get(key, 0) + 1
    found = []
    for row, i in zip(offered.select(names).to_pylist(), offered.column("__i").to_pylist()):
        key = repr(tuple(row.values()))
        if wanted.get(key):
            wanted[key] -= 1
            found.append(i)
    return found


def canonical(table: pa.Table) -> list:
    """The rows of ``table`` as a sorted list (floats rounded to 9 significant digits)."""
    return sorted((tuple(_value(v) for v in row.values()) for row in table.to_pylist()), key=repr)


def _value(v):
    if isinstance(v, float):
        return "nan" if math.isnan(v) else float(f"{v:.9g}")
    if isinstance(v, list):
        return tuple(_value(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, _value(x)) for k, x in v.items())
    return v


def engine_case(planned: Planned, seed: int, late: float = 0.0) -> tuple:
    """(stream output rows, batch output rows) for one arrival of ``planned.input``; the batch
    runs over the rows the stream did not set aside as late."""
    table = planned.input
    times = table.column(planned.spec.order[0].column).cast(pa.int64()).to_pylist()
    arrival = Arrival(seed, table.num_rows, times, random.Random(seed).choice([1, 3, 6]) * SECOND, late)
    got, late_rows = stream_engine(planned, table, arrival)
    assert set(late_rows) <= arrival.beyond, "a row within the watermark delay was taken for late"
    if late_rows:
        keep = pa.array([i not in set(late_rows) for i in range(table.num_rows)])
        table = table.filter(keep)
    return canonical(got), canonical(batch_engine(planned, table)), late_rows


def statement_rows(spark, planned: Planned, stream_output: pa.Table, sql_batch: str) -> tuple:
    """(the rewritten streaming statement over ``stream_output``, ``spark.sql`` of the batch
    statement), as sorted rows."""
    frame = spark.createDataFrame(stream_output) if stream_output.num_rows else \
        spark.createDataFrame([], _struct(planned.spec))
    frame.createOrReplaceTempView(stream_view(planned.lowered.name))
    got = spark.sql(planned.rewritten).collect()
    expected = spark.sql(sql_batch).collect()
    key = lambda row: repr(tuple(_value(v) for v in row))
    return sorted(map(tuple, got), key=key), sorted(map(tuple, expected), key=key)


def _struct(spec):
    import json

    from pyspark.sql.types import StructType

    return StructType.fromJson({"type": "struct", "fields": [
        {"name": c.name, "type": json.loads(c.type_json), "nullable": True, "metadata": {}}
        for c in spec.outputs]})
