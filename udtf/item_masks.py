"""The row-level part of a one-pass layer's conditions, as masks evaluated once per item
(``udtf.hierarchy``, docs/hierarchies.md "Evaluation in one pass").

A one-pass layer's plan is an engine plan: every condition is one engine expression, with no
mask.  ``row_masks`` moves each condition's conjuncts that read only the current item's own
columns (literals, columns, casts and calls: no navigation, aggregate, CLASSIFIER or
MATCH_NUMBER) into a mask; ``Masks`` evaluates them over the items a layer loads, as Spark
computes a plain clause's masks over its rows.  Invariant: a condition holds exactly where its
mask holds and its rest holds (Spark's ``AND``), and the rest is evaluated only there, so the
errors raised are the expansion's: its row-level conjuncts on every item, the rest where a run
tests it.

``Masks`` evaluates a conjunction with Arrow compute where every node is in a subset that
cannot raise and that Arrow computes as Spark does (comparisons of two values of one integral,
BOOLEAN or STRING type without collation, NULL tests, AND / OR / NOT in three-valued logic),
else item by item with the engine's own evaluation (``expr.compile_row``)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrow import COMPARE
from .expr import Call, Cast, Col, FactTable, Lit, compile_row, type_of
from .plan import Condition, EnginePlan
from .sparksql.functions import lookup


def row_masks(plan: EnginePlan) -> tuple[EnginePlan, dict]:
    """``plan`` (an engine plan: its conditions have no masks) with each condition's row-level
    conjuncts moved into a mask, and {mask name: their conjunction}.  The condition holds where
    its mask does and the rest holds (Spark's ``AND``: false if either is, else NULL if either
    is); the rest is evaluated only where the mask holds, as for a plain clause's masks."""
    masks: dict = {}

    def split(condition: Condition) -> Condition:
        if condition.expr is None or condition.mask is not None:
            return condition
        parts = _conjuncts(condition.expr)
        own = [p for p in parts if _row_level(p)]
        if not own:
            return condition
        conjunction = _and(own)
        name = next((n for n, e in masks.items() if e == conjunction), f"__item_mask{len(masks)}")
        masks[name] = conjunction
        rest = [p for p in parts if not _row_level(p)]
        return condition._replace(mask=name, expr=_and(rest) if rest else None)

    define, until = tuple(map(split, plan.define)), tuple(map(split, plan.until))
    return plan._replace(define=define, until=until, masks=(*plan.masks, *masks)), masks


class Masks:
    """``masks`` ({name: row-level boolean expression}) evaluated over loaded items:
    ``self(values, n)`` -> {name: 0/1 per item} for ``values`` ({column: n Python values})."""

    def __init__(self, masks: dict, ansi: bool, zone: str):
        self.loaded: dict = {}  # the columns the item by item masks read (filled in place)
        table = FactTable([], self.loaded, (), ansi, zone)
        self.tests = {}
        for name, expr in masks.items():
            vector = _vector(expr)
            if vector is None:
                _columns(expr, self.loaded)
                test = compile_row(expr, table)
                self.tests[name] = lambda values, n, test=test: bytes([test((i, None, None)) is True
                                                                      for i in range(n)])
            else:
                self.tests[name] = lambda values, n, vector=vector: _mask(vector(values), n)

    def __call__(self, values: dict, n: int) -> dict:
        for name, column in self.loaded.items():
            column[:] = values[name]
        return {name: test(values, n) for name, test in self.tests.items()}


def _mask(result, n: int) -> np.ndarray:
    """TRUE -> 1, FALSE and NULL -> 0 (a constant result repeated ``n`` times)."""
    if isinstance(result, pa.Scalar):
        return np.full(n, result.as_py() is True)
    return pc.fill_null(result, False).to_numpy(zero_copy_only=False)


# Spark types whose values Arrow holds and compares exactly as Spark does
_EXACT = {"tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(), "bigint": pa.int64(),
          "boolean": pa.bool_(), "string": pa.string()}


def _vector(expr):
    """``fn(values) -> pa.Array | pa.Scalar`` computing ``expr`` with Arrow, or None outside the
    subset (module docstring)."""
    if isinstance(expr, Lit):
        kind = _EXACT.get(expr.type)
        return None if kind is None or expr.value is None else (lambda values, s=pa.scalar(expr.value, kind): s)
    if isinstance(expr, Col):
        kind, name = _EXACT.get(expr.type), expr.name
        return None if kind is None else (lambda values: pa.array(values[name], type=kind))
    if not isinstance(expr, Call):
        return None
    fn = lookup(expr.fn).name
    if fn in ("is_null", "is_not_null") and isinstance(expr.args[0], Col):
        name, null = expr.args[0].name, fn == "is_null"
        return lambda values: pa.array([(v is None) is null for v in values[name]], type=pa.bool_())
    args = [_vector(a) for a in expr.args]
    if None in args:
        return None
    if fn in COMPARE and len(args) == 2 and len(set(expr.arg_types)) == 1 and expr.arg_types[0] in _EXACT:
        compare, (a, b) = COMPARE[fn], args
        return lambda values: compare(a(values), b(values))
    if fn in ("and", "or") and len(args) == 2 and set(expr.arg_types) == {"boolean"}:
        junction, (a, b) = pc.and_kleene if fn == "and" else pc.or_kleene, args
        return lambda values: junction(a(values), b(values))
    if fn == "not" and len(args) == 1 and expr.arg_types == ("boolean",):
        (a,) = args
        return lambda values: pc.invert(a(values))
    return None


def _conjuncts(expr) -> list:
    if isinstance(expr, Call) and expr.fn == "and" and len(expr.args) == 2:
        return [*_conjuncts(expr.args[0]), *_conjuncts(expr.args[1])]
    return [expr]


def _row_level(expr) -> bool:
    """Does ``expr`` read only the current item's own columns (literals, columns, casts, calls)?"""
    if isinstance(expr, (Lit, Col)):
        return True
    if isinstance(expr, Cast):
        return _row_level(expr.arg)
    return isinstance(expr, Call) and all(_row_level(a) for a in expr.args)


def _columns(expr, out: dict) -> None:
    """Add to ``out`` an empty list for each column a row-level ``expr`` reads."""
    if isinstance(expr, Col):
        out.setdefault(expr.name, [])
    for arg in (expr.arg,) if isinstance(expr, Cast) else expr.args if isinstance(expr, Call) else ():
        _columns(arg, out)


def _and(parts: list):
    """Spark's ``AND`` of ``parts``, left to right."""
    out = parts[0]
    for part in parts[1:]:
        out = Call("and", (out, part), (type_of(out), type_of(part)), "boolean")
    return out
