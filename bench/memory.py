"""Peak memory of the UDTF's Python worker on one partition of growing size.

    PYTHONPATH=. .venv/bin/python bench/memory.py                   # 10M 50M 100M rows
    PYTHONPATH=. .venv/bin/python bench/memory.py --rows 1000000 5000000 --shape masks

One partition (no PARTITION BY) of ``range(N)`` with ``x = id % 3`` runs ``PATTERN (A B+)``,
ONE ROW PER MATCH (a match per three rows), with B's condition reading the match state
(``--shape state``, the Pike VM) or a mask only (``--shape masks``, the run-length tier).
The Python workers' peak resident set (VmHWM, polled from /proc) is reported per size: it
must not grow with N (the runner releases the rows no live run can read).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import threading
import time

SHAPES = {"state": "x > 0 AND B.id > A.id", "masks": "x > 0"}


def query(n: int, define_b: str) -> str:
    return f"""
        SELECT count(*) AS matches, sum(s) AS checksum FROM (SELECT id, id % 3 AS x FROM range({n}))
        MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(A.id) AS s, COUNT(*) AS c
                         ONE ROW PER MATCH PATTERN (A B+) DEFINE A AS x = 0, B AS {define_b}) AS m"""


def python_workers() -> list[int]:
    """Pids of the pyspark Python workers (and their daemon) on this machine."""
    pids = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"pyspark.daemon" in cmdline or b"pyspark.worker" in cmdline:
                pids.append(int(entry.name))
    return pids


def peak_kib(pid: int) -> int:
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class PeakWatcher(threading.Thread):
    """Polls the workers' peak RSS until stopped; ``peak`` is the largest one seen, in KiB."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak, self.stop = 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            for pid in python_workers():
                self.peak = max(self.peak, peak_kib(pid))
            time.sleep(0.2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 50_000_000, 100_000_000])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="state")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", os.path.abspath(".venv/bin/python"))
    from pyspark.sql import SparkSession

    import sql_ext

    spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "4g")
             .config("spark.python.worker.reuse", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    sql_ext.enable(spark)
    print(f"shape={args.shape}  (B AS {SHAPES[args.shape]})")
    print(f"{'rows':>12} {'matches':>10} {'seconds':>8} {'peak worker RSS MiB':>20}")
    for n in args.rows:
        watcher = PeakWatcher()
        watcher.start()
        began = time.time()
        matches, checksum = spark.sql(query(n, SHAPES[args.shape])).collect()[0]
        elapsed = time.time() - began
        watcher.stop.set()
        watcher.join()
        expected = (n + 2) // 3 if n % 3 != 1 else n // 3  # an A on the last row has no B
        assert matches == expected, (matches, expected)
        print(f"{n:>12,} {matches:>10,} {elapsed:>8.0f} {watcher.peak / 1024:>20.0f}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
