-- Sessionization: split each user's clicks into sessions at gaps of more than 30 minutes.
--
-- A session is a first click S followed by clicks N each at most 30 minutes after the
-- physically previous click (PREV(ts) = LAG(ts) over the user's clicks: inside the strict
-- pattern S N* that is the previous click of the session).  Greedy N*, ONE ROW PER MATCH,
-- SKIP PAST LAST ROW: every click belongs to exactly one session.  The aggregates count
-- clicks and funnel steps per session; MATCH_NUMBER() numbers the sessions of a user.
--
-- Data: clicks(user_id, ts, event_type, product_id, arrival_ts)
--       (sql_examples/data.py: clicks(), seed 7).
SELECT *
FROM clicks MATCH_RECOGNIZE (
  PARTITION BY user_id
  ORDER BY ts
  MEASURES
    MATCH_NUMBER()  AS session_no,
    FIRST(ts)       AS session_start,
    LAST(ts)        AS session_end,
    COUNT(*)        AS clicks,
    SUM(CASE WHEN event_type = 'view' THEN 1 ELSE 0 END)        AS views,
    SUM(CASE WHEN event_type = 'add_to_cart' THEN 1 ELSE 0 END) AS carts,
    SUM(CASE WHEN event_type = 'checkout' THEN 1 ELSE 0 END)    AS checkouts
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (S N*)
  DEFINE
    N AS ts <= PREV(ts) + INTERVAL '30' MINUTE
) AS m
ORDER BY user_id, session_no
