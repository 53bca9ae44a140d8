"""A WITHIN over the members' span (``plan.Span``; docs/hierarchies.md, rule 6), checked by
the matcher per start and item instead of per run in its conditions.

A match maps every item from its start to its end, so the expansion's conjunct ``MAX(end) <=
MIN(start) + T`` - its aggregates over the match so far with the current item - has one value
per (start, item), whichever run asks: ``admits(start, row)``.  When it is false every take of
``row`` fails, so the runs of ``start`` end there, as at a plain WITHIN's edge.
"""
from __future__ import annotations

from ..expr import Call, Col, FactTable, compile_row

ORDERED = ("timestamp", "timestamp_ntz", "date")  # types whose values compare as Spark compares them


class SpanWindow:
    """``admits(start, row)`` over the items' ``starts`` and ``ends`` (the lists of ``rows``,
    extended and trimmed in place; ``rows.dropped`` items before them): the least start and
    greatest end from ``start`` to ``row`` (NULLs ignored, as MIN / MAX do) satisfy ``admits``.
    Asked with one start and rows one after the other, each answer reads one item; where
    ``admits`` is ``end <= bound`` with both sides of one date or timestamp type, the bound is
    evaluated once per least start and compared as the numbers the values are."""

    def __init__(self, limit: int, admits, start: str, end: str, rows, ansi: bool, zone: str):
        self.limit = limit
        self.rows = rows
        self.starts, self.ends = rows.values[start], rows.values[end]
        self.point = {start: [None], end: [None]}  # the one row the expressions are evaluated at
        table = FactTable([], self.point, (), ansi, zone)
        plain = isinstance(admits, Call) and admits.fn == "<=" and isinstance(admits.args[0], Col) and \
            admits.args[0].name == end and admits.arg_types[0] == admits.arg_types[1] and admits.arg_types[0] in ORDERED
        self.bound = compile_row(admits.args[1], table) if plain else None
        self.test = compile_row(admits, table)
        self.at = None  # (absolute start, absolute row) of ``low`` and ``high``
        self.low = self.high = self.limit_at = None  # (``limit_at``: the bound of ``low``)

    def admits(self, start: int, row: int) -> bool:
        dropped = self.rows.dropped
        at = self.at
        if at is not None and at[0] == start + dropped and at[1] == row + dropped - 1:
            low, high, first = self.low, self.high, row
        else:
            low = high = None
            first = start
        starts, ends = self.starts, self.ends
        for k in range(first, row + 1):
            s, e = starts[k], ends[k]
            if s is not None and (low is None or s < low):
                low = s
            if e is not None and (high is None or e > high):
                high = e
        if low != self.low:
            self.limit_at = None
        self.low, self.high, self.at = low, high, (start + dropped, row + dropped)
        if low is None or high is None:
            return False
        point = self.point
        for name, value in zip(point, (low, high)):
            point[name][0] = value
        if self.bound is None:
            return self.test((0, None, None)) is True
        if self.limit_at is None:
            self.limit_at = self.bound((0, None, None))
        return self.limit_at is not None and high <= self.limit_at
