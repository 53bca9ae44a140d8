"""Two checkouts' sparkcep on bench/vs_trino.py's shapes, each in its own SparkSession, runs interleaved.

    python bench/ab.py --against CHECKOUT [--shapes vshape_one,...] [--runs 6] [--rows 2000000]
                       [--symbols 100] [--cores 2]

A before / after check of a change: this checkout and ``CHECKOUT`` (e.g. a ``git worktree`` of
the commit before) each run in a child process with its own local SparkSession and cached
ticker table (vs_trino.py's rows and queries, wrapped in the same checksum), and the runs
alternate (this, other, this, other, ...), so that whatever else the machine does weighs on
both.  vs_trino.py's own before / after figures come from two runs one after the other, in
which the load of a shared machine can change by a factor of two; here both sides share each
moment.  Prints, per shape, the minimum and the median of each side and every run; the
answers must be equal.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(rows: int, symbols: int, cores: int) -> None:
    """One side, run in its checkout (the working directory), with that checkout's vs_trino.py
    (which puts its checkout first on the paths of the driver and the workers): read shape names
    from stdin, answer '<seconds> <answer>' for each."""
    sys.path.insert(0, str(Path.cwd() / "bench"))
    from vs_trino import SHAPES, Spark, wrapped

    spark = Spark(cores)
    spark.load("t_ticks", rows, symbols)
    print("ready", flush=True)
    for line in sys.stdin:
        query, first, second = SHAPES[line.strip()]
        sql = wrapped(query.format(table="t_ticks"), first, second)
        start = time.perf_counter()
        answer = spark.run(sql)
        print(f"{time.perf_counter() - start:.4f} {'/'.join(map(str, answer))}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, metavar="CHECKOUT", help="the other checkout")
    parser.add_argument("--shapes", default="vshape_one,vshape_all,vshape_first,running_avg")
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--symbols", type=int, default=100)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.rows, args.symbols, args.cores)
        return 0
    sides = {"this": HERE.parent, "other": Path(args.against).resolve()}
    children = {}
    for name, checkout in sides.items():
        children[name] = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--child", "--against", "-", "--rows",
             str(args.rows), "--symbols", str(args.symbols), "--cores", str(args.cores)],
            cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout), "PYSPARK_PYTHON": sys.executable},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if children[name].stdout.readline().strip() != "ready":
            raise SystemExit(f"the {name} side ({checkout}) did not start")
    print(f"this {sides['this']}, other {sides['other']}; load average at start {os.getloadavg()[0]:.1f}")
    differ = False
    for shape in args.shapes.split(","):
        times, answers = {name: [] for name in children}, {}
        for _ in range(args.runs):
            for name, side in children.items():
                side.stdin.write(shape + "\n")
                side.stdin.flush()
                seconds, answers[name] = side.stdout.readline().split()
                times[name].append(float(seconds))
        for name in children:
            print(f"{shape:13} {name:5} min {min(times[name]):6.2f} s  median {statistics.median(times[name]):6.2f} s"
                  f"  | {' '.join(f'{t:.2f}' for t in times[name])}", flush=True)
        ratio = min(times["this"]) / min(times["other"]), statistics.median(times["this"]) / statistics.median(times["other"])
        same = answers["this"] == answers["other"]
        differ |= not same
        print(f"{shape:13} this/other: min {ratio[0]:.2f}, median {ratio[1]:.2f}; answers "
              + ("same" if same else f"DIFFERENT {answers['this']} != {answers['other']}"), flush=True)
    print(f"load average at end {os.getloadavg()[0]:.1f}")
    for side in children.values():
        side.stdin.close()
        side.wait()
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
