"""Lower a planned MATCH_RECOGNIZE into an engine plan and the Spark SQL that runs it.

For ``<input> MATCH_RECOGNIZE (...) AS m`` the replacement is::

    (SELECT <partition cols>, <measures over atoms> [, <order cols>, <other cols>]
     FROM <udtf>(TABLE(SELECT * FROM (SELECT *, <precomputed> FROM <input>)
                       DISTRIBUTE BY <partition cols> SORT BY <partition cols>, <order>))) AS m

The UDTF's output schema is fixed per query (Arrow UDTFs have no ``analyze``), so each
distinct engine plan gets its own UDTF, named by the plan's hash.  Everything here is pure:
the types come in as ``catalog.Field``s (the rewrite asks Spark for them), the trees are built
with sqlglot's builders, never by parsing generated text.
"""
from __future__ import annotations

import hashlib
import json
from typing import NamedTuple

from sqlglot import exp

from udtf.compile import compile_pattern
from udtf.expr import Agg, Classifier, MatchNumber, Nav
from udtf.plan import DerivedMask, EnginePlan, Output, OutputKind, RowsMode
from udtf.program import Program

from .analyze import Analysis, analysis_column, error
from .catalog import Field
from .interval import within_micros
from .plan import Plan, atom_name

MAX_THREADS = 100_000
_LONG = Field("", "bigint", '"long"')
_STRING = Field("", "string", '"string"')


class Within(NamedTuple):
    key: str  # the computed column holding the first ORDER BY key as a number
    length: float  # the window in that column's units


class Lowered(NamedTuple):
    name: str  # of the UDTF
    plan: EnginePlan
    output: tuple  # Fields of the UDTF's output
    tree: exp.Expression  # replaces the clause and its input


def program(analysis: Analysis, plan: Plan) -> Program:
    """The compiled pattern of a planned clause (what runs, and what ``explain`` shows)."""
    untils = {analysis.var_names[c.var] for c in plan.until}
    return compile_pattern(analysis.pattern, analysis.var_names, untils=untils,
                           within=analysis.clause.within is not None)


def within(analysis: Analysis, plan: Plan, input_fields: tuple) -> Within | None:
    """The WITHIN window, its key added to the columns ``plan`` precomputes; None without one."""
    clause = analysis.clause
    if clause.within is None:
        return None
    first = clause.order[0]
    if first.args.get("desc"):
        raise error("WITHIN requires the first ORDER BY key to be ascending", first)
    name = analysis_column(analysis, _column(first.this))
    column = exp.column(name, quoted=True)
    micros = within_micros(clause.within)
    kind = next(f.type for f in input_fields if f.name == name)
    if kind in ("timestamp", "timestamp_ntz"):
        return Within(plan.column_for(exp.func("unix_micros", exp.cast(column, "TIMESTAMP"))), micros)
    if kind == "date":
        return Within(plan.column_for(exp.func("unix_date", column)), micros / 86_400_000_000)
    raise error(f"WITHIN needs a timestamp or date first ORDER BY key; {name} is {kind}", first)


def computed_query(analysis: Analysis, plan: Plan) -> exp.Select:
    """``SELECT *, <precomputed> FROM <input>``: the input with every column the plan needs."""
    columns = [exp.Star()] + [exp.alias_(e.copy(), name, quoted=True) for name, e in plan.computed.items()]
    return exp.select(*columns).from_(analysis.clause.input.copy())


def aggregate_query(plan: Plan, computed: exp.Select) -> exp.Select | None:
    """A query whose columns are typed like the aggregate measures (or None without any)."""
    typed = [exp.alias_(atom.sql.copy(), atom_name(k), quoted=True)
             for k, atom in enumerate(plan.atoms) if atom.sql is not None]
    return exp.select(*typed).from_(computed.copy().subquery()) if typed else None


def lower(analysis: Analysis, plan: Plan, window: Within | None, input_fields: tuple,
          computed_fields: tuple, aggregate_fields: tuple, computed: exp.Select) -> Lowered:
    clause = analysis.clause
    partition = [analysis_column(analysis, c) for c in clause.partition_by]
    types = {f.name: f for f in computed_fields}
    aggregates = {f.name: f for f in aggregate_fields}
    one_row = analysis.rows is RowsMode.ONE
    carry = partition if one_row else [f.name for f in input_fields]
    output = [types[name]._replace(name=name) for name in carry]
    outputs = [Output(OutputKind.CARRY, column=name) for name in carry]
    for k, measure in enumerate(plan.atoms):
        expr, name = measure.atom.expr, atom_name(k)
        if isinstance(expr, Nav):
            output.append(types[measure.column]._replace(name=name))
            outputs.append(Output(OutputKind.TAKE, column=measure.column, atom=k))
            continue
        if isinstance(expr, MatchNumber) or (isinstance(expr, Agg) and expr.fn == "count"):
            field = _LONG
        elif isinstance(expr, Classifier):
            field = _STRING
        else:
            field = aggregates[name]
        output.append(field._replace(name=name))
        outputs.append(Output(OutputKind.VALUE, atom=k))
    masks = plan.masks
    engine_plan = EnginePlan(
        program=program(analysis, plan), semantics=analysis.semantics, skip=analysis.skip,
        rows=analysis.rows, define=tuple(plan.define), until=tuple(plan.until), partition=tuple(partition),
        masks=tuple(m for m in masks if m not in plan.derived),
        derived=tuple(DerivedMask(m, plan.derived[m]) for m in masks if m in plan.derived),
        values=tuple(plan.values), order_key=window.key if window else None,
        within=window.length if window else None, lookahead=plan.lookahead,
        atoms=tuple(a.atom for a in plan.atoms), output=tuple(outputs), max_threads=MAX_THREADS)
    output = tuple(output)
    digest = hashlib.sha1((engine_plan.to_json() + json.dumps(output)).encode()).hexdigest()
    name = f"sparkcep_mr_{digest[:16]}"
    return Lowered(name, engine_plan, output, _replacement(analysis, plan, name, partition, input_fields, computed))


def _replacement(analysis: Analysis, plan: Plan, name: str, partition: list, input_fields: tuple,
                 computed: exp.Select) -> exp.Select:
    clause = analysis.clause
    keys = [exp.column(c, quoted=True) for c in partition]
    order = []
    for ordered in clause.order:
        key = ordered.copy()
        key.set("this", exp.column(analysis_column(analysis, _column(ordered.this)), quoted=True))
        order.append(key)
    argument = exp.select(exp.Star()).from_(computed.subquery())
    argument.set("distribute", exp.Distribute(expressions=[k.copy() for k in keys] or [exp.Literal.number(1)]))
    if keys or order:
        argument.set("sort", exp.Sort(expressions=[exp.Ordered(this=k.copy(), nulls_first=True) for k in keys] + order))
    call = exp.Anonymous(this=name, expressions=[exp.Anonymous(this="TABLE", expressions=[argument])])
    measures = [exp.alias_(e, n, quoted=True) for n, e in plan.measures]
    columns = [k.copy() for k in keys]
    if analysis.rows is RowsMode.ONE:
        columns += measures
    else:
        plain_order = [analysis_column(analysis, o.this) for o in clause.order if isinstance(o.this, exp.Column)]
        order_columns = [c for c in plain_order if c not in partition]
        rest = [f.name for f in input_fields if f.name not in partition and f.name not in order_columns]
        columns += [exp.column(c, quoted=True) for c in order_columns] + measures + \
            [exp.column(c, quoted=True) for c in rest]
    return exp.select(*columns).from_(exp.Table(this=call))


def _column(node) -> exp.Column:
    if not isinstance(node, exp.Column) or node.table:
        raise error("ORDER BY: only column names of the input are supported", node)
    return node
