"""``SparkCatalog``: the compiler's ``Catalog`` answered by a SparkSession (classic or Spark
Connect): schemas and parse errors from Spark's analyser, the session's confs, and the UDTFs
registered in the session."""
from __future__ import annotations

import json
import re

from udtf.errors import MatchRecognizeError, offset
from udtf.plan import LIMIT_CONFS, EnginePlan, Limits
from udtf.sparksql.types import quote_name

from ..compiler.catalog import Field, spark_message
from .failures import unlogged
from .kind import session_kind

CHUNK_ROWS = "spark.sparkcep.chunkRows"  # the chunked plan's rows a chunk (0: the serial plan)


def type_text(t) -> str:
    """A pyspark DataType's ``simpleString()``, its struct field names quoted where they are
    not plain identifiers, so that ``SqlType.parse`` reads it back exactly."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(t, StructType):
        return "struct<" + ",".join(f"{quote_name(f.name)}:{type_text(f.dataType)}" for f in t.fields) + ">"
    if isinstance(t, ArrayType):
        return f"array<{type_text(t.elementType)}>"
    if isinstance(t, MapType):
        return f"map<{type_text(t.keyType)},{type_text(t.valueType)}>"
    return t.simpleString()


# every UDTF registered by this process: name -> (plan, output fields), so that a session other
# than the one that planned it can register it (a global temporary view calls it by name)
REGISTERED: dict = {}


class SparkCatalog:
    """The catalog of a SparkSession (classic or Spark Connect).

    ``args``: the statement's parameter values (a dict: positional markers are renamed by
    then), passed to every query Spark analyses; ``run(sql, args)``: how to have Spark analyse a
    query (default ``spark.sql``; ``enable()`` passes the original, unpatched method)."""

    def __init__(self, spark, args=None, run=None):
        self.spark = spark
        self.args = args or None
        self.run = run if run is not None else (lambda sql, args: spark.sql(sql, args))
        self._frames = {}  # sql -> its DataFrame: one statement's probes analyse a query once

    def _ask(self, sql: str, read=lambda df: df):
        """``read`` of Spark's DataFrame for ``sql``, its failures unlogged (``failures.unlogged``;
        Spark Connect analyses only when ``read`` asks): a query the rewrite asks about is
        generated SQL, its errors reach the user at their SQL or not at all."""
        with unlogged():
            frame = self._frames.get(sql)
            if frame is None:
                frame = self._frames[sql] = self.run(sql, self.args)
            return read(frame)

    def schema(self, sql: str) -> tuple:
        return tuple(Field(f.name, type_text(f.dataType), json.dumps(f.dataType.jsonValue()))
                     for f in self._ask(sql, lambda df: df.schema).fields)

    def is_streaming(self, sql: str) -> bool:
        return self._ask(sql, lambda df: df.isStreaming)

    def syntax_error(self, sql: str) -> tuple | None:
        """Spark's parse error of ``sql`` (message, offset), else None; None too in a Spark
        Declarative Pipelines definition, which refuses EXPLAIN (analysis still checks the SQL).

        A classic session without parameter values has its own parser read ``sql`` (with the
        session active, as ``spark.sql`` does: the parser reads the active session's confs);
        otherwise ``EXPLAIN sql`` is run, which analyses and plans too (a round trip of about
        100 ms against a few ms; bench/latency.py)."""
        from pyspark.errors import AnalysisException, IllegalArgumentException, ParseException

        if self.args is None and session_kind(self.spark) == "classic":
            try:
                with unlogged():
                    self._parse(sql)
            except (ParseException, IllegalArgumentException) as e:
                return spark_message(e), _offset(e, sql)
            return None
        explain = "EXPLAIN " + sql  # (runs at once; what analysis finds is its result's text, not raised)
        try:
            self._ask(explain)
        except (ParseException, IllegalArgumentException) as e:  # (the latter: a literal the parser cannot read,
            # INTERVAL '1 x' is INVALID_INTERVAL_FORMAT)
            at = _offset(e, explain)
            return spark_message(e), None if at is None else max(0, at - len("EXPLAIN "))
        except AnalysisException as e:
            if e.getCondition() != "UNSUPPORTED_PIPELINE_SPARK_SQL_COMMAND":
                raise
        return None

    def _parse(self, sql: str) -> None:
        """The session's SQL parser (its extensions too) reads ``sql``, with the session active."""
        jvm_session = self.spark._jsparkSession
        sessions = getattr(self.spark._jvm, "org.apache.spark.sql.SparkSession")  # (one look-up)
        before = sessions.getActiveSession()
        sessions.setActiveSession(jvm_session)
        try:
            jvm_session.sessionState().sqlParser().parsePlan(sql)
        finally:
            if before.isDefined():
                sessions.setActiveSession(before.get())
            else:
                sessions.clearActiveSession()

    def ansi(self) -> bool:
        return self.spark.conf.get("spark.sql.ansi.enabled", "true").lower() == "true"

    def time_zone(self) -> str:
        return self.spark.conf.get("spark.sql.session.timeZone")

    def size_of_null(self) -> bool:
        return self.spark.conf.get("spark.sql.legacy.sizeOfNull", "true").lower() == "true"

    def limits(self) -> Limits:
        values = {}
        for field, key in LIMIT_CONFS.items():
            text = self.spark.conf.get(key, None)
            if text is None:
                continue
            try:
                values[field] = int(text)
            except ValueError:
                values[field] = 0
            if values[field] < 1:
                raise MatchRecognizeError(f"{key} must be a positive integer, not {text!r}")
        return Limits(**values)

    def chunk_rows(self) -> int:
        text = self.spark.conf.get(CHUNK_ROWS, "0")
        try:
            rows = int(text)
        except ValueError:
            rows = -1
        if rows < 0:
            raise MatchRecognizeError(f"{CHUNK_ROWS} must be a non-negative integer (0: off), not {text!r}")
        return rows

    def register(self, name: str, plan: EnginePlan, output: tuple) -> None:
        REGISTERED.setdefault(name, (plan, output))
        if self.spark.catalog.functionExists(name):
            return
        from pyspark.sql.types import StructType

        from udtf.arrow import make_udtf
        from udtf.chunks import runner

        return_type = StructType.fromJson({"type": "struct", "fields": [
            {"name": f.name, "type": json.loads(f.json), "nullable": True, "metadata": {}} for f in output]})
        self.spark.udtf.register(name, make_udtf(plan, return_type, connect=session_kind(self.spark) == "connect",
                                                     runner=runner))

    def register_known(self, name: str) -> None:
        """Register the UDTF ``name`` this process planned (for another session)."""
        if name in REGISTERED:
            self.register(name, *REGISTERED[name])


def _offset(e, sql: str) -> int | None:
    """The offset in ``sql`` Spark's parse error ``e`` points at: its query context, or the
    ``(line L, pos P)`` of its message."""
    try:
        starts = [c.startIndex() for c in e.getQueryContext() if c.startIndex() >= 0]
    except Exception:
        starts = []
    if starts:
        return starts[0]
    found = re.search(r"\(line (\d+), pos (\d+)\)", str(e))
    return offset(sql, int(found.group(1)), int(found.group(2)) + 1) if found else None
