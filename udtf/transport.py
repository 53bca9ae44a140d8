"""Bytes between Spark and the streaming processor, and the shard state's encoding.

Spark's stateful Python operators hand a processor Python rows (or pandas frames) built value by
value: slow, and inexact for some types.  So the rows cross as Arrow IPC *packets* instead: a
``mapInArrow`` before the operator packs each input batch into one row per shard
(``pack``: the shard number and the IPC stream of its rows), and one after it turns the
processor's packets back into rows (``unpack``).  Every value crosses as the Arrow Spark wrote,
nested types and time zones included.

The state of a shard is one row of the state store (``STATE_FIELDS``): the version of this
encoding, the fingerprint of the query that wrote it (``udtf.stream.Fingerprint``), the
watermark of its last step, the held rows as an Arrow IPC stream and its event-time timer.
``load_state`` reads this version; ``udtf.state_versions`` the older ones it upgrades, and
refuses the others.
"""
from __future__ import annotations

from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

STATE_VERSION = 4  # 4: BIGINT shard keys, one per state partition; 3: INT shard keys; 1 and 2: one per key
PACKET = pa.schema([("shard", pa.int64()), ("rows", pa.binary())])
PACKET_DDL = "shard BIGINT, rows BINARY"
# the state store row of a shard (names of Spark's JSON types)
STATE_FIELDS = (("version", "integer"), ("fingerprint", "string"), ("horizon", "long"), ("held", "binary"),
                ("timer", "long"))


def to_ipc(data) -> bytes:
    """An Arrow table or record batch as the bytes of an IPC stream."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, data.schema) as writer:
        writer.write(data)
    return sink.getvalue().to_pybytes()


def from_ipc(blob: bytes) -> pa.Table:
    return pa.ipc.open_stream(blob).read_all()


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` as ``schema``: a column of another type (a time zone, nullability) is cast, one of
    the same type kept as it is (a cast would refuse a VARIANT's non-nullable parts under a NULL)."""
    columns = [column if column.type.equals(field.type) else column.cast(field.type)
               for column, field in zip(table.columns, schema)]
    return pa.Table.from_arrays(columns, schema=schema)


def pack(batches, shard_column: str):
    """``mapInArrow`` before the operator: each batch as one packet per shard it holds (the
    rows without ``shard_column``)."""
    for batch in batches:
        if not batch.num_rows:
            continue
        shards = batch.column(shard_column)
        rows = batch.select([name for name in batch.schema.names if name != shard_column])  # (pyarrow 15 has
        # no RecordBatch.drop_columns)
        found = pc.unique(shards)
        if len(found) == 1:
            parts = [(found[0].as_py(), rows)]
        else:
            parts = [(shard, rows.filter(pc.equal(shards, shard))) for shard in found.to_pylist()]
        yield pa.RecordBatch.from_arrays([pa.array([s for s, _ in parts], pa.int64()),
                                          pa.array([to_ipc(part) for _, part in parts], pa.binary())],
                                         schema=PACKET)


def unpack(batches, schema: pa.Schema):
    """``mapInArrow`` after the operator: the rows of its packets, as batches of ``schema``."""
    for batch in batches:
        for blob in batch.column("rows").to_pylist():
            if blob is not None:
                yield from conform(from_ipc(blob), schema).to_batches()


class StoredState(NamedTuple):
    """A shard's state as stored: ``fingerprint`` (JSON), ``horizon`` (microseconds), ``held``
    and the event-time timer registered for it (ms; -1: none)."""
    fingerprint: str
    horizon: int
    held: pa.Table
    timer: int = -1


def dump_state(state: StoredState) -> tuple:
    """The state store row of ``state`` (``STATE_FIELDS``)."""
    return STATE_VERSION, state.fingerprint, state.horizon, to_ipc(state.held), state.timer


def load_state(row) -> StoredState | None:
    """The state a state store row of this version holds (None: none); ``udtf.state_versions``
    checks the version first."""
    if row is None:
        return None
    _, fingerprint, horizon, held, timer = row
    return StoredState(fingerprint, horizon, from_ipc(held), timer)
