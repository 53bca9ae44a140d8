"""What the matchers read and what they produce: the rows of a partition and its matches."""
from __future__ import annotations

from typing import NamedTuple


class Match(NamedTuple):
    """A match: ``rows`` lists (row, var, excluded) ascending; ``number`` None = unmatched row."""
    number: int | None
    start: int
    end: int  # last row (start - 1 for an empty match)
    rows: tuple


class Rows:
    """The columns of one partition seen so far, appended in place (compiled conditions stay
    bound to these containers): ``masks`` (name -> bytearray of 0/1), ``values`` (name -> list
    of Python values), ``order`` (the WITHIN key per row, or empty)."""

    def __init__(self, masks=(), values=()):
        self.masks = {name: bytearray() for name in masks}
        self.values = {name: [] for name in values}
        self.order: list = []
        self.size = 0

    def append(self, count: int, masks=None, values=None, order=None):
        for name, mask in (masks or {}).items():
            self.masks[name] += mask.tobytes() if hasattr(mask, "tobytes") else bytes(mask)
        for name, column in (values or {}).items():
            self.values[name].extend(column)
        if order is not None:
            self.order.extend(order)
        self.size += count

    def clear(self):
        """Forget the partition."""
        for mask in self.masks.values():
            mask.clear()
        for column in self.values.values():
            column.clear()
        self.order.clear()
        self.size = 0
