"""Timing of the FlinkCEP harness (JVM start + evaluation).

    python bench/flink/bench_flinkcep.py [N_BATCH=500] [--job]

Prints wall-clock seconds for: one spec (nfa engine), a batch of N random specs in one JVM
(nfa engine) and, with --job, one spec and a 50-spec batch on the MiniCluster job engine.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "flink"))

import flinkcep  # noqa: E402
import randspec  # noqa: E402
from doc_examples import EXAMPLES  # noqa: E402


def timed(label: str, fn):
    t = time.perf_counter()
    res = fn()
    dt = time.perf_counter() - t
    print(f"{label:<48} {dt:7.2f} s")
    return res


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 500
    if not flinkcep.available():
        sys.exit(flinkcep.unavailable_reason())
    timed("javac (cached after the first call)", flinkcep.build)
    one = EXAMPLES[1]["spec"]
    timed("nfa: 1 spec (JVM start + run)", lambda: flinkcep.run(one))
    timed("nfa: 1 spec again", lambda: flinkcep.run(one))
    specs = randspec.gen(n, seed=7)
    res = timed(f"nfa: batch of {n} random specs, one JVM", lambda: flinkcep.run_many(specs, budget_ms=5000))
    ok = [r for r in res if not isinstance(r, Exception)]
    slow = sum(isinstance(r, flinkcep.FlinkCepBudgetExceeded) for r in res)
    print(f"   {len(ok)} evaluated ({sum(len(r) for r in ok)} matches), {len(res) - len(ok) - slow} rejected "
          f"by Flink, {slow} over budget")
    docs = [e["spec"] for e in EXAMPLES] * (n // len(EXAMPLES) + 1)
    timed(f"nfa: batch of {n} doc-example specs", lambda: flinkcep.run_many(docs[:n]))
    if "--job" in sys.argv:
        timed("job: 1 spec (JVM + MiniCluster)", lambda: flinkcep.run(one, engine="job"))
        timed("job: batch of 50 doc-example specs", lambda: flinkcep.run_many(docs[:50], engine="job"))


if __name__ == "__main__":
    main()
