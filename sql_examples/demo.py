"""The sparkcep demo: ``make demo`` (= ``python -m sql_examples.demo``).

1. starts a local Spark with Delta (``local_spark.get_spark``) and enables sparkcep;
2. generates the example data (``sql_examples/data.py``, fixed seeds) into Delta tables;
3. runs every ``sql_examples/*.sql`` through ``spark.sql`` and writes each result to the
   Delta table ``match_<file name>``, printing rows, seconds and the first rows;
4. runs ``web_funnel.sql`` incrementally in two steps (initial load, then an append with
   late rows) and checks that the result equals a full re-run;
5. runs ``streaming.py``: the fraud query live on Structured Streaming (``sql_ext.stream``,
   Delta in, Delta out, an available-now trigger) and checks it against the batch query;
6. runs the Spark Declarative Pipeline in ``sql_examples/pipeline`` with ``spark-pipelines``
   (``sdp.py``: a streaming table and materialized views over the Delta stock ticks, one of
   them MATCH_RECOGNIZE) and checks the view against the same query run here;
7. runs the dbt project in ``sql_examples/dbt`` in-process (``dbt_run.py``, ``dbt run``).

Spark logs warnings that are real problems only (``sql_ext/spark/log4j2.properties``).

All tables are external Delta tables under ``--output`` (default
``<repo>/.spark-warehouse/demo``) written with overwrite semantics, so running the demo
again gives the same tables (a new Delta version each, never duplicated rows).  The
dbt models are managed tables of the session's own temporary warehouse.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
DEFAULT_OUTPUT = REPO_ROOT / ".spark-warehouse" / "demo"


def example_files() -> list[Path]:
    return sorted(HERE.glob("*.sql"))


def read_sql(path: Path) -> str:
    return path.read_text().strip().rstrip(";").strip()


def result_table(path: Path) -> str:
    return f"match_{path.stem}"


def run_example(spark, path: Path, location_root=None):
    """Run one example file and overwrite its result table; returns (table, seconds)."""
    from .data import save_delta

    started = time.time()
    table = result_table(path)
    df = spark.sql(read_sql(path))
    save_delta(df, table, None if location_root is None else f"{location_root}/{table}")
    return table, time.time() - started


def _value(v) -> str:
    if v is None:
        return "NULL"
    if hasattr(v, "isoformat"):
        return v.isoformat(sep=" ") if hasattr(v, "hour") else v.isoformat()
    return str(v)


def summarize(spark, table: str, n: int = 3, width: int = 160) -> tuple[int, list[str]]:
    """Row count of ``table`` and its first ``n`` rows (sorted on all columns), one compact
    line each.  One Spark job: the example results are small, so they are collected."""
    df = spark.table(table)
    rows = df.orderBy(*df.columns).collect()
    lines = []
    for row in rows[:n]:
        line = " ".join(f"{k}={_value(v)}" for k, v in row.asDict().items())
        lines.append(line if len(line) <= width else line[: width - 3] + "...")
    return len(rows), lines


def _say(text: str = ""):
    print(text, flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sql_examples.demo", description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT), help="folder for the Delta tables")
    parser.add_argument("--only", nargs="*", help="example names (file stems) to run")
    parser.add_argument("--rows", type=int, default=3, help="rows to print per example")
    parser.add_argument("--no-incremental", action="store_true")
    parser.add_argument("--no-streaming", action="store_true")
    parser.add_argument("--no-pipeline", action="store_true")
    parser.add_argument("--no-dbt", action="store_true")
    args = parser.parse_args(argv)

    begin = time.time()
    from . import data
    from .local_spark import get_spark

    out = Path(args.output).resolve()
    _say(f"== sparkcep demo: Delta tables under {out}")
    spark = get_spark(app_name="sparkcep-demo")
    import sql_ext

    sql_ext.enable(spark)
    _say(f"   Spark {spark.version} ready in {time.time() - begin:.1f} s")

    started = time.time()
    counts = data.write_tables(spark, location_root=out / "data")
    _say(f"== data ({time.time() - started:.1f} s): "
         + ", ".join(f"{name} {rows}" for name, rows in counts.items()))

    files = [p for p in example_files() if not args.only or p.stem in args.only]
    _say(f"== {len(files)} examples")
    failures = []
    for i, path in enumerate(files, 1):
        try:
            table, seconds = run_example(spark, path, out / "matches")
            rows, lines = summarize(spark, table, args.rows)
        except Exception as e:  # report and go on with the other examples
            failures.append(path.stem)
            _say(f"[{i}/{len(files)}] {path.stem:<24} FAILED: {str(e).splitlines()[0][:300]}")
            continue
        _say(f"[{i}/{len(files)}] {path.stem:<24} {rows:>6} rows {seconds:6.1f} s  -> {table}")
        for line in lines:
            _say(f"      {line}")

    if not args.no_incremental:
        from .incremental import demo_two_steps

        started = time.time()
        _say("== incremental web_funnel.sql: initial load, then an append (with late rows)")
        try:
            report = demo_two_steps(spark, out / "incremental")
            for step in report["steps"]:
                _say(f"      {step}")
            verdict = "equal" if report["equal"] else "DIFFERENT"
            _say(f"      incremental result {verdict} to a full re-run "
                 f"({report['incremental_rows']} vs {report['full_rows']} matches) "
                 f"in {time.time() - started:.1f} s")
            if not report["equal"]:
                failures.append("incremental")
        except Exception as e:
            failures.append("incremental")
            _say(f"      FAILED: {str(e).splitlines()[0][:300]}")

    if not args.no_streaming:
        from .streaming import demo_streaming

        started = time.time()
        _say("== streaming: the fraud query on a Delta stream (sql_ext.stream) into a Delta table")
        try:
            report = demo_streaming(spark, out / "streaming")
            verdict = "equal" if report["equal"] else "DIFFERENT"
            _say(f"      {report['events']} events in {report['micro_batches']} micro-batches -> "
                 f"{report['alerts']} alerts, {verdict} to the batch query's {report['batch_alerts']}, "
                 f"in {time.time() - started:.1f} s")
            for row in report["first"]:
                _say(f"      {' '.join(_value(v) for v in row)}")
            if not report["equal"]:
                failures.append("streaming")
        except Exception as e:
            failures.append("streaming")
            _say(f"      FAILED: {str(e).splitlines()[0][:300]}")

    if not args.no_pipeline:
        from .sdp import run_pipeline

        started = time.time()
        _say("== Spark Declarative Pipeline (sql_examples/pipeline, spark-pipelines run): ticks -> rallies")
        try:
            report = run_pipeline(spark, out / "pipeline", str(out / "data" / "stock_ticks"))
            if not report["ok"]:
                failures.append("pipeline")
                _say("      FAILED:")
                for line in report["log"]:
                    _say(f"      | {line[:300]}")
            else:
                verdict = "equal" if report["equal"] else "DIFFERENT"
                _say(f"      " + ", ".join(f"{name} {rows} rows" for name, rows in report["rows"].items())
                     + f"; rallies {verdict} to the query run here, in {time.time() - started:.1f} s")
                for row in report["top"]:
                    _say(f"      {' '.join(_value(v) for v in row)}")
                if not report["equal"]:
                    failures.append("pipeline")
        except Exception as e:
            failures.append("pipeline")
            _say(f"      FAILED: {str(e).splitlines()[0][:300]}")

    if not args.no_dbt:
        started = time.time()
        _say("== dbt run (sql_examples/dbt: stg_sensor_readings -> alarms -> incidents)")
        try:
            from .dbt_run import run_dbt

            result = run_dbt(spark, ["run", "--quiet"])
            ok = result.success
            _say(f"      dbt {'succeeded' if ok else 'FAILED'} in {time.time() - started:.1f} s")
            for table in ("sparkcep_dbt.alarms", "sparkcep_dbt.incidents"):
                if spark.catalog.tableExists(table):
                    _say(f"      {table}: {spark.table(table).count()} rows")
            if not ok:
                failures.append("dbt")
        except Exception as e:
            failures.append("dbt")
            _say(f"      FAILED: {str(e).splitlines()[0][:300]}")

    _say(f"== done in {time.time() - begin:.1f} s"
         + (f"; FAILED: {', '.join(failures)}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
