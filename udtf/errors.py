"""The one error type users see, anchored at a line:column of their SQL, and the one way to
turn a character offset into a line:column (and back)."""
from __future__ import annotations

import os

Pos = tuple  # (line, column), 1-based; (None, None) when unknown


class MatchRecognizeError(Exception):
    """A MATCH_RECOGNIZE problem; ``line``/``column`` are 1-based positions in the user's SQL."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column

    def __str__(self) -> str:
        if self.line is None:
            return self.message
        return f"line {self.line}:{self.column}: {self.message}"


class LimitExceeded(MatchRecognizeError):
    """A configured engine limit (``Limits``) was exceeded at ``row`` of the partition being
    matched (an index into its rows kept); the UDTF names the partition and the row."""

    def __init__(self, message: str, key: str, row: int):
        super().__init__(f"{message} (the limit is the Spark conf {key})")
        self.key, self.row = key, row


def line_col(text: str, offset: int, origin: Pos = (1, 1)) -> Pos:
    """(line, column) of character ``offset`` of ``text`` whose first character sits at
    ``origin`` in the user's SQL (columns count characters)."""
    line, column = origin
    if line is None:
        return (None, None)
    offset = max(0, min(offset, len(text)))
    newlines = text.count("\n", 0, offset)
    if newlines:
        return (line + newlines, offset - text.rfind("\n", 0, offset))
    return (line, column + offset)


def offset(text: str, line: int, column: int) -> int:
    """The character offset in ``text`` of its ``line``:``column`` (1-based; ``line_col``'s inverse)."""
    lines = text.split("\n")
    return sum(len(part) + 1 for part in lines[:line - 1]) + column - 1


def reported(error: MatchRecognizeError) -> MatchRecognizeError:
    """``error``, to be raised in a Spark Python worker, which then reports it without its
    traceback: it is the user's error at their line:column, not sparkcep's.  (The worker prints
    a traceback unless SPARK_HIDE_TRACEBACK - Spark's
    spark.sql.execution.pyspark.udf.hideTraceback.enabled - is set; it exits after reporting
    an error, so the setting ends with it.)  The driver turns it back into a
    ``MatchRecognizeError`` (``sql_ext.spark.failures``)."""
    os.environ["SPARK_HIDE_TRACEBACK"] = "1"
    return error
