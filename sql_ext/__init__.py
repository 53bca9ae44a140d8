"""sparkcep's SQL front end: MATCH_RECOGNIZE (SQL:2016 + FlinkCEP extensions) for Spark SQL."""
from .session import disable, enable, is_enabled, named_args, session_kind, transpile


def stream(spark, sql: str, args=None):
    """The streaming DataFrame of a MATCH_RECOGNIZE query over a streaming input (see
    ``sql_ext.streaming.stream`` and docs/streaming.md)."""
    from .streaming import stream as run

    return run(spark, sql, args)


__all__ = ["enable", "disable", "is_enabled", "transpile", "named_args", "session_kind", "stream"]
