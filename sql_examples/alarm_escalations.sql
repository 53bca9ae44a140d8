-- Interval rows (docs/hierarchies.md, example 2): an alarm lasts from a_start to a_end
-- (PERIOD), and the rows are ordered by when they end.  An escalation is one or more warnings
-- followed by a critical alarm, the whole spanning at most 6 minutes from the earliest start
-- to the latest end: the critical alarm may have begun before the warnings, and then its start
-- counts (WITHIN over intervals, MATCH_START() / MATCH_END()), not only its end.
--
-- Data: alarm_intervals(sensor, a_start, a_end, sev), alarms of 0-10 minutes per sensor, severity
--       'I', 'W' or 'C' (sql_examples/data.py: alarm_intervals(), seed 3).
SELECT *
FROM alarm_intervals MATCH_RECOGNIZE (
  PARTITION BY sensor
  ORDER BY a_end
  PERIOD (a_start, a_end)
  MEASURES
    COUNT(W.*)          AS warnings,
    EVENT_START(C)      AS critical_start,
    MATCH_START()       AS escalation_start,
    MATCH_END()         AS escalation_end
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (W+ C)
  WITHIN INTERVAL '6' MINUTE
  DEFINE
    W AS sev = 'W',
    C AS sev = 'C'
) AS m
ORDER BY sensor, escalation_start
