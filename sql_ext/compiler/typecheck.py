"""Type the engine's expressions as Spark's analyzer would, once Spark has typed the columns
they read: each call gets the argument types Spark casts to (``sparksql.coercion``), with the
implicit casts made explicit (``udtf.expr.Cast``), and its result type; each aggregate the
types of Spark's aggregate function.  What Spark's analyzer would reject is an error at the
construct's line:column."""
from __future__ import annotations

from dataclasses import replace

from udtf import expr as ir
from udtf.errors import MatchRecognizeError
from udtf.sparksql import collation, functions, scalar, zone as zones
from udtf.sparksql.aggregates import aggregate
from udtf.sparksql.coercion import Literal
from udtf.sparksql.errors import SparkAnalysisError
from udtf.sparksql.types import TypeKind, SqlType


def typed(expr, types: dict, ansi: bool):
    """``expr`` with its types resolved; ``types``: column name -> Spark type (simpleString)."""
    if expr is None or isinstance(expr, (ir.Lit, ir.Classifier, ir.MatchNumber)):
        return expr
    if isinstance(expr, ir.Col):
        return expr._replace(type=types[expr.name])
    if isinstance(expr, ir.Nav):
        return expr._replace(type=types[expr.column]) if expr.column is not None else expr
    if isinstance(expr, ir.Agg):
        return _aggregate(expr, types, ansi)
    if isinstance(expr, ir.Cast):
        arg = typed(expr.arg, types, ansi)
        source, target = SqlType.parse(ir.type_of(arg)), SqlType.parse(expr.through[-1])
        try:
            scalar.cast(source, target, ansi, try_=expr.safe)
        except SparkAnalysisError as e:  # a cast Spark's analysis refuses
            raise MatchRecognizeError(f"{'TRY_CAST' if expr.safe else 'CAST'}: {e}", *expr.at) from None
        except (ValueError, NotImplementedError) as e:
            raise MatchRecognizeError(f"cannot cast {source} to {target} over match state ({e})", *expr.at) from None
        return expr._replace(arg=arg, source=str(source))
    return _call(expr, types, ansi)


def zone_checked(expr, ansi: bool, zone: str):
    """``expr`` (typed) unchanged when the engine can evaluate it in session zone ``zone``; when
    this Python cannot load the zone, an error at the first cast or call that reads it."""
    try:
        zones.resolve(zone)
        return expr
    except zones.ZoneError as e:
        problem = e
    for node in _nodes(expr):
        try:
            _build(node, ansi, zone)
        except zones.ZoneError:
            raise MatchRecognizeError(
                f"{_describe(node)} depends on the session time zone {zone!r} "
                f"(spark.sql.session.timeZone), which this Python cannot load ({problem})", *node.at) from None
    return expr


def _build(node, ansi: bool, zone: str) -> None:
    """Build what the worker builds for a cast or call node (raises ``ZoneError`` as it would)."""
    if isinstance(node, ir.Cast):
        scalar.cast_through(SqlType.parse(node.source), [SqlType.parse(t) for t in node.through], ansi, zone)
    elif isinstance(node, ir.Call):
        functions.compile_call(node.fn, [SqlType.parse(t) for t in node.arg_types], SqlType.parse(node.type), ansi,
                            [None] * len(node.args), zone)


def _describe(node) -> str:
    """A cast or call as the error names it: ``CAST(TIMESTAMP AS DATE)``, ``+(TIMESTAMP, ...)``."""
    if isinstance(node, ir.Cast):
        return f"CAST({node.source} AS {node.through[-1]})".upper()
    return f"{node.fn}({', '.join(node.arg_types)})".upper()


def _nodes(expr):
    """``expr`` and every sub-expression, aggregate arguments and filters included."""
    if expr is None:
        return
    yield expr
    inner = (*expr.args, expr.filter) if isinstance(expr, ir.Agg) else ir.children(expr)
    for child in inner:
        yield from _nodes(child)


def boolean(expr, what: str, at):
    """``expr`` (typed) if it is a condition, else an error naming ``what``."""
    kind = SqlType.parse(ir.type_of(expr)).kind
    if kind not in (TypeKind.BOOLEAN, TypeKind.VOID):
        raise MatchRecognizeError(f"{what} must be a boolean condition, not {ir.type_of(expr)}", *at)
    return expr


def _call(expr: ir.Call, types: dict, ansi: bool):
    args = [typed(a, types, ansi) for a in expr.args]
    arg_types = [SqlType.parse(ir.type_of(a)) for a in args]
    context = None if expr.fn == "collate" else _collation(expr, args, arg_types)
    arg_types = [_with_collation(t, context) for t in arg_types]
    reduced = _integral_vs_decimal_literal(expr, args, arg_types)
    if reduced is not None:
        if isinstance(reduced, ir.Lit):
            return reduced
        expr, args = reduced
        arg_types = [SqlType.parse(ir.type_of(a)) for a in args]
    described = [Literal(t, ir.literal_value(a.value, a.type)) if isinstance(a, ir.Lit) else t
                 for a, t in zip(args, arg_types)]
    try:
        signature = functions.resolve(expr.fn, described, ansi)
    except SparkAnalysisError as e:
        raise MatchRecognizeError(str(e), *expr.at) from None
    except NotImplementedError as e:
        raise MatchRecognizeError(f"{expr.fn}: {e} over match state", *expr.at) from None
    _icu_free(expr.fn, signature.args, expr.at)
    args = [_cast(a, t, chain, expr.at) for a, t, chain in zip(args, arg_types, signature.casts(arg_types))]
    return expr._replace(args=tuple(args), arg_types=tuple(str(t) for t in signature.args),
                         type=str(_with_collation(signature.result, context)))


def _with_collation(t: SqlType, name: str | None) -> SqlType:
    """``t`` with every string type in it of collation ``name`` (unchanged when None)."""
    if name is None:
        return t
    if t.is_string:
        return SqlType(TypeKind.STRING, collation=name)
    if t.kind in (TypeKind.ARRAY, TypeKind.MAP, TypeKind.STRUCT):
        return replace(t, element=t.element and _with_collation(t.element, name),
                       key=t.key and _with_collation(t.key, name),
                       fields=tuple((n, _with_collation(f, name)) for n, f in t.fields))
    return t


def _collation(expr: ir.Call, args: list, arg_types: list) -> str | None:
    """The collation Spark gives the strings of a call (CollationTypeCoercion): an explicit one
    (``COLLATE``) over those of its arguments read from columns (implicit), over the literals'
    and casts' (default); None when no argument is read from a column.  Two different explicit
    collations are Spark's COLLATION_MISMATCH.EXPLICIT error, two implicit ones (and no explicit)
    its INDETERMINATE_COLLATION error."""
    explicit = {c for a in args if (c := explicit_collation(a)) is not None}
    if len(explicit) > 1:
        raise MatchRecognizeError(
            f"[COLLATION_MISMATCH.EXPLICIT] {expr.fn}: the arguments have different explicit collations "
            f"({', '.join(sorted(c or 'UTF8_BINARY' for c in explicit))}); use one COLLATE", *expr.at)
    if explicit:
        return explicit.pop()
    implicit = {inner.collation for a, t in zip(args, arg_types) if implicit_collation(a)
                for inner in t.walk() if inner.is_string}
    if len(implicit) > 1:
        raise MatchRecognizeError(
            f"[INDETERMINATE_COLLATION_IN_EXPRESSION] {expr.fn}: the arguments have different collations "
            f"({', '.join(sorted(c or 'UTF8_BINARY' for c in implicit))}); use COLLATE in the input to set one", *expr.at)
    return next(iter(implicit), None)


def explicit_collation(arg) -> str | None:
    """The collation ``arg`` has explicitly ('' for UTF8_BINARY), else None: a ``COLLATE``, or a
    call producing strings over one (Spark propagates the explicit strength upwards)."""
    if not isinstance(arg, ir.Call):
        return None
    if arg.fn == "collate":
        return SqlType.parse(arg.type).collation
    if not any(t.is_string for t in SqlType.parse(ir.type_of(arg)).walk()):
        return None
    return next((c for a in arg.args if (c := explicit_collation(a)) is not None), None)


def implicit_collation(arg) -> bool:
    """Is ``arg``'s collation implicit, not default?  Implicit: a column, and a cast, call or
    aggregate of an implicit argument holding strings (``CAST(A.s AS STRING)``, ``max(A.s)``);
    default: a literal, CLASSIFIER() (a function's result), what reads no string column
    (``CAST(A.i AS STRING)``, ``max(CLASSIFIER())``)."""
    if isinstance(arg, (ir.Lit, ir.Classifier, ir.MatchNumber)):
        return False
    if isinstance(arg, (ir.Cast, ir.Call, ir.Agg)):
        inner = (arg.arg,) if isinstance(arg, ir.Cast) else arg.args
        return any(implicit_collation(a) and any(t.is_string for t in SqlType.parse(ir.type_of(a)).walk()) for a in inner)
    return True


# functions whose result does not depend on the collation of their string arguments
_COLLATION_FREE = frozenset(("collate", "concat", "length", "substring", "case", "if", "coalesce", "is_null", "is_not_null",
                              "array_join", "element_at", "try_element_at", "size", "legacy_size", "array_size", "array",
                              "get", "subscript", "lpad", "rpad", "left", "right"))


def _icu_free(fn: str, arg_types, at) -> None:
    """Refuse what would compare strings of an ICU collation (the engine has no ICU)."""
    if functions.lookup(fn).name in _COLLATION_FREE:
        return
    for t in arg_types:
        for inner in t.walk():
            if inner.is_string and collation.key(inner.collation) is None:
                raise MatchRecognizeError(
                    f"{fn} over STRING COLLATE {inner.collation} in the match state: the engine cannot compare "
                    "strings of an ICU collation; compare them in a row-level condition, or use UTF8_BINARY or "
                    "UTF8_LCASE", *at)




_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _integral_vs_decimal_literal(expr: ir.Call, args: list, arg_types: list):
    """Spark's strength reduction of ``integral_expr <op> decimal_literal`` (DecimalPrecision):
    a literal beyond the BIGINT range makes the comparison a constant (the integral side is not
    evaluated), any other is replaced by its floor or ceiling as a BIGINT literal.  Returns None
    (no reduction), the constant ``Lit``, or (the call, its arguments) with the new literal."""
    if expr.fn not in _FLIPPED or len(args) != 2:
        return None
    for side in (0, 1):
        lit, other = args[1 - side], arg_types[side]
        if isinstance(lit, ir.Lit) and lit.value is not None and arg_types[1 - side].is_decimal and \
                other.is_integral:
            break
    else:
        return None
    op = expr.fn if side == 0 else _FLIPPED[expr.fn]  # as ``integral op literal``
    value = ir.literal_value(lit.value, lit.type)
    if value < _LONG_MIN or value > _LONG_MAX:
        return ir.Lit((value < _LONG_MIN) == (op in (">", ">=")), "boolean")
    bound = int(value.to_integral_value(rounding="ROUND_FLOOR" if op in (">", "<=") else "ROUND_CEILING"))
    args = list(args)
    args[1 - side] = ir.Lit(bound, "bigint")
    return expr, args


def _aggregate(expr: ir.Agg, types: dict, ansi: bool) -> ir.Agg:
    args = [typed(a, types, ansi) for a in expr.args]
    arg_types = [SqlType.parse(ir.type_of(a)) for a in args]
    for t in arg_types:
        if any(inner.kind is TypeKind.OTHER for inner in t.walk()):
            raise MatchRecognizeError(f"{expr.fn.upper()} over {str(t).upper()} in the match state: the engine does not "
                                      "evaluate values of this type", *expr.at)
    described = [Literal(t, ir.literal_value(a.value, a.type)) if isinstance(a, ir.Lit) else t
                 for a, t in zip(args, arg_types)]
    try:
        fold = aggregate(expr.fn, described, expr.distinct, ansi)
    except (SparkAnalysisError, NotImplementedError) as e:  # NotImplementedError: an ICU collation's order
        raise MatchRecognizeError(f"{expr.fn.upper()}: {e}", *expr.at) from None
    args = [_cast(a, t, (want,) if want != t else (), expr.at) for a, t, want in zip(args, arg_types, fold.arg_types)]
    condition = typed(expr.filter, types, ansi)
    if condition is not None:
        boolean(condition, f"the FILTER of {expr.fn.upper()}", expr.at)
    return expr._replace(args=tuple(args), arg_types=tuple(str(t) for t in fold.arg_types), filter=condition,
                         type=str(fold.result_type))


def _cast(arg, source: SqlType, chain, at):
    if not chain:
        return arg
    return ir.Cast(arg, str(source), tuple(str(t) for t in chain), at)
