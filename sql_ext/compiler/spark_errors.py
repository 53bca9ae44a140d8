"""Spark's errors on the SQL the rewrite generates, reported at the user's construct: the
message without what refers to the generated text (``catalog.spark_message``), the position of
the part of the user's SQL Spark rejects."""
from __future__ import annotations

from udtf.errors import MatchRecognizeError

from .analyze import error
from .catalog import spark_message


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
