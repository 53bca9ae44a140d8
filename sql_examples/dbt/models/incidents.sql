-- Layer 2: per zone, a heat alarm followed by a smoke alarm, the incident (from the heat
-- alarm's first reading to the smoke alarm's last reading) within 10 minutes.
select *
from {{ ref('alarms') }} match_recognize (
  partition by zone
  order by alarm_end, sensor_id
  measures
    HEAT.sensor_id    as heat_sensor,
    SMOKE.sensor_id   as smoke_sensor,
    HEAT.alarm_start  as incident_start,
    HEAT.alarm_end    as heat_end,
    SMOKE.alarm_start as smoke_start,
    SMOKE.alarm_end   as incident_end
  one row per match
  after match skip past last row
  pattern (HEAT -> SMOKE)
  within interval '10' minute
  define
    HEAT  as alarm_type = 'heat',
    SMOKE as alarm_type = 'smoke' and SMOKE.alarm_end_s - HEAT.alarm_start_s <= 600
) as i
