"""Spark's runtime and analysis errors, as raised by the pure-Python Spark semantics library.

Invariant: ``str(error)`` starts with Spark's error class in brackets, exactly as Spark names it
(``[ARITHMETIC_OVERFLOW] ...``, ``[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES] ...``), so callers and
tests compare ``error.error_class`` with the class Spark reports for the same expression.
"""
from __future__ import annotations


class SparkError(ArithmeticError):
    """A runtime error Spark raises while evaluating a row (ANSI overflow, bad cast input...)."""

    def __init__(self, error_class: str, message: str = ""):
        self.error_class = error_class
        self.message = message
        super().__init__(f"[{error_class}] {message}".rstrip())


class SparkAnalysisError(TypeError):
    """Spark's analyzer rejects the expression (``DATATYPE_MISMATCH.*``, ``WRONG_NUM_ARGS``...)."""

    def __init__(self, error_class: str, message: str = ""):
        self.error_class = error_class
        self.message = message
        super().__init__(f"[{error_class}] {message}".rstrip())


ARITHMETIC_OVERFLOW = "ARITHMETIC_OVERFLOW"
DIVIDE_BY_ZERO = "DIVIDE_BY_ZERO"
CAST_INVALID_INPUT = "CAST_INVALID_INPUT"
CAST_OVERFLOW = "CAST_OVERFLOW"
NUMERIC_VALUE_OUT_OF_RANGE = "NUMERIC_VALUE_OUT_OF_RANGE"
INVALID_ARRAY_INDEX = "INVALID_ARRAY_INDEX"
DATETIME_OVERFLOW = "DATETIME_OVERFLOW"
