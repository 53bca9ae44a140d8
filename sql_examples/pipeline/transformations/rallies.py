"""Definitions of the example pipeline: a streaming table over a Delta table of stock ticks, a
materialized view of the rallies MATCH_RECOGNIZE finds in it, and one summing them up.

spark-pipelines runs this file with ``spark`` (a Spark Connect session) in its namespace.  The
MATCH_RECOGNIZE statement is rewritten here, while the definitions load: the rewrite reads the
schema of its input, which a pipeline's query functions may not do, so the query function
returns the DataFrame made now (docs/deploying.md, "Spark Declarative Pipelines")."""
import os

from pyspark import pipelines as dp

import sql_ext
from sql_examples.sdp import RALLIES_SQL

sql_ext.enable(spark)  # noqa: F821 (spark-pipelines provides it)
TICKS = os.environ["SPARKCEP_EXAMPLE_TICKS"]  # the Delta table of stock ticks (sql_examples/sdp.py)
RALLIES = spark.sql(RALLIES_SQL, ticks=spark.read.table(f"delta.`{TICKS}`"))  # noqa: F821


@dp.table(format="delta", comment="the ticks as they arrive")
def ticks_bronze():
    return spark.readStream.format("delta").load(TICKS)  # noqa: F821


@dp.materialized_view(format="delta", comment="five or more rising ticks in a row")
def rallies():
    return RALLIES


@dp.materialized_view(format="delta")
def rallies_per_symbol():
    return spark.sql("SELECT symbol, count(*) AS rallies, max(rises) AS longest, round(sum(gain), 2) AS gain "  # noqa: F821
                     "FROM rallies GROUP BY symbol")
