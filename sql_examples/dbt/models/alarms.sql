-- Layer 1 of the event hierarchy (see sql_examples/sensor_incidents.sql): per sensor, an
-- alarm is 3+ consecutive readings >= 60 C ('heat') or 2+ consecutive readings with smoke
-- >= 0.3 ('smoke') within 5 minutes; its window (first/last reading) is explicit.
select *
from {{ ref('stg_sensor_readings') }} match_recognize (
  partition by zone, sensor_id
  order by ts
  measures
    case when count(H.*) > 0 then 'heat' else 'smoke' end as alarm_type,
    first(ts)               as alarm_start,
    last(ts)                as alarm_end,
    unix_seconds(first(ts)) as alarm_start_s,
    unix_seconds(last(ts))  as alarm_end_s,
    count(*)                as readings
  one row per match
  after match skip past last row
  pattern (H{3,} | S{2,})
  within interval '5' minute
  define
    H as temperature >= 60,
    S as smoke >= 0.3
) as a
