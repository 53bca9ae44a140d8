"""A running query's errors at the user's line:column.

A MATCH_RECOGNIZE's run-time errors come when an action (``collect``, a write, a streaming
batch) runs the query, after ``spark.sql`` returned:

* the engine's own - AFTER MATCH SKIP TO a variable absent from the match, an ANSI error of a
  match-state expression, an engine limit - which the UDTF raises as a ``MatchRecognizeError``
  at the user's construct (``udtf.arrow``), arrive as a Python worker's exception;
* Spark's, in the expressions the rewrite has Spark compute (an ANSI cast failure in a
  row-level DEFINE condition), point at the generated SQL, its positions and column names;
* the generated SQL's own checks (a PERIOD start after its end), a ``raise_error`` whose
  message holds the user's line:column (``spark_errors.raising``).

``install()`` wraps pyspark's conversion of the errors of a failed call (classic and Spark
Connect) so that both reach the user as one ``MatchRecognizeError``: the engine's with its own
message and position, Spark's with Spark's message at the user's expression the failing
fragment of the generated SQL was printed from (``remember``).  Other errors pass untouched.
pyspark logs each failed call's error with the SQL it failed on; inside ``unlogged()`` (the
queries sparkcep has Spark analyse, the rewritten statement) it does not: that SQL is the
generated one, and the error reaches the user as theirs, or not at all.
"""
from __future__ import annotations

import contextlib
import logging
import re
import sys
import threading

from udtf.errors import MatchRecognizeError

from ..compiler.catalog import spark_message
from ..compiler.parse import position, to_spark_sql
from ..compiler.spark_errors import RAISED

_ENGINE = re.compile(r"udtf\.errors\.MatchRecognizeError: (?:line (\d+):(\d+): )?([^\n]*)")
_REMEMBERED = 512
_generated: dict = {}  # SQL the rewrite generated for an expression -> the expression (the user's positions)
_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")  # pyspark's, of failed calls
_unlogged = threading.local()


def remember(expressions) -> None:
    """Keep the expressions whose SQL a rewritten statement has Spark compute (the latest
    ``_REMEMBERED``; an expression printed the same way again counts as the latest)."""
    for expression in expressions:
        text = to_spark_sql(expression)
        _generated.pop(text, None)
        _generated[text] = expression
    while len(_generated) > _REMEMBERED:
        del _generated[next(iter(_generated))]


def user_error(error: BaseException) -> MatchRecognizeError | None:
    """``error`` (pyspark's exception of a failed call) as the user's ``MatchRecognizeError``,
    or None when it is not a MATCH_RECOGNIZE's."""
    found = _ENGINE.findall(str(error))
    if found:
        line, column, message = found[-1]
        return MatchRecognizeError(message, int(line), int(column)) if line else MatchRecognizeError(message)
    raised = RAISED.search(str(error))
    if raised:
        line, column, message = raised.groups()
        return MatchRecognizeError(message, int(line), int(column))
    try:
        fragments = [c.fragment() for c in error.getQueryContext()]
    except Exception:
        return None
    for fragment in fragments:
        node = _origin(fragment)
        if node is not None:
            return MatchRecognizeError(spark_message(error), *position(node))
    return None


def _origin(fragment: str):
    """The innermost node, with a position, of the latest remembered expression that prints as
    ``fragment``."""
    for text in reversed(list(_generated)):
        if fragment and fragment in text:
            for node in _generated[text].walk():
                if position(node) is not None and to_spark_sql(node) == fragment:
                    return node
    return None


def install() -> None:
    """Wrap pyspark's conversion of a failed call's error (classic; Spark Connect once its
    client is imported): a MATCH_RECOGNIZE's error becomes the user's (``user_error``)."""
    from pyspark.errors.exceptions import captured

    _wrap(captured, "convert_exception")
    _filter_logs()
    core = sys.modules.get("pyspark.sql.connect.client.core")
    if core is not None:
        _wrap(core, "convert_exception")


def _wrap(module, name: str) -> None:
    convert = getattr(module, name)
    if getattr(convert, "_sparkcep", False):
        return

    def wrapped(*args, **kwargs):
        error = convert(*args, **kwargs)
        return user_error(error) or error

    wrapped._sparkcep = True
    setattr(module, name, wrapped)


def _filter_logs() -> None:
    from pyspark.logger import PySparkLogger

    for name in _LOGGERS:
        logger = PySparkLogger.getLogger(name)
        if _generated_sql not in logger.filters:
            logger.addFilter(_generated_sql)


@contextlib.contextmanager
def unlogged():
    """Calls in this block (this thread) fail without pyspark's log of their error (with or
    without ``enable()``: ``transpile`` probes Spark too)."""
    _filter_logs()
    before = getattr(_unlogged, "on", False)
    _unlogged.on = True
    try:
        yield
    finally:
        _unlogged.on = before


def _generated_sql(record: logging.LogRecord) -> bool:
    return not getattr(_unlogged, "on", False)
