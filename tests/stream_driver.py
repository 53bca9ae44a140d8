"""Spark's micro-batch loop around a shard stepper, for the engine-level stream tests."""
from __future__ import annotations

from udtf.stream import END_OF_STREAM


def drive(batches: list, shard_of, time_of, delay: int, step) -> None:
    """Deliver ``batches`` (lists of rows), then a micro-batch without rows, then the end of the
    stream, as Spark does: a micro-batch's watermark is the largest event time (``time_of``, µs
    or None) of the batches before it less ``delay``; each shard (``shard_of``) with rows in it
    steps them, in shard order (``step(shard, rows, watermark_ms)``, returning the shard's timer
    or None), then each shard whose timer is due steps without rows."""
    timers: dict = {}
    seen = None
    for rows in [*batches, [], "end"]:
        watermark = (seen - delay) if seen is not None else 0
        if rows == "end":
            watermark, rows = END_OF_STREAM, []
        watermark_ms = max(0, watermark) // 1000
        mine: dict = {}
        for row in rows:
            mine.setdefault(shard_of(row), []).append(row)
        for shard in sorted(mine):
            timers[shard] = step(shard, mine[shard], watermark_ms)
        for shard in list(timers):
            if timers[shard] is not None and timers[shard] <= watermark_ms:
                timers[shard] = step(shard, [], watermark_ms)
        for row in rows:
            time = time_of(row)
            if time is not None:
                seen = time if seen is None else max(seen, time)
