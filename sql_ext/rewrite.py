"""Rewrite every MATCH_RECOGNIZE of a statement into plain Spark SQL: parse -> analyze -> plan
-> lower, asking a ``catalog.Catalog`` for types and registering the UDTFs it needs.

This is the only module of the pipeline that talks to Spark (through the catalog): analysis,
planning and lowering are pure functions of the clause and the types they are given.
"""
from __future__ import annotations

from sqlglot import exp

from . import lower
from .analyze import analyze, error
from .catalog import Catalog
from .parse import MatchRecognizeClause, find_match_recognize, replace_match_recognize, to_spark_sql
from .plan import plan


def rewrite_statement(tree: exp.Expression, catalog: Catalog) -> list:
    """Replace each MATCH_RECOGNIZE of ``tree`` (innermost first) by Spark SQL, in place;
    returns ``(clause, lower.Lowered)`` for each."""
    clauses = find_match_recognize(tree)
    if clauses:
        _reject_persistent_view(tree)
    done = []
    for clause in clauses:
        lowered = rewrite(clause, catalog)
        replace_match_recognize(clause, lowered.tree)
        done.append((clause, lowered))
    return done


def rewrite(clause: MatchRecognizeClause, catalog: Catalog) -> lower.Lowered:
    """The engine plan and Spark SQL replacing ``clause`` and its input (its UDTF registered in
    ``catalog``)."""
    ctes = _enclosing_ctes(clause)
    input_fields = catalog.schema(ctes + f"SELECT * FROM {to_spark_sql(clause.input.copy())}")
    analysis = analyze(clause, [f.name for f in input_fields])
    planned = plan(analysis, {f.name: f.type for f in input_fields})
    window = lower.within(analysis, planned, input_fields)
    computed = lower.computed_query(analysis, planned)
    computed_fields = catalog.schema(ctes + to_spark_sql(computed))
    aggregates = lower.aggregate_query(planned, computed)
    aggregate_fields = catalog.schema(ctes + to_spark_sql(aggregates)) if aggregates is not None else ()
    lowered = lower.lower(analysis, planned, window, input_fields, computed_fields, aggregate_fields, computed)
    catalog.register(lowered.name, lowered.plan, lowered.output)
    return lowered


def _reject_persistent_view(tree):
    if isinstance(tree, exp.Create) and (tree.args.get("kind") or "").upper() == "VIEW":
        if not any(True for _ in tree.find_all(exp.TemporaryProperty)):
            raise error("CREATE VIEW with MATCH_RECOGNIZE must be a TEMPORARY view: the view calls a "
                        "session-scoped function (use CREATE TEMP VIEW, or CREATE TABLE ... AS SELECT)", tree)


def _enclosing_ctes(node) -> str:
    """``WITH ...`` prefix of the CTEs visible at ``node`` (so its input can be analyzed alone).

    Visible are, for each enclosing ``WITH``: every CTE when ``node`` is in the query body, only
    the CTEs before its own when ``node`` is inside one of them (Spark's WITH is not recursive;
    the CTE holding ``node`` must never be included: it still contains the clause).  Outer
    scopes come first."""
    scopes = []
    while node.parent is not None:
        parent = node.parent
        if isinstance(parent, exp.With):
            own = next(k for k, cte in enumerate(parent.expressions) if cte is node)
            scopes.append(parent.expressions[:own])
        else:
            with_ = parent.args.get("with_") or parent.args.get("with")
            if isinstance(with_, exp.With) and with_ is not node:
                scopes.append(with_.expressions)
        node = parent
    ctes = [to_spark_sql(cte) for scope in reversed(scopes) for cte in scope]
    return ("WITH " + ", ".join(ctes) + " ") if ctes else ""
