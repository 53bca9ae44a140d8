"""A statement with LAYERs (docs/hierarchies.md) as its plain-SQL expansion: each layer, then
the statement's own pattern, is an ordinary MATCH_RECOGNIZE over the UNION ALL of what it reads
- the input rows, numbered in the clause's order, and the events of its source layers - ordered
by (completing row, level, MATCH_NUMBER), the order of rule 3.  An event is a row of its layer's
ONE ROW PER MATCH output: the partition keys (a layer's own PARTITION BY refines the statement's,
rule 8), the layer's MEASURES and four helper measures (its completing row - numbered in the
statement's partition -, MATCH_NUMBER, interval start and end); columns an item lacks are NULL.

The clauses are built from the user's own nodes, so their errors keep the user's line:column;
what is generated is the union, the helpers and the conjuncts saying which items a variable
ranges over (``v FROM L``: L's events; any other variable: rows).  EVENT_START(v) / EVENT_END(v)
read v's helper columns, MATCH_START() / MATCH_END() are MIN / MAX over the match's items.  A
row's interval is its PERIOD (start, end), else [k, k] for its first ORDER BY key k; a pattern
that reads only rows reads it from the row's own columns.  A WITHIN of a pattern that reads only
instantaneous rows is the clause's own; over events or PERIOD rows it is the conjunct
``start IS NOT NULL AND end IS NOT NULL AND MAX(end) <= MIN(start) + T`` of every condition,
which is the take-time window (rule 6) for standard semantics without possessive quantifiers
(the others are refused).  A statement with PERIOD or the interval functions and no LAYER is
the same rewrite with zero layers: its own clause over its input.  With PERIOD the input is
filtered by a check raising ``PERIOD start after end`` (at the PERIOD's line:column) on a row
whose start is after its end.

Each layer is one UDTF over its own union; ``one_pass`` runs the same clauses in one UDTF where
the layers share the statement's partition.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from sqlglot import exp

from udtf.pattern import Repeat, walk
from udtf.plan import Semantics

from .analyze import Body, analyze_body, error, variable_name
from .catalog import Field
from .lower import quote
from .parse import Definition, Layer, MatchNumberCall, MatchRecognizeClause, Measure, SpanCall, to_spark_sql
from .plan import column_prefix
from .spark_errors import checked, culprit, raising

PERIOD_TYPES = ("timestamp", "timestamp_ntz", "date")  # what WITHIN measures
SPAN = "sparkcep_span"  # meta of a window conjunct's comparison (``one_pass`` has the matcher check it)


class Helpers(NamedTuple):
    """The names of the generated columns of every union."""
    row: str  # the completing row (a row's number in its partition, in the clause's order)
    level: str  # 0 for a row, 1 + the layer's index for an event
    number: str  # the event's MATCH_NUMBER (0 for a row)
    source: str  # the event's layer (NULL for a row)
    start: str  # the interval
    end: str


class Interval(NamedTuple):
    """An item's interval as expressions over the reading pattern's input (unqualified: the
    current item; ``_spans`` qualifies them by a variable)."""
    start: exp.Expression
    end: exp.Expression


class Source(NamedTuple):
    """A layer lowered: its name, level, its Spark SQL (ONE ROW PER MATCH), the columns of its
    own PARTITION BY (its events carry them) and its measures."""
    name: str
    level: int
    text: str
    keys: tuple  # of catalog.Field
    measures: tuple  # of catalog.Field


class Expansion(NamedTuple):
    """The statement's own pattern as a clause without layers, the Spark SQL of its input, the
    names of the unions' generated columns, and the input rows with their interval (``start``,
    ``end`` helpers; checked with PERIOD), which the one pass reads (``one_pass``)."""
    clause: MatchRecognizeClause
    input: str
    helpers: Helpers
    rows: str


def expands(clause: MatchRecognizeClause) -> bool:
    """Is ``clause`` rewritten by ``expand``: has it LAYERs, PERIOD or an interval function?"""
    return bool(clause.layers) or clause.period is not None or clause.find(SpanCall) is not None


def check_streamed(clause: MatchRecognizeClause, processing_time: bool) -> None:
    """Refuse, at its line:column, what of ``clause`` (``expands``) does not stream: PERIOD in
    processing time (in processing time an item's interval is its arrival); with LAYERs, WITH
    TIMEOUT ROWS (as the batch expansion does) and a layer refining the partition (on a stream
    the layers run in one pass, in the statement's partition)."""
    if processing_time and clause.period is not None:
        raise error("PERIOD: a statement streamed in processing time orders and windows its rows by their arrival "
                    "(the first ORDER BY key), so a row's interval is [arrival, arrival], which a PERIOD of the "
                    "row's own times cannot be: stream it in event time (docs/streaming.md)", clause.period)
    if not clause.layers:
        return
    if clause.args.get("timeout") is not None:  # (the top reads a layer: its WITHIN is over spans, rule 6)
        raise error("WITH TIMEOUT ROWS: a statement with LAYERs has no timed-out rows, in batch or on a stream: "
                    "its top reads a layer's events, so its WITHIN is over its members' span, evaluated at each "
                    "take, with no timer to time a partial match out, for now (docs/hierarchies.md)",
                    clause.args["timeout"])
    for layer in clause.layers:
        keys = refinement(clause, layer)
        if keys:
            raise error(f"LAYER {variable_name(layer.this)} PARTITION BY {keys[0].name}: a layer refining the "
                        "statement's partition does not stream yet (on a stream the layers run in one pass, in the "
                        "statement's partition; docs/hierarchies.md)", keys[0])


def not_streamed(clause: MatchRecognizeClause) -> Exception:
    """The error refusing on a stream a statement with LAYERs that the one pass does not cover
    (in batch it runs as its expansion, one UDTF per layer, which a stream cannot chain)."""
    return error("LAYER: this statement does not stream: on a stream its layers run in one pass, which does not "
                 "cover it (an expression the engine does not evaluate - a subquery, MEASURES navigating over an "
                 "expression, a function outside docs/spark-semantics.md's - or a layer measure the engine types "
                 "otherwise than Spark; docs/hierarchies.md)", clause.layers[0])


def expand(clause: MatchRecognizeClause, input_text: str, input_fields: tuple,
           lowered: Callable[[MatchRecognizeClause, str], str],
           schema: Callable[[str], tuple]) -> Expansion:
    """The expansion of ``clause``; on the way each layer is rewritten by ``lowered(clause,
    input_text) -> Spark SQL`` and its output typed by ``schema(sql) -> Fields``.  ``clause``
    was analysed (``analyze``); with no LAYER it has PERIOD or an interval function, and the
    result is its own pattern over its input (with PERIOD: checked)."""
    if not clause.order:
        raise error("a statement with LAYERs needs ORDER BY: events are ordered by the rows that complete "
                    "them", clause.layers[0])
    own = _row_interval(clause)
    if clause.period is not None:
        input_text = _checked_period(clause, input_text, schema)
    names = [f.name for f in input_fields]
    prefix = column_prefix([*names, *(m.name for layer in clause.layers for m in layer.measures)])
    helpers = Helpers(*(f"{prefix}_{n}" for n in ("row", "level", "number", "source", "start", "end")))
    spans = f"{to_spark_sql(own.start)} AS {helpers.start}, {to_spark_sql(own.end)} AS {helpers.end}"
    if not clause.layers:
        return Expansion(_clause(clause, clause, analyze_body(clause), {}, helpers, own), input_text, helpers,
                         f"(SELECT *, {spans} FROM {input_text})")
    keys = [quote(c.name) for c in clause.partition_by]
    over = (f"PARTITION BY {', '.join(keys)} " if keys else "") + \
        f"ORDER BY {', '.join(to_spark_sql(o) for o in clause.order)}"
    rows = f"(SELECT *, ROW_NUMBER() OVER ({over}) AS {helpers.row}, {spans} FROM {input_text})"
    sources: dict = {}
    for level, layer in enumerate(clause.layers, start=1):
        body = analyze_body(layer)
        for column in refinement(clause, layer):  # (rule 8: every item it reads carries its keys)
            for source in (sources[name] for name in reads(body)[1]):
                if column.name.lower() not in {f.name.lower() for f in source.keys}:
                    raise error(f"LAYER {variable_name(layer.this)} PARTITION BY {column.name}: the events of LAYER "
                                f"{source.name} do not carry {column.name} (a layer partitioned by it does)", column)
        union = _union(clause, body, sources, rows, input_fields, helpers)
        text = lowered(_clause(clause, layer, body, sources, helpers, own), union or rows)
        name = variable_name(layer.this)
        fields = schema(f"SELECT * FROM {text}")
        measures = {m.name.lower() for m in layer.measures}
        refined = {c.name.lower() for c in refinement(clause, layer)}
        sources[name] = Source(name, level, text, tuple(f for f in input_fields if f.name.lower() in refined),
                               tuple(f for f in fields if f.name.lower() in measures))
    body = analyze_body(clause)
    return Expansion(_clause(clause, clause, body, sources, helpers, own),
                     _union(clause, body, sources, rows, input_fields, helpers) or "", helpers,
                     f"(SELECT *, {spans} FROM {input_text})")


def refinement(clause: MatchRecognizeClause, layer: Layer) -> list:
    """The keys ``layer``'s PARTITION BY adds to the statement's (rule 8): a key the statement's
    PARTITION BY, or the layer's own before it, already names adds nothing."""
    seen, keys = {c.name.lower() for c in clause.partition_by}, []
    for column in layer.partition_by:
        if column.name.lower() not in seen:
            seen.add(column.name.lower())
            keys.append(column)
    return keys


def _row_interval(clause: MatchRecognizeClause) -> Interval:
    """An input row's interval: its PERIOD, or its first ORDER BY key as an instant."""
    if clause.period is not None:
        return Interval(clause.period.this, clause.period.expression)
    return Interval(clause.order[0].this, clause.order[0].this)


def _checked_period(clause: MatchRecognizeClause, input_text: str, schema) -> str:
    """The input filtered by the check of every row's PERIOD (start <= end, else a run-time error
    at the PERIOD), after checking the types of start and end."""
    period = clause.period
    start, end = (to_spark_sql(e) for e in (period.this, period.expression))
    parts = [(f"SELECT {start} FROM {input_text}", period.this), (f"SELECT {end} FROM {input_text}", period.expression)]
    types = [f.type for f in checked(schema, f"SELECT {start}, {end} FROM {input_text}",
                                     lambda: culprit(schema, parts, period))]
    for node, kind in zip((period.this, period.expression), types):
        if kind not in PERIOD_TYPES:
            raise error(f"PERIOD: {to_spark_sql(node)} is {kind.upper()}; start and end are TIMESTAMP, TIMESTAMP_NTZ "
                        "or DATE (what WITHIN measures)", node)
    if types[0] != types[1]:
        raise error(f"PERIOD: start and end have one type (start {types[0].upper()}, end {types[1].upper()})",
                    period.expression)
    as_text = lambda node: exp.Cast(this=node.copy(), to=exp.DataType.build("STRING"))
    fails = raising(period, "PERIOD start after end: a row's start ", as_text(period.this), " is after its end ",
                    as_text(period.expression), f" (PERIOD ({start}, {end}))")
    check = exp.Case(ifs=[exp.If(this=exp.GT(this=period.this.copy(), expression=period.expression.copy()),
                                 true=fails)], default=exp.true())
    return f"(SELECT * FROM {input_text} WHERE {to_spark_sql(check)})"


def over_spans(clause: MatchRecognizeClause, body: Body) -> bool:
    """Is the WITHIN of ``body`` (a layer of ``clause`` or its top) measured over its members'
    span (rule 6: it reads a layer's events or PERIOD rows), else its own WITHIN over instants?"""
    return bool(reads(body)[1]) or clause.period is not None


def reads(body: Body) -> tuple[bool, list]:
    """(does ``body`` read rows, the names of the layers it reads)."""
    read = {v: variable_name(d.source) for v, d in body.definitions.items() if d.source is not None}
    return any(v not in read for v in body.var_names), sorted(set(read.values()))


def _union(clause, body: Body, sources: dict, rows: str, input_fields: tuple, helpers: Helpers) -> str | None:
    """The Spark SQL of what ``body`` reads in rule 3's order's columns (None: rows only)."""
    reads_rows, read = reads(body)
    if not read:
        return None
    keys = {c.name.lower() for c in clause.partition_by}
    columns = [f for f in input_fields if f.name.lower() in keys or reads_rows]
    for name in read:
        columns += [f for f in sources[name].keys if f not in columns]
        for field in sources[name].measures:
            if any(c.name.lower() == field.name.lower() for c in columns):
                measure = next(m for layer in clause.layers if variable_name(layer.this) == name
                               for m in layer.measures if m.name.lower() == field.name.lower())
                raise error(f"LAYER {name}: its measure {measure.name} has the name of another column the pattern "
                            "reads (an input column or another layer's measure): name it otherwise",
                            measure.args["alias"])
            columns.append(field)
    branches = []
    if reads_rows:
        own = {f.name for f in input_fields}
        branches.append("SELECT " + ", ".join(
            [quote(f.name) if f.name in own else f"CAST(NULL AS {f.type}) AS {quote(f.name)}" for f in columns] +
            [helpers.row, f"0 AS {helpers.level}", f"CAST(0 AS BIGINT) AS {helpers.number}",
             f"CAST(NULL AS STRING) AS {helpers.source}", helpers.start, helpers.end]) +
            f" FROM {rows}")
    for name in read:
        source = sources[name]
        own = {f.name.lower() for f in (*source.keys, *source.measures)} | keys
        branches.append("SELECT " + ", ".join(
            [quote(f.name) if f.name.lower() in own else f"CAST(NULL AS {f.type}) AS {quote(f.name)}" for f in columns] +
            [helpers.row, f"{source.level} AS {helpers.level}", helpers.number,
             f"{_string(name)} AS {helpers.source}",
             helpers.start, helpers.end]) +
            f" FROM {source.text} WHERE {helpers.row} IS NOT NULL")
    return "(" + " UNION ALL ".join(branches) + ")"


def _string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _clause(clause: MatchRecognizeClause, body, analysed: Body, sources: dict,
            helpers: Helpers, own: Interval) -> MatchRecognizeClause:
    """``body`` (a ``Layer`` or the statement's clause) as a clause without layers over its union,
    or over the (numbered) rows, whose interval is ``own``, when it reads no layer."""
    reads_rows, read = reads(analysed)
    column = lambda name, table=None: exp.column(name, table=table, quoted=False)
    if read:
        order = [exp.Ordered(this=column(h)) for h in (helpers.row, helpers.level, helpers.number)]
        interval = Interval(column(helpers.start), column(helpers.end))
    else:
        order = [o.copy() for o in clause.order]
        interval = own
    measures = [Measure(this=_spans(m.this, interval), alias=m.args["alias"].copy()) for m in body.measures]
    if isinstance(body, Layer):  # the helpers every event carries
        measures += [Measure(this=e, alias=exp.to_identifier(name)) for e, name in (
            (exp.Max(this=column(helpers.row)), helpers.row), (MatchNumberCall(), helpers.number),
            (exp.Min(this=interval.start.copy()), helpers.start), (exp.Max(this=interval.end.copy()), helpers.end))]
    window = None
    spans = over_spans(clause, analysed)
    if body.within is not None and spans:
        over = "a layer's events" if read else "PERIOD rows"
        if analysed.semantics is Semantics.FLINKCEP or any(
                isinstance(n, Repeat) and n.possessive for n in walk(analysed.pattern)):
            raise error(f"WITHIN over {over} is evaluated for SEMANTICS STANDARD without possessive "
                        "quantifiers only, for now (docs/hierarchies.md)", body.within)
        if body.timeout is not None:
            raise error(f"WITH TIMEOUT ROWS: a WITHIN over {over} is evaluated at each take, with no timer to "
                        "time a partial match out, for now (docs/hierarchies.md)", body.timeout)
        # the item's interval is known, MAX(end) <= MIN(start) + T over the mapping with it taken: rule 6
        span = exp.LTE(this=exp.Max(this=interval.end.copy()),
                       expression=exp.Add(this=exp.Min(this=interval.start.copy()),
                                          expression=exp.Paren(this=body.within.copy())))
        span.meta[SPAN] = True
        window = exp.and_(exp.Not(this=exp.Is(this=interval.start.copy(), expression=exp.Null())),
                          exp.Not(this=exp.Is(this=interval.end.copy(), expression=exp.Null())), span)
    definitions = []
    for var in analysed.var_names:
        definition = analysed.definitions.get(var)
        source = variable_name(definition.source) if definition is not None and definition.source is not None else None
        conjuncts = []
        if definition is not None and not (source is not None and "span" not in definition.condition.meta):
            conjuncts.append(exp.Paren(this=_spans(definition.condition, interval)))
        if read:
            item = exp.column(helpers.source, table=var)
            conjuncts.append(exp.Is(this=item, expression=exp.Null()) if source is None
                             else exp.EQ(this=item, expression=exp.Literal.string(source)))
        if window is not None:
            conjuncts.append(window.copy())
        if not conjuncts:
            continue
        condition = conjuncts[0]
        for conjunct in conjuncts[1:]:
            condition = exp.And(this=condition, expression=conjunct)
        variable = definition.variable.copy() if definition is not None else exp.to_identifier(var, quoted=True)
        until = _spans(definition.until, interval) if definition is not None and definition.until is not None else None
        definitions.append(Definition(this=variable, condition=condition, until=until))
    new = MatchRecognizeClause(
        this=clause.input.copy(), order=order,
        partition_by=[c.copy() for c in (*clause.partition_by, *(refinement(clause, body) if body is not clause else ()))],
        measures=measures, rows=None if isinstance(body, Layer) else (body.args.get("rows") and body.args["rows"].copy()),
        after=body.skip and body.skip.copy(), semantics=body.args.get("semantics") and body.args["semantics"].copy(),
        distinct=body.distinct and body.distinct.copy(), pattern=body.pattern.copy(),
        within=None if spans else (body.within and body.within.copy()),
        timeout=None if spans else (body.timeout and body.timeout.copy()),
        subsets=[s.copy() for s in body.subsets], define=definitions)
    new.meta.update({k: v for k, v in body.meta.items() if k not in ("span",)})
    return new


def _spans(node: exp.Expression, interval: Interval) -> exp.Expression:
    """``node`` with the interval functions written over ``interval``."""
    node = node.copy()
    for call in list(node.find_all(SpanCall)):
        kind = call.args["kind"]
        if kind in ("EVENT_START", "EVENT_END"):
            new = _qualified(interval.start if kind == "EVENT_START" else interval.end, call.this)
        elif kind == "MATCH_START":
            new = exp.Min(this=interval.start.copy())
        else:
            new = exp.Max(this=interval.end.copy())
        new.meta.update(call.meta)
        if call is node:
            return new
        call.replace(new)
    return node


def _qualified(expression: exp.Expression, variable: exp.Identifier) -> exp.Expression:
    """``expression`` (over the item's unqualified columns) read at the item mapped to ``variable``."""
    expression = expression.copy()
    for column in list(expression.find_all(exp.Column)):
        qualified = exp.column(column.this.copy(), table=variable.copy())
        qualified.meta.update(column.meta)
        if column is expression:
            return qualified
        column.replace(qualified)
    return expression
