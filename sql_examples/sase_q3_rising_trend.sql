-- SASE+ Query 3, rising trend then a volume drop (SIGMOD 2008; ../shared/seeds/001):
--
--   PATTERN SEQ(Stock+ a[], Stock b)
--   WHERE   skip_till_next_match(a[], b) {
--             [symbol] and a[1].volume > 1000
--             and a[i].price > avg(a[..i-1].price)
--             and b.volume < 80% * a[a.LEN].volume }
--   WITHIN  1 hour
--
-- Detects, per symbol, a run of ticks each priced above the average of the run so far
-- (an overall rising trend, not necessarily monotone), started by a tick with volume over
-- 1000, followed by a tick whose volume is below 80% of the last tick of the run.
--   * skip_till_next_match is the relaxed loop `A->+` and the relaxed junction `-> B`:
--     ticks that fit neither are skipped.
--   * a[i].price > avg(a[..i-1].price): in DEFINE A the current row is tentatively A and the
--     running aggregates include it, so with n = COUNT(A.*) and s = SUM(A.price) (both
--     counting the current row) the average of the previous rows is (s - price)/(n - 1), and
--         price > (s - price) / (n - 1)  <=>  price * n > s        (n > 1).
--     We write the exact product form (no division, no rounding: price is DECIMAL).
--     Note that `A.price > AVG(A.price)` (average including the current row) happens to be
--     equivalent for n > 1, since a value is above the mean of {previous..., itself} iff it
--     is above the mean of the previous values; for n = 1 both are false, so the first row
--     is handled by its own branch (a[1].volume > 1000).
--   * a[a.LEN].volume is LAST(A.volume) inside DEFINE B.
-- Standard semantics, greedy `A->+`, AFTER MATCH SKIP PAST LAST ROW: for each start the
-- preferred match is the one that keeps extending the trend the longest (a tick that
-- would qualify as B but comes before a later A tick and a later B tick is skipped), and
-- trends of a symbol do not overlap.  SEMANTICS FLINKCEP + AFTER MATCH NO SKIP would
-- report every (trend, b) combination from every start instead, closer to SASE's output.
--
-- Data: stock_ticks(symbol, ts, price DECIMAL, volume), one tick per minute per symbol
--       (sql_examples/data.py: stock_ticks(), seed 11).
SELECT *
FROM stock_ticks MATCH_RECOGNIZE (
  PARTITION BY symbol
  ORDER BY ts
  MEASURES
    FIRST(A.ts)     AS trend_start,
    LAST(A.ts)      AS trend_end,
    COUNT(A.*)      AS trend_ticks,
    FIRST(A.price)  AS first_price,
    LAST(A.price)   AS last_price,
    LAST(A.volume)  AS last_volume,
    B.ts            AS drop_ts,
    B.volume        AS drop_volume
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (A->+ -> B)
  WITHIN INTERVAL '1' HOUR
  DEFINE
    A AS (COUNT(A.*) = 1 AND A.volume > 1000)
      OR (COUNT(A.*) > 1 AND A.price * COUNT(A.*) > SUM(A.price)),
    B AS B.volume < 0.8 * LAST(A.volume)
) AS m
ORDER BY symbol, trend_start
