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
WITHIN of a pattern that reads only rows is the clause's own; over events it is the conjunct
``MAX(end) <= MIN(start) + T`` of every condition, which is the take-time window (rule 6) for
standard semantics without possessive quantifiers (the others are refused).

Each layer is one UDTF over its own union: not yet the one pass of ``udtf/match/layers.py``.
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


class Helpers(NamedTuple):
    """The names of the generated columns of every union."""
    row: str  # the completing row (a row's number in its partition, in the clause's order)
    level: str  # 0 for a row, 1 + the layer's index for an event
    number: str  # the event's MATCH_NUMBER (0 for a row)
    source: str  # the event's layer (NULL for a row)
    start: str  # the interval
    end: str


class Source(NamedTuple):
    """A layer lowered: its name, level, its Spark SQL (ONE ROW PER MATCH), the columns of its
    own PARTITION BY (its events carry them) and its measures."""
    name: str
    level: int
    text: str
    keys: tuple  # of catalog.Field
    measures: tuple  # of catalog.Field


def expand(clause: MatchRecognizeClause, input_text: str, input_fields: tuple,
           lowered: Callable[[MatchRecognizeClause, str], str],
           schema: Callable[[str], tuple]) -> tuple[MatchRecognizeClause, str]:
    """The statement's own pattern as a clause without layers and the Spark SQL of its input;
    on the way each layer is rewritten by ``lowered(clause, input_text) -> Spark SQL`` and its
    output typed by ``schema(sql) -> Fields``.  ``clause`` was analysed (``analyze``)."""
    if not clause.order:
        raise error("a statement with LAYERs needs ORDER BY: events are ordered by the rows that complete "
                    "them", clause.layers[0])
    names = [f.name for f in input_fields]
    prefix = column_prefix([*names, *(m.name for layer in clause.layers for m in layer.measures)])
    helpers = Helpers(*(f"{prefix}_{n}" for n in ("row", "level", "number", "source", "start", "end")))
    keys = [quote(c.name) for c in clause.partition_by]
    first = to_spark_sql(clause.order[0].this)
    over = (f"PARTITION BY {', '.join(keys)} " if keys else "") + \
        f"ORDER BY {', '.join(to_spark_sql(o) for o in clause.order)}"
    rows = (f"(SELECT *, ROW_NUMBER() OVER ({over}) AS {helpers.row}, {first} AS {helpers.start} "
            f"FROM {input_text})")
    sources: dict = {}
    for level, layer in enumerate(clause.layers, start=1):
        body = analyze_body(layer)
        for column in layer.partition_by:  # (rule 8: every item it reads carries its keys)
            for source in (sources[name] for name in _reads(body)[1]):
                if column.name.lower() not in {f.name.lower() for f in source.keys}:
                    raise error(f"LAYER {variable_name(layer.this)} PARTITION BY {column.name}: the events of LAYER "
                                f"{source.name} do not carry {column.name} (a layer partitioned by it does)", column)
        union = _union(clause, body, sources, rows, input_fields, helpers)
        text = lowered(_clause(clause, layer, body, sources, helpers), union or rows)
        name = variable_name(layer.this)
        fields = schema(f"SELECT * FROM {text}")
        measures = {m.name.lower() for m in layer.measures}
        refined = {c.name.lower() for c in layer.partition_by}
        sources[name] = Source(name, level, text, tuple(f for f in input_fields if f.name.lower() in refined),
                               tuple(f for f in fields if f.name.lower() in measures))
    body = analyze_body(clause)
    return _clause(clause, clause, body, sources, helpers), \
        _union(clause, body, sources, rows, input_fields, helpers) or ""


def _reads(body: Body) -> tuple[bool, list]:
    """(does ``body`` read rows, the names of the layers it reads)."""
    read = {v: variable_name(d.source) for v, d in body.definitions.items() if d.source is not None}
    return any(v not in read for v in body.var_names), sorted(set(read.values()))


def _union(clause, body: Body, sources: dict, rows: str, input_fields: tuple, helpers: Helpers) -> str | None:
    """The Spark SQL of what ``body`` reads in rule 3's order's columns (None: rows only)."""
    reads_rows, read = _reads(body)
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
             f"CAST(NULL AS STRING) AS {helpers.source}", helpers.start, f"{helpers.start} AS {helpers.end}"]) +
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
            helpers: Helpers) -> MatchRecognizeClause:
    """``body`` (a ``Layer`` or the statement's clause) as a clause without layers over its union,
    or over the numbered rows when it reads no layer."""
    reads_rows, read = _reads(analysed)
    column = lambda name, table=None: exp.column(name, table=table, quoted=False)
    if read:
        order = [exp.Ordered(this=column(h)) for h in (helpers.row, helpers.level, helpers.number)]
    else:
        order = [o.copy() for o in clause.order]
    measures = [Measure(this=_spans(m.this, helpers), alias=m.args["alias"].copy()) for m in body.measures]
    if isinstance(body, Layer):  # the helpers every event carries
        measures += [Measure(this=e, alias=exp.to_identifier(name)) for e, name in (
            (exp.Max(this=column(helpers.row)), helpers.row), (MatchNumberCall(), helpers.number),
            (exp.Min(this=column(helpers.start)), helpers.start),
            (exp.Max(this=column(helpers.end if read else helpers.start)), helpers.end))]
    window = None
    if body.within is not None and read:
        if analysed.semantics is Semantics.FLINKCEP or any(
                isinstance(n, Repeat) and n.possessive for n in walk(analysed.pattern)):
            raise error("WITHIN over a layer's events is evaluated for SEMANTICS STANDARD without possessive "
                        "quantifiers only, for now (docs/hierarchies.md)", body.within)
        # MAX(end) <= MIN(start) + T over the mapping with the row taken: rule 6's window
        window = exp.LTE(this=exp.Max(this=column(helpers.end)),
                         expression=exp.Add(this=exp.Min(this=column(helpers.start)),
                                            expression=exp.Paren(this=body.within.copy())))
    definitions = []
    for var in analysed.var_names:
        definition = analysed.definitions.get(var)
        source = variable_name(definition.source) if definition is not None and definition.source is not None else None
        conjuncts = []
        if definition is not None and not (source is not None and "span" not in definition.condition.meta):
            conjuncts.append(exp.Paren(this=_spans(definition.condition, helpers)))
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
        until = _spans(definition.until, helpers) if definition is not None and definition.until is not None else None
        definitions.append(Definition(this=variable, condition=condition, until=until))
    new = MatchRecognizeClause(
        this=clause.input.copy(), order=order,
        partition_by=[c.copy() for c in (*clause.partition_by, *(body.partition_by if body is not clause else ()))],
        measures=measures, rows=None if isinstance(body, Layer) else (body.args.get("rows") and body.args["rows"].copy()),
        after=body.skip and body.skip.copy(), semantics=body.args.get("semantics") and body.args["semantics"].copy(),
        distinct=body.distinct and body.distinct.copy(), pattern=body.pattern.copy(),
        within=None if read else (body.within and body.within.copy()),
        subsets=[s.copy() for s in body.subsets], define=definitions)
    new.meta.update({k: v for k, v in body.meta.items() if k not in ("span",)})
    return new


def _spans(node: exp.Expression, helpers: Helpers) -> exp.Expression:
    """``node`` with the interval functions written over the helper columns."""
    node = node.copy()
    for call in list(node.find_all(SpanCall)):
        kind = call.args["kind"]
        if kind == "EVENT_START":
            new = exp.column(helpers.start, table=call.this.copy())
        elif kind == "EVENT_END":
            new = exp.column(helpers.end, table=call.this.copy())
        elif kind == "MATCH_START":
            new = exp.Min(this=exp.column(helpers.start))
        else:
            new = exp.Max(this=exp.column(helpers.end))
        new.meta.update(call.meta)
        if call is node:
            return new
        call.replace(new)
    return node
