"""sparkcep's statements with LAYERs (docs/hierarchies.md) vs the nested MATCH_RECOGNIZE a Trino
user writes for them, on Trino 476 (marker ``trino``): random hierarchies over random streams
(``hiergen``), each run on sparkcep twice - as planned (the one pass, or the expansion where the one
pass does not cover the statement) and as its expansion (``one_pass.layers`` answering "not
covered") - and on Trino as the hand-expanded plain SQL; rows compared as multisets.  Both
engines raising (an AFTER MATCH SKIP to the match's first row) counts as agreement; a Trino
timeout is not compared.

* ``test_random_hierarchies_agree_with_trino``: SPARKCEP_TRINO_HIER_FAST (default 32) cases, a
  third of them PERIOD rows.
* ``test_more_random_hierarchies_agree_with_trino`` (slow): SPARKCEP_TRINO_HIER_CASES (default
  96) more.  Either writes its summary and the differing cases to ``.trino/last-hier-report.txt``.
"""
from __future__ import annotations

import contextlib
import os
import time
from collections import Counter

import pytest

import harness
import hiergen
from server import TRINO_DIR
from sql_support import expansion

pytestmark = pytest.mark.trino

N_FAST = int(os.environ.get("SPARKCEP_TRINO_HIER_FAST", "32"))
N_MORE = int(os.environ.get("SPARKCEP_TRINO_HIER_CASES", "96"))
SEED = int(os.environ.get("SPARKCEP_TRINO_SEED", "20261128"))
# statements a Spark step: a step's UNION ALL job runs while the next step is analysed (a
# statement with LAYERs takes seconds of analysis)
STEP = 8


@contextlib.contextmanager
def _planned(covered: list):
    """Record, per ``spark.sql`` of a statement with LAYERs, whether the one pass covers it."""
    from sql_ext.compiler import one_pass

    real = one_pass.layers

    def layers(*args, **kwargs):
        out = real(*args, **kwargs)
        covered.append(out is not None)
        return out

    one_pass.layers = layers
    try:
        yield
    finally:
        one_pass.layers = real


def _campaign(runner, seeds):
    t0 = time.monotonic()
    cases = [hiergen.generate(seed, period=seed % 3 == 0) for seed in seeds]
    runner.trino.load(cases)
    runner.spark.load(cases)
    try:  # Trino runs ahead on its threads while Spark analyses and runs (``run_against``)
        futures = runner.trino.submit_many([c.trino_sql() for c in cases])
        covered: list = []
        with _planned(covered):
            planned, wait = runner.spark.run_against([c.spark_sql() for c in cases], futures, step=STEP)
        t1 = time.monotonic()
        trino = [f.result() for f in futures]
        # the expansion again where the planned run was the one pass (else it was the expansion)
        again = [i for i, c in enumerate(covered) if c]
        with expansion():
            out, _ = runner.spark.run_against([cases[i].spark_sql() for i in again], [futures[i] for i in again],
                                              step=STEP)
        expanded = list(planned)
        for i, o in zip(again, out):
            expanded[i] = o
        t2 = time.monotonic()
    finally:
        runner.trino.drop([c.name for c in cases])
        runner.spark.drop([c.name for c in cases])
    outcomes, reports = Counter(), []
    for case, p, e, t in zip(cases, planned, expanded, trino):
        kind = harness.kind(p, t)
        outcomes[kind] += 1
        diffs = [(label, d) for label, d in (("planned", harness.compare(p, t)),
                                               ("expansion", harness.compare(e, t)),
                                               ("planned vs expansion", harness.compare(p, e))) if d]
        if diffs:
            reports.append("\n".join(
                [f"-- seed {case.seed}: " + "; ".join(f"{label}: {d}" for label, d in diffs),
                 "-- data:", case.describe(), "-- sparkcep:", case.spark_sql(), "-- Trino:", case.trino_sql(),
                 "-- sparkcep (planned):", p.show(), "-- sparkcep (expansion):", e.show(),
                 "-- Trino:", t.show()]))
    rows = sum(len(t.rows) for t in trino if t.ok)
    summary = (f"{len(cases)} hierarchies (seeds {seeds[0]}..{seeds[-1]}) in {time.monotonic() - t0:.0f} s "
               f"(sparkcep planned {t1 - t0:.0f} s, of which {wait:.0f} s waiting for Trino; expansion {t2 - t1:.0f} s): "
               f"{dict(outcomes)}, {rows} Trino rows; one pass for {sum(covered)} of {len(covered)} "
               f"planned; {len(reports)} differ")
    TRINO_DIR.mkdir(parents=True, exist_ok=True)
    (TRINO_DIR / "last-hier-report.txt").write_text(summary + "\n\n" + ("\n\n" + "=" * 80 + "\n").join(reports))
    print(summary)
    assert not reports, summary + "\n\n" + "\n\n".join(reports[:3])
    return outcomes, covered


@pytest.mark.timeout(1800)
def test_random_hierarchies_agree_with_trino(runner):
    outcomes, covered = _campaign(runner, list(range(SEED, SEED + N_FAST)))
    # the corpus exercises the one pass (every case also runs as its expansion, above) and
    # mostly compares rows (not only errors)
    assert any(covered)
    assert outcomes["rows"] >= N_FAST * 3 // 4, outcomes


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_more_random_hierarchies_agree_with_trino(runner):
    _campaign(runner, list(range(SEED + 48, SEED + 48 + N_MORE)))
