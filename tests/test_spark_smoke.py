"""Smoke tests of the Spark runtime path sparkcep depends on.

They check, with real outputs, that on this stack (pyspark 4.2, pyarrow, Delta):
  a. an ``arrow_udtf`` called from SQL over ``TABLE(... DISTRIBUTE BY k SORT BY k, ts)``
     gets ``pyarrow.RecordBatch`` batches, can carry an open partition across
     batches and flush it in ``terminate()``;
  b. a UDTF class made at run time (``type(...)``) with a plan string as class
     attribute is pickled to the workers by value, under a generated name;
  c. Delta tables round-trip (managed table and path, with time travel);
  d. decimal / timestamp / date / string / boolean / NULL pass through a UDTF
     unchanged, and the Arrow types the UDTF sees are the documented ones;
  e. scalar (non-TABLE) arguments arrive as Arrow arrays, one value per row.

Pickling note: Spark pickles UDTF classes with cloudpickle.  Classes and
functions at module level of an importable module are pickled *by reference*,
so the worker must be able to import that module.  Test modules are not
importable on the workers, hence ``register_pickle_by_value`` below.  Product
code in ``udtf/`` is importable there (editable install), so it needs nothing.
"""

import datetime as dt
import decimal
import hashlib
import sys
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import cloudpickle
from pyspark.sql.functions import arrow_udtf
from spark_confs import session_confs

cloudpickle.register_pickle_by_value(sys.modules[__name__])

UTC = dt.timezone.utc


# --------------------------------------------------------------------------
# a. partition boundaries across batches, terminate() flush
# --------------------------------------------------------------------------

STATS_SCHEMA = "k bigint, n bigint, first_ts timestamp, last_ts timestamp, nbatches int"
_TS = pa.timestamp("us", tz="UTC")


class PartitionStats:
    """Per partition key: row count, first and last ts, number of batches it spanned.

    Input is sorted by (k, ts) within each task, so each key is one contiguous
    run of rows; a run may straddle any number of batches.  Runs are found with
    numpy; the last run of a batch stays open until the next batch (or
    terminate) shows it ended.
    """

    def __init__(self):
        self.open = None  # [key, n, first_us, last_us, nbatches]

    def _emit(self, rows):
        k, n, first, last, nb = zip(*rows)
        return pa.RecordBatch.from_arrays(
            [
                pa.array(k, pa.int64()),
                pa.array(n, pa.int64()),
                pa.array(first, pa.int64()).cast(_TS),
                pa.array(last, pa.int64()).cast(_TS),
                pa.array(nb, pa.int32()),
            ],
            names=["k", "n", "first_ts", "last_ts", "nbatches"],
        )

    def eval(self, batch: pa.RecordBatch):
        assert isinstance(batch, pa.RecordBatch), type(batch)
        if batch.num_rows == 0:
            return
        k = batch.column("k").to_numpy(zero_copy_only=False)
        ts = batch.column("ts").cast(pa.int64()).to_numpy(zero_copy_only=False)
        cut = np.flatnonzero(k[1:] != k[:-1]) + 1
        starts = np.concatenate(([0], cut))
        ends = np.concatenate((cut, [len(k)]))
        runs = [
            [int(k[s]), int(e - s), int(ts[s]), int(ts[e - 1]), 1]
            for s, e in zip(starts.tolist(), ends.tolist())
        ]
        done = []
        if self.open is not None:
            if self.open[0] == runs[0][0]:  # same partition continues
                first = runs[0]
                first[1] += self.open[1]
                first[2] = self.open[2]
                first[4] += self.open[4]
            else:
                done.append(self.open)
        done.extend(runs[:-1])
        self.open = runs[-1]
        if done:
            yield self._emit(done)

    def terminate(self):
        # Emit only if this task saw rows: on Spark 4.2.0 an arrow UDTF whose
        # terminate() returns rows in a task with *no input rows* fails with a
        # NullPointerException in EvalPythonUDTFExec (JoinedRow.row1 is null).
        if self.open is not None:
            yield self._emit([self.open])
            self.open = None


def test_arrow_udtf_partition_boundaries_across_batches(spark):
    spark.udtf.register("smoke_udtf", arrow_udtf(PartitionStats, returnType=STATS_SCHEMA))
    # 50,000 rows: keys 0..5 with 8,000 rows each, key 6 with 1,999 rows, key 7
    # with a single row; ts is not monotone in id, so SORT BY ts matters.
    spark.sql(
        """
        SELECT CASE WHEN id < 48000 THEN id % 6 WHEN id < 49999 THEN 6 ELSE 7 END AS k,
               timestamp_seconds(1700000000 + pmod(id * 7919, 100003)) AS ts,
               id AS v
        FROM range(50000)
        """
    ).createOrReplaceTempView("smoke_events")

    with session_confs(spark, {"spark.sql.execution.arrow.maxRecordsPerBatch": "1000"}):
        got = spark.sql(
            """
            SELECT * FROM smoke_udtf(TABLE(
              SELECT k, ts, v FROM smoke_events DISTRIBUTE BY k SORT BY k, ts))
            """
        ).collect()
    assert spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch") == "10000"

    expected = {
        r.k: (r.n, r.first_ts, r.last_ts)
        for r in spark.sql(
            "SELECT k, count(*) n, min(ts) first_ts, max(ts) last_ts FROM smoke_events GROUP BY k"
        ).collect()
    }
    assert len(got) == 8, got  # one row per key, no key split or duplicated
    assert {r.k: (r.n, r.first_ts, r.last_ts) for r in got} == expected
    assert sum(r.n for r in got) == 50000
    by_key = {r.k: r for r in got}
    assert by_key[7].n == 1 and by_key[7].first_ts == by_key[7].last_ts
    # batches really were at most 1,000 rows, so big partitions straddled batches
    for r in got:
        assert r.nbatches >= -(-r.n // 1000), r
    assert all(by_key[k].nbatches >= 8 for k in range(6))


# --------------------------------------------------------------------------
# b. dynamically created class with a plan string, generated name
# --------------------------------------------------------------------------


class PlanEchoBase:
    """Echoes the class attribute PLAN (set on the generated subclass)."""

    PLAN = None

    def __init__(self):
        self.rows = 0

    def eval(self, batch: pa.RecordBatch):
        self.rows += batch.num_rows
        return iter(())

    def terminate(self):
        if self.rows:
            plan = type(self).PLAN
            yield pa.table(
                {
                    "cls": [type(self).__name__],
                    "plan_sha": [hashlib.sha256(plan.encode()).hexdigest()],
                    "plan_len": pa.array([len(plan)], pa.int64()),
                    "rows": pa.array([self.rows], pa.int64()),
                }
            )


def make_plan_udtf(plan: str):
    """Like the product: one class per query, made at run time, plan as class attribute."""
    name = f"mr_{uuid.uuid4().hex}"
    cls = type(name, (PlanEchoBase,), {"PLAN": plan, "__module__": __name__})
    return name, arrow_udtf(cls, returnType="cls string, plan_sha string, plan_len bigint, rows bigint")


def test_dynamic_udtf_class_with_plan_is_pickled_to_workers(spark):
    plans = [
        '{"pattern": "A B+ C", "define": {"B": "price > PREV(price)"}, "note": "π≈3.14"}',
        "x" * 200_000 + " second plan",  # big plans must survive too
    ]
    names = []
    for plan in plans:
        name, fn = make_plan_udtf(plan)
        spark.udtf.register(name, fn)
        names.append(name)
    assert names[0] != names[1]

    union = " UNION ALL ".join(
        f"SELECT * FROM {n}(TABLE(SELECT id FROM range(0, 1000, 1, 2) DISTRIBUTE BY id))" for n in names
    )
    got = spark.sql(union).collect()

    for name, plan in zip(names, plans):
        mine = [r for r in got if r.cls == name]
        assert mine, (name, got)
        assert {r.plan_sha for r in mine} == {hashlib.sha256(plan.encode()).hexdigest()}
        assert {r.plan_len for r in mine} == {len(plan)}
        assert sum(r.rows for r in mine) == 1000
    assert {r.cls for r in got} == set(names)


# --------------------------------------------------------------------------
# c. Delta round trip
# --------------------------------------------------------------------------


def test_delta_round_trip(spark, tmp_path):
    df = spark.createDataFrame(
        [(1, "a", decimal.Decimal("1.50")), (2, None, decimal.Decimal("-3.25"))],
        "id int, s string, amount decimal(10,2)",
    )

    # managed table
    spark.sql("DROP TABLE IF EXISTS smoke_delta")
    df.write.format("delta").mode("overwrite").saveAsTable("smoke_delta")
    spark.createDataFrame([(3, "c", None)], df.schema).write.format("delta").mode("append").saveAsTable(
        "smoke_delta"
    )
    warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
    assert (warehouse / "smoke_delta" / "_delta_log").is_dir()
    assert [tuple(r) for r in spark.table("smoke_delta").orderBy("id").collect()] == [
        (1, "a", decimal.Decimal("1.50")),
        (2, None, decimal.Decimal("-3.25")),
        (3, "c", None),
    ]
    v0 = spark.sql("SELECT id FROM smoke_delta VERSION AS OF 0 ORDER BY id").collect()
    assert [r.id for r in v0] == [1, 2]
    spark.sql("DROP TABLE smoke_delta")

    # path-based table
    path = str(tmp_path / "delta_path")
    df.write.format("delta").save(path)
    back = spark.read.format("delta").load(path).orderBy("id").collect()
    assert [tuple(r) for r in back] == [(1, "a", decimal.Decimal("1.50")), (2, None, decimal.Decimal("-3.25"))]
    assert (tmp_path / "delta_path" / "_delta_log" / "00000000000000000000.json").exists()


# --------------------------------------------------------------------------
# d. types pass through a UDTF unchanged
# --------------------------------------------------------------------------

TYPED_SCHEMA = (
    "id int, d38 decimal(38,10), d10 decimal(10,2), ts timestamp, tsn timestamp_ntz, "
    "day date, s string, b boolean, f double, l bigint"
)

TYPED_ROWS_SQL = f"""
SELECT * FROM VALUES
  (1, CAST('1234567890123456789012345678.0123456789' AS DECIMAL(38,10)), CAST('-12345678.91' AS DECIMAL(10,2)),
   TIMESTAMP'2024-03-31 01:30:00.123456', TIMESTAMP_NTZ'2024-03-31 02:30:00.654321', DATE'2024-02-29',
   'héllo, 世界', true, CAST(1.5 AS DOUBLE), 9007199254740993L),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, CAST(0 AS DECIMAL(38,10)), CAST(0.01 AS DECIMAL(10,2)), TIMESTAMP'1969-12-31 23:59:59.999999',
   TIMESTAMP_NTZ'1900-01-01 00:00:00', DATE'0001-01-01', '', false, CAST('NaN' AS DOUBLE), -1L)
AS t({", ".join(c.split()[0] for c in TYPED_SCHEMA.split(", "))})
"""


class Identity:
    def eval(self, batch: pa.RecordBatch):
        yield batch


class ArrowTypes:
    """Reports the Arrow type of each input column and of the scalar arguments."""

    def __init__(self):
        self.info = None

    def eval(self, batch: pa.RecordBatch, s_lit, i_lit, d_lit):
        self.info = [f"{f.name}:{f.type}" for f in batch.schema] + [
            f"s_lit:{s_lit.type}",
            f"i_lit:{i_lit.type}",
            f"d_lit:{d_lit.type}",
        ]
        return iter(())

    def terminate(self):
        if self.info is not None:
            yield pa.table({"info": self.info})


def test_types_pass_through_udtf_unchanged(spark):
    spark.sql(TYPED_ROWS_SQL).createOrReplaceTempView("smoke_typed")
    spark.udtf.register("smoke_identity", arrow_udtf(Identity, returnType=TYPED_SCHEMA))

    out = spark.sql("SELECT * FROM smoke_identity(TABLE(smoke_typed))")
    ddl = ",".join(":".join(c.split()) for c in TYPED_SCHEMA.split(", "))
    assert out.schema.simpleString() == f"struct<{ddl}>"
    assert out.schema.simpleString() == spark.table("smoke_typed").schema.simpleString()
    got = out.orderBy("id").collect()
    src = spark.table("smoke_typed").orderBy("id").collect()
    assert len(got) == 3
    # NaN != NaN: compare that column separately
    strip = lambda r: tuple(v for k, v in r.asDict().items() if k != "f")  # noqa: E731
    assert [strip(r) for r in got] == [strip(r) for r in src]
    assert np.isnan(got[2].f) and got[0].f == 1.5 and got[1].f is None

    r1 = got[0]
    assert r1.d38 == decimal.Decimal("1234567890123456789012345678.0123456789")
    assert r1.d10 == decimal.Decimal("-12345678.91")
    assert r1.tsn == dt.datetime(2024, 3, 31, 2, 30, 0, 654321)
    assert r1.day == dt.date(2024, 2, 29)
    assert r1.s == "héllo, 世界" and r1.b is True and r1.l == 9007199254740993
    assert all(v is None for k, v in got[1].asDict().items() if k != "id")
    assert got[2].s == "" and got[2].b is False and got[2].day == dt.date(1, 1, 1)
    # TIMESTAMP values, rendered in the session time zone (UTC), exactly as in the source
    as_text = spark.sql(
        "SELECT id, CAST(ts AS STRING) ts FROM smoke_identity(TABLE(smoke_typed)) ORDER BY id"
    ).collect()
    assert [r.ts for r in as_text] == ["2024-03-31 01:30:00.123456", None, "1969-12-31 23:59:59.999999"]

    # What the UDTF sees (API facts the engine relies on)
    spark.udtf.register("smoke_arrow_types", arrow_udtf(ArrowTypes, returnType="info string"))
    info = spark.sql(
        "SELECT * FROM smoke_arrow_types(TABLE(SELECT * FROM smoke_typed WHERE id = 1), 'x', 7, 1.25)"
    ).collect()
    assert [r.info for r in info] == [
        "id:int32",
        "d38:decimal128(38, 10)",
        "d10:decimal128(10, 2)",
        "ts:timestamp[us, tz=UTC]",
        "tsn:timestamp[us]",
        "day:date32[day]",
        "s:string",
        "b:bool",
        "f:double",
        "l:int64",
        "s_lit:string",
        "i_lit:int32",
        "d_lit:decimal128(3, 2)",
    ]


# --------------------------------------------------------------------------
# e. scalar arguments next to the TABLE argument
# --------------------------------------------------------------------------


class ScalarArgs:
    def eval(self, batch: pa.RecordBatch, tag: pa.Array, factor: pa.Array):
        # Scalars come as Arrow arrays with one (identical) value per input row.
        assert isinstance(tag, pa.Array) and len(tag) == batch.num_rows
        assert len(set(tag.to_pylist())) == 1
        yield pa.table(
            {
                "id": batch.column("id"),
                "tag": tag,
                "scaled": pc.multiply(batch.column("id"), factor.cast(pa.int64())),
            }
        )


def test_scalar_args_arrive_as_arrays(spark):
    spark.udtf.register("smoke_scalar", arrow_udtf(ScalarArgs, returnType="id bigint, tag string, scaled bigint"))
    got = spark.sql("SELECT * FROM smoke_scalar(TABLE(SELECT id FROM range(5)), 'run-1', 3) ORDER BY id").collect()
    assert [tuple(r) for r in got] == [(i, "run-1", 3 * i) for i in range(5)]
