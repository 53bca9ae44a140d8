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


def _running_first_with_offset(q: Query, case) -> bool:
    """A RUNNING FIRST(v.col, n) with n > 0 in MEASURES of ALL ROWS PER MATCH."""
    if q.rows in ("one", ""):
        return False
    for e in q.measure_exprs():
        if (isinstance(e, Func) and e.name == "FIRST" and e.semantics != "FINAL" and len(e.args) == 2
                and e.args[1].render("spark") not in ("0",)):
            return True
    return False


KNOWN: list[Known] = [
    Known(
        id="trino-running-first-offset-looks-ahead",
        verdict="Trino deviates",
        reason=("RUNNING FIRST(A.k, n) with n > 0 in ALL ROWS PER MATCH: Trino 476 navigates to the "
                "n-th A row of the whole match even when it is after the current row (on rows 1..3 "
                "all A, FIRST(A.k, 1) is 20 on row 1 and FIRST(A.k, 2) is 30 on rows 1 and 2). In "
                "running semantics only the rows up to the current row are mapped (SQL:2016 running "
                "semantics; Oracle: RUNNING 'considers the rows up to the current row'), so the "
                "value is NULL there; sparkcep gives NULL. FINAL FIRST(A.k, n) agrees."),
        matches=_running_first_with_offset,
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


def classify(query: Query, case=None) -> str | None:
    """The id of the known disagreement that explains ``case`` (``query`` compared), or None."""
    for k in KNOWN:
        if k.matches(query, case):
            return k.id
    return None


__all__ = ["KNOWN", "Known", "classify", "row", "qg", "PAlt", "PGroup", "Op"]
