-- V-shape ticker (the classic MATCH_RECOGNIZE example, SQL:2016 standard semantics).
--
-- Detects, per stock symbol, a price that falls for one or more ticks and then rises for
-- one or more ticks: STRT is any row, DOWN a row cheaper than the physically previous one
-- (PREV = LAG over the partition order), UP a dearer one.  Greedy quantifiers, ONE ROW PER
-- MATCH, AFTER MATCH SKIP PAST LAST ROW: the V-shapes of a symbol do not overlap.
--
-- Data: stock_ticks(symbol, ts, price, volume), one tick per minute per symbol
--       (sql_examples/data.py: stock_ticks(), seed 11).
SELECT *
FROM stock_ticks MATCH_RECOGNIZE (
  PARTITION BY symbol
  ORDER BY ts
  MEASURES
    STRT.ts               AS start_ts,
    LAST(DOWN.ts)         AS bottom_ts,
    LAST(UP.ts)           AS end_ts,
    STRT.price            AS start_price,
    LAST(DOWN.price)      AS bottom_price,
    LAST(UP.price)        AS end_price,
    COUNT(DOWN.*)         AS drops,
    COUNT(UP.*)           AS rises
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE
    DOWN AS price < PREV(price),
    UP   AS price > PREV(price)
) AS m
ORDER BY symbol, start_ts
