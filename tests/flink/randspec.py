"""Random FlinkCEP spec generator (for cross-checking engines and for differential tests).

    python tests/flink/randspec.py [N] [SEED]    # cross-check engine "nfa" against engine "job"
"""

from __future__ import annotations

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import flinkcep  # noqa: E402

SKIPS = ["NO_SKIP", "SKIP_TO_NEXT", "SKIP_PAST_LAST_EVENT", "SKIP_TO_FIRST:{}", "SKIP_TO_LAST:{}"]


def rand_cond(rng: random.Random, depth: int = 0) -> dict:
    r = rng.random()
    if depth < 2 and r < 0.15:
        return {rng.choice(["and", "or"]): [rand_cond(rng, depth + 1) for _ in range(2)]}
    if depth < 2 and r < 0.22:
        return {"not": rand_cond(rng, depth + 1)}
    if r < 0.32:
        return {"name_eq": rng.randint(1, 3), "sum_price_le": rng.randint(2, 12)}
    if r < 0.36:
        return {"true": True}
    return {"name_eq": rng.randint(1, 3)}


def rand_elem(rng: random.Random, name: str, first: bool, allow_group: bool = True) -> dict:
    if allow_group and rng.random() < 0.12:
        inner = [rand_elem(rng, f"{name}_{k}", k == 0, allow_group=False) for k in range(rng.randint(1, 2))]
        el = flinkcep.group(inner)
        for k in inner:  # negations inside groups are mostly rejected; keep them simple
            if k["junction"] in ("notNext", "notFollowedBy"):
                k["junction"] = "next"
    else:
        el = flinkcep.elem(name, rand_cond(rng))
    if not first:
        el["junction"] = rng.choice(["next", "followedBy", "followedByAny", "next", "followedBy",
                                     "notNext", "notFollowedBy"] if "name" in el else
                                    ["next", "followedBy", "followedByAny"])
    neg = el["junction"] in ("notNext", "notFollowedBy")
    if not neg:
        q = rng.random()
        if q < 0.25:
            el["quant"] = {"oneOrMore": True}
        elif q < 0.4:
            a = rng.randint(1, 3)
            el["quant"] = {"times": [a, a + rng.randint(0, 2)]}
        elif q < 0.5:
            el["quant"] = {"timesOrMore": rng.randint(1, 3)}
        el["optional"] = rng.random() < 0.2
        if el["quant"]:
            el["inner"] = rng.choice(["relaxed", "consecutive", "allowCombinations"])
            el["greedy"] = "name" in el and rng.random() < 0.15
            if "name" in el and el["quant"].get("oneOrMore") or el["quant"].get("timesOrMore"):
                if "name" in el and rng.random() < 0.3:
                    el["until"] = {"name_eq": rng.randint(1, 3)}
    return el


def rand_spec(rng: random.Random) -> dict:
    n = rng.randint(1, 4)
    pat = [rand_elem(rng, f"p{i}", i == 0) for i in range(n)]
    names = [e["name"] for e in pat if "name" in e] or ["p0"]
    skip = rng.choice(SKIPS).format(rng.choice(names))
    evs = [{"id": i + 1, "name": rng.randint(1, 3), "price": rng.randint(0, 5)} for i in range(rng.randint(2, 10))]
    within = rng.choice([None, None, None, 2000, 4000])
    return flinkcep.spec(pat, evs, skip=skip, within_ms=within)


def gen(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    return [rand_spec(rng) for _ in range(n)]


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    specs = gen(n, seed)
    a = flinkcep.run_many(specs, engine="nfa", budget_ms=5000)
    slow = [i for i, x in enumerate(a) if isinstance(x, flinkcep.FlinkCepBudgetExceeded)]
    keep = [i for i in range(n) if i not in set(slow)]
    b = [None] * n
    for i, y in zip(keep, flinkcep.run_many([specs[i] for i in keep], engine="job")):
        b[i] = y
    for i in slow:
        b[i] = a[i]
    print(f"{len(slow)} specs over budget (not sent to the job engine): {slow}")
    bad = 0
    errs = sum(isinstance(x, Exception) for x in a)
    nonempty = sum(bool(x) for x in a if not isinstance(x, Exception))
    for i, (x, y) in enumerate(zip(a, b)):
        xs = str(x) if isinstance(x, Exception) else x
        ys = str(y) if isinstance(y, Exception) else y
        if xs != ys and not (isinstance(x, Exception) and isinstance(y, Exception)):
            bad += 1
            print(f"spec {i}: nfa={xs}\n        job={ys}")
    print(f"{n} specs, {errs} rejected by Flink, {nonempty} with matches, {bad} engine mismatches")
