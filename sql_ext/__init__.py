"""sparkcep's SQL front end: MATCH_RECOGNIZE (SQL:2016 + FlinkCEP extensions) for Spark SQL."""
from .session import enable, transpile

__all__ = ["enable", "transpile"]
