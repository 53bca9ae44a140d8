"""The emitter alone on the aggregates that a NULL or a non-numeric key used to send to the
per-match row fold: COUNT(DISTINCT s) of strings, COUNT(DISTINCT dt) of dates, COUNT_IF and
FILTER over AND / OR of nullable columns; CPU seconds, best of 3.

    PYTHONPATH=. .venv/bin/python bench/emit_nulls.py [--rows 200000] [--nan]

Matches of 1-8 consecutive rows (three variables), 10 % NULLs in every column, ONE ROW PER
MATCH (FINAL) and ALL ROWS PER MATCH (RUNNING); ``--nan``: 5 % of ``d`` NaN too, and AVG(d * 2.0).  Run it in two checkouts to compare them (the
same seed: the same input).
"""
from __future__ import annotations

import argparse
import random
import time

from udtf.emit import Emitter
from udtf.expr import Agg, Call, Col, Lit
from udtf.plan import Atom, RowsMode
from udtf.rows import Match, MatchKind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--nan", action="store_true", help="NaN in d, and AVG(d * 2.0)")
    args = parser.parse_args()
    n = args.rows
    rng = random.Random(1)
    maybe = lambda make: [None if rng.random() < 0.1 else make() for _ in range(n)]
    values = {"s": maybe(lambda: rng.choice("ABCDEFGHIJ")), "dt": maybe(lambda: rng.randint(19000, 19010)),
              "i": maybe(lambda: rng.randint(0, 9)),
              "d": maybe(lambda: float("nan") if args.nan and rng.random() < 0.05 else rng.random())}
    i, d = Col("i", "int"), Col("d", "double")
    either = Call("or", (Call("<", (i, Lit(3, "int")), ("int", "int"), "boolean"),
                         Call(">", (d, Lit(0.5, "double")), ("double", "double"), "boolean")),
                  ("boolean", "boolean"), "boolean")
    aggs = [Agg("count", None, (Col("s", "string"),), ("string",), True, None, "bigint"),
            Agg("count", (0,), (Col("dt", "date"),), ("date",), True, None, "bigint"),
            Agg("count_if", None, (either,), ("boolean",), False, None, "bigint"),
            Agg("sum", (1,), (i,), ("bigint",), False, either, "bigint")]
    if args.nan:
        twice = Call("*", (d, Lit(2.0, "double")), ("double", "double"), "double")
        aggs.append(Agg("avg", None, (twice,), ("double",), False, None, "double"))
    matches, start = [], 0
    while start < n:
        length = min(rng.randint(1, 8), n - start)
        rows = tuple((start + k, rng.randint(0, 2), False) for k in range(length))
        matches.append(Match(len(matches) + 1, start, start + length - 1, rows, MatchKind.MATCH))
        start += length
    for mode, final in ((RowsMode.ONE, True), (RowsMode.ALL_SHOW, False)):
        emitter = Emitter([Atom(a, final) for a in aggs], mode, ["A", "B", "C"], values, lambda: n, True)
        best = float("inf")
        for _ in range(3):
            begin = time.process_time()
            emitter.emit(matches)
            best = min(best, time.process_time() - begin)
        print(f"{mode.value} ({'FINAL' if final else 'RUNNING'}): {len(matches)} matches, {n:,} rows: {best:.3f} s")


if __name__ == "__main__":
    main()
