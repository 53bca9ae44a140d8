"""Columns across the pandas boundary of ``transformWithStateInPandas``, value for value.

Spark hands a stateful processor pandas DataFrames built row by row, and reads pandas back:
integers with NULLs turn into floats (inexact past 2**53), NULL and NaN merge, and TIMESTAMP
becomes a naive local time.  So Spark encodes such a column as text before the processor and
decodes it after (``encode_sql`` / ``decode_sql``); the processor turns the text into the Arrow
type the engine reads (``decode``) and its output back into text (``encode``).  Text is exact:
Spark and Arrow both print the shortest decimal that reads back as the same number.
"""
from __future__ import annotations

import re
from enum import Enum

import pyarrow as pa
import pyarrow.compute as pc

from .wire import record


@record
class Transport(str, Enum):
    PLAIN = "plain"  # pandas keeps the values (strings, binary, booleans, decimals, dates, nested)
    TEXT = "text"  # integers and floating point numbers as their decimal text
    MICROS = "micros"  # TIMESTAMP as the decimal text of its microseconds since the epoch


_TEXT = re.compile(r"(tinyint|smallint|int|bigint|float|double)")


def transport(spark_type: str) -> Transport:
    """How a column of Spark type ``spark_type`` (``simpleString``) crosses."""
    if _TEXT.fullmatch(spark_type):
        return Transport.TEXT
    if spark_type == "timestamp":
        return Transport.MICROS
    return Transport.PLAIN


def encode_sql(column: str, how: Transport) -> str:
    """Spark SQL encoding the (quoted) ``column`` for the processor."""
    if how is Transport.TEXT:
        return f"CAST({column} AS STRING)"
    if how is Transport.MICROS:
        return f"CAST(unix_micros({column}) AS STRING)"
    return column


def decode_sql(column: str, how: Transport, spark_type: str) -> str:
    """Spark SQL decoding the processor's (quoted) output ``column`` into ``spark_type``."""
    if how is Transport.TEXT:
        return f"CAST({column} AS {spark_type.upper()})"
    if how is Transport.MICROS:
        return f"timestamp_micros(CAST({column} AS BIGINT))"
    return column


def wire_type(how: Transport, arrow_type: pa.DataType) -> pa.DataType:
    """The Arrow type of a column while it crosses."""
    return arrow_type if how is Transport.PLAIN else pa.string()


def decode(values, how: Transport, arrow_type: pa.DataType) -> pa.Array:
    """A pandas Series the processor received, as an Arrow array of ``arrow_type``."""
    if how is Transport.PLAIN:
        return pa.array(values, type=arrow_type, from_pandas=True)
    text = pa.array(values, type=pa.string(), from_pandas=True)
    if how is Transport.MICROS:
        return pc.cast(text, pa.int64()).cast(arrow_type)
    return pc.cast(text, arrow_type)


def encode(array: pa.Array, how: Transport) -> pa.Array:
    """An output column for Spark (see ``decode_sql``)."""
    if how is Transport.PLAIN:
        return array
    if how is Transport.MICROS:
        array = array.cast(pa.int64())
    return pc.cast(array, pa.string())
