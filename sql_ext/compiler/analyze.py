"""Clause-level analysis of a MATCH_RECOGNIZE: variables, subsets, skip target, semantics,
output column names.

Errors name the construct and the line:column of the user's SQL.  Identifiers follow Spark:
unquoted names are case-insensitive (pattern variables are upper-cased, as Trino and Oracle
report them from CLASSIFIER()), quoted names keep their case.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from sqlglot import exp

from udtf.errors import MatchRecognizeError
from udtf.pattern import Anchor, Exclude, Neg, Repeat, Var, parse_pattern, variables, walk
from udtf.plan import Frame, RowsMode, Semantics, Skip, SkipMode

from .parse import ClassifierCall, MatchNumberCall, MatchRecognizeClause, Navigation, SpanCall, position, to_spark_sql


def variable_name(identifier: exp.Identifier) -> str:
    return identifier.name if identifier.args.get("quoted") else identifier.name.upper()


def error(message: str, node=None) -> MatchRecognizeError:
    line, column = (position(node) or (None, None)) if node is not None else (None, None)
    return MatchRecognizeError(message, line, column)


@dataclass
class Analysis:
    """What the planner needs to know about the clause, resolved and checked."""
    clause: MatchRecognizeClause
    pattern: object  # udtf.pattern IR
    var_names: list  # primary pattern variables; index = engine variable id
    subsets: dict  # union variable name -> sorted variable indexes
    definitions: dict  # variable name -> Definition node
    semantics: Semantics
    skip: Skip
    rows: RowsMode
    input_columns: tuple = ()  # exact names, in order
    timeout: str | None = None  # WITH TIMEOUT ROWS: the name of the BOOLEAN column saying so
    distinct: bool = False  # SEMANTICS FLINKCEP DISTINCT: each distinct match once
    frame: Frame | None = None  # a window's (R020, rows WINDOW): the frame bounding each row's match
    late: str | None = None  # streaming, late rows asked for: the name of their STRUCT column

    def variable_set(self, name: str):
        """Variable indexes named by a primary or union variable, or None if unknown."""
        if name in self.subsets:
            return self.subsets[name]
        if name in self.var_names:
            return [self.var_names.index(name)]
        return None


def analyze(clause: MatchRecognizeClause, input_columns: list, frame: Frame | None = None) -> Analysis:
    """``frame``: for the pattern recognition of a window (R020): one row per input row."""
    body = analyze_body(clause)
    pattern, var_names, definitions, subsets, semantics, skip = body
    _check_hierarchy(clause, body, [analyze_body(layer) for layer in clause.layers])
    call = _span_call(clause)
    if frame is not None and call is not None:
        raise error(f"{call.args['kind']}: the interval functions are not evaluated in a window's pattern "
                    "recognition (docs/hierarchies.md)", call)

    analysis = Analysis(clause, pattern, var_names, subsets, definitions, semantics, skip,
                        RowsMode.WINDOW if frame is not None else RowsMode(clause.rows), tuple(input_columns),
                        _timeout(clause), clause.distinct is not None, frame)
    for column in clause.partition_by:
        if not isinstance(column, exp.Column) or column.table:
            raise error("PARTITION BY: only column names of the input are supported", column)
        analysis_column(analysis, column)
    if frame is None:  # (a window's measures are not columns: ``name OVER w`` reads them)
        _check_output_names(analysis)
    exclusion = next((n for n in walk(pattern) if isinstance(n, Exclude)), None)
    if exclusion is not None and analysis.rows is RowsMode.ALL_WITH_UNMATCHED:
        raise MatchRecognizeError("a pattern exclusion {- ... -} cannot be used with ALL ROWS PER MATCH "
                                  "WITH UNMATCHED ROWS (excluded rows would be neither matched nor "
                                  "unmatched in the output)", *exclusion.pos)
    if clause.within is not None and not clause.order:
        raise error("WITHIN requires ORDER BY (the window is measured on the first ORDER BY key)",
                    clause.within)
    return analysis


class Body(NamedTuple):
    """A pattern's body checked: the clause's or a LAYER's (docs/hierarchies.md)."""
    pattern: object  # udtf.pattern IR
    var_names: list
    definitions: dict
    subsets: dict
    semantics: Semantics
    skip: Skip


def analyze_body(body) -> Body:
    """PATTERN, DEFINE, SUBSET, SEMANTICS and AFTER MATCH SKIP of a clause or a ``Layer``."""
    pattern_node = body.pattern
    pattern = parse_pattern(pattern_node.code, pattern_node.origin)
    var_names = variables(pattern)

    definitions: dict = {}
    for definition in body.definitions:
        name = variable_name(definition.variable)
        if name in definitions:
            raise error(f"DEFINE: pattern variable {name} is defined twice", definition.variable)
        if name not in var_names:
            raise error(f"DEFINE: {name} is not a pattern variable of PATTERN", definition.variable)
        definitions[name] = definition

    subsets: dict = {}
    for subset in body.subsets:
        name = variable_name(subset.this)
        if name in var_names or name in subsets:
            raise error(f"SUBSET: {name} is already a pattern variable or subset", subset.this)
        members = []
        for member in subset.variables:
            member_name = variable_name(member)
            if member_name not in var_names:
                raise error(f"SUBSET {name}: {member_name} is not a pattern variable", member)
            members.append(var_names.index(member_name))
        subsets[name] = sorted(set(members))

    semantics = Semantics.FLINKCEP if body.semantics == "FLINKCEP" else Semantics.STANDARD
    if body.distinct is not None and semantics is Semantics.STANDARD:
        raise error("SEMANTICS STANDARD DISTINCT: DISTINCT applies to SEMANTICS FLINKCEP (standard semantics "
                    "report each match once)", body.distinct)
    skip = _skip(body, var_names, subsets)
    _field_references(body, {*var_names, *subsets})
    if skip.mode is SkipMode.NO_SKIP and semantics is Semantics.STANDARD:
        raise error("AFTER MATCH NO SKIP requires SEMANTICS FLINKCEP (standard semantics report one "
                    "match per start row; use AFTER MATCH SKIP TO NEXT ROW)", body.skip or body)
    return Body(pattern, var_names, definitions, subsets, semantics, skip)


TIMEOUT_COLUMN = "timed_out"  # the default name of the WITH TIMEOUT ROWS column


def _timeout(clause: MatchRecognizeClause) -> str | None:
    """The name of the WITH TIMEOUT ROWS column (None without the clause)."""
    timeout = clause.timeout
    if timeout is None:
        return None
    if clause.within is None:
        raise error("WITH TIMEOUT ROWS requires WITHIN: a partial match times out when its WITHIN window "
                    "closes", timeout)
    if clause.rows == RowsMode.ALL_WITH_UNMATCHED.value:
        raise error("WITH TIMEOUT ROWS cannot be used with ALL ROWS PER MATCH WITH UNMATCHED ROWS (the rows "
                    "of a timed-out partial match would be both in it and unmatched)", timeout)
    return timeout.column.name if timeout.column is not None else TIMEOUT_COLUMN


def _skip(clause, var_names: list, subsets: dict) -> Skip:
    kind = clause.skip_kind
    mode = SkipMode.TO_LAST if kind == "TO" else SkipMode(kind)
    if mode not in (SkipMode.TO_FIRST, SkipMode.TO_LAST):
        return Skip(mode)
    target = clause.skip_variable
    name = variable_name(target)
    members = subsets.get(name)
    if members is None:
        if name not in var_names:
            raise error(f"AFTER MATCH SKIP {kind}: {name} is not a pattern variable or subset", target)
        members = [var_names.index(name)]
    return Skip(mode, tuple(members), name, position(target) or (None, None), clause.skip_error_on_miss)


def analysis_column(analysis: Analysis, column: exp.Column) -> str:
    """The exact input column name a column reference resolves to (case-insensitively, as
    Spark resolves names)."""
    found = [c for c in analysis.input_columns if c.lower() == column.name.lower()]
    if not found and column.meta.get("fields"):  # (``_field_references``: ``x.y`` read as x's field y)
        raise error(f"{variable_name(column.this)} is not a pattern variable or subset", column)
    if not found:
        raise error(f"column {column.name} cannot be resolved; input columns are: "
                    f"{', '.join(analysis.input_columns)}", column)
    if len(found) > 1:
        raise error(f"column {column.name} is ambiguous: the input has {', '.join(found)}", column)
    return found[0]


def with_late_rows(analysis: Analysis, name: str) -> Analysis:
    """``analysis`` with its late rows in a column ``name`` (``sql_ext.stream(late_rows=name)``),
    which the output must not have already."""
    late = replace(analysis, late=name)
    _check_output_names(late)
    return late


def _check_output_names(analysis: Analysis):
    """Output column names are unique, case-insensitively as Spark resolves them: ONE ROW PER
    MATCH gives the partition columns then the measures, ALL ROWS PER MATCH every input column
    and the measures."""
    clause = analysis.clause
    if analysis.rows is RowsMode.ONE:
        if not clause.measures and not clause.partition_by:
            raise error("ONE ROW PER MATCH without PARTITION BY needs MEASURES: "
                        "the output would have no columns", clause)
        carried = {c.name.lower() for c in clause.partition_by}
    else:
        carried = {c.lower() for c in analysis.input_columns}
    seen: set = set()
    for measure in clause.measures:
        name = measure.name.lower()
        if name in seen:
            raise error(f"MEASURES: {measure.name} is defined twice", measure.args["alias"])
        if name in carried:
            raise error(f"MEASURES: {measure.name} clashes with an input column of the output",
                        measure.args["alias"])
        seen.add(name)
    if analysis.timeout is not None and analysis.timeout.lower() in seen | carried:
        timeout = clause.timeout
        raise error(f"WITH TIMEOUT ROWS: the output already has a column {analysis.timeout}; name the timeout "
                    "column with WITH TIMEOUT ROWS AS <name>", timeout.column or timeout)
    if analysis.late is not None and analysis.late.lower() in seen | carried | {(analysis.timeout or "").lower()}:
        raise error(f"late_rows: the output of MATCH_RECOGNIZE already has a column {analysis.late}; name the "
                    "late rows' column otherwise", clause)



# ---- event hierarchies (docs/hierarchies.md) ------------------------------------------------

def _check_hierarchy(clause: MatchRecognizeClause, top: Body, layers: list) -> None:
    """The rules of docs/hierarchies.md that need no types: layer names, what ``FROM`` may
    name, what a LAYER may hold, EVENT_START / EVENT_END arguments, a variable's columns
    against its layer's MEASURES; then what is not evaluated yet."""
    names: dict = {}  # layer name -> its index
    read: set = set()
    for level, (layer, body) in enumerate([*zip(clause.layers, layers), (clause, top)]):
        if layer is not clause:
            name = variable_name(layer.this)
            if name in names:
                raise error(f"LAYER: {name} is declared twice", layer.this)
            for column in layer.partition_by:
                if not isinstance(column, exp.Column) or column.table:
                    raise error("PARTITION BY: only column names of the input are supported", column)
            if layer.timeout is not None:
                raise error("a LAYER has no WITH TIMEOUT ROWS: only the statement's partial matches are reported",
                            layer.timeout)
        sources = {}  # variable -> the layer it reads
        for var, definition in body.definitions.items():
            if definition.source is None:
                continue
            source = variable_name(definition.source)
            if source not in names:
                later = " is declared after it: a layer reads only layers declared before it" \
                    if source in {variable_name(l.this) for l in clause.layers} else " names no LAYER of the clause"
                raise error(f"DEFINE {var} FROM {source}: {source}{later}", definition.source)
            sources[var] = clause.layers[names[source]]
            read.add(source)
        for node in _expressions(layer):
            for call in node.find_all(SpanCall):
                target = call.this
                if target is not None and variable_name(target) not in (*body.var_names, *body.subsets):
                    raise error(f"{call.args['kind']}: {variable_name(target)} is not a pattern variable", target)
            for column in node.find_all(exp.Column):
                source = sources.get(variable_name(column.args["table"])) \
                    if column.table and not isinstance(column.this, exp.Star) else None
                carried = [*(c.name for c in source.partition_by), *(m.name for m in source.measures)] \
                    if source is not None else []
                if source is not None and column.name.lower() not in {c.lower() for c in carried}:
                    raise error(f"{column.table}.{column.name}: {column.name} is not a measure of LAYER "
                                f"{variable_name(source.this)} (its MEASURES and PARTITION BY: "
                                f"{', '.join(carried) or 'none'})", column)
        if layer is not clause:
            names[variable_name(layer.this)] = level
    for layer in clause.layers:
        if variable_name(layer.this) not in read:
            raise error(f"LAYER {variable_name(layer.this)}: no variable reads it (DEFINE v FROM "
                        f"{variable_name(layer.this)})", layer.this)
    if clause.layers and clause.rows != RowsMode.ONE.value:
        raise error("ALL ROWS PER MATCH: a statement with LAYERs has ONE ROW PER MATCH (its rows would mix "
                    "input rows and events)", clause.args["rows"])
    _check_period(clause)


def _expressions(body) -> list:
    """The expressions of a clause's or a layer's MEASURES and DEFINE."""
    return [*(m.this for m in body.measures),
            *(e for d in body.definitions for e in (d.condition, d.until) if e is not None)]


def _field_references(body, variables: set) -> None:
    """Read ``A.st.a`` (``A`` a pattern variable or subset) as field ``a`` of ``A.st``, and
    ``st.a`` or ``st.a.b`` (``st`` none) as fields of the column ``st`` - what Spark reads a
    name of several parts as when its first part is no table - in ``body``'s MEASURES and
    DEFINE (not in subqueries), in place."""
    for node in _expressions(body):
        columns = [n for n in node.walk(bfs=False, prune=lambda n: isinstance(n, (exp.Subquery, exp.Select)))
                   if isinstance(n, exp.Column) and n.args.get("table") is not None and
                   not isinstance(n.this, exp.Star)]
        for column in columns:
            parts = [p for p in (*(column.args.get(k) for k in ("catalog", "db", "table")), column.this)
                     if p is not None]
            qualified = variable_name(parts[0]) in variables
            if qualified and len(parts) == 2:
                continue
            head = exp.Column(this=parts[1], table=parts[0]) if qualified else exp.Column(this=parts[0])
            head.meta.update(column.meta, fields=True)
            for field in parts[2 if qualified else 1:]:
                head = exp.Dot(this=head, expression=field)
                head.meta.update(column.meta)
            column.replace(head)


def _span_call(body) -> SpanCall | None:
    """The first interval function in ``body``'s own MEASURES, DEFINE and UNTIL (not its layers')."""
    return next((c for node in _expressions(body) for c in node.find_all(SpanCall)), None)


def _check_period(clause: MatchRecognizeClause) -> None:
    """PERIOD's rules that need no types: ORDER BY its end first, ascending; start and end
    expressions of the row; the interval functions need ORDER BY (a row's interval)."""
    period = clause.period
    if period is None:
        call = _span_call(clause)
        if call is not None and not clause.order and not clause.layers:
            raise error(f"{call.args['kind']}: a row's interval is its first ORDER BY key (or its PERIOD): the "
                        "clause needs ORDER BY", call)
        return
    end = to_spark_sql(period.expression)
    first = clause.order[0] if clause.order else None
    if first is None or first.args.get("desc") or _normal(first.this) != _normal(period.expression):
        raise error(f"PERIOD ({to_spark_sql(period.this)}, {end}): the first ORDER BY key must be its end, {end}, "
                    "ascending (the rows are ordered by when they are complete)", first or period)
    for node in (period.this, period.expression):
        found = next((n for n in node.walk() if isinstance(n, (exp.AggFunc, exp.Window, Navigation, ClassifierCall,
                                                              MatchNumberCall, SpanCall))
                      or isinstance(n, exp.Column) and n.table), None)
        if found is not None:
            raise error(f"PERIOD: {to_spark_sql(found)}: start and end are expressions of the row's own columns",
                        found)


def _normal(node: exp.Expression) -> exp.Expression:
    """``node`` with its identifiers as Spark compares them (case-insensitively)."""
    node = node.copy()
    for identifier in node.find_all(exp.Identifier):
        identifier.set("this", identifier.name.lower())
        identifier.set("quoted", False)
    return node


def check_final(analysis: Analysis) -> None:
    """Refuse, at its line:column, a PATTERN whose matches no row could make final before the
    stream ends: the anchor ``$`` (the partition's last row), and - standard semantics without
    WITHIN - a greedy unbounded loop over variables with no DEFINE (always true: a match
    starting before it would be replaced by a longer one at every later row)."""
    for node in walk(analysis.pattern):
        if isinstance(node, Anchor) and node.kind == "$":
            raise MatchRecognizeError("PATTERN anchor $ on a stream: the last row of a partition is known only "
                                      "when the stream ends, so no match using it could be emitted", *node.pos)
        if analysis.semantics is Semantics.STANDARD and analysis.clause.within is None and \
                isinstance(node, Repeat) and node.greedy and node.max is None and node.until is None:
            body = list(walk(node.body))
            names = [n.name for n in body if isinstance(n, Var)]
            if names and not any(isinstance(n, (Neg, Anchor)) for n in body) and \
                    not any(name in analysis.definitions for name in names):
                raise MatchRecognizeError(
                    f"PATTERN: a greedy unbounded loop over {', '.join(dict.fromkeys(names))} (no DEFINE: "
                    "always true) takes every later row, so no match is final before the stream ends; "
                    "add WITHIN, a DEFINE, or make the loop reluctant", *node.pos)
