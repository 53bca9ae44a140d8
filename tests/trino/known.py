"""Known disagreements between sparkcep and Trino 476: the single list ``KNOWN``.

Each entry says who is right (``verdict``), why (``reason``), which generated queries it
explains (``matches``: a predicate over the abstract query and the compared case), and pins a
minimal repro (``query`` over ``rows``) that ``test_known_disagreement`` runs on both engines:
the test fails when the repro stops disagreeing, so the entry is removed once sparkcep is fixed.

Verdicts: ``sparkcep wrong`` (a result differs and the standard / Trino / Oracle docs side with
Trino), ``sparkcep refuses`` (a standard construct sparkcep rejects), ``sparkcep lenient``
(sparkcep accepts what the standard and Trino reject), ``Trino deviates`` (Trino is wrong or
non-standard; sparkcep stays as it is).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import querygen as qg
from querygen import (COLUMN_NAMES, Func, Op, PAlt, PGroup, PPermute, PQuant, PSeq, PVar, Query,
                      Raw)


def row(id: int, p: str | None = "p1", **values) -> tuple:
    """A table row (querygen's columns) with the given values, NULL elsewhere."""
    vals = {"p": p, "id": id, **values}
    return tuple(vals.get(c) for c in COLUMN_NAMES)


@dataclass
class Known:
    id: str
    verdict: str
    reason: str
    matches: Callable                       # (query, case or None) -> bool
    query: Query                            # the pinned repro (its table is made from rows)
    rows: list
    kind: str                               # harness.kind of the repro: rows / sparkcep-raises / trino-raises
    check: Callable | None = None           # optional extra assertion on the repro's case

    def table_rows(self) -> list:
        return list(self.rows)


def _pattern_has(q: Query, pred) -> bool:
    return any(pred(n) for n in q.pattern_nodes())


def _error_has(case, text: str, side: str) -> bool:
    if case is None:
        return True
    err = case.trino.error if side == "trino" else case.spark.error
    return err is not None and text in err


def _measure_positions(q: Query, columns) -> list[int]:
    names = {n for _, n in q.measures}
    return [i for i, c in enumerate(columns or []) if c in names]


def _unmatched_rows_measures_only(q: Query, case) -> bool:
    """The results differ only in measures that Trino reports NULL (rows of no match)."""
    if q.rows != "all_unmatched":
        return False
    if case is None:
        return True
    if case.kind != "rows":
        return False
    from collections import Counter

    pos = _measure_positions(q, case.trino.columns)
    a, b = Counter(case.spark.rows), Counter(case.trino.rows)
    only_s, only_t = a - b, b - a

    def null_measures(r):
        return tuple(None if i in pos else v for i, v in enumerate(r))

    return (all(all(r[i] is None for i in pos) for r in only_t)
            and Counter({null_measures(r): n for r, n in only_s.items()}) == only_t)


def _differs_only_in(q: Query, case, measure_pred, trino_null: bool = False) -> bool:
    """Rows that differ agree once the measures satisfying ``measure_pred`` are masked (and,
    with ``trino_null``, Trino has NULL in those measures)."""
    if case is None:
        return True
    if case.kind != "rows" or case.spark.columns != case.trino.columns:
        return False
    from collections import Counter

    names = {n for e, n in q.measures if measure_pred(e)}
    pos = [i for i, c in enumerate(case.trino.columns) if c in names]
    if not pos:
        return False
    a, b = Counter(case.spark.rows), Counter(case.trino.rows)
    only_s, only_t = a - b, b - a

    def mask(rows):
        out = Counter()
        for r, n in rows.items():
            out[tuple("*" if i in pos else v for i, v in enumerate(r))] += n
        return out

    if trino_null and not all(all(r[i] is None for i in pos) for r in only_t):
        return False
    return mask(only_s) == mask(only_t)


def _has_running_first(e) -> bool:
    return any(isinstance(n, Func) and n.name == "FIRST" and n.semantics != "FINAL" for n in qg.walk(e))


def _running_first(q: Query, case) -> bool:
    """ALL ROWS PER MATCH; the rows differ only in measures with a RUNNING FIRST(...)."""
    return q.rows not in ("one", "") and _differs_only_in(q, case, _has_running_first)


def _bare_boolean_define(q: Query, case) -> bool:
    return any(isinstance(n, Raw) and n.text.split(".")[-1] in ("b", "NOT b") for n in q.define_exprs())


def _nullable_loop(q: Query, case) -> bool:
    """A quantifier allowing 2+ iterations over a body that can match empty."""
    return (case is None or case.kind == "rows") and _pattern_has(
        q, lambda n: isinstance(n, PQuant) and qg.quant_bounds(n.text)[1] >= 2 and qg.nullable(n.inner))


KNOWN: list[Known] = [
    Known(
        id="trino-bare-boolean-define",
        verdict="Trino deviates",
        reason=("A DEFINE condition that is a bare BOOLEAN column (DEFINE B AS b, NOT b, B.b) is "
                "evaluated on wrong values by Trino 476 over memory-connector tables: on rows "
                "b = true, NULL, false 'B AS b' matches the true and the NULL row; with the same "
                "rows in another table layout it matched only the false row, and 'B AS NOT b' the "
                "true and NULL rows (over an inline VALUES it is right; 'b = true' is right). "
                "sparkcep follows SQL: a NULL or false condition does not match."),
        matches=_bare_boolean_define,
        query=Query(table="", partition=False, pattern=PVar("B"),
                    measures=[(Func("FIRST", [Raw("id")]), "m0")], rows="all",
                    defines=[("B", Raw("b"))]),
        rows=[row(1, b=True), row(2), row(3, b=False)],
        kind="rows",
    ),
    Known(
        id="trino-empty-loop-iteration-discarded",
        verdict="Trino deviates",
        reason=("A quantified body that can match empty, e.g. (A? | C)+: when an iteration matches "
                "empty, the standard (ISO/IEC TR 19075-5 7.2.8) stops the quantifier there, keeping "
                "that path's place in preferment order; Trino 476 drops the path, so a less preferred "
                "alternative consumes rows. On rows 1, 2 with A AS COUNT(V.*) <= 1, V = (A, C): "
                "sparkcep gives two matches {1:A} {2:A} (iteration 2 is empty: A fails, A? takes "
                "nothing, the loop ends), Trino one match {1:A, 2:C}."),
        matches=_nullable_loop,
        query=Query(table="", partition=False,
                    pattern=PQuant(PGroup(PAlt([PQuant(PVar("A"), "?"), PVar("C")])), "+"),
                    measures=[(Func("CLASSIFIER", []), "m0"), (Func("MATCH_NUMBER", []), "m1")], rows="all",
                    subsets=[("V", ["A", "C"])],
                    defines=[("A", Op("<=", Func("COUNT", [Raw("V.*")]), Raw("1")))]),
        rows=[row(1), row(2)],
        kind="rows",
    ),
    Known(
        id="trino-running-first-looks-ahead",
        verdict="Trino deviates",
        reason=("RUNNING FIRST(v.k [, n]) in ALL ROWS PER MATCH: Trino 476 navigates to the (n-th) "
                "v row of the whole match even when it comes after the current row (rows 1..3 all A: "
                "FIRST(A.k, 1) is 20 on row 1, FIRST(A.k, 2) is 30 on rows 1 and 2; PATTERN (B A): "
                "FIRST(A.k) on the B row is A's value). In running semantics only the rows up to the "
                "current row are mapped (SQL:2016; Oracle: RUNNING 'considers the rows up to the "
                "current row'), so the value is NULL there; sparkcep gives NULL. LAST(v.k, n) and "
                "FINAL FIRST agree."),
        matches=_running_first,
        query=Query(table="", partition=False, pattern=PQuant(PVar("A"), "+"),
                    measures=[(Func("FIRST", [Raw("A.k"), Raw("1")]), "m0")], rows="all",
                    defines=[("A", Raw("true"))]),
        rows=[row(1, k=10), row(2, k=20), row(3, k=30)],
        kind="rows",
    ),
    Known(
        id="unmatched-rows-measures-not-null",
        verdict="sparkcep wrong",
        reason=("ALL ROWS PER MATCH WITH UNMATCHED ROWS: on a row that belongs to no match every "
                "measure is NULL (SQL:2016; Oracle: 'the measures are null for unmatched rows'; "
                "Trino; docs/sql.md says so too). sparkcep nulls the navigations and aggregates but "
                "then lets Spark evaluate the rest of the measure expression over them, so "
                "CASE WHEN COUNT(A.*) > 1 THEN 'many' ELSE 'none' END gives 'none' and "
                "COALESCE(...)/COUNT-based expressions give non-NULL values."),
        matches=_unmatched_rows_measures_only,
        query=Query(table="", partition=False, pattern=PSeq([PVar("B"), PVar("A")]),
                    measures=[(qg.Case(Op(">", Func("COUNT", [Raw("A.*")]), Raw("1")), Raw("'many'"),
                                       Raw("'none'")), "m0")],
                    rows="all_unmatched", defines=[("B", Raw("(x > 0)"))]),
        rows=[row(2)],
        kind="rows",
    ),
    Known(
        id="trino-permute-one-element",
        verdict="Trino deviates",
        reason=("Trino 476 parses PERMUTE(x) with a single element as a pattern variable named "
                "PERMUTE followed by the group (x): CLASSIFIER() reports 'PERMUTE' for a row. "
                "PERMUTE(x) is x (SQL:2016; sparkcep)."),
        matches=lambda q, c: _pattern_has(q, lambda n: isinstance(n, PPermute) and len(n.items) == 1),
        query=Query(table="", partition=False, pattern=PSeq([PPermute([PQuant(PVar("B"), "*")]), PVar("C")]),
                    measures=[(Func("CLASSIFIER", []), "m0")], rows="all",
                    defines=[("B", Raw("false"))]),
        rows=[row(1), row(2)],
        kind="rows",
    ),
    Known(
        id="trino-quantifier-upper-bound-0",
        verdict="Trino deviates",
        reason=("Trino rejects a quantifier whose upper bound is 0 (A{0}, A{0,0}: 'Pattern quantifier "
                "upper bound must be greater than or equal to 1'); sparkcep accepts it as the empty "
                "pattern. The standard's <row pattern quantifier> takes unsigned integers; nothing "
                "checked here requires the bound to be >= 1 (Oracle documents {n} as 'exactly n')."),
        matches=lambda q, c: _pattern_has(q, lambda n: isinstance(n, PQuant) and n.text in ("{0}", "{0,0}"))
        and _error_has(c, "upper bound must be greater than or equal to 1", "trino"),
        query=Query(table="", partition=False, pattern=PSeq([PVar("A"), PQuant(PVar("B"), "{0}")]),
                    measures=[(Func("COUNT", [Raw("*")]), "m0")], defines=[("A", Raw("true"))]),
        rows=[row(1)],
        kind="trino-raises",
    ),
    Known(
        id="sparkcep-accepts-no-define",
        verdict="sparkcep lenient",
        reason=("sparkcep accepts a MATCH_RECOGNIZE without DEFINE (every variable TRUE); DEFINE is "
                "mandatory in SQL:2016's grammar, in Trino ('mismatched input )'), in Oracle and "
                "Snowflake. An extension, harmless; it should be documented in docs/sql.md."),
        matches=lambda q, c: not q.defines,
        query=Query(table="", partition=False, pattern=PVar("A"),
                    measures=[(Func("COUNT", [Raw("*")]), "m0")]),
        rows=[row(1)],
        kind="trino-raises",
    ),
]


# -- constructs sparkcep does not support yet (the generator's extended=True corpus) ------------

def _refused(case, *texts) -> bool:
    """sparkcep raised a MatchRecognizeError containing one of ``texts`` (and Trino did not)."""
    if case is None:
        return True
    return (case.kind == "sparkcep-raises" and case.spark.error.startswith("MatchRecognizeError")
            and any(t in case.spark.error for t in texts))


def _uses(q: Query, pred) -> bool:
    return any(pred(n) for n in q.exprs())


def _classifier_in_navigation(n) -> bool:
    return (isinstance(n, Func) and n.name in ("PREV", "NEXT", "FIRST", "LAST")
            and any(isinstance(a, Func) and a.name == "CLASSIFIER" for a in n.args))


def _semantics_inside_navigation(n) -> bool:
    return (isinstance(n, Func) and n.name in ("PREV", "NEXT")
            and any(isinstance(a, Func) and a.semantics for a in n.args))


KNOWN += [
    Known(
        id="sparkcep-refuses-wider-aggregates",
        verdict="sparkcep refuses",
        reason=("Aggregates other than COUNT/SUM/AVG/MIN/MAX (array_agg, max_by, min_by, count_if, "
                "bool_and, bool_or, stddev, variance, any_value, geometric_mean) are refused in "
                "MEASURES/DEFINE; Trino accepts every aggregate function there (docs/sql.md lists "
                "the five, so this is a documented gap)."),
        matches=lambda q, c: bool(q.funcs() & set(qg.EXTENDED_AGGS)) and _refused(c, "aggregate", "not supported"),
        query=Query(table="", partition=False, pattern=PQuant(PVar("A"), "+"),
                    measures=[(Func("ARRAY_AGG", [Raw("A.x")]), "m0")], defines=[("A", Raw("true"))]),
        rows=[row(1, x=1), row(2, x=2)],
        kind="sparkcep-raises",
    ),
    Known(
        id="sparkcep-refuses-classifier-in-navigation",
        verdict="sparkcep refuses",
        reason=("CLASSIFIER() as the argument of a navigation (PREV(CLASSIFIER()), "
                "LAST(CLASSIFIER())): standard, accepted by Trino; sparkcep refuses it."),
        matches=lambda q, c: _uses(q, _classifier_in_navigation) and _refused(c, "CLASSIFIER", "argument", "nested"),
        query=Query(table="", partition=False, pattern=PSeq([PVar("A"), PQuant(PVar("B"), "+")]),
                    measures=[(Func("PREV", [Func("CLASSIFIER", [])]), "m0")], rows="all",
                    defines=[("A", Raw("true"))]),
        rows=[row(1), row(2)],
        kind="sparkcep-raises",
    ),
    Known(
        id="sparkcep-refuses-running-final-inside-nested-navigation",
        verdict="sparkcep refuses",
        reason=("RUNNING/FINAL on a logical navigation nested in a physical one, e.g. "
                "NEXT(RUNNING LAST(A.s, 0), 1): accepted by Trino, refused by sparkcep ('NEXT: "
                "nested LAST is not allowed in its argument'); without the keyword "
                "(PREV(LAST(A.s), 1)) sparkcep accepts it."),
        matches=lambda q, c: _uses(q, _semantics_inside_navigation) and _refused(c, "nested"),
        query=Query(table="", partition=False, pattern=PSeq([PVar("A"), PQuant(PVar("B"), "+")]),
                    measures=[(Func("NEXT", [Func("LAST", [Raw("A.k")], "RUNNING"), Raw("1")]), "m0")],
                    rows="all", defines=[("A", Raw("true"))]),
        rows=[row(1, k=10), row(2, k=20), row(3, k=30)],
        kind="sparkcep-raises",
    ),
]


def classify(query: Query, case=None) -> str | None:
    """The id of the known disagreement that explains ``case`` (``query`` compared), or None."""
    for k in KNOWN:
        if k.matches(query, case):
            return k.id
    return None


__all__ = ["KNOWN", "Known", "classify", "row", "qg", "PAlt", "PGroup", "Op"]
