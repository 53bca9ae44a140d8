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

from .evaluate import Match
from .pattern import Repeat, Seq, Var


def flat_sequence(node, var_index: dict):
    """[[var, min, max, greedy], ...] when ``node`` is a strict sequence of (quantified)
    variables with minimum >= 1, else None.  ``max`` -1 = unbounded."""
    items = node.items if isinstance(node, Seq) else (node,)
    if isinstance(node, Seq) and any(j != "strict" for j in node.junctions):
        return None
    sequence = []
    for item in items:
        if isinstance(item, Var):
            sequence.append([var_index[item.name], 1, 1, True])
        elif (isinstance(item, Repeat) and isinstance(item.body, Var) and item.min >= 1
              and item.inner == "strict" and item.until is None and not item.possessive):
            sequence.append([var_index[item.body.name], item.min,
                             -1 if item.max is None else item.max, item.greedy])
        else:
            return None
    return sequence


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


class RunMatcher:
    """Matches a flat sequence over the masks of a complete partition."""

    def __init__(self, sequence: list, masks: list, skip: str):
        self.sequence = sequence  # [var, min, max, greedy]
        self.masks = masks  # per element: mask name or None (TRUE)
        self.past_last = skip == "PAST LAST ROW"

    def match(self, rows) -> MatchBlock | None:
        """All matches of the partition in ``rows``, or None when the data needs backtracking."""
        n = rows.size
        masks = [np.frombuffer(rows.masks[name], dtype=np.uint8, count=n).astype(bool) if name else
                 np.ones(n, dtype=bool) for name in self.masks]
        last = len(self.sequence) - 1
        for i, (_, low, high, _) in enumerate(self.sequence[:-1]):
            if low != high and (masks[i] & masks[i + 1]).any():
                return None
        position = np.arange(n)
        ok = np.ones(n, dtype=bool)
        takes = []
        for i, (_, low, high, greedy) in enumerate(self.sequence):
            run = _run_lengths(masks[i])[position]
            ok &= run >= low
            take = run if high < 0 else np.minimum(run, high)
            if i == last and not greedy:
                take = np.full(n, low)
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
        variables = np.repeat(np.tile([v for v, _, _, _ in self.sequence], len(starts)), lengths)
        owner = np.repeat(np.arange(len(starts)), takes.sum(axis=1))
        offsets = np.concatenate([[0], np.cumsum(takes.sum(axis=1))[:-1]]) if len(starts) else np.zeros(0, int)
        rows_ = starts[owner] + (np.arange(len(owner)) - offsets[owner])
        return MatchBlock(starts, ends, rows_, variables, owner)


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
