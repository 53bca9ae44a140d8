"""What the compiler asks of Spark, behind a small interface (``Catalog``).

The compiler is pure but for this: the schema of a query (input columns, the types of the
columns it precomputes), the session's settings it compiles for, and the registration of the
UDTF that runs an engine plan.  ``sql_ext.spark.catalog.SparkCatalog`` answers from a
SparkSession; tests may answer from a table of schemas.
"""
from __future__ import annotations

import re
from typing import NamedTuple, Protocol

from udtf.plan import EnginePlan, Limits


class Field(NamedTuple):
    """A column: its name, Spark type (``DataType.simpleString()``, ``type_text``) and the
    type's JSON form (``DataType.jsonValue()``, as a JSON text), from which the worker rebuilds
    it exactly."""
    name: str
    type: str
    json: str


class Catalog(Protocol):
    def schema(self, sql: str) -> tuple:
        """The ``Field``s of the result of the Spark SQL query ``sql`` (no job runs)."""

    def is_streaming(self, sql: str) -> bool:
        """Whether the Spark SQL query ``sql`` reads a streaming source (no job runs)."""

    def syntax_error(self, sql: str) -> tuple | None:
        """(Spark's message, the offset in ``sql`` it points at or None) when the session's SQL
        parser rejects ``sql``; None when it reads it (whatever analysis would say)."""

    def ansi(self) -> bool:
        """Whether spark.sql.ansi.enabled is on (Spark's ANSI semantics)."""

    def time_zone(self) -> str:
        """spark.sql.session.timeZone: the zone id of the session (Spark has validated it)."""

    def size_of_null(self) -> bool:
        """spark.sql.legacy.sizeOfNull: whether ``size(NULL)`` is -1 without ANSI (else NULL)."""

    def limits(self) -> Limits:
        """The engine's bounds: ``Limits`` defaults unless set by the Spark confs ``LIMIT_CONFS``."""

    def chunk_rows(self) -> int:
        """spark.sparkcep.chunkRows: the attempt rows of a chunk of the chunked plan (0, the
        default: the serial plan; ``chunked``)."""

    def register(self, name: str, plan: EnginePlan, output: tuple) -> None:
        """Make the table function ``name`` run ``plan`` with output columns ``output``
        (``Field``s) for the rest of the session; a no-op when it exists."""


_GENERATED = re.compile(r";? *line \d+ pos \d+|\s*\(line \d+, pos \d+\)|\s*SQLSTATE: \w+|`?__mr\d*_\w+`?")


def spark_message(e: Exception) -> str:
    """Spark's error message without what refers to the generated SQL (its positions, plan
    dumps, the rewrite's own column names)."""
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return _GENERATED.sub("", first).rstrip(" .;") + "."
