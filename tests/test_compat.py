"""The compatibility tier's own tests (``make test-compat``, marker ``compat``): they run in a venv
built as a user's - the platform's pyspark first, then the sparkcep wheel - and check that the
wheel left that pyspark in place, and that the README's quick start and the CLI run from a
directory outside the checkout, with the installed sparkcep."""
from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deploy_support import clean_env, stream_and_batch
from test_cli import SCRIPT  # a script that makes its own input view, then reads it

pytestmark = pytest.mark.compat

REPO = Path(__file__).resolve().parent.parent


def pinned(name: str) -> str:
    """The version of ``name`` in the constraints file this venv was built from."""
    for end in ("oldest", "newest"):
        if Path(sys.prefix).name == f".venv-compat-{end}":
            text = (REPO / "constraints" / f"{end}.txt").read_text()
            return re.search(rf"^{re.escape(name)}==(\S+)$", text, re.MULTILINE).group(1)
    pytest.fail(f"not a compatibility venv: {sys.prefix}")


def test_the_wheel_left_the_platforms_pyspark():
    import pyspark

    assert pyspark.__version__ == pinned("pyspark")
    sparkcep = importlib.metadata.distribution("sparkcep")
    assert not any(r.startswith("pyspark") for r in sparkcep.requires if "extra ==" not in r), sparkcep.requires
    assert "editable" not in (sparkcep.read_text("direct_url.json") or "")  # the wheel, not the checkout


def activated(tmp_path: Path) -> dict:
    """The environment of a shell in which this venv is activated (its bin first on PATH, so
    Spark's Python workers run its python3), in a directory without the checkout."""
    return clean_env(PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
                     VIRTUAL_ENV=sys.prefix)


def readme_quick_start() -> str:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Quick start"):]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_readme_quick_start_runs_outside_the_checkout(tmp_path):
    code = readme_quick_start() + "\nimport udtf; print('udtf from', udtf.__file__)\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=activated(tmp_path),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.replace(" ", "") for line in done.stdout.splitlines() if line.startswith("|")]
    assert rows == ["|symbol|start_ts|end_ts|drops|", "|ACME|2|5|2|", "|ACME|7|8|1|"], done.stdout
    assert f"udtf from {sys.prefix}" in done.stdout  # the installed wheel


@pytest.mark.parametrize("command", ["run", "transpile", "explain"])
def test_the_cli_runs_outside_the_checkout(tmp_path, command):
    (tmp_path / "ticks.sql").write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-m", "sql_ext", command, "ticks.sql"], cwd=tmp_path,
                          env=activated(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    expected = {"run": "|ACME  |2       |2    |", "transpile": "sparkcep_mr_", "explain": "PATTERN (STRT DOWN+ UP)"}
    assert expected[command] in done.stdout, done.stdout
    assert not re.search(r"^\S+ \S+ WARN ", done.stderr, re.MULTILINE), done.stderr  # no Spark warning


def test_streaming_smoke(spark, tmp_path):
    """``sql_ext.stream`` on a stream of parquet files (one file per micro-batch, a watermark, an
    available-now trigger, an end-of-stream row) gives the rows of the batch query over them
    (deploy_support.stream_and_batch; the suite's streaming tests need pyspark 4.2's Python
    data sources: not on every line)."""
    import sql_ext

    sql_ext.enable(spark)
    streamed, batch = stream_and_batch(spark, str(tmp_path))
    assert streamed == batch and len(batch) > 5
