"""The lane tier (``udtf.match.lanes``) against the Pike VM it stands in for: flat sequences
whose DEFINE conditions read the match state, on random data, fed whole and in chunks; and the
start rows it must leave to the VM (backtracking, overflow, NULLs, long runs)."""
from __future__ import annotations

import random
from collections import Counter

import pytest

import udtf.match as match
from engine_support import agg, call, col, engine_matches, lit, nav
from udtf.errors import MatchRecognizeError
from udtf.expr import NavMode
from udtf.match import lanes as lanes_module
from udtf.match.lanes import Outcome, lane_program


@pytest.fixture
def outcomes(monkeypatch):
    """Counts the lane outcomes of every pass (so a test knows the lanes decided its rows)."""
    seen: Counter = Counter()
    walk = lanes_module.LaneTier._walk

    def counted(self, lo, hi, limit, final):
        decided = walk(self, lo, hi, limit, final)
        seen.update(Outcome(int(k)) for k in decided.kind)
        return decided

    monkeypatch.setattr(lanes_module.LaneTier, "_walk", counted)
    return seen


def both(monkeypatch, pattern, n, **kwargs):
    """(the engine's matches, the Pike VM's alone) — or the error each raises."""
    results = []
    for lanes in (lane_program, lambda *args: None):
        monkeypatch.setattr(match, "lane_program", lanes)
        try:
            results.append(engine_matches(pattern, n, **kwargs)[0])
        except MatchRecognizeError as e:
            results.append(("error", e.message, e.line, e.column))
    return results


def _condition(rng: random.Random, var: str, earlier: list, own: bool):
    """A random boolean match-state condition for ``var`` (``earlier``: the variables before it)."""
    anchor = rng.choice(earlier) if earlier else var
    numbers = [
        lambda: col("price"),
        lambda: col("d"),
        lambda: nav("price", (anchor,), rng.choice([NavMode.FIRST, NavMode.LAST])),
        lambda: nav("price", None, NavMode.LAST, 0, -rng.randint(1, 2)),
        lambda: nav("d", (var,), NavMode.FIRST, rng.randint(0, 2)),
        lambda: nav("price", (var,), NavMode.LAST, rng.randint(0, 2)),
        lambda: agg(rng.choice(["sum", "avg", "min", "max"]), (var,) if own else (anchor,), rng.choice(["price", "d", "x"])),
        lambda: agg("count", (var,), None),
        lambda: agg("sum", None, "x"),
        lambda: call(rng.choice(["+", "-", "*"]), col("x"), lit(rng.randint(-2, 3))),
        lambda: call("+", agg("avg", (var,), "price"), lit(rng.choice([0.5, 3, -1.25]))),
    ]

    def comparison():
        left, right = rng.choice(numbers)(), rng.choice(numbers)()
        return call(rng.choice(["<", "<=", ">", ">=", "=", "<>"]), left, right)

    cond = comparison()
    for _ in range(rng.randint(0, 2)):
        kind = rng.choice(["and", "or", "not"])
        cond = call("not", cond) if kind == "not" else call(kind, cond, comparison())
    return cond


def _case(rng: random.Random):
    n = rng.randint(1, 70)
    price, d = [100], [0.5]
    for _ in range(n - 1):
        price.append(price[-1] + rng.choice([-2, -1, 0, 1, 2]))
        d.append(round(d[-1] + rng.choice([-0.7, 0.1, 0.3, 1.1]), 2))
    x = [rng.randint(-3, 9) for _ in range(n)]
    names = ["S", "A", "B", "C"][:rng.randint(1, 4)]
    quantifiers = ["", "+", "{1,3}", "{2,}", "+?", "{1,2}?", "{2}"]
    pattern = " ".join(v + rng.choice(quantifiers) for v in names)
    state, masks = {}, {}
    for k, v in enumerate(names):
        if rng.random() < 0.8:
            state[v] = _condition(rng, v, names[:k], rng.random() < 0.7)
        if rng.random() < 0.3:
            masks[v] = [value % 3 != 0 for value in x]
    return pattern, n, dict(state=state, masks=masks, columns={"price": price, "d": d, "x": x},
                            skip=rng.choice(["PAST LAST ROW", "TO NEXT ROW"]),
                            chunks=rng.choice([None, None, 1, 4, 9]))


@pytest.mark.parametrize("seed", range(6))
def test_lanes_agree_with_the_pike_vm(seed, monkeypatch, outcomes):
    rng = random.Random(seed)
    for _ in range(120):
        pattern, n, kwargs = _case(rng)
        lanes, vm = both(monkeypatch, pattern, n, **kwargs)
        assert lanes == vm, (pattern, n, kwargs)
    # the lanes decided most start rows themselves, both ways
    assert outcomes[Outcome.MATCH] > 100 and outcomes[Outcome.NONE] > 100, outcomes


def test_a_start_that_needs_backtracking_is_left_to_the_vm(monkeypatch, outcomes):
    # A+ takes every row greedily (x >= the first A.x), then B finds no row: the preferred
    # match gives A back its last two rows
    state = {"A": call(">=", col("x"), nav("x", ("A",), NavMode.FIRST)), "B": call("=", col("x"), lit(1))}
    lanes, vm = both(monkeypatch, "A+ B", 4, state=state, columns={"x": [1, 2, 1, 3]})
    assert lanes == vm
    assert [(r, v) for r, v, _ in lanes[0].rows] == [(0, 0), (1, 0), (2, 1)]
    assert outcomes[Outcome.VM] >= 1


def test_an_overflow_raises_as_on_the_pike_vm(monkeypatch, outcomes):
    big = 3 << 60
    state = {"A": call(">", agg("sum", ("A",), "x"), lit(0))}
    lanes, vm = both(monkeypatch, "A+", 3, state=state, columns={"x": [big, big, big]})
    assert lanes == vm and lanes[0] == "error" and "ARITHMETIC_OVERFLOW" in lanes[1]
    assert outcomes[Outcome.VM] >= 1


def test_a_null_leaves_the_partition_to_the_vm(monkeypatch):
    state = {"B": call(">", col("x"), nav("x", ("A",), NavMode.FIRST))}
    lanes, vm = both(monkeypatch, "A B+", 6, state=state, columns={"x": [1, 2, None, 0, 3, 4]})
    assert lanes == vm and len(lanes) == 2


def test_a_long_run_is_left_to_the_vm(monkeypatch, outcomes):
    n = 3 * lanes_module.LONG
    state = {"A": call(">=", col("x"), nav("x", ("S",))), "B": call("<", col("x"), nav("x", ("S",)))}
    x = list(range(n)) + [-1]
    lanes, vm = both(monkeypatch, "S A+ B", n + 1, state=state, columns={"x": x}, chunks=2 * lanes_module.LONG)
    assert lanes == vm and lanes[0].end == n and outcomes[Outcome.VM] >= 1


def test_the_lanes_turn_off_where_skipped_starts_cost_more_than_the_vm(monkeypatch, outcomes):
    # every start row matches to the partition's end: under PAST LAST ROW only the first counts
    n = 5000
    state = {"A": call(">=", agg("avg", ("A",), "x"), lit(0))}
    lanes, vm = both(monkeypatch, "A{1,40}", n, state=state, columns={"x": [1] * n})
    assert lanes == vm and len(lanes) == n // 40
    assert sum(outcomes.values()) <= lanes_module.FIRST_CHUNK


def test_the_lanes_stay_on_where_a_row_costs_the_vm_more(monkeypatch, outcomes):
    # S A+ B with a running AVG: about 9 lane steps per row the chain advances, where 4 cost
    # about one VM thread step, but the VM runs about 3 threads per row here (its sample
    # tells): the lanes decide the partition
    n, price, level = 20000, [], 100
    for ts in range(n):
        level += 1 if (ts * 1103515245 + 12345) // 65536 % 2 == 0 else -1
        price.append(level)
    first = nav("price", ("S",))
    state = {"A": call("and", call(">=", col("price"), first),
                       call("<", agg("avg", ("A",), "price"), call("+", first, lit(3)))),
             "B": call("<", col("price"), first)}
    costs = []
    vm_cost = lanes_module.LaneTier._vm_cost

    def recorded(self):
        costs.append((self.lane_steps / max(1, self.advanced), vm_cost(self)))
        return costs[-1][1]

    monkeypatch.setattr(lanes_module.LaneTier, "_vm_cost", recorded)
    lanes, vm = both(monkeypatch, "S A+ B", n, state=state, columns={"price": price}, chunks=5000)
    assert lanes == vm and len(lanes) > 1000
    steps_per_row, vm_threads_per_row = costs[-1]
    # more lane steps per row than one VM thread step each would allow, fewer than the VM spends
    assert lanes_module.STEP_COST < steps_per_row < lanes_module.STEP_COST * vm_threads_per_row
    assert outcomes[Outcome.MATCH] > 1000 and sum(outcomes.values()) > n // 2


@pytest.mark.parametrize("fn", ["sum", "avg", "count", "min", "max", "count(*)"])
@pytest.mark.parametrize("kind", ["bigint", "double"])
def test_a_fold_over_rows_ahead_is_the_fold_row_by_row(fn, kind):
    # Fold.accumulate (the skim: lanes x rows ahead at once) gives, bit for bit, the states
    # Fold.add gives row by row: sequential double sums, SUM's overflow flag from the row on
    import numpy as np

    from udtf import expr as ir
    from udtf.match.vector import Compiler, Fold, View
    from udtf.sparksql.aggregates import lookup

    rng = np.random.default_rng(7)
    lanes, ahead, size = 50, 9, 400
    if kind == "double":
        column = rng.normal(0, 1e6, size) * rng.choice([1e-9, 1.0, 1e9], size)
    else:
        column = rng.choice([-(1 << 61), -7, 0, 3, 1 << 60, (1 << 61) + 5], size)
    arg = None if fn == "count(*)" else Compiler({"A": 0}).compile(ir.Col("x", kind), row_only=True)
    fold = Fold(lookup(fn.removesuffix("(*)")).vector, None if arg is None else kind, frozenset({0}), arg)
    state = fold.initial(lanes)
    rows = rng.integers(0, size - ahead, lanes)
    for step in range(3):  # lanes with 0, 1 and 2 rows folded already
        view = lambda r: View(r, [], [], [], {"x": column}, size)
        grown = fold.accumulate(state, view(rows[:, None] + np.arange(ahead)))
        single = state
        for j in range(ahead):
            single = fold.add(single, view(rows + j))
            for part, parts in zip(single, grown):
                np.testing.assert_array_equal(part, parts[:, j])
        state = fold.add(state, view(rows))
        rows = rows + 1


def test_a_long_stay_in_a_loop_is_read_ahead(monkeypatch, outcomes):
    # the few lanes still in A+ read many rows per step (their rows ahead evaluated together),
    # and decide as reading them one by one does
    n, x, level = 3000, [], 0
    for k in range(n):
        level += 1 if (k * 1103515245 + 12345) // 65536 % 3 else -2
        x.append(level)
    first = nav("x", ("S",))
    state = {"A": call("and", call(">=", col("x"), first), call("<", agg("avg", ("A",), "x"), call("+", first, lit(9)))),
             "B": call("<", col("x"), call("+", agg("max", ("A",), "x"), lit(-1)))}
    skimmed = []
    skim = lanes_module.LaneTier._skim

    def counted(self, lanes, stop):
        before = self.lane_steps
        out = skim(self, lanes, stop)
        skimmed.append(self.lane_steps - before)
        return out

    monkeypatch.setattr(lanes_module.LaneTier, "_skim", counted)
    lanes, vm = both(monkeypatch, "S A+ B", n, state=state, columns={"x": x}, chunks=500)
    assert lanes == vm and len(lanes) > 10
    assert sum(skimmed) > n and outcomes[Outcome.MATCH] > 10
