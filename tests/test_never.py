"""DEFINE conditions that can never hold (udtf.match.never): found, dropped, and left alone
where they may hold or may raise.  Plain Python lists, checked against the brute-force oracle."""
from __future__ import annotations

import random

import pytest

import oracle
from engine_support import agg, call, col, engine_for, lit, nav
from test_engine import engine_result
from udtf.expr import NavMode
from udtf.match.dfa import DfaTier
from udtf.match.never import fold_never

PRICE = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4]
N = len(PRICE)


def _dead(pattern, state, masks=None):
    """The variables with a condition that ``fold_never`` drops for ``pattern``."""
    masks = masks or {}
    engine, rows, names, _ = engine_for(pattern, masks=masks, state=state, columns={"price": PRICE})
    kept = set(engine.machine.conditions.define)
    return {v for v in {*state, *masks} if names.index(v) not in kept}


def _check(pattern, state, preds, masks=None, **kw):
    """The engine's matches equal the oracle's (``preds[v](row, mapped)`` is v's condition)."""
    masks = masks or {}
    define = {v: (lambda row, mapped, v=v: bool(masks.get(v, [1] * N)[row]) and
                  (v not in preds or preds[v](row, mapped))) for v in {*state, *masks}}
    expected = oracle.standard(pattern, N, oracle.Conditions(define, {}), **kw)
    got = engine_result(pattern, N, masks=masks, state=state, columns={"price": PRICE}, **kw)
    assert got == expected


def _last(mapped, var):
    rows = [r for r, x, _ in mapped if x == var]
    return PRICE[rows[-1]] if rows else None


# A's condition reads B, and no row of B can be in a run when A is tried
LATER_B = call("<=", call("-", col("price"), nav("price", ("B",), NavMode.FIRST)), lit(1))


def later_b(row, mapped):
    rows = [r for r, x, _ in mapped if x == "B"]
    return bool(rows) and PRICE[row] - PRICE[rows[0]] <= 1


def test_a_variable_reading_only_later_rows_is_dropped():
    assert _dead("A{1,3} B{,2}", {"A": LATER_B}, {"B": [p > 2 for p in PRICE]}) == {"A"}
    for skip in ("PAST LAST ROW", "TO NEXT ROW"):
        _check("A{1,3} B{,2}", {"A": LATER_B}, {"A": later_b}, {"B": [p > 2 for p in PRICE]}, skip=skip)
        _check("A* B{,2}", {"A": LATER_B}, {"A": later_b}, {"B": [p > 2 for p in PRICE]}, skip=skip)


def test_what_is_left_with_masks_only_runs_on_the_dfa():
    engine, *_ = engine_for("A* B+", masks={"B": [p > 2 for p in PRICE]}, state={"A": LATER_B},
                            columns={"price": PRICE})
    assert not engine.machine.stateful
    assert any(isinstance(t, DfaTier) for t in engine.tiers)


@pytest.mark.parametrize("pattern", ["B A", "(B | C) A", "B* A", "(A B)+", "PERMUTE(A, B)", "(B A | A)",
                                     "B{,2} A C"])
def test_kept_where_a_row_of_the_other_variable_may_be_in_the_run(pattern):
    # B can be mapped before A on some path: A's condition may hold
    state = {"A": call(">", col("price"), nav("price", ("B",)))}
    assert _dead(pattern, state) == set()
    _check(pattern, state, {"A": lambda row, mapped: _last(mapped, "B") is not None and PRICE[row] > _last(mapped, "B")},
           skip="TO NEXT ROW")


def test_a_logical_offset_past_the_rows_any_path_maps_is_null():
    second_c = {"D": call(">", col("price"), nav("price", ("C",), NavMode.LAST, 1))}  # LAST(C.price, 1)
    assert _dead("A* PERMUTE(C, D, E)", second_c) == {"D"}  # one C at most: never a second
    assert _dead("C{,2} D", {"D": call(">", col("price"), nav("price", ("C",), NavMode.FIRST, 2))}) == {"D"}
    for pattern in ("C{2} D", "C+ D", "(C D)+", "PERMUTE(C, D) C D", "C D"):
        kept = _dead(pattern, second_c) == set()
        assert kept == (pattern != "C D"), pattern
        _check(pattern, second_c, {"D": lambda row, mapped: len([r for r, x, _ in mapped if x == "C"]) > 1 and
                                   PRICE[row] > PRICE[[r for r, x, _ in mapped if x == "C"][-2]]}, skip="TO NEXT ROW")
    deep = {"D": call(">", col("price"), nav("price", ("C",), NavMode.FIRST, 100))}  # past the counts kept
    assert _dead("C{,2} D", deep) == {"D"} and _dead("C+ D", deep) == set() and _dead("C{70} D", deep) == set()
    # the row itself counts: LAST(D.price, 1) in D's condition needs one earlier D
    assert _dead("C D", {"D": call(">", col("price"), nav("price", ("D",), NavMode.LAST, 1))}) == {"D"}
    assert _dead("D+", {"D": call(">", col("price"), nav("price", ("D",), NavMode.LAST, 1))}) == set()


def test_kept_where_the_variable_reads_itself_or_every_row():
    state = {"A": call(">", col("price"), nav("price", ("A", "B"), NavMode.FIRST))}
    assert _dead("A B", state) == set()  # FIRST(U.price), U = (A, B): the row itself is in U
    assert _dead("A B", {"A": call(">", col("price"), nav("price", None, NavMode.FIRST, 0, -1))}) == set()


@pytest.mark.parametrize("expr", [
    call("coalesce", nav("price", ("B",)), col("price")),  # NULL is replaced
    call("is_null", nav("price", ("B",))),  # true
    call("or", call(">", col("price"), lit(4)), call(">", col("price"), nav("price", ("B",)))),  # may hold
    call("=", agg("count", ("B",), None), lit(0)),  # COUNT over no row is 0
])
def test_kept_where_null_is_not_the_end_of_it(expr):
    assert _dead("A B", {"A": expr}) == set()


def test_null_or_false_parts_fold_and_or_not():
    absent_gt = call(">", col("price"), nav("price", ("B",)))
    for expr in (call("and", call(">", col("price"), lit(0)), absent_gt),
                 call("or", absent_gt, call("<", col("price"), nav("price", ("B",), NavMode.FIRST))),
                 call("not", absent_gt),
                 call(">", agg("sum", ("B",), "price"), lit(0)),  # SUM over no row is NULL
                 call(">", call("+", nav("price", ("B",)), lit(3)), col("price"))):
        assert _dead("A B", {"A": expr}) == {"A"}, expr


def test_kept_where_evaluating_may_raise():
    # ANSI: price / 0 raises before the comparison sees the NULL: the error must stay
    raising = call(">", call("/", col("price"), lit(0)), nav("price", ("B",)))
    assert _dead("A B", {"A": raising}) == set()
    got = engine_result("A B", N, state={"A": raising}, columns={"price": PRICE})
    assert got[-1][0] == "error" and "DIVIDE_BY_ZERO" in got[-1][1]
    # folding the row into a SUM over A may overflow: A's condition is still evaluated
    summed = call("and", call(">", agg("sum", ("A",), "price"), lit(0)), call(">", col("price"), nav("price", ("B",))))
    assert _dead("A B", {"A": summed}) == set()


def test_a_dropped_variable_leaves_the_later_ones_less_to_read():
    state = {"A": call("<", col("price"), nav("price", ("C",))),  # C only after A: A never holds
             "B": call("<", col("price"), nav("price", ("A",)))}  # then no row of A before B either
    assert _dead("A? B C", state, {"C": [1] * N}) == {"A", "B"}
    assert _dead("A? B C", {"B": state["B"]}, {"C": [1] * N}) == set()


def test_fold_never_returns_the_same_objects_when_nothing_is_dropped():
    engine, *_ = engine_for("A B", masks={"A": [1] * N}, state={"B": call(">", col("price"), nav("price", ("A",)))},
                            columns={"price": PRICE})
    machine = engine.machine
    assert fold_never(machine.program, machine.conditions) == (machine.program, machine.conditions)


def test_random_patterns_with_conditions_on_later_variables_match_the_oracle():
    rng = random.Random(28)
    patterns = ["A{1,3} B{,2}", "A* B? C", "(A | B) C+", "A+ (B C)*", "A? B C", "PERMUTE(A, B) C",
                "A B{2,} A* (C | B)", "^ A* B C $", "(A B?)+ C", "A{,2}? B+? C"]
    for trial in range(60):
        pattern = rng.choice(patterns)
        names = sorted({c for c in pattern if c.isalpha()})
        masks = {v: [rng.random() < .6 for _ in range(N)] for v in names}
        state, preds = {}, {}
        for v in names:
            if rng.random() < .7:
                other = rng.choice([w for w in names if w != v] or [v])
                state[v] = call(">=", col("price"), nav("price", (other,)))
                preds[v] = lambda row, mapped, o=other: _last(mapped, o) is not None and PRICE[row] >= _last(mapped, o)
        skip = rng.choice(["PAST LAST ROW", "TO NEXT ROW"])
        _check(pattern, state, preds, masks, skip=skip, unmatched=rng.random() < .3)
