"""A statement with LAYERs in one pass per partition (docs/hierarchies.md, "Evaluation in one
pass"): the UDTF reads the input rows once, sorted in the statement's partition and order, and
runs every layer's plan through ``udtf.match.layers.LayerStack`` (``udtf.hierarchy``).

Each layer's plan is the one of the expansion's clause (``hierarchy.expand``) over the
expansion's union, planned with every expression over columns in the engine (``Plan.engine``):
the UDTF builds the union's items itself, so no column can be computed by Spark.  A layer's
events carry its measures, evaluated by the engine over the layer's atoms.  A layer with its own
PARTITION BY runs one matcher per refined key (``LayerPlan.keys``, rule 8) where Spark's grouping
of its keys is Python's equality up to NaN and -0.0 (``groups``).  A WITHIN over the
members' span is the matcher's (``span``), not a conjunct of every condition, where the
pattern maps every item of a match (``contiguous``).  Not covered (the
statement keeps its expansion, same rows): a layer refined by a key of another type (a collated
string, a nested value), an expression the engine does not evaluate (a subquery, MEASURES navigating over an expression, a function outside
``udtf.sparksql``), a layer measure the engine would type otherwise than Spark, WITH TIMEOUT ROWS.
"""
from __future__ import annotations

from typing import Callable

from sqlglot import exp

from udtf.arrow import arrow_groups
from udtf.errors import MatchRecognizeError
from udtf.expr import type_of
from udtf.pattern import STRICT, Repeat, Seq, walk
from udtf.plan import Hierarchy, LayerPlan, Span, Value
from udtf.sparksql.types import SqlType, TypeKind

from . import lower
from .analyze import Analysis, analysis_column, analyze, analyze_body, variable_name
from .hierarchy import SPAN, Expansion, Helpers, over_spans, reads, refinement
from .interval import within_micros
from .lower import Settings, Stack
from .parse import MatchRecognizeClause
from .plan import Plan, engine_row, plan


def layers(clause: MatchRecognizeClause, expanded: list, below: list, top: Expansion, schema: Callable[[str], tuple],
           settings: Settings) -> tuple | None:
    """The ``LayerPlan``s of the LAYERs of ``clause`` (``expanded``: each layer's expansion
    clause and union text; ``below``: its ``lower.Lowered`` in the expansion; ``top``: the
    expansion), or None when the statement is not covered (its top's plan included)."""
    if not clause.layers or clause.args.get("timeout") is not None:
        return None
    names = [variable_name(layer.this) for layer in clause.layers]
    plans = []
    try:
        fields = schema(f"SELECT * FROM {top.input}")
        analysis = analyze(spanless(top.clause), [f.name for f in fields])
        types = {f.name: f.type for f in fields}
        planned = plan(analysis, types, engine=True)
        if lower_engine(analysis, planned, fields, f"SELECT * FROM {top.input}", schema, settings) is None:
            return None
        span(clause, clause, top.helpers, planned, types, settings)  # (``stack``'s: the engine evaluates it)
        for name, layer, (layer_clause, text), expansion in zip(names, clause.layers, expanded, below):
            fields = schema(f"SELECT * FROM {text}")
            analysis = analyze(spanless(layer_clause), [f.name for f in fields])
            planned = plan(analysis, {f.name: f.type for f in fields}, engine=True)
            lowered = lower_engine(analysis, planned, fields, f"SELECT * FROM {text}", schema, settings)
            if lowered is None:
                return None
            atoms = {f.name: f.type for f in lowered.output}
            spark = {f.name.lower(): f.type for f in schema(f"SELECT * FROM {expansion.text}")}
            measures = []
            for measure, e in planned.measures:
                expr = lower.engine_expr(engine_row(planned, e), atoms, settings)
                if type_of(expr) != spark[measure.lower()]:
                    return None
                measures.append((measure, expr))
            reads_rows, read = reads(analyze_body(layer))
            types = {f.name: f.type for f in fields}
            named = {f.name.lower(): f.name for f in fields}
            keys = tuple(named[c.name.lower()] for c in refinement(clause, layer))
            if not all(groups(types[k]) for k in keys):
                return None
            held = lower.held(lowered.plan._replace(span=span(clause, layer, top.helpers, planned, types, settings)),
                              types)
            plans.append(LayerPlan(name, held,
                                   tuple(names.index(r) for r in read), reads_rows,
                                   tuple(f.name for f in lowered.output), tuple(measures), keys))
    except MatchRecognizeError:  # (the expansion, built first, reported the user's errors)
        return None
    return tuple(plans)


def groups(kind: str) -> bool:
    """Does Python's equality of the engine's values of ``kind``, with NaN equal to NaN and
    -0.0 to 0.0, group them as Spark's PARTITION BY does?"""
    t = SqlType.parse(kind)
    return arrow_groups(t) or t.kind in (TypeKind.FLOAT, TypeKind.DOUBLE)


def contiguous(body) -> bool:
    """Does every match of ``body``'s pattern map each item from its first to its last, so that
    its window conjunct has one value per (start, item)?  Not with ``->`` / ``->>`` junctions
    or quantifiers, whose runs pass over items their aggregates do not read."""
    return not any(isinstance(n, Seq) and any(j is not STRICT for j in n.junctions) or
                   isinstance(n, Repeat) and n.inner is not STRICT for n in walk(analyze_body(body).pattern))


def spanless(clause: MatchRecognizeClause) -> MatchRecognizeClause:
    """``clause`` (an expansion's layer or top) with the comparison of its window conjunct,
    ``MAX(end) <= MIN(start) + T`` (rule 6), TRUE: the matcher checks it per start and item
    (``span``), where the conjunct would be evaluated per run; ``clause`` itself when its
    pattern passes over rows (``contiguous``)."""
    if not contiguous(clause):
        return clause
    clause = clause.copy()
    for node in [n for n in clause.find_all(exp.LTE) if n.meta.get(SPAN)]:
        node.replace(exp.true())
    return clause


def span(clause: MatchRecognizeClause, body, helpers: Helpers, planned: Plan, types: dict,
         settings: Settings) -> Span | None:
    """The WITHIN of ``body`` (a LAYER of ``clause`` or its top, ``planned`` over a union typed
    ``types``) over its members' span, as ``spanless`` took it from the conditions; None when
    it has none, it is over instants or the pattern passes over rows (``contiguous``)."""
    if body.within is None or not over_spans(clause, analyze_body(body)) or not contiguous(body):
        return None
    start, end = helpers.start, helpers.end
    node = exp.LTE(this=exp.column(end), expression=exp.Add(this=exp.column(start),
                                                             expression=exp.Paren(this=body.within.copy())))
    admits = lower.engine_expr(engine_row(planned, node), {start: types[start], end: types[end]}, settings)
    return Span(start, end, within_micros(body.within), admits)


def lower_engine(analysis: Analysis, planned: Plan, fields: tuple, query: str, schema: Callable[[str], tuple],
                 settings: Settings) -> lower.Lowered | None:
    """A layer's engine plan lowered over its union ``query`` (typed ``fields``), None when
    Spark would have to compute a column of it."""
    if planned.computed or planned.derived:
        return None
    aggregates = lower.aggregate_query(planned, query)
    typed = lower.Typed(fields, fields, () if aggregates is None else schema(aggregates), query)
    return lower.lower(analysis, planned, lower.within(analysis, fields), typed, "", settings._replace(chunk_rows=0))


def stack(analysis: Analysis, expansion: Expansion, plans: tuple, top: Plan, input_fields: tuple,
          schema: Callable[[str], tuple], settings: Settings) -> Stack:
    """The one pass of the statement ``analysis.clause`` (its layers ``plans``, its top ``top``
    planned over ``expansion``'s union) over its input."""
    clause, helpers = analysis.clause, expansion.helpers
    read = {name.lower() for name in (*(v.name for p in plans for v in p.plan.values), *(k for p in plans for k in p.keys),
                                      *top.values,
                                      *(a.column for a in top.atoms if a.column is not None),
                                      *(analysis_column(analysis, c) for c in (*clause.partition_by,
                                                                               *(o.this for o in clause.order))))}
    query = f"SELECT * FROM {expansion.rows}"
    types = {f.name: f.type for f in schema(query)}
    rows = tuple(Value(f.name, f.type) for f in input_fields if f.name.lower() in read) + \
        tuple(Value(name, types[name]) for name in (helpers.start, helpers.end))
    reads_rows, sources = reads(analyze_body(clause))
    names = [p.name for p in plans]
    hierarchy = Hierarchy(plans, tuple(names.index(s) for s in sources), reads_rows, rows, tuple(helpers))
    return Stack(hierarchy, query, tuple(v.name for v in rows), tuple(lower.order_keys(clause, analysis)),
                 input_fields, span(clause, clause, helpers, top, types, settings))

