"""``udtf.item_masks``: a one-pass layer's row-level conjuncts split off into masks, and the
masks' Arrow evaluation against the engine's own evaluation item by item."""
from __future__ import annotations

import random

import pytest

from udtf.errors import MatchRecognizeError
from udtf.expr import Agg, Call, Cast, Col, FactTable, Lit, Nav, compile_row, type_of
from udtf.item_masks import Masks, _vector, row_masks
from udtf.plan import Condition, EnginePlan

COLUMNS = {"i": "int", "b": "bigint", "s": "string", "f": "boolean", "t": "timestamp"}


def call(fn, *args, type_="boolean"):
    return Call(fn, args, tuple(type_of(a) for a in args), type_)


def random_expr(rng: random.Random, depth: int = 0):
    """A random boolean expression over ``COLUMNS``, inside Arrow's subset."""
    if depth < 2 and rng.random() < 0.5:
        fn = rng.choice(["and", "or", "not"])
        if fn == "not":
            return call("not", random_expr(rng, depth + 1))
        return call(fn, random_expr(rng, depth + 1), random_expr(rng, depth + 1))
    name = rng.choice(list(COLUMNS))
    column = Col(name, COLUMNS[name])
    if name in ("t", "f") or rng.random() < 0.2:
        if name == "f" and rng.random() < 0.5:
            return column
        return call(rng.choice(["is_null", "is_not_null"]), column)
    literal = {"int": lambda: Lit(rng.randint(-2, 2), "int"), "bigint": lambda: Lit(rng.randint(-2, 2), "bigint"),
               "string": lambda: Lit(rng.choice(["a", "b", "é", ""]), "string")}[COLUMNS[name]]()
    sides = (column, literal) if rng.random() < 0.7 else (column, Col(name, COLUMNS[name]))
    return call(rng.choice(["=", "<>", "<", "<=", ">", ">="]), *sides)


def random_values(rng: random.Random, n: int) -> dict:
    pick = {"i": lambda: rng.randint(-2, 2), "b": lambda: rng.randint(-2, 2), "s": lambda: rng.choice(["a", "b", "é", ""]),
            "f": lambda: rng.random() < 0.5, "t": lambda: 0}
    return {name: [None if rng.random() < 0.2 else pick[name]() for _ in range(n)] for name in COLUMNS}


@pytest.mark.parametrize("seed", range(40))
def test_arrow_masks_are_the_engines_item_by_item(seed):
    rng = random.Random(seed)
    exprs = {f"m{k}": random_expr(rng) for k in range(4)}
    assert all(_vector(e) is not None for e in exprs.values())
    values = random_values(rng, 50)
    got = Masks(exprs, True, "UTC")(values, 50)
    table = FactTable([], values, (), True, "UTC")
    for name, expr in exprs.items():
        test = compile_row(expr, table)
        assert bytes(got[name]) == bytes([test((i, None, None)) is True for i in range(50)]), expr


def test_outside_arrows_subset_the_engine_evaluates_each_item_and_raises_spark_errors():
    """A cast that fails on one item raises, located at the cast, whatever run reads the item."""
    cast = Cast(Col("s", "string"), "string", ("int",), at=(3, 7))
    expr = call(">", cast, Lit(0, "int"))
    assert _vector(expr) is None
    masks = Masks({"m": expr}, True, "UTC")
    assert bytes(masks({"s": ["1", None, "-4"]}, 3)["m"]) == bytes([1, 0, 0])
    with pytest.raises(MatchRecognizeError) as info:
        masks({"s": ["1", "x"]}, 2)
    assert (info.value.line, info.value.column) == (3, 7)
    assert bytes(Masks({"m": expr}, False, "UTC")({"s": ["x", "2"]}, 2)["m"]) == bytes([0, 1])


def test_row_masks_moves_the_row_level_conjuncts_of_each_condition():
    own = call("=", Col("s", "string"), Lit("a", "string"))
    nav = call(">", Nav("i", "int", (0,), physical=-1), Lit(0, "int"))
    agg = call(">", Agg("count", None, (), (), False, None, "bigint"), Lit(1, "bigint"))
    null = call("is_null", Col("t", "timestamp"))
    plan = EnginePlan(None, None, None, None, define=(
        Condition(0, None, call("and", call("and", own, nav), null)),  # ((own AND nav) AND null)
        Condition(1, None, call("and", own, call("and", null, agg))),
        Condition(2, None, nav),
        Condition(3, None, own)), until=(Condition(0, None, call("and", own, null)),), partition=(), masks=(),
        derived=(), values=(), order_key=None, within=None, lookahead=0, atoms=(), output=(), limits=None,
        ansi=True)
    split, masks = row_masks(plan)
    both = call("and", own, null)
    assert masks == {"__item_mask0": both, "__item_mask1": own}
    assert split.masks == ("__item_mask0", "__item_mask1")
    assert split.define == (Condition(0, "__item_mask0", nav), Condition(1, "__item_mask0", agg),
                            Condition(2, None, nav), Condition(3, "__item_mask1", None))
    assert split.until == (Condition(0, "__item_mask0", None),)
