"""DEFINE conditions over the match state alone (``udtf.match.conditions.state_only``: operators
over integral / boolean / string aggregates and MATCH_NUMBER(), no column of the row): the VM
evaluates each once per value of what it reads, shared by every run, row and start.  Plain
Python lists, against the brute-force oracle and against the same condition made to read the
row (evaluated per run and row)."""
from __future__ import annotations

import random

import pytest

import oracle
from engine_support import agg, call, col, engine_for, lit, nav
from test_engine import engine_result
from udtf import expr as ir
from udtf.match.conditions import state_only

rng = random.Random(28)
N = 60
PRICE = [rng.randint(0, 9) for _ in range(N)]
X = [rng.randint(0, 12) for _ in range(N)]
HALF = [p + 0.5 for p in PRICE]
COLUMNS = {"price": PRICE, "x": X, "half": HALF}

COUNT_B = call("<=", agg("count", ("B",), None), lit(3))  # COUNT(B.*) <= 3
COUNT_ALL = call("<=", agg("count", None, None), lit(5))  # COUNT(*) <= 5
SUM_A = call("<", agg("sum", ("A",), "x"), lit(20))  # SUM(A.x) < 20
SPREAD_C = call("<=", call("-", agg("max", ("C",), "price"), agg("min", ("C",), "price")), lit(4))
EVEN = call("=", call("%", ir.MatchNumber(), lit(2)), lit(0))  # MATCH_NUMBER() % 2 = 0


def _vars(mapped, var):
    return [r for r, v, _ in mapped if v == var]


PREDS = {
    "count_b": lambda row, mapped: len(_vars(mapped, "B")) <= 3,
    "count_all": lambda row, mapped: len(mapped) <= 5,
    "sum_a": lambda row, mapped: sum(X[r] for r in _vars(mapped, "A")) < 20,
    "spread_c": lambda row, mapped: max(PRICE[r] for r in _vars(mapped, "C")) -
    min(PRICE[r] for r in _vars(mapped, "C")) <= 4,
}


def _engine(pattern, state, skip="TO NEXT ROW"):
    """The matcher over the columns, fed every row; (engine, matches)."""
    engine, rows, names, _ = engine_for(pattern, state=state, columns=COLUMNS, skip=skip)
    rows.append(N, masks={}, values={c: list(v) for c, v in COLUMNS.items()})
    out = engine.feed(N) + engine.finish()
    return engine, out


def _in_class(expr, var="A") -> bool:
    engine, *_ = engine_for("(A | B | C)+", state={var: expr}, columns=COLUMNS)
    return state_only(next(iter(engine.machine.conditions.define.values())).expr)


def test_the_class_reads_aggregates_and_match_number_alone():
    for expr in (COUNT_B, COUNT_ALL, SUM_A, SPREAD_C, EVEN, call("AND", COUNT_ALL, EVEN)):
        assert _in_class(expr)
    for expr in (call(">", col("price"), nav("price", ("A",))),  # the row, a navigation
                 call("AND", COUNT_ALL, call(">", col("price"), lit(2))),  # the row beside
                 call("<", agg("avg", ("A",), "price"), lit(5)),  # a double: -0.0 equals 0.0
                 call("<", agg("sum", ("A",), "half"), lit(9.5)),
                 call("=", ir.Classifier(None), lit("A")),
                 call("<", lit(1), lit(2))):  # a constant reads nothing
        assert not _in_class(expr)


@pytest.mark.parametrize("pattern, state, preds", [
    ("A{2}? B{2,}", {"B": COUNT_B}, {"B": "count_b"}),
    ("{- A{2}? -} B{2,}", {"B": COUNT_B}, {"B": "count_b"}),
    ("A B{2,} A* (C | D E)+", {"A": COUNT_ALL}, {"A": "count_all"}),
    ("A* (B | C A){,2}", {"A": COUNT_ALL, "B": COUNT_B}, {"A": "count_all", "B": "count_b"}),
    ("(A | B)+ C+", {"A": SUM_A, "C": SPREAD_C}, {"A": "sum_a", "C": "spread_c"}),
    ("A+ B* C{2,}", {"A": SUM_A, "B": COUNT_B, "C": SPREAD_C}, {"A": "sum_a", "B": "count_b", "C": "spread_c"}),
])
@pytest.mark.parametrize("skip", ["PAST LAST ROW", "TO NEXT ROW"])
@pytest.mark.parametrize("chunks", [None, 7])
def test_shared_conditions_match_the_oracle(pattern, state, preds, skip, chunks):
    define = {v: PREDS[p] for v, p in preds.items()}
    expected = oracle.standard(pattern, N, oracle.Conditions(define, {}), skip=skip)
    got = engine_result(pattern, N, state=state, columns=COLUMNS, skip=skip, chunks=chunks)
    assert got == expected


def test_one_evaluation_per_value_read(monkeypatch):
    # COUNT(B.*) <= 3 reads one count: 1 to 4 before it fails, whichever start or run has it -
    # evaluated four times at most, where a condition evaluated per run and row is asked far more
    from udtf.match import conditions

    calls = []
    compiled = conditions.compile_expr

    def counted(expr, scope):
        fn = compiled(expr, scope)
        return lambda args: calls.append(args) or fn(args)
    monkeypatch.setattr(conditions, "compile_expr", counted)
    engine, out = _engine("{- A{2}? -} B{2,}", {"B": COUNT_B})  # (on the Pike VM: no lane tier)
    (values,) = engine.machine.conditions.shared.values()
    assert out and set(values) <= {(1,), (2,), (3,), (4,)} and values[(4,)] is False
    assert 0 < len(calls) <= 4
    calls.clear()
    monkeypatch.setattr(conditions, "state_only", lambda expr: False)
    _, alone = _engine("{- A{2}? -} B{2,}", {"B": COUNT_B})
    assert alone == out and len(calls) > 20


@pytest.mark.parametrize("pattern", ["A (B | C)+", "A* (C | B A){1,3}", "A B+ C?"])
def test_match_number_read_per_match(pattern):
    # the same condition made to read the row (price = price: always true) is evaluated per run
    # and row: both give the same matches
    state = {"C": EVEN, "B": COUNT_B, "A": COUNT_ALL}
    beside = {**state, "C": call("AND", EVEN, call("=", col("price"), col("price")))}
    for skip in ("PAST LAST ROW", "TO NEXT ROW"):
        shared = engine_result(pattern, N, state=state, columns=COLUMNS, skip=skip)
        alone = engine_result(pattern, N, state=beside, columns=COLUMNS, skip=skip)
        assert shared == alone and any(v == "C" for m in shared for _, v, _ in m[3])
