"""Engine throughput (rows/s) on generated data, without Spark.

    python bench/engine.py [rows]

(a) strict sequence A B C, (b) V-shape STRT DOWN+ UP+, (e) the V-shape with ``price -
STRT.price <= 6`` / ``price > FIRST(STRT.price)`` and (f) ``S A+ B`` with ``price >= S.price AND
AVG(A.price) < S.price + 3`` / ``price < S.price`` (bench/trino.py's match-state shapes: the Pike
VM), (c) the paper's Example 1 (relaxed Kleene, running sum <= 10, until; FlinkCEP, no skip),
(d) A ->> B with WITHIN (FlinkCEP).
Conditions that depend only on the row are masks computed vectorized, as Spark would; the
time measured is the engine's (feeding masks/columns and matching).  Each case also runs on
half the rows to show the growth is linear.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from udtf.compile import compile_pattern
from sql_ext.compiler.typecheck import typed
from udtf import expr as ir
from udtf.match import Conditions, MatchBlock, Options, matcher
from udtf.pattern import parse_pattern, variables
from udtf.plan import Condition, Semantics, Skip, SkipMode
from udtf.rows import Rows


def run(pattern, masks, define, values=None, until=None, order=None, mode="standard", skip="PAST LAST ROW",
        within=None):
    """Feed one partition in batches of 10k rows; return (matches, seconds)."""
    node = parse_pattern(pattern)
    names = variables(node)
    rows = Rows(masks=list(masks), values=list(values or {}))
    index = {n: i for i, n in enumerate(names)}
    conditions = Conditions([Condition(index[v], *spec) for v, spec in define.items()],
                            [Condition(index[v], *spec) for v, spec in (until or {}).items()], names, rows)
    engine = matcher(compile_pattern(node, names, untils=set(until or {})), conditions,
                     Options(semantics=Semantics(mode), skip=Skip(SkipMode(skip)), within=within))
    n = len(next(iter({**masks, **(values or {})}.values())))
    found = 0
    start = time.perf_counter()
    for lo in range(0, n, 10_000):
        hi = min(n, lo + 10_000)
        rows.append(hi - lo, masks={k: m[lo:hi] for k, m in masks.items()},
                    values={k: v[lo:hi] for k, v in (values or {}).items()},
                    order=order[lo:hi] if order is not None else None)
        found += count(engine.feed(hi - lo))
    found += count(engine.finish())
    return found, time.perf_counter() - start


def count(matches) -> int:
    return sum(len(m) if isinstance(m, MatchBlock) else 1 for m in matches)


# the paper's iterative condition SUM(P1.price) <= 10, typed as the rewrite types it
SUM_P1_LE_10 = typed(ir.Call("<=", (ir.Agg("sum", (0,), (ir.Col("price", None),), (), False, None, None),
                                   ir.Lit(10, "int")), (), None), {"price": "bigint"}, ansi=True)


# the Pike VM shapes of bench/trino.py: conditions that read the match state
_PRICE = ir.Col("price", None)


def _typed(e):
    return typed(e, {"price": "bigint"}, ansi=True)


def _call(fn, *args):
    return ir.Call(fn, args, (), None)


STRT_PRICE = ir.Nav("price", None, (0,))
UP_STATE = _typed(_call("<=", _call("-", _PRICE, STRT_PRICE), ir.Lit(6, "int")))
DOWN_STATE = _typed(_call(">", _PRICE, ir.Nav("price", None, (0,), ir.NavMode.FIRST)))
S_PRICE = ir.Nav("price", None, (0,))
A_STATE = _typed(_call("AND", _call(">=", _PRICE, S_PRICE),
                       _call("<", ir.Agg("avg", (1,), (_PRICE,), (), False, None, None),
                             _call("+", S_PRICE, ir.Lit(3, "int")))))
B_STATE = _typed(_call("<", _PRICE, S_PRICE))


def cases(n: int, rng):
    name = rng.integers(1, 4, n)
    price = rng.integers(0, 10, n)
    walk = np.cumsum(rng.choice([-1, 1], n))
    prev = np.concatenate([[walk[0]], walk[:-1]])
    ts = np.cumsum(rng.integers(1, 3, n)).tolist()
    yield "(a) A B C strict", run("A B C", {"a": name == 1, "b": name == 2, "c": name == 3},
                                  {"A": ("a", None), "B": ("b", None), "C": ("c", None)})
    yield "(b) STRT DOWN+ UP+", run("STRT DOWN+ UP+", {"d": walk < prev, "u": walk > prev},
                                    {"DOWN": ("d", None), "UP": ("u", None)})
    price_walk = (1000 + walk).tolist()
    yield "(e) V-shape, STRT.price", run(
        "STRT DOWN+ UP+", {"d": walk < prev, "u": walk > prev}, {"DOWN": ("d", DOWN_STATE), "UP": ("u", UP_STATE)},
        values={"price": price_walk})
    yield "(f) S A+ B, AVG(A.price)", run("S A+ B", {}, {"A": (None, A_STATE), "B": (None, B_STATE)},
                                          values={"price": price_walk})
    yield "(c) paper Example 1", run(
        "P1->+", {"n1": name == 1, "n2": name == 2},
        {"P1": ("n1", SUM_P1_LE_10)},
        values={"price": price.tolist()}, until={"P1": ("n2", None)}, mode="flinkcep", skip="NO SKIP")
    yield "(d) A ->> B WITHIN 6", run("A ->> B", {"a": name == 1, "b": name == 2},
                                      {"A": ("a", None), "B": ("b", None)}, order=ts, within=6,
                                      mode="flinkcep", skip="NO SKIP")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    full = list(cases(n, np.random.default_rng(7)))
    half = list(cases(n // 2, np.random.default_rng(7)))
    print(f"{'case':24} {'rows':>9} {'matches':>9} {'rows/s':>12} {'time(n)/time(n/2)':>18}")
    for (label, (found, seconds)), (_, (_, half_seconds)) in zip(full, half):
        print(f"{label:24} {n:9d} {found:9d} {n / seconds:12,.0f} {seconds / half_seconds:18.2f}")


if __name__ == "__main__":
    main()
