"""The Spark versions sparkcep runs on, checked before a session's first MATCH_RECOGNIZE.

The batch path needs Python Arrow UDTFs (``arrow_udtf``: whole Arrow batches into ``eval``,
Spark 4.1) fed by a TABLE argument; the range ends before the first minor release not tested
(docs/deploying.md has the support matrix).  Both sides are checked: the Spark that runs the
queries (``spark.version``: the server's, for Spark Connect) and this process's pyspark, which
builds the UDTF.
"""
from __future__ import annotations

import re
import weakref

from udtf.errors import MatchRecognizeError

OLDEST = (4, 1)      # the first supported release line
UNSUPPORTED = (4, 4)  # the first release line not supported (not tested yet)
SUPPORTED = f"Spark {OLDEST[0]}.{OLDEST[1]} to {UNSUPPORTED[0]}.{UNSUPPORTED[1] - 1}"

_checked = weakref.WeakSet()


def release_line(version: str) -> tuple[int, int] | None:
    """(major, minor) of a Spark / pyspark version string (``"4.2.0"``, ``"4.1.0.dev1"``)."""
    found = re.match(r"\s*(\d+)\.(\d+)", version or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


def supported(version: str) -> bool:
    line = release_line(version)
    return line is not None and OLDEST <= line < UNSUPPORTED


def check(spark) -> None:
    """Raise ``MatchRecognizeError`` naming the supported range when the Spark of ``spark`` or
    the pyspark of this process is outside it (once per session; no session: nothing)."""
    if spark is None or spark in _checked:
        return
    import pyspark

    for what, version in (("this session runs Spark", spark.version), ("this Python has pyspark",
                                                                        pyspark.__version__)):
        if not supported(version):
            raise MatchRecognizeError(
                f"sparkcep supports {SUPPORTED} (pyspark >= {OLDEST[0]}.{OLDEST[1]}.0, "
                f"< {UNSUPPORTED[0]}.{UNSUPPORTED[1]}); {what} {version}")
    _checked.add(spark)
