"""What may stand where in MEASURES and DEFINE: the expression rules of SQL:2016 row pattern
recognition, as Trino's analyzer enforces them, checked on the user's tree before planning.

* navigation (PREV/NEXT/FIRST/LAST): an integer literal offset >= 0; an argument with a column
  or CLASSIFIER(); one pattern variable (or none) across the argument's columns and
  classifiers; FIRST/LAST may stand directly inside PREV/NEXT, nothing else nests; no
  aggregate inside;
* aggregates: a function Spark knows as an aggregate (``udtf.sparksql.aggregates``: the
  registered ones; the ones it refuses, with their reason); no aggregate or navigation
  inside; one pattern variable (or none) across the arguments; ``v.*`` only as COUNT's sole
  argument; IGNORE NULLS where Spark takes it (FIRST, LAST, ANY_VALUE); WITHIN GROUP (ORDER BY
  one key) where the aggregate sorts by it (``Aggregate.ordered``), and only there;
* RUNNING / FINAL modify FIRST, LAST and aggregates (also written in front of a PREV / NEXT
  that wraps FIRST / LAST, as Oracle allows); FINAL is not allowed in DEFINE;
* no window functions (OVER) and no MATCH_RECOGNIZE inside.

Errors name the construct at its line:column in the user's SQL.
"""
from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import ErrorLevel

from udtf.sparksql import aggregates

from .analyze import Analysis, error, variable_name
from .calls import TRINO_AGGREGATES
from .parse import (ClassifierCall, Final, First, Last, MatchNumberCall, MatchRecognizeClause, Navigation, Running, unparen,
                    unwrap)

MAX_OFFSET = 2_147_483_647


def _unwrapped(node):
    """(the call, its FILTER condition or None, IGNORE NULLS: True, RESPECT NULLS: False, else None)."""
    filter_ = ignore_nulls = None
    if isinstance(node, exp.Filter):
        node, filter_ = node.this, node.expression.this
    if isinstance(node, (exp.IgnoreNulls, exp.RespectNulls)):
        node, ignore_nulls = node.this, isinstance(node, exp.IgnoreNulls)
    return node, filter_, ignore_nulls


def _orderings(node) -> list:
    """The ``exp.Ordered`` keys of a WITHIN GROUP (ORDER BY ...)."""
    return list(node.expression.expressions) if isinstance(node.expression, exp.Order) else []


def aggregate_call(node):
    """(name, arguments, distinct, filter, ignore_nulls) when ``node`` is an aggregate call
    (possibly with FILTER / IGNORE NULLS), else None; ``name`` is Spark's, lower-case.  An
    ordered aggregate's WITHIN GROUP (ORDER BY key [DESC]) gives its arguments as Spark's
    analyzer does: the key first, DESC last (a BOOLEAN literal)."""
    node, filter_, ignore_nulls = _unwrapped(node)
    if isinstance(node, exp.Anonymous):
        name = TRINO_AGGREGATES.get(node.name.lower(), node.name.lower())
        if name not in aggregates.NAMES and name not in aggregates.REFUSED:
            return None
        args = list(node.expressions)
    elif isinstance(node, exp.Any) and not isinstance(unparen(node.this), (exp.Subquery, exp.Select)):
        name, args = "any", [unparen(node.this)]  # Spark's any(x) is bool_or; x = ANY (subquery) is not
    elif isinstance(node, exp.WithinGroup):
        name, orderings = node.this.sql_name().lower(), _orderings(node)
        if name in aggregates.NAMES and aggregates.lookup(name).ordered and len(orderings) == 1:
            key = orderings[0]
            args = [key.this, *(v for v in node.this.args.values() if isinstance(v, exp.Expression)),
                    exp.Boolean(this=bool(key.args.get("desc")))]
        else:
            args = [node]  # (refused by the checker)
    elif isinstance(node, exp.AggFunc) and not isinstance(node, Navigation):
        # (IGNORE: sqlglot would warn of arguments its Spark generator leaves out, max_by's k;
        # min / max of several arguments, which it writes as LEAST / GREATEST, keep their names)
        name = node.key if isinstance(node, (exp.Min, exp.Max)) else \
            node.copy().sql(dialect="spark", unsupported_level=ErrorLevel.IGNORE).split("(", 1)[0].strip().lower()
        args = [v for k, v in node.args.items() if isinstance(v, exp.Expression)]
        args += [e for k, v in node.args.items() if isinstance(v, list) for e in v if isinstance(e, exp.Expression)]
    else:
        return None
    distinct = False
    if args and isinstance(args[0], exp.Distinct):
        distinct, args = True, list(args[0].expressions) + args[1:]
    return name, args, distinct, filter_, bool(ignore_nulls)


def construct(node) -> str:
    """The name of ``node`` as the user would call it in a message."""
    if isinstance(node, Navigation):
        return node.sql_keyword
    call = aggregate_call(node)
    if call is not None:
        return call[0].upper()
    if isinstance(node, ClassifierCall):
        return "CLASSIFIER"
    if isinstance(node, MatchNumberCall):
        return "MATCH_NUMBER"
    if isinstance(node, exp.Anonymous):
        return node.name.upper()
    if isinstance(node, exp.Func):
        return node.sql_name()
    return type(node).__name__.upper()


def check(node, analysis: Analysis, define: bool):
    """Raise the first rule ``node`` (a measure, or a DEFINE / UNTIL condition) breaks."""
    _Checker(analysis, define).visit(node, None, None)


class _Checker:
    def __init__(self, analysis: Analysis, define: bool):
        self.analysis = analysis
        self.define = define

    def visit(self, node, navigation, aggregate):
        """``navigation`` / ``aggregate``: the innermost enclosing one, if any."""
        if isinstance(node, exp.Window):
            raise error("window functions (OVER) are not allowed in MEASURES or DEFINE; navigate with "
                        "PREV/NEXT/FIRST/LAST and aggregate over pattern variables", node)
        if isinstance(node, (exp.Subquery, exp.Select)):
            nested = node.find(MatchRecognizeClause)
            if nested is not None:
                raise error("a MATCH_RECOGNIZE cannot stand inside MEASURES or DEFINE", nested)
            return  # plain Spark SQL, evaluated by Spark
        if isinstance(node, (Running, Final)):
            self.modifier(node)
        elif isinstance(node, Navigation):
            self.navigation(node, navigation, aggregate)
            navigation = node
        elif aggregate_call(node) is not None:
            self.aggregate(node, navigation, aggregate)
            _, args, _, filter_, _ = aggregate_call(node)
            for child in args + ([filter_] if filter_ is not None else []):
                if not (isinstance(child, exp.Column) and isinstance(child.this, exp.Star)):
                    self.visit(child, navigation, node)
            return
        elif isinstance(node, exp.Column) and isinstance(node.this, exp.Star) and node.table:
            raise error("v.* is only allowed as the only argument of COUNT", node)
        elif isinstance(node, exp.Column) and node.table:
            self.variable(node.args["table"], node)
        elif isinstance(node, ClassifierCall) and node.this is not None:
            self.variable(node.this, node)
        for child in node.iter_expressions():
            self.visit(child, navigation, aggregate)

    def modifier(self, node):
        keyword = "RUNNING" if isinstance(node, Running) else "FINAL"
        if self.define and isinstance(node, Final):
            raise error("FINAL is not allowed in DEFINE (conditions see the match as it grows)", node)
        target = node.this
        if isinstance(target, exp.Paren):
            return  # applies to the FIRST / LAST / aggregates inside
        if isinstance(target, (First, Last)) or aggregate_call(target) is not None:
            return
        if isinstance(target, Navigation) and isinstance(unparen(target.this), (First, Last)):
            return  # FINAL NEXT(LAST(x)): the modifier of the logical navigation inside
        raise error(f"{keyword} applies to FIRST, LAST and aggregates, not to {construct(target)}", node)

    def navigation(self, node: Navigation, outer: Navigation | None, aggregate):
        name = node.sql_keyword
        if aggregate is not None:
            raise error(f"{construct(aggregate)}: nested {name} is not allowed in its argument", node)
        if outer is not None:
            if isinstance(outer, (First, Last)) or node.physical:
                raise error(f"{outer.sql_keyword}: nested {name} is not allowed in its argument", node)
            if unwrap(outer.this) is not node:
                raise error(f"{outer.sql_keyword}: a nested {name} must be its whole first argument "
                            f"(e.g. {outer.sql_keyword}({name}(A.price), 2))", node)
        offset = node.offset
        if offset is not None:
            if not isinstance(offset, exp.Literal) or offset.is_string or not offset.name.isdigit():
                raise error(f"{name}: the offset must be a non-negative integer literal", offset)
            if int(offset.name) > MAX_OFFSET:
                raise error(f"{name}: the offset must not exceed {MAX_OFFSET}", offset)
        argument = node.this
        if not any(True for _ in _columns_and_classifiers(argument)):
            raise error(f"{name}: the argument must reference a column, e.g. {name}(A.price)", node)
        labels = self.labels(node, list(_columns_and_classifiers(argument)))
        if len(labels) > 1:
            raise error(f"{name}: all column references in the argument must be qualified by the same "
                        f"pattern variable, found {', '.join(sorted(str(v) for v in labels))}", node)

    def aggregate(self, node, navigation, outer):
        name, args, _, filter_, ignore_nulls = aggregate_call(node)
        if name not in aggregates.NAMES:
            reason = aggregates.REFUSED.get(name, "Spark has no aggregate of that name")
            raise error(f"aggregate {name.upper()} is not supported in MATCH_RECOGNIZE: {reason}", node)
        call = _unwrapped(node)[0]
        if aggregates.lookup(name).ordered:
            if not isinstance(call, exp.WithinGroup):
                raise error(f"{name.upper()}: WITHIN GROUP (ORDER BY ...) is required", node)
            if len(_orderings(call)) != 1:
                raise error(f"{name.upper()}: WITHIN GROUP takes one ORDER BY key", node)
        elif any(isinstance(a, (exp.WithinGroup, exp.Order)) for a in args):
            raise error(f"{name.upper()}: WITHIN GROUP (ORDER BY ...) is not supported in MATCH_RECOGNIZE", node)
        if name in ("max_by", "min_by") and len(args) == 3:
            raise error(f"{name.upper()}(x, y, k): Spark's k-element form is not supported in MATCH_RECOGNIZE (the "
                        f"order of its ties is that of Spark's heap); {name}(x, y) and array_agg are", node)
        if ignore_nulls and not any(p.name == "ignoreNulls" for p in aggregates.lookup(name).params):
            raise error(f"{name.upper()}: IGNORE NULLS is not supported (Spark takes it for FIRST, LAST and "
                        "ANY_VALUE)", node)
        if navigation is not None:
            raise error(f"{navigation.sql_keyword}: nested {name.upper()} is not allowed in its argument", node)
        if outer is not None:
            raise error(f"{construct(outer)}: nested {name.upper()} is not allowed in its argument", node)
        stars = [a for a in args if isinstance(a, exp.Star) or (isinstance(a, exp.Column) and isinstance(a.this, exp.Star))]
        if stars and (name != "count" or len(args) != 1):
            raise error(f"{name.upper()}: * and v.* are only allowed as the only argument of COUNT", stars[0])
        if stars and stars[0].args.get("table"):
            self.variable(stars[0].args["table"], stars[0])
            return
        found = [n for a in args + ([filter_] if filter_ is not None else []) for n in _columns_and_classifiers(a)]
        labels = self.labels(node, found)
        if len(labels) > 1:
            raise error(f"{name.upper()}: all column references in the argument must be qualified by the same "
                        f"pattern variable, found {', '.join(sorted(str(v) for v in labels))}", node)

    def labels(self, context, nodes) -> set:
        """The pattern variables (names; None = unqualified) the columns and classifiers name."""
        labels = set()
        for n in nodes:
            identifier = n.this if isinstance(n, ClassifierCall) else n.args.get("table")
            if identifier is None:
                labels.add(None)
            else:
                labels.add(self.variable(identifier, n))
        if len(labels) > 1 and None in labels:
            labels.discard(None)
            labels.add("(none)")
        return labels

    def variable(self, identifier, node) -> str:
        name = variable_name(identifier)
        if self.analysis.variable_set(name) is None:
            raise error(f"{name} is not a pattern variable or subset", node)
        return name


def _columns_and_classifiers(node):
    """Column references and CLASSIFIERs in ``node``, not inside subqueries."""
    for n in node.walk(bfs=False, prune=lambda n: isinstance(n, (exp.Subquery, exp.Select))):
        if isinstance(n, ClassifierCall) or (isinstance(n, exp.Column) and not isinstance(n.this, exp.Star)):
            yield n
