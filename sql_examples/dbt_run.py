"""Run the dbt project in ``sql_examples/dbt`` with sparkcep enabled, in-process.

    python -m sql_examples.dbt_run                 # dbt run
    python -m sql_examples.dbt_run build           # any dbt command and flags

dbt-spark's ``method: session`` executes every statement with
``SparkSession.builder.enableHiveSupport().getOrCreate().sql(sql)``
(``dbt/adapters/spark/session.py``, ``Cursor.execute``).  In a process that already has a
SparkSession, ``getOrCreate()`` returns that very Python object (it only re-applies the
runtime-modifiable options; the static ``catalogImplementation=hive`` is ignored), so if
the session was built first and ``sql_ext.enable(spark)`` replaced its ``sql`` method,
every model's SQL - ``create or replace table ... using delta as <model>`` - goes through
sparkcep's rewrite.  dbt is then invoked in the same process through its documented
programmatic entry point ``dbt.cli.main.dbtRunner().invoke(args)``.  No dbt code is
patched.  (With ``dbt run`` from a shell, dbt would create a plain session of its own and
MATCH_RECOGNIZE would be a syntax error.)
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent / "dbt"


def run_dbt(spark, args=None, artifacts_dir=None):
    """Invoke dbt (default ``run``) on the example project against ``spark``; returns
    dbt's ``dbtRunnerResult``.  The source table ``sensor_readings`` is generated first if
    the session does not have it.  ``artifacts_dir``: dbt's target/ and logs/ folders
    (default: ``<repo>/.spark-warehouse/dbt``)."""
    import sql_ext

    sql_ext.enable(spark)
    if not spark.catalog.tableExists("sensor_readings"):
        from .data import write_tables

        write_tables(spark, names={"sensor_readings"})
    artifacts = Path(artifacts_dir) if artifacts_dir else PROJECT_DIR.parent.parent / ".spark-warehouse" / "dbt"
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    from dbt.cli.main import dbtRunner

    args = list(args or ["run"])
    return dbtRunner().invoke([
        *args,
        "--project-dir", str(PROJECT_DIR),
        "--profiles-dir", str(PROJECT_DIR),
        "--target-path", str(artifacts / "target"),
        "--log-path", str(artifacts / "logs"),
    ])


def main(argv=None) -> int:
    from .local_spark import get_spark

    spark = get_spark(app_name="sparkcep-dbt")
    result = run_dbt(spark, argv if argv else ["run"])
    if result.success:
        for table in ("alarms", "incidents"):
            spark.table(f"sparkcep_dbt.{table}").show(5, truncate=False)
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
