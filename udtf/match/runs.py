"""Flat sequences matched for every start row at once, with numpy.

Many patterns are a sequence of variables, each with a quantifier (``STRT DOWN+ UP+``).  When
every condition is a precomputed mask and, in the data, a variable that may repeat never holds
on a row together with the next element's variable, preferment needs no backtracking: a greedy
element takes the whole run of rows of its variable (at most its maximum), a reluctant one the
same unless it is last (then its minimum), and the match from a start row follows from run
lengths.  That is computed for all start rows with array operations; only the chaining of
matches by AFTER MATCH SKIP PAST LAST ROW remains a loop, one step per match.

The matches come out as a ``MatchBlock`` of arrays; ``MatchBlock.matches()`` gives the same
``Match`` tuples the Pike VM would.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ..plan import SkipMode
from ..rows import Match, Rows, Unmatched
from .standard import Tier, Verdict


class MatchBlock:
    """Matches of a flat sequence as arrays, in match order, numbered from ``first``:
    ``starts`` / ``ends`` per match, ``takes[m, k]`` = rows of element k (variable
    ``elements[k]``) in match m, consecutive from its start; ``lengths`` (rows per match), and
    ``rows`` / ``variables`` / ``owner`` (index of its match) per matched row, derived when read."""

    def __init__(self, elements: tuple, starts, ends, takes, first: int = 1):
        self.elements, self.starts, self.ends, self.takes = elements, starts, ends, takes
        self.numbers = np.arange(first, first + len(starts))

    def __len__(self):
        return len(self.starts)

    @cached_property
    def lengths(self) -> np.ndarray:
        return self.takes.sum(axis=1)

    @cached_property
    def owner(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.starts)), self.lengths)

    @cached_property
    def variables(self) -> np.ndarray:
        return np.repeat(np.tile(self.elements, len(self.starts)), self.takes.reshape(-1))

    @cached_property
    def rows(self) -> np.ndarray:
        lengths = self.lengths  # (a match's rows are consecutive from its start)
        return np.arange(lengths.sum()) + np.repeat(self.starts - (np.cumsum(lengths) - lengths), lengths)

    def matches(self) -> list:
        bounds = np.searchsorted(self.owner, np.arange(len(self.starts) + 1)).tolist()
        rows, variables = self.rows.tolist(), self.variables.tolist()
        return [Match(number, s, e, tuple((rows[i], variables[i], False) for i in range(bounds[k], bounds[k + 1])))
                for k, (number, s, e) in enumerate(zip(self.numbers.tolist(), self.starts.tolist(),
                                                       self.ends.tolist()))]


def shifted(match, offset: int, first: int | None = None):
    """``match`` (a ``Match``, a ``MatchBlock`` or ``Unmatched`` rows) with its rows moved by
    ``offset`` (and numbered from ``first``, if given)."""
    if isinstance(match, Unmatched):
        return match.moved(offset)
    if isinstance(match, MatchBlock):
        first = first if first is not None else int(match.numbers[0]) if len(match) else 1
        return MatchBlock(match.elements, match.starts + offset, match.ends + offset, match.takes, first)
    number = match.number if first is None else first
    if not offset:
        return match._replace(number=number)
    return Match(number, match.start + offset, match.end + offset,
                 tuple((row + offset, var, excluded) for row, var, excluded in match.rows), match.kind,
                 None if match.owner is None else match.owner + offset)


def expand(items: list) -> list:
    """``Match`` tuples for a matcher's output (``MatchBlock``s expanded, ``Unmatched`` rows as
    one ``MatchKind.UNMATCHED`` each)."""
    out = []
    for item in items:
        out.extend(item.matches() if isinstance(item, (MatchBlock, Unmatched)) else (item,))
    return out


class RunLengthMatcher:
    """Matches a flat sequence (``program.SeqItem``s) over masks."""

    def __init__(self, sequence: tuple, masks: list, skip: SkipMode):
        self.sequence = sequence
        self.masks = masks  # per element: mask name or None (TRUE)
        self.past_last = skip is SkipMode.PAST_LAST_ROW

    def match(self, rows: Rows, start: int, final: bool, end: int):
        """(starts, ends, takes, next start) of the matches from start rows ``start`` on that the
        rows before ``end`` decide (all of them when ``final``: the partition is complete), in
        order; None when the data needs backtracking.  A start is undecided while one of its
        runs reaches row ``end - 1`` (it might go on)."""
        n = end - start
        masks = [np.frombuffer(rows.masks[name], dtype=np.uint8, count=n, offset=start).astype(bool) if name
                 else np.ones(n, dtype=bool) for name in self.masks]
        last = len(self.sequence) - 1
        for i, item in enumerate(self.sequence[:-1]):
            if item.min != item.max and (masks[i] & masks[i + 1]).any():
                return None
        position = np.arange(n)
        ok = np.ones(n, dtype=bool)
        open_ = np.zeros(n, dtype=bool)
        takes = []
        for i, item in enumerate(self.sequence):
            run = _run_lengths(masks[i])[position]
            reaches_end = ok & (position + run >= n)  # the run may go on past the rows known
            if i == last and not item.greedy:
                open_ |= reaches_end & (run < item.min)
            else:
                open_ |= reaches_end & (True if item.max is None else run < item.max)
            ok &= run >= item.min
            take = run if item.max is None else np.minimum(run, item.max)
            if i == last and not item.greedy:
                take = np.full(n, item.min)
            take = np.where(ok, take, 0)
            takes.append(take)
            position = np.minimum(position + take, n)
        if final:
            open_[:] = False
        first_open = int(np.argmax(open_)) if open_.any() else n
        if self.past_last:
            starts, ends = _kept_matches(ok & ~open_, open_, position - 1)
        else:
            starts = np.flatnonzero(ok[:first_open])
            ends = position[starts] - 1
        after = (ends[-1] + 1 if self.past_last and len(starts) else 0)
        following = first_open if not self.past_last else \
            (int(np.argmax(open_[after:])) + after if open_[after:].any() else n)
        takes = np.stack([t[starts] for t in takes], axis=1) if len(starts) else np.zeros((0, last + 1), int)
        return starts + start, ends + start, takes, following + start


class RunsTier(Tier):
    """Decides start rows with a ``RunLengthMatcher`` as rows arrive, a ``MatchBlock`` per feed; when
    the data needs backtracking, passes the rest of the partition to the next tier."""

    def __init__(self, runs: RunLengthMatcher):
        self.runs = runs

    def reset(self):
        self.off = False  # the data needed backtracking: the next tier decides the partition

    def decide(self, m, out) -> Verdict:
        if self.off:
            return Verdict.PASS
        # MEASURES may read ``lookahead`` rows past a match (NEXT): only rows before those decide
        end = m.limit()
        if end <= m.start:
            return Verdict.WAIT
        found = self.runs.match(m.rows, m.start, m.finished, end)
        if found is None:
            self.off = True
            return Verdict.PASS
        starts, ends, takes, m.start = found
        if len(starts):
            k = int(np.argmax(ends - starts))
            m.check_span(int(starts[k]), int(ends[k]))
        if m.start < end:  # undecided: its runs reach the last row
            m.check_span(m.start, end - 1)
        if len(starts):
            out.append(block(self.runs.sequence, starts, ends, takes, m.match_number + 1))
            m.match_number += len(starts)
        return Verdict.WAIT


def block(sequence: tuple, starts, ends, takes, first: int) -> MatchBlock:
    """The ``MatchBlock`` of matches of a flat sequence (``program.SeqItem``s): ``takes[m, k]``
    = rows of element k in match m (consecutive from its start)."""
    return MatchBlock(tuple(item.var for item in sequence), starts, ends, takes, first)


def _run_lengths(mask: np.ndarray) -> np.ndarray:
    """run[p] = how many rows from p on satisfy ``mask`` (one extra entry, 0, for p = n)."""
    n = len(mask)
    at = np.arange(n + 1)
    stop = np.where(np.append(mask, False), n, at)  # p where the run from p stops at once
    return np.minimum.accumulate(stop[::-1])[::-1] - at


def _kept_matches(matched: np.ndarray, open_: np.ndarray, ends: np.ndarray):
    """(starts, ends) of the matches SKIP PAST LAST ROW keeps, from the first row on: each next
    one starts after the last; the walk stops at the first undecided start it reaches."""
    candidates = np.flatnonzero(matched | open_)
    chosen, _ = skip_past_last(candidates, ends, open_[candidates])
    return chosen, ends[chosen]


def skip_past_last(candidates: np.ndarray, ends: np.ndarray, stops: np.ndarray) -> tuple:
    """(the candidate rows AFTER MATCH SKIP PAST LAST ROW keeps, the index of the candidate it
    stopped at or ``len(candidates)``): from the first of ``candidates`` (the sorted start rows
    with a match ending at ``ends[row]``, or with ``stops`` true: not decided), each next one is
    the first candidate after the last match's end."""
    following = np.searchsorted(candidates, ends[candidates] + 1).tolist()
    stopped, chosen, k = stops.tolist() + [True], [], 0  # (a last entry ends the walk)
    while not stopped[k]:
        chosen.append(k)
        k = following[k]
    return candidates[chosen], k
