"""Command line: ``python -m sql_ext {transpile,explain,run} FILE.sql``.

It starts its own local SparkSession (Delta Lake only when the SQL mentions it), so it works
from any directory wherever sparkcep is installed.  The statements of the file are taken in
order: ``run`` runs each one (and shows the rows of those that return some); ``transpile`` and
``explain`` also run the statements that only change the session (temporary views and
functions, SET, USE, DECLARE), so a later query can read what an earlier one defined, and
nothing else (nothing is written).  An error is printed as ``FILE: line L:C: message``.
"""
from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from pathlib import Path

from sqlglot import exp

from udtf.errors import MatchRecognizeError, line_col

from ..compiler import explain
from ..compiler.catalog import spark_message
from ..compiler.parse import ParseError, parse, split_statements
from .catalog import SparkCatalog
from .session import enable
from .statement import transpile

LOG4J2 = Path(__file__).resolve().with_name("log4j2.properties")  # quiet local sessions (the file says why)
_DELTA = re.compile(r"\bdelta\b", re.IGNORECASE)
_MENTION = re.compile(r"\bMATCH_RECOGNIZE\b", re.IGNORECASE)
_PARSER_POSITION = re.compile(r"\s*\(line (\d+), pos (\d+)\)")
_WORKER_ERROR = re.compile(r"^(?:[\w.]+\.)?(\w*(?:Error|Exception|Exceeded)): (.+)$", re.MULTILINE)


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
    try:
        statements = split_statements(sql)
        spark = enable(local_session(sql))
        for statement in statements:
            try:
                _statement(spark, args, statement)
            except MatchRecognizeError:
                raise
            except Exception as e:
                error = _spark_error(e, sql, placed=not _MENTION.search(statement))
                if error is None:
                    raise
                raise error from None
        return 0
    except MatchRecognizeError as e:
        print(f"{args.file}: {e}", file=sys.stderr)
        return 1


def _statement(spark, args, statement: str) -> None:
    """Do ``args.command`` with one statement of the script (its text has the script's earlier
    text blanked out, so offsets in it are those of the script)."""
    if args.command == "run":
        df = spark.sql(statement)
        if df.columns:  # a query (DDL returns an empty frame without columns)
            df.show(truncate=False)
        return
    if args.command == "explain":
        render = {"text": explain.text, "dot": lambda c, p: explain.graphviz(p),
                  "mermaid": lambda c, p: explain.mermaid(p)}[args.format]
        for clause, plan in explain.automata(statement, SparkCatalog(spark)):
            print(render(clause, plan))
    else:
        print(transpile(statement, spark) + ";")
    if _changes_the_session_only(statement):
        spark.sql(statement)


def _changes_the_session_only(statement: str) -> bool:
    """Whether ``statement`` only defines something in the session (a temporary view or
    function, a variable, a conf, the current database): what later statements may read."""
    try:
        tree = parse(statement)[0]
    except ParseError:  # not sqlglot's Spark SQL: passed on as written, Spark judges it when it runs
        return False
    if isinstance(tree, exp.Create):
        return tree.find(exp.TemporaryProperty) is not None
    return isinstance(tree, (exp.Set, exp.Use, exp.Declare))


def _spark_error(e: Exception, sql: str, placed: bool) -> MatchRecognizeError | None:
    """Spark's error ``e`` about a statement of the script ``sql`` as a ``MatchRecognizeError``,
    at the line:column Spark gives when ``placed`` (Spark saw the statement as written: its
    positions in a rewritten one are not the user's); None for an error that is not Spark's.
    A worker's error is its exception's last line, not the traceback."""
    try:
        from pyspark.errors import PySparkException
    except ImportError:
        return None
    if not isinstance(e, PySparkException):
        return None

    worker = _WORKER_ERROR.findall(str(e)) if type(e).__name__ == "PythonException" else []
    message = f"{worker[-1][0]}: {worker[-1][1]}" if worker else spark_message(e)
    if not placed:
        return MatchRecognizeError(message)
    try:
        starts = [c.startIndex() for c in e.getQueryContext() if c.startIndex() >= 0]
    except Exception:
        starts = []
    if starts:
        return MatchRecognizeError(message, *line_col(sql, starts[0]))
    at = _PARSER_POSITION.search(str(e))  # a syntax error: Spark's parser gives line and 0-based pos
    if at:  # (spark_message has taken it out of the message)
        return MatchRecognizeError(message, int(at.group(1)), int(at.group(2)) + 1)
    return MatchRecognizeError(message)


def local_session(sql: str):
    """A local SparkSession for ``sql`` (the running one if there is one), logging errors only:
    the CLI prints the results, and a statement's error itself."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # a local master: loopback (no hostname warning)
    # workers import udtf from where this copy of sparkcep lives (installed or a checkout)
    home = str(Path(__file__).resolve().parents[2])
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if home not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [home, *paths] if p)
    from pyspark.logger import PySparkLogger
    from pyspark.sql import SparkSession

    PySparkLogger.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)  # (JSON dumps of errors)
    builder = (SparkSession.builder.master("local[*]").appName("sparkcep")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}")
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
