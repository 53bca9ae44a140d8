"""Command line: ``python -m sql_ext {transpile,explain,run} FILE.sql``."""
from __future__ import annotations

import argparse
import sys

from udtf.errors import MatchRecognizeError


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sql_ext", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (("transpile", "print the Spark SQL that runs (needs a local Spark)"),
                       ("explain", "print the compiled automaton of each MATCH_RECOGNIZE"),
                       ("run", "run the statements on a local Spark and show the results")):
        command = commands.add_parser(name, help=text)
        command.add_argument("file", help="SQL file ('-' reads standard input)")
        if name == "explain":
            command.add_argument("--format", choices=("text", "dot", "mermaid"), default="text")
    args = parser.parse_args(argv)
    sql = sys.stdin.read() if args.file == "-" else open(args.file, encoding="utf-8").read()
    try:
        if args.command == "explain":
            from . import explain

            for clause, program in explain.automata(sql):
                render = {"text": lambda: explain.text(clause, program), "dot": lambda: explain.graphviz(program),
                          "mermaid": lambda: explain.mermaid(program)}[args.format]
                print(render())
            return 0
        from sql_examples.local_spark import get_spark

        from . import enable, transpile

        spark = enable(get_spark("sparkcep-cli"))
        for statement in _statements(sql):
            if args.command == "transpile":
                print(transpile(statement, spark) + ";")
            else:
                spark.sql(statement).show(truncate=False)
        return 0
    except MatchRecognizeError as e:
        print(f"{args.file}: {e}", file=sys.stderr)
        return 1


def _statements(sql: str) -> list:
    from .parse import parse, to_spark_sql

    return [to_spark_sql(tree) for tree in parse(sql)]


if __name__ == "__main__":
    sys.exit(main())
