"""sparkcep vs Trino 476 on generated standard MATCH_RECOGNIZE queries (marker ``trino``).

* ``test_generated_corpus``: SPARKCEP_TRINO_QUERIES (default 2000) queries from the seeded
  generator (SPARKCEP_TRINO_SEED, default 20261124; SPARKCEP_TRINO_EXTENDED=1 draws the
  wider constructs twice as often) over 24 small tables.  Fails for a disagreement that no
  entry of ``known.KNOWN`` explains, with the first few minimized to a repro; a query Trino
  stops at its time limit is not compared (``trino-timeout`` in the outcomes).  The full
  report goes to ``.trino/last-report.txt``.
* ``test_generated_window_corpus``: the same over SPARKCEP_TRINO_WINDOW_QUERIES (default 400)
  generated queries of row pattern recognition in a window (R020; ``.trino/last-window-report.txt``).
* ``test_known_disagreement``: each known entry's repro still disagrees the recorded way
  (pinned: once sparkcep is fixed the test fails, so the entry gets removed).
* ``test_fixed_disagreement``: each disagreement found and fixed (``known.AGREED``) agrees.
"""
from __future__ import annotations

import os
import time
from collections import Counter

import pytest

import harness
import known
import querygen as qg
from server import TRINO_DIR

pytestmark = [pytest.mark.trino, pytest.mark.slow]

N_QUERIES = int(os.environ.get("SPARKCEP_TRINO_QUERIES", "2000"))
N_WINDOW_QUERIES = int(os.environ.get("SPARKCEP_TRINO_WINDOW_QUERIES", "400"))
SEED = int(os.environ.get("SPARKCEP_TRINO_SEED", "20261124"))
EXTENDED = os.environ.get("SPARKCEP_TRINO_EXTENDED") == "1"
MINIMIZE = int(os.environ.get("SPARKCEP_TRINO_MINIMIZE", "3"))


@pytest.mark.timeout(3600)
def test_generated_corpus(runner):
    gen = qg.Generator(SEED, extended=EXTENDED)
    _campaign(runner, *gen.corpus(N_QUERIES, 24), SEED, "last-report.txt")


@pytest.mark.timeout(3600)
def test_generated_window_corpus(runner):
    """Row pattern recognition in a window (R020): SPARKCEP_TRINO_WINDOW_QUERIES (default 400)."""
    gen = qg.Generator(SEED, extended=EXTENDED)
    _campaign(runner, *gen.window_corpus(N_WINDOW_QUERIES, 24), SEED, "last-window-report.txt")


def _campaign(runner, tables, queries, seed, report):
    t0 = time.monotonic()
    runner.stats.clear()
    runner.load(tables)
    cases = []
    for start in range(0, len(queries), 300):
        cases += runner.run(queries[start:start + 300])
    elapsed = time.monotonic() - t0
    bad = [c for c in cases if c.diff]
    for c in bad:
        c.known = known.classify(c.query, c)
    unexpected = [c for c in bad if not c.known]
    unexpected.sort(key=lambda c: len(c.query.render("spark")) + 40 * len(c.table.rows))
    reports = []
    for i, c in enumerate(unexpected):
        if i < MINIMIZE:
            c = harness.minimize(runner, c)
        reports.append(c.report())
    summary = [
        f"{len(cases)} queries (seed {seed}, extended={EXTENDED}) in {elapsed:.0f} s "
        f"({1000 * elapsed / max(1, len(cases)):.0f} ms per query, both engines)",
        f"outcomes: {dict(runner.stats)}",
        f"known disagreements: {dict(Counter(c.known for c in bad if c.known))}",
        f"timings: {dict((k, round(v, 1)) for k, v in runner.timings.items())}; "
        f"spark: {dict((k, round(v, 1)) for k, v in runner.spark.timings.items())}, {runner.spark.jobs} jobs",
        f"unexpected disagreements: {len(unexpected)}",
    ]
    TRINO_DIR.mkdir(parents=True, exist_ok=True)
    (TRINO_DIR / report).write_text("\n".join(summary) + "\n\n" + ("\n\n" + "=" * 80 + "\n").join(reports))
    print("\n".join(summary))
    assert len(cases) == len(queries)
    assert not unexpected, (
        "\n".join(summary) + "\n\nunexpected disagreements with Trino (full list in .trino/last-report.txt; "
        "first ones minimized):\n\n" + ("\n\n" + "=" * 80 + "\n").join(reports[:MINIMIZE or 3]))


def _repro(runner, prefix: str, entry):
    """Both engines' case for an entry's repro (``query`` over ``table_rows()``)."""
    table = qg.Table(f"{prefix}_{entry.id.replace('-', '_')}", entry.table_rows())
    runner.load([table])
    [case] = runner.run([entry.query.replace(table=table.name)])
    return case


@pytest.mark.parametrize("entry", known.KNOWN, ids=[k.id for k in known.KNOWN])
def test_known_disagreement(runner, entry):
    case = _repro(runner, "trk", entry)
    assert case.diff, (f"known disagreement {entry.id} is gone (sparkcep now agrees with Trino): "
                       f"remove it from tests/trino/known.py\n{case.report()}")
    assert case.kind == entry.kind, case.report()
    if entry.check is not None:
        entry.check(case)
    assert known.classify(entry.query, case) == entry.id


@pytest.mark.parametrize("entry", known.AGREED, ids=[a.id for a in known.AGREED])
def test_fixed_disagreement(runner, entry):
    case = _repro(runner, "tra", entry)
    assert not case.diff, f"{entry.id}: {entry.reason}\n{case.report()}"
    assert case.kind == "rows", case.report()
