"""A refined layer with many keys (issue 30; docs/hierarchies.md, "Known cost: many refined keys"):
the engine alone, one pass vs expansion, as ``bench/hierarchy.py --engine`` times them.

    PYTHONPATH=. .venv/bin/python bench/refined_keys.py --keys 8 500 2000 [--batch 1000]

One partition of ``--rows`` rows; row i has key ``g = i % K`` and ``c`` = 'x' in the first K
rows of each 2K, else 'y'; the refined layer is ``PARTITION BY g ... PATTERN (X Y)`` (each key's
x then y, a match per key every 2K rows: with K <= batch, every key has items in every batch),
the top reads its events.  Each form's UDTFs run in this process over their ``TABLE(...)``
arguments collected from Spark in ``--batch``-row Arrow batches (``hierarchy.engine``), CPU
seconds summed over the form's UDTFs, best of ``--runs``; the answers (through Spark) compared.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.hierarchy import engine  # noqa: E402

SQL = """SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY p ORDER BY ts
  LAYER a AS (PARTITION BY g MEASURES MATCH_NUMBER() AS an PATTERN (X Y) DEFINE X AS c = 'x', Y AS c = 'y')
  MEASURES MATCH_NUMBER() AS ms, E.an AS me, E.g AS sm PATTERN (E) DEFINE E FROM a) AS m"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, nargs="+", default=[8, 500, 2000])
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--batch", type=int, default=1_000, help="rows per Arrow batch fed to the runners")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from sql_examples.local_spark import get_spark
    import sql_ext

    spark = get_spark("sparkcep-bench-refined-keys", extra_conf={
        "spark.python.worker.reuse": "false", "spark.sql.shuffle.partitions": "1",
        "spark.executorEnv.PYTHONPATH": str(REPO)})
    sql_ext.enable(spark)
    print(f"rows={args.rows} batch={args.batch} load={os.getloadavg()[0]:.1f}", flush=True)
    print(f"{'keys':>6} {'matches':>8} {'layers CPU s':>13} {'expansion CPU s':>16}", flush=True)
    for keys in args.keys:
        rows = [("p", i, i % keys, "x" if (i // keys) % 2 == 0 else "y") for i in range(args.rows)]
        spark.createDataFrame(rows, "p string, ts int, g bigint, c string").cache().createOrReplaceTempView("t")
        results = {form: engine(spark, form, SQL, args.runs, args.batch) for form in ("layers", "expansion")}
        answers = {answer for _, answer in results.values()}
        assert len(answers) == 1, (keys, results)
        print(f"{keys:>6} {next(iter(answers))[0]:>8} {results['layers'][0]:>13.3f} {results['expansion'][0]:>16.3f}",
              flush=True)
    print(f"load={os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
