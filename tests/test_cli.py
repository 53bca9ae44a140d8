"""``python -m sql_ext`` stands alone: its own local SparkSession, any working directory,
no Delta unless the SQL uses it, errors at the user's line:column."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sql_support import at

REPO = Path(__file__).resolve().parent.parent
SQL = """SELECT * FROM (VALUES (1, 10), (2, 9), (3, 11), (4, 12)) AS t(ts, price)
  MATCH_RECOGNIZE (
    ORDER BY ts
    MEASURES FIRST(A.ts) AS first_ts, COUNT(B.*) AS ups
    PATTERN (A B+)
    DEFINE B AS price > PREV(price)) AS m;
"""


def cli(tmp_path, *args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("SPARKCEP_JARS_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(REPO)  # the tree under test, not another installed copy
    return subprocess.run([sys.executable, "-m", "sql_ext", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_run_and_explain_from_another_directory(tmp_path):
    (tmp_path / "q.sql").write_text(SQL + "SELECT 42 AS answer")
    run = cli(tmp_path, "run", "q.sql")
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stdout.splitlines() if line.startswith("|")]
    assert lines[0].replace(" ", "") == "|first_ts|ups|" and lines[1].replace(" ", "") == "|2|2|"
    assert "|42" in run.stdout.replace(" ", "")
    explain = cli(tmp_path, "explain", "--format", "dot", "q.sql")
    assert explain.returncode == 0, explain.stderr
    assert explain.stdout.startswith("digraph dst {")


@pytest.mark.slow
def test_errors_name_the_file_and_position(tmp_path):
    script = "SELECT 1;\n" + SQL.replace("COUNT(B.*)", "COUNT(Z.*)")
    (tmp_path / "bad.sql").write_text(script)
    result = cli(tmp_path, "transpile", "bad.sql")
    assert result.returncode == 1
    line, column = at(script, "Z.*")
    assert result.stderr.strip().splitlines()[-1] == f"bad.sql: line {line}:{column}: Z is not a pattern variable or subset"
