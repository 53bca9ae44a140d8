"""The vectorized emitters (ONE ROW and ALL ROWS PER MATCH) agree with the row-by-row one."""
import random

import pytest

from udtf.emit import Emitter
from udtf.expr import Agg, Classifier, MatchNumber, Nav, NavMode
from udtf.plan import Atom, RowsMode
from udtf.rows import Match

FIRST, LAST = NavMode.FIRST, NavMode.LAST
COUNT = dict(args=(), arg_types=(), distinct=False, filter=None, type="bigint")
ATOMS = [Atom(Nav(None, None, (0,), FIRST, 0, 0), False), Atom(Nav(None, None, (1,), LAST, 0, -1), True),
         Atom(Nav(None, None, None, LAST, 0, 2), False), Atom(Nav(None, None, (0, 2), FIRST, 0, 0), True),
         Atom(Agg("count", (1,), **COUNT), False), Atom(Agg("count", None, **COUNT), True),
         Atom(Classifier(None), False), Atom(Classifier((0, 1)), True), Atom(MatchNumber(), True),
         Atom(Nav(None, None, (1,), LAST, 0, 1), False), Atom(Classifier((0, 2)), False)]


def random_matches(rng, size, empty=True):
    matches, start = [], 0
    while start < size - 1:
        length = rng.randint(0 if empty else 1, 4)
        rows = tuple((start + k, rng.randint(0, 2), False) for k in range(min(length, size - start)))
        matches.append(Match(len(matches) + 1, start, start + len(rows) - 1, rows))
        start += max(len(rows), 1) + rng.randint(0, 2)
    return matches


def flat(emitted):
    """Chunks of python lists / Arrow arrays as one python list per column."""
    unchunk = lambda chunks: [v for c in chunks for v in (c.to_pylist() if hasattr(c, "to_pylist") else c)]
    return unchunk(emitted.sources), [unchunk(c) for c in emitted.columns], unchunk(emitted.timed_out)


@pytest.mark.parametrize("mode", [RowsMode.ONE, RowsMode.ALL_SHOW])
def test_vectorized_matches_row_by_row(mode):
    """ONE ROW PER MATCH, and ALL ROWS PER MATCH with RUNNING and FINAL atoms, computed with
    numpy give what the row-by-row emitter gives."""
    rng = random.Random(3)
    for _ in range(200):
        size = rng.randint(1, 30)
        fast = Emitter(ATOMS, mode, ["A", "B", "C"], {}, lambda: size)
        slow = Emitter(ATOMS, mode, ["A", "B", "C"], {}, lambda: size)
        slow.vectorized = False
        assert fast.vectorized
        matches = random_matches(rng, size, empty=mode is RowsMode.ONE)
        assert flat(fast.emit(matches)) == flat(slow.emit(matches))


@pytest.mark.parametrize("mode", [RowsMode.ONE, RowsMode.ALL_SHOW])
def test_match_blocks_give_their_matches_rows(mode):
    """Matches of a flat sequence as a ``MatchBlock`` (rows per element; ONE ROW and ALL ROWS
    PER MATCH computed from those counts) give what their ``Match`` tuples give row by row."""
    import numpy as np

    from udtf.match import MatchBlock

    rng = random.Random(5)
    for _ in range(200):
        elements = tuple(rng.randint(0, 2) for _ in range(rng.randint(1, 4)))  # (a variable may recur)
        starts, ends, takes, start = [], [], [], 0
        for _ in range(rng.randint(0, 6)):
            counts = [rng.randint(0, 3) for _ in elements]
            if not sum(counts):
                counts[rng.randrange(len(counts))] = 1
            starts.append(start)
            ends.append(start + sum(counts) - 1)
            takes.append(counts)
            start += sum(counts) + rng.randint(0, 2)
        size = start + 2
        block = MatchBlock(elements, np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64),
                           np.array(takes, dtype=np.int64).reshape(len(starts), len(elements)), rng.randint(1, 9))
        fast = Emitter(ATOMS, mode, ["A", "B", "C"], {}, lambda: size)
        slow = Emitter(ATOMS, mode, ["A", "B", "C"], {}, lambda: size)
        slow.vectorized = False
        assert flat(fast.emit([block])) == flat(slow.emit(block.matches()))
