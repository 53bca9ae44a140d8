"""Writes this fixture: a checkpoint of sparkcep's streaming state version 3, stopped mid-stream.

Run with the code of the last commit writing version 3 first on the path (README.md):
``python write_checkpoint.py OUT``; OUT/ receives ``script.json`` (every input batch),
``before.json`` (the rows the stopped run emitted) and ``checkpoint/``.
"""
import datetime as dt
import json
import os
import random
import sys

import sql_ext
from sql_examples.local_spark import get_spark
from stream_support import micros, run_to_end, scripted, write_script

SCHEMA = "k string, ts timestamp, x bigint, seq bigint"
SQL = """
    SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
      MEASURES A.seq AS a, LAST(B.seq) AS b, MATCH_NUMBER() AS mn
      AFTER MATCH SKIP TO NEXT ROW SEMANTICS FLINKCEP
      PATTERN (A -> B -> ~C) WITHIN INTERVAL '4' SECOND
      DEFINE A AS x = 0, B AS x > 7, C AS x = 1) AS m"""
T0 = micros(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
END = micros(dt.datetime(9999, 1, 2, tzinfo=dt.timezone.utc))
FIRST = 3  # batches the stopped run read


def batches() -> list:
    """Keys a, b: a row a second each, x drawn from 0, 1, 8, 9 (A, C, B); five micro-batches
    in event-time order, then the end-of-stream row."""
    rng = random.Random(27)
    rows = [[k, T0 + i * 1_000_000, rng.choice([0, 0, 1, 8, 9, 5]), 0] for i in range(24) for k in "ab"]
    for seq, row in enumerate(rows, 1):
        row[3] = seq
    return [rows[i:i + 10] for i in range(0, len(rows), 10)] + [[["~end", END, 0, 0]]]


def main(out: str) -> None:
    spark = sql_ext.enable(get_spark(app_name="sparkcep-state-v3"))
    every = batches()
    write_script(f"{out}/script.json", SCHEMA, every)
    first = write_script(f"{out}/first.json", SCHEMA, every[:FIRST])
    scripted(spark, first, "ts", "3 seconds").where("ts < TIMESTAMP '9000-01-01'") \
        .createOrReplaceTempView("events_live")
    got, _ = run_to_end(sql_ext.stream(spark, SQL.format(src="events_live")), f"{out}/checkpoint")
    os.remove(first)
    with open(f"{out}/before.json", "w") as f:
        json.dump([[batch, list(row)] for batch, row in got], f)
    print("emitted before the stop:", got)


if __name__ == "__main__":
    main(sys.argv[1])
