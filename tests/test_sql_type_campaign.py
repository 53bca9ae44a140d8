"""The type campaign: every Spark data type as a PARTITION BY key, an ORDER BY key, a carried
column, an aggregate argument (MEASURES, RUNNING and FINAL, and DEFINE) and a match-state
comparison operand, against Spark's own GROUP BY / window functions / ORDER BY over the same
rows (harness and judges: ``type_campaign_support``).  Run with ``-s`` to see the figures."""
from __future__ import annotations

import logging
from collections import Counter

import pytest

from sql_support import mr_spark  # noqa: F401  (fixture)
from udtf.errors import MatchRecognizeError
from type_campaign_support import (AGGS, FINAL, GROUPS, ROWS, RUNNING, TYPES, canon, canon_set, limit, refusal_problem,
                                   spark_fails,
                                   spark_accepts, view_sql)

FIGURES: Counter = Counter()


@pytest.fixture(scope="module")
def tc(mr_spark):
    # materialized once, so that analysing a query over it is cheap
    mr_spark.sql(view_sql()).localCheckpoint().createOrReplaceTempView("tc")
    quiet = logging.getLogger("SQLQueryContextLogger")  # pyspark logs every analysis error it raises
    quiet.disabled = True
    yield mr_spark
    quiet.disabled = False
    print("\ntype campaign:", dict(sorted(FIGURES.items())))


def _refused(spark, sql: str, construct: str | None, case: str, problems: list) -> None:
    """``case`` must be refused at ``construct`` (a known limit: at any line:column)."""
    known = limit(case)
    problem = refusal_problem(spark, sql, None if known else construct, case)
    if problem:
        problems.append(problem)
    FIGURES["refused (known limits)" if known else "refused (as Spark)"] += 1


def test_partition_by_every_type(tc):
    bundle, problems = [], []
    for t in TYPES:
        c, case = f"c_{t.name}", f"{t.name}:partition"
        mr = (f"SELECT {c} AS k, n FROM tc MATCH_RECOGNIZE (PARTITION BY {c} ORDER BY o MEASURES COUNT(*) AS n "
              "PATTERN (A+) DEFINE A AS true) AS m")
        if not spark_accepts(tc, f"SELECT count(*) OVER (PARTITION BY {c}) FROM tc") or limit(case):
            _refused(tc, mr, f"{c} ORDER", case, problems)
            continue
        judge = f"SELECT {c} AS k, count(*) AS n FROM tc GROUP BY {c}"
        bundle.append((case, f"SELECT '{case}' AS c, count(*) AS bad FROM (({mr}) EXCEPT ALL ({judge}) "
                             f"UNION ALL (({judge}) EXCEPT ALL ({mr})))"))
    bad = {r.c: r.bad for r in tc.sql(" UNION ALL ".join(q for _, q in bundle)).collect()}
    FIGURES["partition cases"] += len(bundle)
    assert problems + [f"{c}: {n} rows differ" for c, n in bad.items() if n] == []


@pytest.mark.parametrize("direction", ["ASC NULLS FIRST", "DESC NULLS LAST"])
def test_order_by_every_type(tc, direction):
    bundle, problems = [], []
    for t in TYPES:
        c, case = f"c_{t.name}", f"{t.name}:order:{direction}"
        mr = (f"SELECT ao, mn FROM tc MATCH_RECOGNIZE (PARTITION BY g ORDER BY {c} {direction}, o "
              "MEASURES A.o AS ao, MATCH_NUMBER() AS mn PATTERN (A) DEFINE A AS true) AS m")
        judge = f"SELECT o, row_number() OVER (PARTITION BY g ORDER BY {c} {direction}, o) FROM tc"
        if not spark_accepts(tc, judge) or limit(case):
            _refused(tc, mr, f"{c} {direction}", case, problems)
            continue
        bundle.append(f"SELECT '{case}' AS c, count(*) AS bad FROM (({mr}) EXCEPT ALL ({judge}) "
                      f"UNION ALL (({judge}) EXCEPT ALL ({mr})))")
    bad = {r.c: r.bad for r in tc.sql(" UNION ALL ".join(bundle)).collect()}
    FIGURES["order cases"] += len(bundle)
    assert problems + [f"{c}: {n} rows differ" for c, n in bad.items() if n] == []


def test_every_type_is_carried_unchanged(tc):
    carried, problems = [], []
    for t in TYPES:
        c, case = f"c_{t.name}", f"{t.name}:carry"
        if limit(case):
            _refused(tc, f"SELECT * FROM (SELECT g, o, {c} FROM tc) MATCH_RECOGNIZE (PARTITION BY g ORDER BY o "
                         "ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS true) AS m", None, case, problems)
        else:
            carried.append(c)
    got = tc.sql(f"""SELECT * FROM (SELECT g, o, {', '.join(carried)} FROM tc) MATCH_RECOGNIZE (
        PARTITION BY g ORDER BY o ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS true) AS m""")
    assert [f.dataType.simpleString() for f in got.schema.fields[2:]] == \
        [f.dataType.simpleString() for f in tc.sql(f"SELECT {', '.join(carried)} FROM tc").schema.fields]
    want = {r.o: [canon(r[c]) for c in carried] for r in tc.sql(f"SELECT o, {', '.join(carried)} FROM tc").collect()}
    have = {r.o: [canon(r[c]) for c in carried] for r in got.collect()}
    FIGURES["carried cases"] += len(carried)
    assert problems == [] and have == want


def _measure_cases(tc, clause: str, problems: list):
    """[(case, agg, column)] the judge accepts; the others checked refused in ``clause``."""
    cases = []
    for t in TYPES:
        c = f"c_{t.name}"
        for agg in AGGS:
            case = f"{t.name}:agg:{agg.name}"
            judge = (f"SELECT g, {agg.spark.format(c=c)} FROM tc GROUP BY g" if agg.distinct else
                     f"SELECT {agg.spark.format(c=c)} OVER (PARTITION BY g ORDER BY o {FINAL}) FROM tc")
            measure = agg.sparkcep.format(c=c)
            if clause == "MEASURES":
                sql = (f"SELECT * FROM tc MATCH_RECOGNIZE (PARTITION BY g ORDER BY o MEASURES {measure} AS m "
                       "PATTERN (A+) DEFINE A AS true) AS m")
            else:
                sql = (f"SELECT * FROM tc MATCH_RECOGNIZE (PARTITION BY g ORDER BY o MEASURES COUNT(*) AS n "
                       f"PATTERN (A+) DEFINE A AS {measure} IS NOT NULL) AS m")
            if spark_fails(case):  # sparkcep runs it or refuses it where written, no more
                try:
                    tc.sql(sql).collect()
                except MatchRecognizeError as e:
                    if e.line is None:
                        problems.append(f"{case}: refused without a position: {e}")
                except Exception as e:  # noqa: BLE001  (a run-time error of the engine, at its line:column)
                    if "MatchRecognizeError: line" not in str(e):
                        problems.append(f"{case}: {type(e).__name__}: {str(e)[:300]}")
                FIGURES["not compared (Spark's run fails)"] += 1
                continue
            if not spark_accepts(tc, judge) or limit(case):
                _refused(tc, sql, measure, f"{t.name}:{'agg' if clause == 'MEASURES' else 'define'}:{agg.name}",
                         problems)
                continue
            cases.append((case, agg, c))
    return cases


def _compare(got: dict, want: dict, cases, failures: list) -> None:
    for key in want:
        for k, (case, agg, _) in enumerate(cases):
            a, b = got.get(key, [None] * len(cases))[k], want[key][k]
            same = canon_set(a) == canon_set(b) if not agg.ordered else canon(a) == canon(b)
            if not same:
                failures.append((case, key, a, b))


def test_measure_aggregates_over_every_type(tc):
    failures = []
    cases = _measure_cases(tc, "MEASURES", failures)
    # FINAL: one match per partition over all its rows
    measures = ", ".join(f"{agg.sparkcep.format(c=c)} AS m{k}" for k, (_, agg, c) in enumerate(cases))
    got = {r.g: list(r)[1:] for r in tc.sql(f"""SELECT * FROM tc MATCH_RECOGNIZE (PARTITION BY g ORDER BY o
        MEASURES {measures} PATTERN (A+) DEFINE A AS true) AS m""").collect()}
    windowed = [(k, agg, c) for k, (_, agg, c) in enumerate(cases) if not agg.distinct]
    grouped = [(k, agg, c) for k, (_, agg, c) in enumerate(cases) if agg.distinct]
    want = {g: [None] * len(cases) for g in range(GROUPS)}
    for r in tc.sql("SELECT * FROM (SELECT o, g, " + ", ".join(
            f"{agg.spark.format(c=c)} OVER (PARTITION BY g ORDER BY o {FINAL})" for _, agg, c in windowed) +
            f" FROM tc) WHERE o % {ROWS} = 0").collect():
        for (k, _, _), v in zip(windowed, list(r)[2:]):
            want[r.g][k] = v
    for r in tc.sql("SELECT g, " + ", ".join(agg.spark.format(c=c) for _, agg, c in grouped) +
                    " FROM tc GROUP BY g").collect():
        for (k, _, _), v in zip(grouped, list(r)[1:]):
            want[r.g][k] = v
    _compare(got, want, cases, failures)
    FIGURES["aggregate cases (FINAL)"] += len(cases)
    # RUNNING: every row's measures over the rows up to it (ALL ROWS PER MATCH)
    running = [(case, agg, c) for case, agg, c in cases if not agg.distinct]
    measures = ", ".join(f"RUNNING {agg.sparkcep.format(c=c)} AS m{k}" for k, (_, agg, c) in enumerate(running))
    used = ", ".join(dict.fromkeys(c for _, _, c in running))  # ALL ROWS carries the input's columns
    got = {r.o: [r[f"m{k}"] for k in range(len(running))] for r in tc.sql(
        f"""SELECT * FROM (SELECT g, o, {used} FROM tc) MATCH_RECOGNIZE (PARTITION BY g ORDER BY o MEASURES {measures}
            ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS true) AS m""").collect()}
    want = {r.o: list(r)[1:] for r in tc.sql(
        "SELECT o, " + ", ".join(f"{agg.spark.format(c=c)} OVER (PARTITION BY g ORDER BY o {RUNNING})"
                                 for _, agg, c in running) + " FROM tc").collect()}
    _compare(got, want, running, failures)
    FIGURES["aggregate cases (RUNNING)"] += len(running)
    assert [f"{case} at {key}: {got!r}, Spark {want!r}" for case, key, got, want in failures[:40]] == []


def _comparable(tc, expr: str) -> bool:
    """Can Spark compare values of ``expr`` (over tc) with <=>?"""
    return spark_accepts(tc, f"SELECT ({expr}) <=> ({expr}) FROM tc")


CHUNK = 48  # conditions per query (the planner chains a DEFINE's conjuncts, and its optimizer recurses per link)


def _all(conditions: list) -> str:
    """The conjunction of ``conditions`` as a balanced tree (a chain of hundreds would nest too deep)."""
    if len(conditions) == 1:
        return conditions[0]
    half = len(conditions) // 2
    return f"({_all(conditions[:half])} AND {_all(conditions[half:])})"


def _failing(tc, conditions: list, columns: list, pattern: str, skip: str, stat: str, expected: int) -> list:
    """The indexes of ``conditions`` (the DEFINE of the last variable of ``pattern``, over ``tc``
    with ``columns`` added) for which ``stat`` (over the matches' ``k = COUNT(*)``) is not
    ``expected`` in every partition; each runs alone when they do not all hold together."""
    source = f"(SELECT *, {', '.join(columns)} FROM tc)"
    last = pattern.split()[-1].strip("+()")

    def holds(conds) -> bool:
        return [r.n for r in tc.sql(f"""SELECT g, {stat} AS n FROM {source} MATCH_RECOGNIZE (PARTITION BY g
            ORDER BY o MEASURES COUNT(*) AS k AFTER MATCH {skip} PATTERN {pattern}
            DEFINE {last} AS {_all(conds)}) AS m GROUP BY g""").collect()] == [expected] * GROUPS

    failing = []
    for lo in range(0, len(conditions), CHUNK):
        chunk = conditions[lo:lo + CHUNK]
        if not holds(chunk):
            failing += [lo + k for k, cond in enumerate(chunk) if not holds([cond])]
    return failing


def test_define_aggregates_over_every_type(tc):
    problems = []
    cases = [(case, agg, c) for case, agg, c in _measure_cases(tc, "DEFINE", problems)
             if agg.ordered and not agg.distinct and
             _comparable(tc, f"{agg.spark.format(c=c)} OVER (PARTITION BY g ORDER BY o)")]
    columns = [f"{agg.spark.format(c=c)} OVER (PARTITION BY g ORDER BY o {RUNNING}) AS w{k}"
               for k, (_, agg, c) in enumerate(cases)]
    # strings of an ICU collation compare as text (the engine cannot compare them collated)
    as_text = lambda k, e: f"CAST({e} AS STRING)" if "unicode_ci" in cases[k][2] else e
    conditions = [f"({as_text(k, agg.sparkcep.format(c=c))} <=> {as_text(k, f'A.w{k}')})"
                  for k, (_, agg, c) in enumerate(cases)]
    # every row is an A: one match over the whole partition
    bad = _failing(tc, conditions, columns, "(A+)", "SKIP PAST LAST ROW", "max(k)", ROWS)
    FIGURES["aggregate cases (DEFINE)"] += len(cases)
    assert problems + [cases[k][0] for k in bad] == []


OPS = ("=", "<", "<=>", ">=")


def test_match_state_comparisons_of_every_type(tc):
    cases, problems = [], []
    for t in TYPES:
        c = f"c_{t.name}"
        for op in OPS:
            case = f"{t.name}:compare:{op}"
            judge = f"{c} {op} LAG({c}) OVER (PARTITION BY g ORDER BY o)"
            if not spark_accepts(tc, f"SELECT {judge} FROM tc") or limit(case):
                sql = (f"SELECT * FROM tc MATCH_RECOGNIZE (PARTITION BY g ORDER BY o MEASURES COUNT(*) AS n "
                       f"PATTERN (A B) DEFINE B AS B.{c} {op} A.{c}) AS m")
                _refused(tc, sql, f"B.{c} {op} A.{c}", case, problems)
                continue
            cases.append((case, c, op, judge))
    columns = [f"{judge} AS e{k}" for k, (_, _, _, judge) in enumerate(cases)]
    conditions = [f"((B.{c} {op} A.{c}) <=> B.e{k})" for k, (_, c, op, _) in enumerate(cases)]
    # B holds on every row after the first: a match at every start row but the last
    bad = _failing(tc, conditions, columns, "(A B)", "SKIP TO NEXT ROW", "count(*)", ROWS - 1)
    FIGURES["comparison cases"] += len(cases)
    assert problems + [cases[k][0] for k in bad] == []
