"""MIN / MAX and MAX_BY / MIN_BY measures, which the emitter computes for all the matches of a
flush at once (``udtf.emit_folds._scanned``), give the rows the per-match row fold gives (the
same engine with no vectorized aggregate): SQL in, the engine's rows out, over matches short
and longer than ``emit_folds.LONGEST``, NULLs, NaN, -0.0, ties, empty matches, RUNNING in ALL
ROWS and a sum that overflows under ANSI."""
from __future__ import annotations

import datetime as dt
import math
import random
import re

import pyarrow as pa
import pytest

import udtf.arrow
import udtf.emit
from sql_support import mr_spark  # noqa: F401  (fixture)
from test_emit import same
from udtf.errors import MatchRecognizeError

import sql_ext

MEASURES = """MIN(A.x) AS m0, MAX(x) AS m1, MIN(d) AS m2, MAX(A.d) AS m3, MAX(B.ts) AS m4, MIN(DISTINCT A.i) AS m5,
    MAX_BY(A.s, A.d) AS m6, MIN_BY(d, x) AS m7, MAX_BY(x, s) AS m8, MIN_BY(A.ts, A.i) AS m9,
    RUNNING MAX(A.x) - FINAL MIN(A.d) AS m10, COUNT(*) AS m11"""


def _rows(seed: int, big: bool) -> list:
    """Partitions of runs of rows (one longer than ``emit_folds.LONGEST``), with NULLs, NaN,
    -0.0, ties; ``big``: values whose sum leaves BIGINT."""
    rng = random.Random(seed)
    out = []
    for p in range(3):
        n = 700 if p == 0 else 60
        for i in range(n):
            maybe = lambda v: None if rng.random() < 0.1 else v
            x = rng.choice([2 ** 62, 2 ** 62 + 1]) if big else rng.randint(-3, 3)
            out.append((p, i, maybe(x), maybe(rng.choice([0.0, -0.0, math.nan, 1.5, -2.5, 1e300, -math.inf])),
                        maybe(rng.choice(["a", "b", "c"])), maybe(dt.datetime(2024, 1, 1) + dt.timedelta(rng.randint(0, 3))),
                        i % 350 == 349 if p == 0 else rng.random() < 0.3))
    return out


def _engine(spark, sql: str, monkeypatch) -> tuple:
    """The rows the engine gives for ``sql``'s MATCH_RECOGNIZE over its input (in this process),
    as it runs and with every aggregate by its row fold, match by match (or each one's error)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    captured = {}
    original = udtf.arrow.make_udtf

    def capture(plan, return_type, **kwargs):
        captured.update(plan=plan, return_type=return_type)
        return original(plan, return_type, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(udtf.arrow, "make_udtf", capture)
        rewritten = sql_ext.transpile(sql, spark)
    name = re.search(r"sparkcep_mr_\w+", rewritten).group(0)
    start = rewritten.lower().index(name.lower() + "(") + len(name)
    depth, end = 0, start
    for end in range(start, len(rewritten)):
        depth += {"(": 1, ")": -1}.get(rewritten[end], 0)
        if depth == 0:
            break
    argument = rewritten[start + 1:end]
    batches = spark.sql(f"SELECT * FROM {argument[len('TABLE'):]}").toArrow().to_batches(1000)
    schema = to_arrow_schema(captured["return_type"], timezone="UTC")
    outs = []
    for vectorized in (True, False):
        with monkeypatch.context() as m:
            if not vectorized:
                m.setattr(udtf.emit.VectorFold, "of", staticmethod(lambda agg, fold: None))
            runner = udtf.arrow.PartitionRunner(captured["plan"], schema)
            try:
                out = [b for batch in batches for b in runner.feed(batch)] + list(runner.finish())
                outs.append(pa.Table.from_batches(out, schema).to_pylist())
            except MatchRecognizeError as e:
                outs.append(str(e))
    return tuple(outs)


@pytest.mark.parametrize("rows, pattern", [
    ("ONE ROW PER MATCH", "A+ B"),
    ("ALL ROWS PER MATCH", "A+ B"),
    ("ALL ROWS PER MATCH SHOW EMPTY MATCHES", "A* B?"),
    ("ALL ROWS PER MATCH WITH UNMATCHED ROWS", "A{2,} B"),
])
def test_picking_aggregates_match_the_row_fold(mr_spark, monkeypatch, rows, pattern):  # noqa: F811
    mr_spark.createDataFrame(_rows(5, False), "p INT, i INT, x BIGINT, d DOUBLE, s STRING, ts TIMESTAMP, e BOOLEAN") \
        .createOrReplaceTempView("picks")
    measures = MEASURES if rows.startswith("ONE") else MEASURES.replace("MIN(A.x)", "RUNNING MIN(A.x)") \
        .replace("MAX_BY(A.s", "RUNNING MAX_BY(A.s").replace("MIN(d)", "FINAL MIN(d)")
    sql = f"""SELECT * FROM picks MATCH_RECOGNIZE (PARTITION BY p ORDER BY i MEASURES {measures}
      {rows} PATTERN ({pattern}) DEFINE A AS NOT e, B AS e) AS m"""
    vectorized, per_match = _engine(mr_spark, sql, monkeypatch)
    assert isinstance(vectorized, list) and len(vectorized) > 20
    assert same(vectorized, per_match)


def test_an_overflowing_sum_beside_them_raises_as_the_row_fold_does(mr_spark, monkeypatch, confs):  # noqa: F811
    mr_spark.createDataFrame(_rows(6, True), "p INT, i INT, x BIGINT, d DOUBLE, s STRING, ts TIMESTAMP, e BOOLEAN") \
        .createOrReplaceTempView("picks_big")
    sql = """SELECT * FROM picks_big MATCH_RECOGNIZE (PARTITION BY p ORDER BY i
      MEASURES MAX(A.x) AS hi, MIN_BY(A.i, A.x) AS at, SUM(A.x) AS total ALL ROWS PER MATCH
      PATTERN (A+ B) DEFINE A AS NOT e, B AS e) AS m"""
    confs(mr_spark, {"spark.sql.ansi.enabled": "true"})
    error, per_match = _engine(mr_spark, sql, monkeypatch)
    assert "ARITHMETIC_OVERFLOW" in error and error == per_match
    confs(mr_spark, {"spark.sql.ansi.enabled": "false"})
    wrapped, per_match = _engine(mr_spark, sql, monkeypatch)
    assert isinstance(wrapped, list) and len(wrapped) > 100 and same(wrapped, per_match)
