"""The dbt project in sql_examples/dbt, run in-process with sparkcep enabled."""
from __future__ import annotations

import pytest

from sql_examples import data

pytest.importorskip("dbt.cli.main", reason="dbt-core / dbt-spark not installed (pip install -e '.[dbt]')")

from test_examples import collect, hhmm, sensor_rows  # noqa: E402  (tests/ is on sys.path)


@pytest.mark.slow
def test_dbt_run_builds_the_match_recognize_models(spark, tmp_path):
    import sql_ext
    from sql_examples.dbt_run import run_dbt

    sql_ext.enable(spark)
    # The source table, managed Delta table default.sensor_readings with hand-made readings.
    data.save_delta(spark.createDataFrame(sensor_rows(), data.SENSOR_SCHEMA), "sensor_readings")
    try:
        result = run_dbt(spark, ["run"], artifacts_dir=tmp_path)
        assert result.success, result.exception
        statuses = {r.node.name: str(r.status) for r in result.result}
        assert statuses == {"stg_sensor_readings": "success", "alarms": "success", "incidents": "success"}

        for table in ("alarms", "incidents"):
            detail = spark.sql(f"DESCRIBE DETAIL sparkcep_dbt.{table}").first()
            assert detail["format"] == "delta", table

        alarms = sorted(collect(spark.sql(
            "SELECT zone, sensor_id, alarm_type, alarm_start, alarm_end, readings FROM sparkcep_dbt.alarms")))
        assert alarms == [
            ("z1", "a", "heat", hhmm(seconds=0), hhmm(seconds=60), 3),
            ("z1", "b", "smoke", hhmm(seconds=90), hhmm(seconds=120), 2),
            ("z2", "a", "heat", hhmm(seconds=120), hhmm(seconds=180), 3),
            ("z2", "b", "smoke", hhmm(seconds=0), hhmm(seconds=30), 2),
            ("z3", "a", "heat", hhmm(seconds=0), hhmm(seconds=270), 10),
            ("z3", "b", "smoke", hhmm(seconds=600), hhmm(seconds=660), 3),
            ("z4", "a", "heat", hhmm(seconds=0), hhmm(seconds=60), 3),
        ]
        # the second model reads the first (ref('alarms')): same answer as sensor_incidents.sql
        incidents = collect(spark.table("sparkcep_dbt.incidents"))
        assert incidents == [
            ("z1", "a", "b", hhmm(seconds=0), hhmm(seconds=60), hhmm(seconds=90), hhmm(seconds=120)),
        ]

        # running again replaces the tables (no duplicated rows)
        assert run_dbt(spark, ["run", "--select", "alarms"], artifacts_dir=tmp_path).success
        assert spark.table("sparkcep_dbt.alarms").count() == len(alarms)
    finally:
        spark.sql("DROP TABLE IF EXISTS sensor_readings")
        spark.sql("DROP SCHEMA IF EXISTS sparkcep_dbt CASCADE")
