"""Spark's errors on the SQL the rewrite generates, reported at the user's construct: the
message without what refers to the generated text (``catalog.spark_message``), the position of
the part of the user's SQL Spark rejects; and the run-time errors the generated SQL raises
itself (``raising``), which ``sql_ext.spark.failures`` turns back into the user's (``RAISED``)."""
from __future__ import annotations

import re

from sqlglot import exp

from udtf.errors import MatchRecognizeError

from .analyze import error
from .catalog import spark_message
from .parse import position

# Spark's error of ``raising``'s raise_error: (line, column, message)
RAISED = re.compile(r"\[USER_RAISED_EXCEPTION\] MATCH_RECOGNIZE line (\d+):(\d+): (.*?)(?: SQLSTATE: \w+)?$", re.M)


def raising(node, *message) -> exp.Expression:
    """``raise_error`` of ``message`` (texts and STRING expressions, concatenated) as an error at
    ``node``'s line:column of the user's SQL."""
    line, column = position(node) or (0, 0)
    parts = [exp.Literal.string(m) if isinstance(m, str) else m for m in (f"MATCH_RECOGNIZE line {line}:{column}: ",
                                                                          *message)]
    return exp.Anonymous(this="raise_error", expressions=[exp.Anonymous(this="concat", expressions=parts)])


def checked(schema, sql: str, culprit):
    """``schema(sql)``; when Spark rejects it, a ``MatchRecognizeError`` with Spark's message at
    the user's construct ``culprit()`` finds."""
    try:
        return schema(sql)
    except MatchRecognizeError:
        raise
    except Exception as e:  # Spark's AnalysisException / ParseException
        node = culprit()
        if isinstance(node, MatchRecognizeError):
            raise node from None
        raise error(spark_message(e), node) from None


def culprit(schema, parts, fallback):
    """The first of ``parts`` ((sql, user node)) Spark rejects on its own, as the error to raise;
    ``fallback`` when each passes alone."""
    for sql, node in parts:
        try:
            schema(sql)
        except Exception as e:
            return error(spark_message(e), node)
    return fallback
