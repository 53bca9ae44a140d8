-- Web funnel: view -> add to cart -> checkout within 30 minutes, per user.
--
-- Detects, per user, a product view, later an add-to-cart of that same product, later a
-- checkout, the whole funnel within 30 minutes.  Relaxed junctions `->` (skip till next
-- match): other clicks in between are skipped; C must be the same product as V
-- (C.product_id = V.product_id, V being the row matched to V).  Standard semantics, AFTER
-- MATCH SKIP PAST LAST ROW: funnels of a user do not overlap; an attempt that starts at a
-- view that never leads to a checkout fails and the next view is tried.
--
-- This query is also run incrementally (sql_examples/incremental.py): it meets the
-- requirements listed there (ONE ROW PER MATCH, SKIP PAST LAST ROW, standard semantics,
-- WITHIN, match start and end in the measures, no navigation before the match start).
--
-- Data: clicks(user_id, ts, event_type, product_id, arrival_ts)
--       (sql_examples/data.py: clicks(), seed 7).
SELECT *
FROM clicks MATCH_RECOGNIZE (
  PARTITION BY user_id
  ORDER BY ts
  MEASURES
    V.ts          AS funnel_start,
    K.ts          AS funnel_end,
    V.product_id  AS product_id,
    C.ts          AS cart_ts,
    unix_seconds(K.ts) - unix_seconds(V.ts) AS seconds_to_checkout
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (V -> C -> K)
  WITHIN INTERVAL '30' MINUTE
  DEFINE
    V AS event_type = 'view',
    C AS event_type = 'add_to_cart' AND C.product_id = V.product_id,
    K AS event_type = 'checkout'
) AS m
ORDER BY user_id, funnel_start
