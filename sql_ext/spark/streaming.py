"""``stream(spark, sql)``: a MATCH_RECOGNIZE query over a streaming input, as a streaming
DataFrame - the same SQL text as in batch.

The rewrite runs as for a batch query, with two differences (``StreamCatalog``): the planner
keeps PREV / NEXT in the engine (a stream has no window functions), and in place of the UDTF
call the clause reads a temporary view::

    SELECT <the shard of pmod(hash(<PARTITION BY>), <shards>)> AS shard, <shipped columns>
    FROM (SELECT *, <row-level precomputed columns> FROM <input>)
    -> mapInArrow(pack)                  one Arrow IPC packet per shard and input batch
    -> groupBy(shard).transformWithState(<processor>, Append, EventTime | ProcessingTime)
                                         udtf.stream.ShardProcessor: a shard's state store value,
                                         its timer, output packets
    -> mapInArrow(unpack)                the UDTF's output columns

so the rest of the user's statement (the SELECT around the clause) runs on it unchanged.  The
input's first ORDER BY key must be its event-time column (``withWatermark``), ascending; with
``processing_time`` (FlinkCEP's ``inProcessingTime``) it is the rows' arrival time (a TIMESTAMP
column from ``current_timestamp()``) and the micro-batch's processing time plays the watermark.
"""
from __future__ import annotations

import hashlib
import json

from sqlglot import exp

from udtf.errors import MatchRecognizeError
from udtf.stream import Column, Fingerprint, OrderKey, StreamSpec, lookback, reads_across_gaps
from udtf.transport import PACKET_DDL, STATE_FIELDS
from udtf.wire import encode as wire_encode

from ..compiler.analyze import Analysis, analysis_column, check_final, error
from ..compiler.lower import Lowered, quote, stream_view
from ..compiler.parse import find_match_recognize, parse, statement_spans, to_spark_sql
from ..compiler.rewrite import rewrite_sql
from ..compiler.window_syntax import PatternWindow
from . import checkpoints, failures, shipping
from .catalog import SparkCatalog
from .statement import named_args

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_PROVIDER = "spark.sql.streaming.stateStore.providerClass"
_DEFAULT_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
_WATERMARK = "spark.watermarkDelayMs"  # column metadata Spark sets on the event-time column
SHARD = "__sparkcep_shard"
SIZE_OF_NULL = "spark.sql.legacy.sizeOfNull"


def stream(spark, sql: str, args=None, *, late_rows: str | None = None, processing_time: bool = False,
           checkpoint: str | None = None):
    """The streaming DataFrame of the query ``sql``: one SELECT statement whose MATCH_RECOGNIZE
    reads a streaming relation (a temporary view of a streaming DataFrame, for one) with a
    watermark on its first ORDER BY column.  Write it with ``writeStream`` in append mode.

    ``late_rows``: the name of a column the clause's output gains, holding each late input
    row (a STRUCT of the input's columns) on a row of its own, NULL on the others (FlinkCEP's
    ``sideOutputLateData``); without it late rows are dropped.

    ``processing_time`` (FlinkCEP's ``inProcessingTime``): the first ORDER BY key is the rows'
    arrival time, a TIMESTAMP column the input takes from ``current_timestamp()`` (the
    micro-batch's timestamp), and the clock is Spark's processing time instead of a watermark:
    a micro-batch releases the rows at or before its timestamp, and processing-time timers
    decide WITHIN windows the wall clock closed, for idle keys too.

    ``checkpoint``: the ``checkpointLocation`` the query will start on, needed only to continue
    a checkpoint sparkcep's state version 3 wrote (it keeps that checkpoint's key; without it
    Spark refuses such a checkpoint: docs/streaming.md, 'Restart and exactly once').

    The session's state store provider becomes RocksDB when it is Spark's default (the
    ``transformWithState`` operator requires it).  Classic and Spark Connect sessions alike:
    the executors' Python workers import ``udtf`` from what ``enable()`` ships."""
    if len(statement_spans(sql)) != 1:
        raise MatchRecognizeError("stream() takes one SELECT statement")
    trees = parse(sql)
    window = next((w for tree in trees for w in tree.find_all(PatternWindow)), None)
    if window is not None:
        raise error("a window with pattern recognition cannot run on a stream yet: use MATCH_RECOGNIZE "
                    "(stream() runs one), or the query on a batch input", window.row_pattern)
    clauses = [c for tree in trees for c in find_match_recognize(tree)]
    if len(clauses) != 1:
        raise error("stream() takes a statement with exactly one MATCH_RECOGNIZE"
                    + (f"; this one has {len(clauses)}" if clauses else ""), clauses[1] if clauses else None)
    provider = spark.conf.get(_PROVIDER, _DEFAULT_PROVIDER)
    if provider == _DEFAULT_PROVIDER:
        spark.conf.set(_PROVIDER, ROCKSDB)
    elif provider != ROCKSDB:
        raise MatchRecognizeError(f"streaming MATCH_RECOGNIZE needs {_PROVIDER}={ROCKSDB} "
                                  f"(transformWithState requires it); the session has {provider}")
    shipping.prepare(spark)
    catalog = StreamCatalog(spark, named_args(args), late_rows=late_rows, processing_time=processing_time,
                            written=checkpoints.version_3(spark, checkpoint, processing_time))
    rewritten, done = rewrite_sql(sql, catalog)
    failures.remember(e for _, lowered in done for e in lowered.computes)
    return spark.sql(rewritten, named_args(args))


class StreamCatalog(SparkCatalog):
    """The catalog of a streaming rewrite: the clause's output is a ``transformWithState``
    view (``register_stream``), not a UDTF call."""

    streaming = True

    def __init__(self, spark, args=None, run=None, late_rows: str | None = None, processing_time: bool = False,
                 written: checkpoints.Written | None = None):
        """``written``: the version-3 checkpoint the query continues, if it does."""
        super().__init__(spark, args, run)
        self.late_rows = late_rows
        self.processing_time = processing_time
        self.written = written

    def layer_catalog(self) -> SparkCatalog:
        """The catalog the LAYERs of a streaming statement are planned with: a batch one, its
        input taken as it is (the layers run in the statement's one pass, never alone)."""
        return _LayerCatalog(self.spark, self.args, self.run)

    def register_stream(self, lowered: Lowered, analysis: Analysis, computed: str, computed_fields: tuple,
                        input_fields: tuple):
        """Create the view ``stream_view(lowered.name)`` running ``lowered`` over the streaming
        query ``computed`` (whose columns are ``computed_fields``; the clause's input has
        ``input_fields``)."""
        source = self._ask(computed)
        if not source.isStreaming:
            raise error("stream(): the input of MATCH_RECOGNIZE is not a streaming relation (use "
                        "spark.sql for a batch input)", analysis.clause.input)
        spec = self.stream_spec(lowered, analysis, source.schema, computed_fields, input_fields)
        plan = lowered.plan
        shards = int(self.spark.conf.get("spark.sql.shuffle.partitions"))
        types = {f.name: f for f in computed_fields}
        keys = [_hashable(quote(k), types[k].type) for k in plan.partition]
        written = self.written
        shard = f"CAST(pmod(hash({', '.join(keys)}), {shards}) AS BIGINT)" if written and keys else \
            "CAST(0 AS BIGINT)" if written else shard_expression(self.spark, keys, shards)
        packets = source.selectExpr(f"{shard} AS {quote(SHARD)}", *map(quote, lowered.shipped)) \
            .mapInArrow(_packer(SHARD), PACKET_DDL)
        if written:  # version 3's key: the INT shard number
            packets = packets.selectExpr("CAST(shard AS INT) AS shard", "rows")
        from pyspark.sql.types import StructType

        output = StructType.fromJson({"type": "struct", "fields": [
            {"name": f.name, "type": json.loads(f.json), "nullable": True, "metadata": {}} for f in lowered.output]})
        matched = packets.groupBy("shard").transformWithState(
            _processor(spec.to_json(), self.processing_time, written and written.floor_ms), "rows BINARY", "Append",
            "ProcessingTime" if self.processing_time else "EventTime")
        matched.mapInArrow(_unpacker(output.json()), output).createOrReplaceTempView(stream_view(lowered.name))

    def stream_spec(self, lowered: Lowered, analysis: Analysis, schema, computed_fields: tuple,
                    input_fields: tuple) -> StreamSpec:
        """What the processor of ``lowered`` runs, over an input whose Spark schema is ``schema``;
        a clause no stream could answer, or one not ordered by the input's event time first, is
        refused at its line:column."""
        clause = analysis.clause
        check_final(analysis)
        first = clause.order[0]
        event_time = analysis_column(analysis, first.this)
        field = schema[event_time]
        if self.processing_time:
            if field.dataType.typeName() != "timestamp" or first.args.get("desc"):
                raise error("a MATCH_RECOGNIZE streamed in processing time orders by arrival time first: "
                            f"{event_time} must be a TIMESTAMP column the input takes from current_timestamp(), "
                            "ascending", first)
        elif _WATERMARK not in field.metadata or first.args.get("desc"):
            raise error(f"a streaming MATCH_RECOGNIZE orders by event time first: {event_time} must be the "
                        "input's watermark column (DataFrame.withWatermark), ascending", first)
        types = {f.name: f for f in computed_fields}
        inputs = tuple(Column(name, types[name].json) for name in lowered.shipped)
        outputs = tuple(Column(f.name, f.json) for f in lowered.output)
        order = tuple(OrderKey(analysis_column(analysis, o.this), bool(o.args.get("desc")),
                               _nulls_first(o)) for o in clause.order)
        plan = lowered.plan
        shards = int(self.spark.conf.get("spark.sql.shuffle.partitions"))
        context = lookback(plan)
        parts, unread = fingerprint(analysis, plan, order, input_fields, self.args, shards, self.processing_time,
                                    self.size_of_null())
        return StreamSpec(plan.to_json(), inputs, outputs, order, context,
                          Fingerprint(parts, context, reads_across_gaps(plan, context), unread))


class _LayerCatalog(SparkCatalog):
    """``StreamCatalog.layer_catalog``: typing a layer's clause over a streaming input."""

    layer_of_stream = True  # its matches too must be final before the stream ends

    def is_streaming(self, sql: str) -> bool:
        return False


def shard_expression(spark, keys: list, shards: int) -> str:
    """The BIGINT shard of a row whose PARTITION BY columns are ``keys`` (SQL; none: one shard):
    the keys' hash picks one of ``shards`` values, each the first BIGINT that Spark's exchange
    before the stateful operator (hash partitioning into ``shards`` partitions, as the session's
    ``spark.sql.shuffle.partitions`` at the query's start) sends to a partition of its own, so
    each of its tasks steps one shard."""
    if not keys:
        return "CAST(0 AS BIGINT)"
    pinned = dict(spark.sql(f"SELECT pmod(hash(id), {shards}) AS p, min(id) AS v FROM range({shards * 1024}) "
                            "GROUP BY 1").collect())
    values = ", ".join(f"CAST({pinned[p]} AS BIGINT)" for p in range(shards))
    return f"element_at(array({values}), pmod(hash({', '.join(keys)}), {shards}) + 1)"


def _hashable(column: str, spark_type: str) -> str:
    """A PARTITION BY column as hashed into a shard: -0.0 as 0.0, as Spark groups them."""
    return f"({column} + 0.0)" if spark_type in ("float", "double") else column


def _packer(shard: str):
    """The ``mapInArrow`` function packing a shard's rows (pickled by value; the workers import
    ``udtf``, shipped by ``enable``)."""
    def pack(batches):
        from udtf.transport import pack as packed

        return packed(batches, shard)

    return pack


def _unpacker(schema_json: str):
    def unpack(batches):
        from pyspark.sql.types import StructType

        from udtf.arrow import spark_arrow_schema
        from udtf.transport import unpack as unpacked

        return unpacked(batches, spark_arrow_schema(StructType.fromJson(json.loads(schema_json))))

    return unpack


def _processor(spec_json: str, processing_time: bool, floor_ms: int | None):
    """The stateful processor running ``spec_json`` (a ``StreamSpec``), its clock the
    watermark or (``processing_time``) the micro-batch's timestamp (``floor_ms``: its value
    when the version-3 checkpoint the query continues was last committed).  Its class is made here
    so that it is pickled by value, and it imports ``udtf`` only where rows are processed:
    Spark also unpickles it and runs its ``init`` on the driver, in a Python worker of its own
    (pyspark's ``transform_with_state_driver_worker``) whose path lacks the zip ``enable``
    ships with ``addPyFile`` - only the executors' Python workers import it."""
    from pyspark.sql import Row
    from pyspark.sql.streaming import StatefulProcessor
    from pyspark.sql.types import StructType

    state_schema = StructType.fromJson({"type": "struct", "fields": [
        {"name": name, "type": kind, "nullable": True, "metadata": {}} for name, kind in STATE_FIELDS]})

    class MatchRecognizeProcessor(StatefulProcessor):
        def init(self, handle):
            self.handle = handle
            self.state = handle.getValueState("match_recognize", state_schema)  # (checkpoints.STATE_NAME)
            self.shard = None

        def _step(self, packets, timer_values, fired=None):
            if self.shard is None:
                from udtf.stream import ShardProcessor
                from udtf.stream_layers import stepper

                self.shard = ShardProcessor(spec_json, stepper, floor_ms)
            clock = timer_values.getCurrentProcessingTimeInMs() if processing_time else \
                timer_values.getCurrentWatermarkInMs()
            out = self.shard.step(self.state, self.handle, packets, clock, fired)
            return iter([Row(rows=blob) for blob in out])

        def handleInputRows(self, key, rows, timerValues):
            return self._step([row.rows for row in rows], timerValues)

        def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
            return self._step([], timerValues, expiredTimerInfo.getExpiryTimeInMs())

        def close(self):
            pass

    return MatchRecognizeProcessor()


def fingerprint(analysis: Analysis, plan, order: tuple, input_fields: tuple, args, shards: int,
                processing_time: bool, size_of_null: bool) -> tuple[tuple, tuple]:
    """(name, digest) of each part of the statement a stream's state depends on (MEASURES is
    not one: a measure reads the rows a match holds, whatever the measures were), of the
    number of ``shards`` its keys are hashed into, in processing time of the clock (an
    event-time state holds a watermark where it holds a processing time), and of
    ``size_of_null`` (spark.sql.legacy.sizeOfNull) where the clause calls size / cardinality
    without ANSI and it is not Spark's default; and the names of the parts it does not read
    (``Fingerprint.unread``)."""
    clause = analysis.clause
    sized = not plan.ansi and reads_size(clause)
    parts = {
        "PARTITION BY": plan.partition,
        "ORDER BY": order,
        "PATTERN": " ".join(clause.pattern.code.split()),
        "DEFINE": (sorted((name, to_spark_sql(d)) for name, d in analysis.definitions.items()),
                   sorted((k, list(v)) for k, v in analysis.subsets.items())),
        "AFTER MATCH SKIP": (analysis.skip.mode.value, analysis.skip.name),
        "SEMANTICS": (analysis.semantics.value, analysis.distinct),
        "ROWS PER MATCH": analysis.rows.value,
        "WITHIN": (plan.within, plan.timeouts),
        "the input's columns": [(f.name, f.type) for f in input_fields],
        "parameter values": sorted((str(k), repr(v)) for k, v in (args or {}).items()),
        "spark.sql.ansi.enabled, spark.sql.session.timeZone": (plan.ansi, plan.zone),
        "spark.sql.shuffle.partitions (the number of shards)": shards,
    }
    if processing_time:  # absent in event time: the fingerprints of event-time checkpoints stay as they were
        parts["the clock (processing_time)"] = "processing time"
    if sized and not size_of_null:  # (size(NULL) is NULL; absent where it is -1, or ANSI decides it)
        parts[SIZE_OF_NULL] = "false"
    if plan.hierarchy is not None:  # (absent without LAYERs, likewise)
        parts["LAYER, PERIOD, WITHIN"] = (wire_encode((plan.hierarchy, plan.define)), [to_spark_sql(node) for node in (
            clause.period, clause.within) if node is not None])
    return tuple((name, hashlib.sha1(json.dumps(value, default=str).encode()).hexdigest()[:16])
                 for name, value in parts.items()), () if sized else (SIZE_OF_NULL,)


def reads_size(clause) -> bool:
    """Whether ``clause`` (its input, DEFINE, MEASURES, LAYERs, ...) calls Spark's Size -
    ``size`` or ``cardinality``, whose value of NULL spark.sql.legacy.sizeOfNull decides
    without ANSI (``array_size`` is kept as written: Size without the legacy rule)."""
    return any(isinstance(node, exp.ArraySize) or isinstance(node, exp.Anonymous) and node.name.lower() in (
        "size", "cardinality") for node in clause.walk())


def _nulls_first(ordered) -> bool:
    """Spark's default: NULLS FIRST ascending, NULLS LAST descending."""
    nulls_first = ordered.args.get("nulls_first")
    return (not ordered.args.get("desc")) if nulls_first is None else bool(nulls_first)
