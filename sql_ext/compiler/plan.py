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

Engine expressions come out untyped (``type`` None); ``typecheck`` types them once Spark has
typed the columns they read.  The rules of what may nest where are ``rules``'.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot import exp

from udtf import expr as ir
from udtf.pattern import rows_before
from udtf.plan import Atom, Comparison, Condition, Lagged, RowsMode, Semantics
from udtf.sparksql import collation
from udtf.sparksql.coercion import literal

from . import calls, rules
from .analyze import Analysis, analysis_column, error, variable_name
from .interval import day_time, year_month
from .parse import (ClassifierCall, Final, First, Last, MatchNumberCall, Navigation, Next, Prev, Running, position,
                    to_spark_sql, unparen, unwrap)

_COMPARISONS = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
# Spark types whose comparisons Arrow computes identically (no NaN, collation or cross-type casts)
_ARROW_COMPARABLE = re.compile(r"(tinyint|smallint|int|bigint|date|timestamp|timestamp_ntz|string|"
                               r"decimal\(\d+,\d+\))")


@dataclass(frozen=True)
class MeasureAtom:
    """A measure part the engine computes (``atom``), with what the rewrite needs to type it."""
    atom: Atom
    column: str | None = None  # navigation: the column whose value it takes (its Nav has none)
    sql: exp.Expression | None = None  # aggregate: a Spark aggregate of the same type


@dataclass
class Plan:
    """The split of one MATCH_RECOGNIZE; ``computed`` maps the name of each input-subquery column
    the rewrite adds to the Spark expression computing it (``origins``: the user's node it
    stands for, for errors)."""
    analysis: Analysis
    column_types: dict = field(default_factory=dict)  # input column -> Spark type (simpleString)
    computed: dict = field(default_factory=dict)
    computed_sql: dict = field(default_factory=dict)  # generated SQL of a computed column -> its name
    origins: dict = field(default_factory=dict)
    derived: dict = field(default_factory=dict)  # mask name -> tuple of Comparison
    define: list = field(default_factory=list)  # of Condition (expressions untyped)
    until: list = field(default_factory=list)  # of Condition (expressions untyped)
    values: dict = field(default_factory=dict)  # columns the engine reads as python values
    atoms: list = field(default_factory=list)  # of MeasureAtom (expressions untyped)
    measures: list = field(default_factory=list)  # (name, Spark expression over atom columns)
    lookahead: int = 0
    prefix: str = "__mr"  # of the columns the rewrite adds: no input column starts with it
    streaming: bool = False  # no window functions on a stream: the engine evaluates PREV / NEXT
    # the input is built in the UDTF (a LAYER's union in one pass, ``one_pass``): every
    # expression over columns is the engine's, each column a value (nothing is ``computed``)
    engine: bool = False
    bounded: bool = False  # a window's frame (R020) bounds PREV / NEXT: the engine evaluates them

    def atom_name(self, k: int) -> str:
        return f"{self.prefix}_a{k}"

    @property
    def masks(self) -> list:
        """The mask columns the conditions read, sorted."""
        return sorted({c.mask for c in self.define + self.until if c.mask is not None})

    # ---- precomputed columns ------------------------------------------------------------
    def column_for(self, spark_expr: exp.Expression, origin=None) -> str:
        """Name of an input column holding ``spark_expr`` (an input column is used as is)."""
        if isinstance(spark_expr, exp.Column) and not spark_expr.table:
            return spark_expr.name
        sql = to_spark_sql(spark_expr)
        if sql not in self.computed_sql:
            self.computed_sql[sql] = name = f"{self.prefix}_c{len(self.computed)}"
            self.computed[name] = spark_expr
            self.origins[name] = origin
        return self.computed_sql[sql]

    def derived_mask(self, comparisons: tuple) -> str:
        """Name of the mask the UDTF derives from ``comparisons`` (their AND; NULL = false)."""
        for name, existing in self.derived.items():
            if existing == comparisons:
                return name
        name = f"{self.prefix}_d{len(self.derived)}"
        self.derived[name] = comparisons
        return name

    def value_column(self, spark_expr: exp.Expression, origin=None) -> str:
        name = self.column_for(spark_expr, origin)
        self.values[name] = None
        return name


def plan(analysis: Analysis, column_types: dict | None = None, streaming: bool = False,
         engine: bool = False) -> Plan:
    """``column_types``: Spark type (simpleString) of each input column, when known;
    ``streaming``: for a streaming input (every precomputed column reads only its own row);
    ``engine``: the engine evaluates every expression over columns (``Plan.engine``; what it
    cannot still becomes a ``computed`` column)."""
    clause = analysis.clause
    result = Plan(analysis, column_types or {}, prefix=column_prefix(analysis.input_columns), streaming=streaming,
                  engine=engine)
    result.bounded = _bounded(result)
    for definition in clause.definitions:
        rules.check(definition.condition, analysis, define=True)
        if definition.until is not None:
            rules.check(definition.until, analysis, define=True)
    for measure in clause.measures:
        rules.check(measure.this, analysis, define=False)
    for name, definition in analysis.definitions.items():
        var = analysis.var_names.index(name)
        planner = _Planner(result, defining=var)
        result.define.append(Condition(var, *planner.condition(definition.condition)))
        if definition.until is not None:
            planner = _Planner(result, defining=var, until=True)
            result.until.append(Condition(var, *planner.condition(definition.until)))
    for measure in clause.measures:
        planner = _Planner(result, defining=None)
        result.measures.append((measure.name, planner.measure(measure.this.copy())))
    if analysis.rows in (RowsMode.ALL_WITH_UNMATCHED, RowsMode.WINDOW) and result.measures:
        # every measure of a row that belongs to no match is NULL, whatever its expression
        matched = _Planner(result, defining=None).add_atom(MeasureAtom(Atom(ir.MatchNumber(), True)))
        result.measures = [(name, exp.case().when(exp.not_(matched.copy().is_(exp.null())), e))
                           for name, e in result.measures]
    return result


class _Planner:
    """Plans one DEFINE condition (``defining`` = its variable) or one measure."""

    def __init__(self, plan_: Plan, defining: int | None, until: bool = False):
        self.plan = plan_
        self.analysis = plan_.analysis
        self.defining = defining
        self.until = until  # an UNTIL condition: the current row is not mapped

    # ---- variables ------------------------------------------------------------------------
    def variable_set(self, identifier, node) -> tuple | None:
        """The variable indexes ``identifier`` names (None for no identifier: every row)."""
        if identifier is None:
            return None
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

    def labels(self, node) -> tuple | None:
        """The variable set the columns and classifiers in ``node`` name (``rules`` checked that
        there is at most one); None when they name none."""
        for n in rules._columns_and_classifiers(node):
            identifier = n.this if isinstance(n, ClassifierCall) else n.args.get("table")
            if identifier is not None:
                return self.variable_set(identifier, n)
        return None

    # ---- row-level expressions ---------------------------------------------------------
    def row_level(self, node) -> exp.Expression | None:
        """Spark expression for ``node`` if it depends on the current row only, else None."""
        if isinstance(node, (exp.Subquery, exp.Select)):
            return node.copy()  # uncorrelated: Spark evaluates it ("rules" refused a nested MATCH_RECOGNIZE)
        if self._engine_owned(node):
            return None
        if isinstance(node, (ClassifierCall, MatchNumberCall, Running, Final, First, Last)) or \
                rules.aggregate_call(node) is not None:
            return None
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                return None
            if node.table:
                if self.defining is None or not self.current_row_in(self.variable_set(node.args["table"], node)):
                    return None
            return exp.column(analysis_column(self.analysis, node), quoted=True)
        if isinstance(node, (Prev, Next)):
            if self.defining is None or self.plan.streaming or self.plan.bounded or _has_match_state(node.this):
                return None
            qualifier = self.labels(node.this)
            if qualifier is not None and not self.current_row_in(qualifier):
                return None
            arg = self.row_level(node.this)
            if arg is None:
                return None
            fn = "LAG" if isinstance(node, Prev) else "LEAD"
            return exp.Window(this=exp.Anonymous(this=fn, expressions=[arg, exp.Literal.number(self.offset(node))]),
                              partition_by=[exp.column(analysis_column(self.analysis, p), quoted=True)
                                            for p in self.analysis.clause.partition_by],
                              order=exp.Order(expressions=[self.order_key(o) for o in self.analysis.clause.order]))
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

    @staticmethod
    def offset(node: Navigation) -> int:
        return int(node.offset.name) if node.offset is not None else (1 if node.physical else 0)

    # ---- navigation -------------------------------------------------------------------
    def navigation(self, node):
        """(variable set, NavMode, logical offset, physical offset, argument) of a navigation,
        including PREV/NEXT([RUNNING | FINAL] FIRST/LAST(...))."""
        physical = 0
        if isinstance(node, (Prev, Next)):
            physical = -self.offset(node) if isinstance(node, Prev) else self.offset(node)
            node = unwrap(node.this)
        if isinstance(node, (First, Last)):
            logical = self.offset(node)
            mode = ir.NavMode.FIRST if isinstance(node, First) else ir.NavMode.LAST
            node = node.this
        else:
            mode, logical = ir.NavMode.LAST, 0
        return self.labels(node), mode, logical, physical, node

    def argument_column(self, node) -> exp.Expression:
        """A navigation's or aggregate's row-level argument as Spark SQL (qualifiers stripped)."""
        return self.unqualified(node)

    # ---- DEFINE -------------------------------------------------------------------------
    def condition(self, node):
        """(mask column | None, state expression | None) for a DEFINE / UNTIL condition."""
        row_parts, state_parts = [], []
        for conjunct in _conjuncts(node):
            spark = None if self.plan.engine else self.row_level(conjunct)
            if spark is not None:
                row_parts.append((spark, conjunct))
            else:
                state_parts.append(self.state(conjunct))
        mask = None
        comparisons = self.lagged_comparisons([spark for spark, _ in row_parts])
        if comparisons:
            mask = self.plan.derived_mask(comparisons)
        elif row_parts:
            cond = row_parts[0][0] if len(row_parts) == 1 else exp.and_(*(spark for spark, _ in row_parts))
            # AND TRUE: Spark checks that the condition is boolean, folds its failing constants as
            # it would in the condition alone (not under a conditional such as COALESCE), and the
            # UDTF reads NULL as false
            mask = self.plan.column_for(exp.And(this=exp.paren(cond), expression=exp.true()),
                                        origin=row_parts[0][1] if len(row_parts) == 1 else node)
        state = None
        for part in state_parts:
            state = part if state is None else ir.Call("and", (state, part), (), None, position(node) or (None, None))
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

    def computed(self, spark, node):
        """The engine expression for ``node`` whose Spark column is ``spark``: its literal, or
        the value Spark computes per row; None for a constant the engine evaluates itself (as
        lazily as Spark, ``optimize``)."""
        lit = _literal(spark)
        if lit is not None:
            return lit
        span = day_time(unparen(spark)) if self.plan.engine else None
        if span is not None:
            return ir.Lit(*span)
        if _constant(spark) or self._engine_owned(spark):
            return None
        return ir.Col(self.plan.value_column(spark, node), None)

    def _engine_owned(self, node) -> bool:
        """In an ``engine`` plan, is ``node`` an expression over columns (the engine's, not a
        column Spark computes)?"""
        return self.plan.engine and not isinstance(node, exp.Column) and node.find(exp.Column) is not None

    def state(self, node):
        """Engine expression (untyped) for a DEFINE sub-expression that reads the match state."""
        if isinstance(node, exp.Collate) and calls.call(node) is not None:
            return self.operator(node, self.state)  # its explicit collation stays visible to the engine
        spark = self.row_level(node)
        if spark is not None and node.find(exp.Collate) is not None and \
                not isinstance(node, (exp.Subquery, exp.Select, Navigation)):
            # a row's call over an explicit COLLATE: the engine's, as a column Spark computed
            # would be only implicitly collated (Spark carries the explicit strength up)
            return self.operator(node, self.state)
        value = self.computed(spark, node) if spark is not None else None
        if value is not None:
            return value
        # match state, or a constant the engine evaluates as lazily as Spark (``optimize``)
        if isinstance(node, (exp.Paren, Running)):
            return self.state(node.this)
        if isinstance(node, MatchNumberCall):
            if self.analysis.semantics is Semantics.FLINKCEP or self.until:
                raise error("MATCH_NUMBER() is not allowed in DEFINE with SEMANTICS FLINKCEP or in UNTIL "
                            "(a run's match number is known only when it is reported)", node)
            return ir.MatchNumber()
        if isinstance(node, ClassifierCall):
            members = self.variable_set(node.this, node)
            if self.current_row_in(members):
                return ir.Lit(self.analysis.var_names[self.defining], "string")
            return ir.Classifier(members)
        if isinstance(node, exp.Column):
            members = self.variable_set(node.args["table"], node)
            return ir.Nav(self.plan.value_column(self.unqualified(node), node), None, members)
        if isinstance(node, Navigation):
            return self.navigation_state(node)
        if rules.aggregate_call(node) is not None:
            return self.aggregate(node, self.row_expr)
        return self.operator(node, self.state)

    def navigation_state(self, node):
        members, mode, logical, physical, arg = self.navigation(node)
        if isinstance(unparen(arg), ClassifierCall):  # the row landed on, while it is in the run so far
            return ir.Classifier(members, mode, logical, physical)
        if _has_match_state(arg):
            raise error(f"{rules.construct(node)} in DEFINE: the argument may combine columns, but "
                        "CLASSIFIER() and MATCH_NUMBER() only as the whole argument", node)
        if physical > 0:
            self.plan.lookahead = max(self.plan.lookahead, physical)
        column = self.plan.value_column(self.argument_column(arg), node)
        return ir.Nav(column, None, members, mode, logical, physical)

    def aggregate(self, node, row_expr):
        """``ir.Agg`` (untyped) of an aggregate call; its arguments and FILTER are row
        expressions (``row_expr``) evaluated at each aggregated row."""
        name, args, distinct, filter_, ignore_nulls = rules.aggregate_call(node)
        if name == "count" and not args:
            # count() without an argument: only under spark.sql.legacy.allowParameterlessCount
            # (Spark's analysis refuses it otherwise), where Spark's Count of no children counts
            # no row, as count(NULL) does (not count(*), Trino's reading)
            args = [exp.null()]
        star = len(args) == 1 and (isinstance(args[0], exp.Star) or
                                   (isinstance(args[0], exp.Column) and isinstance(args[0].this, exp.Star)))
        if star:
            members = self.variable_set(args[0].args.get("table"), args[0]) if isinstance(args[0], exp.Column) \
                else None
            args = []
        else:
            members = self.labels(exp.Tuple(expressions=[a.copy() for a in args] +
                                            ([filter_.copy()] if filter_ is not None else [])))
        ignored = (ir.Lit(True, "boolean"),) if ignore_nulls else ()  # Spark's first(x, true)
        return ir.Agg(name, members, tuple(_collated_literal(a) or row_expr(a) for a in args) + ignored, (), distinct,
                      row_expr(filter_) if filter_ is not None else None, None, position(node) or (None, None))

    def row_expr(self, node):
        """An aggregate's argument at one of its rows: Spark computes it when it reads only that
        row's columns; CLASSIFIER() (the row's own variable) and MATCH_NUMBER() are the engine's."""
        spark = None if _has_match_state(node) else self.argument_column(node)
        value = self.computed(spark, node) if spark is not None else None
        if value is not None:
            return value
        if isinstance(node, exp.Paren):
            return self.row_expr(node.this)
        if isinstance(node, ClassifierCall):
            return ir.Classifier(None)
        if isinstance(node, MatchNumberCall):
            return ir.MatchNumber()
        return self.operator(node, self.row_expr)

    def operator(self, node, child):
        """A Spark operator or function over match state, with ``child`` planning operands."""
        at = position(node) or (None, None)
        if isinstance(node, (exp.Cast, exp.TryCast)):
            # sqlglot reads Spark's CAST as a TryCast; only TRY_CAST sets "safe"
            return ir.Cast(child(node.this), None, (_cast_target(node),), at, bool(node.args.get("safe")))
        if isinstance(node, exp.Case) and node.this is not None:
            # CASE v WHEN w THEN r ...: Spark's parser makes it CASE WHEN v = w THEN r ...
            value = node.this
            parts = [p for branch in node.args["ifs"] for p in (
                ir.Call("=", (child(value), child(branch.this)), (), None, position(branch.this) or at),
                child(branch.args["true"]))]
            default = node.args.get("default")
            return ir.Call("case", tuple(parts) + ((child(default),) if default is not None else ()), (), None, at)
        call = calls.call(node)
        if call is None:
            raise error(f"{rules.construct(node)} over match state (aggregates, FIRST/LAST, CLASSIFIER or "
                        "variable columns) is not supported; the engine evaluates Spark's operators, "
                        "comparisons, CASE, IF, COALESCE, NULLIF, IN, BETWEEN, CAST, LIKE and the arithmetic, "
                        "rounding, string, date and array functions of docs/spark-semantics.md", node)
        fn, operands = call
        return ir.Call(fn, tuple(child(o) for o in operands), (), None, at)

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
        if isinstance(node, (exp.Subquery, exp.Select)):
            return node
        if isinstance(node, MatchNumberCall):
            return self.add_atom(MeasureAtom(Atom(ir.MatchNumber(), True)))
        if isinstance(node, ClassifierCall):
            return self.add_atom(MeasureAtom(Atom(ir.Classifier(self.variable_set(node.this, node)), final)))
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            members = self.variable_set(node.args.get("table"), node)
            column = analysis_column(self.analysis, node)
            return self.add_atom(MeasureAtom(Atom(ir.Nav(None, None, members), final), column))
        if isinstance(node, Navigation):
            return self.measure_navigation(node, final)
        if rules.aggregate_call(node) is not None:
            agg = self.aggregate(node, self.row_expr)
            return self.add_atom(MeasureAtom(Atom(agg, final), sql=self.aggregate_sql(node)))
        return None

    def measure_navigation(self, node, final: bool):
        """A navigation in MEASURES: the values of the row it lands on, as atoms; CLASSIFIER()
        in its argument is that row's variable."""
        inner = unparen(node.this) if isinstance(node, (Prev, Next)) else None
        if isinstance(inner, (Running, Final)):  # NEXT(FINAL LAST(x), 1)
            final = isinstance(inner, Final)
        members, mode, logical, physical, arg = self.navigation(node)
        if physical > 0:  # a match is reported once the rows its NEXT reads are there
            self.plan.lookahead = max(self.plan.lookahead, physical)
        if not _has_match_state(arg):
            column = self.plan.column_for(self.argument_column(arg), node)
            return self.add_atom(MeasureAtom(Atom(ir.Nav(None, None, members, mode, logical, physical), final),
                                             column))

        def at_row(n):
            if isinstance(n, ClassifierCall):
                return self.add_atom(MeasureAtom(Atom(ir.Classifier(members, mode, logical, physical), final)))
            if isinstance(n, MatchNumberCall):
                return self.add_atom(MeasureAtom(Atom(ir.MatchNumber(), True)))
            if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
                column = analysis_column(self.analysis, n)
                return self.add_atom(MeasureAtom(Atom(ir.Nav(None, None, members, mode, logical, physical),
                                                      final), column))
            return n

        return arg.copy().transform(at_row)

    def aggregate_sql(self, node) -> exp.Expression:
        """``node`` with its arguments over the computed input columns (CLASSIFIER and
        MATCH_NUMBER as typed NULLs): Spark types it like the aggregate measure."""
        def stand_in(n):
            if isinstance(n, ClassifierCall):
                return exp.cast(exp.null(), "STRING")
            if isinstance(n, MatchNumberCall):
                return exp.cast(exp.null(), "BIGINT")
            if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
                return exp.column(analysis_column(self.analysis, n), quoted=True)
            if isinstance(n, exp.Column):
                return exp.Star()
            return n
        sql = node.copy()
        for n in sql.find_all(exp.Anonymous):
            if n.name.lower() in calls.TRINO_AGGREGATES:  # Trino's name
                n.set("this", calls.TRINO_AGGREGATES[n.name.lower()])
        return sql.transform(stand_in)

    def add_atom(self, atom: MeasureAtom) -> exp.Column:
        for k, existing in enumerate(self.plan.atoms):
            if existing.atom == atom.atom and existing.column == atom.column:
                return exp.column(self.plan.atom_name(k), quoted=True)
        self.plan.atoms.append(atom)
        return exp.column(self.plan.atom_name(len(self.plan.atoms) - 1), quoted=True)


def engine_row(plan_: Plan, node: exp.Expression):
    """``node``, a Spark expression over plain columns (a measure over its atom columns), as an
    engine row expression (untyped); the planner's error where the engine lacks a function."""
    planner = _Planner(plan_, defining=None)

    def convert(n):
        lit = _literal(n)
        if lit is not None:
            return lit
        span = day_time(n)
        if span is not None:  # (the engine's constant, as in a condition: ``_Planner.computed``)
            return ir.Lit(*span)
        if isinstance(n, exp.Paren):
            return convert(n.this)
        if isinstance(n, exp.Column) and not n.table and not isinstance(n.this, exp.Star):
            return ir.Col(n.name, None)
        return planner.operator(n, convert)
    return convert(node)


def _bounded(plan_: Plan) -> bool:
    """Must the engine evaluate PREV and NEXT within a window's frame (R020)?  Not when the
    frame reaches the partition's end, each row's match starts at the row itself (INITIAL) and
    every PREV of DEFINE reads a row of the match (at most as many rows back as the defined
    variable has rows before it): Spark's LAG / LEAD give the same values then."""
    analysis = plan_.analysis
    frame = analysis.frame
    if frame is None:
        return False
    if frame.end is not None or frame.seek:
        return True
    before = rows_before(analysis.pattern)
    for name, definition in analysis.definitions.items():
        planner = _Planner(plan_, defining=analysis.var_names.index(name))
        for condition in (definition.condition, definition.until):
            for node in condition.find_all(Prev) if condition is not None else ():
                argument = unwrap(node.this)
                if isinstance(argument, ClassifierCall):  # (the match's own rows: NULL before it either way)
                    continue
                if argument.find(First, Last) is not None or not planner.current_row_in(planner.labels(argument)) \
                        or planner.offset(node) > before.get(name, 0):
                    return True
    return False


def column_prefix(columns) -> str:
    """``__mr`` (or ``__mr1``, ...): a prefix for the rewrite's own columns that no input column
    (case-insensitively) starts with."""
    taken = [c.lower() for c in columns]
    prefix, k = "__mr", 0
    while any(c.startswith(prefix) for c in taken):
        k += 1
        prefix = f"__mr{k}"
    return prefix


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


def _has_match_state(node) -> bool:
    """Does ``node`` read the match state (outside the subqueries in it)?"""
    return any(isinstance(n, (Navigation, ClassifierCall, MatchNumberCall)) or rules.aggregate_call(n) is not None
               for n in node.walk(bfs=False, prune=lambda n: isinstance(n, (exp.Subquery, exp.Select))))


def _literal(node) -> ir.Lit | None:
    """``node`` as a literal with Spark's type, if Spark's grammar reads it as one: ``0.1`` is
    decimal(1,1), ``1e3`` double, ``-1`` INT and ``-1.5`` decimal(2,1) (a leading minus belongs
    to a numeric literal), ``10Y`` TINYINT, ``INTERVAL '1' MONTH`` 1 (months), ``X'2c'`` BINARY
    ...; else None."""
    if isinstance(node, exp.Boolean):
        return ir.Lit(node.this, "boolean")
    if isinstance(node, exp.Null):
        return ir.Lit(None, "void")
    if isinstance(node, exp.HexString):  # X'2c': its hex digits (Spark pads an odd count with a leading 0)
        return ir.Lit(node.this if len(node.this) % 2 == 0 else "0" + node.this, "binary")
    months = year_month(node)
    if months is not None:
        return ir.Lit(*months)
    sign = ""
    if isinstance(node, exp.Neg) and isinstance(node.this, (exp.Literal, exp.TryCast)):
        sign, node = "-", node.this
    if isinstance(node, exp.TryCast) and node.args.get("_type") is not None and isinstance(node.this, exp.Literal):
        suffix = {"BIGINT": "L", "TINYINT": "Y", "SMALLINT": "S", "DOUBLE": "D", "FLOAT": "F"}.get(
            node.to.this.name, "BD" if node.to.is_type("decimal") else None)
        return None if suffix is None else _typed(literal(sign + node.this.name + suffix))
    if not isinstance(node, exp.Literal):
        return None
    if node.is_string:
        return None if sign else ir.Lit(node.name, "string")
    return _typed(literal(sign + node.name))


def _collated_literal(node) -> ir.Lit | None:
    """An aggregate's argument ``'s' COLLATE c`` (a string literal, c UTF8_BINARY, UTF8_LCASE or
    an _RTRIM one) as the constant Spark folds it to (listagg's delimiter), typed STRING COLLATE
    c; else None.  (Only there: in a call, an explicit collation would take precedence over the
    implicit ones, which ``typecheck`` does not model.)"""
    node = unparen(node)
    if not (isinstance(node, exp.Collate) and isinstance(node.this, exp.Literal) and node.this.is_string):
        return None
    name = node.expression.name.upper()
    if collation.key(name) is None:
        return None
    return ir.Lit(node.this.name, "string" if collation.binary(name) else f"string collate {name}")


def _typed(typed) -> ir.Lit:
    value = typed.value
    return ir.Lit(str(value) if typed.type.is_decimal else value, str(typed.type))


def _cast_target(node: exp.Cast) -> str:
    return node.to.sql(dialect="spark").lower().replace(" ", "")


def _constant(node) -> bool:
    """Is ``node`` built of literals, casts and calls the engine evaluates (no column, window,
    subquery or other function)?  The engine then evaluates it, lazily where Spark does."""
    while isinstance(node, exp.Paren):
        node = node.this
    if _literal(node) is not None:
        return True
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return _constant(node.this)
    if isinstance(node, exp.Case) and node.this is not None:
        return all(_constant(n) for n in [node.this, *node.args["ifs"], node.args.get("default")] if n is not None)
    call = calls.call(node)
    return call is not None and all(_constant(o) for o in call[1])
