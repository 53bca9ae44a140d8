"""Deterministic example data for the SQL examples, the demo and the tests.

Every generator is a pure function of its arguments (``random.Random(seed)``, no clock,
no global state) and returns ``(schema, rows)``: a Spark DDL schema string and a list of
tuples.  Timestamps are timezone-aware UTC datetimes, so the data does not depend on the
machine's time zone.  ``TABLES`` maps each table name used by ``sql_examples/*.sql`` to its
generator; ``write_tables`` stores them as Delta tables.

The defaults are sized so that the whole demo runs in a couple of minutes on 2 cores; the
tests call the same generators with smaller arguments or use hand-made rows.
"""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from decimal import Decimal

T0 = datetime(2024, 3, 4, 8, 0, tzinfo=timezone.utc)  # Monday 08:00 UTC


def _ts(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


# --------------------------------------------------------------------------------------
# Stock ticks: v_shape_ticker.sql, sase_q3_rising_trend.sql
# --------------------------------------------------------------------------------------
STOCK_SCHEMA = "symbol STRING, ts TIMESTAMP, price DECIMAL(10,2), volume INT"


def stock_ticks(symbols: int = 12, ticks: int = 600, seed: int = 11):
    """One tick per minute per symbol: a random walk whose drift changes every 5-40 ticks
    (so there are dips, recoveries and rising runs), volumes 300..3000."""
    rng = random.Random(seed)
    rows = []
    for s in range(symbols):
        symbol = f"SYM{s:02d}"
        price = rng.uniform(20, 200)
        drift, left = 0.0, 0
        for i in range(ticks):
            if left == 0:
                drift, left = rng.choice([-0.6, -0.3, 0.0, 0.3, 0.6]), rng.randint(5, 40)
            left -= 1
            price = max(1.0, price * (1 + drift / 100 + rng.gauss(0, 0.004)))
            volume = int(rng.triangular(300, 3000, 1000))
            rows.append((symbol, _ts(60 * i), Decimal(f"{price:.2f}"), volume))
    return STOCK_SCHEMA, rows


# --------------------------------------------------------------------------------------
# RFID readings: sase_q1_shoplifting.sql
# --------------------------------------------------------------------------------------
RFID_SCHEMA = "tag_id STRING, ts TIMESTAMP, reader STRING"


def rfid_readings(tags: int = 4000, seed: int = 1):
    """Per tag: one or two shelf readings, usually a register reading, and usually an exit
    reading; some exits come more than 12 hours after the shelf reading."""
    rng = random.Random(seed)
    rows = []
    for t in range(tags):
        tag = f"tag{t:05d}"
        at = rng.randrange(0, 10 * 3600)
        rows.append((tag, _ts(at), "shelf"))
        if rng.random() < 0.15:  # picked up again
            at += rng.randrange(60, 3600)
            rows.append((tag, _ts(at), "shelf"))
        if rng.random() < 0.85:  # paid
            at += rng.randrange(60, 5400)
            rows.append((tag, _ts(at), "register"))
        r = rng.random()
        if r < 0.90:  # leaves the store, mostly soon, sometimes the next day
            at += rng.randrange(60, 3600) if rng.random() < 0.9 else rng.randrange(13 * 3600, 20 * 3600)
            rows.append((tag, _ts(at), "exit"))
    return RFID_SCHEMA, rows


# --------------------------------------------------------------------------------------
# Supply chain: sase_q2_contamination.sql
# --------------------------------------------------------------------------------------
SUPPLY_SCHEMA = ("line STRING, event_id INT, ts TIMESTAMP, kind STRING, alert_type STRING, "
                 "site STRING, src STRING, dst STRING")


def supply_events(lines: int = 4, sites: int = 10, shipments: int = 120, alerts: int = 3,
                  seed: int = 2):
    """Per product line: ``shipments`` shipments between ``sites`` sites, one every ~2-5
    minutes, plus ``alerts`` alerts (most of type 'contaminated') at random sites."""
    rng = random.Random(seed)
    rows = []
    event_id = 0
    for line_no in range(lines):
        line = f"line{line_no}"
        events = []
        at = 0.0
        for _ in range(shipments):
            at += rng.uniform(120, 300)
            src = rng.randrange(sites)
            dst = (src + rng.randrange(1, sites)) % sites
            events.append((at, "shipment", None, None, f"S{src}", f"S{dst}"))
        for _ in range(alerts):
            kind = "contaminated" if rng.random() < 0.8 else "temperature"
            events.append((rng.uniform(0, at), "alert", kind, f"S{rng.randrange(sites)}", None, None))
        events.sort(key=lambda e: e[0])
        for at, kind, alert_type, site, src, dst in events:
            event_id += 1
            rows.append((line, event_id, _ts(round(at)), kind, alert_type, site, src, dst))
    return SUPPLY_SCHEMA, rows


# --------------------------------------------------------------------------------------
# The paper's e-commerce events: flinkcep_ecommerce.sql
# --------------------------------------------------------------------------------------
PAPER_SCHEMA = "id INT, name INT, price INT"


def paper_events():
    """Fu & Wu, Example 1: e(1,1,2) e(2,2,5) e(3,1,6) e(4,3,2) e(5,1,5)."""
    return PAPER_SCHEMA, [(1, 1, 2), (2, 2, 5), (3, 1, 6), (4, 3, 2), (5, 1, 5)]


# --------------------------------------------------------------------------------------
# Clickstream: web_funnel.sql, web_sessions.sql, the incremental run
# --------------------------------------------------------------------------------------
CLICKS_SCHEMA = "user_id STRING, ts TIMESTAMP, event_type STRING, product_id INT, arrival_ts TIMESTAMP"


def clicks(users: int = 1000, seed: int = 7):
    """Per user 1-5 visits separated by 10 minutes to 2 days; a visit is a random walk over
    view / add_to_cart / checkout / page clicks 5 s .. 8 min apart.  ``ts`` is strictly
    increasing per user (whole seconds); ``arrival_ts`` = ts + 0..15 minutes of ingestion
    delay (the incremental demo loads the data in arrival order, so late rows happen)."""
    rng = random.Random(seed)
    rows = []
    for u in range(users):
        user = f"u{u:05d}"
        at = rng.randrange(0, 24 * 3600)
        for _ in range(rng.randint(1, 5)):
            product = rng.randrange(1, 40)
            state = "page"
            for _ in range(rng.randint(1, 14)):
                r = rng.random()
                if state in ("page", "checkout"):
                    state = "view" if r < 0.6 else "page"
                elif state == "view":
                    state = "add_to_cart" if r < 0.35 else "view" if r < 0.75 else "page"
                elif state == "add_to_cart":
                    state = "checkout" if r < 0.5 else "view"
                if state == "view" and rng.random() < 0.4:
                    product = rng.randrange(1, 40)
                pid = product if state in ("view", "add_to_cart") else None
                arrival = at + rng.randrange(0, 900)
                rows.append((user, _ts(at), state, pid, _ts(arrival)))
                at += rng.choice([rng.randrange(5, 60), rng.randrange(60, 480)])
            at += rng.choice([rng.randrange(600, 1800), rng.randrange(1801, 4 * 3600),
                              rng.randrange(4 * 3600, 2 * 86400)])
    return CLICKS_SCHEMA, rows


# --------------------------------------------------------------------------------------
# Sensor readings: sensor_incidents.sql (event hierarchy) and the dbt models
# --------------------------------------------------------------------------------------
SENSOR_SCHEMA = "zone STRING, sensor_id STRING, ts TIMESTAMP, temperature DOUBLE, smoke DOUBLE"


def sensor_readings(zones: int = 6, sensors: int = 4, minutes: int = 360, seed: int = 5):
    """Every sensor reads every 30 s: temperature ~21 C and smoke ~0.02 plus noise, with
    injected heat episodes (>= 60 C for 1-8 minutes) and smoke episodes (>= 0.3 for 1-6
    minutes); in some zones a smoke episode follows a heat episode within minutes."""
    rng = random.Random(seed)
    steps = minutes * 2
    rows = []
    for z in range(zones):
        zone = f"zone{z}"
        episodes = {f"{zone}-s{s}": [] for s in range(sensors)}
        ids = sorted(episodes)
        for _ in range(rng.randint(1, 4)):  # fires: heat at one sensor, smoke at another soon after
            start = rng.randrange(0, max(1, steps - 40))
            heat, smoke = rng.sample(ids, 2)
            episodes[heat].append(("heat", start, start + rng.randint(2, 16)))
            s0 = start + rng.randint(1, 14)
            episodes[smoke].append(("smoke", s0, s0 + rng.randint(2, 12)))
        for _ in range(rng.randint(0, 3)):  # isolated heat or smoke (no incident)
            kind = rng.choice(["heat", "smoke"])
            start = rng.randrange(0, max(1, steps - 20))
            episodes[rng.choice(ids)].append((kind, start, start + rng.randint(2, 12)))
        for sensor in ids:
            for step in range(steps):
                temperature = 21 + rng.gauss(0, 1.5)
                smoke = max(0.0, rng.gauss(0.02, 0.02))
                for kind, start, end in episodes[sensor]:
                    if start <= step < end:
                        if kind == "heat":
                            temperature = rng.uniform(60, 90)
                        else:
                            smoke = rng.uniform(0.3, 0.9)
                rows.append((zone, sensor, _ts(30 * step), round(temperature, 1), round(smoke, 3)))
    return SENSOR_SCHEMA, rows


# --------------------------------------------------------------------------------------
# Alarms with a duration: alarm_escalations.sql (interval rows, PERIOD)
# --------------------------------------------------------------------------------------
ALARM_INTERVALS_SCHEMA = "sensor STRING, a_start TIMESTAMP, a_end TIMESTAMP, sev STRING"


def alarm_intervals(sensors: int = 40, count: int = 300, seed: int = 3):
    """Per sensor, ``count`` alarms [a_start, a_end] lasting 0-10 minutes, ending 10 s to 5
    minutes apart (distinct ends: the order by end has no ties), so they overlap; severity
    'I' (info), 'W' (warning) or 'C' (critical)."""
    rng = random.Random(seed)
    rows = []
    for k in range(sensors):
        end = rng.randrange(0, 600)
        for _ in range(count):
            end += rng.randint(10, 300)
            rows.append((f"s{k}", _ts(end - rng.randint(0, 600)), _ts(end), rng.choice("IIWWC")))
    return ALARM_INTERVALS_SCHEMA, rows


TABLES = {
    "stock_ticks": stock_ticks,
    "rfid_readings": rfid_readings,
    "supply_events": supply_events,
    "paper_events": paper_events,
    "clicks": clicks,
    "sensor_readings": sensor_readings,
    "alarm_intervals": alarm_intervals,
}


def dataframe(spark, generated):
    schema, rows = generated
    return spark.createDataFrame(rows, schema)


def save_delta(df, name: str, location=None):
    """Write ``df`` as the Delta table ``name`` with overwrite semantics.

    With ``location`` the table is external: the data goes to that folder (a new Delta
    version that replaces the rows, so re-running never duplicates them) and ``name`` is
    (re)registered in the session catalog.  Without it, a managed table is (re)created.
    """
    writer = df.write.format("delta").mode("overwrite").option("overwriteSchema", "true")
    if location is None:
        writer.saveAsTable(name)
        return
    writer.save(str(location))
    spark = df.sparkSession
    spark.sql(f"DROP TABLE IF EXISTS {name}")  # only the catalog entry: the table is external
    spark.sql(f"CREATE TABLE {name} USING DELTA LOCATION '{location}'")


def write_tables(spark, location_root=None, names=None) -> dict:
    """Generate every example table (or ``names``) and store it as Delta; returns row counts."""
    counts = {}
    for name, generator in TABLES.items():
        if names is not None and name not in names:
            continue
        generated = generator()
        save_delta(dataframe(spark, generated), name,
                   None if location_root is None else f"{location_root}/{name}")
        counts[name] = len(generated[1])
    return counts
