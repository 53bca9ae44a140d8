"""The UDTFs of global temporary views, in other sessions: a global temporary view is read
from every session of the application, and calls the UDTF of its MATCH_RECOGNIZE by name,
which only the session that planned it registered.  Each session registers them when a
statement may read such a view."""
from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field

from .catalog import SparkCatalog

_GLOBAL_VIEW = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?GLOBAL\s+TEMP(?:ORARY)?\s+VIEW\b", re.IGNORECASE)
_global_functions: set = set()  # UDTFs that global temporary views call


@dataclass
class _Known:
    """What a session has: the UDTFs registered there, its global temporary database's name."""
    names: set = field(default_factory=set)
    database: str | None = None


_known = weakref.WeakKeyDictionary()  # session -> _Known


def note_global_view(sql: str, rewritten: str) -> None:
    """Remember the UDTFs ``rewritten`` calls if ``sql`` creates a global temporary view."""
    if _GLOBAL_VIEW.match(sql):
        _global_functions.update(re.findall(r"\b(sparkcep_mr_\w+)", rewritten))


def register_global_functions(spark, sql: str | None = None) -> None:
    """Register in ``spark`` the UDTFs global temporary views of other sessions call, when
    ``sql`` may read one (it names the global temporary database) or ``sql`` is None."""
    if not _global_functions:
        return
    try:
        state = _known.setdefault(spark, _Known())
    except TypeError:  # not weak-referenceable
        state = _Known()
    if sql is not None:
        if state.database is None:
            state.database = _global_database(spark)
        if not re.search(r"\b" + re.escape(state.database) + r"\b", sql, re.IGNORECASE):
            return
    missing = sorted(_global_functions - state.names)
    if missing:
        catalog = SparkCatalog(spark)
        for name in missing:
            catalog.register_known(name)
            state.names.add(name)


def _global_database(spark) -> str:
    """spark.sql.globalTempDatabase (a static conf)."""
    try:
        return spark.conf.get("spark.sql.globalTempDatabase", "global_temp") or "global_temp"
    except Exception:
        return "global_temp"

