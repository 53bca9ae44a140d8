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

import numpy as np

from ..plan import SkipMode
from ..rows import Match, Rows


class MatchBlock:
    """Matches as arrays: ``starts``/``ends`` per match, ``rows``/``variables``/``owner`` per
    matched row (owner = index of its match), in match order."""

    def __init__(self, starts, ends, rows, variables, owner):
        self.starts, self.ends = starts, ends
        self.rows, self.variables, self.owner = rows, variables, owner
        self.numbers = np.arange(1, len(starts) + 1)

    def __len__(self):
        return len(self.starts)

    def matches(self) -> list:
        bounds = np.searchsorted(self.owner, np.arange(len(self.starts) + 1)).tolist()
        rows, variables = self.rows.tolist(), self.variables.tolist()
        return [Match(k + 1, s, e, tuple((rows[i], variables[i], False) for i in range(bounds[k], bounds[k + 1])))
                for k, (s, e) in enumerate(zip(self.starts.tolist(), self.ends.tolist()))]


def expand(items: list) -> list:
    """``Match`` tuples for a matcher's output (``MatchBlock``s expanded)."""
    out = []
    for item in items:
        out.extend(item.matches() if isinstance(item, MatchBlock) else (item,))
    return out


class RunMatcher:
    """Matches a flat sequence (``program.SeqItem``s) over the masks of a complete partition."""

    def __init__(self, sequence: tuple, masks: list, skip: SkipMode):
        self.sequence = sequence
        self.masks = masks  # per element: mask name or None (TRUE)
        self.past_last = skip is SkipMode.PAST_LAST_ROW

    def match(self, rows: Rows) -> MatchBlock | None:
        """All matches of the partition in ``rows``, or None when the data needs backtracking."""
        n = rows.size
        masks = [np.frombuffer(rows.masks[name], dtype=np.uint8, count=n).astype(bool) if name else
                 np.ones(n, dtype=bool) for name in self.masks]
        last = len(self.sequence) - 1
        for i, item in enumerate(self.sequence[:-1]):
            if item.min != item.max and (masks[i] & masks[i + 1]).any():
                return None
        position = np.arange(n)
        ok = np.ones(n, dtype=bool)
        takes = []
        for i, item in enumerate(self.sequence):
            run = _run_lengths(masks[i])[position]
            ok &= run >= item.min
            take = run if item.max is None else np.minimum(run, item.max)
            if i == last and not item.greedy:
                take = np.full(n, item.min)
            take = np.where(ok, take, 0)
            takes.append(take)
            position = np.minimum(position + take, n)
        starts = np.flatnonzero(ok)
        ends = position[starts] - 1
        if self.past_last and len(starts):
            chosen = _chain(starts, ends, n)
            starts, ends = starts[chosen], ends[chosen]
        takes = np.stack([t[starts] for t in takes], axis=1) if len(starts) else np.zeros((0, last + 1), int)
        lengths = takes.reshape(-1)
        variables = np.repeat(np.tile([item.var for item in self.sequence], len(starts)), lengths)
        owner = np.repeat(np.arange(len(starts)), takes.sum(axis=1))
        offsets = np.concatenate([[0], np.cumsum(takes.sum(axis=1))[:-1]]) if len(starts) else np.zeros(0, int)
        rows_ = starts[owner] + (np.arange(len(owner)) - offsets[owner])
        return MatchBlock(starts, ends, rows_, variables, owner)


class RunsMatcher:
    """Matches a whole partition at ``finish`` with a ``RunMatcher``, or, when its data needs
    backtracking, with ``fallback`` (which has not been fed before)."""

    def __init__(self, runs: RunMatcher, fallback):
        self.runs = runs
        self.fallback = fallback
        self.rows = fallback.rows

    def reset(self):
        self.fallback.reset()

    def feed(self, count: int = 0) -> list:
        return []

    def finish(self) -> list:
        block = self.runs.match(self.rows)
        if block is None:
            return self.fallback.finish()
        return [block] if len(block) else []


def _run_lengths(mask: np.ndarray) -> np.ndarray:
    """run[p] = how many rows from p on satisfy ``mask`` (one extra entry, 0, for p = n)."""
    n = len(mask)
    stops = np.flatnonzero(~mask)
    following = np.append(stops, n)[np.searchsorted(stops, np.arange(n))]
    return np.append(following - np.arange(n), 0)


def _chain(starts: np.ndarray, ends: np.ndarray, n: int) -> list:
    """Indexes of the matches kept by SKIP PAST LAST ROW: each next one starts after the last."""
    first_from = np.searchsorted(starts, np.arange(n + 1))  # first match starting at >= p
    following = first_from[np.minimum(ends + 1, n)].tolist()  # the match after each one
    chosen, k, count = [], int(first_from[0]), len(starts)
    while k < count:
        chosen.append(k)
        k = following[k]
    return chosen
