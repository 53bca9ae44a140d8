"""Command line: ``python -m sql_ext {transpile,explain,run} FILE.sql``.

It starts its own local SparkSession (Delta Lake only when the SQL mentions it), so it works
from any directory wherever sparkcep is installed.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from udtf.errors import MatchRecognizeError

_DELTA = re.compile(r"\bdelta\b", re.IGNORECASE)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sql_ext", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (("transpile", "print the Spark SQL that runs"),
                       ("explain", "print the compiled automaton of each MATCH_RECOGNIZE"),
                       ("run", "run the statements on a local Spark and show the results")):
        command = commands.add_parser(name, help=text)
        command.add_argument("file", help="SQL file ('-' reads standard input)")
        if name == "explain":
            command.add_argument("--format", choices=("text", "dot", "mermaid"), default="text")
    args = parser.parse_args(argv)
    sql = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    from . import enable, transpile
    from .parse import split_statements

    try:
        statements = split_statements(sql)
        spark = enable(local_session(sql))
        for statement in statements:
            if args.command == "explain":
                from . import explain
                from .catalog import SparkCatalog

                for clause, plan in explain.automata(statement, SparkCatalog(spark)):
                    render = {"text": explain.text, "dot": lambda c, p: explain.graphviz(p),
                              "mermaid": lambda c, p: explain.mermaid(p)}[args.format]
                    print(render(clause, plan))
            elif args.command == "transpile":
                print(transpile(statement, spark) + ";")
            else:
                spark.sql(statement).show(truncate=False)
        return 0
    except MatchRecognizeError as e:
        print(f"{args.file}: {e}", file=sys.stderr)
        return 1


def local_session(sql: str):
    """A local SparkSession for ``sql`` (the running one if there is one)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # workers import udtf from where this copy of sparkcep lives (installed or a checkout)
    home = str(Path(__file__).resolve().parent.parent)
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if home not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [home, *paths] if p)
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master("local[*]").appName("sparkcep")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    if _DELTA.search(sql):
        builder = _with_delta(builder)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _with_delta(builder):
    """Delta Lake from ``$SPARKCEP_JARS_DIR`` (jars fetched by ``make jars``) or, without it,
    from Maven Central through delta-spark's own helper."""
    builder = (builder.config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
               .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"))
    jars_dir = os.environ.get("SPARKCEP_JARS_DIR")
    if jars_dir:
        jars = sorted(str(p) for p in Path(jars_dir).glob("*.jar"))
        return builder.config("spark.jars", ",".join(jars))
    try:
        from delta import configure_spark_with_delta_pip
    except ImportError:
        raise MatchRecognizeError("the SQL uses Delta Lake: install delta-spark or set SPARKCEP_JARS_DIR "
                                  "to a folder with the Delta jars") from None
    return configure_spark_with_delta_pip(builder)


if __name__ == "__main__":
    sys.exit(main())
