"""Row pattern recognition in a window (SQL:2016 R020) on the Pike VM of standard semantics.

Every row of the partition gets one outcome, in order: the row whose outcome is decided is the
*owner*.  An owner that an earlier match skipped (AFTER MATCH SKIP) is unmatched; otherwise
its match is sought from the owner itself (INITIAL) or, failing that, from each later row of
its frame in turn (SEEK), within its frame ``ROWS BETWEEN CURRENT ROW AND end FOLLOWING``:
runs end at the frame's end as at the partition's, and navigation lands only on rows of the
frame (``Conditions.frame``).  A match found belongs to the owner (``Match.owner``); the
next owner is the row after the match (PAST LAST ROW), after the owner (TO NEXT ROW, an empty
match) or the skip target (TO FIRST / LAST), and the rows in between are unmatched.  This is
Trino's ``PatternRecognitionPartition`` for windows, whose results the Trino tier compares.

Where each row's frame is the rest of its partition, its match is sought from the row itself
(INITIAL) and no condition navigates back (PREV of a row before the match is never read), the
rows whose match is sought, and their matches, are MATCH_RECOGNIZE's: ``RowOutcomes`` takes
them from any matcher tier.
"""
from __future__ import annotations

import numpy as np

from ..expr import Agg, Nav, children
from ..plan import Frame, SkipMode
from ..rows import Match, Unmatched
from .base import Options
from .conditions import Conditions
from .runs import MatchBlock
from .standard import StandardMatcher
from .vm import Machine


class WindowMatcher(StandardMatcher):
    framed = True  # the owner's frame bounds the rows a start reads

    def __init__(self, machine: Machine, conditions: Conditions, options: Options):
        self.frame_spec: Frame = options.frame
        self.frame = conditions.frame  # [lo, hi) navigation may read, shared with the conditions
        super().__init__(machine, options)

    def reset(self):
        super().reset()
        self.owner = 0  # the row whose match is sought

    def low_water(self) -> int:
        return self.owner

    def rebase(self, shift: int):
        super().rebase(shift)
        self.owner -= shift
        self.frame[0] -= shift
        self.frame[1] -= shift

    def _frame_end(self) -> float:
        """The end (exclusive) of the owner's frame; infinite when it is UNBOUNDED FOLLOWING."""
        end = self.frame_spec.end
        return float("inf") if end is None else self.owner + end + 1

    def _bound(self) -> int | None:
        end = self._frame_end()
        return None if end == float("inf") else int(end)

    def limit(self) -> int:
        bound = self._bound()
        if bound is not None and bound <= self.rows.size:
            return bound  # every row the frame holds is here: NEXT reads no row after it
        return super().limit()

    def _begin(self, start: int):
        self.frame[0], self.frame[1] = self.owner, self._frame_end()
        super()._begin(start)

    def _run(self, out):
        while True:
            super()._run(out)
            if not (self.finished and self.owner < self.rows.size and not self.threads and self.best is None):
                return
            # SEEK tried every start up to the partition's end
            self._advance(out, self.owner + 1, unmatched=True)

    def decide(self, out, end, rows: tuple):
        start, owner = self.start, self.owner
        if end is None:
            if self.frame_spec.seek and start + 1 < self._frame_end():
                self.start = start + 1
            else:
                self._advance(out, owner + 1, unmatched=True)
            return
        self.match_number += 1
        out.append(Match(self.match_number, start, end, rows, owner=owner))
        skip = self.options.skip.mode
        if end < start or skip is SkipMode.TO_NEXT_ROW:
            following = owner + 1
        else:
            following = self._next_start(start, end, rows)
        self._advance(out, following)

    def decide_unmatched(self, out, stop: int):
        self.decide(out, None, ())  # (may move to the next owner, before ``stop``)

    def _advance(self, out, following: int, unmatched: bool = False):
        """Move to owner ``following``: the owner (when ``unmatched``) and the rows skipped
        before ``following`` are unmatched."""
        first = self.owner if unmatched else self.owner + 1
        if first < following:
            out.append(Unmatched(np.arange(first, following, dtype=np.int64)))
        self.owner = self.start = following


class RowOutcomes:
    """A MATCH_RECOGNIZE matcher's matches as a window's outcomes: each match its start row's,
    every other row unmatched once the matcher has moved past it (``low_water``)."""

    def __init__(self, inner):
        self.inner = inner
        self.rows = inner.rows
        self.next = 0  # the first row without an outcome

    def reset(self):
        self.inner.reset()
        self.next = 0

    def feed(self, count: int = 0) -> list:
        return self._outcomes(self.inner.feed(count), self.inner.low_water())

    def finish(self) -> list:
        return self._outcomes(self.inner.finish(), self.rows.size)

    def low_water(self) -> int:
        return min(self.inner.low_water(), self.next)

    def rebase(self, shift: int):
        self.inner.rebase(shift)
        self.next -= shift

    def _outcomes(self, found: list, decided: int) -> list:
        """``found`` (a block's owners are its starts), then the rows up to ``decided`` that
        start none of them."""
        out, owners = [], [np.empty(0, dtype=np.int64)]
        for item in found:
            if isinstance(item, MatchBlock):
                out.append(item)
                owners.append(np.asarray(item.starts, dtype=np.int64))
            else:
                out.append(item._replace(owner=item.start))
                owners.append(np.array([item.start], dtype=np.int64))
        rows = np.setdiff1d(np.arange(self.next, decided, dtype=np.int64), np.concatenate(owners))
        if len(rows):
            out.append(Unmatched(rows))
        self.next = max(self.next, decided)
        return out


def reads_back(conditions: Conditions) -> bool:
    """Does a DEFINE or UNTIL condition navigate to a row before the one it is evaluated on (a
    PREV the engine evaluates; CLASSIFIER's reads only the match)?"""
    def back(expr) -> bool:
        if isinstance(expr, Nav) and expr.physical < 0:
            return True
        inner = (*expr.args, expr.filter) if isinstance(expr, Agg) else children(expr)
        return any(back(e) for e in inner if e is not None)

    return any(c.expr is not None and back(c.expr) for c in (*conditions.define.values(), *conditions.until.values()))
