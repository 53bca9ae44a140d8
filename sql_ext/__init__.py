"""sparkcep's SQL front end: MATCH_RECOGNIZE (SQL:2016 + FlinkCEP extensions) for Spark SQL."""
from .session import disable, enable, is_enabled, named_args, session_kind, transpile

__all__ = ["enable", "disable", "is_enabled", "transpile", "named_args", "session_kind"]
