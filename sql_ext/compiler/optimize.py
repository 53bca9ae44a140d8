"""Spark's optimizer rules that decide *whether* parts of an expression run, applied to typed
engine expressions (``udtf.expr``) so that the engine raises and skips exactly what Spark does.

Spark rewrites an analysed expression before it runs (the "Operator Optimization" batch, to a
fixed point); the rules below change which sub-expressions are evaluated, hence which errors
happen, so the engine applies them too, in Spark's order per round:

* ``NullPropagation``: a null-intolerant call with a NULL literal operand is NULL (its other
  operands never run); ``x IS [NOT] NULL`` of a never-NULL ``x`` is a constant;
* ``ConstantFolding``: every column-free sub-expression is evaluated while planning; one that
  fails fails the statement whatever the rows -- unless it sits (at any depth) inside a
  conditional expression (CASE, IF, COALESCE, NULLIF) that is not itself constant: then it is
  left to run lazily;
* ``ReorderAssociativeOperator``: the constants of a chain of integral ``+`` / ``*`` are
  combined into one (``x + 1 + 2`` is ``x + 3``: overflow is decided by the combined value);
* ``BooleanSimplification``: ``e AND false`` is false, ``e OR true`` true, ``e AND true`` /
  ``e OR false`` are ``e`` (``e`` is then not evaluated);
* ``SimplifyConditionals``: branches with a constant condition, and IF / CASE whose values
  are all the same expression, collapse (their conditions are not evaluated);
* ``SimplifyBinaryComparison``: ``e <=> e`` is true, ``e = e`` too when ``e`` is never NULL.

The result has the same type as the input; a constant that fails outside a conditional raises
``MatchRecognizeError`` (Spark's ``[ERROR_CLASS]``) at the construct's line:column.
"""
from __future__ import annotations

from decimal import Decimal

from udtf import expr as ir
from udtf.errors import MatchRecognizeError
from udtf.sparksql.functions import Nullable, lookup
from udtf.sparksql.types import SqlType

_WIRE = (type(None), bool, int, float, str, Decimal)


def optimize(expr, ansi: bool, zone: str):
    """``expr`` (typed) after Spark's rules, to a fixed point (constants folded in session zone
    ``zone``)."""
    failed: set = set()  # constants that failed inside a conditional (Spark tags them and moves on)
    for _ in range(100):
        before = expr
        expr = _bottom_up(expr, _null_propagation)
        expr = _fold(expr, False, ansi, zone, failed)
        expr = _reorder(expr, ansi, zone)
        expr = _bottom_up(expr, _boolean_simplification)
        expr = _bottom_up(expr, _simplify_conditionals)
        expr = _bottom_up(expr, _simplify_comparison)
        if expr == before:
            break
    return expr


# ---- traversal -----------------------------------------------------------------------------
def _with_children(expr, f):
    """``expr`` with ``f`` applied to its operands (an aggregate's row expressions too)."""
    if isinstance(expr, ir.Call):
        return expr._replace(args=tuple(f(a) for a in expr.args))
    if isinstance(expr, ir.Cast):
        return expr._replace(arg=f(expr.arg))
    if isinstance(expr, ir.Agg):
        return expr._replace(args=tuple(f(a) for a in expr.args),
                             filter=None if expr.filter is None else f(expr.filter))
    return expr


def _bottom_up(expr, rule):
    return rule(_with_children(expr, lambda e: _bottom_up(e, rule)))


def _same(a, b) -> bool:
    """Spark's ``semanticEquals``: the same expression, wherever it was written."""
    return _canonical(a) == _canonical(b)


def _canonical(expr):
    expr = _with_children(expr, _canonical)
    return expr._replace(at=(None, None)) if isinstance(expr, (ir.Call, ir.Cast, ir.Agg)) else expr


# ---- ConstantFolding -----------------------------------------------------------------------
def _foldable(expr) -> bool:
    if isinstance(expr, ir.Lit):
        return True
    if isinstance(expr, (ir.Call, ir.Cast)):
        return all(_foldable(a) for a in ir.children(expr))
    return False


def _fold(expr, branch: bool, ansi: bool, zone: str, failed: set):
    if isinstance(expr, ir.Lit):
        return expr
    if isinstance(expr, ir.Agg):  # Spark evaluates aggregate arguments apart, outside any CASE
        return _with_children(expr, lambda e: _fold(e, False, ansi, zone, failed))
    if _foldable(expr):
        if expr in failed:
            return expr
        try:
            value = ir.compile_constant(expr, ansi, zone)(None)
        except MatchRecognizeError:
            if not branch:
                raise
            failed.add(expr)
            return expr
        return _literal(value, ir.type_of(expr)) or expr
    inside = branch or (isinstance(expr, ir.Call) and lookup(expr.fn).conditional)
    return _with_children(expr, lambda e: _fold(e, inside, ansi, zone, failed))


def _literal(value, type_: str) -> ir.Lit | None:
    """A ``Lit`` of an evaluated value, if it can travel to the workers."""
    if not isinstance(value, _WIRE):
        return None
    return ir.Lit(str(value) if isinstance(value, Decimal) else value, type_)


# ---- NullPropagation ----------------------------------------------------------------------
def _null(expr) -> bool:
    return isinstance(expr, ir.Lit) and expr.value is None


def _null_propagation(expr):
    if not isinstance(expr, ir.Call):
        return expr
    if lookup(expr.fn).null_intolerant and any(_null(a) for a in expr.args):
        return ir.Lit(None, expr.type)
    if expr.fn in ("is_null", "is_not_null") and not _nullable(expr.args[0]):
        return ir.Lit(expr.fn == "is_not_null", "boolean")
    return expr


def _nullable(expr) -> bool:
    """Spark's ``nullable`` (values read from the match state always are)."""
    if isinstance(expr, ir.Lit):
        return expr.value is None
    if isinstance(expr, ir.Cast):
        steps = (expr.source, *expr.through)
        return expr.safe or _nullable(expr.arg) or not all(_never_null_cast(SqlType.parse(a), SqlType.parse(b))
                                                           for a, b in zip(steps, steps[1:]))
    if not isinstance(expr, ir.Call):
        return True
    args, nullable = expr.args, lookup(expr.fn).nullable
    if nullable in (Nullable.NEVER, Nullable.ALWAYS):
        return nullable is Nullable.ALWAYS
    if nullable is Nullable.ALL:
        return all(_nullable(a) for a in args)
    if nullable is Nullable.BRANCHES:  # CASE (conditions and values, an odd count: an ELSE) or IF
        values = list(args[1::2]) if len(args) % 2 == 0 else list(args[1:-1:2]) + [args[-1]]
        return len(args) % 2 == 0 or any(_nullable(v) for v in values)
    return any(_nullable(a) for a in args)


def _never_null_cast(source: SqlType, target: SqlType) -> bool:
    """Casts that never make a NULL of a value (others may: Spark's ``Cast.forceNullable``)."""
    return source == target or source.is_integral and (target.is_integral or target.is_floating)


# ---- ReorderAssociativeOperator ----------------------------------------------------------
def _reorder(expr, ansi: bool, zone: str):
    if isinstance(expr, ir.Call) and expr.fn in ("+", "*") and SqlType.parse(expr.type).is_integral:
        operands = _flatten(expr, expr.fn)
        constants = [o for o in operands if _foldable(o)]
        if len(constants) > 1:
            others = [_reorder(o, ansi, zone) for o in operands if not _foldable(o)]
            combined = _associate(expr, constants)
            value = _literal(ir.compile_constant(combined, ansi, zone)(None), expr.type) or combined
            return _associate(expr, others + [value]) if others else value
        return expr._replace(args=tuple(_reorder(a, ansi, zone) for a in expr.args))
    return _with_children(expr, lambda e: _reorder(e, ansi, zone))


def _flatten(expr, fn: str) -> list:
    if isinstance(expr, ir.Call) and expr.fn == fn:
        return [o for a in expr.args for o in _flatten(a, fn)]
    return [expr]


def _associate(template: ir.Call, operands: list):
    """``operands`` combined left to right with ``template``'s operator and types."""
    out = operands[0]
    for o in operands[1:]:
        out = template._replace(args=(out, o))
    return out


# ---- BooleanSimplification and SimplifyConditionals (the rules that drop evaluation) -------
def _is(expr, value) -> bool:
    return isinstance(expr, ir.Lit) and expr.value is value and expr.type == "boolean"


def _boolean_simplification(expr):
    if not (isinstance(expr, ir.Call) and expr.fn in ("and", "or")):
        return expr
    a, b = expr.args
    absorbing, neutral = (False, True) if expr.fn == "and" else (True, False)
    if _is(a, neutral):
        return b
    if _is(b, neutral):
        return a
    if _is(a, absorbing) or _is(b, absorbing):
        return ir.Lit(absorbing, "boolean")
    return expr


def _simplify_conditionals(expr):
    if not isinstance(expr, ir.Call):
        return expr
    if expr.fn == "if" and len(expr.args) == 3:
        cond, yes, no = expr.args
        if _is(cond, True):
            return yes
        if _is(cond, False) or _null(cond):
            return no
        if _same(yes, no):
            return yes
        return expr
    if expr.fn == "case":
        args = expr.args
        pairs = [(args[i], args[i + 1]) for i in range(0, len(args) - 1, 2)]
        default = args[-1] if len(args) % 2 else ir.Lit(None, expr.type)
        kept = [(c, v) for c, v in pairs if not (_is(c, False) or _null(c))]
        if kept and _is(kept[0][0], True):
            return kept[0][1]
        if all(_same(v, default) for _, v in kept):
            return default
        if len(kept) < len(pairs):
            return expr._replace(args=tuple(x for p in kept for x in p) + ((default,) if len(args) % 2 else ()))
    return expr


def _simplify_comparison(expr):
    if isinstance(expr, ir.Call) and len(expr.args) == 2 and _same(*expr.args):
        if expr.fn == "<=>" or expr.fn in ("=", "<=", ">=") and not _nullable(expr.args[0]):
            return ir.Lit(True, "boolean")
        if expr.fn in ("<", ">", "<>") and not _nullable(expr.args[0]):
            return ir.Lit(False, "boolean")
    return expr
