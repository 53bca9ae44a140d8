"""The chunked plan (issue 28 item 3; ``sql_ext.compiler.chunked``): SQL in, rows out, the same
rows as the serial plan on random bounded patterns, DEFINEs (masks, PREV / NEXT, match state),
measures (MATCH_NUMBER, CLASSIFIER, navigation with offsets, aggregates, RUNNING / FINAL), every
rows-per-match and skip mode (a skip error included), and chunks smaller than a match."""
from __future__ import annotations

import random
import re

import pytest

from sql_ext import transpile
from sql_support import mr_spark  # noqa: F401  (fixture)
from test_engine_properties import STD_VARS as VARS, _random_std_pattern, std_known_bug
from udtf.errors import MatchRecognizeError
from udtf.pattern import Anchor, max_rows, parse_pattern, walk

CHUNK_ROWS = "spark.sparkcep.chunkRows"


def _define(rng, var: str, present: list) -> str:
    other = rng.choice(present)
    return rng.choice([
        f"p > {rng.randint(1, 5)}",
        f"p < {rng.randint(2, 7)}",
        f"p > PREV(p, {rng.randint(1, 2)})",
        "p <= NEXT(p)",
        f"SUM({var}.p) < {rng.randint(4, 12)}",
        f"COUNT({other}.*) < 2 AND p <> {rng.randint(0, 6)}",
        f"p >= LAST({other}.p, 0)",
    ])


MEASURES = ["MATCH_NUMBER() AS mn", "CLASSIFIER() AS cls", "FIRST(p) AS fp", "LAST(p, 1) AS lp1",
            "COUNT(*) AS n", "SUM(A.p) AS sa", "PREV(FIRST(p), 2) AS before", "NEXT(LAST(p)) AS after",
            "FINAL MAX(p) AS top", "RUNNING AVG(p) AS avg_p", "FIRST(t) AS ft", "LAST(B.t) AS lbt"]
ROWS = ["ONE ROW PER MATCH", "ALL ROWS PER MATCH", "ALL ROWS PER MATCH OMIT EMPTY MATCHES",
        "ALL ROWS PER MATCH WITH UNMATCHED ROWS"]
SKIPS = ["PAST LAST ROW", "PAST LAST ROW", "TO NEXT ROW", "TO NEXT ROW", "TO FIRST {}", "TO LAST {}"]


def _query(rng) -> str:
    while True:  # a pattern whose matches are bounded in rows
        pattern = _random_std_pattern(rng)
        node = parse_pattern(pattern)
        present = [v for v in VARS if v in pattern]
        if present and max_rows(node) is not None and not std_known_bug(pattern) and \
                not any(isinstance(x, Anchor) and x.kind == "$" for x in walk(node)):
            break
    rows = rng.choice(ROWS[:3] if "{-" in pattern else ROWS)  # (exclusion and unmatched rows: an error)
    measures = [m for m in rng.sample(MEASURES, rng.randint(1, 5)) if "A." not in m or "A" in present]
    measures = [m for m in measures if "B." not in m or "B" in present] or ["COUNT(*) AS n"]
    defines = [f"{v} AS {_define(rng, v, present)}" for v in present if rng.random() < .8]
    skip = rng.choice(SKIPS).format(rng.choice(present))
    return (f"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY t MEASURES {', '.join(measures)} {rows} "
            f"AFTER MATCH SKIP {skip} PATTERN ({pattern}) "
            f"{'DEFINE ' + ', '.join(defines) if defines else ''}) AS m")


def _outcome(spark, query):
    try:
        return sorted((tuple(r) for r in spark.sql(query).collect()), key=repr)
    except MatchRecognizeError as e:  # (a skip error: the same message from both plans)
        return str(e)


@pytest.fixture(scope="module")
def ticks(mr_spark):
    spark = mr_spark
    rng = random.Random(28)
    rows = [(i, rng.randint(0, 7)) for i in range(200)]
    rng.shuffle(rows)
    spark.createDataFrame(rows, "t long, p int").createOrReplaceTempView("t")
    yield
    spark.catalog.dropTempView("t")


@pytest.mark.parametrize("seed", [*range(12), *(pytest.param(s, marks=pytest.mark.slow) for s in range(12, 60))])
def test_chunked_plan_equals_the_serial_plan(spark, confs, ticks, seed):
    rng = random.Random(seed)
    query = _query(rng)
    confs(spark, {CHUNK_ROWS: "0"})
    serial = _outcome(spark, query)
    confs(spark, {CHUNK_ROWS: str(rng.choice([1, 2, 3, 5, 17, 50, 500]))})
    assert "_stitch" in transpile(query, spark)
    assert _outcome(spark, query) == serial, query


def test_serial_plan_where_no_bound_is_shown(spark, confs, ticks):
    confs(spark, {CHUNK_ROWS: "5"})
    unbounded = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY t MEASURES COUNT(*) AS n PATTERN (A B+) " \
                "DEFINE B AS p > PREV(p)) AS m"
    end = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY t MEASURES COUNT(*) AS n PATTERN (A B $) " \
          "DEFINE B AS p > PREV(p)) AS m"
    numbered = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY t MEASURES COUNT(*) AS n PATTERN (A B) " \
               "DEFINE B AS p > MATCH_NUMBER()) AS m"
    keyed = "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY p ORDER BY t MEASURES COUNT(*) AS n PATTERN (A B) " \
            "DEFINE B AS t > PREV(t)) AS m"
    for query in (unbounded, end, numbered, keyed):
        assert "_stitch" not in transpile(query, spark), query


def test_the_chunk_udtf_runs_once(spark, confs, ticks):
    """The stitch and the final join read one exchange of the chunk UDTF's output: adaptive
    execution's final plan runs the UDTF once, its second reader a ReusedExchange."""
    confs(spark, {CHUNK_ROWS: "7"})
    df = spark.sql("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY t MEASURES MATCH_NUMBER() AS mn ALL ROWS PER MATCH "
                   "WITH UNMATCHED ROWS PATTERN (A B{1,3}) DEFINE B AS p > PREV(p)) AS m")
    assert len(df.collect()) == 200
    final = df._jdf.queryExecution().executedPlan().toString().split("Initial Plan")[0]
    assert len(re.findall(r"ArrowEvalPythonUDTF sparkcep_mr_\w{16}\(", final)) == 1
    assert "ReusedExchange" in final


def test_a_limit_is_the_serial_plans_error(spark, confs, ticks):
    """A limit the chain meets is raised as in the serial plan (its rows the partition's)."""
    query = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY t MEASURES COUNT(*) AS n PATTERN (A B{1,4}) " \
            "DEFINE A AS p > 5, B AS p < 7) AS m"
    confs(spark, {"spark.sparkcep.maxMatchRows": "2", CHUNK_ROWS: "0"})
    serial = _outcome(spark, query)
    assert "spans more than 2 rows" in serial and "in the partition at its row" in serial
    confs(spark, {CHUNK_ROWS: "3"})
    chunked = _outcome(spark, query)
    # (the serial plan names the longest of the runs its fastest tier decided at once, the
    # chunked plan the first start on the chain that spans too many rows)
    assert chunked.split(" from row")[0] == serial.split(" from row")[0], chunked
    assert "in the partition at its row" in chunked
