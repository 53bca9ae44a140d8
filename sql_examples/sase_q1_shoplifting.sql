-- SASE+ Query 1, shoplifting (Wu, Diao, Rizvi: SIGMOD 2008; ../shared/seeds/001):
--
--   PATTERN SEQ(Shelf a, ~(Register b), Exit c)
--   WHERE   skip_till_next_match(a, b, c) { [tag_id] }
--   WITHIN  12 hours
--
-- Detects an item (RFID tag) that was read at a shelf and then at the exit, with no
-- register (check-out) reading in between, all within 12 hours.
--   * [tag_id] (same tag for every event) is PARTITION BY tag_id.
--   * skip_till_next_match is the relaxed junction `->`: other readings of the tag between
--     the shelf and the exit are skipped.
--   * ~(Register b) between two `->` junctions is FlinkCEP's notFollowedBy: the match fails
--     if an R row occurs anywhere between the S row and the E row.
--   * WITHIN INTERVAL '12' HOUR bounds first row (S) to last row (E) on the ORDER BY key.
-- Standard semantics with AFTER MATCH SKIP PAST LAST ROW gives one alert per exit reading,
-- taken from the earliest shelf reading that qualifies (a tag picked up twice gives one
-- alert, not two).  SEMANTICS FLINKCEP + AFTER MATCH NO SKIP would report one match per
-- (shelf, exit) pair, as SASE does.
--
-- Data: rfid_readings(tag_id, ts, reader in 'shelf' | 'register' | 'exit')
--       (sql_examples/data.py: rfid_readings(), seed 1).
SELECT *
FROM rfid_readings MATCH_RECOGNIZE (
  PARTITION BY tag_id
  ORDER BY ts
  MEASURES
    S.ts AS shelf_ts,
    E.ts AS exit_ts
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (S -> ~R -> E)
  WITHIN INTERVAL '12' HOUR
  DEFINE
    S AS reader = 'shelf',
    R AS reader = 'register',
    E AS reader = 'exit'
) AS m
ORDER BY tag_id, shelf_ts
