"""The engine of row pattern recognition in a window (R020, ``udtf.match.window``) on plain
Python lists: examples, and random patterns and rows against the brute-force oracle
(``oracle.window_standard``, written from Trino's ``PatternRecognitionPartition``)."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import oracle
from engine_support import engine_matches, nav
from test_engine import masks_of
from test_engine_properties import FAST, MAX_ROWS, STD_SKIP_MODES, STD_VARS, _random_std_pattern, has_possessive, \
    std_known_bug
from udtf.errors import MatchRecognizeError
from udtf.expr import NavMode
from udtf.plan import Frame
from udtf.rows import MatchKind


def window_result(pattern, n, frame, **kwargs):
    """``engine_matches`` with a window ``frame`` in the oracle's shape."""
    try:
        out, names = engine_matches(pattern, n, frame=frame, **kwargs)
    except MatchRecognizeError as e:
        return [("error", "absent" if "not present" in str(e) else "first" if "first row" in str(e) else str(e))]
    return sorted(("unmatched", m.start) if m.kind is MatchKind.UNMATCHED else
                  ("match", m.source, m.start, m.end, tuple((r, names[v], bool(x)) for r, v, x in m.rows))
                  for m in out)


def outcomes(result):
    """Per row: '-' unmatched, 'start..end' a match (start-1 = end: empty)."""
    return " ".join("-" if r[0] == "unmatched" else f"{r[2]}..{r[3]}" for r in sorted(result, key=lambda r: r[1]))


@pytest.mark.parametrize("rowspec, pattern, frame, skip, expected", [
    # every row gets an outcome; rows a match skipped are unmatched
    ("A B B A B C", "A B+", Frame(), "PAST LAST ROW", "0..2 - - 3..4 - -"),
    ("A B B A B C", "A B+", Frame(), "TO NEXT ROW", "0..2 - - 3..4 - -"),
    # the frame bounds the match: B+ stops at the frame's end
    ("A B B B C", "A B+", Frame(end=1), "PAST LAST ROW", "0..1 - - - -"),
    ("A B B B C", "A B+ C", Frame(end=2), "PAST LAST ROW", "- - - - -"),
    ("A B B B C", "A B+ C", Frame(end=4), "PAST LAST ROW", "0..4 - - - -"),
    # SEEK: a later row of the frame may start the match; the rows it skips are unmatched
    ("C A B C A B", "A B", Frame(seek=True), "PAST LAST ROW", "1..2 - - 4..5 - -"),
    ("C A B C A B", "A B", Frame(seek=True), "TO NEXT ROW", "1..2 1..2 4..5 4..5 4..5 -"),
    ("C C A B", "A B", Frame(end=1, seek=True), "TO NEXT ROW", "- - 2..3 -"),
    # empty matches belong to their row
    ("A - A", "A*", Frame(), "PAST LAST ROW", "0..0 1..0 2..2"),
])
def test_window_examples(rowspec, pattern, frame, skip, expected):
    masks, n = masks_of(rowspec, ["A", "B", "C"])
    got = window_result(pattern, n, frame, masks=masks, skip=skip)
    assert outcomes(got) == expected
    assert got == sorted(oracle.window_standard(pattern, n, oracle.Conditions.from_masks(masks), frame.end,
                                                frame.seek, skip=skip))


def test_navigation_stays_in_the_frame():
    """PREV / NEXT land only on rows of the frame of the row whose match is sought: PREV at the
    match's first row is NULL under INITIAL; under SEEK it reads back to that row."""
    xs = [5, 1, 2, 3]
    prev_known = {"A": nav("x", None, NavMode.LAST, 0, -1)}  # DEFINE A AS PREV(x) IS NOT NULL
    from engine_support import call
    state = {"A": call("is_not_null", prev_known["A"])}
    initial = window_result("A", 4, Frame(), state=state, columns={"x": xs})
    assert outcomes(initial) == "- - - -"
    seek = window_result("A", 4, Frame(seek=True), state=state, columns={"x": xs}, skip="TO NEXT ROW")
    assert outcomes(seek) == "1..1 2..2 3..3 -"
    # NEXT beyond the frame's end is NULL too (DEFINE A AS NEXT(x) IS NULL: the frame's last row)
    state = {"A": call("is_null", nav("x", None, NavMode.LAST, 0, 1))}
    bounded = window_result("A", 4, Frame(end=1, seek=True), state=state, columns={"x": xs}, skip="TO NEXT ROW")
    assert outcomes(bounded) == "1..1 2..2 3..3 3..3"


def test_fed_in_chunks_with_rows_forgotten():
    masks, n = masks_of("A B B A B C A B B B", ["A", "B", "C"])
    whole = window_result("A B+", n, Frame(end=2, seek=True), masks=masks, skip="TO NEXT ROW")
    for chunks in (1, 2, 3):
        assert window_result("A B+", n, Frame(end=2, seek=True), masks=masks, skip="TO NEXT ROW",
                             chunks=chunks) == whole


def _random_case(seed):
    rng = random.Random(seed)
    while True:
        pattern = _random_std_pattern(rng)
        if not std_known_bug(pattern) and not has_possessive(pattern) and "^" not in pattern and "$" not in pattern:
            break
    n = rng.randint(0, MAX_ROWS)
    rows = [frozenset(v for v in STD_VARS if rng.random() < .5) for _ in range(n)]
    frame = Frame(rng.choice([None, None, 0, 1, 2, 3]), rng.random() < .5)
    return pattern, rows, frame, rng.choice(STD_SKIP_MODES), rng.choice(STD_VARS), rng.choice([None, 1, 2, 3])


@FAST
@given(st.integers(0, 2 ** 32 - 1))
def test_window_matches_oracle(seed):
    pattern, rows, frame, skip, target, chunks = _random_case(seed)
    n = len(rows)
    masks = {v: [v in r for r in rows] for v in STD_VARS}
    skip_to = (target,) if skip in ("TO FIRST", "TO LAST") else ()
    note(f"pattern={pattern!r} rows={[''.join(sorted(r)) or '-' for r in rows]} frame={frame} skip={skip} "
         f"{skip_to} chunks={chunks}")
    expected = oracle.window_standard(pattern, n, oracle.Conditions.from_masks(masks), frame.end, frame.seek,
                                      skip=skip, skip_to=skip_to)
    got = window_result(pattern, n, frame, masks=masks, skip=skip, skip_to=skip_to, chunks=chunks)
    note(f"oracle={expected}")
    note(f"engine={got}")
    if expected and expected[-1][0] == "error":
        assert got[-1] == expected[-1] or got == [expected[-1]]
    else:
        assert got == sorted(expected)


def test_matcher_tier():
    """INITIAL over the rest of the partition, no condition reading back: MATCH_RECOGNIZE's
    tiers (``RowOutcomes``); a bounded frame, SEEK or a PREV the engine evaluates: the VM."""
    from udtf.compile import compile_pattern
    from udtf.match import Conditions, Options, matcher
    from udtf.match.window import RowOutcomes, WindowMatcher
    from udtf.pattern import parse_pattern
    from udtf.plan import Condition
    from udtf.rows import Rows
    from engine_support import call

    def tier(frame, state=None):
        rows = Rows(masks=["m"], values=["x"])
        define = [Condition(0, "m", state)]
        return type(matcher(compile_pattern(parse_pattern("A+"), ["A"]), Conditions(define, [], ["A"], rows, windowed=True),
                            Options(frame=frame)))

    assert tier(Frame()) is RowOutcomes
    assert tier(Frame(end=3)) is WindowMatcher and tier(Frame(seek=True)) is WindowMatcher
    assert tier(Frame(), call("is_null", nav("x", None, NavMode.LAST, 0, -1))) is WindowMatcher
