"""Rewrite every MATCH_RECOGNIZE of a statement into plain Spark SQL: parse -> analyze -> plan
-> lower, asking a ``catalog.Catalog`` for types and registering the UDTFs it needs.

The statement's text is kept as the user wrote it; only the text of each clause (with its
input and alias) is replaced, so nothing outside a MATCH_RECOGNIZE is ever regenerated.  This
is the only module of the pipeline that talks to Spark (through the catalog): analysis,
planning and lowering are pure functions of the clause and the types they are given.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from sqlglot import exp

from . import hierarchy, lower, one_pass, syntax

from .analyze import analyze, check_final, error, with_late_rows
from .catalog import Catalog
from .demand import demanded
from .parse import (Definition, MatchRecognizeClause, Measure, Verbatim, find_nodes, parse, statement_spans,
                    to_spark_sql)
from .pattern_window import WindowPass, holds_pattern_window, rewrite_select, window_clauses
from .plan import plan
from .spark_errors import checked, culprit


class Edit(NamedTuple):
    start: int
    end: int
    text: str


def rewrite_sql(sql: str, catalog: Catalog, deferred: list | None = None) -> tuple[str, list]:
    """(``sql`` with every MATCH_RECOGNIZE rewritten, [(clause, lower.Lowered), ...]); the
    statements are joined by ``;\\n``, each as the user wrote it but for its clauses.

    ``deferred``: a list when the caller has Spark analyse the rewritten statement right after
    (a query: every subquery is analysed) - a clause of a query whose rewritten text the
    statement holds whole then appends its own analysis (the check placing an error at a
    measure) instead of running it; the caller runs them (``run_checks``) before reporting any
    error of the statement, so the error reported is the one of the eager order.  They run here
    too when the rewrite fails."""
    statements, done = [], []
    for start, end in statement_spans(sql):
        text = re.sub(r"[^\n]", " ", sql[:start]) + sql[start:end]  # positions stay the script's
        edits: list = []
        for tree in parse(text):
            try:
                done += rewrite_statement(text, tree, catalog, edits,
                                          deferred if isinstance(tree, exp.Query) else None)
            except Exception:
                run_checks(deferred or ())
                raise
        statements.append(_splice(text, start, end, edits).strip())
    return ";\n".join(statements), done


def run_checks(checks) -> None:
    """Run the checks ``rewrite_sql`` deferred, in order: the first failing one raises its error."""
    for check in checks:
        check()


def rewrite_statement(sql: str, tree: exp.Expression, catalog: Catalog, edits: list,
                      deferred: list | None = None) -> list:
    """Rewrite each MATCH_RECOGNIZE of ``tree`` (parsed from ``sql``) and each SELECT with a
    window with pattern recognition (``pattern_window``), innermost first: append an ``Edit``
    of ``sql`` for each to ``edits`` and put its text in the tree (``Verbatim``); returns
    ``(clause, lower.Lowered)`` for each clause, and for each such window (its clause spans
    the SELECT, its ``text`` is the SELECT's); ``deferred``: as for ``rewrite_sql``."""
    nodes = find_nodes(tree, lambda node: isinstance(node, MatchRecognizeClause) or holds_pattern_window(node))
    if nodes:
        _reject_persistent_view(tree)
    for clause in nodes:
        if not isinstance(clause, MatchRecognizeClause):
            for window in window_clauses(clause):
                syntax.check(sql, window, catalog)
            continue
        if clause.find_ancestor(Measure, Definition) is not None:
            raise error("a MATCH_RECOGNIZE cannot stand inside MEASURES or DEFINE", clause.input)
        syntax.check(sql, clause, catalog)
    done = []
    for node in nodes:
        if isinstance(node, MatchRecognizeClause):
            start, end = node.meta["span"]
            input_text = _splice(sql, start, node.meta["input_end"], edits)
            lowered = rewrite(node, catalog, input_text, sql[node.meta["body_end"]:end],
                              deferred=deferred if _in_from(node) else None)
            text, rewritten = lowered.text, [(node, lowered)]
        else:
            start, end = node.meta["select_span"]
            # (the CTEs its FROM sees: the SELECT's own WITH too)
            text, windows = rewrite_select(node, catalog, rewrite, _enclosing_ctes(node.args.get("from_") or node))
            for clause, _ in windows:
                clause.meta["span"] = (start, end)
            rewritten = [(clause, lowered._replace(text=text)) for clause, lowered in windows]
        edits.append(Edit(start, end, text))
        verbatim = Verbatim(this=text)
        if isinstance(node, MatchRecognizeClause):
            verbatim.meta["alias"] = node.alias  # (the name a window over its rows qualifies them by)
        node.replace(verbatim)
        done += rewritten
    return done


def rewrite(clause: MatchRecognizeClause, catalog: Catalog, input_text: str, alias: str,
            windowed: WindowPass | None = None, ctes: str | None = None,
            deferred: list | None = None) -> lower.Lowered:
    """The engine plan and Spark SQL replacing ``clause``, its input (``input_text``) and its
    alias (the user's text after the clause's closing parenthesis); the UDTF is registered in
    ``catalog``.  An error Spark raises while typing a part of the clause is reported at that
    part of the user's SQL, with Spark's message.  ``windowed``: the clause is a window's pattern
    recognition (R020); ``ctes``: the CTEs the input sees (default: those around ``clause``).
    A clause with LAYERs is rewritten as its expansion (``hierarchy``): each layer, then the
    statement's pattern over the union of what it reads; so is one with PERIOD or the interval
    functions (zero layers).  ``deferred``: as for ``rewrite_sql`` (the final check of the
    clause's own columns is deferred when the statement runs them all, not pruned)."""
    if ctes is None:
        ctes = _enclosing_ctes(clause) if windowed is None else windowed.ctes
    schema = lambda sql: catalog.schema(ctes + sql)
    input_fields = windowed.fields if windowed is not None else \
        checked(schema, f"SELECT * FROM {input_text}", lambda: clause.input)
    analysis = analyze(clause, [f.name for f in input_fields], windowed and windowed.frame)
    streaming = getattr(catalog, "streaming", False)
    if getattr(catalog, "layer_of_stream", False):  # (the statement's own clause: ``register_stream``)
        check_final(analysis)
    demand = windowed.demand if windowed is not None else None if streaming else demanded(clause)
    below: list = []  # the LAYERs' rewrites (their expressions Spark computes are the statement's)
    settings = lower.Settings(catalog.ansi(), catalog.limits(), catalog.time_zone(), catalog.chunk_rows(),
                              catalog.size_of_null())
    layers, stack = None, None  # the one pass (``one_pass``), when it covers the statement
    if hierarchy.expands(clause):
        if streaming:
            hierarchy.check_streamed(clause, catalog.processing_time)
        expanded: list = []  # (clause, union) of each layer
        # on a stream the layers are planned for the one pass (typed as in batch), never run alone
        layer_catalog = catalog.layer_catalog() if streaming else catalog

        def layer(layer_clause, text):
            below.append(rewrite(layer_clause, layer_catalog, text, "", ctes=ctes))
            expanded.append((layer_clause, text))
            return below[-1].text
        statement, rows_fields = analysis, input_fields
        expansion = hierarchy.expand(clause, input_text, input_fields, layer, schema)
        clause, input_text = expansion.clause, expansion.input
        input_fields = checked(schema, f"SELECT * FROM {input_text}", lambda: clause.input)
        analysis = analyze(clause, [f.name for f in input_fields])
        layers = one_pass.layers(statement.clause, expanded, below, expansion, schema, settings)
        if layers is not None:  # (the top's window is its matcher's, as each layer's)
            analysis = analyze(one_pass.spanless(clause), [f.name for f in input_fields])
        if streaming and layers is None and statement.clause.layers:
            raise hierarchy.not_streamed(statement.clause)
    if not streaming and catalog.is_streaming(ctes + f"SELECT * FROM {input_text}"):
        if windowed is not None:
            raise error("the input of a window with pattern recognition is a streaming relation: such a window "
                        "cannot run on a stream yet (MATCH_RECOGNIZE can, with sql_ext.stream(spark, sql); "
                        "docs/streaming.md)", clause.input)
        raise error("the input of MATCH_RECOGNIZE is a streaming relation, which a batch query (spark.sql) cannot "
                    "read: run the statement with sql_ext.stream(spark, sql) and write its result with "
                    "writeStream (docs/streaming.md)", clause.input)
    if streaming and catalog.late_rows is not None:
        analysis = with_late_rows(analysis, catalog.late_rows)
    planned = plan(analysis, {f.name: f.type for f in input_fields}, streaming=streaming, engine=layers is not None)
    if layers is not None:
        stack = one_pass.stack(statement, expansion, layers, planned, rows_fields, schema, settings)
    window = lower.within(analysis, input_fields)
    computed = lower.computed_query(planned, input_text)
    # (with nothing computed, ``computed`` is the input's query)
    computed_fields = input_fields if not planned.computed else checked(schema, computed, lambda: culprit(
        schema, ((f"SELECT {to_spark_sql(e)} FROM {input_text}", planned.origins[name])
                 for name, e in planned.computed.items()), clause))
    aggregates = lower.aggregate_query(planned, computed)
    aggregate_fields = () if aggregates is None else checked(schema, aggregates, lambda: culprit(
        schema, ((f"SELECT {to_spark_sql(a.sql)} FROM ({computed})", a.sql) for a in planned.atoms if a.sql is not None),
        clause))
    typed = lower.Typed(input_fields, computed_fields, aggregate_fields, computed)
    lowered = lower.lower(analysis, planned, window, typed, alias, settings, stack=stack)
    if streaming and stack is not None:  # the one pass reads the input rows with their interval
        catalog.register_stream(lowered, statement, ctes + stack.query, schema(stack.query), rows_fields)
    elif streaming:
        catalog.register_stream(lowered, analysis, ctes + computed, computed_fields, input_fields)
    else:
        _register(catalog, lowered)
    measures = [m.this for m in clause.measures]

    def check() -> None:
        checked(schema, f"SELECT * FROM {lowered.text}", lambda: culprit(
            schema, ((f"SELECT {to_spark_sql(e)} FROM {lowered.source}", node)
                     for (_, e), node in zip(planned.measures, measures)), clause))
    computes = (*planned.computed.values(), *(e for _, e in planned.measures), *(e for l in below for e in l.computes))
    # checked whole (as Spark analyses every column of a subquery), run with what is read
    try:
        pruned = lowered if demand is None else \
            lower.lower(analysis, planned, window, typed, alias, settings, demand=demand, stack=stack)
    except Exception:
        check()  # (the check comes first)
        raise
    if deferred is not None and pruned.text == lowered.text:
        deferred.append(check)
    else:
        check()
    if pruned is not lowered:
        _register(catalog, pruned)
    return pruned._replace(computes=computes)


def _register(catalog, lowered: lower.Lowered):
    """Register the UDTFs ``lowered.text`` calls."""
    catalog.register(lowered.name, lowered.plan, lowered.output)
    for name, engine_plan, output in lowered.also:
        catalog.register(name, engine_plan, output)


_FROM_KEYS = {exp.Select: ("from", "from_", "joins"), exp.From: ("this",), exp.Join: ("this",),
              exp.Subquery: ("this",), exp.SetOperation: ("this", "expression"), MatchRecognizeClause: ("this",)}


def _in_from(clause) -> bool:
    """Whether ``clause`` stands only in FROM items, derived tables and set operations up to its
    statement's root, so that the statement's analysis analyses it: not in a subquery expression
    (EXISTS, IN, scalar, LATERAL), where it could read outer columns its standalone check cannot
    see, nor in a CTE, which a statement may leave unread."""
    node = clause
    while node.parent is not None:
        keys = next((k for t, k in _FROM_KEYS.items() if isinstance(node.parent, t)), ())
        if node.arg_key not in keys:
            return False
        node = node.parent
    return True


def _splice(sql: str, start: int, end: int, edits: list) -> str:
    """``sql[start:end]`` with the outermost of ``edits`` inside it applied."""
    out, position = [], start
    for edit in sorted(edits, key=lambda e: (e.start, -e.end)):
        if edit.start >= position and edit.end <= end:
            out += [sql[position:edit.start], edit.text]
            position = edit.end
    out.append(sql[position:end])
    return "".join(out)


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
