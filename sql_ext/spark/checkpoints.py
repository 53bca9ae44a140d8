"""What the checkpoint a streaming MATCH_RECOGNIZE will restart on already holds: the state
version whose operator key it keeps (``udtf.state_versions``).

Spark's state store keeps an operator's key schema for the checkpoint's life, so a checkpoint
version 3 wrote (the INT shard ``pmod(hash(<PARTITION BY>), shards)``) is continued with that
key; one versions 1 and 2 wrote (a ``transformWithStateInPandas`` operator keyed by the
PARTITION BY columns) cannot be continued and is refused, saying what to do.  Read here
through Spark's state data sources (``state-metadata``: the operator; ``statestore``: the key's
schema; the checkpoint's offset log: the watermark of its last committed micro-batch).
"""
from __future__ import annotations

import json
from typing import NamedTuple

from udtf.errors import MatchRecognizeError

STATE_NAME = "match_recognize"  # the processor's ValueState
PANDAS_OPERATOR = "transformWithStateInPandasExec"  # the operator of state versions 1 and 2


class Written(NamedTuple):
    """A version-3 checkpoint: the watermark (``floor_ms``; in processing time the timestamp)
    of its last committed micro-batch."""
    floor_ms: int


def version_3(spark, checkpoint: str | None, processing_time: bool) -> Written | None:
    """``checkpoint`` as version 3 wrote it (None: no checkpoint, none committed yet, or one
    of this version: its key is a BIGINT); one versions 1 or 2 wrote is refused."""
    if checkpoint is None:
        return None
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    try:
        operators = {r.operatorName for r in spark.read.format("state-metadata").load(checkpoint).collect()}
        schema = spark.read.format("statestore").option("stateVarName", STATE_NAME).load(checkpoint).schema
    except PySparkException as e:
        if "STDS_COMMITTED_BATCH_UNAVAILABLE" in str(e):  # (a new checkpoint)
            return None
        raise
    if PANDAS_OPERATOR in operators:
        raise MatchRecognizeError(
            f"the checkpoint {checkpoint} holds MATCH_RECOGNIZE streaming state of version 1 or 2 (one state per "
            "PARTITION BY key, in a transformWithStateInPandas operator), written by a sparkcep before the shards; "
            "this one cannot continue it: finish that query with the sparkcep that wrote it, then start this one "
            "with a new checkpoint location (docs/streaming.md, 'Restart and exactly once')")
    if schema["key"].dataType.fields[0].dataType.typeName() != "integer":
        return None
    last = max(int(r[0].rsplit("/", 1)[1]) for r in
               spark.read.text(f"{checkpoint}/commits").select(F.input_file_name()).distinct().collect())
    offsets = spark.read.text(f"{checkpoint}/offsets/{last}").collect()
    meta = json.loads(offsets[1].value)  # (line 1: the log's version, 2: the batch's metadata)
    return Written(int(meta["batchTimestampMs" if processing_time else "batchWatermarkMs"]))
