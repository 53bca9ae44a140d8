"""Which Spark function a sqlglot node calls: sql_ext's one mapping from sqlglot's nodes to the
names of the function registry (``udtf.sparksql.functions``), for the calls the engine
evaluates over match state.  Everything else about a function is its registry record.

* ``NODES``: a node whose operands are its own children (``a + b``, ``ABS(x)``, ...);
* ``SHAPED``: nodes that lay their operands out otherwise, or stand for different functions
  by their arguments (``x IS NULL``, ``IN``, ``CASE``, ``LOG``, ``LTRIM``, ...);
* ``AS_WRITTEN``: functions sqlglot parses as ``exp.Anonymous``, or would rewrite into other
  functions (``log10(x)`` into ``LOG(10, x)``): the parser keeps those as written
  (``sql_ext.compiler.parse``), for the argument counts given (None: any); ``AGGREGATES_AS_WRITTEN``
  the same for aggregates whose sqlglot node loses what Spark reads; ``TRINO_AGGREGATES``:
  Trino's spellings of Spark aggregates.
"""
from __future__ import annotations

from sqlglot import exp

from udtf.sparksql import collation

NODES = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.IntDiv: "div",
         exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
         exp.NullSafeEQ: "<=>", exp.NullSafeNEQ: "is_distinct_from", exp.And: "and", exp.Or: "or",
         exp.Not: "not", exp.Neg: "negative", exp.DPipe: "concat", exp.Coalesce: "coalesce",
         exp.Nullif: "nullif", exp.Greatest: "greatest", exp.Least: "least", exp.Abs: "abs",
         exp.Round: "round", exp.Floor: "floor", exp.Ceil: "ceil", exp.Sqrt: "sqrt", exp.Exp: "exp",
         exp.Ln: "ln", exp.Pow: "pow", exp.Sign: "sign", exp.Concat: "concat", exp.Length: "length",
         exp.Upper: "upper", exp.Lower: "lower", exp.Substring: "substring",
         exp.IsNan: "isnan", exp.Degrees: "degrees", exp.ArrayMax: "array_max", exp.ArrayMin: "array_min",
         exp.ArraySize: "size", exp.ArrayContains: "array_contains", exp.ArrayPosition: "array_position",
         exp.Array: "array", exp.Nanvl: "nanvl", exp.Contains: "contains", exp.StartsWith: "startswith",
         exp.EndsWith: "endswith", exp.Replace: "replace", exp.Left: "left", exp.Right: "right",
         }


def _is_null(node):
    return [node.this] if isinstance(node.expression, exp.Null) else None


def _is_not_null(node):
    inner = node.this
    return [inner.this] if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null) else None


def _case(node):
    if node.this is not None:  # CASE v WHEN ...: the planner makes it CASE WHEN v = w ...
        return None
    default = node.args.get("default")
    return [p for branch in node.args.get("ifs") or [] for p in (branch.this, branch.args["true"])] + \
        ([default] if default is not None else [])


def _trim(*positions):
    return lambda node: [node.this] if node.args.get("position") in positions and node.expression is None else None


def _unescaped(node):
    """The LIKE / ILIKE of ``node`` (sqlglot wraps one with ESCAPE in an Escape)."""
    return node.this if isinstance(node, exp.Escape) else node


def _negated(node) -> bool:
    like = _unescaped(node)
    return isinstance(like, (exp.Like, exp.ILike)) and bool(like.args.get("negate"))


def _quantified(node) -> bool:
    return isinstance(_unescaped(node).expression, (exp.Any, exp.All))


def _not_like(node):
    """``s NOT LIKE p [ESCAPE e]`` (sqlglot: a negated Like, maybe inside an Escape) is Spark's
    ``NOT (s LIKE p [ESCAPE e])``: the operand is that LIKE, without the negation."""
    if not _negated(node) or _quantified(node):
        return None
    inner = node.copy()
    _unescaped(inner).set("negate", None)
    return [inner]


def _like(kind):
    """The operands of ``s LIKE p`` / ``s LIKE p ESCAPE 'e'`` (``LIKE ANY / ALL`` is another call)."""
    def operands(node):
        like = _unescaped(node)
        if not isinstance(like, kind) or _negated(node) or isinstance(like.expression, (exp.Any, exp.All)):
            return None
        return [like.this, like.expression] + ([node.expression] if isinstance(node, exp.Escape) else [])
    return operands


def _like_quantified(kind, quantifier, negated: bool):
    """The operands of ``s [NOT] LIKE ANY / SOME / ALL ('p', ...)`` whose patterns are all string
    literals: Spark's parser makes those one LikeAny / LikeAll / NotLikeAny / NotLikeAll (every
    pattern compiled before matching); other patterns are an OR / AND of LIKEs, not mapped."""
    def operands(node):
        if type(node) is not kind or bool(node.args.get("negate")) != negated or \
                not isinstance(node.expression, quantifier):
            return None
        inner = node.expression.this
        patterns = inner.expressions if isinstance(inner, exp.Tuple) else [inner.this] \
            if isinstance(inner, exp.Paren) else []
        if not patterns or not all(isinstance(p, exp.Literal) and p.is_string for p in patterns):
            return None
        return [node.this, *patterns]
    return operands


def _element_at(safe: bool):
    """``element_at(a, i)`` / ``try_element_at(a, i)``: sqlglot's 1-based Bracket (``a[i]`` is
    another function, 0-based)."""
    return lambda node: [node.this, *node.expressions] if node.args.get("offset") == 1 and \
        bool(node.args.get("safe")) == safe and len(node.expressions) == 1 else None


def _subscript(node):
    """``a[i]`` / ``m[k]``: sqlglot's Bracket without an offset (``element_at`` sets 1)."""
    return [node.this, *node.expressions] if not node.args.get("offset") and not node.args.get("safe") and \
        len(node.expressions) == 1 else None


def _pad(node):
    return [node.this, node.expression] + [p for p in [node.args.get("fill_pattern")] if p is not None]


# (node, name, operands(node) or None where the node is not that call), tried in order
SHAPED = (
    (exp.Is, "is_null", _is_null),
    (exp.Not, "is_not_null", _is_not_null),
    (exp.In, "in", lambda node: [node.this, *node.expressions] if node.expressions and not node.args.get("query")
     else None),
    (exp.Between, "between", lambda node: [node.this, node.args["low"], node.args["high"]]),
    (exp.Case, "case", _case),
    (exp.If, "if", lambda node: [node.this, node.args["true"], *[f for f in [node.args.get("false")] if f is not None]]),
    (exp.Log, "ln", lambda node: [node.this] if node.expression is None else None),
    (exp.Log, "logarithm", lambda node: [node.this, node.expression] if node.expression is not None else None),
    (exp.Trim, "trim", _trim(None, "BOTH")),
    (exp.Trim, "ltrim", _trim("LEADING")),
    (exp.Trim, "rtrim", _trim("TRAILING")),
    *((kind, f"{'not_' if negated else ''}{name}_{quantifier.__name__.lower()}",
       _like_quantified(kind, quantifier, negated))
      for kind, name in ((exp.Like, "like"), (exp.ILike, "ilike")) for quantifier in (exp.Any, exp.All)
      for negated in (False, True)),
    ((exp.Like, exp.ILike, exp.Escape), "not", _not_like),
    ((exp.Like, exp.Escape), "like", _like(exp.Like)),
    ((exp.ILike, exp.Escape), "ilike", _like(exp.ILike)),
    (exp.ArrayToString, "array_join",
     lambda node: [node.this, node.expression] + [n for n in [node.args.get("null")] if n is not None]),
    (exp.Bracket, "element_at", _element_at(False)),
    (exp.Bracket, "try_element_at", _element_at(True)),
    (exp.Bracket, "subscript", _subscript),
    (exp.StrPosition, "instr", lambda node: [node.this, node.args["substr"]]
     if node.args.get("position") is None and node.args.get("occurrence") is None else None),
    (exp.StrPosition, "locate", lambda node: [node.args["substr"], node.this, node.args["position"]]
     if node.args.get("position") is not None and node.args.get("occurrence") is None else None),
    (exp.Pad, "lpad", lambda node: _pad(node) if node.args.get("is_left") else None),
    (exp.Pad, "rpad", lambda node: None if node.args.get("is_left") else _pad(node)),
    # (``s COLLATE c``: Spark's Collate, explicit strength; ICU collations stay Spark's, not the engine's)
    (exp.Collate, "collate", lambda node: [node.this, exp.Literal.string(node.expression.name.upper())]
     if collation.key(node.expression.name) is not None else None),
)

AS_WRITTEN = {"cardinality": None, "array_size": None, "bround": None, "pmod": None, "positive": None, "log10": None, "date_add": (2,), "dateadd": (2,),
              "date_sub": (2,), "datediff": (2,), "date_diff": (2,), "get": (2,)}

# aggregates (``udtf.sparksql.aggregates``, found by name) sqlglot parses into nodes that drop an
# argument (percentile's frequency, first / last's ignoreNulls), refuse one (first_value(x, true))
# or cannot hold DISTINCT over two (corr, covar_*, regr_*): kept as written
AGGREGATES_AS_WRITTEN = frozenset((
    "percentile", "corr", "covar_pop", "covar_samp", "first", "last", "first_value", "last_value", "any_value",
    "regr_avgx", "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy", "regr_count", "regr_r2", "regr_slope",
    "regr_intercept"))

# Trino's names for aggregates that Spark spells differently
TRINO_AGGREGATES = {"arbitrary": "any_value", "approx_distinct": "approx_count_distinct"}

NAMES = frozenset(NODES.values()) | {name for _, name, _ in SHAPED} | frozenset(AS_WRITTEN)


def call(node) -> tuple[str, list] | None:
    """(registry name, operands) of the call ``node`` is, or None for any other node."""
    for kind, name, operands in SHAPED:
        if isinstance(node, kind):
            found = operands(node)
            if found is not None:
                return name, found
    name = NODES.get(type(node))
    if name is not None:
        operands = [node.this, node.expression] if isinstance(node, exp.Binary) else \
            [v for v in node.args.values() if isinstance(v, exp.Expression)] + list(node.expressions)
        return name, [o for o in operands if o is not None]
    if isinstance(node, exp.Anonymous) and node.name.lower() in AS_WRITTEN:
        counts = AS_WRITTEN[node.name.lower()]
        if counts is None or len(node.expressions) in counts:
            return node.name.lower(), list(node.expressions)
    return None
