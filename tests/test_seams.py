"""One partition in chunks (``udtf.match.seams``): the stitched runs of chunks matched apart
equal the serial engine's output over the whole partition -- matches, their order and
MATCH_NUMBER, unmatched rows, AFTER MATCH SKIP errors -- on random patterns, random data and
random chunk boundaries (chunks of one row, and chunks shorter than a match, included)."""
from __future__ import annotations

import random

import pytest

from engine_support import call, col, engine_for, engine_matches, nav
from test_engine_properties import (STD_SKIP_MODES, STD_VARS, _random_std_pattern, _state_condition, has_possessive,
                                    std_known_bug)
from udtf.errors import MatchRecognizeError
from udtf.expr import NavMode
from udtf.match import expand
from udtf.match.seams import Run, chunk_runs, stitch
from udtf.pattern import Anchor, max_rows, parse_pattern, walk
from udtf.rows import MatchKind


def _case(seed, anchored=False):
    """(pattern, masks, state, price, n, skip, skip_to, unmatched, within, order, bounds): a
    bounded case -- a longest match in rows, or a WITHIN window over ascending keys -- cut at
    ``bounds``; ``state``: a condition over match state or PREV for one variable, or none.
    ``anchored``: the pattern begins with ``^``."""
    rng = random.Random(seed)
    while True:
        pattern = _random_std_pattern(rng)
        if anchored:
            pattern = f"^ ({pattern})"
        node = parse_pattern(pattern)
        within = rng.choice([None, 1, 2, 4]) if not has_possessive(pattern) else None
        if std_known_bug(pattern) or any(isinstance(x, Anchor) and x.kind == "$" for x in walk(node)):
            continue
        if within is not None or max_rows(node) is not None:
            break
    n = rng.randint(0, 60)
    density = rng.choice([.3, .5, .8])
    masks = {v: [rng.random() < density for _ in range(n)] for v in STD_VARS}
    price = [rng.randint(0, 6) for _ in range(n)]
    state, var = {}, rng.choice(STD_VARS)  # match state (the Pike VM and the lanes), PREV before the match
    kind = rng.choice(["masks", "masks", "state", "prev"])
    if kind == "state":
        state[var] = _state_condition(rng, var, [v for v in STD_VARS if v != var])[0]
    elif kind == "prev":
        state[var] = call(">", col("price"), nav("price", None, NavMode.LAST, 0, -rng.randint(1, 3)))
    order = sorted(rng.randint(0, n // 2 + 1) for _ in range(n))
    skip = rng.choice(STD_SKIP_MODES)
    skip_to = (rng.choice(STD_VARS),) if skip in ("TO FIRST", "TO LAST") else ()
    size = rng.choice([1, 2, 3, 5, 8, 13])
    bounds = sorted({0, n} | {rng.randint(1, max(1, n - 1)) for _ in range(n // size)})
    return pattern, masks, state, price, n, skip, skip_to, rng.random() < .4, within, order, bounds


def _reach(pattern, within, order, n):
    """reach(p): the last row a match attempted at p may end at."""
    longest = max_rows(parse_pattern(pattern))

    def reach(p):
        last = n - 1 if longest is None else min(n - 1, p + longest - 1)
        if within is not None:
            while last > p and order[last] - order[p] > within:
                last -= 1
        return last
    return reach


def _chain(case, reach):
    """chain(a, stop): the serial engine's ``Run`` from attempt row a, over the rows an attempt
    before ``stop`` reads (PREV's lookback before a, to reach(stop - 1) + 1 after), as a
    chunk's worker would run it."""
    pattern, masks, state, price, n, skip, skip_to, _, within, order, _ = case

    def chain(a, stop):
        engine, rows, _, lookback = engine_for(pattern, masks=masks, state=state, columns={"price": price},
                                               skip=skip, skip_to=skip_to, within=within)
        first, end = max(0, a - lookback), min(n, reach(stop - 1) + 2)
        rows.dropped = first  # (row a is not the partition's first: ``^`` holds on none of these)
        rows.append(end - first, masks={f"m_{v}": bytes(m[first:end]) for v, m in masks.items()},
                    values={"price": price[first:end]}, order=order[first:end] if within is not None else None)
        out, error = engine.chain(a - first)
        if error is not None:
            stop = min(stop, engine.start + first)
        matches = tuple(m._replace(start=m.start + first, end=m.end + first,
                                   rows=tuple((r + first, v, x) for r, v, x in m.rows))
                        for m in expand(out) if m.kind is MatchKind.MATCH and m.start + first < stop)
        return Run(a, stop, matches, error if error is not None and engine.start + first == stop else None)
    return chain


def _outcome(run):
    try:
        return [(m.kind, m.number, m.start, m.end, tuple((r, v, bool(x)) for r, v, x in m.rows)) for m in run()]
    except MatchRecognizeError as e:
        return str(e)


@pytest.mark.parametrize("seed", range(400))
def test_chunks_stitch_to_the_serial_run(seed):
    _check_stitch(_case(seed))


@pytest.mark.parametrize("seed", range(100))
def test_anchored_chunks_stitch_to_the_serial_run(seed):
    """Past the first chunk every start is decided unmatched without a try."""
    _check_stitch(_case(seed, anchored=True))


def _check_stitch(case):
    pattern, masks, state, price, n, skip, skip_to, unmatched, within, order, bounds = case
    reach = _reach(pattern, within, order, n)
    engine, *_ = engine_for(pattern, masks=masks, state=state, columns={"price": price}, skip=skip, skip_to=skip_to,
                            within=within)
    options = engine.options
    serial = _outcome(lambda: engine_matches(pattern, n, masks=masks, state=state, columns={"price": price},
                                             skip=skip, skip_to=skip_to, within=within, order=order,
                                             unmatched=unmatched)[0])
    runs = []
    for lo, hi in zip(bounds, bounds[1:]):
        runs += chunk_runs(_chain(case, reach), lo, hi, reach(lo - 1) + 2 if lo else lo, options.skip)
    assert _outcome(lambda: stitch(runs, options.skip, n, unmatched)) == serial, \
        f"{pattern!r} {skip} {skip_to} state={state} within={within} bounds={bounds}"
