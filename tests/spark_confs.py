"""Spark confs set for one test or one helper call, and restored after: the test run shares one
SparkSession, so a conf a test leaves changed changes every test after it."""
from __future__ import annotations

import contextlib
import functools
import inspect


@contextlib.contextmanager
def session_confs(session, confs: dict):
    """``session`` with ``confs`` (key -> value) set inside the block; on leaving it each key
    is back to what it was (unset when it had not been set)."""
    before = {key: session.conf.get(key, None) for key in confs}
    try:
        for key, value in confs.items():
            session.conf.set(key, value)
        yield session
    finally:
        for key, value in before.items():
            if value is None:
                session.conf.unset(key)
            else:
                session.conf.set(key, value)


def in_ansi_mode(fn):
    """``fn(spark, ..., ansi, ...)`` run with spark.sql.ansi.enabled set to its ``ansi``
    argument, restored after."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        with session_confs(bound.arguments["spark"], {"spark.sql.ansi.enabled": str(bound.arguments["ansi"]).lower()}):
            return fn(*args, **kwargs)
    return run
