-- sensor_incidents.sql's event hierarchy in one statement (docs/hierarchies.md, example 5):
-- the alarm layer is declared inside the clause (LAYER alarm AS (...)), refined per sensor by
-- its own PARTITION BY, and the incidents' variables range over its matches (HEAT FROM alarm).
--
-- Layer alarm, per zone and sensor: 3 or more consecutive readings >= 60 C ('heat'), or 2 or
-- more consecutive readings with smoke >= 0.3 ('smoke'), within 5 minutes.
-- Incidents, per zone: a heat alarm followed (relaxed: other alarms may come in between) by a
-- smoke alarm.  An alarm is an event spanning its readings, and WITHIN is measured from the
-- earliest reading under the match to the latest (MATCH_END() - MATCH_START()), so an incident
-- spans at most 10 minutes of readings without the hand-written bound of sensor_incidents.sql.
-- Alarms come in the order of the readings that complete them (ts, then sensor_id).
--
-- Data: sensor_readings(zone, sensor_id, ts, temperature, smoke), one reading per sensor
--       every 30 s (sql_examples/data.py: sensor_readings(), seed 5).
SELECT *
FROM sensor_readings MATCH_RECOGNIZE (
  PARTITION BY zone
  ORDER BY ts, sensor_id
  LAYER alarm AS (
    PARTITION BY sensor_id
    MEASURES CASE WHEN COUNT(H.*) > 0 THEN 'heat' ELSE 'smoke' END AS alarm_type
    PATTERN (H{3,} | S{2,})
    WITHIN INTERVAL '5' MINUTE
    DEFINE
      H AS temperature >= 60,
      S AS smoke >= 0.3)
  MEASURES
    HEAT.sensor_id          AS heat_sensor,
    SMOKE.sensor_id         AS smoke_sensor,
    EVENT_START(HEAT)       AS incident_start,
    EVENT_END(HEAT)         AS heat_end,
    EVENT_START(SMOKE)      AS smoke_start,
    EVENT_END(SMOKE)        AS incident_end
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (HEAT -> SMOKE)
  WITHIN INTERVAL '10' MINUTE
  DEFINE
    HEAT  FROM alarm AS HEAT.alarm_type = 'heat',
    SMOKE FROM alarm AS SMOKE.alarm_type = 'smoke'
) AS i
ORDER BY zone, incident_start
