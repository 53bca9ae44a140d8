"""What every matcher shares: its options and the incremental feeding protocol."""
from __future__ import annotations

import gc
import operator
from abc import ABC, abstractmethod
from contextlib import contextmanager
from typing import NamedTuple

from ..errors import LimitExceeded, MatchRecognizeError
from ..plan import LIMIT_CONFS, Frame, Limits, Semantics, Skip, SkipMode
from ..rows import Rows


class Options(NamedTuple):
    semantics: Semantics = Semantics.STANDARD
    skip: Skip = Skip()
    within: object = None  # max distance between first and last row in ``Rows.order`` units
    span: object = None  # or a WITHIN over the rows' intervals (``spans.SpanWindow``)
    timeouts: bool = False  # also report partial matches whose WITHIN window closed (MatchKind.TIMED_OUT)
    unmatched: bool = False  # WITH UNMATCHED ROWS
    limits: Limits = Limits()
    lookahead: int = 0  # rows past the current one that DEFINE or MEASURES may read (NEXT)
    distinct: bool = False  # FLINKCEP DISTINCT: a match that several runs produce is reported once
    frame: Frame | None = None  # a window's (R020): one outcome per row (``match.window``)


@contextmanager
def collector_paused():
    """Pause Python's cyclic garbage collector: a matcher builds only acyclic tuples (runs,
    facts, capture chains), which reference counting frees, and the collector's passes over
    the many live ones would cost a fifth to a third of the matching time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Matcher(ABC):
    """Matches one partition at a time.  Call ``feed(count)`` after appending ``count`` rows to
    ``rows`` (any number of times), then ``finish()``; both return the new matches (``Match``
    tuples, or ``match.runs.MatchBlock``s); ``reset()`` starts the next partition."""

    def __init__(self, rows: Rows, options: Options):
        self.rows = rows
        self.options = options
        self.reset()

    def reset(self):
        self.match_number = 0
        self.finished = False
        self.pos = 0  # next row to read
        # streaming (``udtf.stream``): every row still to come lies past this ``Rows.order`` value
        # (the watermark), so a WITHIN window it closes is decided without waiting for a row
        self.horizon = None

    def feed(self, count: int = 0) -> list:
        out: list = []
        self.feed_into(out)
        return out

    def feed_into(self, out: list):
        """Match the rows available now, appending the matches to ``out`` (those found before
        an error stay there)."""
        with collector_paused():
            self._run(out)

    def finish(self) -> list:
        self.finished = True
        return self.feed()

    @abstractmethod
    def _run(self, out: list):
        """Match the rows available now; append the matches found to ``out``."""

    @abstractmethod
    def low_water(self) -> int:
        """The first row the matcher may still read (rows before it can be forgotten)."""

    @abstractmethod
    def rebase(self, shift: int):
        """The first ``shift`` rows were dropped: every row index held goes down by ``shift``."""

    def window(self) -> tuple:
        """(length, each row's opening value) of the window a run must end within: WITHIN over
        ``rows.order``, or the ``span`` over the rows' interval starts (length None: none)."""
        span = self.options.span
        return (span.limit, span.starts) if span is not None else (self.options.within, self.rows.order)

    def closed(self, start: int) -> bool:
        """Has the window of a match starting at ``start`` closed before the rows still to come
        (``horizon``: each lies, or ends, past it), with every row present read?  Deciding it
        then is what the next row, lying beyond the window, would decide; its contents are
        never read.  (Over intervals a run's window opens at its earliest member start, at or
        before its first row's: closed from that row's start, it is closed.)"""
        limit, opens = self.window()
        if limit is None or self.horizon is None or self.finished or self.pos < self.rows.size:
            return False
        first = opens[start]
        return first is None or self.horizon - first >= limit

    def limit(self) -> int:
        """Rows that may be processed now: DEFINE and MEASURES may look ``lookahead`` rows ahead."""
        return self.rows.size if self.finished else self.rows.size - self.options.lookahead

    def _check_threads(self, threads, row: int, hint: str = ""):
        if len(threads) > self.options.limits.live_runs:
            raise LimitExceeded(f"more than {self.options.limits.live_runs} partial matches alive at once; the "
                                "pattern is too ambiguous for this data (tighten DEFINE, add WITHIN, or use a "
                                f"stricter contiguity{hint})", LIMIT_CONFS["live_runs"], row)

    def check_span(self, start: int, row: int):
        """A run from ``start`` reading ``row`` stays within the rows one match may span."""
        if row - start >= self.options.limits.match_rows:
            raise LimitExceeded(f"a match (or a run that may become one) from row {start + self.rows.dropped + 1} "
                                f"spans more than {self.options.limits.match_rows} rows",
                                LIMIT_CONFS["match_rows"], row)


def skip_target(skip: Skip, rows: tuple, strict: bool):
    """The row AFTER MATCH SKIP TO FIRST / TO LAST resumes at after a match of ``rows`` (its
    ``(row, var, excluded)`` captures), None when the variable is absent from the match.
    ``strict``: an absent variable or the match's first row is the standard's runtime error."""
    targets = [r for r, var, _ in rows if var in skip.vars]
    if not targets:
        if strict:
            raise MatchRecognizeError(f"AFTER MATCH SKIP {skip.mode.value} {skip.name} failed: pattern variable is "
                                      "not present in match", *skip.at)
        return None
    target = targets[0] if skip.mode is SkipMode.TO_FIRST else targets[-1]
    if strict and target == rows[0][0]:
        raise MatchRecognizeError(f"AFTER MATCH SKIP {skip.mode.value} {skip.name} failed: cannot skip to first "
                                  "row of match", *skip.at)
    return target


def next_start(skip: Skip, start: int, end: int, rows: tuple) -> int:
    """The attempt row after a standard-semantics match of ``rows`` from ``start`` to ``end``
    (``start - 1``: an empty match, after which the next row is tried)."""
    if end < start:
        return start + 1
    if skip.mode is SkipMode.PAST_LAST_ROW:
        return end + 1
    if skip.mode in (SkipMode.TO_NEXT_ROW, SkipMode.NO_SKIP):
        return start + 1
    return skip_target(skip, rows, strict=True)


def forget(matcher, lookback: int) -> int:
    """Drop from ``matcher.rows`` the rows before its low water mark but ``lookback`` (those
    PREV may still read); return how many were dropped (every row index goes down by it)."""
    shift = max(0, min(matcher.low_water(), matcher.rows.size) - lookback)
    if shift:
        matcher.rows.rebase(shift)
        matcher.rebase(shift)
    return shift


def ascending_keys(order: list, lo: int, hi: int) -> bool:
    """Are the WITHIN keys of rows ``lo`` to ``hi`` - 1 all present and ascending?"""
    keys = order[lo:hi]
    return None not in keys and all(map(operator.le, keys, keys[1:]))
