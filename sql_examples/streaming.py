"""Streaming MATCH_RECOGNIZE, Delta in and Delta out (``make demo`` runs ``demo_streaming``).

Card transactions land in the Delta table ``card_events`` in four commits (a few rows of the
third arrive with the fourth: out of order, within the watermark delay) and one end-of-stream
marker row.  The query ``FRAUD_SQL`` - three or more small charges then a large one within
an hour - runs with ``sql_ext.stream`` on a streaming read of the table (one commit per
micro-batch, watermark 10 minutes) into the Delta table ``fraud_alerts``, with an
available-now trigger and a checkpoint.  Then the same SQL text runs as a batch query over
the table and the two results are compared.  ``python -m sql_examples.streaming`` runs it
alone.

The marker row (card ``~end``, event time 9999-01-02) moves the watermark past
``udtf.stream.END_OF_STREAM``, which ends every partition as the end of a batch query's input
does; the filter ``ts < TIMESTAMP '9000-01-01'`` drops it after the watermark saw it.
"""
from __future__ import annotations

import datetime as dt
import random
import shutil
from pathlib import Path

FRAUD_SQL = """
SELECT * FROM card_events MATCH_RECOGNIZE (
  PARTITION BY card ORDER BY ts
  MEASURES FIRST(A.ts) AS start_ts, LAST(C.ts) AS end_ts, COUNT(B.*) AS small_charges,
           LAST(C.amount) AS amount
  PATTERN (A B{3,} C) WITHIN INTERVAL '1' HOUR
  DEFINE A AS amount < 2, B AS amount < 2, C AS amount > 500) AS m
"""
SCHEMA = "card string, ts timestamp, amount double"
KEEP = "ts < TIMESTAMP '9000-01-01'"
END = dt.datetime(9999, 1, 2)


def card_events(seed: int = 12, cards: int = 40, per_card: int = 150) -> list:
    """(card, ts, amount) rows: a charge every 1-5 minutes per card; now and then a burst of
    small charges, sometimes followed by a large one."""
    rng = random.Random(seed)
    start = dt.datetime(2024, 3, 1, 8, 0)
    rows = []
    for c in range(cards):
        ts = start + dt.timedelta(seconds=rng.randrange(300))
        burst = 0
        for _ in range(per_card):
            ts += dt.timedelta(seconds=rng.randrange(60, 300))
            if burst:
                burst -= 1
                amount = 0.5 + rng.random() if burst else (900.0 if rng.random() < .7 else 20.0)
            else:
                amount = round(5 + rng.random() * 100, 2)
                burst = rng.choice([0] * 12 + [4, 5, 6])
            rows.append((f"card{c:02d}", ts, round(amount, 2)))
    return rows


def demo_streaming(spark, root: Path, cards: int = 40, per_card: int = 150) -> dict:
    """Run the example under ``root`` (recreated) on ``cards`` cards of ``per_card`` events;
    returns the counts and whether the streaming result equals the batch one."""
    import sql_ext

    shutil.rmtree(root, ignore_errors=True)
    source, sink, checkpoint = str(root / "card_events"), str(root / "fraud_alerts"), str(root / "checkpoint")
    rows = card_events(cards=cards, per_card=per_card)
    rows.sort(key=lambda r: r[1])
    quarter = len(rows) // 4
    commits = [rows[:quarter], rows[quarter:2 * quarter], rows[2 * quarter:3 * quarter], rows[3 * quarter:]]
    # card01's rows of the third commit's last 5 minutes arrive with the fourth: out of order,
    # but within the watermark delay
    late = [r for r in commits[2] if r[0] == "card01" and r[1] > commits[2][-1][1] - dt.timedelta(minutes=5)]
    commits[2] = [r for r in commits[2] if r not in late]
    commits[3] = late + commits[3]
    for rows_ in commits + [[("~end", END, 0.0)]]:
        spark.createDataFrame(rows_, SCHEMA).write.format("delta").mode("append").save(source)

    events = (spark.readStream.format("delta").option("maxFilesPerTrigger", 1).load(source)
              .withWatermark("ts", "10 minutes").where(KEEP))
    events.createOrReplaceTempView("card_events")
    query = (sql_ext.stream(spark, FRAUD_SQL).writeStream.format("delta").outputMode("append")
             .option("checkpointLocation", checkpoint).trigger(availableNow=True).start(sink))
    query.awaitTermination()
    batches = len(query.recentProgress)

    spark.read.format("delta").load(source).where(KEEP).createOrReplaceTempView("card_events")
    batch = sorted(tuple(r) for r in spark.sql(FRAUD_SQL).collect())
    streamed = sorted(tuple(r) for r in spark.read.format("delta").load(sink).collect())
    return {"events": sum(len(c) for c in commits), "micro_batches": batches, "alerts": len(streamed),
            "batch_alerts": len(batch), "equal": streamed == batch, "first": streamed[:3]}


def main() -> int:
    """``python -m sql_examples.streaming``: run the example on a local Spark with Delta."""
    import sql_ext

    from .demo import DEFAULT_OUTPUT
    from .local_spark import get_spark

    spark = sql_ext.enable(get_spark(app_name="sparkcep-streaming"))
    report = demo_streaming(spark, DEFAULT_OUTPUT / "streaming")
    for key, value in report.items():
        print(f"{key}: {value}")
    return 0 if report["equal"] else 1


if __name__ == "__main__":
    import sys

    sys.exit(main())
