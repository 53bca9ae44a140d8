"""Zone-dependent expressions over match state give Spark's values in every session zone.

Each expression ``E`` is evaluated by the engine over the row mapped to A (``E(MAX(A.x))``, an
aggregate over match state) and by Spark over the same row (``E(PREV(x))``, a LAG window), in
``DEFINE B AS E(engine) <=> E(Spark)`` of ``PATTERN (A B)``, one partition per (expression,
value): every partition must match.  Values straddle DST gaps and overlaps, dates before 1900
(local mean time), after 2037, and timestamp strings with and without a zone.
"""
from __future__ import annotations

import pytest

from sql_support import mr_spark  # noqa: F401  (fixture)

ZONES = ["America/Los_Angeles", "Asia/Kolkata", "+05:30", "-08:00", "UTC", "America/Sao_Paulo"]

# (an instant as unix seconds, a timestamp string) per value row
VALUES = [
    (1710064800, "2024-03-10 02:30:00"),  # LA: the instant 02:00 PST -> 03:00 PDT; the string in the gap
    (1730622600, "2024-11-03 01:30:00"),  # LA: the first 01:30 (PDT); the string in the overlap
    (1730626200, "2024-11-03 01:30:00.5"),  # the second 01:30 (PST)
    (1764667800, "2025-12-02 01:30:00"),  # 01:30 PST, minus a month: the ambiguous 2025-11-02 01:30
    (1541300400, "2018-11-04 00:00:00"),  # Sao Paulo: midnight in a gap
    (-5364662400, "1800-01-01 00:00:00"),  # local mean time
    (-1, "1969-12-31 23:59:59.999999"),
    (1704049200, "2024-01-01 00:00:00+05:00"),
    (7258118400, "2200-01-01 12:00:00 America/New_York"),
    (1717243200, "2024-06-01T12:00:00Z"),
]

EXPRESSIONS = [
    "CAST({ts} AS DATE)", "CAST({ts} AS STRING)", "CAST({ts} AS TIMESTAMP_NTZ)", "CAST({n} AS TIMESTAMP)",
    "CAST({d} AS TIMESTAMP)", "CAST({s} AS TIMESTAMP)", "CAST({s} AS TIMESTAMP_NTZ)",
    "{ts} + INTERVAL '1' DAY", "{ts} - INTERVAL '36' HOUR", "{ts} + INTERVAL '-1 02:03:04.5' DAY TO SECOND", "{ts} = {s}", "{ts} >= {d}", "{ts} = {n}", "{ts} < {n}", "date_add({ts}, 1)",
    "{ts} BETWEEN {d} AND {s}", "concat({ts}, '|', {d})", "CAST({ts} AS DATE) = {d}",
    "{ts} IN ({s}, {d})",
    # the difference of two TIMESTAMPs is that of their wall clocks in the session zone
    "{ts} - CAST({s} AS TIMESTAMP)", "{ts} - {d}", "{d} - {ts}", "{n} - CAST({d} AS TIMESTAMP_NTZ)",
    # ... but a TIMESTAMP_NTZ beside it makes both wall clocks (one in a gap stays there)
    "{n} - {ts}", "{ts} - {n}", "{n} - {d}", "{d} - {n}",
    "greatest({n}, {ts})", "coalesce({n}, {ts})", "{n} > {ts}", "CASE WHEN {n} > {ts} THEN {n} ELSE {ts} END",
    # year-month interval literals are engine literals (Arrow cannot carry them as columns)
    "{ts} + INTERVAL '1' MONTH", "{ts} - INTERVAL '1' MONTH", "{ts} - INTERVAL '1-2' YEAR TO MONTH",
    "{n} + INTERVAL 2 MONTHS", "{d} + INTERVAL '-3' YEAR", "{ts} + INTERVAL '1' MONTH > {s}",
]
COLUMNS = ("ts", "s", "n", "d")


def _expr(template: str, wrap) -> str:
    return template.format(**{c: wrap(c) for c in COLUMNS})


def _query() -> str:
    branches = "\n".join(
        f"    WHEN {e} THEN ({_expr(t, lambda c: f'MAX(A.{c})')}) <=> ({_expr(t, lambda c: f'PREV({c})')})"
        for e, t in enumerate(EXPRESSIONS))
    return f"""SELECT e, v FROM tz_grid MATCH_RECOGNIZE (
  PARTITION BY e, v ORDER BY o MEASURES LAST(B.o) AS b PATTERN (A B)
  DEFINE B AS CASE e
{branches}
  END) AS m"""


@pytest.fixture
def zoned(mr_spark):
    """The shared session with the grid view."""
    values = ", ".join(f"({v}, {us}, '{s}')" for v, (us, s) in enumerate(VALUES))
    mr_spark.sql(f"""CREATE OR REPLACE TEMP VIEW tz_grid AS
        SELECT e.id AS e, v, o, timestamp_seconds(us) AS ts, s, CAST(s AS TIMESTAMP_NTZ) AS n,
               CAST(substr(s, 1, 10) AS DATE) AS d
        FROM VALUES {values} AS t(v, us, s), range({len(EXPRESSIONS)}) AS e, VALUES (1), (2) AS os(o)""")
    return mr_spark


@pytest.mark.parametrize("zone", ZONES)
def test_zone_dependent_expressions_over_match_state_agree_with_spark(zoned, confs, zone):
    confs(zoned, {"spark.sql.session.timeZone": zone})
    matched = {(r.e, r.v) for r in zoned.sql(_query()).collect()}
    missing = [(EXPRESSIONS[e], VALUES[v]) for e in range(len(EXPRESSIONS)) for v in range(len(VALUES))
               if (e, v) not in matched]
    assert not missing, f"{len(missing)} disagree in {zone}, e.g. {missing[:8]}"
