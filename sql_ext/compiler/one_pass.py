"""A statement with LAYERs in one pass per partition (docs/hierarchies.md, "Evaluation in one
pass"): the UDTF reads the input rows once, sorted in the statement's partition and order, and
runs every layer's plan through ``udtf.match.layers.LayerStack`` (``udtf.hierarchy``).

Each layer's plan is the one of the expansion's clause (``hierarchy.expand``) over the
expansion's union, planned with every expression over columns in the engine (``Plan.engine``):
the UDTF builds the union's items itself, so no column can be computed by Spark.  A layer's
events carry its measures, evaluated by the engine over the layer's atoms.  Not covered (the
statement keeps its expansion, same rows): a layer with its own PARTITION BY, an expression the
engine does not evaluate (a subquery, MEASURES navigating over an expression, a function outside
``udtf.sparksql``), a layer measure the engine would type otherwise than Spark, WITH TIMEOUT ROWS.
"""
from __future__ import annotations

from typing import Callable

from udtf.errors import MatchRecognizeError
from udtf.expr import type_of
from udtf.plan import Hierarchy, LayerPlan, Value

from . import lower
from .analyze import Analysis, analysis_column, analyze, analyze_body, variable_name
from .hierarchy import Expansion, over_spans, reads, refinement
from .interval import within_micros
from .lower import Settings, Stack
from .parse import MatchRecognizeClause
from .plan import Plan, engine_row, plan


def layers(clause: MatchRecognizeClause, expanded: list, below: list, top: Expansion, schema: Callable[[str], tuple],
           settings: Settings) -> tuple | None:
    """The ``LayerPlan``s of the LAYERs of ``clause`` (``expanded``: each layer's expansion
    clause and union text; ``below``: its ``lower.Lowered`` in the expansion; ``top``: the
    expansion), or None when the statement is not covered (its top's plan included)."""
    if not clause.layers or any(refinement(clause, layer) for layer in clause.layers) or \
            clause.args.get("timeout") is not None:
        return None
    names = [variable_name(layer.this) for layer in clause.layers]
    plans = []
    try:
        fields = schema(f"SELECT * FROM {top.input}")
        analysis = analyze(top.clause, [f.name for f in fields])
        if lower_engine(analysis, plan(analysis, {f.name: f.type for f in fields}, engine=True), fields,
                        f"SELECT * FROM {top.input}", schema, settings) is None:
            return None
        for name, layer, (layer_clause, text), expansion in zip(names, clause.layers, expanded, below):
            fields = schema(f"SELECT * FROM {text}")
            analysis = analyze(layer_clause, [f.name for f in fields])
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
            plans.append(LayerPlan(name, lower.held(lowered.plan, {f.name: f.type for f in fields}),
                                   tuple(names.index(r) for r in read), reads_rows,
                                   tuple(f.name for f in lowered.output), tuple(measures)))
    except MatchRecognizeError:  # (the expansion, built first, reported the user's errors)
        return None
    return tuple(plans)


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
          schema: Callable[[str], tuple]) -> Stack:
    """The one pass of the statement ``analysis.clause`` (its layers ``plans``, its top ``top``
    planned over ``expansion``'s union) over its input."""
    clause, helpers = analysis.clause, expansion.helpers
    read = {name.lower() for name in (*(v.name for p in plans for v in p.plan.values), *top.values,
                                      *(a.column for a in top.atoms if a.column is not None),
                                      *(analysis_column(analysis, c) for c in (*clause.partition_by,
                                                                               *(o.this for o in clause.order))))}
    query = f"SELECT * FROM {expansion.rows}"
    types = {f.name: f.type for f in schema(query)}
    rows = tuple(Value(f.name, f.type) for f in input_fields if f.name.lower() in read) + \
        tuple(Value(name, types[name]) for name in (helpers.start, helpers.end))
    reads_rows, sources = reads(analyze_body(clause))
    names = [p.name for p in plans]
    spans = tuple(within_micros(body.within) if body.within is not None and over_spans(clause, analyze_body(body))
                  else None for body in (*clause.layers, clause))
    hierarchy = Hierarchy(plans, tuple(names.index(s) for s in sources), reads_rows, rows, tuple(helpers), spans)
    return Stack(hierarchy, query, tuple(v.name for v in rows), tuple(lower.order_keys(clause, analysis)),
                 input_fields)

