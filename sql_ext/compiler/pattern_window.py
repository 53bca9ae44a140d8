"""Row pattern recognition in a window (SQL:2016 feature R020, as Trino 476 has it): a SELECT
whose windows carry PATTERN / DEFINE / MEASURES (``window_syntax``) becomes plain Spark SQL,
with one pass of the MATCH_RECOGNIZE engine per such window.

The window's clauses make a MATCH_RECOGNIZE clause (``rewrite.rewrite`` plans and lowers it
with the window's ``Frame``: ``RowsMode.WINDOW``, one output row per input row carrying the
input's columns and the measures of the row's match, NULL where it has none).  The SELECT
reads the rows of its relation (after WHERE) through these UDTFs, one after the other::

    SELECT <items: `m OVER w` -> m's column, `f(...) OVER w` -> f's column>
    FROM (<the relation's rows through the windows' UDTFs>) AS <the relation's name>
    [WINDOW <the other windows>] [ORDER BY ...] [LIMIT ...]

A function over the window (an aggregate, FIRST_VALUE, any Spark window function that takes
a frame) is Spark's own, over the rows of the row's match: the UDTF then also emits, after the
rows themselves (frame row 0), the rows of each match (frame rows 1, 2, ..., with the owner's
partition ordinal), so that ``f(...) OVER (PARTITION BY <keys>, <owner> ORDER BY <frame row>
ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)`` at frame row 0 covers exactly them (no
row for a row without a match: an empty frame, as in Trino); the other rows are then dropped.
Only the measures and functions the SELECT reads are computed.

The rules, at the user's line:column, are Trino's analyzer's (its messages): PATTERN and
DEFINE required, a frame ``ROWS BETWEEN CURRENT ROW AND {CURRENT ROW | n FOLLOWING |
UNBOUNDED FOLLOWING}``, no anchors, no MATCH_NUMBER(), measures read only through their
window, no ranking or offset function (RANK, LAG, ...) over it; and sparkcep's own: one
relation in FROM, no GROUP BY / aggregation in the SELECT, standard semantics, no streams.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from sqlglot import exp

from udtf.errors import MatchRecognizeError
from udtf.pattern import Anchor, parse_pattern, walk
from udtf.plan import Frame

from . import lower, rules
from .analyze import error
from .catalog import Catalog
from .lower import quote
from .parse import MatchNumberCall, MatchRecognizeClause, Verbatim, to_spark_sql
from .plan import column_prefix
from .spark_errors import checked, culprit
from .window_syntax import PatternWindow, is_measure_call

# window functions that ignore the frame: Trino refuses them over a frame, as Spark does
RANKING = (exp.Rank, exp.DenseRank, exp.RowNumber, exp.PercentRank, exp.CumeDist, exp.Ntile, exp.Lag, exp.Lead)
_SCOPES = (exp.Query, Verbatim)  # nodes holding a scope of their own


class WindowPass(NamedTuple):
    """How ``rewrite.rewrite`` lowers a window's clause: the window's ``frame``, the ``WITH``
    prefix of the CTEs its SELECT sees, the ``fields`` of its input, the output columns the
    SELECT reads (``demand``, lower-cased: see ``lower.lower``)."""
    frame: Frame
    ctes: str
    fields: tuple
    demand: frozenset


@dataclass
class _Window:
    """A window with pattern recognition and the calls over it in the SELECT."""
    spec: PatternWindow
    frame: Frame
    calls: list = field(default_factory=list)


def window_clauses(select: exp.Select) -> list:
    """The pattern recognition of each window with it that ``select`` writes, as a
    MATCH_RECOGNIZE clause of copies of the user's nodes (for ``syntax.check``)."""
    specs = [w for w in select.args.get("windows") or [] if isinstance(w, PatternWindow)]
    specs += [n for n in _own(select) if isinstance(n, PatternWindow) and n.arg_key != "windows"]
    clauses = []
    for spec in specs:
        pattern = spec.row_pattern
        clause = MatchRecognizeClause(
            partition_by=[k.copy() for k in spec.args.get("partition_by") or []],
            order=[o.copy() for o in (spec.args["order"].expressions if spec.args.get("order") else [])],
            measures=[m.copy() for m in pattern.measures], within=_copy(pattern, "within"),
            define=[d.copy() for d in pattern.definitions] or None)
        clause.meta.update(pattern.meta)
        clauses.append(clause)
    return clauses


def holds_pattern_window(node) -> bool:
    """Is ``node`` a SELECT with a window with pattern recognition, or a measure call?"""
    return isinstance(node, exp.Select) and any(isinstance(n, PatternWindow) or is_measure_call(n) for n in _own(node))


def rewrite_select(select: exp.Select, catalog: Catalog, rewrite_clause, ctes: str) -> tuple[str, list]:
    """(the Spark SQL replacing ``select``'s own text, [(clause, lower.Lowered)] of its pattern
    windows); ``rewrite_clause``: ``rewrite.rewrite``; ``ctes``: the ``WITH`` prefix of the
    CTEs the SELECT sees.  The UDTFs are registered in ``catalog``."""
    windows = _windows(select)
    if getattr(catalog, "streaming", False):
        raise error("a window with pattern recognition cannot run on a stream yet (use MATCH_RECOGNIZE, or "
                    "run the query on a batch input)", windows[0].spec.row_pattern if windows else select)
    return _Rewrite(select, catalog, rewrite_clause, ctes).run(windows)


class _Rewrite:
    """The rewrite of one SELECT: its relation through each window in turn (``current``), the
    calls replaced by the columns computing them."""

    def __init__(self, select: exp.Select, catalog: Catalog, rewrite_clause, ctes: str):
        self.select, self.catalog, self.rewrite_clause, self.ctes = select, catalog, rewrite_clause, ctes
        self.relation, self.alias = _relation(select)
        self.schema = lambda sql: catalog.schema(ctes + sql)
        where = select.args.get("where")
        self.current = f"(SELECT * FROM {to_spark_sql(self.relation)}" + \
            (f" WHERE {to_spark_sql(where.this)}" if where is not None else "") + f") AS {quote(self.alias)}"
        self.base = checked(self.schema, f"SELECT * FROM {self.current}", lambda: culprit(
            self.schema, [(f"SELECT * FROM {to_spark_sql(self.relation)}", self.relation)], where or self.relation))
        self.fields = self.base  # of ``current``
        self.prefix = column_prefix([f.name for f in self.base])  # of the columns this rewrite adds
        self.read = _read(select, self.relation, where)
        self.needed: set = set()  # the added columns the statement reads (lower case)
        self.replaced: list = []  # (call, the column replacing it)

    def run(self, windows: list) -> tuple[str, list]:
        select, done = self.select, []
        calls = {id(call) for window in windows for call in window.calls}
        for item in select.expressions:  # named as written, once its calls are columns
            if not isinstance(item, exp.Alias) and any(id(n) in calls for n in item.walk()):
                named = exp.alias_(exp.null(), to_spark_sql(item), quoted=True)
                item.replace(named)
                named.set("this", item)
        for i, window in enumerate(windows):
            done.append(self.through(window, i, last=i == len(windows) - 1))
        for call, name in self.replaced:
            call.replace(exp.column(name, quoted=True))
        remaining = [w for w in select.args.get("windows") or [] if not isinstance(w, PatternWindow)]
        select.set("windows", remaining or None)
        select.set("from_", exp.From(this=Verbatim(this=self.current)))
        select.set("where", None)
        select.set("expressions", [e for item in select.expressions for e in _expanded(item, self.alias, self.base)])
        out = select.copy()
        out.set("with_", None)
        text = to_spark_sql(out)
        if select.find_ancestor(exp.Query) is None:  # a query of its own: Spark's errors at its items
            checked(self.schema, text, lambda: culprit(self.schema, (
                (f"SELECT {to_spark_sql(item)} FROM {self.current}", item) for item in select.expressions), select))
        return text, done

    def through(self, window: _Window, i: int, last: bool) -> tuple:
        """(clause, lowered) of ``window``, ``current`` read through its UDTF (and its columns
        typed, for the next window unless ``last``)."""
        spec, pattern, alias = window.spec, window.spec.row_pattern, self.alias
        computed = []  # (name, user node) of the PARTITION BY / ORDER BY keys that are no column

        def key(node):
            if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star) and not node.args.get("db") and \
                    (not node.table or node.table.lower() == alias.lower()):
                column = node.copy()
                column.set("table", None)
                return column
            name = f"{self.prefix}_w{i}_k{len(computed)}"
            computed.append((name, node))
            return exp.column(name, quoted=True)

        keys = [key(node) for node in spec.args.get("partition_by") or []]
        order = []
        for ordered in (spec.args["order"].expressions if spec.args.get("order") else []):
            copy = ordered.copy()
            copy.set("this", key(ordered.this))
            order.append(copy)
        if computed:
            added = ", ".join(f"{to_spark_sql(node)} AS {quote(name)}" for name, node in computed)
            parts = [(f"SELECT {to_spark_sql(node)} FROM {self.current}", node) for _, node in computed]
            self.current = f"(SELECT *, {added} FROM {self.current}) AS {quote(alias)}"
            self.fields = checked(self.schema, f"SELECT * FROM {self.current}",
                                  lambda: culprit(self.schema, parts, spec))
        prefix = column_prefix([f.name for f in self.fields])  # the clause's plan's (``plan.Plan.prefix``)
        functions = [call for call in window.calls if not is_measure_call(call)]
        measures = {m.name.lower(): k for k, m in enumerate(pattern.measures)}
        for call in window.calls:
            if is_measure_call(call):
                self.column(call, lower.measure_column(prefix, measures[call.this.name.lower()]))
        demand = set(self.needed) | (self.read if self.read is not None else {f.name.lower() for f in self.fields})
        if functions:
            demand |= {lower.owner_column(prefix), lower.frame_row_column(prefix)} | {c.name.lower() for c in keys}
        clause = MatchRecognizeClause(
            this=spec.copy(), partition_by=keys, order=order, measures=[m.copy() for m in pattern.measures],
            after=_copy(pattern, "after"), semantics=_copy(pattern, "semantics"), pattern=_copy(pattern, "pattern"),
            within=_copy(pattern, "within"), subsets=[s.copy() for s in pattern.subsets] or None,
            define=[d.copy() for d in pattern.definitions] or None)
        lowered = self.rewrite_clause(clause, self.catalog, self.current, f" AS {quote(alias)}",
                                      WindowPass(window.frame, self.ctes, self.fields, frozenset(demand)))
        assert lowered.prefix == prefix, (lowered.prefix, prefix)
        self.current = self.framed(functions, i, lowered) if functions else lowered.text
        if not last:
            self.fields = checked(self.schema, f"SELECT * FROM {self.current}", lambda: spec)
        return clause, lowered

    def framed(self, functions: list, i: int, lowered) -> str:
        """The window's UDTF output with each function over the rows of each row's match as a
        column, and only the rows themselves (frame row 0)."""
        owner, slot = lower.owner_column(lowered.prefix), lower.frame_row_column(lowered.prefix)
        inner, alias = lowered.text, quote(self.alias)
        keys = ", ".join(quote(k) for k in (*lowered.plan.partition, owner))
        over = f"OVER (PARTITION BY {keys} ORDER BY {quote(slot)} ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)"
        columns: dict = {}  # the function's text -> its column
        for call in functions:
            text = to_spark_sql(call.this)
            self.column(call, columns.setdefault(text, f"{self.prefix}_w{i}_f{len(columns)}"))
        computed = ", ".join(f"{text} {over} AS {quote(name)}" for text, name in columns.items())
        framed = f"(SELECT *, {computed} FROM {inner}) AS {alias}"
        fields = checked(self.schema, f"SELECT * FROM {framed}", lambda: culprit(self.schema, (
            (f"SELECT {to_spark_sql(call.this)} {over} FROM {inner}", call) for call in functions), functions[0]))
        kept = ", ".join(quote(f.name) for f in fields if f.name not in (owner, slot))
        return f"(SELECT {kept} FROM {framed} WHERE {quote(slot)} = 0) AS {alias}"

    def column(self, call, name: str):
        """``call`` is computed by the column ``name``."""
        self.replaced.append((call, name))
        self.needed.add(name.lower())


# ---- the windows ------------------------------------------------------------------------------
def _own(select):
    """The nodes of ``select``'s own scope (not those of the queries inside it)."""
    return select.walk(prune=lambda n: n is not select and isinstance(n, _SCOPES))


def _windows(select) -> list:
    """The windows with pattern recognition the SELECT calls, checked, in order of first call
    (every one written is checked)."""
    named = {w.this.name.lower(): w for w in select.args.get("windows") or []}
    found: dict = {}
    for spec in named.values():
        if isinstance(spec, PatternWindow):
            found[id(spec)] = _Window(spec, _checked_frame(spec))
    used: dict = {}
    for node in _own(select):
        if not isinstance(node, exp.Window) or node.arg_key == "windows":
            continue
        if isinstance(node, PatternWindow):
            target = node
            found.setdefault(id(node), _Window(node, _checked_frame(node)))
        else:
            by_name = node.args.get("alias") is not None and not any(
                node.args.get(k) for k in ("partition_by", "order", "spec"))
            target = named.get(node.alias.lower()) if by_name else None
            if not isinstance(target, PatternWindow):
                if is_measure_call(node):
                    raise error(f"Measure {node.this.name} is not defined in the corresponding window", node)
                continue
        window = found[id(target)]
        _check_call(node, window.spec, select)
        window.calls.append(node)
        used[id(target)] = window
    return list(used.values())


def _checked_frame(spec: PatternWindow) -> Frame:
    """The frame of a window with pattern recognition, after Trino's analyzer's checks."""
    pattern = spec.row_pattern
    nested = next((n for key in ("partition_by", "order", "spec", "pattern") for v in _values(spec, key)
                   for n in v.find_all(exp.Window)), None)
    if nested is not None:
        raise error("Cannot nest window functions or row pattern measures inside window specification", nested)
    if spec.args.get("alias") is not None:
        raise error("a window with pattern recognition cannot refine another window (name it in the WINDOW "
                    "clause with its PARTITION BY and ORDER BY)", spec.args["alias"])
    if pattern.args.get("pattern") is None:
        search = pattern.args.get("search")
        for node, message in ((pattern if pattern.measures else None, "Row pattern measures require PATTERN clause"),
                              (pattern.args.get("after"), "AFTER MATCH SKIP clause requires PATTERN clause"),
                              (search, f"{search.name if search else ''} modifier requires PATTERN clause"),
                              (next(iter(pattern.subsets), None), "Union variable definitions require PATTERN clause"),
                              (next(iter(pattern.definitions), None),
                               "Primary pattern variable definitions require PATTERN clause")):
            if node is not None:
                raise error(message, node)
        raise error("a window with pattern recognition requires a PATTERN clause", pattern)
    if not pattern.definitions:
        raise error("Pattern recognition requires DEFINE clause", pattern)
    frame = spec.args.get("spec")
    if frame is None:
        raise error("Pattern recognition requires frame specified as BETWEEN CURRENT ROW AND ...", pattern)
    if frame.args["kind"] != "ROWS":
        raise error("Pattern recognition requires ROWS frame type", pattern)
    if frame.args.get("start") != "CURRENT ROW" or not frame.meta.get("between") or frame.args.get("end") is None:
        raise error("Pattern recognition requires frame specified as BETWEEN CURRENT ROW AND ...", pattern)
    end = _frame_end(frame)
    for key, message in (("rows", "ONE ROW PER MATCH and ALL ROWS PER MATCH cannot be used in a window: it gives one "
                                  "row per input row, that row's match (ONE ROW PER MATCH WITH UNMATCHED ROWS); "
                                  "use MATCH_RECOGNIZE for the other output modes"),
                         ("timeout", "WITH TIMEOUT ROWS cannot be used in a window: it gives one row per input row; "
                                     "use MATCH_RECOGNIZE")):
        if pattern.args.get(key) is not None:
            raise error(message, pattern.args[key])
    semantics = pattern.args.get("semantics")
    if semantics is not None and semantics.name == "FLINKCEP":
        raise error("SEMANTICS FLINKCEP cannot be used in a window: it reports every match of a row, a window "
                    "gives one per row (standard semantics); use MATCH_RECOGNIZE", semantics)
    skip = pattern.args.get("after")
    if skip is not None and skip.kind == "NO SKIP":
        raise error("AFTER MATCH NO SKIP cannot be used in a window: it gives one match per row", skip)
    code = pattern.args["pattern"]
    anchor = next((n for n in walk(parse_pattern(code.code, code.origin)) if isinstance(n, Anchor)), None)
    if anchor is not None:
        raise MatchRecognizeError("Anchor pattern syntax is not allowed in window", *anchor.pos)
    for node in (n for part in (*pattern.measures, *pattern.definitions) for n in part.find_all(MatchNumberCall)):
        raise error("MATCH_NUMBER function is not supported in window", node)
    return Frame(end, pattern.seek)


def _values(node, key) -> list:
    value = node.args.get(key)
    return [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, exp.Expression)]


def _frame_end(frame: exp.WindowSpec) -> int | None:
    """Rows after the current one in the frame (None: UNBOUNDED FOLLOWING)."""
    end, side = frame.args.get("end"), frame.args.get("end_side")
    if end == "CURRENT ROW":
        return 0
    if side == "PRECEDING":
        raise error("Window frame end cannot be UNBOUNDED PRECEDING" if end == "UNBOUNDED" else
                    "Window frame starting from CURRENT ROW cannot end with PRECEDING", frame)
    if end == "UNBOUNDED":
        return None
    if isinstance(end, exp.Literal) and not end.is_string and end.name.isdigit():
        return int(end.name)
    raise error("the frame end of a window with pattern recognition must be a non-negative integer literal "
                "(n FOLLOWING)", end if isinstance(end, exp.Expression) else frame)


def _check_call(call, spec: PatternWindow, select) -> None:
    """A measure or window function called over ``spec``, in the SELECT list or ORDER BY."""
    top = call
    while top.parent is not select:
        top = top.parent
    if top.arg_key not in ("expressions", "order"):
        raise error(f"{top.arg_key.rstrip('_').upper()} cannot contain window functions or row pattern measures "
                    f"(only the SELECT list and ORDER BY can)", call)
    if is_measure_call(call):
        name = call.this.name.lower()
        count = sum(m.name.lower() == name for m in spec.row_pattern.measures)
        if count != 1:
            raise error(f"Measure {call.this.name} is "
                        f"{'not defined in the corresponding window' if not count else 'defined more than once'}",
                        call)
        return
    function = call.this
    while isinstance(function, (exp.IgnoreNulls, exp.RespectNulls)):
        function = function.this
    if isinstance(function, RANKING):
        raise error(f"Cannot specify window frame for {function.sql_name().lower()} function", spec.row_pattern)
    nested = next(iter(call.this.find_all(exp.Window)), None)
    if nested is not None:
        raise error("Cannot nest window functions or row pattern measures inside a window function's arguments",
                    nested)


# ---- the relation -----------------------------------------------------------------------------
def _relation(select) -> tuple:
    """(the relation in FROM, its name for the columns' qualifiers)."""
    for key in ("group", "having"):
        if select.args.get(key) is not None:
            raise error(f"a window with pattern recognition in an aggregating SELECT ({key.upper()}) is not "
                        "supported: aggregate in a subquery and apply the window over its rows", select.args[key])
    for node in _own(select):
        if rules.aggregate_call(node) is not None and node.find_ancestor(exp.Window, exp.Select) is select:
            raise error("a window with pattern recognition in an aggregating SELECT (an aggregate outside OVER) is "
                        "not supported: aggregate in a subquery and apply the window over its rows", node)
    from_ = select.args.get("from_")
    if from_ is None:
        raise error("a window with pattern recognition needs a FROM clause", select)
    for key in ("joins", "laterals"):
        if select.args.get(key):
            raise error("a window with pattern recognition over a join or a LATERAL VIEW is not supported: write "
                        "the join in a subquery and apply the window over its rows", select.args[key][0])
    relation = from_.this
    alias = relation.meta.get("alias") if isinstance(relation, Verbatim) else relation.alias_or_name
    return relation, alias or "__mr_input"


def _read(select, relation, where) -> frozenset | None:
    """The lower-cased names the SELECT may read of its relation's columns (every identifier
    outside FROM, WHERE and its WITH), None when a star reads them all."""
    names, skipped = set(), (relation, where, select.args.get("with_"))
    for node in select.walk(prune=lambda n: any(n is s for s in skipped)):
        if any(node is s for s in skipped):
            continue
        if isinstance(node, exp.Star) and not isinstance(node.parent, exp.Count) or \
                isinstance(node, exp.Column) and isinstance(node.this, exp.Star) or isinstance(node, Verbatim):
            return None
        if isinstance(node, exp.Identifier):
            names.add(node.name.lower())
    return frozenset(names)


def _expanded(item, alias: str, base: tuple) -> list:
    """A SELECT item, a star over the relation expanded to its columns (not the added ones)."""
    star = isinstance(item, exp.Star) and not item.args.get("except") and not item.args.get("replace") or \
        isinstance(item, exp.Column) and isinstance(item.this, exp.Star) and item.table.lower() == alias.lower()
    return [exp.column(f.name, quoted=True) for f in base] if star else [item]


def _copy(node, key):
    value = node.args.get(key)
    return value.copy() if value is not None else None

