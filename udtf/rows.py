"""What the matchers read and what they produce: the rows of a partition and its matches."""
from __future__ import annotations

from enum import Enum
from typing import NamedTuple

import numpy as np


class MatchKind(Enum):
    MATCH = "match"
    UNMATCHED = "unmatched"  # a row in no match (WITH UNMATCHED ROWS): ``rows`` empty
    TIMED_OUT = "timed out"  # a partial match whose WITHIN window closed (WITH TIMEOUT ROWS)


class Match(NamedTuple):
    """A match: ``rows`` lists (row, var, excluded) ascending; ``number`` is None unless
    ``kind`` is MATCH (an unmatched row or a timed-out partial match has no MATCH_NUMBER);
    ``owner``: in a window (R020), the row the match belongs to (SEEK: it may start later)."""
    number: int | None
    start: int
    end: int  # last row (start - 1 for an empty match)
    rows: tuple
    kind: MatchKind = MatchKind.MATCH
    owner: int | None = None

    @property
    def source(self) -> int:
        """The row an output row of the match stands for (ONE ROW PER MATCH, a window)."""
        return self.start if self.owner is None else self.owner


class Unmatched(NamedTuple):
    """Rows in no match, each output alone with every atom NULL: WITH UNMATCHED ROWS' rows no
    match covers, a window's (R020) rows whose match is none.  ``rows``: ascending, a ``range``
    (a matcher's run of consecutive rows) or an int64 array."""
    rows: object

    def indexes(self) -> np.ndarray:
        rows = self.rows
        return np.arange(rows.start, rows.stop, dtype=np.int64) if isinstance(rows, range) else rows

    def moved(self, offset: int) -> Unmatched:
        """The same rows ``offset`` rows later."""
        rows = self.rows
        return Unmatched(range(rows.start + offset, rows.stop + offset) if isinstance(rows, range) else rows + offset)

    def matches(self) -> list:
        """One ``MatchKind.UNMATCHED`` ``Match`` per row."""
        return [Match(None, row, row, (), MatchKind.UNMATCHED) for row in self.indexes().tolist()]


def unmatched(out: list, first: int, stop: int):
    """Append rows ``first`` to ``stop`` - 1 to ``out`` as unmatched rows: one ``Unmatched``
    run, joined to the run ending at ``first`` when it is ``out``'s last item."""
    if first >= stop:
        return
    last = out[-1] if out else None
    if type(last) is Unmatched and type(last.rows) is range and last.rows.stop == first:
        out[-1] = Unmatched(range(last.rows.start, stop))
    else:
        out.append(Unmatched(range(first, stop)))


class Rows:
    """The columns of one partition seen so far, appended in place (compiled conditions stay
    bound to these containers): ``masks`` (name -> bytearray of 0/1), ``values`` (name -> list
    of Python values), ``order`` (the WITHIN key per row, or empty).  Row 0 is the partition's
    first row unless ``dropped`` rows were forgotten."""

    def __init__(self, masks=(), values=()):
        self.masks = {name: bytearray() for name in masks}
        self.values = {name: [] for name in values}
        self.order: list = []
        self.size = 0
        self.dropped = 0  # rows of the partition forgotten before row 0 (``rebase``)

    def append(self, count: int, masks=None, values=None, order=None):
        for name, mask in (masks or {}).items():
            self.masks[name] += mask.tobytes() if hasattr(mask, "tobytes") else bytes(mask)
        for name, column in (values or {}).items():
            self.values[name].extend(column)
        if order is not None:
            self.order.extend(order)
        self.size += count

    def rebase(self, shift: int):
        """Forget the first ``shift`` rows: row ``shift`` becomes row 0 (in place)."""
        for mask in self.masks.values():
            del mask[:shift]
        for column in self.values.values():
            del column[:shift]
        del self.order[:shift]
        self.size -= shift
        self.dropped += shift

    def clear(self):
        """Forget the partition."""
        for mask in self.masks.values():
            mask.clear()
        for column in self.values.values():
            column.clear()
        self.order.clear()
        self.size = 0
        self.dropped = 0
