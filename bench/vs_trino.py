"""sparkcep against a live Trino 476 on the same rows, query shape by query shape.

    python bench/vs_trino.py [--rows 2000000] [--symbols 100] [--growth 2000,4000,8000,16000]
                          [--shapes vshape_one,...] [--runs 1] [--timeout 900] [--conf KEY=VALUE]

Both engines generate the same rows themselves, from the same integer formulas (no data is
moved between them): ``sym = n % symbols``, ``ts = n div symbols``, a pseudo-random step of +-1
from a linear congruential hash of (sym, ts), ``price = 100 + running sum of the steps`` per
symbol, ``x = hash % 10`` (never negative).  Spark caches its table; Trino keeps it in the
memory connector.

Each query runs wrapped in ``SELECT count(*), sum(..), sum(..) FROM (query)``, so both engines
compute every output row and the answers are compared (they must be equal, or the script
fails).  Times are wall clock of that statement (sparkcep: ``spark.sql`` including the rewrite,
then ``collect``; Trino: execute and fetch), best of ``--runs``, the engines' runs interleaved.
The ratio is sparkcep / Trino.
For the shapes (not the growth series) ``floor`` is Spark's own part of sparkcep's plan: a
no-op Arrow UDTF over sparkcep's exact ``TABLE(...)`` argument (shuffle, sort, the rows to
Python; for ALL ROWS PER MATCH it returns them all: their trip back), timed the same way;
``floor/Trino`` bounds the ratio any engine running inside that UDTF could reach.

Shapes (SHAPES): the V-shape with ONE and ALL ROWS PER MATCH (masks only), the V-shape with
STRT.price / FIRST(STRT.price) in DEFINE, a running AVG in DEFINE, a reluctant ``A+? B`` waiting
for a rare B; and the growth series, one partition of 2k, 4k, 8k, 16k rows where nothing
matches (the last element never holds): ``A+ B``, ``(A|A)* B``, ``A+ B`` with SUM(A.x) in
DEFINE, ``A B+ C`` with FIRST(A.x) in DEFINE.  The growth factor is time(2n) / time(n).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "trino"))

V_SHAPE = """SELECT * FROM {table} MATCH_RECOGNIZE (
  PARTITION BY sym ORDER BY ts
  MEASURES STRT.ts AS s, LAST(DOWN.ts) AS b, LAST(UP.ts) AS e
  {rows} AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE {define}) AS m"""
MASKS = "DOWN AS price < PREV(price), UP AS price > PREV(price)"
SHAPES = {
    "vshape_one": (V_SHAPE.format(table="{table}", rows="ONE ROW PER MATCH", define=MASKS), "s", "e"),
    "vshape_all": (V_SHAPE.format(table="{table}", rows="ALL ROWS PER MATCH", define=MASKS), "ts", "e"),
    "vshape_first": (V_SHAPE.format(table="{table}", rows="ONE ROW PER MATCH",
                                    define="UP AS price > PREV(price) AND price - STRT.price <= 6, "
                                           "DOWN AS price < PREV(price) AND price > FIRST(STRT.price)"),
                     "s", "e"),
    "running_avg": ("""SELECT * FROM {table} MATCH_RECOGNIZE (
  PARTITION BY sym ORDER BY ts MEASURES FIRST(S.ts) AS s, LAST(B.ts) AS e
  PATTERN (S A+ B)
  DEFINE A AS price >= S.price AND AVG(A.price) < S.price + 3, B AS price < S.price) AS m""", "s", "e"),
    "reluctant_rare": ("""SELECT * FROM {table} MATCH_RECOGNIZE (
  PARTITION BY sym ORDER BY ts MEASURES FIRST(A.ts) AS s, LAST(B.ts) AS e
  PATTERN (A+? B)
  DEFINE B AS x = 0 AND price % 50 = 0) AS m""", "s", "e"),
}
GROWTH = {
    "grow_plus": ("PATTERN (A+ B) DEFINE B AS x < 0", "s", "e"),
    "grow_alt": ("PATTERN ((A | A)* B) DEFINE B AS x < 0", "s", "e"),
    "grow_sum": ("PATTERN (A+ B) DEFINE A AS SUM(A.x) >= 0, B AS x < 0", "s", "e"),
    "grow_first": ("PATTERN (A B+ C) DEFINE B AS x >= FIRST(A.x) - 9, C AS x < 0", "s", "e"),
}
GROWTH_QUERY = """SELECT * FROM {table} MATCH_RECOGNIZE (
  ORDER BY ts MEASURES FIRST(A.ts) AS s, LAST(B.ts) AS e
  {body}) AS m"""


def wrapped(query: str, first: str, second: str) -> str:
    return f"SELECT count(*) AS n, sum({first}) AS a, sum({second}) AS b FROM ({query}) q"


def spark_rows(rows: int, symbols: int) -> str:
    return f"""SELECT sym, ts, 100 + SUM(step) OVER (PARTITION BY sym ORDER BY ts ROWS UNBOUNDED PRECEDING) AS price,
       CAST(h % 10 AS INT) AS x
FROM (SELECT sym, ts, h, IF((h DIV 65536) % 2 = 0, 1, -1) AS step
      FROM (SELECT CAST(id % {symbols} AS INT) AS sym, id DIV {symbols} AS ts,
                   (id DIV {symbols} * 1103515245 + (id % {symbols}) * 12345 + 12345) % 2147483648 AS h
            FROM range({rows})))"""


def trino_rows(rows: int, symbols: int) -> str:
    outer = -(-rows // 1000)
    return f"""SELECT sym, ts, 100 + SUM(step) OVER (PARTITION BY sym ORDER BY ts ROWS UNBOUNDED PRECEDING) AS price,
       CAST(h % 10 AS INTEGER) AS x
FROM (SELECT sym, ts, h, IF((h / 65536) % 2 = 0, 1, -1) AS step
      FROM (SELECT CAST(n % {symbols} AS INTEGER) AS sym, n / {symbols} AS ts,
                   (n / {symbols} * 1103515245 + (n % {symbols}) * 12345 + 12345) % 2147483648 AS h
            FROM (SELECT i * 1000 + j AS n
                  FROM UNNEST(sequence(0, {outer - 1})) AS a(i) CROSS JOIN UNNEST(sequence(0, 999)) AS b(j))
            WHERE n < {rows}))"""


class Spark:
    def __init__(self, cores: int):
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
        from pyspark.sql import SparkSession

        import sql_ext
        self.spark = (SparkSession.builder.master(f"local[{cores}]").appName("sparkcep-bench-trino")
                      .config("spark.driver.memory", "6g").config("spark.sql.shuffle.partitions", str(cores * 2))
                      .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                      .config("spark.sql.session.timeZone", "UTC").getOrCreate())
        self.spark.sparkContext.setLogLevel("ERROR")
        sql_ext.enable(self.spark)

    def load(self, name: str, rows: int, symbols: int):
        df = self.spark.sql(spark_rows(rows, symbols))
        df = df.repartition(max(1, min(symbols, 8)), "sym").cache()
        df.count()
        df.createOrReplaceTempView(name)

    def run(self, sql: str):
        return tuple(self.spark.sql(sql).collect()[0])

    def floor_sql(self, sql: str) -> str:
        """A count over a no-op Arrow UDTF fed sparkcep's exact TABLE argument for ``sql``; for
        ALL ROWS PER MATCH the UDTF returns every row it is given (the rows' trip back)."""
        import pyarrow as pa
        from pyspark.sql.functions import arrow_udtf

        import sql_ext
        from sql_vshape import table_argument

        rewritten = sql_ext.transpile(sql, self.spark)
        argument = table_argument(rewritten, re.search(r"sparkcep_mr_\w+", rewritten).group(0))
        if "ALL ROWS PER MATCH" not in sql:
            @arrow_udtf(returnType="n long")
            class Noop:
                def eval(self, batch):
                    yield pa.table({"n": pa.array([batch.num_rows], pa.int64())})

            self.spark.udtf.register("bench_floor_noop", Noop)
            return f"SELECT sum(n) FROM bench_floor_noop({argument})"
        schema = self.spark.sql(f"SELECT * FROM {argument[len('TABLE'):]}").schema

        @arrow_udtf(returnType=schema)
        class Echo:
            def eval(self, batch):
                yield pa.Table.from_batches([batch])

        self.spark.udtf.register("bench_floor_echo", Echo)
        return f"SELECT count(*) FROM bench_floor_echo({argument})"


class Trino:
    def __init__(self, server):
        self.conn = server.connect()

    def load(self, name: str, rows: int, symbols: int):
        self.execute(f"DROP TABLE IF EXISTS memory.default.{name}")
        self.execute(f"CREATE TABLE memory.default.{name} AS {trino_rows(rows, symbols)}")

    def execute(self, sql: str):
        cur = self.conn.cursor()
        cur.execute(sql)
        return cur.fetchall()

    def run(self, sql: str):
        return tuple(self.execute(sql.replace("FROM t_", "FROM memory.default.t_"))[0])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--symbols", type=int, default=100)
    parser.add_argument("--growth", default="2000,4000,8000,16000")
    parser.add_argument("--shapes", default=",".join([*SHAPES, *GROWTH]))
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=900.0, help="Trino statement limit, seconds")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="Spark session conf (repeatable), e.g. spark.sql.execution.arrow.maxBytesPerBatch=64m")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    wanted = args.shapes.split(",")
    from server import TrinoServer

    spark = Spark(args.cores)
    for key, value in (kv.split("=", 1) for kv in args.conf):
        spark.spark.conf.set(key, value)
    results = []
    print(f"load average at start: {os.getloadavg()[0]:.1f}; {args.rows:,} rows, {args.symbols} symbols")
    with TrinoServer(heap="6G", query_memory="4GB") as server:
        trino = Trino(server)
        trino.execute(f"SET SESSION query_max_execution_time = '{int(args.timeout)}s'")
        if any(s in SHAPES for s in wanted):
            spark.load("t_ticks", args.rows, args.symbols)
            trino.load("t_ticks", args.rows, args.symbols)
        for name in (s for s in wanted if s in SHAPES):
            query, first, second = SHAPES[name]
            sql = wrapped(query.format(table="t_ticks"), first, second)
            results.append(measure(name, sql, spark, trino, args, spark.floor_sql(sql)))
        sizes = [int(n) for n in args.growth.split(",") if n]
        for n in sizes:
            if not any(s in GROWTH for s in wanted):
                break
            spark.load(f"t_grow{n}", n, 1)
            trino.load(f"t_grow{n}", n, 1)
        for name in (s for s in wanted if s in GROWTH):
            body, first, second = GROWTH[name]
            previous = None
            for n in sizes:
                sql = wrapped(GROWTH_QUERY.format(table=f"t_grow{n}", body=body), first, second)
                result = measure(f"{name} {n}", sql, spark, trino, args)
                if previous is not None:
                    result["growth_sparkcep"] = result["sparkcep_s"] / previous["sparkcep_s"]
                    if result["trino_s"] and previous["trino_s"]:
                        result["growth_trino"] = result["trino_s"] / previous["trino_s"]
                    print(f"    growth x{n // (n // 2)}: sparkcep {result['growth_sparkcep']:.2f}, "
                          f"trino {result.get('growth_trino', float('nan')):.2f}")
                previous = result
                results.append(result)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 1 if any(r["answer"] == "DIFFERENT" for r in results) else 0


def measure(name: str, sql: str, spark: Spark, trino: Trino, args, floor_sql: str | None = None) -> dict:
    """Best of ``args.runs`` for sparkcep, Trino and (given ``floor_sql``) Spark's floor, the
    runs interleaved so that whatever else the machine does at a moment weighs on all of them;
    Trino stops after a run over ``args.timeout`` or a failed statement."""
    runs = {"sparkcep": lambda: spark.run(sql), "trino": lambda: trino.run(sql)}
    if floor_sql is not None:
        runs["floor"] = lambda: spark.run(floor_sql)
    best, answers = {}, {}
    for _ in range(args.runs):
        for engine, fn in list(runs.items()):
            start = time.perf_counter()
            try:
                answers[engine] = fn()
            except Exception as e:
                if engine != "trino":  # (a Trino statement may exceed its time limit)
                    raise
                answers[engine] = f"error: {str(e).splitlines()[0][:120]}"
                best.pop(engine, None)
                del runs[engine]
                continue
            elapsed = time.perf_counter() - start
            best[engine] = min(best.get(engine, elapsed), elapsed)
            if engine == "trino" and elapsed > args.timeout:
                del runs[engine]
    mine, mine_answer = best["sparkcep"], answers["sparkcep"]
    theirs, theirs_answer = best.get("trino"), answers["trino"]
    if theirs is None:
        same = "not compared"
    else:
        same = "same" if [str(v) for v in mine_answer] == [str(v) for v in theirs_answer] else "DIFFERENT"
    ratio = mine / theirs if theirs else float("nan")
    print(f"{name:22} sparkcep {mine:8.2f}s  trino {theirs if theirs else float('nan'):8.2f}s  "
          f"ratio {ratio:5.2f}  answer {same} {mine_answer}" + ("" if same == "same" else f" vs {theirs_answer}"),
          flush=True)
    result = {"shape": name, "sparkcep_s": mine, "trino_s": theirs, "ratio": ratio,
              "answer": same, "sparkcep_answer": [str(v) for v in mine_answer],
              "trino_answer": theirs_answer if isinstance(theirs_answer, str) else [str(v) for v in theirs_answer]}
    if "floor" in best:
        result["floor_s"] = best["floor"]
        if theirs:
            result["floor_ratio"] = best["floor"] / theirs
        print(f"{'':22} floor    {best['floor']:8.2f}s  floor/trino {result.get('floor_ratio', float('nan')):5.2f}",
              flush=True)
    return result


if __name__ == "__main__":
    sys.exit(main())
