"""The emitter's vector forms (``udtf.emit_folds``) against its per-match row fold, engine
level, on plain Python columns: random matches (empty, excluded, unmatched, timed-out rows;
some longer than ``emit_folds.LONGEST``), every atom computed both ways, RUNNING and FINAL,
ANSI on and off; the same values (or the same error) both ways, and the vector form taken
wherever the values let it."""
import math
import random
from decimal import Decimal

import pytest

import udtf.emit
import udtf.emit_folds
from test_emit import NAMES, emitted, random_matches, same
from udtf.emit import Emitter
from udtf.expr import Agg, Call, Col, Lit
from udtf.plan import Atom, RowsMode

DECIMALS = {"m": (10, 2), "w": (23, 2), "z": (38, 0)}  # column -> (precision, scale)


def _decimal_values(rng, size: int) -> dict:
    """Columns m DECIMAL(10,2), w DECIMAL(23,2) (in some cases near int64's end unscaled, or
    past it), z DECIMAL(38,0) (in those, near its limit: a sum overflows), i INT; NULLs in some."""
    nulls = rng.random() < 0.5
    pick = lambda choices: [None if nulls and rng.random() < 0.15 else rng.choice(choices) for _ in range(size)]
    wide = rng.choice(["", "", "", "int64", "past"])  # (unscaled w near int64's end; past it, and z's sums too)
    return {"m": pick([Decimal("1.25"), Decimal("-0.50"), Decimal("0.00"), Decimal("12.10"), Decimal("-99999999.99"),
                       Decimal("0.01"), Decimal("-0.01"), Decimal("3.33")]),
            "w": pick([Decimal("0.25"), Decimal("-7.75"), Decimal("100000.00")] +
                      {"": [], "int64": [Decimal("12345678901234.56"), Decimal("-12345678901234.56")],
                       "past": [Decimal("99999999999999999999.99"), Decimal("-92233720368547758.08")]}[wide]),
            "z": pick([Decimal(10 ** 37), Decimal(-(10 ** 37)), Decimal(7)] if wide == "past" else
                      [Decimal(7), Decimal(-3)]),
            "i": pick([0, 1, 2])}


def _decimal_atoms(rng) -> list:
    atoms = []
    for _ in range(rng.randint(1, 5)):
        vars_ = rng.choice([None, (0,), (1,), (0, 2)])
        column = rng.choice(list(DECIMALS))
        p, s = DECIMALS[column]
        fn = rng.choice(["sum", "avg"])
        result = f"decimal({min(38, p + 10)},{s})" if fn == "sum" else f"decimal({min(38, p + 4)},{min(38, s + 4)})"
        keep = Call("<", (Col("i", "int"), Lit(2, "int")), ("int", "int"), "boolean") if rng.random() < 0.3 else None
        atoms.append(Atom(Agg(fn, vars_, (Col(column, f"decimal({p},{s})"),), (f"decimal({p},{s})",),
                              rng.random() < 0.2, keep, result), rng.random() < 0.5))
    return atoms


def _both(atoms, mode, values, size, matches, ansi, monkeypatch):
    """(the emitter's output as it runs, the same with every aggregate by its row fold, how
    many aggregates the first left to the row fold)."""
    folded = []
    fold = udtf.emit.Emitter._folded
    with monkeypatch.context() as m:
        m.setattr(udtf.emit.Emitter, "_folded", lambda self, s, expr, running: folded.append(expr) or
                  fold(self, s, expr, running))
        vector = emitted(Emitter(atoms, mode, NAMES, values, lambda: size, ansi), matches)
    with monkeypatch.context() as m:
        m.setattr(udtf.emit.VectorFold, "of", staticmethod(lambda agg, fold: None))
        per_match = emitted(Emitter(atoms, mode, NAMES, values, lambda: size, ansi), matches)
    return vector, per_match, len(folded)


@pytest.mark.parametrize("mode", list(RowsMode)[:4])
def test_decimal_sums_and_averages_are_the_row_folds(mode, monkeypatch):
    """SUM / AVG of DECIMAL columns (DISTINCT, FILTER, NULLs): the exact sum, the average
    rounded half away from zero to its scale, NULL or the ANSI error where a result leaves its
    precision (the row fold decides there)."""
    rng = random.Random(11)
    vectorized = 0
    for case in range(150):
        long = rng.random() < 0.05
        size = 700 if long else rng.randint(1, 40)
        values, atoms, ansi = _decimal_values(rng, size), _decimal_atoms(rng), rng.random() < 0.5
        matches = random_matches(rng, size, mode is RowsMode.ALL_WITH_UNMATCHED, long)
        vector, per_match, folded = _both(atoms, mode, values, size, matches, ansi, monkeypatch)
        assert same(vector, per_match), (case, atoms, matches, values)
        vectorized += folded < len(atoms)
        if all(a.expr.args[0].name == "m" for a in atoms):  # (every sum fits int64 unscaled)
            assert folded == 0, (case, atoms)
    assert vectorized > 100


def _double_atoms(rng) -> list:
    atoms = []
    for _ in range(rng.randint(1, 4)):
        vars_ = rng.choice([None, (0,), (1,), (0, 2)])
        fn = rng.choice(["sum", "avg"])
        keep = Call("<", (Col("i", "int"), Lit(2, "int")), ("int", "int"), "boolean") if rng.random() < 0.3 else None
        atoms.append(Atom(Agg(fn, vars_, (Col("d", "double"),), ("double",), rng.random() < 0.2, keep, "double"),
                          rng.random() < 0.5))
    return atoms


@pytest.mark.parametrize("mode", list(RowsMode)[:4])
def test_floating_sums_over_long_matches_add_in_the_folds_order(mode, monkeypatch):
    """SUM / AVG of doubles over matches longer than ``emit_folds.LONGEST`` beside short ones
    (DISTINCT, FILTER, NULLs, NaN, infinities, -0.0, magnitudes whose sums depend on the order
    of the additions): bit for bit the row fold's, and no aggregate left to it."""
    rng = random.Random(12)
    for case in range(40):
        size = rng.randint(300, 1500)
        scale = rng.choice([[1e16, -1e16, 1.0, 0.1, 0.2, 0.3, -2.5, 3.7e12, -0.0],
                            [1e308, -1e308, math.inf, math.nan, 1.5, -0.0], [0.1, 0.7, 1e-300]])
        nulls = rng.random() < 0.5
        values = {"d": [None if nulls and rng.random() < 0.1 else rng.choice(scale) * rng.random() for _ in range(size)],
                  "i": [rng.randint(0, 2) for _ in range(size)]}
        atoms, ansi = _double_atoms(rng), rng.random() < 0.5
        matches = []
        while not any(len(m.rows) > udtf.emit_folds.LONGEST for m in matches):
            matches = random_matches(rng, size, mode is RowsMode.ALL_WITH_UNMATCHED, True)
        vector, per_match, folded = _both(atoms, mode, values, size, matches, ansi, monkeypatch)
        assert same(vector, per_match), (case, atoms)
        assert folded == 0, (case, atoms)


@pytest.mark.parametrize("mode", [RowsMode.ONE, RowsMode.ALL_SHOW])
def test_an_ansi_integral_sum_near_int64s_end_is_the_row_folds(mode, monkeypatch):
    """SUM of BIGINTs near 2**62 (and near int64's ends) under ANSI: where no match's sum up to
    a row leaves int64 the vector form (none left to the row fold), else the row fold's
    ARITHMETIC_OVERFLOW; without ANSI the wrapped sums."""
    rng = random.Random(13)
    overflowed = 0
    for case in range(60):
        size = rng.randint(1, 60)
        big = rng.choice([[2 ** 62, -(2 ** 62), 3], [2 ** 63 - 1, -(2 ** 63), 1, -1], [2 ** 61, 2 ** 61 + 7, -5]])
        values = {"x": [None if rng.random() < 0.1 else rng.choice(big) for _ in range(size)],
                  "i": [rng.randint(0, 2) for _ in range(size)]}
        atoms = [Atom(Agg("sum", rng.choice([None, (0,), (1, 2)]), (Col("x", "bigint"),), ("bigint",),
                          rng.random() < 0.2, None, "bigint"), rng.random() < 0.5) for _ in range(rng.randint(1, 3))]
        ansi = rng.random() < 0.7
        matches = random_matches(rng, size, False)
        vector, per_match, folded = _both(atoms, mode, values, size, matches, ansi, monkeypatch)
        assert same(vector, per_match), (case, atoms, matches, values)
        if isinstance(vector, str):
            assert "ARITHMETIC_OVERFLOW" in vector
            overflowed += 1
        else:
            assert folded == 0, (case, atoms)
    assert 5 < overflowed < 50


KEYS = {"s": "string", "l": "string collate UTF8_LCASE", "dt": "date", "ts": "timestamp", "m": "decimal(10,2)",
        "bn": "binary", "b": "boolean", "i": "int", "d": "double"}


def _keyed_values(rng, size: int) -> dict:
    """Columns of every kind COUNT(DISTINCT ...) reads as values (engine values: days,
    microseconds, Decimals, bytes), strings equal under UTF8_LCASE but not as bytes, an int
    and a double with -0.0 / 0.0; NULLs in some."""
    nulls = rng.random() < 0.6
    pick = lambda choices: [None if nulls and rng.random() < 0.2 else rng.choice(choices) for _ in range(size)]
    return {"s": pick(["a", "A", "b", "é", "e\u0301", ""]), "l": pick(["a", "A", "b", "B"]),
            "dt": pick([-719162, 0, 1, 19000]), "ts": pick([-(1 << 62), -1, 0, 1, 1 << 62]),
            "m": pick([Decimal("0.00"), Decimal("-0.01"), Decimal("1.25"), Decimal("99999999.99")]),
            "bn": pick([b"", b"\x00", b"a", b"A"]), "b": pick([True, False]), "i": pick([0, 1, 2, -5]),
            "d": pick([0.0, -0.0, 1.5, -2.0, 1e300, -math.inf, math.nan])}


def _null_atoms(rng) -> list:
    """COUNT(DISTINCT c) of the columns above; COUNT_IF / BOOL_AND / BOOL_OR, SUM and FILTER over
    AND / OR / NOT of comparisons of nullable columns (a NULL literal among them)."""
    col = lambda name: Col(name, KEYS[name])

    def condition(depth=0):
        if depth < 2 and rng.random() < 0.6:
            fn = rng.choice(["and", "or", "not"])
            if fn == "not":
                return Call("not", (condition(depth + 1),), ("boolean",), "boolean")
            return Call(fn, (condition(depth + 1), condition(depth + 1)), ("boolean", "boolean"), "boolean")
        roll = rng.random()
        if roll < 0.15:
            return col("b")
        if roll < 0.2:
            return Lit(None, "boolean")
        name, literal = rng.choice([("i", Lit(1, "int")), ("d", Lit(0.0, "double")), ("d", Lit(math.nan, "double")),
                                    ("d", Call("*", (col("d"), Lit(1e300, "double")), ("double",) * 2, "double"))])
        return Call(rng.choice(["<", "<=", "=", "<>", ">", ">="]), (col(name), literal), (KEYS[name],) * 2, "boolean")

    atoms = []
    for _ in range(rng.randint(1, 5)):
        vars_ = rng.choice([None, (0,), (1,), (0, 2)])
        roll = rng.random()
        if roll < 0.4:
            name = rng.choice(list(KEYS))
            agg = Agg("count", vars_, (col(name),), (KEYS[name],), True, None, "bigint")
        elif roll < 0.7:
            fn = rng.choice(["count_if", "bool_and", "bool_or"])
            agg = Agg(fn, vars_, (condition(),), ("boolean",), False, None, "bigint" if fn == "count_if" else "boolean")
        elif roll < 0.85:
            plus = Call("+", (col("i"), Lit(3, "int")), ("int", "int"), "int")
            agg = Agg("sum", vars_, (plus,), ("bigint",), False, condition(), "bigint")
        else:  # (a double expression: NaN, infinities, -0.0 through it)
            fn = rng.choice(["sum", "avg", "min", "max"])
            arg = Call(rng.choice(["-", "*"]), (col("d"), rng.choice([Lit(1.5, "double"), col("d")])),
                       ("double",) * 2, "double")
            agg = Agg(fn, vars_, (arg,), ("double",), False, None, "double")
        atoms.append(Atom(agg, rng.random() < 0.5))
    return atoms


@pytest.mark.parametrize("mode", list(RowsMode)[:4])
def test_distinct_keys_and_null_logic_are_the_row_folds(mode, monkeypatch):
    """COUNT(DISTINCT c) of strings (binary collation; UTF8_LCASE left to the row fold), dates,
    timestamps, decimals, binary, booleans; conditions with NULLs under AND / OR / NOT (COUNT_IF,
    BOOL_AND / BOOL_OR, FILTER), comparisons and aggregates of doubles with NaN, infinities and
    -0.0: the same values both ways, and vectorized wherever no UTF8_LCASE string is read."""
    rng = random.Random(28)
    for case in range(200):
        long = rng.random() < 0.05
        size = 700 if long else rng.randint(1, 40)
        values, atoms, ansi = _keyed_values(rng, size), _null_atoms(rng), rng.random() < 0.5
        matches = random_matches(rng, size, mode is RowsMode.ALL_WITH_UNMATCHED, long)
        vector, per_match, folded = _both(atoms, mode, values, size, matches, ansi, monkeypatch)
        assert same(vector, per_match), (case, atoms, matches, values)
        lcase = sum(a.expr.args[0] == Col("l", KEYS["l"]) for a in atoms)
        assert folded == lcase, (case, atoms)
