"""The V-shape as row pattern recognition in a window (R020) against MATCH_RECOGNIZE.

    PYTHONPATH=. .venv/bin/python bench/window_vshape.py [--rows 2000000] [--runs 3]

Same data and session as ``sql_vshape.py`` (its parquet is reused).  Variants, run round-robin
in one session with ``.write.format("noop")`` (times include ``spark.sql``):

* ``mr``           MATCH_RECOGNIZE, ONE ROW PER MATCH: one row per V (``sql_vshape.MR_SQL``);
* ``rows``         a Spark window function over every row (``count(*) OVER (PARTITION BY symbol
                   ORDER BY ts ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING)``): the floor of a
                   per-row answer;
* ``window``       R020, the V's end and bottom read per row (``m OVER w``): INITIAL, the rest
                   of the partition, the PREVs inside the match: MATCH_RECOGNIZE's matcher tiers;
* ``window_fn``    the same plus ``count(*) OVER w`` and ``max(price) OVER w``: Spark's window
                   functions over each V's rows (the UDTF also emits them, then a shuffle);
* ``window_seek``  ``window`` with SEEK and a frame of 50 rows: the Pike VM, PREV evaluated by
                   the engine within the frame.

Before timing, on ``--verify-rows`` rows, the rows of ``window`` that carry a match must be
``mr``'s matches.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sql_vshape  # noqa: E402

WINDOW = """
WINDOW w AS (PARTITION BY symbol ORDER BY ts
  MEASURES LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
  ROWS BETWEEN CURRENT ROW AND {end} FOLLOWING {search}
  PATTERN (STRT DOWN+ UP+)
  DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price))"""
VARIANTS = {
    "mr": sql_vshape.MR_SQL,
    "rows": "SELECT symbol, ts, count(*) OVER (PARTITION BY symbol ORDER BY ts ROWS BETWEEN CURRENT ROW AND "
            "2 FOLLOWING) AS n FROM ticks",
    "window": "SELECT symbol, ts, bottom_ts OVER w AS bottom_ts, end_ts OVER w AS end_ts FROM ticks" +
              WINDOW.format(end="UNBOUNDED", search=""),
    "window_fn": "SELECT symbol, ts, bottom_ts OVER w AS bottom_ts, end_ts OVER w AS end_ts, count(*) OVER w AS n, "
                 "max(price) OVER w AS top FROM ticks" + WINDOW.format(end="UNBOUNDED", search=""),
    "window_seek": "SELECT symbol, ts, bottom_ts OVER w AS bottom_ts, end_ts OVER w AS end_ts FROM ticks" +
                   WINDOW.format(end="50", search="SEEK"),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000, help="(100 symbols, seed 42, as sql_vshape.py's)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--verify-rows", type=int, default=200_000, help="0 skips the check")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--data-dir", default=os.environ.get("SPARKCEP_BENCH_DATA", "/tmp/sparkcep-bench-vshape"))
    args = parser.parse_args(argv)
    args.symbols, args.seed, files = 100, 42, 8

    data = Path(args.data_dir)
    path = data / f"rows{args.rows}_sym{args.symbols}_seed{args.seed}"
    rows = sql_vshape.generate(path, args.rows, args.symbols, args.seed, files)
    spark, kind = sql_vshape.session(2, None, None)
    import sql_ext

    sql_ext.enable(spark)
    print("load average at start: {:.1f} {:.1f} {:.1f}; {} rows; {}".format(*os.getloadavg(), rows, kind))
    if args.verify_rows:
        vpath = data / f"rows{args.verify_rows}_sym{args.symbols}_seed{args.seed}"
        sql_vshape.generate(vpath, args.verify_rows, args.symbols, args.seed, files)
        sql_vshape.use_table(spark, vpath)
        matches = sorted(tuple(r) for r in spark.sql(sql_vshape.MR_SQL).collect())
        per_row = sorted((r.symbol, r.ts, r.bottom_ts, r.end_ts) for r in spark.sql(VARIANTS["window"]).collect()
                         if r.end_ts is not None)
        assert per_row == matches, "R020's matches are not MATCH_RECOGNIZE's"
        print(f"verify: {len(matches):,} matches, the same per row")
    sql_vshape.use_table(spark, path)
    chosen = [v.strip() for v in args.variants.split(",") if v.strip()]
    times = {v: [] for v in chosen}
    for _ in range(args.runs):
        for v in chosen:
            times[v].append(sql_vshape.run_once(spark, VARIANTS[v])[0])
    base = statistics.median(times["mr"]) if "mr" in times else None
    for v in chosen:
        median = statistics.median(times[v])
        ratio = f"  {median / base:.2f}x mr" if base else ""
        print(f"{v:12s} median {median:6.2f} s  min {min(times[v]):6.2f} s{ratio}")
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
