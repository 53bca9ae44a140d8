"""Python wrapper around the real Apache FlinkCEP engine (tests/flink/CepDriver.java).

Usage::

    import flinkcep
    if not flinkcep.available():
        pytest.skip(flinkcep.unavailable_reason())
    matches = flinkcep.run(spec)              # -> [{"a": [1], "b": [2, 4]}, ...]
    results = flinkcep.run_many(specs)        # one JVM for all specs

A match is a dict {pattern name: [event ids]} whose keys are in the order Flink returns them
(order of each name's first event in the match) and whose id lists are in event order.
Matches are listed in Flink's emission order.  The spec format is documented in README.md.

Environment:
    SPARKCEP_FLINK_VENV   venv holding apache-flink (default: <repo>/.venv-flink)
    SPARKCEP_FLINK_LIB    directory with the Flink jars (overrides the venv lookup)
    JAVA / JAVAC          java / javac executables (default: from PATH)
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SOURCE = HERE / "CepDriver.java"
BUILD_ROOT = HERE / ".build"

ENGINES = ("nfa", "job")
# JVM options: small heap, quick start (C1 only is slower for big batches, so keep tiered default)
JVM_OPTS = ["-Xss4m", "-Xmx4g", "-XX:+UseSerialGC", "-Xshare:auto"]
DEFAULT_BUDGET_MS = 20_000  # per-spec wall-clock budget of the nfa engine

Match = dict  # {pattern name: [event ids]}


class FlinkCepError(Exception):
    """Flink rejected the spec (e.g. MalformedPatternException) or the driver failed."""


class FlinkCepBudgetExceeded(FlinkCepError):
    """The spec ran past its time budget or out of memory (NFA state explosion); no verdict."""


# ----------------------------------------------------------------------------------------------
# discovery
# ----------------------------------------------------------------------------------------------

def _venv() -> Path:
    return Path(os.environ.get("SPARKCEP_FLINK_VENV", REPO / ".venv-flink"))


def lib_dir() -> Path | None:
    """Directory holding flink-cep-*.jar and flink-dist-*.jar, or None."""
    cands = []
    if os.environ.get("SPARKCEP_FLINK_LIB"):
        cands.append(Path(os.environ["SPARKCEP_FLINK_LIB"]))
    cands += [Path(p) for p in sorted(glob.glob(str(_venv() / "lib" / "python3*" / "site-packages" / "pyflink" / "lib")))]
    for d in cands:
        if glob.glob(str(d / "flink-cep-*.jar")) and glob.glob(str(d / "flink-dist-*.jar")):
            return d
    return None


def flink_version() -> str | None:
    d = lib_dir()
    if d is None:
        return None
    jar = Path(sorted(glob.glob(str(d / "flink-cep-*.jar")))[0]).name
    return jar[len("flink-cep-"):-len(".jar")]


def _tool(name: str) -> str | None:
    return os.environ.get(name.upper()) or shutil.which(name)


def unavailable_reason() -> str | None:
    """None if FlinkCEP can be run, else a human readable reason (for pytest.skip)."""
    if _tool("java") is None:
        return "java not found on PATH (FlinkCEP differential tests need a JDK 17)"
    if _tool("javac") is None:
        return "javac not found on PATH (FlinkCEP differential tests need a JDK 17)"
    if lib_dir() is None:
        return (f"Flink jars not found (no flink-cep/flink-dist jar under {_venv()}/lib/python3*/"
                "site-packages/pyflink/lib); create it with: python3 -m venv .venv-flink && "
                ".venv-flink/bin/pip install apache-flink==2.3.0")
    return None


def available() -> bool:
    return unavailable_reason() is None


# ----------------------------------------------------------------------------------------------
# build
# ----------------------------------------------------------------------------------------------

def _classpath(classes: Path) -> str:
    return os.pathsep.join([str(classes), str(lib_dir() / "*")])


def build() -> Path:
    """Compile CepDriver.java once (cached by source hash + Flink version); return classes dir."""
    reason = unavailable_reason()
    if reason:
        raise FlinkCepError(reason)
    src = SOURCE.read_bytes()
    key = hashlib.sha256(src + str(lib_dir()).encode() + (flink_version() or "").encode()).hexdigest()[:16]
    out = BUILD_ROOT / key
    if (out / "CepDriver.class").exists():
        return out
    BUILD_ROOT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="tmp-", dir=BUILD_ROOT))
    try:
        proc = subprocess.run(
            [_tool("javac"), "-nowarn", "-Xlint:none", "-cp", str(lib_dir() / "*"), "-d", str(tmp), str(SOURCE)],
            capture_output=True, text=True)
        if proc.returncode != 0:
            raise FlinkCepError("javac failed:\n" + proc.stderr)
        try:
            os.rename(tmp, out)  # atomic; another process may have won the race
        except OSError:
            if not (out / "CepDriver.class").exists():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


# ----------------------------------------------------------------------------------------------
# run
# ----------------------------------------------------------------------------------------------

def _invoke(payload: Any, engine: str, timeout: float | None, extra: Sequence[str] = ()) -> list[dict]:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}")
    classes = build()
    cmd = [_tool("java"), *JVM_OPTS, "-cp", _classpath(classes), "CepDriver", f"--engine={engine}", *extra]
    proc = subprocess.run(cmd, input=json.dumps(payload), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise FlinkCepError(f"CepDriver exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def _result(r: dict, full: bool = False) -> list[Match] | dict | FlinkCepError:
    if "error" in r:
        return (FlinkCepBudgetExceeded if r.get("budget_exceeded") else FlinkCepError)(r["error"])
    return r if full else r["matches"]


def run(spec: dict, engine: str = "nfa", timeout: float | None = 300,
        budget_ms: int = DEFAULT_BUDGET_MS, full: bool = False) -> list[Match] | dict:
    """Evaluate one spec; return the matches in emission order. Raises FlinkCepError.
    full=True returns the driver's raw result dict instead (see run_many)."""
    res = _result(_invoke(spec, engine, timeout, [f"--budget-ms={budget_ms}"])[0], full)
    if isinstance(res, FlinkCepError):
        raise res
    return res


def run_many(specs: Iterable[dict], engine: str = "nfa", timeout: float | None = 1800,
             chunk: int = 50, budget_ms: int = DEFAULT_BUDGET_MS,
             full: bool = False) -> list[list[Match] | dict | FlinkCepError]:
    """Evaluate many specs in ONE JVM. Returns, per spec, its match list or a FlinkCepError
    instance (not raised) when Flink rejected that spec (FlinkCepBudgetExceeded when the spec
    ran past ``budget_ms``, nfa engine only).  ``chunk`` = specs per MiniCluster job for
    engine="job" (which has no budget: feed it only specs the nfa engine finished).

    full=True: each successful result is the raw dict {"matches": [...], "count": n, "held": k,
    "held_matches": [...]} ("held*" only from the nfa engine): "held" counts completed matches
    Flink still buffers at end of input (skip strategies other than NO_SKIP wait for earlier
    live partial matches), "held_matches" is what it would emit if all partial matches died."""
    specs = list(specs)
    if not specs:
        return []
    out = _invoke(specs, engine, timeout, [f"--chunk={chunk}", f"--budget-ms={budget_ms}"])
    if len(out) != len(specs):
        raise FlinkCepError(f"expected {len(specs)} results, got {len(out)}")
    return [_result(r, full) for r in out]


# ----------------------------------------------------------------------------------------------
# helpers for writing specs
# ----------------------------------------------------------------------------------------------

def events(*rows: Sequence[float]) -> list[dict]:
    """events((id, name, price), ...) -> [{"id":..,"name":..,"price":..}, ...]; a bare int is
    a name (id = position + 1, price 0)."""
    out = []
    for i, r in enumerate(rows):
        if isinstance(r, (int, float)):
            out.append({"id": i + 1, "name": r, "price": 0})
        else:
            out.append({"id": r[0], "name": r[1], "price": r[2] if len(r) > 2 else 0})
    return out


def elem(name: str, cond: dict | None = None, junction: str = "next", quant: dict | None = None,
         optional: bool = False, greedy: bool = False, inner: str = "relaxed",
         until: dict | None = None) -> dict:
    return {"name": name, "junction": junction, "cond": cond, "quant": quant, "optional": optional,
            "greedy": greedy, "inner": inner, "until": until}


def group(elements: list[dict], junction: str = "next", quant: dict | None = None,
          optional: bool = False, greedy: bool = False, inner: str = "relaxed") -> dict:
    return {"group": elements, "junction": junction, "quant": quant, "optional": optional,
            "greedy": greedy, "inner": inner, "until": None}


def spec(pattern: list[dict], evs: list[dict], skip: str = "NO_SKIP", within_ms: int | None = None) -> dict:
    return {"events": evs, "skip": skip, "within_ms": within_ms, "pattern": pattern}


def canonical(matches: Iterable[Match]) -> list[tuple]:
    """Order-insensitive form: sorted list of tuples of (name, ids) pairs (keys sorted)."""
    return sorted(tuple(sorted((k, tuple(v)) for k, v in m.items())) for m in matches)


def fmt(m: Match) -> str:
    """{"a":[1],"b":[2,4]} -> 'a:1;b:2,b:4'"""
    return ";".join(",".join(f"{k}:{i}" for i in v) for k, v in m.items())


if __name__ == "__main__":  # python tests/flink/flinkcep.py [--engine=job] < spec(s).json
    eng = "nfa"
    for a in sys.argv[1:]:
        if a.startswith("--engine="):
            eng = a.split("=", 1)[1]
    data = json.load(sys.stdin)
    if isinstance(data, list):
        for r in run_many(data, engine=eng):
            print(json.dumps(r if not isinstance(r, Exception) else {"error": str(r)}))
    else:
        ms = run(data, engine=eng)
        for m in ms:
            print(fmt(m))
        print(f"count={len(ms)}")
