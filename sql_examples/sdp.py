"""The Spark Declarative Pipelines example (``sql_examples/pipeline/``), run by ``make demo``.

``run_pipeline`` runs ``spark-pipelines run`` (pyspark's CLI: a local Spark Connect server
with the pipeline's session) on the spec ``pipeline/spark-pipeline.yml`` from a fresh
directory: a streaming table over the Delta table of stock ticks, the materialized view of the
rallies ``RALLIES_SQL`` finds in them (MATCH_RECOGNIZE), and a summary of it, all Delta.  Then
the calling session reads the materialized view and compares it with the same query run there.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .local_spark import REPO_ROOT, delta_jars

SPEC = Path(__file__).resolve().parent / "pipeline" / "spark-pipeline.yml"

# pyspark's string formatting: {ticks} is the input DataFrame, {{ }} a brace of the SQL
RALLIES_SQL = """
SELECT * FROM {ticks} MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES FIRST(UP.ts) AS start_ts, LAST(UP.ts) AS end_ts, COUNT(UP.*) AS rises,
           LAST(UP.price) - PREV(FIRST(UP.price)) AS gain
  PATTERN (UP{{5,}})
  DEFINE UP AS price > PREV(price)) AS m
"""


def spark_pipelines(spec: Path, workdir: Path, environ: dict, timeout: int = 1800) -> subprocess.CompletedProcess:
    """``spark-pipelines --conf k=v ... run --spec spec`` in ``workdir`` (its storage and tables go
    there) with ``environ`` added to the environment (the definitions read it), Delta Lake and
    this checkout's sparkcep; the CLI's output is returned."""
    import pyspark

    # the command line carries what the local Connect server needs (Delta); the pipeline's session
    # confs are in the spec's `configuration`, which the CLI sets on the session it builds
    conf = {"spark.jars": ",".join(delta_jars()),
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog"}
    command = [str(Path(pyspark.__file__).parent / "bin" / "spark-pipelines")]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    paths = [str(REPO_ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)), **environ}
    return subprocess.run(command + ["run", "--spec", str(spec)], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=timeout)


def run_pipeline(spark, root: Path, ticks: str) -> dict:
    """Run the example pipeline in ``root`` (recreated: the pipeline's storage, its tables, and a
    copy of its project whose spec names that storage) over the Delta table at ``ticks``;
    returns its tables' row counts, whether the materialized view equals the query run in
    ``spark``, and the CLI's last lines."""
    shutil.rmtree(root, ignore_errors=True)
    project = root / SPEC.parent.name  # a copy of the pipeline's project, its storage in root
    shutil.copytree(SPEC.parent, project, ignore=shutil.ignore_patterns("__pycache__"))
    spec = project / SPEC.name
    spec.write_text(re.sub(r"(?m)^storage: .*$", f"storage: {(root / 'storage').as_uri()}", spec.read_text()))
    done = spark_pipelines(spec, root, {"SPARKCEP_EXAMPLE_TICKS": ticks})
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    report = {"ok": done.returncode == 0, "log": lines[-25:]}
    if not report["ok"]:
        return report
    tables = {name: spark.read.format("delta").load(str(root / "spark-warehouse" / name))
              for name in ("ticks_bronze", "rallies", "rallies_per_symbol")}
    report["rows"] = {name: df.count() for name, df in tables.items()}
    expected = spark.sql(RALLIES_SQL, ticks=spark.read.format("delta").load(ticks))
    report["equal"] = sorted(map(tuple, tables["rallies"].collect())) == sorted(map(tuple, expected.collect()))
    report["top"] = [tuple(r) for r in tables["rallies_per_symbol"].orderBy("symbol").limit(3).collect()]
    return report
