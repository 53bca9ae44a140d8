"""One partition larger than the rows the UDTF holds at once (``udtf.arrow.FORGET_AT``): rows
no live run can read are released while the partition streams through, and the answers are
what a complete partition gives (checked against closed forms over ``id % 3``)."""
from __future__ import annotations

import pytest

from sql_support import mr_spark, rows  # noqa: F401  (fixture)
from udtf.arrow import FORGET_AT

N = 3 * FORGET_AT + 2  # ids 0 .. N-1; x = id % 3; the last match is A B (one B)
M = N // 3 + 1  # matches: one per A row (x = 0)

pytestmark = pytest.mark.slow


def query(define_b: str, rows_mode: str = "ONE ROW PER MATCH") -> str:
    return f"""
        SELECT count(*), sum(s), sum(e), sum(p), max(n), sum(c), count(p) FROM
          (SELECT id, id % 3 AS x FROM range({N}))
        MATCH_RECOGNIZE (
          ORDER BY id
          MEASURES FIRST(A.id) AS s, LAST(B.id) AS e, PREV(A.id, 2) AS p, MATCH_NUMBER() AS n,
                   COUNT(*) AS c
          {rows_mode}
          PATTERN (A B+)
          DEFINE A AS x = 0, B AS {define_b}) AS m"""


def expected(all_rows: bool) -> tuple:
    starts = [3 * k for k in range(M)]
    ends = [min(s + 2, N - 1) for s in starts]
    counts = [e - s + 1 for s, e in zip(starts, ends)]
    prevs = [s - 2 for s in starts if s >= 2]
    if not all_rows:
        return (M, sum(starts), sum(ends), sum(prevs), M, sum(counts), len(prevs))
    # ALL ROWS PER MATCH: one row per matched row, RUNNING measures (e and c grow in the match)
    e_sum = sum(r for s, e in zip(starts, ends) for r in range(s + 1, e + 1))  # NULL on A rows
    c_sum = sum(k + 1 for s, e in zip(starts, ends) for k in range(e - s + 1))
    return (sum(counts), sum(s * c for s, c in zip(starts, counts)), e_sum,
            sum((s - 2) * c for s, c in zip(starts, counts) if s >= 2), M, c_sum,
            sum(c for s, c in zip(starts, counts) if s >= 2))


@pytest.mark.parametrize("define_b", ["x > 0", "x > 0 AND B.id > A.id"], ids=["masks", "match state"])
def test_one_row_per_match_over_a_large_partition(mr_spark, define_b):
    assert rows(mr_spark, query(define_b)) == [expected(False)]


def test_all_rows_per_match_over_a_large_partition(mr_spark):
    assert rows(mr_spark, query("x > 0 AND B.id > A.id", "ALL ROWS PER MATCH")) == [expected(True)]


@pytest.mark.parametrize("define_b", ["x > 0", "x > 0 AND B.id > A.id"], ids=["masks", "match state"])
def test_next_in_measures_reads_the_next_batch(mr_spark, confs, define_b):
    """A match ending on the last row of an Arrow batch is reported once the next batch brings
    the row its NEXT reads (batches of 7 rows: the match 18..20 ends one)."""
    confs(mr_spark, {"spark.sql.execution.arrow.maxRecordsPerBatch": "7"})
    got = rows(mr_spark, f"""
        SELECT count(n), sum(n) FROM (SELECT id, id % 3 AS x FROM range(100))
        MATCH_RECOGNIZE (ORDER BY id MEASURES NEXT(B.id) AS n PATTERN (A B{{2}})
                         DEFINE A AS x = 0, B AS {define_b}) AS m""")
    assert got == [(33, sum(3 * k + 3 for k in range(33)))]
