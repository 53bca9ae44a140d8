"""Lower a planned MATCH_RECOGNIZE into an engine plan and the Spark SQL that runs it.

For ``<input> MATCH_RECOGNIZE (...) AS m`` the replacement is::

    (SELECT <partition cols>, <measures over atoms> [, <order cols>, <other cols>]
     FROM <udtf>(TABLE(SELECT * FROM (SELECT *, <precomputed> FROM <input>)
                       DISTRIBUTE BY <partition cols> SORT BY <partition cols>, <order>))) AS m

or, when a key's type has a grouping equality Arrow does not share (``udtf.arrow.arrow_groups``:
floating point, collated strings, nested types), Spark's window partitioning groups, sorts and
marks the first row of each partition: ``TABLE(SELECT ..., row_number() OVER (PARTITION BY
<partition cols> ORDER BY <order>) = 1 AS <start> FROM (...))``.

The UDTF's output schema is fixed per query (Arrow UDTFs have no ``analyze``), so each
distinct engine plan gets its own UDTF, named by the plan's hash.  Everything here is pure:
the types come in as ``catalog.Field``s (the rewrite asks Spark for them).  The input relation
and the alias keep the user's own text; what is generated is escaped (``quote``) or printed
from sqlglot trees.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import NamedTuple

from sqlglot import exp

from udtf.arrow import arrow_groups
from udtf.compile import compile_pattern
from udtf.expr import Agg, Call, Cast, Classifier, MatchNumber, Nav, type_of
from udtf.plan import (Atom, Condition, DerivedMask, EnginePlan, Hierarchy, Limits, Output, OutputKind, RowsMode, Span,
                       Value)
from udtf.program import Program
from udtf.sparksql.types import SqlType

from . import chunked
from .analyze import Analysis, analysis_column, error
from .catalog import Field
from .interval import within_micros
from .optimize import optimize
from .parse import position, to_spark_sql
from .plan import Plan
from .typecheck import boolean, implicit_collation, typed, zone_checked

_LONG = Field("", "bigint", '"long"')
_STRING = Field("", "string", '"string"')
_BOOLEAN = Field("", "boolean", '"boolean"')
_INT = Field("", "int", '"integer"')


class Within(NamedTuple):
    key: str  # the first ORDER BY column (a timestamp, timestamp_ntz or date)
    length: float  # the window in microseconds (a date key: days)


class Lowered(NamedTuple):
    name: str  # of the UDTF
    plan: EnginePlan
    output: tuple  # Fields of the UDTF's output
    text: str  # Spark SQL replacing the clause, its input and its alias
    source: str  # the UDTF call in it (streaming: the view): the relation the measures are computed over
    shipped: tuple  # the columns of the precomputed input the engine reads, partition keys first
    prefix: str = "__mr"  # of the columns the rewrite adds (``Plan.prefix``)
    computes: tuple = ()  # the user's expressions Spark computes (its run-time errors are placed at them)
    also: tuple = ()  # (name, plan, output) of the other UDTFs ``text`` calls (the chunked plan's stitch)


class Stack(NamedTuple):
    """A statement with LAYERs evaluated in one pass (``one_pass``): the UDTF reads ``query``
    (the input rows with their interval), its ``shipped`` columns sorted
    by the input's ``order`` (Spark SQL keys) in the statement's partition, and runs
    ``hierarchy``'s layers below the top; ``inputs``: the statement's input columns (a
    stream's late row holds them)."""
    hierarchy: Hierarchy
    query: str
    shipped: tuple
    order: tuple
    inputs: tuple  # of catalog.Field
    span: Span | None  # the top's WITHIN over its members' span (``one_pass.span``)


def quote(name: str) -> str:
    """``name`` as a Spark identifier."""
    return "`" + name.replace("`", "``") + "`"


def program(analysis: Analysis, plan: Plan) -> Program:
    """The compiled pattern of a planned clause (what runs, and what ``explain`` shows)."""
    untils = {analysis.var_names[c.var] for c in plan.until}
    return compile_pattern(analysis.pattern, analysis.var_names, untils=untils,
                           within=analysis.clause.within is not None)


def within(analysis: Analysis, input_fields: tuple) -> Within | None:
    """The WITHIN window; None without one.  The engine reads its key's values as numbers
    (``udtf.arrow.order_numbers``): a TIMESTAMP_NTZ's distance is its wall clock's, whatever the
    session time zone."""
    clause = analysis.clause
    if clause.within is None:
        return None
    first = clause.order[0]
    if first.args.get("desc"):
        raise error("WITHIN requires the first ORDER BY key to be ascending", first)
    name = analysis_column(analysis, _column(first.this))
    micros = within_micros(clause.within)
    kind = next(f.type for f in input_fields if f.name == name)
    if kind in ("timestamp", "timestamp_ntz"):  # either is a count of microseconds, with no zone involved
        return Within(name, micros)
    if kind == "date":
        return Within(name, micros / 86_400_000_000)
    raise error(f"WITHIN needs a timestamp or date first ORDER BY key; {name} is {kind}", first)


def computed_query(plan: Plan, input_text: str) -> str:
    """``SELECT *, <precomputed> FROM <input>``: the input with every column the plan needs."""
    columns = ["*"] + [f"{to_spark_sql(e)} AS {quote(name)}" for name, e in plan.computed.items()]
    return f"SELECT {', '.join(columns)} FROM {input_text}"


def aggregate_query(plan: Plan, computed: str) -> str | None:
    """A query whose columns are typed like the aggregate measures (or None without any)."""
    typed = [f"{to_spark_sql(atom.sql)} AS {quote(plan.atom_name(k))}" for k, atom in enumerate(plan.atoms)
             if atom.sql is not None]
    return f"SELECT {', '.join(typed)} FROM ({computed})" if typed else None


class Typed(NamedTuple):
    """A clause's relations as Spark typed them: the ``Field``s of its input, of
    ``computed_query`` (the input with the precomputed columns; ``query``: its text) and of
    ``aggregate_query`` (none without one)."""
    input: tuple
    computed: tuple
    aggregates: tuple
    query: str


class Settings(NamedTuple):
    """The session settings a clause is compiled for: spark.sql.ansi.enabled, the engine's
    bounds (Spark confs), spark.sql.session.timeZone, spark.sparkcep.chunkRows (0: no chunked
    plan, ``chunked``), spark.sql.legacy.sizeOfNull (Spark's default: true)."""
    ansi: bool
    limits: Limits = Limits()
    zone: str = "UTC"
    chunk_rows: int = 0
    size_of_null: bool = True


def lower(analysis: Analysis, plan: Plan, window: Within | None, typed: Typed, alias: str,
          settings: Settings, demand: frozenset | None = None, stack: Stack | None = None) -> Lowered:
    """``alias``: the clause's own alias text; ``demand``: the lower-cased names of the output
    columns the statement reads (``demand.demanded``), None for all: the others are neither computed nor
    carried (one is kept when none is read).  A streaming plan (``plan.streaming``) reads the
    view ``stream_view(name)`` in place of the UDTF call, and ships the ORDER BY columns too.
    ``stack``: the clause is the top of a statement with LAYERs in one pass (its plan an
    ``engine`` plan over its union; the UDTF reads ``stack.query``)."""
    clause = analysis.clause
    input_fields, computed, (ansi, limits, zone, _, _) = typed.input, typed.query, settings
    keys = [analysis_column(analysis, c) for c in clause.partition_by]
    partition = list(dict.fromkeys(keys))  # a key named twice partitions once; it is output twice (as Trino)
    fields = {f.name: f for f in typed.computed}
    types = {name: f.type for name, f in fields.items()}
    starts = _starts(analysis, plan, partition, types)
    aggregates = {f.name: f for f in typed.aggregates}
    define = tuple(_condition(c, types, settings, analysis, "DEFINE") for c in plan.define)
    until = tuple(_condition(c, types, settings, analysis, "UNTIL") for c in plan.until)
    atoms = tuple(Atom(engine_expr(a.atom.expr, types, settings), a.atom.final) for a in plan.atoms)
    defaults = frozenset(plan.atom_name(k) for k, a in enumerate(atoms) if _default_string(a.expr))
    columns = _columns(analysis, plan, keys, input_fields, defaults)
    names = clause.args["alias"].columns if clause.args.get("alias") is not None else []
    if names and len(names) != len(columns):
        raise error(f"AS {clause.alias} ({', '.join(n.name for n in names)}) names {len(names)} columns, but "
                    f"MATCH_RECOGNIZE has {len(columns)}: {', '.join(c.name for c in columns)}", names[0])
    carry = partition if analysis.rows is RowsMode.ONE else [f.name for f in input_fields]
    kept = range(len(atoms))
    timeout = analysis.timeout is not None
    if demand is not None:
        columns = [c for c in columns if c.name.lower() in demand] or columns[:1]
        read = {name for c in columns for name in c.reads}
        carry = [name for name in carry if name in read]
        kept = [k for k in kept if plan.atom_name(k) in read]
        timeout = timeout and timeout_column(plan) in read
    # a UDTF has at least one column: with nothing read from it (constant measures, COUNT(*)),
    # the timed-out flag stands for its rows (false but for a timed-out partial match)
    timeout = timeout or not carry and not kept
    output = [fields[name]._replace(name=name) for name in carry]
    outputs = [Output(OutputKind.CARRY, column=name) for name in carry]
    if analysis.frame is not None:  # a window's output row: the row it stands for, its slot in a frame
        for kind, name, field in ((OutputKind.OWNER, owner_column(plan.prefix), _LONG),
                                  (OutputKind.FRAME_ROW, frame_row_column(plan.prefix), _INT)):
            if demand is None or name in read:
                output.append(field._replace(name=name))
                outputs.append(Output(kind))
    for index, k in enumerate(kept):
        measure, expr, name = plan.atoms[k], atoms[k].expr, plan.atom_name(k)
        if isinstance(expr, Nav):
            output.append(fields[measure.column]._replace(name=name))
            outputs.append(Output(OutputKind.TAKE, column=measure.column, atom=index))
            continue
        if isinstance(expr, MatchNumber):
            field = _LONG
        elif isinstance(expr, Classifier):
            field = _STRING
        else:
            field = aggregates[name]
            if field.type != expr.type:
                raise error(f"{expr.fn.upper()} over match state: Spark types it {field.type}, the engine "
                            f"{expr.type}; this aggregate cannot be evaluated exactly", measure.sql)
        output.append(field._replace(name=name))
        outputs.append(Output(OutputKind.VALUE, atom=index))
    if timeout:
        output.append(_BOOLEAN._replace(name=timeout_column(plan)))
        outputs.append(Output(OutputKind.TIMED_OUT))
    # a late row is an input row of the statement (with LAYERs: not of the top's union)
    late_fields = () if analysis.late is None else stack.inputs if stack is not None else input_fields
    if late_fields:
        output.append(_struct(late_column(plan), late_fields))
        outputs.append(Output(OutputKind.LATE))
    masks = plan.masks
    engine_plan = EnginePlan(
        program=program(analysis, plan), semantics=analysis.semantics, skip=analysis.skip,
        rows=analysis.rows, define=define, until=until, partition=tuple(partition),
        masks=tuple(m for m in masks if m not in plan.derived),
        derived=tuple(DerivedMask(m, plan.derived[m]) for m in masks if m in plan.derived),
        values=tuple(Value(name, types[name]) for name in plan.values), order_key=window.key if window else None,
        within=window.length if window else None, lookahead=plan.lookahead,
        atoms=tuple(atoms[k] for k in kept), output=tuple(outputs), limits=limits, ansi=ansi,
        timeouts=analysis.timeout is not None, zone=zone, distinct=analysis.distinct,
        at=position(clause) or (None, None), starts=starts, frame=analysis.frame)
    if stack is not None:
        engine_plan = held(engine_plan._replace(span=stack.span), types)._replace(hierarchy=stack.hierarchy)
    chunk = None if stack is not None else \
        chunked.chunking(analysis, engine_plan, settings.chunk_rows, plan.prefix, plan.streaming)
    if chunk is not None:  # each output row names its match by a MATCH_NUMBER (one is added if none is read)
        if not any(o.kind is OutputKind.VALUE and isinstance(engine_plan.atoms[o.atom].expr, MatchNumber)
                   for o in engine_plan.output):
            output.append(_LONG._replace(name=f"{plan.prefix}_match"))
            engine_plan = engine_plan._replace(atoms=(*engine_plan.atoms, Atom(MatchNumber(), False)),
                                               output=(*engine_plan.output, Output(OutputKind.VALUE,
                                                                                  atom=len(engine_plan.atoms))))
        engine_plan = engine_plan._replace(chunk=chunk)
    output = tuple(output)
    order = [analysis_column(analysis, _column(o.this)) for o in clause.order] if plan.streaming else []
    late = [f.name for f in late_fields]
    shipped = list(dict.fromkeys([*stack.shipped, *late])) if stack is not None else \
        _shipped(engine_plan, fields, clause, order + late, plan.origins)
    digest = hashlib.sha1((engine_plan.to_json() + json.dumps(output) + (json.dumps(shipped) if plan.streaming else "")).encode()).hexdigest()
    name = f"sparkcep_mr_{digest[:16]}"
    also = ()
    if plan.streaming:
        source = quote(stream_view(name))
    elif chunk is not None:
        stitch = f"{name}_stitch"
        also = ((stitch, engine_plan._replace(chunk=chunk._replace(stitch=True)), chunked.stitch_fields(plan.prefix)),)
        source = chunked.relation(name, stitch, engine_plan, output, shipped, order_keys(clause, analysis), computed, quote)
        output += chunked.extra_fields(plan.prefix)
    elif stack is not None:
        source = _call(plan, name, partition, list(stack.order), stack.query, shipped, starts)
    else:
        source = _call(plan, name, partition, order_keys(clause, analysis), computed, shipped, starts)
    text = f"(SELECT {', '.join(c.sql for c in columns)} FROM {source}){alias}"
    return Lowered(name, engine_plan, output, text, source, tuple(shipped), plan.prefix, also=also)


def measure_column(prefix: str, k: int) -> str:
    """A window's (R020) column holding its measure ``k`` (of MEASURES, in order)."""
    return f"{prefix}_m{k}"


def owner_column(prefix: str) -> str:
    """A window's UDTF column: the partition ordinal of the row an output row stands for."""
    return f"{prefix}_owner"


def frame_row_column(prefix: str) -> str:
    """A window's UDTF column: 0 for a row itself, k for the k-th row of its match."""
    return f"{prefix}_frame_row"


def timeout_column(plan: Plan) -> str:
    """The UDTF's WITH TIMEOUT ROWS column."""
    return f"{plan.prefix}_timed_out"


def late_column(plan: Plan) -> str:
    """The column of a stream's late rows (``Analysis.late``)."""
    return f"{plan.prefix}_late"


def _struct(name: str, fields: tuple) -> Field:
    """A STRUCT column ``name`` of ``fields``."""
    body = {"type": "struct", "fields": [{"name": f.name, "type": json.loads(f.json), "nullable": True,
                                          "metadata": {}} for f in fields]}
    text = "struct<" + ",".join(f"{f.name}:{f.type}" for f in fields) + ">"
    return Field(name, text, json.dumps(body))


def stream_view(name: str) -> str:
    """The temporary view holding the streaming output of the UDTF ``name`` would compute."""
    return f"{name}_stream"


def engine_expr(expr, types: dict, settings: Settings):
    """A match-state expression typed, checked against the session zone and optimized."""
    ansi, zone = settings.ansi, settings.zone
    if settings.size_of_null and not ansi:  # (Spark's Size: legacySizeOfNull, -1 of NULL)
        expr = _legacy_size(expr)
    return optimize(zone_checked(typed(expr, types, ansi), ansi, zone), ansi, zone)


def _legacy_size(expr):
    """``expr`` with its ``size`` / ``cardinality`` calls Spark's legacy Size (registry
    ``legacy_size``), at any depth (aggregates' arguments too)."""
    if isinstance(expr, Call) and expr.fn.lower() in ("size", "cardinality"):
        expr = expr._replace(fn="legacy_size")
    if isinstance(expr, Call):
        return expr._replace(args=tuple(_legacy_size(a) for a in expr.args))
    if isinstance(expr, Cast):
        return expr._replace(arg=_legacy_size(expr.arg))
    if isinstance(expr, Agg):
        return expr._replace(args=tuple(_legacy_size(a) for a in expr.args),
                             filter=None if expr.filter is None else _legacy_size(expr.filter))
    return expr


def _condition(condition: Condition, types: dict, settings: Settings, analysis: Analysis,
               clause: str) -> Condition:
    if condition.expr is None:
        return condition
    name = analysis.var_names[condition.var]
    expr = engine_expr(condition.expr, types, settings)
    definition = analysis.definitions[name]
    node = definition.condition if clause == "DEFINE" else definition.until
    return condition._replace(expr=boolean(expr, f"{clause} {name}", position(node) or (None, None)))


# Spark types PySpark's Arrow conversion cannot carry into a Python UDTF
_NO_ARROW = re.compile(r"interval( year| month|$)")


def _shipped(plan: EnginePlan, types: dict, clause, order: list, origins: dict) -> list:
    """The columns the UDTF reads, in a fixed order: partition keys, masks, the columns derived
    masks compare, values, the WITHIN key, the columns output rows carry or take, and
    ``order``.  A type Arrow cannot carry is an error at the user's expression (``origins``:
    computed column -> the user's node) or column."""
    names = [*plan.partition, *plan.masks,
             *(side.column for mask in plan.derived for c in mask.comparisons for side in (c.left, c.right)),
             *(v.name for v in plan.values), *([plan.order_key] if plan.order_key else []),
             *(o.column for o in plan.output if o.column is not None), *order]
    shipped = list(dict.fromkeys(names))
    for name in shipped:
        if _NO_ARROW.match(types[name].type):
            origin = origins.get(name)
            what = f"column {name}" if origin is None else to_spark_sql(origin)
            raise error(f"{what} of type {types[name].type} cannot pass through MATCH_RECOGNIZE "
                        "(Spark has no Arrow conversion for it): cast it in the input, or leave it out",
                        clause if origin is None else origin)
    return shipped


def _starts(analysis: Analysis, plan: Plan, partition: list, types: dict) -> str | None:
    """The column Spark marks each partition's first row in, when its keys need Spark's grouping
    equality (None: the UDTF compares them).  Keys and ORDER BY keys must be orderable, as in
    Spark's windows: else an error at the key."""
    clause = analysis.clause
    keys = [SqlType.parse(types[name]) for name in partition]
    for node, name, kind in zip(clause.partition_by, partition, keys):
        if not kind.is_orderable:
            raise error(f"PARTITION BY {name}: [EXPRESSION_TYPE_IS_NOT_ORDERABLE] its type {str(kind).upper()} "
                        "is not orderable (Spark's windows partition only by orderable types)", node)
    for ordered in clause.order:
        name = analysis_column(analysis, _column(ordered.this))
        kind = SqlType.parse(types[name])
        if not kind.is_orderable:
            raise error(f"ORDER BY {name}: [DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] its type {str(kind).upper()} "
                        "is not orderable", ordered)
    if plan.streaming or all(arrow_groups(k) for k in keys):
        return None
    return f"{plan.prefix}_start"


def held(plan: EnginePlan, types: dict) -> EnginePlan:
    """``plan`` (of a layer in one pass) with every column it reads as a value: the output's
    carried and taken columns and the WITHIN key too (the UDTF builds its rows from values)."""
    names = [v.name for v in plan.values]
    more = [o.column for o in plan.output if o.column is not None] + ([plan.order_key] if plan.order_key else []) + \
        ([plan.span.start, plan.span.end] if plan.span else [])
    extra = tuple(Value(name, types[name]) for name in dict.fromkeys(more) if name not in names)
    return plan._replace(values=plan.values + extra)


def _call(plan: Plan, name: str, partition: list, order: list, computed: str, shipped: list,
          starts: str | None) -> str:
    """``udtf(TABLE(SELECT <shipped> FROM (<computed>) DISTRIBUTE BY <keys> SORT BY <keys>, <order>))``,
    or with ``starts``: ``udtf(TABLE(SELECT <shipped>, row_number() OVER (PARTITION BY <keys> ORDER BY
    <order>) = 1 AS <starts> FROM (<computed>)))``."""
    keys = [quote(c) for c in partition]
    columns = ", ".join(map(quote, shipped)) or "1 AS " + quote(plan.prefix + "_none")
    if starts is not None:
        window = f"PARTITION BY {', '.join(keys)} ORDER BY {', '.join(order or keys)}"
        return f"{name}(TABLE(SELECT {columns}, row_number() OVER ({window}) = 1 AS {quote(starts)} FROM ({computed})))"
    argument = f"SELECT {columns} FROM ({computed}) DISTRIBUTE BY {', '.join(keys) or '1'}"
    if keys or order:
        argument += f" SORT BY {', '.join(keys + order)}"
    return f"{name}(TABLE({argument}))"


def order_keys(clause, analysis: Analysis) -> list:
    """The ORDER BY keys as Spark SQL over the input's columns."""
    order = []
    for ordered in clause.order:
        key = ordered.copy()
        key.set("this", exp.column(analysis_column(analysis, _column(ordered.this)), quoted=True))
        order.append(to_spark_sql(key))
    return order


class _Column(NamedTuple):
    name: str  # in the clause's output
    sql: str  # its select item over the UDTF's output
    reads: frozenset  # the UDTF's output columns it reads


def _default_string(expr) -> bool:
    """Is the atom a string of Spark's default collation strength (CLASSIFIER(), an aggregate
    reading no string column: ``min(CLASSIFIER())``), where its column would have the implicit
    one?"""
    return isinstance(expr, (Classifier, Agg)) and SqlType.parse(type_of(expr)).is_string and \
        not implicit_collation(expr)


def _with_default_strength(e: exp.Expression, defaults: frozenset) -> exp.Expression:
    """``e`` reading the atom columns ``defaults`` through a cast to BINARY and back, which keeps
    their values and gives them the default collation strength: ``CLASSIFIER() = LAST(s)`` then
    compares as ``s`` does, as Spark compares ``upper('a') = s``."""
    wrap = lambda c: exp.cast(exp.cast(c, "BINARY"), "STRING")
    if isinstance(e, exp.Column):
        return wrap(e) if e.name in defaults else e
    e = e.copy()
    for column in list(e.find_all(exp.Column)):
        if column.name in defaults:
            column.replace(wrap(column.copy()))
    return e


def _columns(analysis: Analysis, plan: Plan, partition: list, input_fields: tuple, defaults: frozenset) -> list:
    """The clause's output columns, in order: the partition keys, then under ONE ROW PER MATCH
    the measures; under ALL ROWS the plain ORDER BY columns, the measures, the other input
    columns; a window's: the input columns, its measures, its owner and frame row columns.
    ``defaults``: the atoms of the default collation strength (``_default_string``)."""
    clause = analysis.clause
    plain = lambda name: _Column(name, quote(name), frozenset([name]))
    measure = lambda name, e: _Column(name, f"{to_spark_sql(_with_default_strength(e, defaults))} AS {quote(name)}",
                                      frozenset(c.name for c in e.find_all(exp.Column)))
    if analysis.frame is not None:  # every input column, measure k as ``measure_column``
        return [plain(f.name) for f in input_fields] + \
            [measure(measure_column(plan.prefix, k), e) for k, (_, e) in enumerate(plan.measures)] + \
            [plain(owner_column(plan.prefix)), plain(frame_row_column(plan.prefix))]
    measures = [measure(n, e) for n, e in plan.measures]
    if analysis.timeout is not None:
        name = timeout_column(plan)
        measures.append(_Column(analysis.timeout, f"{quote(name)} AS {quote(analysis.timeout)}", frozenset([name])))
    if analysis.late is not None:
        name = late_column(plan)
        measures.append(_Column(analysis.late, f"{quote(name)} AS {quote(analysis.late)}", frozenset([name])))
    columns = [plain(c) for c in partition]
    if analysis.rows is RowsMode.ONE:
        return columns + measures
    plain_order = [analysis_column(analysis, o.this) for o in clause.order if isinstance(o.this, exp.Column)]
    order_columns = [c for c in plain_order if c not in partition]
    rest = [f.name for f in input_fields if f.name not in partition and f.name not in order_columns]
    return columns + [plain(c) for c in order_columns] + measures + [plain(c) for c in rest]


def _column(node) -> exp.Column:
    if not isinstance(node, exp.Column) or node.table:
        raise error("ORDER BY: only column names of the input are supported", node)
    return node
