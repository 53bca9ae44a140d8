"""``enable(spark)`` and ``disable(spark)``: which sessions' ``spark.sql`` accepts MATCH_RECOGNIZE.

``enable`` replaces ``sql`` on the class of the session (pyspark's classic ``SparkSession`` or
Spark Connect's; the kind is told from the class's module, nothing of the other kind is
imported) with a method that runs statements of *enabled* sessions through
``statement.run_statement`` and calls the original method for every other session:

* ``enable(spark)`` enables ``spark`` - a classic session with every session of its
  SparkContext (``newSession()``, ``SparkSession(sc)``), a Connect session by itself;
* ``enable()`` enables the active session and every session created later, of either kind
  (Spark Connect's class is patched when its module is imported);
* ``disable(spark)`` / ``disable()`` undo them; the class method is restored when no session is
  enabled.
"""
from __future__ import annotations

import functools
import importlib.abc
import sys
import threading
import weakref

from . import failures, shipping, versions, views
from .kind import scope
from .statement import active_session, run_statement

_CONNECT_MODULE = "pyspark.sql.connect.session"


_lock = threading.RLock()
_patched: dict = {}            # session class -> (original sql function, whether the class defined it)
_scopes = weakref.WeakSet()    # enabled scopes: a classic SparkContext, or a Connect session
_everywhere = False            # enable(): every session


def is_enabled(spark) -> bool:
    """Whether ``spark.sql`` accepts MATCH_RECOGNIZE."""
    if spark is None or not any(c in _patched for c in type(spark).__mro__):
        return False
    return _everywhere or scope(spark) in _scopes


def enable(spark=None, *, ship=None):
    """Make ``spark.sql`` accept MATCH_RECOGNIZE; other statements pass through untouched.

    ``spark``: a classic session (every session of its SparkContext is enabled with it) or a
    Spark Connect session.  Without it, the active session (returned; ``None`` if there is
    none) and every session created later are enabled.  ``ship``: whether to send the
    ``udtf``/``sql_ext`` packages to the executors (``None``: when they may lack them; see
    docs/deploying.md).

    Keyword arguments of ``spark.sql`` are pyspark's string formatting (``{df}`` becomes a
    view of the DataFrame): it is applied before the rewrite, which must see those views."""
    global _everywhere
    versions.check(spark if spark is not None else active_session())  # before anything is patched
    with _lock:
        if spark is None:
            _everywhere = True
            from pyspark.sql import session as classic

            _patch(classic.SparkSession)
            if _CONNECT_MODULE in sys.modules:
                _patch(sys.modules[_CONNECT_MODULE].SparkSession)
            elif not any(isinstance(f, _ConnectHook) for f in sys.meta_path):
                sys.meta_path.insert(0, _ConnectHook())
            spark = active_session()
            if spark is None:
                return None
        else:
            _patch(type(spark))
            _scopes.add(scope(spark))
        shipping.set_policy(spark, ship)
    shipping.prepare(spark)
    views.register_global_functions(spark)
    return spark


def disable(spark=None) -> None:
    """Undo ``enable(spark)`` (``spark.sql`` rejects MATCH_RECOGNIZE again; while ``enable()``
    holds, every session stays enabled), or without ``spark`` every ``enable``: the session
    classes get their own ``sql`` back."""
    global _everywhere
    with _lock:
        if spark is not None:
            _scopes.discard(scope(spark))
            if _everywhere or len(_scopes):
                return
        _everywhere = False
        _scopes.clear()
        for cls in list(_patched):
            original, own = _patched.pop(cls)
            if own:
                cls.sql = original
            else:
                del cls.sql
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _ConnectHook)]


def _patch(cls) -> None:
    failures.install()
    if cls in _patched:
        return
    original = cls.sql
    own = "sql" in cls.__dict__

    @functools.wraps(original)
    def sql(self, sqlQuery, args=None, **kwargs):
        if not is_enabled(self):
            return original(self, sqlQuery, args, **kwargs)
        return run_statement(self, original, sqlQuery, args, kwargs)

    sql._sparkcep = True
    _patched[cls] = (original, own)
    cls.sql = sql


class _ConnectHook(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """After ``enable()``: patches Spark Connect's SparkSession when its module is imported."""

    def find_spec(self, name, path=None, target=None):
        if name != _CONNECT_MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = getattr(finder, "find_spec", lambda *a: None)(name, path, target)
            if spec is not None:
                self.loader = spec.loader
                spec.loader = self
                return spec
        return None

    def create_module(self, spec):
        return self.loader.create_module(spec) if hasattr(self.loader, "create_module") else None

    def exec_module(self, module):
        self.loader.exec_module(module)
        with _lock:
            if _everywhere:
                _patch(module.SparkSession)
