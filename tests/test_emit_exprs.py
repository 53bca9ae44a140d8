"""Aggregates over expressions (Spark computes the argument as a column), with FILTER and
with DISTINCT, MIN / MAX of STRING, DECIMAL, BINARY and BOOLEAN columns (ranked) and SUM / AVG
of DECIMAL ones (unscaled int64s), which the emitter computes for all the matches of a flush
at once (``udtf.emit_folds``), give the rows
the per-match row fold gives: SQL in, the engine's rows out (``test_emit_picks._engine``), over
clean columns (every such measure vectorized) and over NULLs (vectorized where the expression
is NULL with them) and NaN (the row fold decides), RUNNING in ALL ROWS, empty matches, -0.0.
(``test_emit``'s oracle test covers arguments left as expressions, as in an engine plan.)"""
from __future__ import annotations

import math
import random
from decimal import Decimal

import pytest

import udtf.emit
from sql_support import mr_spark  # noqa: F401  (fixture)
from test_emit import same
from test_emit_picks import _engine

MEASURES = """SUM(A.x * A.i) AS m0, AVG(A.d - A.x) AS m1, MIN(A.d * 2.0D) AS m2, MAX(x + i) AS m3,
    COUNT(DISTINCT A.x) AS m4, SUM(DISTINCT d) AS m5, AVG(DISTINCT A.x) AS m6, COUNT(DISTINCT d) AS m7,
    SUM(A.x) FILTER (WHERE A.d > 0) AS m8, COUNT(*) FILTER (WHERE x > 0) AS m9,
    MAX_BY(i, x) FILTER (WHERE d < 1) AS m10, STDDEV(A.d + A.x) AS m11, BOOL_OR(x > 1) FILTER (WHERE i > 10) AS m12,
    COUNT(A.d * A.x) AS m13, SUM(DISTINCT A.x - A.i) FILTER (WHERE A.d <> 0) AS m14, COUNT_IF(d > x) AS m15,
    AVG(A.d) FILTER (WHERE A.x < 2) AS m16, MIN(A.s) AS m17, MAX(s) AS m18, MIN(m) AS m19,
    MAX(A.m) FILTER (WHERE A.x > 0) AS m20, MAX(A.b) AS m21, MIN(e) AS m22, SUM(A.m) AS m23,
    AVG(A.m) FILTER (WHERE A.x > 0) AS m24, SUM(DISTINCT m) AS m25"""
KINDS = "p INT, i INT, x BIGINT, d DOUBLE, e BOOLEAN, s STRING, m DECIMAL(10,2), b BINARY"


def _rows(seed: int, odd: bool) -> list:
    """Partitions of runs of rows, values repeating; ``odd``: with NULLs and NaN, else clean."""
    rng = random.Random(seed)
    out = []
    for p in range(3):
        for i in range(300 if p == 0 else 60):
            maybe = (lambda v: None if rng.random() < 0.1 else v) if odd else (lambda v: v)
            d = rng.choice([0.0, -0.0, 1.5, -2.5, 0.1, 0.2, 0.3] + ([math.nan] if odd else []))
            out.append((p, i, maybe(rng.randint(-3, 3)), maybe(d), rng.random() < 0.3,
                        maybe(rng.choice(["a", "B", "é", "", "ab", "\U0001f600", "z"])),
                        maybe(rng.choice([Decimal("1.25"), Decimal("-0.50"), Decimal("0.00"), Decimal("12.10")])),
                        maybe(rng.choice([b"", b"\x00", b"\xff", b"a"]))))
    return out


def _sql(view: str, rows: str, pattern: str) -> str:
    measures = MEASURES if rows.startswith("ONE") else MEASURES.replace("SUM(A.x * A.i)", "RUNNING SUM(A.x * A.i)") \
        .replace("COUNT(DISTINCT A.x)", "RUNNING COUNT(DISTINCT A.x)").replace("AVG(A.d - A.x)", "FINAL AVG(A.d - A.x)")
    return f"""SELECT * FROM {view} MATCH_RECOGNIZE (PARTITION BY p ORDER BY i MEASURES {measures}
      {rows} PATTERN ({pattern}) DEFINE A AS NOT e, B AS e) AS m"""


@pytest.mark.parametrize("rows, pattern", [
    ("ONE ROW PER MATCH", "A+ B"),
    ("ALL ROWS PER MATCH", "A+ B"),
    ("ALL ROWS PER MATCH SHOW EMPTY MATCHES", "A* B?"),
    ("ALL ROWS PER MATCH WITH UNMATCHED ROWS", "A{2,} B"),
])
def test_expression_filter_and_distinct_aggregates_are_vectorized_as_the_row_fold(
        mr_spark, monkeypatch, rows, pattern):  # noqa: F811
    mr_spark.createDataFrame(_rows(7, False), KINDS).createOrReplaceTempView("exprs")
    folded, of, fold = [], udtf.emit.VectorFold.of, udtf.emit.Emitter._folded

    def recorded(self, s, expr, running):  # (an aggregate the vectorized run leaves to the row fold)
        if udtf.emit.VectorFold.of is of:
            folded.append(expr)
        return fold(self, s, expr, running)

    monkeypatch.setattr(udtf.emit.Emitter, "_folded", recorded)
    vectorized, per_match = _engine(mr_spark, _sql("exprs", rows, pattern), monkeypatch)
    assert isinstance(vectorized, list) and len(vectorized) > 20
    assert same(vectorized, per_match)
    assert folded == []


@pytest.mark.parametrize("rows", ["ONE ROW PER MATCH", "ALL ROWS PER MATCH"])
def test_over_nulls_and_nan_the_row_fold_decides(mr_spark, monkeypatch, rows):  # noqa: F811
    mr_spark.createDataFrame(_rows(8, True), KINDS).createOrReplaceTempView("exprs_odd")
    vectorized, per_match = _engine(mr_spark, _sql("exprs_odd", rows, "A+ B"), monkeypatch)
    assert isinstance(vectorized, list) and len(vectorized) > 20
    assert same(vectorized, per_match)
