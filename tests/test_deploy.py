"""Where sparkcep is not installed: a ``local-cluster[2,1,1024]`` whose workers run a Python
without sparkcep (``enable()`` ships the packages), and a wheel installed with pyspark alone
in a fresh venv, running the README's quick start and the CLI from another directory.  Each
runs in subprocesses with their own SparkSessions."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

from deploy_support import bare_python, clean_env, imports_sparkcep

REPO = Path(__file__).resolve().parent.parent

CLUSTER_QUERY = """
    SELECT * FROM events MATCH_RECOGNIZE (
      PARTITION BY k ORDER BY t
      MEASURES MATCH_NUMBER() AS mn, CLASSIFIER() AS cls, FIRST(A.t) AS start, SUM(p) AS total,
               FINAL COUNT(B.*) AS drops
      ALL ROWS PER MATCH WITH UNMATCHED ROWS
      PATTERN (A B+ C?)
      DEFINE B AS p < PREV(p), C AS SUM(B.p) > 2 * A.p + :slack)"""

CLUSTER_SCRIPT = textwrap.dedent("""
    import json, sys
    from pyspark.sql import SparkSession
    import sql_ext
    master = sys.argv[1]
    builder = (SparkSession.builder.master(master).appName("sparkcep-cluster-test")
               .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "6").config("spark.executor.memory", "512m"))
    spark = builder.getOrCreate()
    sql_ext.enable(spark)
    rows = [(k, t, (t * 7 + ord(k)) % 10) for k in "abcdefgh" for t in range(1, 41)]
    spark.createDataFrame(rows, "k string, t int, p int").createOrReplaceTempView("events")
    result = sorted(map(list, spark.sql(sys.stdin.read(), args={"slack": 0}).collect()), key=str)
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    shipped = [p for p in spark.sparkContext._python_includes if "sparkcep-" in p]
    print(json.dumps({"executors": executors, "rows": result, "shipped": shipped}))
    spark.stop()
""")


def _run_cluster_script(master: str, workdir: Path, worker_python: str) -> dict:
    import pyspark

    # the driver is this Python (it has sparkcep); PYSPARK_PYTHON is the executors' Python;
    # no PYTHONPATH: the executors (launched with the driver's environment) must not find it
    env = clean_env(SPARK_HOME=os.path.dirname(pyspark.__file__), PYSPARK_PYTHON=worker_python)
    done = subprocess.run([sys.executable, "-c", CLUSTER_SCRIPT, master], input=CLUSTER_QUERY,
                          env=env, cwd=workdir, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_cluster_whose_workers_lack_sparkcep(tmp_path):
    """``local-cluster[2,1,1024]`` starts a standalone master and two executor JVMs from
    pyspark's own SPARK_HOME; their Python workers run a Python that cannot import sparkcep,
    so ``enable()`` ships the zip (``addPyFile``).  Partitions are spread over both executors;
    the rows equal those of ``local[2]`` (whose workers get the zip too)."""
    python = bare_python(tmp_path / "bare-venv")
    assert not imports_sparkcep(python, tmp_path)
    local = _run_cluster_script("local[2]", tmp_path, python)
    cluster = _run_cluster_script("local-cluster[2,1,1024]", tmp_path, python)
    assert cluster["executors"] == 2 and cluster["shipped"] and local["shipped"]
    assert cluster["rows"] == local["rows"]
    assert len(local["rows"]) == 8 * 40


QUICK_START = textwrap.dedent("""
    from pyspark.sql import SparkSession
    import sql_ext

    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    prices = [10, 9, 8, 11, 12, 7, 6, 9]
    spark.createDataFrame([("ACME", t, p) for t, p in enumerate(prices, 1)], "symbol string, ts int, price int") \\
        .createOrReplaceTempView("ticks")
    spark = sql_ext.enable(spark)               # spark.sql now accepts MATCH_RECOGNIZE
    spark.sql(\"\"\"
      SELECT * FROM ticks MATCH_RECOGNIZE (
        PARTITION BY symbol ORDER BY ts
        MEASURES FIRST(DOWN.ts) AS start_ts, LAST(UP.ts) AS end_ts, COUNT(DOWN.*) AS drops
        PATTERN (STRT DOWN+ UP+)
        DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)) AS m\"\"\").show()
    import udtf
    print("udtf from", udtf.__file__)
""")

CLI_SQL = """CREATE OR REPLACE TEMP VIEW ticks AS
  SELECT * FROM VALUES ('ACME', 1, 10), ('ACME', 2, 9), ('ACME', 3, 8), ('ACME', 4, 11) AS t(symbol, ts, price);
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES FIRST(DOWN.ts) AS start_ts, COUNT(DOWN.*) AS drops
  PATTERN (STRT DOWN+ UP)
  DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)) AS m;
"""


@pytest.mark.slow
def test_wheel_in_a_fresh_venv(tmp_path):
    """``pip wheel .`` builds; a fresh venv with that wheel (and its dependencies: pyspark,
    sqlglot, pyarrow, numpy) runs the quick start and ``python -m sql_ext`` elsewhere."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "sql_ext", "udtf", "docs/architecture.md", "README.md"):
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(REPO / name, target)
    for cache in source.rglob("__pycache__"):
        shutil.rmtree(cache)
    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "--disable-pip-version-check", "-w", str(dist), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    [wheel] = dist.glob("sparkcep-*.whl")

    fresh = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=True).create(fresh)
    python = str(fresh / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off",
                              str(wheel)], capture_output=True, text=True, timeout=900, env=clean_env())
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    listed = subprocess.run([python, "-m", "pip", "list", "--format", "json"], capture_output=True, text=True,
                            check=True).stdout
    assert "delta-spark" not in listed and "sqlglot" in listed

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = clean_env(PYSPARK_PYTHON=python, PYSPARK_DRIVER_PYTHON=python)
    quick = subprocess.run([python, "-c", QUICK_START], cwd=elsewhere, env=env, capture_output=True, text=True,
                           timeout=600)
    assert quick.returncode == 0, quick.stderr[-3000:]
    assert "|  ACME|       2|     5|    2|" in quick.stdout, quick.stdout
    assert f"udtf from {fresh}" in quick.stdout

    (elsewhere / "ticks.sql").write_text(CLI_SQL)
    cli = subprocess.run([python, "-m", "sql_ext", "run", "ticks.sql"], cwd=elsewhere, env=env, capture_output=True,
                         text=True, timeout=600)
    assert cli.returncode == 0, cli.stderr[-3000:]
    assert "|ACME  |2       |2    |" in cli.stdout, cli.stdout
