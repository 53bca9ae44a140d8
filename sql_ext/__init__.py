"""sparkcep's SQL front end: MATCH_RECOGNIZE (SQL:2016 + FlinkCEP extensions) for Spark SQL.

Two parts, imported one way: ``compiler`` (parse -> analyze -> plan -> lower: SQL text to Spark
SQL and engine plans, no Spark) and ``spark`` (the edge: sessions, the catalog a session
answers, shipping, streaming, the command line), which uses the compiler.
"""
from .spark.kind import session_kind
from .spark.session import disable, enable, is_enabled
from .spark.statement import named_args, transpile


def stream(spark, sql: str, args=None, *, late_rows: str | None = None, processing_time: bool = False,
           checkpoint: str | None = None):
    """The streaming DataFrame of a MATCH_RECOGNIZE query over a streaming input (see
    ``sql_ext.spark.streaming.stream`` and docs/streaming.md; imported on first use: the
    streaming engine needs pyspark's stateful-processor API)."""
    from .spark.streaming import stream as run

    return run(spark, sql, args, late_rows=late_rows, processing_time=processing_time, checkpoint=checkpoint)

__all__ = ["enable", "disable", "is_enabled", "transpile", "named_args", "session_kind", "stream"]
