"""Timed-out partial matches (WITH TIMEOUT ROWS) in the engine, on plain Python lists.

The brute-force definition (written from the definition, over ``tests/oracle.py``): a run
from start row ``i`` times out when the first row beyond its WITHIN window arrives, or the
partition ends, at row ``k``.  Its partial match is live then if the run could still store a
row: replace the rows from ``k`` on by *jokers* (rows satisfying every condition but the
negated and the UNTIL ones) and ask the oracle for a run from ``i`` that takes a joker; its
rows before ``k`` are the timed-out partial match.

* FlinkCEP semantics (NO SKIP): every distinct such partial match of every start row, once
  (Flink's ``TimedOutPartialMatchHandler``); a run that can only wait to be confirmed (a
  trailing ``-> ~N``) is confirmed, not timed out.
* Standard semantics: for each start row the matcher tries that has no match, the preferred
  such partial match (the first derivation in preference order that takes a joker).
"""
from __future__ import annotations

import random

import pytest

import oracle
from engine_support import engine_matches
from test_engine_properties import (_flink_random_case, _standard_random_case, has_possessive)
from udtf.pattern import Alt, Exclude, Neg, Permute, Repeat, Seq, Var, parse_pattern, walk
from udtf.rows import MatchKind


def outcome(pattern, n, **kwargs):
    """(matches, timed-out partial matches) of the engine, as tuples of (row, var name)."""
    out, names = engine_matches(pattern, n, timeouts=True, **kwargs)
    rows = lambda m: tuple((r, names[v]) for r, v, _ in m.rows)
    assert all(m.number is None for m in out if m.kind is MatchKind.TIMED_OUT)
    return ([rows(m) for m in out if m.kind is MatchKind.MATCH],
            [rows(m) for m in out if m.kind is MatchKind.TIMED_OUT])


def window_end(order, within, i) -> int:
    """The first row beyond the window of a run from ``i`` (or the partition's end)."""
    return next((r for r in range(i + 1, len(order)) if order[r] - order[i] > within), len(order))


def jokers_needed(node) -> int:
    """Rows that always suffice to finish any partial run of ``node``."""
    if isinstance(node, Var):
        return 1
    if isinstance(node, (Seq, Permute)):
        return sum(jokers_needed(i) for i in node.items if not isinstance(i, Neg))
    if isinstance(node, Alt):
        return max(jokers_needed(o) for o in node.options)
    if isinstance(node, Repeat):
        return max(node.min, 1) * jokers_needed(node.body)
    if isinstance(node, Exclude):
        return jokers_needed(node.body)
    return 0


def joker_conditions(masks, until, k, never):
    """Conditions over rows before ``k`` as ``masks`` / ``until`` say, jokers from ``k`` on."""
    return oracle.Conditions(
        {v: (lambda row, mapped, m=m, v=v: (v not in never) if row >= k else bool(m[row])) for v, m in masks.items()},
        {v: (lambda row, m=m: row < k and bool(m[row])) for v, m in until.items()})


def flink_timeouts(pattern, masks, until, n, within, order):
    node = parse_pattern(pattern)
    never = {x.var.name for x in walk(node) if isinstance(x, Neg)} | {"U"}
    jokers = max(1, jokers_needed(node))
    found = set()
    for i in range(n):
        k = window_end(order, within, i)
        conds = joker_conditions(masks, until, k, never)
        for j in range(k, k + jokers):
            for run in oracle.flink_runs(node, k + jokers, conds, i, j):
                found.add(tuple((r, v) for r, v, _ in run if r < k))
    return sorted(found)


def standard_timeouts(pattern, masks, n, skip, within, order):
    node = parse_pattern(pattern)
    conds = oracle.Conditions.from_masks(masks)
    jokers = max(1, jokers_needed(node))
    found, start = [], 0
    while start < n:
        k = window_end(order, within, start)
        window = lambda row, s=start: order[row] - order[s] <= within
        best = next(oracle._Std(n, conds, window).match(node, start, (), False, lambda p, m: iter([(p, m)])), None)
        if best is not None:
            end = best[0] - 1
            start = start + 1 if end < start or skip == "TO NEXT ROW" else end + 1
            continue
        virtual = oracle._Std(k + jokers, joker_conditions(masks, {}, k, set()), lambda row: True)
        grows = lambda p, m: iter([(p, m)]) if p > k else oracle.NOTHING
        run = next(virtual.match(node, start, (), False, grows), None)
        if run is not None:
            found.append(tuple((r, v) for r, v, _ in run[1] if r < k))
        start += 1
    return found


# ---- FlinkCEP: the cases checked on Flink 2.3 (tests/flink, "timeouts" of the nfa engine) ----
# (pattern, rows as labels, timestamps (ms), skip, matches, timeouts); within(5 s) in Flink is
# WITHIN 4999 ms here (Flink's window is exclusive)
LABELS = {"a": "A", "b": "B", "c": "C", "n": "N"}
FLINK_CASES = [
    ("A -> B -> C", "a1 b2 x3", (0, 1000, 10000), "NO SKIP", [], ["a1 b2"]),
    ("A -> B -> C", "a1 b2", (0, 1000), "NO SKIP", [], ["a1 b2"]),  # the partition end closes it
    ("A -> B->+ -> C", "a1 b2 b3 x4", (0, 1000, 2000, 10000), "NO SKIP", [], ["a1 b2", "a1 b2 b3"]),
    ("A ->> B -> C", "a1 b2 b3 x4", (0, 1000, 2000, 10000), "NO SKIP", [], ["a1", "a1 b2", "a1 b3"]),
    # Flink drops {a1 a2} {a2} at the close (docs/flinkcep.md): we confirm them; timeouts agree
    ("A->+ -> ~N", "a1 a2 x3", (0, 1000, 10000), "NO SKIP", ["a1", "a1 a2", "a2"], ["a1 a2", "a2"]),
    ("A B? C", "a1 b2 x3", (0, 1000, 10000), "NO SKIP", [], ["a1 b2"]),
    ("A -> B", "a1 a2 b3 a4 x5", (0, 1000, 2000, 3000, 10000), "PAST LAST ROW", ["a1 b3"], ["a4"]),
    ("A B->+", "a1 b2 b3 x4", (0, 1000, 2000, 10000), "NO SKIP", ["a1 b2", "a1 b2 b3"], ["a1 b2 b3"]),
    ("A B->{0,3} -> C", "a1 b2 b3 x4", (0, 1000, 2000, 10000), "NO SKIP", [], ["a1", "a1 b2", "a1 b2 b3"]),
    ("A -> B -> C", "a1 b2 a3 b4 c5 x6", (0, 1000, 2000, 3000, 4000, 10000), "TO NEXT ROW",
     ["a1 b2 c5", "a3 b4 c5"], []),
    ("A -> B", "a1 a2 x3 b4", (0, 3000, 6000, 7000), "NO SKIP", ["a2 b4"], ["a1"]),
]


def _labelled(pattern, labels, times, **kwargs):
    tokens = labels.split()
    masks = {v: [t.rstrip("0123456789") == letter for t in tokens] for letter, v in LABELS.items()}
    masks = {v: m for v, m in masks.items() if v in pattern}
    matches, timeouts = outcome(pattern, len(tokens), masks=masks, within=4999, order=list(times), **kwargs)
    text = lambda ms: sorted(" ".join(tokens[r] for r, _ in m) for m in ms)
    return text(matches), text(timeouts)


@pytest.mark.parametrize("pattern, labels, times, skip, matches, timeouts", FLINK_CASES)
def test_flinkcep_timeouts_as_flink(pattern, labels, times, skip, matches, timeouts):
    assert _labelled(pattern, labels, times, mode="flinkcep", skip=skip) == (matches, timeouts)
    for chunks in (1, 2):  # fed in pieces, and with a watermark after each piece (streaming)
        assert _labelled(pattern, labels, times, mode="flinkcep", skip=skip, chunks=chunks) == (matches, timeouts)
        assert _labelled(pattern, labels, times, mode="flinkcep", skip=skip, chunks=chunks,
                         watermarks=True) == (matches, timeouts)


def test_standard_timeouts_examples():
    # no match from a1 (a4 breaks B+ before C); a4's window closes at b5: its run {a4} times out
    assert _labelled("A B+ C", "a1 b2 b3 a4 b5", (0, 1000, 2000, 3000, 10000)) == ([], ["a4"])
    # the preferred run of a1 when its window closes: the greedy one
    assert _labelled("A B* C", "a1 b2 b3 x4", (0, 1000, 2000, 10000)) == ([], ["a1 b2 b3"])
    # a match cut short by the window is still a match (the longest that fits), not a timeout
    assert _labelled("A B+", "a1 b2 b3", (0, 1000, 9000)) == (["a1 b2"], [])
    # a trailing notFollowedBy is confirmed at the close, not timed out
    assert _labelled("A -> ~N", "a1 x2", (0, 9000), mode="flinkcep") == (["a1"], [])


def test_timeouts_do_not_change_matches():
    tokens = "a1 b2 a3 b4 c5 a6 b7".split()
    masks = {v: [t[0] == letter for t in tokens] for letter, v in LABELS.items() if v in "ABC"}
    order = [0, 1, 2, 3, 9, 10, 11]
    for mode, skip in (("standard", "PAST LAST ROW"), ("standard", "TO NEXT ROW"), ("flinkcep", "NO SKIP"),
                       ("flinkcep", "PAST LAST ROW"), ("flinkcep", "TO NEXT ROW")):
        plain, _ = engine_matches("A -> B+ C", len(tokens), masks=masks, mode=mode, skip=skip, within=4,
                                  order=order)
        with_timeouts, _ = engine_matches("A -> B+ C", len(tokens), masks=masks, mode=mode, skip=skip, within=4,
                                          order=order, timeouts=True)
        assert [m for m in with_timeouts if m.kind is MatchKind.MATCH] == plain


# ---- against the brute-force definition ----------------------------------------------------

def _increasing(rng, n):
    order, t = [], 0
    for _ in range(n):
        t += rng.choice([1, 1, 2, 3])
        order.append(t)
    return order


@pytest.mark.parametrize("seed", range(400))
def test_flinkcep_timeouts_match_brute_force(seed):
    while True:
        (pattern, _variables, masks, until, n), _skip, _target, chunks, _win, _ = _flink_random_case(seed)
        if not has_possessive(pattern):
            break
        seed += 100_000
    rng = random.Random(seed)
    within, order = rng.choice([1, 2, 3, 4]), _increasing(rng, n)
    expected = flink_timeouts(pattern, masks, until, n, within, order)
    for kwargs in ({}, {"chunks": chunks}, {"chunks": chunks or 1, "watermarks": True}):
        matches, timeouts = outcome(pattern, n, masks=masks, until=until, mode="flinkcep", skip="NO SKIP",
                                    within=within, order=order, **kwargs)
        assert len(timeouts) == len(set(timeouts)), (pattern, kwargs)
        assert sorted(timeouts) == expected, (pattern, masks, until, order, within, kwargs)


@pytest.mark.parametrize("seed", range(400))
def test_standard_timeouts_match_brute_force(seed):
    while True:
        pattern, rows, _skip, _target, _unmatched, chunks, _win = _standard_random_case(seed)
        if "$" not in pattern and not has_possessive(pattern):
            break
        seed += 100_000
    rng = random.Random(seed)
    n = len(rows)
    masks = {v: [v in r for r in rows] for v in ("A", "B", "C")}
    skip = rng.choice(["PAST LAST ROW", "TO NEXT ROW"])
    within, order = rng.choice([1, 2, 3, 4]), _increasing(rng, n)
    expected = standard_timeouts(pattern, masks, n, skip, within, order)
    for kwargs in ({}, {"chunks": chunks}, {"chunks": chunks or 1, "watermarks": True}):
        _, timeouts = outcome(pattern, n, masks=masks, skip=skip, within=within, order=order, **kwargs)
        assert timeouts == expected, (pattern, rows, order, within, skip, kwargs)
