"""The emitter alone over long matches: MIN / MAX / MAX_BY measures (``--sums``: SUM / AVG of
doubles) over matches longer than ``udtf.emit_folds.LONGEST``, CPU seconds, best of 3.

    PYTHONPATH=. .venv/bin/python bench/emit_long.py [--rows 200000] [--sums]

Matches of 300-1,500 consecutive rows (two variables alternating), ``MAX(x)``, ``MIN(A.d)``,
``MAX_BY(x, d)`` (``x`` BIGINT, ``d`` DOUBLE), or ``SUM(d)``, ``AVG(A.d)``, ONE ROW PER MATCH
(FINAL) and ALL ROWS PER MATCH (RUNNING).  Run it in two checkouts to compare them (the same
seed: the same input).
"""
from __future__ import annotations

import argparse
import random
import time

from udtf.emit import Emitter
from udtf.expr import Agg, Col
from udtf.plan import Atom, RowsMode
from udtf.rows import Match, MatchKind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--sums", action="store_true", help="SUM(d), AVG(A.d) instead")
    args = parser.parse_args()
    n = args.rows
    rng = random.Random(1)
    values = {"x": [rng.randint(-10 ** 6, 10 ** 6) for _ in range(n)], "d": [rng.random() for _ in range(n)]}
    aggs = [Agg("max", None, (Col("x", "bigint"),), ("bigint",), False, None, "bigint"),
            Agg("min", (0,), (Col("d", "double"),), ("double",), False, None, "double"),
            Agg("max_by", None, (Col("x", "bigint"), Col("d", "double")), ("bigint", "double"), False, None, "bigint")]
    if args.sums:
        aggs = [Agg("sum", None, (Col("d", "double"),), ("double",), False, None, "double"),
                Agg("avg", (0,), (Col("d", "double"),), ("double",), False, None, "double")]
    matches, start = [], 0
    while start < n:
        length = min(rng.randint(300, 1500), n - start)
        rows = tuple((start + i, i % 2, False) for i in range(length))
        matches.append(Match(len(matches) + 1, start, start + length - 1, rows, MatchKind.MATCH))
        start += length
    for mode, final in ((RowsMode.ONE, True), (RowsMode.ALL_SHOW, False)):
        emitter = Emitter([Atom(a, final) for a in aggs], mode, ["A", "B"], values, lambda: n, True)
        best = float("inf")
        for _ in range(3):
            begin = time.process_time()
            emitter.emit(matches)
            best = min(best, time.process_time() - begin)
        print(f"{mode.value} ({'FINAL' if final else 'RUNNING'}): {len(matches)} matches, {n:,} rows: {best:.3f} s")


if __name__ == "__main__":
    main()
