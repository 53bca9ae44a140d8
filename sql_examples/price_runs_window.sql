-- Price runs per tick: row pattern recognition in a window (SQL:2016 R020, as Trino has it).
--
-- One row per tick: the V-shape that starts at that tick (a fall of one or more ticks, then a
-- rise), where it bottoms and ends, how many ticks it spans, its high and its total volume;
-- NULL (count 0) for a tick where no V starts, or that a V starting earlier covers (AFTER
-- MATCH SKIP PAST LAST ROW).  The frame ROWS BETWEEN CURRENT ROW AND 30 FOLLOWING bounds a
-- V to 31 ticks, and PREV reads no tick before the frame.  Measures are read with
-- `name OVER w`, any aggregate over the V's ticks with `agg(...) OVER w`, next to an
-- ordinary window function (the low of the last 5 ticks).
--
-- Data: stock_ticks(symbol, ts, price, volume), one tick per minute per symbol
--       (sql_examples/data.py: stock_ticks(), seed 11).
SELECT symbol, ts, price,
       bottom_ts OVER w         AS bottom_ts,
       end_ts OVER w            AS end_ts,
       count(*) OVER w          AS run_ticks,
       max(price) OVER w        AS run_high,
       sum(volume) OVER w       AS run_volume,
       min(price) OVER (PARTITION BY symbol ORDER BY ts ROWS BETWEEN 4 PRECEDING AND CURRENT ROW) AS low_5
FROM stock_ticks
WINDOW w AS (
  PARTITION BY symbol
  ORDER BY ts
  MEASURES
    LAST(DOWN.ts) AS bottom_ts,
    LAST(UP.ts)   AS end_ts
  ROWS BETWEEN CURRENT ROW AND 30 FOLLOWING
  AFTER MATCH SKIP PAST LAST ROW
  INITIAL
  PATTERN (STRT DOWN+ UP+)
  DEFINE
    DOWN AS price < PREV(price),
    UP   AS price > PREV(price)
)
ORDER BY symbol, ts
