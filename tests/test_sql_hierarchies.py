"""Event hierarchies in one statement (docs/hierarchies.md) through ``spark.sql``: SQL in, rows
out, against the worked examples and against the multi-layer oracle (tests/hierarchy_oracle.py)
on random hierarchies over random streams."""
from __future__ import annotations

import contextlib
import datetime as dt
import random
import re

import pytest

import hierarchy_oracle as ho
from spark_confs import session_confs
from udtf.errors import MatchRecognizeError
from sql_support import analysis_error, at, expansion, mr_spark, physical_plan, view  # noqa: F401  (mr_spark: a fixture)

T0 = dt.datetime(2026, 1, 1)


def minute(k: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=k)


def minutes(value: dt.datetime | None) -> int | None:
    return None if value is None else int((value - T0).total_seconds() // 60)


# ---- docs/hierarchies.md's worked examples --------------------------------------------------

EXAMPLE_1 = """SELECT * FROM readings MATCH_RECOGNIZE (
  PARTITION BY sensor ORDER BY ts
  LAYER spike AS (
    MEASURES MAX(temp) AS peak, COUNT(*) AS readings
    PATTERN (HOT{2,}) WITHIN INTERVAL '3' MINUTE
    DEFINE HOT AS kind = 'temp' AND temp >= 80)
  MEASURES EVENT_START(S) AS spike_start, S.peak AS peak, OFF.ts AS off_ts,
           MATCH_START() AS match_start, MATCH_END() AS match_end
  PATTERN (S OFF)
  DEFINE S FROM spike AS S.peak >= 90,
         OFF AS kind = 'fan_off') AS m"""


def _readings(spark, rows):
    view(spark, "readings", "sensor STRING, ts TIMESTAMP, kind STRING, temp INT",
         [("s1", minute(k), kind, temp) for k, kind, temp in rows])


def test_example_1_a_spike_then_the_fan_stopping(mr_spark):
    _readings(mr_spark, [(0, "temp", 70), (1, "temp", 85), (2, "temp", 90), (3, "temp", 88), (4, "fan_off", None),
                         (5, "temp", 95), (6, "temp", 96), (7, "temp", 50), (8, "fan_off", None)])
    rows = mr_spark.sql(EXAMPLE_1).collect()
    assert [(r.sensor, minutes(r.spike_start), r.peak, minutes(r.off_ts), minutes(r.match_start),
             minutes(r.match_end)) for r in rows] == [("s1", 1, 90, 4, 1, 4)]


EXAMPLE_3 = """SELECT * FROM readings MATCH_RECOGNIZE (
  PARTITION BY sensor ORDER BY ts
  LAYER spike AS (
    MEASURES MAX(temp) AS peak
    PATTERN (HOT{2,}) WITHIN INTERVAL '3' MINUTE
    DEFINE HOT AS kind = 'temp' AND temp >= 80),
  LAYER episode AS (
    MEASURES COUNT(*) AS spikes
    PATTERN (S1 S2) WITHIN INTERVAL '10' MINUTE
    DEFINE S1 FROM spike, S2 FROM spike)
  MEASURES MATCH_START() AS match_start, MATCH_END() AS match_end
  PATTERN (E R*? OFF) WITHIN INTERVAL '12' MINUTE
  DEFINE E FROM episode, OFF AS kind = 'fan_off') AS m"""


def test_example_3_three_layers_and_their_windows(mr_spark):
    temps = [(0, 85), (1, 86), (2, 60), (3, 90), (4, 91), (5, 40), (6, 30), (10, 85), (11, 88), (12, 50), (20, 92),
             (21, 93), (22, 10), (30, 85), (31, 86), (32, 50), (34, 90), (35, 95), (36, 20)]
    _readings(mr_spark, sorted([(k, "temp", t) for k, t in temps] + [(k, "fan_off", None) for k in (7, 24, 45)]))
    rows = mr_spark.sql(EXAMPLE_3).collect()
    assert [(minutes(r.match_start), minutes(r.match_end)) for r in rows] == [(0, 7)]


EXAMPLE_4 = """SELECT * FROM readings MATCH_RECOGNIZE (
  PARTITION BY sensor ORDER BY ts
  LAYER pair AS (
    MEASURES MATCH_NUMBER() AS pair_no
    AFTER MATCH SKIP TO NEXT ROW
    PATTERN (HOT HOT) DEFINE HOT AS temp >= 80),
  LAYER cooling AS (
    MEASURES MATCH_NUMBER() AS cool_no
    PATTERN (HOT COOL) DEFINE HOT AS temp >= 80, COOL AS temp < 80)
  MEASURES COUNT(P.*) AS pairs, FIRST(P.pair_no) AS first_pair, D.cool_no AS cool_no,
           MATCH_START() AS match_start, MATCH_END() AS match_end
  PATTERN (P+ D)
  DEFINE P FROM pair, D FROM cooling) AS m"""


def test_example_4_skip_modes_and_match_numbers_per_layer(mr_spark):
    _readings(mr_spark, [(k, "temp", t) for k, t in enumerate([85, 90, 95, 60, 88, 91, 50])])
    rows = mr_spark.sql(EXAMPLE_4).collect()
    assert [(r.pairs, r.first_pair, r.cool_no, minutes(r.match_start), minutes(r.match_end)) for r in rows] == [
        (2, 1, 1, 0, 3), (1, 3, 2, 4, 6)]


EXAMPLE_5 = """SELECT * FROM sensor_readings MATCH_RECOGNIZE (
  PARTITION BY zone ORDER BY ts
  LAYER alarm AS (
    PARTITION BY sensor
    MEASURES CASE WHEN COUNT(H.*) > 0 THEN 'heat' ELSE 'smoke' END AS kind
    PATTERN (H{2,} | S{2,}) WITHIN INTERVAL '5' MINUTE
    DEFINE H AS temp >= 60, S AS smoke >= 0.3)
  MEASURES HEAT.sensor AS heat_sensor, SMOKE.sensor AS smoke_sensor,
           MATCH_START() AS match_start, MATCH_END() AS match_end
  PATTERN (HEAT SMOKE) WITHIN INTERVAL '10' MINUTE
  DEFINE HEAT FROM alarm AS HEAT.kind = 'heat',
         SMOKE FROM alarm AS SMOKE.kind = 'smoke' AND SMOKE.sensor <> HEAT.sensor) AS i"""


def test_example_5_alarms_per_sensor_incidents_per_zone(mr_spark):
    readings = [(0, "s1", 65, 0.0), (1, "s2", 20, 0.4), (2, "s1", 66, 0.0), (3, "s2", 20, 0.5), (4, "s1", 30, 0.0),
                (5, "s2", 20, 0.0), (10, "s2", 20, 0.6), (11, "s2", 20, 0.7), (12, "s2", 20, 0.0), (20, "s1", 70, 0.0),
                (21, "s1", 71, 0.0), (22, "s1", 20, 0.0), (30, "s2", 20, 0.3), (31, "s2", 20, 0.3), (32, "s2", 20, 0.0)]
    view(mr_spark, "sensor_readings", "zone STRING, ts TIMESTAMP, sensor STRING, temp INT, smoke DOUBLE",
         [("z1", minute(k), sensor, temp, smoke) for k, sensor, temp, smoke in readings])
    rows = mr_spark.sql(EXAMPLE_5).collect()
    assert [(r.zone, r.heat_sensor, r.smoke_sensor, minutes(r.match_start), minutes(r.match_end)) for r in rows] == [
        ("z1", "s1", "s2", 0, 3)]


def test_a_layer_partitioned_by_the_statements_own_key_is_not_refined(mr_spark):
    """A LAYER's PARTITION BY key the statement (or the layer, before it) already names adds
    nothing (rule 8): the same rows as without it; a refinement beside it is still one (one pass
    either way: a refined layer runs a matcher per key), the same rows as its expansion."""
    readings = [(0, "s1", 65, 0.0), (1, "s2", 20, 0.4), (2, "s1", 66, 0.0), (3, "s2", 20, 0.5), (4, "s1", 30, 0.0),
                (20, "s1", 70, 0.0), (21, "s1", 71, 0.0), (25, "s2", 20, 0.3), (26, "s2", 20, 0.3)]
    view(mr_spark, "sensor_readings", "zone STRING, ts TIMESTAMP, sensor STRING, temp INT, smoke DOUBLE",
         [("z1", minute(k), sensor, temp, smoke) for k, sensor, temp, smoke in readings])
    sql = """SELECT * FROM sensor_readings MATCH_RECOGNIZE (
      PARTITION BY zone ORDER BY ts
      LAYER alarm AS ({keys}
        MEASURES CASE WHEN COUNT(H.*) > 0 THEN 'heat' ELSE 'smoke' END AS kind
        PATTERN (H{{2,}} | S{{2,}}) WITHIN INTERVAL '5' MINUTE
        DEFINE H AS temp >= 60, S AS smoke >= 0.3)
      MEASURES MATCH_START() AS match_start, MATCH_END() AS match_end
      PATTERN (HEAT SMOKE) WITHIN INTERVAL '10' MINUTE
      DEFINE HEAT FROM alarm AS HEAT.kind = 'heat', SMOKE FROM alarm AS SMOKE.kind = 'smoke') AS i"""
    per_sensor, per_zone = [("z1", 0, 3), ("z1", 20, 26)], [("z1", 20, 26)]
    for keys, expected in (("PARTITION BY sensor", per_sensor), ("PARTITION BY zone, sensor, ZONE, Sensor", per_sensor),
                           ("", per_zone), ("PARTITION BY Zone", per_zone)):
        query = sql.format(keys=keys)
        assert len(udtfs(mr_spark, query)) == 1, keys
        got = lambda: [(r.zone, minutes(r.match_start), minutes(r.match_end)) for r in mr_spark.sql(query).collect()]
        assert got() == expected, keys
        with expansion():
            assert len(udtfs(mr_spark, query)) == 2 and got() == expected, keys  # (a UDTF per layer, the top's)


EXAMPLE_2 = """SELECT * FROM alarms MATCH_RECOGNIZE (
  PARTITION BY sensor ORDER BY a_end PERIOD (a_start, a_end)
  MEASURES EVENT_START(C) AS c_start, MATCH_START() AS match_start, MATCH_END() AS match_end
  PATTERN (W C) WITHIN INTERVAL '6' MINUTE
  DEFINE W AS sev = 'W', C AS sev = 'C') AS m"""

ALARMS = [(0, 2, "W"), (1, 5, "C"), (5, 6, "W"), (0, 7, "C"), (6, 9, "W"), (8, 10, "C")]


def _alarms(spark, rows, sensor="s1"):
    view(spark, "alarms", "sensor STRING, a_start TIMESTAMP, a_end TIMESTAMP, sev STRING",
         [(sensor, None if s is None else minute(s), None if e is None else minute(e), sev) for s, e, sev in rows])


def test_example_2_interval_rows_within_from_the_earliest_start(mr_spark):
    _alarms(mr_spark, ALARMS)
    rows = mr_spark.sql(EXAMPLE_2).collect()
    assert [(r.sensor, minutes(r.c_start), minutes(r.match_start), minutes(r.match_end)) for r in rows] == [
        ("s1", 1, 0, 5), ("s1", 8, 6, 10)]


@pytest.mark.parametrize("kind, unit, value", [("TIMESTAMP_NTZ", "MINUTE", minute),
                                               ("DATE", "DAY", lambda k: T0.date() + dt.timedelta(days=k))])
def test_example_2_over_timestamp_ntz_and_date(mr_spark, kind, unit, value):
    view(mr_spark, "alarms", f"sensor STRING, a_start {kind}, a_end {kind}, sev STRING",
         [("s1", value(s), value(e), sev) for s, e, sev in ALARMS])
    rows = mr_spark.sql(EXAMPLE_2.replace("MINUTE", unit)).collect()
    assert [(r.c_start, r.match_start, r.match_end) for r in rows] == [
        (value(1), value(0), value(5)), (value(8), value(6), value(10))]


def test_interval_rows_under_a_layer(mr_spark):
    """PERIOD rows read by a layer: its event spans its members' PERIODs, the top's WITHIN is
    measured from the earliest start (the C at [0, 7] makes the pair of rows 2-3 span 7 minutes)."""
    _alarms(mr_spark, ALARMS)
    rows = mr_spark.sql("""SELECT * FROM alarms MATCH_RECOGNIZE (
  PARTITION BY sensor ORDER BY a_end PERIOD (a_start, a_end)
  LAYER pair AS (MEASURES COUNT(*) AS n PATTERN (W C) DEFINE W AS sev = 'W', C AS sev = 'C')
  MEASURES EVENT_START(P) AS p_start, EVENT_END(P) AS p_end, MATCH_NUMBER() AS mn
  PATTERN (P) WITHIN INTERVAL '6' MINUTE
  DEFINE P FROM pair) AS m""").collect()
    assert [(minutes(r.p_start), minutes(r.p_end), r.mn) for r in rows] == [(0, 5, 1), (6, 10, 2)]
    assert len(udtfs(mr_spark, """SELECT * FROM alarms MATCH_RECOGNIZE (
  PARTITION BY sensor ORDER BY a_end PERIOD (a_start, a_end)
  LAYER pair AS (MEASURES COUNT(*) AS n PATTERN (W C) DEFINE W AS sev = 'W', C AS sev = 'C')
  MEASURES EVENT_START(P) AS p_start PATTERN (P) WITHIN INTERVAL '6' MINUTE DEFINE P FROM pair) AS m""")) == 1


def test_a_period_starting_after_its_end_is_an_error_at_the_period(mr_spark):
    _alarms(mr_spark, [(0, 2, "W"), (6, 5, "C")])
    for sql in (EXAMPLE_2, EXAMPLE_2.replace("  MEASURES", "  LAYER w AS (MEASURES COUNT(*) AS n PATTERN (W) "
                                             "DEFINE W AS sev = 'W')\n  MEASURES").replace(
                                                 "W AS sev = 'W', C", "W FROM w, C")):
        with pytest.raises(MatchRecognizeError) as info:
            mr_spark.sql(sql).collect()
        assert info.value.message == ("PERIOD start after end: a row's start 2026-01-01 00:06:00 is after its end "
                                      "2026-01-01 00:05:00 (PERIOD (a_start, a_end))"), sql
        assert (info.value.line, info.value.column) == at(sql, "PERIOD")


def test_a_null_period_bound_is_admitted_by_no_within(mr_spark):
    """A NULL start or end: EVENT_START / EVENT_END read it as it is, MATCH_START / MATCH_END
    ignore it (MIN / MAX), no WITHIN admits the row; NULL ends come first (ASC NULLS FIRST)."""
    _alarms(mr_spark, [(None, 1, "W"), (2, None, "C"), (0, 3, "W"), (2, 4, "C"), (None, 5, "W"), (5, 6, "C")])
    sql = EXAMPLE_2.replace("EVENT_START(C) AS c_start", "EVENT_START(W) AS w_start, EVENT_END(C) AS c_end")
    got = [(minutes(r.w_start), minutes(r.c_end), minutes(r.match_start), minutes(r.match_end))
           for r in mr_spark.sql(sql).collect()]
    assert got == [(0, 4, 0, 4)]
    got = [(minutes(r.w_start), minutes(r.c_end), minutes(r.match_start), minutes(r.match_end))
           for r in mr_spark.sql(sql.replace(" WITHIN INTERVAL '6' MINUTE", "")).collect()]
    # rows in order: C [2, NULL], W [NULL, 1], W [0, 3], C [2, 4], W [NULL, 5], C [5, 6]
    assert got == [(0, 4, 0, 4), (None, 6, 5, 6)]


def test_the_interval_functions_without_period_or_layers(mr_spark):
    """A row is the instant of its first ORDER BY key; the clause keeps its own WITHIN and WITH
    TIMEOUT ROWS; ALL ROWS PER MATCH (here with PERIOD) shows the input's columns only."""
    _readings(mr_spark, [(0, "temp", 85), (1, "fan_off", None), (5, "temp", 90), (9, "fan_off", None)])
    rows = mr_spark.sql("""SELECT * FROM readings MATCH_RECOGNIZE (
  PARTITION BY sensor ORDER BY ts
  MEASURES EVENT_START(H) AS h, EVENT_END(OFF) AS off, MATCH_START() AS ms, MATCH_END() AS me
  PATTERN (H OFF) WITHIN INTERVAL '3' MINUTE WITH TIMEOUT ROWS
  DEFINE H AS kind = 'temp', OFF AS kind = 'fan_off') AS m""").collect()
    assert [(minutes(r.h), minutes(r.off), minutes(r.ms), minutes(r.me), r.timed_out) for r in rows] == [
        (0, 1, 0, 1, False), (5, None, 5, 5, True)]
    _alarms(mr_spark, ALARMS)
    rows = mr_spark.sql(EXAMPLE_2.replace("  PATTERN", "  ALL ROWS PER MATCH PATTERN"))
    assert sorted(rows.columns) == ["a_end", "a_start", "c_start", "match_end", "match_start", "sensor", "sev"]
    assert [(minutes(r.a_end), minutes(r.match_end)) for r in rows.collect()] == [(2, 2), (5, 5), (9, 9), (10, 10)]


def test_timed_out_rows_with_layers_are_refused_in_batch(mr_spark):
    """WITH TIMEOUT ROWS needs the top's WITHIN, which with LAYERs is over its members' span (the
    top reads a layer's events, rule 6): refused at its line:column, as on a stream
    (tests/test_hierarchy_syntax.py)."""
    _readings(mr_spark, [(0, "temp", 85)])
    sql = EXAMPLE_3.replace("WITHIN INTERVAL '12' MINUTE", "WITHIN INTERVAL '12' MINUTE WITH TIMEOUT ROWS")
    error = analysis_error(mr_spark, sql)
    assert (error.message, error.line, error.column) == (
        "WITH TIMEOUT ROWS: a WITHIN over a layer's events is evaluated at each take, with no timer to time a "
        "partial match out, for now (docs/hierarchies.md)", *at(sql, "WITH TIMEOUT"))


def udtfs(spark, sql: str) -> set:
    """The MATCH_RECOGNIZE UDTFs the plan of ``sql`` calls."""
    return set(re.findall(r"sparkcep_mr_[0-9a-f]{16}", spark.sql(f"EXPLAIN {sql}").collect()[0][0]))


def plan_udtfs(df) -> set:
    """The MATCH_RECOGNIZE UDTFs the physical plan of ``df`` calls (as ``udtfs``, without
    compiling the statement again)."""
    return set(re.findall(r"sparkcep_mr_[0-9a-f]{16}", physical_plan(df)))


@pytest.mark.parametrize("within, junction", [("INTERVAL '10' MINUTE", "->"), ("INTERVAL '10' MINUTE", "->>"),
                                              ("INTERVAL '0:10' HOUR TO MINUTE", "->")])
def test_a_span_within_over_a_join_reads_only_the_mapped_items(mr_spark, within, junction):
    """The top's WITHIN over its members' span is MAX(end) <= MIN(start) + T over the items its
    match maps: with '->' / '->>' the item passed over (the Z at [-50, 2], between P's and Y's
    ends) does not widen it, so P -> Y matches (the matcher's per-item window of 962942d ended
    the run there); a WITHIN written as another interval form runs as before 962942d (where the
    one pass raised)."""
    _alarms(mr_spark, [(0, 1, "x"), (-50, 2, "z"), (2, 3, "y")])
    sql = f"""SELECT * FROM alarms MATCH_RECOGNIZE (
  PARTITION BY sensor ORDER BY a_end PERIOD (a_start, a_end)
  LAYER xs AS (MEASURES COUNT(*) AS n PATTERN (X) DEFINE X AS sev = 'x')
  MEASURES EVENT_START(P) AS p_start, Y.a_end AS y_end, MATCH_NUMBER() AS mn
  PATTERN (P {junction} Y) WITHIN {within}
  DEFINE P FROM xs, Y AS sev = 'y') AS m"""
    rows = mr_spark.sql(sql).collect()
    assert [(minutes(r.p_start), minutes(r.y_end), r.mn) for r in rows] == [(0, 3, 1)]


def test_layers_sharing_the_partition_run_in_one_pass(mr_spark):
    """One UDTF (one shuffle, one pass) for a statement with LAYERs, a layer with its own
    PARTITION BY included (example 5); its expansion has one per layer."""
    _readings(mr_spark, [(0, "temp", 70)])
    view(mr_spark, "sensor_readings", "zone STRING, ts TIMESTAMP, sensor STRING, temp INT, smoke DOUBLE", [])
    for sql in (EXAMPLE_1, EXAMPLE_3, EXAMPLE_4, EXAMPLE_5):
        assert len(udtfs(mr_spark, sql)) == 1, sql
    with expansion():
        assert len(udtfs(mr_spark, EXAMPLE_5)) == 2


def test_views_over_a_statement_with_layers(mr_spark):
    """A temporary view over a LAYER statement reads like its query; a global temporary view
    reads in another session of the same SparkContext (its UDTFs are registered there)."""
    _readings(mr_spark, [(k, "temp", t) for k, t in enumerate([85, 90, 95, 60, 88, 91, 50])])
    expected = [(2, 1, 1, 0, 3), (1, 3, 2, 4, 6)]
    mr_spark.sql(f"CREATE OR REPLACE TEMP VIEW layered AS {EXAMPLE_4}")
    got = mr_spark.sql("SELECT * FROM layered ORDER BY match_start").collect()
    assert [(r.pairs, r.first_pair, r.cool_no, minutes(r.match_start), minutes(r.match_end)) for r in got] == expected
    mr_spark.table("readings").createOrReplaceGlobalTempView("readings_global")
    mr_spark.sql("CREATE OR REPLACE GLOBAL TEMP VIEW layered_global AS "
                 + EXAMPLE_4.replace("FROM readings", "FROM global_temp.readings_global"))
    try:
        got = mr_spark.newSession().sql("SELECT * FROM global_temp.layered_global ORDER BY match_start").collect()
        assert [(r.pairs, r.first_pair, r.cool_no, minutes(r.match_start), minutes(r.match_end))
                for r in got] == expected
    finally:
        mr_spark.sql("DROP VIEW IF EXISTS global_temp.layered_global")
        mr_spark.sql("DROP VIEW IF EXISTS global_temp.readings_global")


def test_a_layer_error_is_placed_in_the_users_sql(mr_spark):
    _readings(mr_spark, [(0, "temp", 70)])
    sql = EXAMPLE_1.replace("S.peak >= 90", "S.peak >= 'x' + DATE'2020-01-01'")
    error = analysis_error(mr_spark, sql)
    assert (error.line, error.column) == at(sql, "S.peak >= 'x'")


def test_a_layers_run_time_error_is_placed_in_the_users_sql(mr_spark):
    """ANSI's cast error in a layer's measure, at the user's expression (not the generated SQL)."""
    _readings(mr_spark, [(1, "temp", 85), (2, "temp", 90), (4, "fan_off", None)])
    sql = EXAMPLE_1.replace("MAX(temp) AS peak", "CAST(LAST(kind) AS INT) AS peak")
    with session_confs(mr_spark, {"spark.sql.ansi.enabled": "true"}), pytest.raises(MatchRecognizeError) as info:
        mr_spark.sql(sql).collect()
    assert "CAST_INVALID_INPUT" in info.value.message and "__mr" not in info.value.message
    assert (info.value.line, info.value.column) == at(sql, "CAST(LAST(kind) AS INT)")


def test_the_one_pass_raises_a_row_level_error_where_the_expansion_does(mr_spark):
    """A condition's row-level conjuncts are evaluated on every item of a layer's input, in the
    one pass as in the expansion (where Spark computes them as a mask column over the union): no
    run ever tests OFF here (there is no spike), yet ANSI's cast error of its condition on a
    'temp' row is raised by both, at the user's expression; without ANSI both give no row."""
    view(mr_spark, "readings", "sensor STRING, ts TIMESTAMP, kind STRING, temp INT, one INT",
         [("s1", minute(k), kind, temp, 1) for k, kind, temp in [(0, "temp", 70), (1, "temp", 75), (2, "fan_off", None)]])
    sql = EXAMPLE_1.replace("OFF AS kind = 'fan_off'", "OFF AS kind = 'fan_off' OR CAST(kind AS INT) > 0")
    for planned in (contextlib.nullcontext, expansion):
        with planned():
            assert len(udtfs(mr_spark, sql)) == (1 if planned is contextlib.nullcontext else 2)
            with session_confs(mr_spark, {"spark.sql.ansi.enabled": "true"}), \
                    pytest.raises(MatchRecognizeError) as info:
                mr_spark.sql(sql).collect()
            assert "CAST_INVALID_INPUT" in info.value.message and "__mr" not in info.value.message, sql
            assert (info.value.line, info.value.column) == at(sql, "CAST(kind AS INT)"), sql
            with session_confs(mr_spark, {"spark.sql.ansi.enabled": "false"}):
                assert mr_spark.sql(sql).collect() == [], sql


# ---- random hierarchies against the oracle ---------------------------------------------------

STANDARD = ["A B", "A B+ C", "A+ B?", "(A | B)+ C", "A B* C", "A{2,3}", "A+? B", "A | B C"]
FLINKCEP = ["A -> B", "A ->> B", "A B+ C", "A -> B+ -> C", "A+ B", "A -> B?"]
NAN = float("nan")  # (one object: the oracle groups keys by Python's equality)


class Case:
    """A random hierarchy (1-3 layers under the top) over two partitions of random rows: raw
    variables test a letter column, event variables their layer's COUNT(*) measure; random
    skip modes, semantics and WITHIN (over a layer's events or PERIOD rows: standard semantics
    only); a layer below the top whose sources are all refined (or that reads rows only) may
    refine the partition by a second column ``g`` (rule 8): a letter or NULL, or with ``doubles``
    a DOUBLE among 1.0, NaN, -0.0, 0.0 and NULL (Spark's groups: NaN = NaN, -0.0 = 0.0).
    ``period``: the rows are intervals ``PERIOD (s, e)`` (ends tied, NULL bounds), the
    hierarchy may have no layer at all."""

    def __init__(self, seed: int, period: bool = False, doubles: bool = False):
        rng = random.Random(seed)
        self.period, self.doubles = period, doubles
        self.layers = []  # (name, pattern, semantics, skip, within, {var: (source | None, threshold or letter)}, refined)
        refine = random.Random(f"refine {seed}")  # (apart: the other draws stay those of the seed)
        shape = random.Random(f"period {seed}")
        count = rng.choice([2, 2, 3, 3, 4])
        if period and shape.random() < .3:
            count = 1
        for level in range(count):
            semantics = rng.choice(["standard", "flinkcep"])
            pattern = rng.choice(STANDARD if semantics == "standard" else FLINKCEP)
            names = sorted({c for c in pattern if c.isalpha() and c.isupper()})
            # the top (the last) and at least one variable of each layer above the lowest read a layer
            reads = {v: f"l{rng.randrange(level)}" for v in names if level and rng.random() < .6}
            if level and not reads:
                reads[rng.choice(names)] = f"l{level - 1}"
            define = {v: (reads[v], rng.choice([1, 1, 1, 2, 3])) if v in reads else (None, rng.choice("ab"))
                      for v in names}
            skip = rng.choice(["PAST LAST ROW", "TO NEXT ROW"] if semantics == "standard"
                              else ["NO SKIP", "TO NEXT ROW", "PAST LAST ROW"])
            within = rng.choice([None, None, 4, 8]) if semantics == "standard" or not (reads or period) else None
            refined = level < count - 1 and all(self.layers[int(s[1:])][-1] for s, _ in
                                                (d for d in define.values() if d[0])) and refine.random() < .6
            self.layers.append((f"l{level}", pattern, semantics, skip, within, define, refined))
        # every layer below the top must be read by some layer above it
        while True:
            read = {s for *_, define, _ in self.layers for s, _ in define.values() if s}
            kept = [layer for layer in self.layers[:-1] if layer[0] in read] + [self.layers[-1]]
            if kept == self.layers:
                break
            self.layers = kept
        self.rows = []  # (partition, ts minute, letter, g); with period (partition, (start, end), letter, g)
        keys = [1.0, NAN, -0.0, 0.0, None] if doubles else ["x", "y", None]
        for part in ("p", "q"):
            t = 0
            for _ in range(rng.randint(0, 16)):
                t += shape.randint(0, 2) if period else rng.randint(1, 3)
                if period:  # (ends tie: ORDER BY e, id)
                    bounds = [t - shape.randint(0, 4), t]
                    if shape.random() < .1:
                        bounds[shape.randrange(2)] = None
                    self.rows.append((part, tuple(bounds), rng.choice("ab"), refine.choice(keys)))
                else:
                    self.rows.append((part, t, rng.choice("ab"), refine.choice(keys)))

    def sql(self) -> str:
        parts = []
        for k, (name, pattern, semantics, skip, within, define, refined) in enumerate(self.layers):
            top = k == len(self.layers) - 1
            conditions = []
            for v, (source, test) in define.items():
                if source:
                    conditions.append(f"{v} FROM {source} AS {v}.n_{source} >= {test}")
                else:
                    conditions.append(f"{v} AS c = '{test}'")
            body = ("PARTITION BY g " if refined else "") + (("MEASURES MATCH_NUMBER() AS mn, MATCH_START() AS ms, MATCH_END() AS me, COUNT(*) AS items "
                     if top else f"MEASURES COUNT(*) AS n_{name} ") +
                    f"AFTER MATCH {'NO SKIP' if skip == 'NO SKIP' else 'SKIP ' + skip} SEMANTICS {semantics.upper()} "
                    f"PATTERN ({pattern}) " + (f"WITHIN INTERVAL '{within}' MINUTE " if within else "") +
                    "DEFINE " + ", ".join(conditions))
            parts.append(body if top else f"LAYER {name} AS ({body})")
        order = "ORDER BY e, id PERIOD (s, e) " if self.period else "ORDER BY ts "
        return ("SELECT * FROM stream MATCH_RECOGNIZE (PARTITION BY part " + order
                + ", ".join(parts[:-1]) + " " + parts[-1] + ") AS m")

    def expected(self) -> list:
        layers = []
        for name, pattern, semantics, skip, within, define, refined in self.layers:
            conditions = {}
            for v, (source, test) in define.items():
                if source:
                    conditions[v] = lambda e, m, s=source, t=test: e[f"n_{s}"] >= t
                else:
                    conditions[v] = lambda e, m, t=test: e["c"] == t
            layers.append(ho.Layer(name, pattern, sources={v: s for v, (s, _) in define.items() if s},
                                   define=conditions, semantics=semantics, skip=skip, within=within,
                                   measures=lambda m, n=name: {f"n_{n}": len(m)},
                                   partition_by=("g",) if refined else ()))
        out = []
        for part in ("p", "q"):
            if self.period:  # (in the clause's order: NULL ends first, then by end and id)
                rows = sorted(({"s": s, "e": e, "c": c, "g": g, "id": k} for k, (p, (s, e), c, g) in enumerate(self.rows)
                               if p == part), key=lambda r: (r["e"] is not None, r["e"] or 0, r["id"]))
                items = ho.raw_events(rows, "s", "e")
            else:
                items = ho.raw_events([{"ts": t, "c": c, "g": g} for p, t, c, g in self.rows if p == part])
            top = ho.evaluate(layers, items)[layers[-1].name]
            out += [(part, e.number, e.start, e.end, len(e.members)) for e in top]
        return out


def _check(spark, seed: int, period: bool = False, doubles: bool = False):
    """The one pass against the oracle; where a layer refines the partition, its expansion too."""
    case = Case(seed, period, doubles)
    g = "DOUBLE" if doubles else "STRING"
    if period:
        view(spark, "stream", f"part STRING, id INT, s TIMESTAMP, e TIMESTAMP, c STRING, g {g}",
             [(p, k, *(None if b is None else minute(b) for b in bounds), c, g)
              for k, (p, bounds, c, g) in enumerate(case.rows)])
    else:
        view(spark, "stream", f"part STRING, ts TIMESTAMP, c STRING, g {g}",
             [(p, minute(t), c, g) for p, t, c, g in case.rows])
    def got():  # (its rows, and the UDTFs the plan that produced them calls)
        df = spark.sql(case.sql())
        return sorted((r.part, r.mn, minutes(r.ms), minutes(r.me), r.items) for r in df.collect()), plan_udtfs(df)
    expected = sorted(case.expected())
    rows, called = got()
    assert rows == expected, case.sql()
    assert len(called) == 1, case.sql()  # (the one pass)
    refined = sum(bool(layer[-1]) for layer in case.layers)
    if refined:
        with expansion():
            rows, called = got()
            assert rows == expected, case.sql()
            assert len(called) == len(case.layers), case.sql()


@pytest.mark.parametrize("seed", range(24))
def test_random_hierarchies_agree_with_the_oracle(mr_spark, seed):
    _check(mr_spark, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(24, 100))
def test_more_random_hierarchies_agree_with_the_oracle(mr_spark, seed):
    _check(mr_spark, seed)


@pytest.mark.parametrize("seed", range(12))
def test_random_hierarchies_refined_by_doubles_agree_with_the_oracle(mr_spark, seed):
    """Refined by a DOUBLE key among 1.0, NaN, -0.0, 0.0 and NULL, over instants and PERIOD rows."""
    _check(mr_spark, 1000 + seed, period=seed % 2 == 1, doubles=True)


@pytest.mark.parametrize("seed", range(16))
def test_random_hierarchies_of_interval_rows_agree_with_the_oracle(mr_spark, seed):
    """PERIOD rows (tied ends, NULL bounds), with zero to three layers."""
    _check(mr_spark, seed, period=True)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(16, 80))
def test_more_random_hierarchies_of_interval_rows_agree_with_the_oracle(mr_spark, seed):
    _check(mr_spark, seed, period=True)
