"""The SQL examples (sql_examples/*.sql) on small hand-checked data, the demo's Delta
writes (idempotence) and the incremental driver (equivalence with a full re-run)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from sql_examples import data
from sql_examples.demo import example_files, read_sql, run_example

EXAMPLES = Path(data.__file__).resolve().parent
T0 = datetime(2024, 1, 1, 8, 0, tzinfo=timezone.utc)


def at(minutes: float = 0, seconds: float = 0) -> datetime:
    return T0 + timedelta(minutes=minutes, seconds=seconds)


def hhmm(minutes: float = 0, seconds: float = 0) -> str:
    """What CAST(ts AS STRING) prints for at(minutes, seconds) (session time zone UTC)."""
    return at(minutes, seconds).strftime("%Y-%m-%d %H:%M:%S")


@pytest.fixture(scope="module")
def sess(spark):
    import sql_ext

    sql_ext.enable(spark)
    return spark


@pytest.fixture
def views(sess):
    """Register temp views (name -> (schema, rows)); dropped after the test."""
    created = []

    def make(name, schema, rows):
        sess.createDataFrame(rows, schema).createOrReplaceTempView(name)
        created.append(name)

    yield make
    for name in created:
        sess.catalog.dropTempView(name)


def run_file(spark, name: str) -> list[tuple]:
    """Run sql_examples/<name>.sql; timestamps as strings, rows as tuples (query order)."""
    df = spark.sql(read_sql(EXAMPLES / f"{name}.sql"))
    return collect(df)


def collect(df) -> list[tuple]:
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    cols = [F.col(f.name).cast("string").alias(f.name) if isinstance(f.dataType, TimestampType)
            else F.col(f.name) for f in df.schema.fields]
    return [tuple(r) for r in df.select(cols).collect()]


def test_every_example_names_its_data():
    files = example_files()
    assert {p.stem for p in files} >= {
        "v_shape_ticker", "sase_q1_shoplifting", "sase_q2_contamination", "sase_q3_rising_trend",
        "flinkcep_ecommerce", "web_funnel", "web_sessions", "sensor_incidents", "sensor_incidents_layers",
        "price_runs_window", "alarm_escalations"}
    for path in files:
        text = path.read_text()
        assert text.startswith("--"), path.name
        header = text.split("SELECT")[0].split("WITH alarms")[0]
        assert "Data:" in header and "sql_examples/data.py" in header, path.name
        assert any(f"{table}(" in header for table in data.TABLES), path.name


def test_v_shape_ticker(sess, views):
    prices = {"A": [10, 9, 8, 9, 10, 11, 7, 6, 8, 9, 5], "B": [5, 4, 5], "C": [1, 2, 3]}
    rows = [(s, at(i), Decimal(p), 1000) for s, ps in prices.items() for i, p in enumerate(ps)]
    views("stock_ticks", data.STOCK_SCHEMA, rows)
    got = run_file(sess, "v_shape_ticker")
    assert got == [
        # symbol, start, bottom, end, start/bottom/end price, drops, rises
        ("A", hhmm(0), hhmm(2), hhmm(5), Decimal("10.00"), Decimal("8.00"), Decimal("11.00"), 2, 3),
        ("A", hhmm(6), hhmm(7), hhmm(9), Decimal("7.00"), Decimal("6.00"), Decimal("9.00"), 1, 2),
        ("B", hhmm(0), hhmm(1), hhmm(2), Decimal("5.00"), Decimal("4.00"), Decimal("5.00"), 1, 1),
    ]


def test_price_runs_window(sess, views):
    prices = {"A": [10, 9, 8, 9, 10, 11, 7, 6, 8, 9, 5], "B": [5, 4, 5], "C": [1, 2, 3]}
    rows = [(s, at(i), Decimal(p), 100 + i) for s, ps in prices.items() for i, p in enumerate(ps)]
    views("stock_ticks", data.STOCK_SCHEMA, rows)
    got = run_file(sess, "price_runs_window")
    none = (None, None, 0, None, None)
    lows = {"A": [10, 9, 8, 8, 8, 8, 7, 6, 6, 6, 5], "B": [5, 4, 4], "C": [1, 1, 1]}
    runs = {("A", 0): (hhmm(2), hhmm(5), 6, Decimal("11.00"), 615), ("A", 6): (hhmm(7), hhmm(9), 4, Decimal("9.00"), 430),
            ("B", 0): (hhmm(1), hhmm(2), 3, Decimal("5.00"), 303)}
    # symbol, ts, price, the run starting there (bottom, end, ticks, high, volume), the low of 5 ticks
    assert got == [(s, hhmm(i), Decimal(p), *runs.get((s, i), none), Decimal(lows[s][i]))
                   for s, ps in prices.items() for i, p in enumerate(ps)]


def test_sase_q1_shoplifting(sess, views):
    events = [
        ("t1", 0, "shelf"), ("t1", 30, "exit"),                                # stolen
        ("t2", 0, "shelf"), ("t2", 10, "register"), ("t2", 20, "exit"),        # paid
        ("t3", 0, "shelf"), ("t3", 13 * 60, "exit"),                           # exit after 13 h
        ("t4", 0, "shelf"), ("t4", 5, "shelf"), ("t4", 50, "exit"),            # picked up twice
        ("t5", 0, "shelf"), ("t5", 5, "register"), ("t5", 10, "shelf"), ("t5", 20, "exit"),
        ("t6", 0, "shelf"), ("t6", 11 * 60, "shelf"), ("t6", 14 * 60, "exit"),  # 2nd shelf in window
        ("t7", 0, "shelf"), ("t7", 5, "exit"), ("t7", 6, "shelf"), ("t7", 7, "register"), ("t7", 9, "exit"),
    ]
    views("rfid_readings", data.RFID_SCHEMA, [(t, at(m), r) for t, m, r in events])
    assert run_file(sess, "sase_q1_shoplifting") == [
        ("t1", hhmm(0), hhmm(30)),
        ("t4", hhmm(0), hhmm(50)),
        ("t5", hhmm(10), hhmm(20)),
        ("t6", hhmm(11 * 60), hhmm(14 * 60)),
        ("t7", hhmm(0), hhmm(5)),
    ]


def test_sase_q2_contamination(sess, views):
    ev = [  # event_id, minute, kind, alert_type, site, src, dst
        (1, 0, "alert", "contaminated", "S1", None, None),
        (2, 5, "alert", "temperature", "S2", None, None),   # not a contamination: no chains
        (3, 10, "shipment", None, None, "S1", "S2"),
        (4, 20, "shipment", None, None, "S9", "S8"),
        (5, 30, "shipment", None, None, "S2", "S3"),
        (6, 40, "shipment", None, None, "S1", "S4"),
        (7, 50, "shipment", None, None, "S2", "S5"),
        (8, 300, "shipment", None, None, "S3", "S6"),       # continues S1->S2->S3, but after 3 h
    ]
    rows = [("L", i, at(m), k, ty, s, a, b) for i, m, k, ty, s, a, b in ev]
    rows += [("M", 100 + i, at(m), k, ty, s, a, b) for i, m, k, ty, s, a, b in ev[2:]]  # no alert
    views("supply_events", data.SUPPLY_SCHEMA, rows)
    got = [(r[1], r[4], r[5], r[6], r[7]) for r in run_file(sess, "sase_q2_contamination")]
    # alert, hops, first shipment, last shipment, reached site: every path from S1, each
    # shipment leaving where the previous one arrived (skip till any match).
    assert sorted(got) == [
        (1, 1, 3, 3, "S2"),
        (1, 1, 6, 6, "S4"),
        (1, 2, 3, 5, "S3"),
        (1, 2, 3, 7, "S5"),
    ]


def test_sase_q3_rising_trend(sess, views):
    ticks = [  # minute, price, volume
        (0, "10.00", 1500), (1, "11.00", 1200), (2, "10.80", 1100), (3, "12.00", 1300),
        (4, "10.00", 900), (5, "12.50", 1000), (6, "12.60", 700), (7, "9.00", 500),
        (8, "10.00", 2000), (9, "11.00", 2100), (10, "10.00", 1000),
        (11, "10.00", 900), (12, "20.00", 900),  # volume <= 1000: no trend starts here
    ]
    views("stock_ticks", data.STOCK_SCHEMA, [("X", at(m), Decimal(p), v) for m, p, v in ticks])
    got = run_file(sess, "sase_q3_rising_trend")
    # minute 2: 10.80 > avg(10, 11) = 10.5 joins the trend; minute 4 (10.00) is below the
    # average and skipped; minute 7 (volume 500 < 0.8 * 700) ends it.
    assert got == [
        ("X", hhmm(0), hhmm(6), 6, Decimal("10.00"), Decimal("12.60"), 700, hhmm(7), 500),
        ("X", hhmm(8), hhmm(9), 2, Decimal("10.00"), Decimal("11.00"), 2100, hhmm(10), 1000),
    ]


def test_flinkcep_ecommerce_paper_example(sess, views):
    views("paper_events", *data.paper_events())
    assert run_file(sess, "flinkcep_ecommerce") == [(1, 1, 1, 2), (3, 3, 1, 6), (5, 5, 1, 5)]


def test_web_funnel(sess, views):
    clicks = [
        ("u1", 0, "view", 1), ("u1", 1, "view", 2), ("u1", 2, "add_to_cart", 2),
        ("u1", 5, "page", None), ("u1", 8, "checkout", None),                 # p2 funnel
        ("u2", 0, "view", 3), ("u2", 10, "add_to_cart", 3), ("u2", 31, "checkout", None),  # > 30 min
        ("u3", 0, "view", 4), ("u3", 1, "add_to_cart", 4), ("u3", 2, "checkout", None),
        ("u3", 3, "view", 4), ("u3", 4, "add_to_cart", 4), ("u3", 9, "checkout", None),
        ("u4", 0, "view", 5), ("u4", 1, "add_to_cart", 6), ("u4", 2, "checkout", None),  # other product
    ]
    views("clicks", data.CLICKS_SCHEMA, [(u, at(m), e, p, at(m)) for u, m, e, p in clicks])
    assert run_file(sess, "web_funnel") == [
        ("u1", hhmm(1), hhmm(8), 2, hhmm(2), 7 * 60),
        ("u3", hhmm(0), hhmm(2), 4, hhmm(1), 2 * 60),
        ("u3", hhmm(3), hhmm(9), 4, hhmm(4), 6 * 60),
    ]


def test_web_sessions(sess, views):
    clicks = [("u", 0, "view"), ("u", 5, "add_to_cart"), ("u", 20, "checkout"), ("u", 50, "view"),
              ("u", 80, "view"), ("u", 111, "page"), ("v", 0, "page")]
    views("clicks", data.CLICKS_SCHEMA, [(u, at(m), e, None, at(m)) for u, m, e in clicks])
    assert run_file(sess, "web_sessions") == [
        # session_no, start, end, clicks, views, carts, checkouts
        ("u", 1, hhmm(0), hhmm(80), 5, 3, 1, 1),   # gaps of 5, 15, 30, 30 minutes: one session
        ("u", 2, hhmm(111), hhmm(111), 1, 0, 0, 0),  # 31 minutes later: a new one
        ("v", 1, hhmm(0), hhmm(0), 1, 0, 0, 0),
    ]


def sensor_rows():
    """Hand-made readings every 30 s (h = hot reading, s = smoky reading, . = normal)."""
    def series(zone, sensor, pattern, start_step=0):
        out = []
        for i, ch in enumerate(pattern):
            temperature = 70.0 if ch == "h" else 21.0
            smoke = 0.5 if ch == "s" else 0.01
            out.append((zone, sensor, at(seconds=30 * (start_step + i)), temperature, smoke))
        return out

    return (
        # z1: heat alarm at a (0..60 s), smoke alarm at b (90..120 s): an incident
        series("z1", "a", "hhh.......")
        + series("z1", "b", "...ss.....")
        # z2: smoke before heat: no incident (order)
        + series("z2", "a", "....hhh...")
        + series("z2", "b", "ss........")
        # z3: heat alarm 0..270 s, smoke alarm 600..660 s: the alarms' detection times are
        # 390 s apart (inside WITHIN 10 minutes) but the incident would span 660 s > 600 s
        + series("z3", "a", "hhhhhhhhhh" + "." * 14)
        + series("z3", "b", "." * 20 + "sss.")
        # z4: a heat alarm only (2 hot readings are not an alarm at c)
        + series("z4", "a", "hhh.")
        + series("z4", "c", ".hh.")
    )


def test_sensor_incidents_two_layers(sess, views):
    views("sensor_readings", data.SENSOR_SCHEMA, sensor_rows())
    got = run_file(sess, "sensor_incidents")
    assert got == [
        # zone, heat sensor, smoke sensor, incident start, heat end, smoke start, incident end
        ("z1", "a", "b", hhmm(seconds=0), hhmm(seconds=60), hhmm(seconds=90), hhmm(seconds=120)),
    ]


def test_sensor_incidents_in_one_statement_are_the_two_layers(sess, views):
    """sensor_incidents_layers.sql (LAYER alarm inside the clause) finds what the two nested
    MATCH_RECOGNIZE of sensor_incidents.sql find, on the hand-made and the generated data."""
    views("sensor_readings", data.SENSOR_SCHEMA, sensor_rows())
    assert run_file(sess, "sensor_incidents_layers") == run_file(sess, "sensor_incidents")
    views("sensor_readings", *data.sensor_readings(zones=3, sensors=3, minutes=90, seed=5))
    layered = run_file(sess, "sensor_incidents_layers")
    assert layered and layered == run_file(sess, "sensor_incidents")


def test_sensor_alarm_windows_bound_the_incident(sess, views):
    """Every incident of the generated data lies within 10 minutes and covers its alarms."""
    views("sensor_readings", *data.sensor_readings(zones=3, sensors=3, minutes=90, seed=5))
    df = sess.sql(read_sql(EXAMPLES / "sensor_incidents.sql"))
    rows = df.collect()
    assert rows, "the generator injects fires: expected incidents"
    for r in rows:
        assert r.incident_start <= r.heat_end <= r.incident_end
        assert r.smoke_start <= r.incident_end
        assert r.incident_end - r.incident_start <= timedelta(minutes=10)


def test_alarm_escalations_hand_data(sess, views):
    """docs/hierarchies.md's example 2: the warning at [5, 6] and the critical alarm at [0, 7]
    span 7 minutes from the earliest start, more than the 6 of WITHIN."""
    alarms = [(0, 2, "W"), (1, 5, "C"), (5, 6, "W"), (0, 7, "C"), (6, 9, "W"), (8, 10, "C")]
    views("alarm_intervals", data.ALARM_INTERVALS_SCHEMA, [("s1", at(s), at(e), sev) for s, e, sev in alarms])
    assert run_file(sess, "alarm_escalations") == [
        # sensor, warnings, critical start, escalation start, escalation end
        ("s1", 1, hhmm(1), hhmm(0), hhmm(5)), ("s1", 1, hhmm(8), hhmm(6), hhmm(10))]


def test_alarm_escalations_agree_with_the_oracle(sess, views):
    """On generated alarms (overlapping intervals), the escalations are the brute-force
    oracle's (tests/hierarchy_oracle.py) for ``W+ C`` within 6 minutes of the members' span."""
    import hierarchy_oracle as ho

    schema, rows = data.alarm_intervals(sensors=4, count=120)
    views("alarm_intervals", schema, rows)
    top = ho.Layer("top", "W+ C", define={"W": lambda e, m: e["sev"] == "W", "C": lambda e, m: e["sev"] == "C"},
                   within=timedelta(minutes=6))
    expected = []
    for sensor in sorted({r[0] for r in rows}):
        alarms = sorted(({"a_start": s, "a_end": e, "sev": sev} for k, s, e, sev in rows if k == sensor),
                        key=lambda r: r["a_end"])
        for event in ho.evaluate([top], ho.raw_events(alarms, "a_start", "a_end"))["top"]:
            c = event.members[-1].event
            expected.append((sensor, len(event.members) - 1, str(c.start.replace(tzinfo=None)),
                             str(event.start.replace(tzinfo=None)), str(event.end.replace(tzinfo=None))))
    got = run_file(sess, "alarm_escalations")
    assert len(got) > 10 and sorted(got) == sorted(expected)


# --------------------------------------------------------------------------------------
# Delta: the demo's writes are idempotent
# --------------------------------------------------------------------------------------
@pytest.mark.slow
def test_demo_writes_are_idempotent(sess, tmp_path):
    data.save_delta(data.dataframe(sess, data.paper_events()), "paper_events", str(tmp_path / "paper_events"))
    try:
        path = EXAMPLES / "flinkcep_ecommerce.sql"
        table, _ = run_example(sess, path, str(tmp_path))
        before = sorted(collect(sess.table(table)))
        data.save_delta(data.dataframe(sess, data.paper_events()), "paper_events", str(tmp_path / "paper_events"))
        again, _ = run_example(sess, path, str(tmp_path))
        after = sorted(collect(sess.table(again)))
        assert table == again == "match_flinkcep_ecommerce"
        assert before == after == [(1, 1, 1, 2), (3, 3, 1, 6), (5, 5, 1, 5)]
        assert sess.table("paper_events").count() == 5
        history = sess.sql(f"DESCRIBE HISTORY delta.`{tmp_path / 'match_flinkcep_ecommerce'}`").collect()
        assert len(history) == 2  # two overwrites of the same rows
    finally:
        sess.sql("DROP TABLE IF EXISTS paper_events")
        sess.sql("DROP TABLE IF EXISTS match_flinkcep_ecommerce")


def test_generators_are_deterministic():
    assert data.clicks(users=20) == data.clicks(users=20)
    assert data.sensor_readings(zones=1, minutes=10) == data.sensor_readings(zones=1, minutes=10)
    assert data.stock_ticks(symbols=2, ticks=10) == data.stock_ticks(symbols=2, ticks=10)
    assert data.alarm_intervals(sensors=2, count=10) == data.alarm_intervals(sensors=2, count=10)
    assert data.clicks(users=20, seed=1) != data.clicks(users=20, seed=2)


# --------------------------------------------------------------------------------------
# Incremental runs
# --------------------------------------------------------------------------------------
def _funnel_job(root):
    from sql_examples.incremental import IncrementalJob

    return IncrementalJob(sql=(EXAMPLES / "web_funnel.sql").read_text(), source="t_feed",
                          target="t_funnel", start_col="funnel_start", end_col="funnel_end",
                          target_location=str(root / "t_funnel"),
                          state_location=str(root / "t_funnel__state"))


@pytest.fixture
def feed(sess, tmp_path):
    from sql_examples.incremental import create_feed

    create_feed(sess, "t_feed", data.CLICKS_SCHEMA, str(tmp_path / "t_feed"))

    def append(rows):
        sess.createDataFrame(rows, data.CLICKS_SCHEMA).write.format("delta").mode("append").saveAsTable("t_feed")

    yield append
    for table in ("t_feed", "t_funnel", "t_funnel__state"):
        sess.sql(f"DROP TABLE IF EXISTS {table}")


def _full(sess, job):
    from sql_examples.incremental import INPUT_VIEW, analyze_query

    return sorted(collect(sess.sql(analyze_query(sess, job.sql).template.replace(INPUT_VIEW, job.source))))


@pytest.mark.slow
def test_incremental_straddling_and_late_rows(sess, feed, tmp_path):
    from sql_examples.incremental import run_incremental

    job = _funnel_job(tmp_path)
    c = lambda u, m, e, p=None: (u, at(m), e, p, at(m))  # noqa: E731
    feed([c("a", 0, "view", 1), c("a", 2, "add_to_cart", 1),        # a: checkout comes later
          c("b", 0, "view", 2), c("b", 2, "add_to_cart", 2), c("b", 5, "checkout"),
          c("d", 0, "view", 3), c("d", 1, "add_to_cart", 3), c("d", 3, "checkout")])
    stats = run_incremental(sess, job)
    assert stats["mode"] == "full"
    assert sorted(collect(sess.table("t_funnel"))) == [
        ("b", hhmm(0), hhmm(5), 2, hhmm(2), 300), ("d", hhmm(0), hhmm(3), 3, hhmm(1), 180)]
    feed([c("a", 20, "checkout"),                                     # completes a straddling funnel
          c("b", -1, "view", 2),                                      # late: b's funnel starts earlier
          c("e", 0, "view", 4), c("e", 1, "add_to_cart", 4)])         # new user, open attempt
    stats = run_incremental(sess, job)
    assert stats["mode"] == "incremental"
    assert stats["partitions"] == 3 and stats["matches_deleted"] == 1  # b's old match
    got = sorted(collect(sess.table("t_funnel")))
    assert got == [
        ("a", hhmm(0), hhmm(20), 1, hhmm(2), 1200),
        ("b", hhmm(-1), hhmm(5), 2, hhmm(2), 360),
        ("d", hhmm(0), hhmm(3), 3, hhmm(1), 180),   # untouched: no new rows for d
    ]
    assert got == _full(sess, job)
    assert run_incremental(sess, job)["mode"] == "up to date"


@pytest.mark.slow
def test_incremental_equals_full_rerun_on_generated_feed(sess, feed, tmp_path):
    """Several appends in arrival order (late rows included) give the full run's result;
    an increment replayed after a lost state write changes nothing."""
    from sql_examples.incremental import _save_state, run_incremental

    job = _funnel_job(tmp_path)
    _, rows = data.clicks(users=80, seed=3)
    rows.sort(key=lambda r: r[4])  # arrival order: the later batches hold late rows
    cuts = [0, len(rows) // 2, 3 * len(rows) // 4, len(rows)]
    modes = []
    for lo, hi in zip(cuts, cuts[1:]):
        feed(rows[lo:hi])
        modes.append(run_incremental(sess, job)["mode"])
    assert modes == ["full", "incremental", "incremental"]
    expected = _full(sess, job)
    assert len(expected) > 20
    assert sorted(collect(sess.table("t_funnel"))) == expected
    # replay the last increment (as if the state write after the MERGE had been lost)
    version = sess.sql("DESCRIBE HISTORY t_feed LIMIT 1").first()["version"]
    _save_state(sess, job, version - 1)
    assert run_incremental(sess, job)["mode"] == "incremental"
    assert sorted(collect(sess.table("t_funnel"))) == expected


def test_incremental_rejects_unsupported_queries(sess):
    from sql_examples.incremental import IncrementalError, analyze_query

    base = (EXAMPLES / "web_funnel.sql").read_text()
    with pytest.raises(IncrementalError, match="WITHIN"):
        analyze_query(sess, base.replace("WITHIN INTERVAL '30' MINUTE", ""))
    with pytest.raises(IncrementalError, match="SKIP PAST LAST ROW"):
        analyze_query(sess, base.replace("AFTER MATCH SKIP PAST LAST ROW", "AFTER MATCH SKIP TO NEXT ROW"))
    with pytest.raises(IncrementalError, match="MATCH_NUMBER"):
        analyze_query(sess, (EXAMPLES / "web_sessions.sql").read_text())
    shape = analyze_query(sess, base)
    assert shape.partition == ["user_id"] and shape.order_key == "ts"
    assert shape.within == timedelta(minutes=30)


@pytest.mark.slow
def test_the_declarative_pipeline_example(sess, tmp_path):
    """``spark-pipelines run`` on sql_examples/pipeline (its own local Spark Connect server):
    the streaming table holds every tick, and the materialized view with MATCH_RECOGNIZE equals
    the same query run in this session."""
    from sql_examples.sdp import run_pipeline

    ticks = str(tmp_path / "stock_ticks")
    data.save_delta(data.dataframe(sess, data.stock_ticks()), "stock_ticks", ticks)
    try:
        report = run_pipeline(sess, tmp_path / "pipeline", ticks)
    finally:
        sess.sql("DROP TABLE IF EXISTS stock_ticks")
    assert report["ok"], "\n".join(report["log"])
    assert report["equal"] and report["rows"]["rallies"] > 10
    assert report["rows"]["ticks_bronze"] == len(data.stock_ticks()[1])
    assert report["rows"]["rallies_per_symbol"] == len({row[0] for row in data.stock_ticks()[1]})
