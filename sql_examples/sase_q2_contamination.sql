-- SASE+ Query 2, supply-chain contamination (SIGMOD 2008; ../shared/seeds/001):
--
--   PATTERN SEQ(Alert a, Shipment+ b[])
--   WHERE   skip_till_any_match(a, b[]) {
--             a.type = 'contaminated' and b[1].from = a.site and b[i].from = b[i-1].to }
--   WITHIN  3 hours
--
-- Detects every chain of shipments that may carry a contamination onward: a
-- 'contaminated' alert at a site, then a shipment leaving that site, then a shipment
-- leaving the site the previous one went to, and so on, all within 3 hours.
--   * skip_till_any_match is `->>` (followedByAny) between A and the first B, and `->>+`
--     (allowCombinations) between the iterations of B: any unrelated events may sit in
--     between, and every choice of shipments is a separate match (a shipment that could
--     extend a chain may also be skipped), as in SASE.  With `->` (skip till next match)
--     only the first qualifying shipment would be considered.
--   * b[i].from = b[i-1].to is  B.src = LAST(B.dst, 1):  inside DEFINE B the current row is
--     tentatively B, so LAST(B.dst, 0) is the current row and LAST(B.dst, 1) is the
--     previously matched B row (logical navigation over the rows mapped to B).
--     PREV(B.dst) would be wrong: PREV is physical navigation, the row just before the
--     current one in the partition, which under `->>` is usually some unrelated event.
--   * b[1].from = a.site: for the first B, LAST(B.dst, 1) is NULL, hence the COALESCE with
--     A.site (inside DEFINE B, A.site is the site of the row matched to A).
--   * SEMANTICS FLINKCEP + AFTER MATCH NO SKIP report every match, as SASE does; one row per
--     match: the alert, how far the chain got, and its length.
--
-- Data: supply_events(line, event_id, ts, kind 'alert' | 'shipment', alert_type, site,
--       src, dst), per product line (sql_examples/data.py: supply_events(), seed 2).
SELECT *
FROM supply_events MATCH_RECOGNIZE (
  PARTITION BY line
  ORDER BY ts, event_id
  MEASURES
    A.event_id      AS alert_id,
    A.site          AS alert_site,
    A.ts            AS alert_ts,
    COUNT(B.*)      AS hops,
    FIRST(B.event_id) AS first_shipment,
    LAST(B.event_id)  AS last_shipment,
    LAST(B.dst)     AS reached_site,
    LAST(B.ts)      AS reached_ts
  ONE ROW PER MATCH
  AFTER MATCH NO SKIP
  SEMANTICS FLINKCEP
  PATTERN (A ->> B->>+)
  WITHIN INTERVAL '3' HOUR
  DEFINE
    A AS kind = 'alert' AND alert_type = 'contaminated',
    B AS kind = 'shipment' AND B.src = COALESCE(LAST(B.dst, 1), A.site)
) AS m
ORDER BY line, alert_ts, last_shipment, hops, first_shipment
