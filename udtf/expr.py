"""Match-state expressions: the part of DEFINE / MEASURES that Spark cannot precompute.

An expression is a tree of the typed records below (they travel inside the engine plan;
``type`` is a Spark type's ``simpleString``, values are in ``udtf.sparksql.types``'s Python
representation)::

    Lit(value, type)             a literal
    Col(name, type)              a precomputed column at the current row
    Nav(column, type, vars, mode, logical, physical)
                                 ``column`` at the logical-th FIRST/LAST row of variable set
                                 ``vars``, moved ``physical`` rows (PREV < 0 < NEXT); with
                                 ``column`` None: the row index it lands on (or None)
    Classifier(vars, mode, logical, physical)
                                 the variable of such a row (None outside the match)
    MatchNumber()
    Agg(fn, vars, args, arg_types, distinct, filter, type, at)
                                 running aggregate over the rows of vars; ``args`` and
                                 ``filter`` are row expressions (``Col``, ``Lit``, ``Call``,
                                 ``Cast``, ``Classifier(None, ...)`` = the row's own variable,
                                 ``MatchNumber``) evaluated at each aggregated row
    Call(fn, args, arg_types, type, at)
                                 a Spark function or operator (``sparksql.functions``); each
                                 argument already has its type in ``arg_types``
    Cast(arg, source, through, at, safe)
                                 casts of ``arg`` from ``source`` through ``through`` (Spark's
                                 implicit ones, ``sparksql.coercion.Signature.casts``, or the
                                 user's CAST; ``safe``: TRY_CAST, errors give NULL)

``vars`` is a sorted tuple of variable indexes, or None for every row of the match; ``at`` is
the line:column of the construct in the user's SQL (runtime errors name it).

Evaluation runs over *facts*: a tuple of running folds (first/last rows, aggregate states)
that a run carries.  ``FactTable`` lists the folds an expression set needs; ``fold`` advances
them by one row.  Only the folds the conditions need are kept, so a run's facts are exactly the
data that decides its future (the key of Pike-VM thread equivalence).
"""
from __future__ import annotations

from decimal import Decimal
from enum import Enum
from typing import NamedTuple

from .errors import MatchRecognizeError, Pos
from .sparksql import functions, scalar
from .sparksql.aggregates import Fold, aggregate
from .sparksql.coercion import Literal
from .sparksql.errors import SparkError
from .sparksql.types import SqlType
from .wire import record


@record
class NavMode(str, Enum):
    FIRST = "first"
    LAST = "last"


@record
class Lit(NamedTuple):
    value: object
    type: str


@record
class Col(NamedTuple):
    name: str
    type: str


@record
class Nav(NamedTuple):
    column: str | None
    type: str | None
    vars: tuple | None
    mode: NavMode = NavMode.LAST
    logical: int = 0
    physical: int = 0


@record
class Classifier(NamedTuple):
    vars: tuple | None
    mode: NavMode = NavMode.LAST
    logical: int = 0
    physical: int = 0


@record
class MatchNumber(NamedTuple):
    pass


@record
class Agg(NamedTuple):
    fn: str
    vars: tuple | None
    args: tuple
    arg_types: tuple
    distinct: bool
    filter: object
    type: str
    at: Pos = (None, None)


@record
class Call(NamedTuple):
    fn: str
    args: tuple
    arg_types: tuple
    type: str
    at: Pos = (None, None)


@record
class Cast(NamedTuple):
    arg: object
    source: str
    through: tuple  # the types cast to in turn
    at: Pos = (None, None)
    safe: bool = False


def children(expr) -> tuple:
    """The sub-expressions of ``expr`` evaluated in its own context (not an aggregate's rows)."""
    if isinstance(expr, Call):
        return expr.args
    if isinstance(expr, Cast):
        return (expr.arg,)
    return ()


def lookback(expr) -> int:
    """How many rows before the first row of its match ``expr`` may read (PREV offsets: a
    navigation lands at most that far before the row it starts from, which is in the match)."""
    if expr is None:
        return 0
    own = -expr.physical if isinstance(expr, (Nav, Classifier)) else 0
    inner = (*expr.args, expr.filter) if isinstance(expr, Agg) else children(expr)
    return max([own, 0, *(lookback(e) for e in inner)])


def type_of(expr) -> str:
    if isinstance(expr, (Lit, Col, Agg, Call)):
        return expr.type
    if isinstance(expr, Cast):
        return expr.through[-1] if expr.through else expr.source
    if isinstance(expr, Nav):
        return expr.type or "bigint"
    if isinstance(expr, Classifier):
        return "string"
    return "bigint"  # MatchNumber


def literal_value(value, type_: str):
    """A literal's value in the engine's representation, from its wire form (decimals travel
    as text, binaries as hex digits)."""
    if value is not None and type_.startswith("decimal"):
        return Decimal(value)
    if value is not None and type_ == "binary":
        return bytes.fromhex(value)
    return value


# ---- facts -------------------------------------------------------------------------------
class Fact(NamedTuple):
    """A running fold over the rows mapped to ``vars``: ``first`` / ``last`` ((row, var) or
    None), ``firstn`` / ``lastn`` (the first / last ``arg`` + 1 (row, var) pairs), ``agg`` (the
    state of aggregate ``arg``), ``landed`` (``arg`` = (vars, mode, logical, k): the rows of
    ``vars`` FIRST / LAST with that logical offset would pick, each with the variable of the row
    k rows from it (k < 0: before) once that row is in the run, else None; its own ``vars`` is
    None: the landed-on row may be of any variable.  PREV(CLASSIFIER(U), 2) or
    NEXT(FIRST(CLASSIFIER()), 1) in DEFINE)."""
    kind: str
    vars: tuple | None
    arg: object = None


def position_fact(mode: NavMode, vars_, logical: int) -> Fact:
    if logical:
        return Fact(mode.value + "n", vars_, logical)
    return Fact(mode.value, vars_)


def facts_of(expr, out: dict) -> dict:
    """Collect into ``out`` (an ordered dict used as a set) the facts ``expr`` reads."""
    if isinstance(expr, (Nav, Classifier)):
        out[position_fact(expr.mode, expr.vars, expr.logical)] = None
        if isinstance(expr, Classifier) and expr.physical:
            out[Fact("landed", None, (expr.vars, expr.mode, expr.logical, expr.physical))] = None
    elif isinstance(expr, Agg):
        out[Fact("agg", expr.vars, expr)] = None
    for child in children(expr):
        facts_of(child, out)
    return out


class FactTable:
    """The folds a set of expressions reads, and how one row advances them.  ``columns``:
    name -> list of values of the partition (extended in place); ``match_number``: the number
    of the match being built (aggregate arguments may read it); ``ansi`` and ``zone``:
    spark.sql.ansi.enabled and spark.sql.session.timeZone."""

    def __init__(self, facts, columns, var_names, ansi: bool, zone: str = "UTC"):
        self.facts = list(facts)
        self.index = {f: i for i, f in enumerate(self.facts)}
        self.columns = columns
        self.var_names = var_names
        self.ansi = ansi
        self.zone = zone
        self.match_number = None
        updaters, initial = [], []
        for fact in self.facts:
            update, start = self._updater(fact)
            updaters.append(update)
            initial.append(start)
        self._updaters = updaters
        self.initial = tuple(initial)
        # per fact, its update for a row mapped to one of its variables (``folder``): an
        # aggregate's without the membership test
        self._members = [self._aggregate(fact.arg, None)[0] if fact.kind == "agg" else update
                         for fact, update in zip(self.facts, updaters)]

    def _updater(self, fact: Fact):
        kind, vs = fact.kind, fact.vars
        member = (lambda v: True) if vs is None else frozenset(vs).__contains__
        if kind == "first":
            return (lambda old, row, var: (row, var) if old is None and member(var) else old), None
        if kind == "last":
            return (lambda old, row, var: (row, var) if member(var) else old), None
        if kind == "firstn":
            keep = fact.arg + 1
            return (lambda old, row, var: old + ((row, var),) if member(var) and len(old) < keep else old), ()
        if kind == "lastn":
            keep = fact.arg + 1
            return (lambda old, row, var: (old + ((row, var),))[-keep:] if member(var) else old), ()
        if kind == "landed":
            return self._landed(fact.arg), ((), ())
        return self._aggregate(fact.arg, member)

    @staticmethod
    def _landed(arg: tuple):
        """The update of a ``landed`` fact: (the run's last -k + 1 (row, var) when k < 0, the
        picked (row, variable of row + k or None)); a row k > 0 after a picked one fills its
        variable in when it is mapped."""
        vars_, mode, logical, k = arg
        member = (lambda v: True) if vars_ is None else frozenset(vars_).__contains__
        keep, first, back = logical + 1, mode is NavMode.FIRST, max(0, -k) + 1

        def update(old, row, var):
            recent, picked = old
            recent = (recent + ((row, var),))[-back:]
            if k > 0:
                picked = tuple((r, var if r + k == row else v) for r, v in picked)
            if not member(var) or first and len(picked) == keep:
                return recent, picked
            label = next((v for r, v in recent if r == row + k), None)
            return recent, (picked + ((row, label),))[-keep:]

        return update

    def _aggregate(self, agg: Agg, member):
        """(update, initial) of an aggregate over the rows mapped to a variable ``member(var)``
        holds for (None: every row handed to it is one)."""
        fold = fold_of(agg, self.ansi, self.zone)
        args = [compile_row(a, self) for a in agg.args]
        keep = compile_row(agg.filter, self) if agg.filter is not None else None
        step = fold.step
        mapped, member = member is None, member or (lambda v: True)
        reader = _column_cast(agg.args[0]) if keep is None and len(agg.args) == 1 else None
        if reader is not None:  # the common case, without the generic context
            values, convert = self.columns[reader[0]], reader[1]
            if mapped and convert is None:
                def update_mapped(old, row, var):
                    try:
                        return step(old, values[row])
                    except SparkError as e:
                        raise located(e, agg.at) from None

                return update_mapped, fold.initial

            def update_column(old, row, var):
                if not member(var):
                    return old
                try:
                    return step(old, values[row] if convert is None else convert(values[row]))
                except SparkError as e:
                    raise located(e, agg.at) from None

            return update_column, fold.initial
        if keep is None and not args:  # COUNT(*), COUNT(v.*): nothing to read, no error to locate
            if mapped:
                return (lambda old, row, var: step(old)), fold.initial
            return (lambda old, row, var: step(old) if member(var) else old), fold.initial

        def update(old, row, var):
            if not member(var):
                return old
            context = (row, var, self.match_number)
            try:
                if keep is not None and keep(context) is not True:
                    return old
                return step(old, *[a(context) for a in args])
            except SparkError as e:
                raise located(e, agg.at) from None

        return update, fold.initial

    def updater(self, slot: int):
        """(``update(old, row, var) -> new``, initial value) of fact ``slot`` alone."""
        return self._updaters[slot], self.initial[slot]

    def shifted(self, facts: tuple, shift: int) -> tuple:
        """``facts`` with the row indexes they hold moved down by ``shift``."""
        out = []
        move = lambda pairs: tuple((row - shift, var) for row, var in pairs)
        for fact, value in zip(self.facts, facts):
            if fact.kind in ("first", "last"):
                value = None if value is None else (value[0] - shift, value[1])
            elif fact.kind == "landed":
                value = (move(value[0]), move(value[1]))
            elif fact.kind != "agg":
                value = move(value)
            out.append(value)
        return tuple(out)

    def fold(self, facts: tuple, row: int, var: int) -> tuple:
        """Facts after mapping ``row`` to variable ``var``."""
        return tuple(update(old, row, var) for update, old in zip(self._updaters, facts))

    def folder(self, var: int):
        """``fn(facts, row) -> facts`` = ``fold(facts, row, var)``, touching only the folds over
        ``var``."""
        slots = [(i, update) for i, (fact, update) in enumerate(zip(self.facts, self._members))
                 if fact.vars is None or var in fact.vars]
        if not slots:
            return lambda facts, row: facts
        if len(slots) == 1:  # (one fact of several: the tuple rebuilt around it, no list)
            (i, update), last = slots[0], len(self.facts) - 1
            if last == 0:
                return lambda facts, row: (update(facts[0], row, var),)
            if i == 0:
                return lambda facts, row: (update(facts[0], row, var),) + facts[1:]
            if i == last:
                return lambda facts, row: facts[:i] + (update(facts[i], row, var),)
            return lambda facts, row: facts[:i] + (update(facts[i], row, var),) + facts[i + 1:]

        def fold(facts, row):
            out = list(facts)
            for i, update in slots:
                out[i] = update(out[i], row, var)
            return tuple(out)

        return fold


def fold_of(agg: Agg, ansi: bool, zone: str) -> Fold:
    """The fold of a typed aggregate: its constant arguments (``Lit``, or folded from literals)
    as ``Literal`` values, the others as their types."""
    args = []
    for a, t in zip(agg.args, agg.arg_types):
        type_ = SqlType.parse(t)
        constant = isinstance(a, Lit) or (isinstance(a, Cast) and isinstance(a.arg, Lit))
        args.append(Literal(type_, compile_constant(a, ansi, zone)(None)) if constant else type_)
    return aggregate(agg.fn, args, agg.distinct, ansi)


def located(error: SparkError, at: Pos) -> MatchRecognizeError:
    """Spark's runtime error as ours, at the construct's line:column."""
    return MatchRecognizeError(str(error), *at)


# ---- compilation -------------------------------------------------------------------------
class Scope:
    """Where expressions are evaluated: the partition's columns, the rows navigation may land
    on (``bounds() -> (lo, hi)``: the partition's rows, or in a window (R020) the current row's
    frame; elsewhere it yields NULL) and the variable names; ``ansi``, ``zone``: those of the
    fact table."""

    def __init__(self, facts: FactTable, bounds):
        self.facts = facts
        self.columns = facts.columns
        self.var_names = facts.var_names
        self.bounds = bounds
        self.ansi = facts.ansi
        self.zone = facts.zone


def compile_expr(expr, scope: Scope):
    """Return ``fn((row, facts, match_number)) -> value`` for ``expr``: ``row`` is the current
    row, ``facts`` the run's fold tuple *including* the current row."""
    if isinstance(expr, Lit):
        value = literal_value(expr.value, expr.type)
        return lambda ctx: value
    if isinstance(expr, Col):
        values = scope.columns[expr.name]
        return lambda ctx: values[ctx[0]]
    if isinstance(expr, MatchNumber):
        return lambda ctx: ctx[2]
    if isinstance(expr, Nav):
        landing = _landing(expr, scope)
        if expr.column is None:
            return landing
        values = scope.columns[expr.column]
        if not expr.logical and not expr.physical:  # a row of the run: in the partition
            slot = scope.facts.index[position_fact(expr.mode, expr.vars, 0)]

            def own(ctx):
                found = ctx[1][slot]
                return None if found is None else values[found[0]]

            return own

        def nav(ctx):
            target = landing(ctx)
            return None if target is None else values[target]

        return nav
    if isinstance(expr, Classifier):
        return _classifier(expr, scope)
    if isinstance(expr, Agg):
        slot = scope.facts.index[Fact("agg", expr.vars, expr)]
        result = fold_of(expr, scope.ansi, scope.zone).result
        return lambda ctx: result(ctx[1][slot])
    return _compile_common(expr, lambda e: compile_expr(e, scope), scope.ansi, scope.zone)


def compile_row(expr, table: FactTable):
    """``fn((row, var, match_number)) -> value`` for an aggregate's argument at one of its rows
    (``Classifier`` = that row's own variable)."""
    if isinstance(expr, Lit):
        value = literal_value(expr.value, expr.type)
        return lambda ctx: value
    if isinstance(expr, Col):
        values = table.columns[expr.name]
        return lambda ctx: values[ctx[0]]
    if isinstance(expr, MatchNumber):
        return lambda ctx: ctx[2]
    if isinstance(expr, Classifier):
        names = table.var_names
        return lambda ctx: names[ctx[1]]
    return _compile_common(expr, lambda e: compile_row(e, table), table.ansi, table.zone)


def compile_constant(expr, ansi: bool, zone: str):
    """``fn(ctx) -> value`` for an expression of ``Lit``, ``Cast`` and ``Call`` nodes only (a
    constant in session zone ``zone``; errors are ``MatchRecognizeError`` at the failing
    construct)."""
    if isinstance(expr, Lit):
        value = literal_value(expr.value, expr.type)
        return lambda ctx: value
    return _compile_common(expr, lambda e: compile_constant(e, ansi, zone), ansi, zone)


def _column_cast(expr):
    """(column, convert or None) when ``expr`` is a column or a cast of one that cannot fail,
    else None."""
    if isinstance(expr, Col):
        return expr.name, None
    if isinstance(expr, Cast) and not expr.safe and isinstance(expr.arg, Col):
        source, through = SqlType.parse(expr.source), [SqlType.parse(t) for t in expr.through]
        if not scalar.cast_raises(source, through):
            convert = scalar.cast_through(source, through, True)  # (ANSI or not: it cannot fail)
            return expr.arg.name, None if convert is scalar.identity else convert
    return None


def _raises_unlocated(expr) -> bool:
    """May evaluating ``expr`` itself raise a Spark error no node of it locates?  (An
    aggregate's result, unless its fold cannot fail there: ``Fold.result_raises``.)"""
    if not isinstance(expr, Agg):
        return False
    return fold_of(expr, True, "UTC").result_raises


def _compile_common(expr, compile_child, ansi: bool, zone: str):
    # a node's runtime errors are located at it; a node that cannot raise and has no child that
    # raises unlocated (an aggregate's result) needs no handler
    if isinstance(expr, Cast):
        source, through = SqlType.parse(expr.source), [SqlType.parse(t) for t in expr.through]
        if expr.safe:
            convert = scalar.cast(source, through[-1], ansi, try_=True, zone=zone)
        else:
            convert = scalar.cast_through(source, through, ansi, zone)
        arg, at = compile_child(expr.arg), expr.at
        if isinstance(expr.arg, Lit):  # a constant: cast once, unless that fails (then per row)
            try:
                value = convert(arg(None))
            except SparkError:
                pass
            else:
                return lambda ctx: value
        if not _raises_unlocated(expr.arg) and (expr.safe or not scalar.cast_raises(source, through)):
            if convert is scalar.identity:
                return arg
            return lambda ctx: convert(arg(ctx))

        def cast(ctx):
            try:
                return convert(arg(ctx))
            except SparkError as e:
                raise located(e, at) from None

        return cast
    if isinstance(expr, Call):
        arg_types = [SqlType.parse(t) for t in expr.arg_types]
        call = functions.compile_call(expr.fn, arg_types, SqlType.parse(expr.type), ansi,
                                      [compile_child(a) for a in expr.args], zone)
        if not any(_raises_unlocated(a) for a in expr.args) and not functions.lookup(expr.fn).raises(arg_types):
            return call
        at = expr.at

        def apply(ctx):
            try:
                return call(ctx)
            except SparkError as e:
                raise located(e, at) from None

        return apply
    raise MatchRecognizeError(f"unknown expression node {type(expr).__name__}")


def _landing(expr, scope: Scope):
    """``fn(ctx) -> row index`` of a navigation (None outside the partition or when the
    variable set has too few rows)."""
    logical, physical = expr.logical, expr.physical
    bounds = scope.bounds
    slot = scope.facts.index[position_fact(expr.mode, expr.vars, logical)]
    if not logical:
        def nav(ctx):
            found = ctx[1][slot]
            if found is None:
                return None
            target = found[0] + physical
            lo, hi = bounds()
            return target if lo <= target < hi else None

        return nav
    pick = logical if expr.mode is NavMode.FIRST else -1 - logical

    def deep_nav(ctx):
        rows = ctx[1][slot]
        if len(rows) <= logical:
            return None
        target = rows[pick][0] + physical
        lo, hi = bounds()
        return target if lo <= target < hi else None

    return deep_nav


def _classifier(expr: Classifier, scope: Scope):
    """The variable name of the row a navigation lands on, while it is in the run so far."""
    names = scope.var_names
    logical, physical = expr.logical, expr.physical
    slot = scope.facts.index[position_fact(expr.mode, expr.vars, logical)]
    pick = logical if expr.mode is NavMode.FIRST else -1 - logical
    base = (lambda found: found) if not logical else \
        (lambda found: found[pick] if len(found) > logical else None)
    if not physical:
        def label(ctx):
            found = base(ctx[1][slot])
            return None if found is None else names[found[1]]

        return label
    landed = scope.facts.index[Fact("landed", None, (expr.vars, expr.mode, logical, physical))]

    def shifted(ctx):
        picked = ctx[1][landed][1]
        if len(picked) <= logical:
            return None
        var = picked[pick][1]
        return None if var is None else names[var]

    return shifted
