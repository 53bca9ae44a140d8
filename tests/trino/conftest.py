"""Fixtures of the Trino differential tier (marker ``trino``).

``trino``: one local Trino 476 for the test session (tests/trino/server.py), stopped by its pid
at the end.  Without the install (``make trino``) the tier skips with the reason, unless
``SPARKCEP_REQUIRE_TRINO=1`` (set by ``make test``), where a missing Trino is an error.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import server  # noqa: E402
from spark_confs import session_confs  # noqa: E402


@pytest.fixture(scope="session")
def trino():
    reason = server.unavailable_reason()
    if reason:
        if os.environ.get("SPARKCEP_REQUIRE_TRINO") == "1":
            pytest.fail(f"SPARKCEP_REQUIRE_TRINO=1 but {reason}")
        pytest.skip(reason)
    with server.TrinoServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def runner(spark, trino):
    """Both engines (sparkcep on the test SparkSession, Trino), tier Spark settings applied."""
    import harness

    with session_confs(spark, harness.TIER_SPARK_CONFS):
        trino_engine = harness.TrinoEngine(trino)
        r = harness.Runner(harness.SparkEngine(spark), trino_engine)
        try:
            yield r
        finally:
            try:
                r.drop(list(r.tables))
            finally:
                trino_engine.close()
