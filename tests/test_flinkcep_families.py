"""The paper's four FlinkCEP query families (Fu & Wu, Section 8.2) against the paper's DST.

The reference is tests/paper_dst.py: the DST of Appendix A built state by state and its runs
enumerated as transition sequences (docs/flinkcep.md, "How many times NO SKIP reports a
match"), independent of the engine's automaton and of tests/oracle.py.

(a) Every generated query of NOGP ``spat θ lpat`` (378), SLGP ``(spat θ lpat) quan`` (3024),
LGP ``(lpat) quan`` (1008) and SLGGP ``((spat θ lpat) q1) q2`` (9072) runs through the
pure-Python engine on the paper's stream and is compared, match by match and in report order,
with the DST's runs; a query whose lpat has an until runs twice, with the until written in
DEFINE (``DEFINE P AS ... UNTIL name = 3``) and on the pattern (``P->+ UNTIL S``).  Counts
(queries / runs incl. the pattern-until variants): see ``EXPECTED``; every run agrees.

(b) A deterministic sample of those queries, written as real SQL (``SEMANTICS FLINKCEP``,
``AFTER MATCH NO SKIP`` ..., ``P->{0,3}``, ``(A -> P->+){1,3}``, ``UNTIL``), runs through
``spark.sql`` -- many MATCH_RECOGNIZE subqueries per statement, UNION ALL-ed and tagged by a
query id -- and is compared with the DST.

(c) Nested loops with minimum 0 at the inner or outer level (LGP, SLGGP), each under every
skip strategy (NO SKIP, TO NEXT ROW, PAST LAST ROW, TO FIRST / TO LAST P, TO FIRST A) on a
random stream of its own: 2,640 cases; every other one once more with SEMANTICS FLINKCEP
DISTINCT and, under TO FIRST / TO LAST, with ERROR ON MISS.
"""
from __future__ import annotations

import random

import pytest

import paper_families as pf
from test_engine import same_outcome

import sql_ext

# family -> (queries, runs checked)
EXPECTED = {"NOGP": (378, 486), "SLGP": (3024, 3888), "LGP": (1008, 1296), "SLGGP": (9072, 11664)}


def runs_of(queries):
    """Each query, plus its pattern-until variant when its lpat has an until."""
    for q in queries:
        yield q
        if q.lq[2]:
            yield pf.with_pattern_until(q)


def show(q, exp, got) -> str:
    return (f"{q.id}\n  PATTERN ({q.pattern()})\n  oracle: {pf.as_matches(exp)}\n"
            f"  engine: {pf.as_matches(got)}")


# ---------------------------------------------------------------------------------------------
# (a) every query through the engine, against the oracle
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("family", pf.FAMILIES)
def test_family_engine_matches_oracle(family):
    queries = pf.family(family)
    runs, failures = 0, []
    for q in runs_of(queries):
        runs += 1
        exp, got = pf.oracle_result(q), pf.engine_result(q)
        if got != exp:
            failures.append(show(q, exp, got))
    print(f"{family}: queries={len(queries)} runs={runs}")
    assert not failures, f"{len(failures)} of {runs} differ:\n" + "\n".join(failures[:10])
    assert (len(queries), runs) == EXPECTED[family]


def test_family_sizes_are_the_papers():
    """Table 1: 378 / 3024 / 1008 / 9072 queries, all distinct."""
    for family, size in zip(pf.FAMILIES, (378, 3024, 1008, 9072)):
        queries = pf.family(family)
        assert len(queries) == size
        assert len({q.id for q in queries}) == size
        assert len({(q.pattern(), q.cond, q.p_until, q.skip) for q in queries}) == size


def test_section_8_3_group_example():
    """``(p:e:[name=2].{0,3})``: three single-event matches {e2} {e4} {e8} (formal semantics)."""
    q = pf.Query("LGP", None, pf.STRICT, "name", (0, 3, False), None, None, "NO SKIP")
    assert q.pattern() == "(P{0,3})"
    expect = [((2, "P"),), ((4, "P"),), ((8, "P"),)]
    assert pf.as_matches(pf.oracle_result(q)) == expect
    assert pf.as_matches(pf.engine_result(q)) == expect


# ---------------------------------------------------------------------------------------------
# (b) a deterministic sample through spark.sql
# ---------------------------------------------------------------------------------------------

SAMPLE_SEED = 8_2
SAMPLE_SIZES = {"NOGP": 24, "SLGP": 24, "LGP": 16, "SLGGP": 16}
BATCH = 10  # MATCH_RECOGNIZE subqueries per spark.sql statement (larger unions cost more per clause)


def sql_sample() -> list:
    """[(query, expected matches)], deterministic: per family a seeded sample of the queries;
    lpat untils alternate between the DEFINE and the pattern form."""
    rng = random.Random(SAMPLE_SEED)
    out = []
    for family, k in SAMPLE_SIZES.items():
        pool = pf.family(family)
        picked = 0
        for q in rng.sample(pool, len(pool)):
            if picked == k:
                break
            if q.lq[2] and rng.random() < .5:
                q = pf.with_pattern_until(q)
            out.append((q, pf.as_matches(pf.oracle_result(q))))
            picked += 1
    return out


def test_sql_sample_covers_the_grammar():
    sample = [q for q, _ in sql_sample()]
    assert len(sample) == sum(SAMPLE_SIZES.values())
    assert {q.theta for q in sample} >= set(pf.THETAS)
    assert {q.inner for q in sample} == set(pf.INNERS)
    assert {q.cond for q in sample} == set(pf.CONDS)
    assert {q.lq for q in sample} == set(pf.LOOP_QUANTS)
    assert {q.g1 for q in sample if q.family == "SLGP"} >= {None, (1, 3, False), (1, None, True)}
    assert {q.skip for q in sample} == set(pf.SKIPS)
    assert {q.until_form for q in sample if q.lq[2]} == {"define", "pattern"}
    assert any(q.family == "SLGGP" and q.g2 is not None for q in sample)


@pytest.fixture(scope="module")
def paper_spark(spark):
    sql_ext.enable(spark)
    spark.createDataFrame(pf.STREAM, "id int, name int, price int").createOrReplaceTempView("paper_events")
    return spark


def test_sql_sample_matches_oracle(paper_spark):
    sample = sql_sample()
    failures = []
    for lo in range(0, len(sample), BATCH):
        batch = sample[lo:lo + BATCH]
        statement = "\nUNION ALL\n".join(q.sql(lo + k) for k, (q, _) in enumerate(batch))
        got: dict = {}
        for row in paper_spark.sql(statement).collect():
            got.setdefault(row["q"], {}).setdefault(row["m"], []).append((row["id"], row["cls"]))
        for k, (q, exp) in enumerate(batch):
            matches = got.get(lo + k, {})
            rows = [tuple(sorted(matches[m])) for m in sorted(matches)]
            if rows != exp:
                failures.append(f"{q.id}\n{q.sql(lo + k)}\n  oracle: {exp}\n  spark:  {rows}")
    assert not failures, f"{len(failures)} of {len(sample)} differ:\n" + "\n".join(failures[:5])


# ---------------------------------------------------------------------------------------------
# (c) nested loops with minimum 0 at either level, every skip strategy, random streams
# ---------------------------------------------------------------------------------------------

RANDOM_SEED = 31
RANDOM_ROWS = 7
RANDOM_SAMPLE = {"LGP": 240, "SLGGP": 240}  # base queries (NO SKIP form) per family
SKIP_STRATEGIES = (("NO SKIP", ()), ("TO NEXT ROW", ()), ("PAST LAST ROW", ()),
                   ("TO FIRST", ("P",)), ("TO LAST", ("P",)), ("TO FIRST", ("A",)))


def nested_min0(q: pf.Query) -> bool:
    """A loop inside a group loop, with minimum 0 at one level at least."""
    loops = [g for g in (q.lq, q.g1, q.g2) if g is not None]
    return q.g1 is not None and any(g[0] == 0 for g in loops)


def random_stream(rng) -> list:
    """e(id, name, price) rows: names 1 (A), 2 (P), 3 (the until), prices 0..4."""
    return [(i, rng.choices((1, 2, 3), (4, 5, 1))[0], rng.randint(0, 4)) for i in range(1, RANDOM_ROWS + 1)]


def random_cases() -> list:
    """[(query, stream, skip, skip_to)]: a seeded sample of the nested minimum-0 queries of
    LGP and SLGGP, each under every skip strategy on a random stream of its own."""
    rng = random.Random(RANDOM_SEED)
    cases = []
    for family, k in RANDOM_SAMPLE.items():
        pool = [q for q in runs_of(pf.family(family)) if q.skip == "NO SKIP" and nested_min0(q)]
        for q in rng.sample(pool, k):
            for skip, skip_to in SKIP_STRATEGIES:
                if "A" in skip_to and q.theta is None:
                    continue
                cases.append((q, random_stream(rng), skip, skip_to))
    return cases


def test_nested_min0_loops_on_random_streams_match_the_dst():
    cases = random_cases()
    failures = []
    for q, stream, skip, skip_to in cases:
        exp = pf.oracle_result(q, stream, skip, skip_to)
        got = pf.engine_result(q, stream, skip, skip_to)
        if got != exp:
            failures.append(f"{show(q, exp, got)}\n  {skip} {skip_to} on {stream}")
    print(f"random streams: {len(cases)} cases")
    assert not failures, f"{len(failures)} of {len(cases)} differ:\n" + "\n".join(failures[:5])
    assert len(cases) == 2640
    assert {q.family for q, *_ in cases} == {"LGP", "SLGGP"}
    assert {(q.lq[0], q.g1[0]) for q, *_ in cases} >= {(0, 0), (0, 1), (1, 0)}


def test_nested_min0_loops_distinct_and_error_on_miss_match_the_dst():
    """The same cases with SEMANTICS FLINKCEP DISTINCT (each distinct match once: NO SKIP and
    TO FIRST / LAST drop the copies, the others report one run per start anyway) and with
    SKIP TO ... ERROR ON MISS (the standard's runtime errors), against the DST's runs: every
    other case."""
    cases = random_cases()[::2]
    failures, dropped, errors = [], 0, 0
    for q, stream, skip, skip_to in cases:
        every = pf.oracle_result(q, stream, skip, skip_to)
        variants = [{"distinct": True}] + ([{"error_on_miss": True}] if skip_to else [])
        for options in variants:
            exp = pf.oracle_result(q, stream, skip, skip_to, **options)
            got = pf.engine_result(q, stream, skip, skip_to, **options)
            if not same_outcome(got, exp):
                failures.append(f"{show(q, exp, got)}\n  {skip} {skip_to} {options} on {stream}")
            if "distinct" in options:
                assert exp == [m for k, m in enumerate(every) if m not in every[:k]]
                dropped += len(every) - len(exp)
            else:
                errors += bool(exp) and exp[-1][0] == "error"
    print(f"random streams, DISTINCT and ERROR ON MISS: {len(cases)} cases, {dropped} copies dropped, "
          f"{errors} errors")
    assert not failures, f"{len(failures)} differ:\n" + "\n".join(failures[:5])
    assert dropped > 0 and errors > 0
