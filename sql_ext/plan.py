"""Split DEFINE and MEASURES between Spark and the engine.

Every sub-expression that depends only on the current row and physical navigation from it
becomes a column of the input subquery (PREV/NEXT = LAG/LEAD over the partition order), so
Spark's own semantics apply.  What depends on the match state becomes:

* in DEFINE: an engine expression (``udtf.expr``) over those columns; the row-level conjuncts
  of a condition become one boolean *mask* column the engine reads without running Python.
  A mask that only compares input columns and their PREVs of one exactly comparable type
  (``price < PREV(price)``) is instead *derived* in the UDTF with Arrow compute
  (``udtf.arrow.derive_mask``): the same values, without a Spark window;
* in MEASURES: *atoms* (navigation, aggregate, CLASSIFIER, MATCH_NUMBER, each RUNNING or
  FINAL) the engine computes, while the expression combining them stays Spark SQL evaluated
  over the UDTF's output.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot import exp

from udtf import expr as ir
from udtf.plan import Atom, Comparison, Condition, Lagged

from .analyze import Analysis, analysis_column, error, variable_name
from .parse import (Classifier, Final, First, Last, MatchNumber, Navigation, Next, Prev, Running,
                    to_spark_sql)

AGGREGATES = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}
_COMPARISONS = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
# Spark types whose comparisons Arrow computes identically (no NaN, collation or cross-type casts)
_ARROW_COMPARABLE = re.compile(r"(tinyint|smallint|int|bigint|date|timestamp|timestamp_ntz|string|"
                               r"decimal\(\d+,\d+\))")
_STATE_OPS = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.EQ: "=",
              exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=", exp.And: "and",
              exp.Or: "or"}


@dataclass(frozen=True)
class MeasureAtom:
    """A measure part the engine computes (``atom``), with what the rewrite needs to type it."""
    atom: Atom
    column: str | None = None  # navigation: the column whose value it takes (its Nav has none)
    sql: exp.Expression | None = None  # aggregate: the Spark aggregate giving its type


@dataclass
class Plan:
    """The split of one MATCH_RECOGNIZE; ``computed`` maps the name of each input-subquery column
    the rewrite adds to the Spark expression computing it."""
    analysis: Analysis
    column_types: dict = field(default_factory=dict)  # input column -> Spark type (simpleString)
    computed: dict = field(default_factory=dict)
    computed_sql: dict = field(default_factory=dict)  # generated SQL of a computed column -> its name
    derived: dict = field(default_factory=dict)  # mask name -> tuple of Comparison
    define: list = field(default_factory=list)  # of Condition
    until: list = field(default_factory=list)  # of Condition
    values: dict = field(default_factory=dict)  # columns the engine reads as python values
    atoms: list = field(default_factory=list)  # of MeasureAtom
    measures: list = field(default_factory=list)  # (name, Spark expression over atom columns)
    lookahead: int = 0

    @property
    def masks(self) -> list:
        """The mask columns the conditions read, sorted."""
        return sorted({c.mask for c in self.define + self.until if c.mask is not None})

    # ---- precomputed columns ------------------------------------------------------------
    def column_for(self, spark_expr: exp.Expression) -> str:
        """Name of an input column holding ``spark_expr`` (an input column is used as is)."""
        if isinstance(spark_expr, exp.Column) and not spark_expr.table:
            return spark_expr.name
        sql = to_spark_sql(spark_expr)
        if sql not in self.computed_sql:
            self.computed_sql[sql] = name = f"__mr_c{len(self.computed)}"
            self.computed[name] = spark_expr
        return self.computed_sql[sql]

    def derived_mask(self, comparisons: tuple) -> str:
        """Name of the mask the UDTF derives from ``comparisons`` (their AND; NULL = false)."""
        for name, existing in self.derived.items():
            if existing == comparisons:
                return name
        name = f"__mr_d{len(self.derived)}"
        self.derived[name] = comparisons
        return name

    def value_column(self, spark_expr: exp.Expression) -> str:
        name = self.column_for(spark_expr)
        self.values[name] = None
        return name


def atom_name(k: int) -> str:
    return f"__mr_a{k}"


def plan(analysis: Analysis, column_types: dict | None = None) -> Plan:
    """``column_types``: Spark type (simpleString) of each input column, when known."""
    clause = analysis.clause
    for node in [m.this for m in clause.measures] + [d.condition for d in clause.definitions] + \
            [d.until for d in clause.definitions if d.until is not None]:
        window = node.find(exp.Window)
        if window is not None:
            raise error("window functions (OVER) are not allowed in MEASURES or DEFINE; "
                        "navigate with PREV/NEXT/FIRST/LAST and aggregate over pattern variables", window)
    result = Plan(analysis, column_types or {})
    for name, definition in analysis.definitions.items():
        var = analysis.var_names.index(name)
        planner = _Planner(result, defining=var)
        result.define.append(Condition(var, *planner.condition(definition.condition)))
        if definition.until is not None:
            planner = _Planner(result, defining=var, until=True)
            result.until.append(Condition(var, *planner.condition(definition.until)))
    for measure in analysis.clause.measures:
        planner = _Planner(result, defining=None)
        result.measures.append((measure.name, planner.measure(measure.this.copy())))
    return result


class _Planner:
    """Plans one DEFINE condition (``defining`` = its variable) or one measure."""

    def __init__(self, plan_: Plan, defining: int | None, until: bool = False):
        self.plan = plan_
        self.analysis = plan_.analysis
        self.defining = defining
        self.until = until  # an UNTIL condition: the current row is not mapped

    # ---- variables ------------------------------------------------------------------------
    def variable_set(self, identifier, node) -> tuple:
        name = variable_name(identifier)
        members = self.analysis.variable_set(name)
        if members is None:
            raise error(f"{name} is not a pattern variable or subset", node)
        return tuple(members)

    def current_row_in(self, members) -> bool:
        """Does the current row belong to ``members`` (None = every row)?  Only in DEFINE."""
        if self.defining is None or self.until:
            return False
        return members is None or self.defining in members

    # ---- row-level expressions ---------------------------------------------------------
    def row_level(self, node) -> exp.Expression | None:
        """Spark expression for ``node`` if it depends on the current row only, else None."""
        if isinstance(node, (exp.AggFunc, Classifier, MatchNumber, Running, Final)) or \
                isinstance(node, (First, Last)):
            return None
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                return None
            if node.table:
                if self.defining is None:
                    return None
                members = self.variable_set(node.args["table"], node)
                if not self.current_row_in(members):
                    return None
            name = analysis_column(self.analysis, node)
            return exp.column(name, quoted=True)
        if isinstance(node, (Prev, Next)):
            inner = node.this
            qualifier = self.qualifier(inner, node)
            if self.defining is None:
                return None
            if qualifier is not None and not self.current_row_in(self.variable_set(qualifier, node)):
                return None
            arg = self.row_level(inner) if not _has_navigation(inner) else None
            if arg is None:
                return None
            offset = self.offset(node)
            fn = "LAG" if isinstance(node, Prev) else "LEAD"
            return exp.Window(this=exp.Anonymous(this=fn, expressions=[arg, exp.Literal.number(offset)]),
                              partition_by=[exp.column(self.partition_column(p), quoted=True)
                                            for p in self.analysis.clause.partition_by],
                              order=exp.Order(expressions=[self.order_key(o) for o in self.analysis.clause.order]))
        if isinstance(node, exp.Subquery) or isinstance(node, exp.Select):
            raise error("subqueries are not supported inside MATCH_RECOGNIZE", node)
        children = {}
        for key, value in node.args.items():
            if isinstance(value, exp.Expression):
                planned = self.row_level(value)
                if planned is None:
                    return None
                children[key] = planned
            elif isinstance(value, list):
                planned_list = []
                for item in value:
                    if isinstance(item, exp.Expression):
                        planned = self.row_level(item)
                        if planned is None:
                            return None
                        planned_list.append(planned)
                    else:
                        planned_list.append(item)
                children[key] = planned_list
        copy = node.copy()
        for key, value in children.items():
            copy.set(key, value)
        return copy

    def partition_column(self, column):
        return analysis_column(self.analysis, column)

    def order_key(self, ordered: exp.Ordered) -> exp.Ordered:
        key = ordered.copy()
        key.set("this", self.unqualified(ordered.this))
        return key

    def unqualified(self, node):
        def strip(n):
            if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
                return exp.column(analysis_column(self.analysis, n), quoted=True)
            return n
        return node.copy().transform(strip)

    def offset(self, node: Navigation) -> int:
        offset = node.offset
        if offset is None:
            return 1 if node.physical else 0
        if not isinstance(offset, exp.Literal) or offset.is_string or not offset.name.isdigit():
            raise error(f"{node.sql_keyword}: the offset must be a non-negative integer literal", offset)
        return int(offset.name)

    def qualifier(self, node, context):
        """The single pattern-variable qualifier of the column references in a navigation or
        aggregate argument (None: unqualified = every row)."""
        qualifiers = {}
        for column in node.find_all(exp.Column):
            if column.table:
                qualifiers[variable_name(column.args["table"])] = column
        if len(qualifiers) > 1:
            raise error(f"{_construct(context)}: all column references in the argument must be "
                        f"qualified by the same pattern variable, found {', '.join(sorted(qualifiers))}", context)
        if not qualifiers:
            return None
        (column,) = qualifiers.values()
        self.variable_set(column.args["table"], column)
        return column.args["table"]

    def argument_column(self, node, context) -> str:
        """Precomputed column of a navigation/aggregate argument (qualifiers stripped)."""
        for inner in node.find_all(exp.AggFunc, Navigation, Classifier, MatchNumber):
            raise error(f"{_construct(context)}: nested {_construct(inner)} is not allowed in its argument", inner)
        saved, self.defining = self.defining, None
        try:
            spark = self.unqualified(node)
        finally:
            self.defining = saved
        return spark

    # ---- match-state parts -------------------------------------------------------------
    def navigation(self, node):
        """(variable set, NavMode, logical offset, physical offset, argument) of a navigation,
        including PREV/NEXT(FIRST/LAST(...))."""
        context, physical = node, 0
        if isinstance(node, (Prev, Next)):
            steps = self.offset(node)
            physical = -steps if isinstance(node, Prev) else steps
            node = node.this
        if isinstance(node, (First, Last)):
            context, logical = node, self.offset(node)
            mode = ir.NavMode.FIRST if isinstance(node, First) else ir.NavMode.LAST
            node = node.this
        else:
            mode, logical = ir.NavMode.LAST, 0
        if node.find(exp.Column, Classifier) is None:
            raise error(f"{context.sql_keyword}: the argument must reference a column, e.g. "
                        f"{context.sql_keyword}(A.price)", context)
        qualifier = self.qualifier(node, context)
        members = None if qualifier is None else self.variable_set(qualifier, context)
        return members, mode, logical, physical, node

    def aggregate(self, node):
        fn = AGGREGATES.get(type(node))
        if fn is None:
            raise error(f"aggregate {node.sql_name()} is not supported in MATCH_RECOGNIZE "
                        f"(supported: COUNT, SUM, AVG, MIN, MAX)", node)
        arg = node.this
        if isinstance(arg, exp.Distinct):
            raise error(f"{fn.upper()}(DISTINCT ...) is not supported in MATCH_RECOGNIZE", node)
        star = isinstance(arg, exp.Star) or (isinstance(arg, exp.Column) and isinstance(arg.this, exp.Star))
        if star and fn != "count":
            raise error(f"{fn.upper()}: * and v.* are only allowed in COUNT", arg)
        if isinstance(arg, exp.Star):
            return fn, None, None
        if star:
            return fn, self.variable_set(arg.args["table"], arg), None
        qualifier = self.qualifier(arg, node)
        members = None if qualifier is None else self.variable_set(qualifier, node)
        return fn, members, arg

    # ---- DEFINE -------------------------------------------------------------------------
    def condition(self, node):
        """(mask column | None, state expression | None) for a DEFINE / UNTIL condition."""
        conjuncts = list(_conjuncts(node))
        row_parts, state_parts = [], []
        for conjunct in conjuncts:
            spark = self.row_level(conjunct)
            if spark is not None:
                row_parts.append(spark)
            else:
                state_parts.append(self.state(conjunct))
        mask = None
        comparisons = self.lagged_comparisons(row_parts)
        if comparisons:
            mask = self.plan.derived_mask(comparisons)
        elif row_parts:
            cond = row_parts[0] if len(row_parts) == 1 else exp.and_(*row_parts)
            mask = self.plan.column_for(exp.Coalesce(this=exp.paren(cond), expressions=[exp.false()]))
        state = None
        if state_parts:
            state = state_parts[0] if len(state_parts) == 1 else ir.Call("and", tuple(state_parts))
        return mask, state

    def lagged_comparisons(self, row_parts) -> tuple | None:
        """The planned row-level conjuncts as ``Comparison``s when each compares two input
        columns or PREVs of them (LAG windows) of one type that Arrow compares exactly as Spark
        does; else None."""
        comparisons = []
        for part in row_parts:
            op = _COMPARISONS.get(type(part))
            sides = [_lagged_column(side) for side in (part.this, part.expression)] if op else [None]
            if None in sides:
                return None
            types = {self.plan.column_types.get(side.column) for side in sides}
            if len(types) != 1 or not _ARROW_COMPARABLE.fullmatch(types.pop() or ""):
                return None
            comparisons.append(Comparison(op, *sides))
        return tuple(comparisons) or None

    def state(self, node):
        """Engine expression for a DEFINE sub-expression that reads the match state."""
        spark = self.row_level(node)
        if spark is not None:
            if isinstance(spark, exp.Literal):
                return ir.Lit(spark.name) if spark.is_string else _number(spark.name)
            if isinstance(spark, exp.Boolean):
                return ir.Lit(spark.this)
            if isinstance(spark, exp.Null):
                return ir.Lit(None)
            return ir.Col(self.plan.value_column(spark))
        if isinstance(node, exp.Paren):
            return self.state(node.this)
        if isinstance(node, Running):
            return self.state(node.this)
        if isinstance(node, Final):
            raise error("FINAL is not allowed in DEFINE (conditions see the match as it grows)", node)
        if isinstance(node, MatchNumber):
            raise error("MATCH_NUMBER() is not allowed in DEFINE", node)
        if isinstance(node, Classifier):
            if node.this is None:
                return ir.Lit(self.analysis.var_names[self.defining]) if not self.until else ir.Classifier(None)
            members = self.variable_set(node.this, node)
            if self.current_row_in(members):
                return ir.Lit(self.analysis.var_names[self.defining])
            return ir.Classifier(members)
        if isinstance(node, exp.Column):
            members = self.variable_set(node.args["table"], node)
            return ir.Nav(self.plan.value_column(self.unqualified(node)), members, ir.NavMode.LAST, 0, 0)
        if isinstance(node, Navigation):
            members, mode, logical, physical, arg = self.navigation(node)
            if physical > 0:
                self.plan.lookahead = max(self.plan.lookahead, physical)
            column = self.plan.value_column(self.argument_column(arg, node))
            return ir.Nav(column, members, mode, logical, physical)
        if isinstance(node, exp.AggFunc):
            fn, members, arg = self.aggregate(node)
            column = None if arg is None else self.plan.value_column(self.argument_column(arg, node))
            return ir.Agg(fn, members, column)
        return self.operator(node)

    def operator(self, node):
        op = _STATE_OPS.get(type(node))
        if op is not None:
            return ir.Call(op, (self.state(node.this), self.state(node.expression)))
        if isinstance(node, exp.Not):
            return ir.Call("not", (self.state(node.this),))
        if isinstance(node, exp.Neg):
            return ir.Call("neg", (self.state(node.this),))
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            return ir.Call("is_null", (self.state(node.this),))
        if isinstance(node, exp.Coalesce):
            return ir.Call("coalesce", (self.state(node.this), *(self.state(e) for e in node.expressions)))
        if isinstance(node, (exp.Greatest, exp.Least)):
            name = "greatest" if isinstance(node, exp.Greatest) else "least"
            return ir.Call(name, (self.state(node.this), *(self.state(e) for e in node.expressions)))
        if isinstance(node, exp.Abs):
            return ir.Call("abs", (self.state(node.this),))
        if isinstance(node, exp.In) and node.expressions:
            return ir.Call("in", (self.state(node.this), *(self.state(e) for e in node.expressions)))
        if isinstance(node, exp.Between):
            probe = self.state(node.this)
            return ir.Call("and", (ir.Call(">=", (probe, self.state(node.args["low"]))),
                                   ir.Call("<=", (probe, self.state(node.args["high"])))))
        if isinstance(node, exp.Case) and node.this is None:
            whens = tuple((self.state(branch.this), self.state(branch.args["true"]))
                          for branch in node.args.get("ifs") or [])
            default = node.args.get("default")
            return ir.Case(whens, self.state(default) if default is not None else ir.Lit(None))
        if isinstance(node, exp.If):
            false = node.args.get("false")
            return ir.Case(((self.state(node.this), self.state(node.args["true"])),),
                           self.state(false) if false is not None else ir.Lit(None))
        raise error(f"{_construct(node)} over match state (aggregates, FIRST/LAST, CLASSIFIER or "
                    "variable columns) is not supported in DEFINE; supported: arithmetic, comparisons, "
                    "AND/OR/NOT, IS [NOT] NULL, IN, BETWEEN, CASE, IF, COALESCE, ABS, GREATEST, LEAST", node)

    # ---- MEASURES -----------------------------------------------------------------------
    def measure(self, node, final: bool = False):
        """The measure as Spark SQL over atom columns."""
        if isinstance(node, (Running, Final)):
            return self.measure(node.this, isinstance(node, Final))
        atom = self.measure_atom(node, final)
        if atom is not None:
            return atom
        for key, value in list(node.args.items()):
            if isinstance(value, exp.Expression):
                node.set(key, self.measure(value, final))
            elif isinstance(value, list):
                node.set(key, [self.measure(v, final) if isinstance(v, exp.Expression) else v for v in value])
        return node

    def measure_atom(self, node, final: bool):
        if isinstance(node, MatchNumber):
            return self.add_atom(MeasureAtom(Atom(ir.MatchNumber(), True)))
        if isinstance(node, Classifier):
            members = None if node.this is None else self.variable_set(node.this, node)
            return self.add_atom(MeasureAtom(Atom(ir.Classifier(members), final)))
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            members = None if not node.table else self.variable_set(node.args["table"], node)
            column = analysis_column(self.analysis, node)
            return self.add_atom(MeasureAtom(Atom(ir.Nav(None, members, ir.NavMode.LAST, 0, 0), final), column))
        if isinstance(node, Navigation):
            members, mode, logical, physical, arg = self.navigation(node)
            column = self.plan.column_for(self.argument_column(arg, node))
            return self.add_atom(MeasureAtom(Atom(ir.Nav(None, members, mode, logical, physical), final), column))
        if isinstance(node, exp.AggFunc):
            fn, members, arg = self.aggregate(node)
            column = None if arg is None else self.plan.value_column(self.argument_column(arg, node))
            sql = None
            if fn != "count":
                sql = type(node)(this=exp.column(column, quoted=True))
            return self.add_atom(MeasureAtom(Atom(ir.Agg(fn, members, column), final), sql=sql))
        return None

    def add_atom(self, atom: MeasureAtom) -> exp.Column:
        for k, existing in enumerate(self.plan.atoms):
            if existing.atom == atom.atom and existing.column == atom.column:
                return exp.column(atom_name(k), quoted=True)
        self.plan.atoms.append(atom)
        return exp.column(atom_name(len(self.plan.atoms) - 1), quoted=True)


def _conjuncts(node):
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        yield from _conjuncts(node.this)
        yield from _conjuncts(node.expression)
    else:
        yield node


def _lagged_column(node) -> Lagged | None:
    """A planned input column or ``LAG(column, k) OVER (partition order)``."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Column) and not node.table and not isinstance(node.this, exp.Star):
        return Lagged(node.name, 0)
    if isinstance(node, exp.Window) and isinstance(node.this, exp.Anonymous) and node.this.name == "LAG":
        column, offset = node.this.expressions
        if isinstance(column, exp.Column) and not column.table:
            return Lagged(column.name, int(offset.name))
    return None


def _has_navigation(node) -> bool:
    return any(True for _ in node.find_all(Navigation, exp.AggFunc, Classifier, MatchNumber))


def _number(text: str):
    if text.isdigit():
        return ir.Lit(int(text))
    if "e" in text.lower():
        return ir.Lit(float(text))
    return ir.DecimalLit(text)


def _construct(node) -> str:
    if isinstance(node, Navigation):
        return node.sql_keyword
    if isinstance(node, exp.Func):
        return node.sql_name()
    return type(node).__name__.upper()
