"""The shard states this sparkcep continues from: its own version (``STATE_VERSION``) and
version 3, upgraded.

Versions 3 and 4 store the same row (``STATE_FIELDS``) holding the same held table; what
changed is the operator's key (version 3: the INT shard ``pmod(hash(<PARTITION BY>), shards)``;
version 4: a BIGINT pinned to a state partition of its own), which Spark's state store keeps
for the checkpoint's life - ``sql_ext.stream(checkpoint=...)`` keeps version 3's key on such a
checkpoint - and two rules of the step the state reflects:

* version 3 released a row without event time at once, in arrival order; version 4 sets it
  aside as late.  A held row without event time cannot be continued exactly (its matches were
  read in an order version 4 never gives): such a state is refused (``Reader.upgrade_3``);
* version 3 cleared the state of a shard whose keys all went, its watermark with it (version 4
  keeps it until the stream ends, so that a row of a gone key behind it is still late).  A
  shard without state on a version-3 checkpoint takes the checkpoint's watermark instead
  (``absent``): a row at or behind it is late, as Spark's watermark calls it.

Versions 1 and 2 (one state per PARTITION BY key, sparkcep before the shards) and newer ones
are refused, saying what to do.
"""
from __future__ import annotations

from typing import NamedTuple

import pyarrow.compute as pc

from .errors import MatchRecognizeError
from .transport import STATE_VERSION, StoredState, load_state

UPGRADED = (3,)  # the older versions read and upgraded
_WHAT_TO_DO = "finish the query with the sparkcep that wrote it, or start it with a new checkpoint location"


class Reader(NamedTuple):
    """How a shard's processor reads its state store row: ``event_time`` is the held column of
    the first ORDER BY key, ``meta`` the column only a key's meta row has a value in;
    ``floor_ms``, on a checkpoint version 3 wrote, the watermark of its last micro-batch (None
    otherwise)."""
    event_time: str
    meta: str
    floor_ms: int | None = None

    def read(self, row) -> StoredState | None:
        """The state ``row`` holds (None: none), of this version or upgraded from an older one
        (``UPGRADED``); any other version is refused.  (On a version-3 checkpoint, the processor
        gives a shard without state the horizon ``floor_ms``.)"""
        if row is None:
            return None
        version = row[0]
        if version != STATE_VERSION and version not in UPGRADED:
            raise MatchRecognizeError(
                f"this checkpoint holds MATCH_RECOGNIZE streaming state of version {version}, written by "
                f"{'a newer' if version > STATE_VERSION else 'an older'} sparkcep; this one reads versions "
                f"{', '.join(map(str, UPGRADED))} and {STATE_VERSION}" +
                (" (one state per shard of keys; versions 1 and 2 held one per key)" if version < STATE_VERSION
                 else "") + ": " + _WHAT_TO_DO)
        stored = load_state(row)
        return self.upgrade_3(stored) if version == 3 else stored

    def upgrade_3(self, stored: StoredState) -> StoredState:
        """A version-3 state as version 4 holds it: the same, unless a held row (not a meta
        row) has no event time - refused: its matches cannot be continued exactly."""
        held = stored.held
        if held.num_rows:
            missing = pc.and_(pc.is_null(held.column(self.event_time)), pc.is_null(held.column(self.meta)))
            if pc.any(missing).as_py():
                raise MatchRecognizeError(
                    "this checkpoint holds MATCH_RECOGNIZE streaming state of version 3 with a row without event "
                    f"time ({self.event_time} NULL), which version 3 matched at once in arrival order and version "
                    f"{STATE_VERSION} sets aside as late: its matches cannot be continued exactly; " + _WHAT_TO_DO)
        return stored
