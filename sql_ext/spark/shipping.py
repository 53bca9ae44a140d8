"""Ship sparkcep's packages to executors that may not have them.

The UDTF of a MATCH_RECOGNIZE is pickled with references to the ``udtf`` package: the Python
workers that run it must import the same ``udtf`` the driver planned with (the engine plan is
versioned).  ``ship(spark)`` sends a zip of the ``udtf`` and ``sql_ext`` packages, built from
the files this process imports them from, with ``SparkContext.addPyFile`` (classic) or
``SparkSession.addArtifacts(..., pyfile=True)`` (Spark Connect); Spark puts it first on the
workers' ``sys.path``.  ``needed(spark)`` says when: always for Spark Connect and for cluster
masters (whatever is installed there, the shipped copy is the driver's); for a local master
only when the workers' Python would not import this very ``udtf``.
"""
from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tempfile
import threading
import weakref
import zipfile
from pathlib import Path

import udtf
from udtf.errors import MatchRecognizeError

from . import versions
from .kind import scope, session_kind

_lock = threading.RLock()
_zip: str | None = None
# the two packages' folders: this file is sql_ext/spark/shipping.py
PACKAGES = (Path(udtf.__file__).resolve().parent, Path(__file__).resolve().parents[1])
_shipped = weakref.WeakSet()  # scopes prepared (``prepare``)
_policy: dict = {}  # id(scope) -> the ship argument of enable()


def package_files() -> list:
    """(archive name, path) of every module of the two packages, sorted."""
    files = []
    for root in PACKAGES:
        for path in sorted(root.rglob("*.py")):
            files.append((f"{root.name}/{path.relative_to(root).as_posix()}", path))
    return files


def build_zip(directory: str | os.PathLike | None = None) -> str:
    """Path of ``sparkcep-<content hash>.zip`` holding both packages (made once per process;
    the same content gives the same name, so it may be shipped to a session again)."""
    global _zip
    with _lock:
        if _zip is not None and directory is None and os.path.exists(_zip):
            return _zip
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, path in package_files():
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
        data = buffer.getvalue()
        folder = Path(directory) if directory is not None else \
            Path(tempfile.gettempdir()) / f"sparkcep-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"sparkcep-{hashlib.sha256(data).hexdigest()[:16]}.zip"
        if not path.exists():
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_bytes(data)
            os.replace(partial, path)
        if directory is None:
            _zip = str(path)
        return str(path)


def needed(spark) -> bool:
    """Whether the executors of ``spark`` may lack this process's ``udtf``.  For a local master
    this asks the workers' Python, and refuses one that cannot import what the engine needs."""
    if session_kind(spark) == "connect":
        return True
    master = spark.sparkContext.master or ""
    if not master.startswith("local") or master.startswith("local-cluster"):
        return True
    return not _local_workers_import_udtf(spark)


ENGINE_NEEDS = ("numpy", "pyarrow")  # what udtf imports on a worker (beyond the standard library)


def _local_workers_import_udtf(spark) -> bool:
    """Whether the Python workers of a local master (this machine, this environment) import
    the ``udtf`` this process imports.  Raises ``MatchRecognizeError`` when their Python lacks
    ``ENGINE_NEEDS`` (an interpreter other than this one: a venv used without activating it
    leaves pyspark's default ``python3``), naming it and what to set."""
    conf = spark.sparkContext.getConf()
    python = conf.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON")
    chosen = "spark.pyspark.python" if conf.get("spark.pyspark.python") else "PYSPARK_PYTHON"
    if not python:
        python, chosen = "python3", "pyspark's default: PYSPARK_PYTHON is not set"
    env = dict(os.environ)
    extra = conf.get("spark.executorEnv.PYTHONPATH")
    if extra:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (extra, env.get("PYTHONPATH")) if p)
    probe = ("import importlib.util as u; s = u.find_spec('udtf'); "
             "print(list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else ''); "
             f"print(*[m for m in {ENGINE_NEEDS!r} if u.find_spec(m) is None])")
    try:
        done = subprocess.run([python, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    found, missing = (done.stdout.splitlines() + ["", ""])[:2]
    if done.returncode == 0 and missing.split():
        raise MatchRecognizeError(
            f"Spark's Python workers run {python} ({chosen}), which cannot import {', '.join(missing.split())}: "
            f"sparkcep's engine runs there.  Set PYSPARK_PYTHON to a Python that has them (this one: "
            f"{sys.executable}) before the SparkSession starts, or activate the venv - see docs/deploying.md")
    return bool(found) and os.path.realpath(found) == os.path.realpath(os.path.dirname(udtf.__file__))


def ship(spark) -> str:
    """Send the packages' zip to the executors of ``spark``; returns its path."""
    path = build_zip()
    if session_kind(spark) == "connect":
        spark.addArtifacts(path, pyfile=True)
    else:
        spark.sparkContext.addPyFile(path)
    return path


def set_policy(spark, ship) -> None:
    """``enable(spark, ship=...)``: ship always (True), never (False), or when ``needed`` (None)."""
    _policy[id(scope(spark))] = ship


def prepare(spark) -> None:
    """Once per scope, before its first MATCH_RECOGNIZE: refuse a Spark sparkcep does not
    support (``versions``), and send the packages to the executors when they may lack them."""
    where = scope(spark)
    if where in _shipped:
        return
    with _lock:
        if where in _shipped:
            return
        versions.check(spark)
        policy = _policy.get(id(where))
        if policy is None:
            policy = needed(spark)
        if policy:
            ship(spark)
        _shipped.add(where)


if __name__ == "__main__":  # python -m sql_ext.spark.shipping [DIR]: build the zip, print its path
    print(build_zip(sys.argv[1] if len(sys.argv) > 1 else None))
