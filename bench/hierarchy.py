"""Seed 002's experiments 1-3 (event hierarchies, section 6): a hierarchy of H modules of L
elements each, over one generated stream, evaluated three ways with equal answers.

    PYTHONPATH=. .venv/bin/python bench/hierarchy.py                          # the default grid
    PYTHONPATH=. .venv/bin/python bench/hierarchy.py --events 2000 --grid H=1,2 L=3 T=100 --smoke

Forms (docs/hierarchies.md, "The seed's experiment"):

* ``layers``: sparkcep's one statement, one ``LAYER`` per module below the top, evaluated in one
  pass (one UDTF: sql_ext/compiler/one_pass.py);
* ``expansion``: the same statement run as its plain-SQL expansion (``one_pass.layers`` answering
  "not covered" on the driver), one shuffle and one UDTF per layer;
* ``flat``: the equivalent single-layer pattern, the boxes substituted (``H·(L-1)+1`` elements);
* ``delta``: one plain-SQL statement per module (no LAYER syntax: the expansion written by hand,
  rows UNION ALL the lower module's events with a level column, the window a DEFINE conjunct),
  each writing a Delta table the next one reads; the top is counted, not written.

The stream (the seed's generator, table 3): ``S`` events one second apart (the seed's ``C``,
events per timestamp, is 1), a ``type`` drawn uniformly from ``K`` types and a value ``v`` in
1..100; an element is ``type = t AND v <= 70``, so an event of the right type meets the
constraint with the seed's ``P = 70 %``.  Element types cycle through the K types along the
flat pattern.  A module is ``S (R | Q)*? V2 (R | Q)*? ... VL``: its box ``S`` (the module
below's event) first, then L - 1 elements over rows with gaps (``R`` a row, ``Q`` a lower event
skipped); the lowest module has an element in place of the box.  ``AFTER MATCH SKIP TO NEXT
ROW``, standard semantics and ``WITHIN T`` seconds on every module: a match is, per start, the
earliest chain of the elements (skip-till-next-match), kept if it spans at most T.

Why this shape (where the seed is silent or the expansion restricts): the seed's SASE runs
skip-till-any-match, whose matches grow combinatorially with the window (C(W, m) per start),
too many for any engine here; WITHIN over a layer's events is evaluated for standard semantics
only (hierarchy.py), and FLINKCEP's ``->`` with the window written in DEFINE would keep every
run that missed its window alive.  With the box first, a lower event completing after the box
also starts after it (earliest chains complete in start order), so skipped ``Q`` events do not
widen a match's span; with ``SKIP TO NEXT ROW`` each start's earliest chain is a match iff the
flat pattern's is (same rows), so the forms have equal answers, which the bench asserts:
count and an order-free checksum of (start, end, sum of the elements' row numbers).

``--sensors N`` (the refined variant, rule 8: sensor_incidents' alarms per sensor): each event
has a ``sensor`` among N, and the lowest module is ``PARTITION BY sensor`` (one matcher per sensor
in the one pass), the modules above read every sensor's events; only ``layers`` and
``expansion`` run it (the flat pattern and the Delta chain do not express it).

``--engine`` (``layers`` and ``expansion`` only) times the engine alone instead: each UDTF of the
form's plan run in this process (``udtf.chunks.runner``, what the UDTF runs) over its
``TABLE(...)`` argument collected from Spark first (an expansion's upper layer's argument holds
the lower layers' UDTFs, which Spark runs to collect it), CPU seconds summed over the form's
UDTFs, best of ``--runs``; the forms' answers (through Spark) are compared.

Measured per form: wall seconds of the collect (``delta``: of all its statements), throughput
``S / seconds`` and the Python workers' peak resident set (bench/memory.py's watcher; workers
are not reused, so each task's peak is its own).  Wall-clock figures under load are rough.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.memory import PeakWatcher  # noqa: E402

FORMS = ("layers", "expansion", "flat", "delta")


class Config(NamedTuple):
    h: int  # modules (layers), the top included
    l: int  # elements per module, the box included
    t: int  # window, seconds


def types(config: Config, k: int) -> list[list[str]]:
    """Each module's raw element types, the lowest module first (L of them; L - 1 above it)."""
    names = [chr(ord("a") + j % k) for j in range(config.h * (config.l - 1) + 1)]
    return [names[:config.l]] + [names[config.l + (i - 1) * (config.l - 1):config.l + i * (config.l - 1)]
                                 for i in range(1, config.h)]


def element(t: str) -> str:
    return f"type = '{t}' AND v <= 70"


def _chain(head: str, elements: list[str], gap: str) -> str:
    return " ".join([head] + [f"{gap} V{j}" for j in range(2, len(elements) + 2)])


def layers_sql(config: Config, k: int, refined: bool = False) -> str:
    """sparkcep's statement: one LAYER per module below the top (``refined``: the lowest
    partitioned by ``sensor``)."""
    within = f"WITHIN INTERVAL '{config.t}' SECOND"
    modules = types(config, k)
    bodies = []
    for i, kinds in enumerate(modules):
        top = i == len(modules) - 1
        name, lower = f"m{i}", f"m{i - 1}"
        if i == 0:
            pattern = _chain("V1", kinds[1:], "R*?")
            define = [f"V{j + 1} AS {element(t)}" for j, t in enumerate(kinds)]
            subset = ", ".join(f"V{j + 1}" for j in range(len(kinds)))
            total = "SUM(E.k)"
        else:
            pattern = _chain("S", kinds, "(R | Q)*?")
            define = [f"S FROM {lower}", f"Q FROM {lower}"] + [f"V{j + 2} AS {element(t)}" for j, t in enumerate(kinds)]
            subset = ", ".join(f"V{j + 2}" for j in range(len(kinds)))
            total = f"S.sum_{lower} + SUM(E.k)"
        span = "MATCH_START() AS ms, MATCH_END() AS me" if i else "FIRST(ts) AS ms, LAST(ts) AS me"  # (H = 1: no layer)
        measures = f"{span}, {total} AS sm" if top else f"{total} AS sum_{name}"
        body = (f"MEASURES {measures} AFTER MATCH SKIP TO NEXT ROW PATTERN ({pattern}) {within} "
                f"SUBSET E = ({subset}) DEFINE {', '.join(define)}")
        bodies.append(body if top else f"LAYER {name} AS ({'PARTITION BY sensor ' if refined and i == 0 else ''}{body})")
    return f"SELECT * FROM stream MATCH_RECOGNIZE (ORDER BY ts {', '.join(bodies[:-1])} {bodies[-1]}) AS m"


def flat_sql(config: Config, k: int) -> str:
    """The hierarchy's boxes substituted: one pattern of H·(L-1)+1 elements."""
    kinds = [t for module in types(config, k) for t in module]
    names = [f"V{j + 1}" for j in range(len(kinds))]
    return ("SELECT * FROM stream MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(ts) AS ms, LAST(ts) AS me, "
            f"SUM(E.k) AS sm AFTER MATCH SKIP TO NEXT ROW PATTERN ({_chain('V1', kinds[1:], 'R*?')}) "
            f"WITHIN INTERVAL '{config.t}' SECOND SUBSET E = ({', '.join(names)}) "
            f"DEFINE {', '.join(f'{n} AS {element(t)}' for n, t in zip(names, kinds))}) AS m")


def delta_sql(config: Config, k: int, table: str) -> list[str]:
    """One plain-SQL statement per module, lowest first; each but the top reads the table of the
    one below (``table.format(i)``, Delta) and is written to its own."""
    within = f"INTERVAL '{config.t}' SECOND"
    modules = types(config, k)
    statements = []
    for i, kinds in enumerate(modules):
        top = i == len(modules) - 1
        if i == 0:
            measures = "FIRST(ts) AS ms, LAST(ts) AS me, SUM(E.k) AS sm" if top else \
                "FIRST(ts) AS e_start, LAST(ts) AS e_end, MATCH_NUMBER() AS e_number, SUM(E.k) AS e_sum"
            statements.append(
                f"SELECT * FROM stream MATCH_RECOGNIZE (ORDER BY ts MEASURES {measures} AFTER MATCH SKIP TO NEXT ROW "
                f"PATTERN ({_chain('V1', kinds[1:], 'R*?')}) WITHIN {within} "
                f"SUBSET E = ({', '.join(f'V{j + 1}' for j in range(len(kinds)))}) "
                f"DEFINE {', '.join(f'V{j + 1} AS {element(t)}' for j, t in enumerate(kinds))}) AS m")
            continue
        window = f"MAX(ev_end) <= MIN(ev_start) + {within}"
        union = ("SELECT ts AS ev_start, ts AS ev_end, 0 AS lvl, CAST(0 AS BIGINT) AS mn, type, v, k, "
                 "CAST(NULL AS BIGINT) AS sm FROM stream UNION ALL "
                 "SELECT e_start, e_end, 1, e_number, CAST(NULL AS STRING), CAST(NULL AS INT), CAST(NULL AS BIGINT), "
                 f"e_sum FROM delta.`{table.format(i - 1)}`")
        measures = ("MIN(ev_start) AS ms, MAX(ev_end) AS me, S.sm + SUM(E.k) AS sm" if top else
                    "MIN(ev_start) AS e_start, MAX(ev_end) AS e_end, MATCH_NUMBER() AS e_number, "
                    "S.sm + SUM(E.k) AS e_sum")
        define = [f"S AS lvl = 1 AND {window}", f"Q AS lvl = 1 AND {window}", f"R AS lvl = 0 AND {window}"] + \
            [f"V{j + 2} AS lvl = 0 AND {element(t)} AND {window}" for j, t in enumerate(kinds)]
        statements.append(
            f"SELECT * FROM ({union}) MATCH_RECOGNIZE (ORDER BY ev_end, lvl, mn MEASURES {measures} "
            f"AFTER MATCH SKIP TO NEXT ROW PATTERN ({_chain('S', kinds, '(R | Q)*?')}) "
            f"SUBSET E = ({', '.join(f'V{j + 2}' for j in range(len(kinds)))}) DEFINE {', '.join(define)}) AS m")
    return statements


def engine(spark, form: str, statement: str, runs: int, batch: int = 10_000) -> tuple[float, list]:
    """(CPU seconds of the engine alone over the form's UDTFs, fed ``batch``-row Arrow batches,
    best of ``runs``; the statement's answer through Spark) - see the module docstring, ``--engine``."""
    import itertools
    import re

    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    import sql_ext
    from bench.sql_vshape import table_argument
    from sql_ext.spark.catalog import REGISTERED
    from udtf.chunks import runner

    with expansion() if form == "expansion" else contextlib.nullcontext():
        text = sql_ext.transpile(statement, spark)
    names = list(dict.fromkeys(re.findall(r"sparkcep_mr_[0-9a-f]{16}", text)))
    best = 0.0
    for name in names:
        plan, output = REGISTERED[name]
        argument = table_argument(text, name)
        batches = spark.sql(f"SELECT * FROM {argument[len('TABLE'):]}").toArrow().to_batches(batch)
        schema = to_arrow_schema(StructType.fromJson({"type": "struct", "fields": [
            {"name": f.name, "type": json.loads(f.json), "nullable": True, "metadata": {}} for f in output]}),
            timezone="UTC")
        times = []
        for _ in range(runs):
            began = time.process_time()
            engine_runner = runner(plan, schema)
            for _ in itertools.chain((b for chunk in batches for b in engine_runner.feed(chunk)),
                                     engine_runner.finish()):
                pass
            times.append(time.process_time() - began)
        best += min(times)
    with expansion() if form == "expansion" else contextlib.nullcontext():  # (the answer, through Spark)
        answer = spark.sql(ANSWER.format(statement)).collect()[0]
    return best, (answer.matches, answer.checksum)


ANSWER = ("SELECT count(*) AS matches, coalesce(sum(pmod(xxhash64(ms, me, sm), 4294967291)), 0) AS checksum "
          "FROM ({}) AS a")


def stream(events: int, k: int, seed: int, sensors: int = 0) -> list[tuple]:
    rng = random.Random(seed)
    return [(j, chr(ord("a") + rng.randrange(k)), rng.randint(1, 100), rng.randrange(max(sensors, 1)))
            for j in range(events)]


@contextlib.contextmanager
def expansion():
    """Statements with LAYERs planned as their expansion (the one pass covering none)."""
    from sql_ext.compiler import one_pass

    real = one_pass.layers
    one_pass.layers = lambda *args, **kwargs: None
    try:
        yield
    finally:
        one_pass.layers = real


class Result(NamedTuple):
    seconds: float
    peak_mib: float
    answer: tuple


def run(spark, form: str, config: Config, k: int, scratch: Path, refined: bool = False) -> Result:
    watcher = PeakWatcher()
    watcher.start()
    began = time.time()
    if form == "delta":
        table = str(scratch / f"h{config.h}-l{config.l}-t{config.t}-m{{}}")
        *lower, top = delta_sql(config, k, table)
        for i, statement in enumerate(lower):
            spark.sql(statement).write.format("delta").mode("overwrite").save(table.format(i))
        answer = spark.sql(ANSWER.format(top)).collect()[0]
    else:
        statement = flat_sql(config, k) if form == "flat" else layers_sql(config, k, refined)
        with expansion() if form == "expansion" else contextlib.nullcontext():
            answer = spark.sql(ANSWER.format(statement)).collect()[0]
    seconds = time.time() - began
    watcher.stop.set()
    watcher.join()
    return Result(seconds, watcher.peak / 1024, (answer.matches, answer.checksum))


def grid(specs: list[str]) -> list[Config]:
    """``H=1,2,3 L=3 T=100`` -> every combination."""
    values = {"H": [1, 2, 3, 4, 5], "L": [3], "T": [100]}
    for spec in specs:
        key, _, listed = spec.partition("=")
        values[key.upper()] = [int(x) for x in listed.split(",")]
    return [Config(h, l, t) for h in values["H"] for l in values["L"] for t in values["T"]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=5000, help="S, the stream's length")
    parser.add_argument("--types", type=int, default=3, help="K, the event types")
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--grid", nargs="+", default=[], help="H=.. L=.. T=.. (comma lists; default H=1-5 L=3 T=100)")
    parser.add_argument("--forms", nargs="+", choices=FORMS, default=list(FORMS))
    parser.add_argument("--smoke", action="store_true", help="check equal answers only (no timing table)")
    parser.add_argument("--engine", action="store_true", help="the engine alone, CPU s (layers, expansion)")
    parser.add_argument("--runs", type=int, default=3, help="with --engine: best of")
    parser.add_argument("--sensors", type=int, default=0, help="the refined variant: N sensors, the lowest module per sensor")
    args = parser.parse_args()
    if (args.sensors or args.engine) and set(args.forms) - {"layers", "expansion"}:
        parser.error("--sensors and --engine run the forms layers and expansion only")

    from sql_examples.local_spark import get_spark

    import sql_ext

    spark = get_spark("sparkcep-bench-hierarchy", extra_conf={
        "spark.python.worker.reuse": "false", "spark.sql.shuffle.partitions": "1",
        "spark.executorEnv.PYTHONPATH": str(REPO)})
    sql_ext.enable(spark)
    spark.createDataFrame(stream(args.events, args.types, args.seed, args.sensors), "k BIGINT, type STRING, v INT, sensor INT") \
        .selectExpr("timestamp_seconds(k) AS ts", "k", "type", "v", "sensor").cache().createOrReplaceTempView("stream")
    spark.table("stream").count()
    scratch = Path(tempfile.mkdtemp(prefix="sparkcep-bench-hierarchy-"))
    try:
        print(f"S={args.events} K={args.types} seed={args.seed} sensors={args.sensors} "
              f"load={os.getloadavg()[0]:.1f}", flush=True)
        if args.engine:
            print(f"{'H':>2} {'L':>2} {'T':>4} {'matches':>8}" + "".join(f" {f + ' CPU s':>15}" for f in args.forms),
                  flush=True)
            for config in grid(args.grid):
                statement = layers_sql(config, args.types, args.sensors > 0)
                results = {form: engine(spark, form, statement, args.runs) for form in args.forms}
                answers = {answer for _, answer in results.values()}
                assert len(answers) == 1, (config, results)
                print(f"{config.h:>2} {config.l:>2} {config.t:>4} {next(iter(answers))[0]:>8}" +
                      "".join(f" {cpu:>15.3f}" for cpu, _ in results.values()), flush=True)
            print(f"load={os.getloadavg()[0]:.1f}")
            return
        print(f"{'H':>2} {'L':>2} {'T':>4} {'matches':>8}" +
              "".join(f" {f + ' s':>9} {f + ' ev/s':>11} {f + ' MiB':>10}" for f in args.forms), flush=True)
        for form in args.forms:  # warm-up, untimed: the first statements pay the JVM's and Delta's start
            run(spark, form, Config(2, 3, 100), args.types, scratch, args.sensors > 0)
        for config in grid(args.grid):
            results = {form: run(spark, form, config, args.types, scratch, args.sensors > 0) for form in args.forms}
            answers = {r.answer for r in results.values()}
            assert len(answers) == 1, (config, {f: r.answer for f, r in results.items()})
            matches = next(iter(answers))[0]
            print(f"{config.h:>2} {config.l:>2} {config.t:>4} {matches:>8}" + "".join(
                f" {r.seconds:>9.2f} {args.events / r.seconds:>11.0f} {r.peak_mib:>10.0f}" for r in results.values())
                + ("  (equal answers)" if args.smoke else ""), flush=True)
        print(f"load={os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
