"""Where sparkcep is not installed: ``local[2]`` and a ``local-cluster[2,1,1024]`` whose workers
run a Python without sparkcep (``enable()`` ships the packages), a batch query and a stream, in
subprocesses with their own SparkSessions; workers whose Python lacks numpy.  (The wheel
installed next to a platform's pyspark, running the README's quick start and the CLI
elsewhere: tests/test_compat.py.)"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

from deploy_support import bare_python, clean_env, imports_sparkcep
from udtf.errors import MatchRecognizeError


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
    sys.path[:0] = json.loads(sys.argv[2])  # the checkout, for the driver only (the workers lack it)
    from pyspark.sql import SparkSession
    import sql_ext
    from deploy_support import stream_and_batch
    builder = (SparkSession.builder.master(sys.argv[1]).appName("sparkcep-cluster-test")
               .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "6").config("spark.executor.memory", "512m"))
    spark = builder.getOrCreate()
    sql_ext.enable(spark)
    rows = [(k, t, (t * 7 + ord(k)) % 10) for k in "abcdefgh" for t in range(1, 41)]
    spark.createDataFrame(rows, "k string, t int, p int").createOrReplaceTempView("events")
    result = sorted(map(list, spark.sql(sys.stdin.read(), args={"slack": 0}).collect()), key=str)
    streamed, batch = stream_and_batch(spark, sys.argv[3])
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    shipped = [p for p in spark.sparkContext._python_includes if "sparkcep-" in p]
    print(json.dumps({"executors": executors, "rows": result, "shipped": shipped,
                      "streamed": streamed, "batch": batch}, default=str))
    spark.stop()
""")
CHECKOUT = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]


def _run_cluster_script(master: str, workdir: Path, worker_python: str) -> dict:
    import pyspark

    # the driver is this Python, the checkout first on its path; PYSPARK_PYTHON is the
    # executors' Python; no PYTHONPATH: the executors (launched with the driver's environment)
    # must not find sparkcep
    env = clean_env(SPARK_HOME=os.path.dirname(pyspark.__file__), PYSPARK_PYTHON=worker_python)
    done = subprocess.run([sys.executable, "-c", CLUSTER_SCRIPT, master, json.dumps(CHECKOUT),
                           str(workdir / master.split("[")[0])], input=CLUSTER_QUERY,
                          env=env, cwd=workdir, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_cluster_whose_workers_lack_sparkcep(tmp_path):
    """``local-cluster[2,1,1024]`` starts a standalone master and two executor JVMs from
    pyspark's own SPARK_HOME; their Python workers run a Python that cannot import sparkcep,
    so ``enable()`` ships the zip (``addPyFile``).  Partitions are spread over both executors;
    the rows equal those of ``local[2]`` (whose workers get the zip too).  On both, a stream
    (``sql_ext.stream``: three micro-batches, six shards) gives the batch query's rows: the
    streaming operator's executor-side Python workers import ``udtf`` from the zip, and
    Spark's driver-side worker for ``transformWithState``, which does not see it, needs none."""
    python = bare_python(tmp_path / "bare-venv")
    assert not imports_sparkcep(python, tmp_path)
    local = _run_cluster_script("local[2]", tmp_path, python)
    cluster = _run_cluster_script("local-cluster[2,1,1024]", tmp_path, python)
    assert cluster["executors"] == 2 and cluster["shipped"] and local["shipped"]
    assert cluster["rows"] == local["rows"]
    assert len(local["rows"]) == 8 * 40
    for run in (local, cluster):
        assert run["streamed"] == run["batch"] and len(run["batch"]) > 5


def test_workers_without_numpy_are_refused_with_what_to_set(spark, tmp_path, monkeypatch):
    """A venv used without activating it leaves pyspark's workers on a ``python3`` that lacks
    numpy: the probe of a local master's workers names the interpreter and PYSPARK_PYTHON instead
    of letting the query die in a worker with ``No module named 'numpy'``."""
    from sql_ext.spark import shipping

    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)  # no site-packages of ours: no numpy, no pyarrow
    monkeypatch.setenv("PYSPARK_PYTHON", str(bare / "bin" / "python"))
    with pytest.raises(MatchRecognizeError) as raised:
        shipping.needed(spark)
    message = str(raised.value)
    assert f"run {bare / 'bin' / 'python'} (PYSPARK_PYTHON), which cannot import numpy, pyarrow" in message
    assert f"Set PYSPARK_PYTHON to a Python that has them (this one: {sys.executable})" in message
