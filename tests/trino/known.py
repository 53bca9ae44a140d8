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

import re
from dataclasses import dataclass
from typing import Callable

import querygen as qg
from querygen import (COLUMN_NAMES, Func, Op, PAlt, PAnchor, PGroup, PPermute, PQuant, PSeq, PVar,
                      Query, Raw)


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


def _differs_only_in(q: Query, case, measure_pred) -> bool:
    """Rows that differ agree once the measures satisfying ``measure_pred`` are masked."""
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

    return mask(only_s) == mask(only_t)


def _expect(case, *, spark, trino) -> None:
    assert (case.spark.rows, case.trino.rows) == (spark, trino), case.report()


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
        id="spark-array-agg",
        verdict="Spark semantics",
        reason=("ARRAY_AGG is Spark's array_agg (collect_list): it skips NULL elements and gives [] "
                "over no rows; Trino's array_agg keeps NULL elements and gives NULL over no rows. "
                "sparkcep evaluates Spark's aggregate functions with Spark's semantics (issue 10: "
                "'with Spark's own result types'); the generated corpus aggregates never-NULL values "
                "and reads Trino's as coalesce(array_agg(..), ARRAY[])."),
        matches=lambda q, c: _differs_only_in(
            q, c, lambda e: any(isinstance(n, Func) and n.name == "ARRAY_AGG" for n in qg.walk(e))),
        query=Query(table="", partition=False, pattern=PSeq([PVar("A"), PQuant(PVar("B"), "*")]),
                    measures=[(Func("ARRAY_AGG", [Raw("A.s")]), "m0"), (Func("ARRAY_AGG", [Raw("B.s")]), "m1")],
                    defines=[("A", Raw("true")), ("B", Raw("false"))]),
        rows=[row(1)],
        kind="rows",
        check=lambda c: _expect(c, spark=[((), ())], trino=[((None,), None)]),
    ),
    Known(
        id="spark-any-value",
        verdict="Spark semantics",
        reason=("ANY_VALUE is Spark's any_value: the first row's value, NULL included; ARBITRARY, "
                "Trino's name, is accepted as an alias of it. Trino's any_value / arbitrary return a "
                "non-NULL value when there is one. The generated corpus aggregates values constant "
                "in the match."),
        matches=lambda q, c: _differs_only_in(
            q, c, lambda e: any(isinstance(n, Func) and n.name in ("ANY_VALUE", "ARBITRARY") for n in qg.walk(e))),
        query=Query(table="", partition=False, pattern=PQuant(PVar("A"), "+"),
                    measures=[(Func("ANY_VALUE", [Raw("A.s")]), "m0"), (Func("ARBITRARY", [Raw("s")]), "m1")],
                    defines=[("A", Raw("true"))]),
        rows=[row(1), row(2, s="a")],
        kind="rows",
        check=lambda c: _expect(c, spark=[(None, None)], trino=[("a", "a")]),
    ),
    Known(
        id="trino-window-frame-literal",
        verdict="Trino deviates",
        reason=("Trino 476 fails with an internal error (GENERIC_INTERNAL_ERROR: "
                "java.lang.UnsupportedOperationException) on a window function over a window with "
                "pattern recognition when an integer literal of the frame (ROWS BETWEEN CURRENT ROW AND n "
                "FOLLOWING) or of a window function's arguments (NTH_VALUE(x, n)) also stands in its "
                "MEASURES or DEFINE ('2 FOLLOWING ... DEFINE A AS x > 2', 'NTH_VALUE(x, 1) OVER w ... "
                "DEFINE D AS COUNT(D.*) > 1'); otherwise the same queries run."),
        matches=lambda q, c: isinstance(q, qg.WindowQuery) and (c is None or c.kind == "trino-raises") and
        bool(_window_literals(q) & _literals(" ".join(e.render("trino") for e in [m for m, _ in q.measures] +
                                                      [d for _, d in q.defines]))),
        query=qg.WindowQuery(table="", partition=False, pattern=PQuant(PVar("A"), "+"), frame_end=2,
                             defines=[("A", Op(">", Raw("x"), Raw("2")))],
                             calls=[(qg.Over(Func("COUNT", [Raw("*")])), "f0")]),
        rows=[row(1, x=3), row(2, x=4)],
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


@dataclass
class Agreed:
    """A disagreement a campaign found, fixed in sparkcep: ``query`` over ``rows`` must agree
    with Trino (``test_fixed_disagreement``), even where a broad ``KNOWN`` predicate would
    explain the difference away."""
    id: str
    reason: str
    query: Query
    rows: list

    def table_rows(self) -> list:
        return list(self.rows)


AGREED: list[Agreed] = [
    Agreed(
        id="inner-loop-entered-again",
        reason=("(A*? | C)* $: after A*? took row 1 and left, the outer loop's next iteration enters "
                "A*? afresh, and its one-row option comes before C: A, A (sparkcep gave A, C; its "
                "epsilon closure took the fresh inner loop for an empty iteration of the one just "
                "left). Hidden in the campaign by trino-empty-loop-iteration-discarded."),
        query=Query(table="", partition=False,
                    pattern=PSeq([PQuant(PGroup(PAlt([PQuant(PVar("A"), "*", reluctant=True), PVar("C")])), "*"),
                                  PAnchor("$")]),
                    measures=[(Func("CLASSIFIER", []), "m0"), (Func("MATCH_NUMBER", []), "m1")], rows="all",
                    defines=[("C", Raw("true"))]),
        rows=[row(1), row(2), row(3)],
    ),
]


def _literals(text: str) -> set:
    return set(re.findall(r"\b\d+\b", text))


def _window_literals(q) -> set:
    """The integer literals of a window query's frame end and of its window functions' arguments."""
    calls = " ".join(e.render("trino") for e, _ in q.calls if isinstance(e, qg.Over) and isinstance(e.fn, Func))
    return _literals(calls) | ({str(q.frame_end)} if q.frame_end else set())


def classify(query: Query, case=None) -> str | None:
    """The id of the known disagreement that explains ``case`` (``query`` compared), or None."""
    for k in KNOWN:
        if k.matches(query, case):
            return k.id
    return None


__all__ = ["AGREED", "Agreed", "KNOWN", "Known", "classify", "row", "qg", "PAlt", "PGroup", "Op"]
