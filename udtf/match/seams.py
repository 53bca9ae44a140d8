"""One partition on many cores: the serial matcher's answer from chunks matched apart
(issue 28 item 3; docs/architecture.md, "Chunks").

Standard semantics try one attempt row after the other: the *chain*.  After no match at row
p the next attempt is p + 1; after a match, the row AFTER MATCH SKIP names (``next_start``).
When matches are bounded -- a match from p ends by ``reach(p)``, a row known from the rows
(a longest match in rows, or the last row inside the WITHIN window) -- and no condition reads
what lies before p beyond a fixed lookback (no MATCH_NUMBER() in DEFINE), the outcome of the
attempt at p depends only on the rows from p - lookback to reach(p) + 1 (+ NEXT's lookahead).
Hence the invariant this module rests on: a run of the serial matcher from any attempt row a,
given those rows, is exact at every attempt row of its chain before its ``stop``; two such
runs agree from the first attempt row both their chains pass through.

A chunk owning the attempt rows [lo, hi) (``chunk_runs``) reports its chain from lo and, for
each row a predecessor's chain may enter it at (lo to reach(lo - 1) + 1) that no chain reported
so far passes through, the chain from that row up to where it meets one: every chain entering
the chunk is then covered, whatever the predecessors do.  ``stitch`` follows the one true chain
from row 0 across the reported runs, numbers its matches (MATCH_NUMBER: their count so far)
and adds the rows no match covers (WITH UNMATCHED ROWS).  The result is the serial matcher's
output, in its order; an error the serial run raises at an attempt (AFTER MATCH SKIP TO a
variable absent from the match) is raised when the true chain reaches that attempt only.
"""
from __future__ import annotations

from bisect import bisect_left
from typing import Callable, NamedTuple

import numpy as np

from ..plan import Skip
from ..rows import Match, MatchKind
from .base import next_start


class Run(NamedTuple):
    """A chain of the serial matcher from attempt row ``start``: its ``matches`` (MATCH only,
    ``Match``es in chain order, or ``Facts``) at the attempt rows before ``stop``, exact there.  ``error``: what the
    attempt at ``stop`` raises (None: the run simply ends there)."""
    start: int
    stop: int
    matches: tuple
    error: Exception | None = None


class Facts(NamedTuple):
    """Matches as a chunk reports them to the stitch, in chain order: their starts, ends and
    next attempt rows (int64 arrays)."""
    starts: np.ndarray
    ends: np.ndarray
    nexts: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)

    def before(self, row: int) -> Facts:
        """The matches starting before ``row``."""
        k = int(np.searchsorted(self.starts, row))
        return Facts(self.starts[:k], self.ends[:k], self.nexts[:k])


class Chain:
    """A ``Run`` with its match starts and the attempt rows following them (sequences in chain
    order: lists, or arrays as ``Stitcher`` reads them), for lookups."""

    def __init__(self, run: Run, skip: Skip, starts=None, nexts=None):
        self.run = run
        if isinstance(run.matches, Facts):
            starts, nexts = run.matches.starts, run.matches.nexts
        self.starts = [m.start for m in run.matches] if starts is None else starts
        self.nexts = [next_start(skip, m.start, m.end, m.rows) for m in run.matches] if nexts is None else nexts

    def first_at(self, lo: int, hi: int) -> int | None:
        """The first attempt row of this chain in [lo, hi] (before ``stop``), None if none."""
        row = max(lo, self.run.start)
        k = bisect_left(self.starts, row) - 1  # the last match starting before ``row``
        if k >= 0 and self.nexts[k] > row:  # ``row`` lies inside that match's skip
            row = self.nexts[k]
        return row if row <= hi and row < self.run.stop else None

    def segments(self, start: int):
        """(first, last attempt row, match index or None) from ``start`` (an attempt row of
        the chain) on: the rows first..last are tried in turn, all failing but ``last`` when
        it starts match ``index``; the next segment starts at that match's next attempt."""
        k = bisect_left(self.starts, start)
        while k < len(self.starts) and self.starts[k] < self.run.stop:
            yield start, self.starts[k], k
            start = self.nexts[k]
            k += 1
        if start < self.run.stop:
            yield start, self.run.stop - 1, None


def chunk_runs(chain: Callable[[int, int], Run], lo: int, hi: int, entries: int, skip: Skip) -> list[Run]:
    """The runs a chunk owning attempt rows [lo, hi) reports: ``chain(lo, hi)``, then for each
    row from lo to ``entries`` - 1 (the rows a predecessor's chain may enter the chunk at:
    reach(lo - 1) + 2, clipped to hi) that no reported chain passes through, its chain up to
    the first row a reported one passes through.  ``chain(a, stop)``: the serial matcher's
    ``Run`` from attempt row a, exact before ``stop``; it is asked for windows of growing
    length, so that a chain meeting another soon costs little."""
    chains = [Chain(chain(lo, hi), skip)]
    for entry in range(lo + 1, min(entries, hi)):
        if any(c.first_at(entry, entry) == entry for c in chains):
            continue
        width = 16
        while True:
            stop = min(hi, entry + width)
            alternative = Chain(chain(entry, stop), skip)
            meet = _meeting(alternative, chains)
            if meet is not None or stop == hi or alternative.run.error is not None:
                break
            width *= 4
        run = alternative.run
        if meet is not None:
            matches = run.matches
            run = Run(entry, meet, matches.before(meet) if isinstance(matches, Facts) else
                      tuple(m for m in matches if m.start < meet))
        chains.append(Chain(run, skip))
    return [c.run for c in chains]


def _meeting(alternative: Chain, chains: list) -> int | None:
    """The first attempt row of ``alternative`` (before its stop) that one of ``chains`` passes
    through, None if none."""
    for first, last, _ in alternative.segments(alternative.run.start):
        rows = [r for r in (c.first_at(first, last) for c in chains) if r is not None]
        if rows:
            return min(rows)
    return None


def path(chains: list, size: int) -> tuple[list, Exception | None]:
    """The serial matcher's chain over a partition of ``size`` rows from ``chains``
    (``Chain``s covering every attempt row it reaches): (chain, k0, k1) slices, in turn (the
    matches k0 to k1 - 1 of the chain are the serial run's, in its order), and the error the
    serial run raises where the chain stops (None: none).  A chain is followed from where the
    true one enters it to its stop; the steps are the chains visited, not the matches."""
    chains = sorted(chains, key=lambda c: c.run.start)
    out: list = []
    pos = 0
    while pos < size:
        error = next((c.run.error for c in chains if c.run.error is not None and c.run.stop == pos), None)
        if error is not None:
            return out, error
        at = next((c for c in chains if c.first_at(pos, pos) == pos), None)
        if at is None:
            raise ValueError(f"no run covers attempt row {pos}")
        k0, k1 = bisect_left(at.starts, pos), bisect_left(at.starts, at.run.stop)
        out.append((at, k0, k1))
        pos = max(at.run.stop, int(at.nexts[k1 - 1])) if k1 > k0 else at.run.stop
    return out, None


def unmatched_rows(starts: np.ndarray, ends: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """WITH UNMATCHED ROWS: the stretches (first rows, last rows) of a partition of ``size``
    rows that the serial run's matches (``starts`` / ``ends``, in its order) leave unmatched.
    Every row is an attempt of the chain or inside a match before it (a skip lands inside its
    match), so they are the rows neither inside a match nor the start of an empty one."""
    edges = np.zeros(size + 1, dtype=np.int64)
    full = ends >= starts
    np.add.at(edges, starts[full], 1)
    np.add.at(edges, ends[full] + 1, -1)
    free = np.cumsum(edges[:size]) == 0
    free[starts[~full]] = False
    change = np.flatnonzero(np.diff(np.concatenate(([False], free, [False])).astype(np.int8)))
    return change[::2], change[1::2] - 1


def stitch(runs: list, skip: Skip, size: int, unmatched: bool) -> list:
    """The serial matcher's output over a partition of ``size`` rows from ``runs`` (``Run``s)
    covering every attempt row its true chain reaches: the matches of that chain from row 0,
    numbered from 1, with WITH UNMATCHED ROWS (``unmatched``) each row no match covers as a
    ``MatchKind.UNMATCHED`` at its attempt, in attempt order."""
    slices, error = path([Chain(run, skip) for run in runs], size)
    matches = [m for at, k0, k1 in slices for m in at.run.matches[k0:k1]]
    if error is not None:
        raise error
    out = [m._replace(number=k + 1) for k, m in enumerate(matches)]
    if unmatched:
        firsts, lasts = unmatched_rows(np.array([m.start for m in matches], dtype=np.int64),
                                       np.array([m.end for m in matches], dtype=np.int64), size)
        rows = [Match(None, row, row, (), MatchKind.UNMATCHED)
                for first, last in zip(firsts.tolist(), lasts.tolist()) for row in range(first, last + 1)]
        out = sorted(out + rows, key=lambda m: m.start)  # (stable: an unmatched row never starts a match)
    return out
