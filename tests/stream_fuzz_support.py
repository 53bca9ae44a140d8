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
ODD_SCHEMA = "sym DOUBLE, ts TIMESTAMP, seq BIGINT, price DOUBLE, x DOUBLE"  # (``odd_values``)
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


def odd_values(rows: list, seed: int) -> list:
    """``rows_for``'s rows in ``ODD_SCHEMA``: the inputs a stream must treat as batch does - the
    first key 0.0 or -0.0 row by row (one partition), the second NaN, the last NULL; NaN and
    NULL prices and x; a NULL event time now and then; event times tied with the row before."""
    r = random.Random(f"odd values:{seed}")
    syms = sorted({row["sym"] for row in rows if row["sym"] is not None})
    out, before = [], {}
    for row in rows:
        sym = row["sym"]
        odd = dict(row, sym=None if sym is None else (r.choice([0.0, -0.0]) if sym == syms[0] else
                                                    math.nan if sym == syms[1] else float(sym)))
        for name in ("price", "x"):
            if odd[name] is not None:
                odd[name] = math.nan if r.random() < 0.06 else odd[name] + r.choice([0.0, 0.5])
        if r.random() < 0.04:
            odd["ts"] = None
        elif sym in before and r.random() < 0.15:
            odd["ts"] = before[sym]
        if odd["ts"] is not None:
            before[sym] = odd["ts"]
        out.append(odd)
    return out


def load_rows(spark, name: str, rows: list, schema: str = SCHEMA) -> None:
    """``rows`` as the temporary view ``name``, its ``ts`` marked as a watermark column (as
    ``withWatermark`` marks a stream's)."""
    from pyspark.sql import functions as F

    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    data = [(r["sym"], None if r["ts"] is None else epoch + dt.timedelta(microseconds=r["ts"]), r["seq"], r["price"],
             r["x"]) for r in rows]
    frame = spark.createDataFrame(data, schema)
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
    """``table`` in the batch UDTF's order, as Spark sorts it: by PARTITION BY, then ORDER BY
    with its NULLs first or last as each key says (the default: first when ascending) and NaN
    above every number."""
    columns, keys = {}, []
    for k, name in enumerate(planned.plan.partition):
        columns[f"p{k}"] = table.column(name)
        keys.append((f"p{k}", "ascending"))
    for k, o in enumerate(planned.spec.order):
        column, direction = table.column(o.column), "descending" if o.descending else "ascending"
        nan = pc.fill_null(pc.is_nan(column), False) if pa.types.is_floating(column.type) else pc.is_null(column)
        columns[f"n{k}"], columns[f"q{k}"], columns[f"o{k}"] = pc.is_null(column), nan, column
        keys += [(f"n{k}", "descending" if o.nulls_first else "ascending"), (f"q{k}", direction), (f"o{k}", direction)]
    return table.take(pc.sort_indices(pa.table(columns), sort_keys=keys))


def batch_engine(planned: Planned, table: pa.Table) -> pa.Table:
    """The batch UDTF's output over ``table``: a runner per partition, the partitions as Spark
    groups them (NaN equals NaN, -0.0 equals 0.0), each fed whole (``grouped``: a stream plan has
    no Spark-computed partition starts, and comparing keys in Arrow would split a NaN key)."""
    table = sort_input(planned, table)
    keys = [tuple(_value(table.column(k)[i].as_py()) for k in planned.plan.partition) for i in range(table.num_rows)]
    out, lo = [], 0
    for hi in range(1, table.num_rows + 1):
        if hi < table.num_rows and keys[hi] == keys[lo]:
            continue
        runner = PartitionRunner(planned.plan, planned.output_schema, grouped=True)
        for batch in table.slice(lo, hi - lo).to_batches(max_chunksize=64):
            out += runner.feed(batch)
        out += runner.finish()
        lo = hi
    return pa.Table.from_batches(out, planned.output_schema)


class Arrival:
    """How a stream delivers ``table``'s rows: each row's arrival rank (event time plus a
    jitter below ``delay``, a few rows ``late`` beyond it), micro-batch sizes, shards per key
    and restarts."""

    def __init__(self, seed: int, n: int, times: list, delay: int, late: float):
        r = random.Random(f"arrival:{seed}")
        self.delay = delay
        known = [t for t in times if t is not None]
        times = [t if t is not None else r.choice(known) if known else 0 for t in times]  # (a NULL time: anywhere)
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
    key_of = [tuple(_value(table.column(k)[i].as_py()) for k in keys) for i in range(table.num_rows)]
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
    if isinstance(v, float):  # (-0.0: 0.0, as Spark groups and compares them)
        return "nan" if math.isnan(v) else float(f"{v:.9g}") + 0.0
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
    untimed = {i for i, t in enumerate(times) if t is None}
    assert untimed <= set(late_rows), "a row without event time reached the matcher (it is late)"
    assert set(late_rows) <= arrival.beyond | untimed, "a row within the watermark delay was taken for late"
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
    rows = lambda found: sorted((tuple(_value(v) for v in row) for row in found), key=repr)
    return rows(got), rows(expected)


def _struct(spec):
    import json

    from pyspark.sql.types import StructType

    return StructType.fromJson({"type": "struct", "fields": [
        {"name": c.name, "type": json.loads(c.type_json), "nullable": True, "metadata": {}}
        for c in spec.outputs]})
