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


SCRIPT = """-- a script that makes its own input
CREATE OR REPLACE TEMP VIEW ticks AS
  SELECT * FROM VALUES ('ACME', 1, 10), ('ACME', 2, 9), ('ACME', 3, 8), ('ACME', 4, 11) AS t(symbol, ts, price);
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES FIRST(DOWN.ts) AS start_ts, COUNT(DOWN.*) AS drops
  PATTERN (STRT DOWN+ UP)
  DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)) AS m;
"""


@pytest.mark.slow
def test_a_script_is_taken_in_order(tmp_path):
    """transpile and explain run the temporary view the script defines before its query reads
    it; run shows the query's rows and nothing for the CREATE VIEW."""
    (tmp_path / "ticks.sql").write_text(SCRIPT)
    transpiled = cli(tmp_path, "transpile", "ticks.sql")
    assert transpiled.returncode == 0, transpiled.stderr
    assert "CREATE OR REPLACE TEMP VIEW ticks" in transpiled.stdout and "sparkcep_mr_" in transpiled.stdout
    explained = cli(tmp_path, "explain", "ticks.sql")
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout.startswith(f"MATCH_RECOGNIZE at line 4:")
    run = cli(tmp_path, "run", "ticks.sql")
    assert run.returncode == 0, run.stderr
    assert [line.replace(" ", "") for line in run.stdout.splitlines() if line.startswith("|")] \
        == ["|symbol|start_ts|drops|", "|ACME|2|2|"]
    assert not list(tmp_path.glob("spark-warehouse/*"))  # transpile / explain wrote nothing


@pytest.mark.slow
def test_spark_errors_are_one_line_at_the_position(tmp_path):
    """An ordinary Spark error (analysis, syntax) is reported like sparkcep's own: the file, the
    line:column in the script, Spark's message; no traceback, no JSON log."""
    (tmp_path / "bad.sql").write_text("SELECT 1;\nSELECT nope\n  FROM (SELECT 1 AS x);\n")
    (tmp_path / "syntax.sql").write_text("SELECT 1;\n\nSELECT 1 +;\n")
    bad = cli(tmp_path, "run", "bad.sql")
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines()[-1].startswith(
        "bad.sql: line 2:8: [UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with "
        "name `nope` cannot be resolved.")
    syntax = cli(tmp_path, "run", "syntax.sql")
    assert syntax.returncode == 1
    assert syntax.stderr.strip().splitlines()[-1] == \
        "syntax.sql: line 3:11: [PARSE_SYNTAX_ERROR] Syntax error at or near end of input."
    for result in (bad, syntax):
        assert "Traceback" not in result.stderr and '"level"' not in result.stderr
