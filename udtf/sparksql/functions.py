"""The registry of Spark's scalar functions and operators: one ``Function`` record per function,
the only place that says what the engine knows of it.

A record names the function (Spark's name, or the operator's symbol) and its aliases, its
typing rule (``coercion``: the implicit casts and the result type Spark's analyzer gives a
call), its builder (``scalar``: the function over evaluated values), the order in which a call
evaluates its arguments, and what Spark's optimizer relies on (``nullIntolerant``, ``nullable``,
``ConditionalExpression``); optionally the numpy ufunc ``match.vector`` evaluates it with.
Every table the rest of the code reads is derived from the records: ``resolve`` and
``compile_call`` here, NullPropagation and ConstantFolding in ``sql_ext.compiler.optimize``, the lanes in
``udtf.match.vector``.  ``sql_ext.compiler.calls`` maps sqlglot's nodes to these names.

Adding a function: one ``Function`` record below (with its typing rule and builder; the
generic ones in ``coercion`` / ``scalar`` usually fit) and one line in ``sql_ext.compiler.calls``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Sequence

from . import coercion as T
from . import scalar as B
from .coercion import Arg, Signature
from .errors import SparkAnalysisError
from .types import BOOLEAN, DOUBLE, FLOAT, STRING, TypeKind, SqlType

__all__ = ["Function", "Order", "Nullable", "FUNCTIONS", "lookup", "resolve", "function", "compile_call"]


class Order(Enum):
    """How a call evaluates its arguments (Spark's ``eval``), so that it raises where Spark does."""
    STRICT = "strict"  # left to right, the first NULL makes the result NULL (``NULL + 1/0`` is NULL)
    DIVISOR_FIRST = "divisor first"  # DivModLike: the divisor; NULL (or 0 without ANSI) skips the dividend
    EAGER = "eager"  # every argument, then the function (it sees the NULLs)
    LAZY = "lazy"  # in the function's own order (``Function.lazy``): short-circuits, conditionals


class Nullable(Enum):
    """Spark's ``nullable`` of a call, from its operands'."""
    ANY = "any"  # when an operand is
    ALL = "all"  # when every operand is (COALESCE, GREATEST, LEAST)
    BRANCHES = "branches"  # when a value branch is, or there is no ELSE (CASE, IF)
    ALWAYS = "always"  # whatever the operands (DivModLike, logarithms, NULLIF)
    NEVER = "never"  # (<=>, IS [NOT] NULL)


def _always(types) -> bool:
    return True


def _never(types) -> bool:
    return False


def _unless_atomic(types) -> bool:
    return not all(t.is_numeric or t.is_string or t.is_datetime or t.kind is TypeKind.BOOLEAN for t in types)


@dataclass(frozen=True)
class Function:
    """One Spark function.  ``types(name, args, ansi) -> Signature`` (``coercion``) and
    ``build(name, arg_types, result_type, ansi, zone) -> f(*values)`` (``scalar``) receive the
    record's ``name``; ``lazy(..., children) -> g(row)`` is the call for ``Order.LAZY``.
    ``null_intolerant``: NULL in any operand is NULL out (Spark's NullPropagation folds it);
    ``conditional``: a ConditionalExpression (ConstantFolding leaves its failing constant parts
    to run lazily); ``raises(arg_types)``: may the call raise for some values; ``vector``: the
    numpy ufunc of its vectorized form (``udtf.match.vector``), if any."""
    name: str
    types: Callable[..., Signature]
    build: Callable[..., Callable]
    aliases: tuple[str, ...] = ()
    order: Order = Order.STRICT
    lazy: Callable[..., Callable] | None = None
    null_intolerant: bool = False
    nullable: Nullable = Nullable.ANY
    conditional: bool = False
    raises: Callable[[Sequence[SqlType]], bool] = _always
    vector: str | None = None

    def __post_init__(self):
        assert (self.lazy is not None) == (self.order is Order.LAZY), self.name


def _arithmetic(name, vector=None, **kw) -> Function:
    return Function(name, T.arithmetic_sig, B.arithmetic_fn, null_intolerant=True, vector=vector, **kw)


def _division(name, **kw) -> Function:
    return _arithmetic(name, order=Order.DIVISOR_FIRST, nullable=Nullable.ALWAYS, **kw)


def _comparison(name, vector, **kw) -> Function:
    return Function(name, T.comparison_sig, B.comparison_fn, null_intolerant=True, raises=_unless_atomic,
                    vector=vector, **kw)


def _null_safe(name, **kw) -> Function:
    return Function(name, T.comparison_sig, B.comparison_fn, order=Order.EAGER, nullable=Nullable.NEVER, **kw)


def _null_test(name, **kw) -> Function:
    return Function(name, T.null_test_sig, B.null_test_fn, order=Order.EAGER, nullable=Nullable.NEVER, **kw)


def _math(name, types, build, **kw) -> Function:
    return Function(name, types, build, null_intolerant=True, **kw)


def _expects(*params: tuple[SqlType, ...], result: SqlType):
    """The typing rule of Spark's ImplicitCastInputTypes: an argument of one of its parameter's
    types keeps it, any other is implicitly cast to the first of them (or is an error)."""
    def types(name, args, ansi) -> Signature:
        if len(args) != len(params):
            raise SparkAnalysisError("WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
                                     f"The `{name}` requires {len(params)} parameters but the actual number "
                                     f"is {len(args)}.")
        out = []
        for i, (arg, accepted) in enumerate(zip(args, params)):
            t = arg.type if isinstance(arg, T.Literal) else arg
            cast = t if t in accepted else T.implicit_cast(t, accepted[0], ansi)
            if cast is None:
                raise SparkAnalysisError("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                                         f"Parameter {i + 1} of `{name}` requires the "
                                         f"{' or '.join(str(a).upper() for a in accepted)} type, however has "
                                         f"the type {str(t).upper()}.")
            out.append(cast)
        return Signature(tuple(out), result)
    return types


def _collate_sig(name, args, ansi) -> Signature:
    """Collate: a string (or NULL) and the collation's name, a string literal."""
    t = args[0].type if isinstance(args[0], T.Literal) else args[0]
    if not (t.is_string or t.is_void):
        raise SparkAnalysisError("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE", f"Parameter 1 of `{name}` requires the "
                                 f"STRING type, however has the type {str(t).upper()}.")
    c = args[1].value.upper()
    return Signature((t, args[1].type), STRING if c == "UTF8_BINARY" else SqlType(TypeKind.STRING, collation=c))


def _value(fn):
    """The builder of ``fn`` over evaluated values, whatever their types."""
    return lambda name, types, result, ansi, zone: fn


FUNCTIONS: tuple[Function, ...] = (
    # arithmetic
    _arithmetic("+", "add"),
    _arithmetic("-", "subtract"),
    _arithmetic("*", "multiply"),
    _division("/"),
    _division("%", aliases=("mod",)),
    _division("div"),
    _division("pmod"),
    _math("negative", T.numeric_unary_sig, B.neg_abs_fn),
    Function("positive", T.numeric_unary_sig, B.neg_abs_fn),
    _math("abs", T.numeric_unary_sig, B.neg_abs_fn),
    # comparisons
    _comparison("=", "equal"),
    _comparison("<>", "not_equal"),
    _comparison("<", "less"),
    _comparison("<=", "less_equal"),
    _comparison(">", "greater"),
    _comparison(">=", "greater_equal"),
    _null_safe("<=>", aliases=("equal_null", "is_not_distinct_from")),
    _null_safe("is_distinct_from"),
    # logic and null tests
    Function("and", T.logic_sig, B.logic_fn, order=Order.LAZY, lazy=B.lazy_logic, raises=_never,
             vector="logical_and"),
    Function("or", T.logic_sig, B.logic_fn, order=Order.LAZY, lazy=B.lazy_logic, raises=_never,
             vector="logical_or"),
    Function("not", T.logic_sig, B.logic_fn, null_intolerant=True, raises=_never, vector="logical_not"),
    _null_test("is_null", aliases=("isnull",)),
    _null_test("is_not_null", aliases=("isnotnull",)),
    # conditionals
    Function("in", T.in_sig, B.in_fn, order=Order.LAZY, lazy=B.lazy_in),
    Function("between", T.between_sig, B.between_fn, order=Order.LAZY, lazy=B.lazy_between),
    Function("case", T.case_sig, B.case_fn, order=Order.LAZY, lazy=B.lazy_case, nullable=Nullable.BRANCHES,
             conditional=True),
    Function("if", T.if_sig, B.case_fn, order=Order.LAZY, lazy=B.lazy_case, nullable=Nullable.BRANCHES,
             conditional=True),
    Function("coalesce", T.coalesce_sig, B.coalesce_fn, aliases=("nvl", "ifnull"), order=Order.LAZY,
             lazy=B.lazy_coalesce, nullable=Nullable.ALL, conditional=True),
    Function("nullif", T.nullif_sig, B.nullif_fn, order=Order.LAZY, lazy=B.lazy_nullif,
             nullable=Nullable.ALWAYS, conditional=True),
    Function("greatest", T.greatest_sig, B.greatest_fn, order=Order.EAGER, nullable=Nullable.ALL),
    Function("least", T.greatest_sig, B.greatest_fn, order=Order.EAGER, nullable=Nullable.ALL),
    # numbers
    _math("sqrt", T.double_sig, B.double_fn),
    _math("exp", T.double_sig, B.double_fn),
    _math("ln", T.double_sig, B.double_fn, nullable=Nullable.ALWAYS),
    _math("log10", T.double_sig, B.double_fn, nullable=Nullable.ALWAYS),
    _math("logarithm", T.double_sig, B.double_fn, nullable=Nullable.ALWAYS),
    _math("pow", T.double_sig, B.double_fn, aliases=("power",)),
    _math("sign", T.sign_sig, B.sign_fn, aliases=("signum",)),
    Function("round", T.round_sig, B.round_fn),
    Function("bround", T.round_sig, B.round_fn),
    Function("isnan", _expects((DOUBLE, FLOAT), result=BOOLEAN), _value(lambda x: x is not None and x != x),
             order=Order.EAGER, nullable=Nullable.NEVER, raises=_never),
    Function("nanvl", T.nanvl_sig, _value(lambda x, y: y if x is not None and x != x else x), order=Order.LAZY,
             lazy=B.lazy_nanvl, raises=_never),
    # (ToDegrees: a DOUBLE argument, anything else implicitly cast to it; Java's angrad * (180 / PI))
    _math("degrees", _expects((DOUBLE,), result=DOUBLE), _value(math.degrees), raises=_never),
    _math("floor", T.floor_ceil_sig, B.floor_ceil_fn),
    _math("ceil", T.floor_ceil_sig, B.floor_ceil_fn, aliases=("ceiling",)),
    # strings
    Function("concat", T.concat_sig, B.concat_fn, aliases=("||",), order=Order.EAGER),
    _math("length", T.string_sig, B.string_fn, aliases=("char_length", "character_length")),
    _math("upper", T.string_sig, B.string_fn, aliases=("ucase",)),
    _math("lower", T.string_sig, B.string_fn, aliases=("lcase",)),
    Function("trim", T.string_sig, B.string_fn),
    Function("ltrim", T.string_sig, B.string_fn),
    Function("rtrim", T.string_sig, B.string_fn),
    _math("substring", T.substring_sig, B.substring_fn, aliases=("substr",)),
    # (Contains / StartsWith / EndsWith / StringReplace: UTF8_BINARY and UTF8_LCASE)
    _math("contains", T.string_search_sig, B.string_search_fn, raises=_never),
    _math("startswith", T.string_search_sig, B.string_search_fn, raises=_never),
    _math("endswith", T.string_search_sig, B.string_search_fn, raises=_never),
    _math("replace", T.string_search_sig, B.string_search_fn, raises=_never),
    # (StringInstr; StringLocate(substr, str, pos): a NULL pos is 0; lpad / rpad; Left / Right)
    _math("instr", T.position_sig, B.position_fn, raises=_never),
    Function("locate", T.position_sig, B.locate_fn, order=Order.LAZY, lazy=B.lazy_locate,
             raises=_never),
    _math("lpad", T.pad_sig, B.pad_fn, raises=_never),
    _math("rpad", T.pad_sig, B.pad_fn, raises=_never),
    _math("left", T.left_right_sig, B.left_right_fn, raises=_never),
    _math("right", T.left_right_sig, B.left_right_fn, raises=_never),
    # (``like(s, p, escape)``: ESCAPE's literal character; NOT LIKE is ``not`` of it)
    _math("like", T.like_sig, B.like_fn),
    _math("ilike", T.like_sig, B.like_fn),
    # (``s [NOT] LIKE / ILIKE ANY / ALL ('p', ...)``: the string, then the literal patterns)
    *(_math(f"{n}{like}_{q}", T.like_quantified_sig, B.like_quantified_fn)
      for n in ("", "not_") for like in ("like", "ilike") for q in ("any", "all")),
    # (``s COLLATE c``: the value unchanged, typed STRING COLLATE c, which wins over the implicit
    # collations of columns in the expression around it: ``sql_ext.compiler.typecheck``)
    Function("collate", _collate_sig, _value(lambda s, _: s), order=Order.EAGER, raises=_never),
    # arrays (an aggregate's array over match state: array_agg / collect_list)
    Function("array_join", T.array_join_sig, B.array_join_fn, raises=_never),
    Function("element_at", T.element_at_sig, B.element_at_fn, nullable=Nullable.ALWAYS),
    Function("try_element_at", T.element_at_sig, B.element_at_fn, nullable=Nullable.ALWAYS),
    # (``legacy_size``: Size with spark.sql.legacy.sizeOfNull and without ANSI, -1 of NULL;
    # ``sql_ext.compiler.lower`` picks it for ``size`` from the session's settings)
    # (``a[i]`` / ``m[k]``: GetArrayItem / GetMapValue; ``get(a, i)``: GetArrayItem that never fails)
    Function("subscript", T.subscript_sig, B.subscript_fn, nullable=Nullable.ALWAYS),
    Function("get", T.get_sig, B.subscript_fn, nullable=Nullable.ALWAYS),
    Function("size", T.size_sig, B.size_fn, aliases=("cardinality",), raises=_never),
    Function("legacy_size", T.size_sig, B.size_fn, order=Order.EAGER, nullable=Nullable.NEVER, raises=_never),
    # (``array_size``: Size without the legacy rule, of arrays only - never -1)
    Function("array_size", T.array_size_sig, B.size_fn, raises=_never),
    _math("array_contains", T.array_search_sig, B.array_search_fn, nullable=Nullable.ALWAYS, raises=_never),
    _math("array_position", T.array_search_sig, B.array_search_fn, raises=_never),
    Function("array", T.array_sig, B.array_fn, order=Order.EAGER, nullable=Nullable.NEVER, raises=_never),
    Function("array_max", T.array_extreme_sig, B.array_extreme_fn, nullable=Nullable.ALWAYS, raises=_never),
    Function("array_min", T.array_extreme_sig, B.array_extreme_fn, nullable=Nullable.ALWAYS, raises=_never),
    # dates
    _math("date_add", T.date_sig, B.date_fn, aliases=("dateadd",)),
    _math("date_sub", T.date_sig, B.date_fn),
    _math("datediff", T.date_sig, B.date_fn, aliases=("date_diff",)),
)

_BY_NAME = {n: f for f in FUNCTIONS for n in (f.name, *f.aliases)}
assert len(_BY_NAME) == sum(1 + len(f.aliases) for f in FUNCTIONS), "a name is registered twice"


def lookup(name: str) -> Function:
    """The record of ``name`` (case-insensitive, an alias too)."""
    found = _BY_NAME.get(name.strip().lower())
    if found is None:
        raise SparkAnalysisError("UNRESOLVED_ROUTINE", f"function {name!r} is not supported")
    return found


def resolve(name: str, arg_types: Sequence[Arg], ansi: bool) -> Signature:
    """Spark's analyzer result for ``name(args...)``: argument casts and result type."""
    f = lookup(name)
    return f.types(f.name, list(arg_types), ansi)


def function(name: str, arg_types: Sequence[SqlType], result_type: SqlType, ansi: bool,
             zone: str = "UTC") -> Callable:
    """``f(*values)`` over evaluated argument values (types ``arg_types``: after the casts of
    ``resolve``) giving ``result_type`` values in session zone ``zone``; see ``compile_call``
    for Spark's evaluation order."""
    f = lookup(name)
    return f.build(f.name, tuple(arg_types), result_type, ansi, zone)


def compile_call(name: str, arg_types: Sequence[SqlType], result_type: SqlType, ansi: bool,
                 children: Sequence[Callable], zone: str = "UTC") -> Callable:
    """``row -> value`` for the call, evaluating the child evaluators ``children[i](row)``
    (already producing ``arg_types[i]`` values) in Spark's order (``Function.order``)."""
    f = lookup(name)
    ch = tuple(children)
    if f.order is Order.LAZY:
        return f.lazy(f.name, tuple(arg_types), result_type, ansi, zone, ch)
    fn = f.build(f.name, tuple(arg_types), result_type, ansi, zone)
    if f.order is Order.EAGER:
        return lambda row: fn(*[c(row) for c in ch])
    if len(ch) == 1:
        c0 = ch[0]

        def unary(row):
            v = c0(row)
            return None if v is None else fn(v)
        return unary
    if len(ch) == 2 and f.order is Order.DIVISOR_FIRST:
        c0, c1 = ch
        zero_null = not ansi

        def divmod_like(row):
            b = c1(row)
            if b is None or (zero_null and b == 0):
                return None
            a = c0(row)
            if a is None:
                return None
            return fn(a, b)
        return divmod_like
    if len(ch) == 2:
        c0, c1 = ch

        def binary(row):
            a = c0(row)
            if a is None:
                return None
            b = c1(row)
            if b is None:
                return None
            return fn(a, b)
        return binary

    def nary(row):
        vals = []
        for c in ch:
            v = c(row)
            if v is None:
                return None
            vals.append(v)
        return fn(*vals)
    return nary
