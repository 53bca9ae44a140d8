-- Event hierarchy in two layers (hierarchical complex events, ../shared/seeds/002):
-- sensor readings -> alarms (first MATCH_RECOGNIZE) -> incidents (second MATCH_RECOGNIZE
-- over the first one's output), in one statement.
--
-- Layer 1, alarms, per sensor: 3 or more consecutive readings >= 60 C ('heat'), or 2 or
-- more consecutive readings with smoke >= 0.3 ('smoke'), within 5 minutes.  Each alarm
-- carries its window explicitly: alarm_start / alarm_end (first and last reading), also as
-- epoch seconds for arithmetic in the second layer.
--
-- Layer 2, incidents, per zone: a heat alarm followed (relaxed: other alarms may come in
-- between) by a smoke alarm of the zone.  The alarms are ordered by when they are
-- detected (alarm_end).  The global time window of an incident is the one of its
-- primitive events, as in the paper's NHA model (e.t <= min over layers of t_i + T_i):
--   * each alarm's own readings lie within 5 minutes (layer 1 WITHIN);
--   * the incident, from the first reading of its heat alarm to the last reading of its
--     smoke alarm, lies within 10 minutes: SMOKE.alarm_end_s - HEAT.alarm_start_s <= 600
--     in DEFINE.  WITHIN INTERVAL '10' MINUTE on the outer query bounds only the alarms'
--     detection times (its ORDER BY key), which is weaker; it stays as an early cut-off
--     for the engine.  So incident_start = the heat alarm's start and incident_end = the
--     smoke alarm's end, and incident_end - incident_start <= 10 minutes: the incident's
--     window is the union of its alarms' windows, never more than 10 minutes wide.
--
-- Data: sensor_readings(zone, sensor_id, ts, temperature, smoke), one reading per sensor
--       every 30 s (sql_examples/data.py: sensor_readings(), seed 5).
WITH alarms AS (
  SELECT *
  FROM sensor_readings MATCH_RECOGNIZE (
    PARTITION BY zone, sensor_id
    ORDER BY ts
    MEASURES
      CASE WHEN COUNT(H.*) > 0 THEN 'heat' ELSE 'smoke' END AS alarm_type,
      FIRST(ts)                 AS alarm_start,
      LAST(ts)                  AS alarm_end,
      unix_seconds(FIRST(ts))   AS alarm_start_s,
      unix_seconds(LAST(ts))    AS alarm_end_s,
      COUNT(*)                  AS readings
    ONE ROW PER MATCH
    AFTER MATCH SKIP PAST LAST ROW
    PATTERN (H{3,} | S{2,})
    WITHIN INTERVAL '5' MINUTE
    DEFINE
      H AS temperature >= 60,
      S AS smoke >= 0.3
  ) AS a
)
SELECT *
FROM alarms MATCH_RECOGNIZE (
  PARTITION BY zone
  ORDER BY alarm_end, sensor_id
  MEASURES
    HEAT.sensor_id     AS heat_sensor,
    SMOKE.sensor_id    AS smoke_sensor,
    HEAT.alarm_start   AS incident_start,
    HEAT.alarm_end     AS heat_end,
    SMOKE.alarm_start  AS smoke_start,
    SMOKE.alarm_end    AS incident_end
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (HEAT -> SMOKE)
  WITHIN INTERVAL '10' MINUTE
  DEFINE
    HEAT  AS alarm_type = 'heat',
    SMOKE AS alarm_type = 'smoke' AND SMOKE.alarm_end_s - HEAT.alarm_start_s <= 600
) AS i
ORDER BY zone, incident_start
