"""Local SparkSession for tests, the demo and benchmarks.

``get_spark()`` builds (or returns the already running) local SparkSession with
Delta Lake enabled and Arrow turned on, logging as ``sql_ext/spark/log4j2.properties`` says
(warnings that are real problems only).  The Delta jars come from the project-local
``.jars/`` folder that ``make jars`` fills from Maven Central, so starting a session needs
no network.  ``SPARKCEP_JARS_DIR`` overrides the folder; ``SPARKCEP_DELTA=0`` starts the
session without Delta (the compatibility tier's Spark versions have no Delta jars here).

Ivy (``spark.jars.packages`` / ``delta.configure_spark_with_delta_pip``) is not
used: the pip package is 4.4.x but Maven Central's newest Delta jar may lag
behind it, Ivy breaks when ~/.m2 holds a POM without its jar, and it would put
old duplicates of Spark's own jars (hadoop-client, parquet, jackson) on the
classpath.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
LOG4J2 = REPO_ROOT / "sql_ext" / "spark" / "log4j2.properties"


def jars_dir() -> Path:
    return Path(os.environ.get("SPARKCEP_JARS_DIR") or REPO_ROOT / ".jars")


def delta_jars() -> list[str]:
    """The jar files in the project jar folder (sorted, absolute paths)."""
    return sorted(glob.glob(str(jars_dir() / "*.jar")))


def _fresh_warehouse() -> Path:
    base = REPO_ROOT / ".spark-warehouse"
    base.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=f"run-{os.getpid()}-", dir=base))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def get_spark(
    app_name: str = "sparkcep",
    cores: int = 2,
    *,
    warehouse_dir: str | os.PathLike | None = None,
    driver_memory: str = "4g",
    extra_conf: dict[str, str] | None = None,
    delta: bool | None = None,
):
    """Return a local SparkSession with Delta (unless ``delta`` is False; None: unless
    ``SPARKCEP_DELTA=0``) and Arrow enabled.

    A SparkSession is a per-process singleton: if one is already running it is
    returned as is (its configuration is not changed).

    ``warehouse_dir``: where managed tables go.  By default a fresh folder under
    ``<repo>/.spark-warehouse/`` that is deleted when the process exits (the
    catalog is in-memory, so tables would not survive the process anyway and a
    leftover table folder would make the next ``saveAsTable`` fail).
    """
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # Local mode only: bind to loopback (also silences the hostname warning).
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Workers must be able to import the project's packages (udtf/...).
    pythonpath = os.environ.get("PYTHONPATH", "")
    if str(REPO_ROOT) not in pythonpath.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), pythonpath) if p)

    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active

    warehouse = Path(warehouse_dir) if warehouse_dir is not None else _fresh_warehouse()
    warehouse.mkdir(parents=True, exist_ok=True)
    derby_home = REPO_ROOT / ".spark-warehouse" / "derby"
    derby_home.mkdir(parents=True, exist_ok=True)

    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app_name)
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.shuffle.partitions", "4")
        # Delta's log replay defaults to 50 partitions (cluster sizing); local runs want few.
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.default.parallelism", str(cores))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={derby_home} -Duser.timezone=UTC "
                f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}")
        .config("spark.executor.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.python.worker.faulthandler.enabled", "true")
        .config("spark.sql.execution.pyspark.udf.faulthandler.enabled", "true")
    )

    if delta is None:
        delta = os.environ.get("SPARKCEP_DELTA", "1") != "0"
    if delta:
        jars = delta_jars()
        if not any(Path(j).name.startswith("delta-spark_") for j in jars):
            raise RuntimeError(
                f"no Delta Lake jars in {jars_dir()}: run `make jars` first "
                "(or point SPARKCEP_JARS_DIR at a folder holding them)"
            )
        builder = (builder.config("spark.jars", ",".join(jars))
                   .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                   .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"))

    for key, value in (extra_conf or {}).items():
        builder = builder.config(key, value)

    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark
