"""The emitter (every atom over all the matches of a flush at once, with numpy) against a
brute-force oracle that evaluates each output row's atoms from its match's rows."""
import datetime
import math
import random

import numpy as np
import pyarrow as pa
import pytest

from udtf.emit import Emitter
from udtf.errors import MatchRecognizeError
from udtf.expr import Agg, Call, Cast, Classifier, Col, FactTable, Lit, MatchNumber, Nav, NavMode, compile_row, fold_of
from udtf.match import MatchBlock
from udtf.plan import Atom, RowsMode
from udtf.rows import Match, MatchKind, Unmatched, unmatched

FIRST, LAST = NavMode.FIRST, NavMode.LAST
NAMES = ["A", "B", "C"]


def agg(fn, vars_, column=None, type_=None, result=None, distinct=False):
    args = () if column is None else (Col(column, type_),)
    return Agg(fn, vars_, args, () if column is None else (type_,), distinct, None, result or type_ or "bigint")


TYPES = {"x": "bigint", "d": "double", "s": "string", "i": "int", "b": "boolean"}


def by_agg(fn, vars_, value, order):
    """``fn(value, order)``: MAX_BY / MIN_BY."""
    return Agg(fn, vars_, (Col(value, TYPES[value]), Col(order, TYPES[order])), (TYPES[value], TYPES[order]),
               False, None, TYPES[value])


def widened(column, target):
    """``CAST(column AS target)``, a cast that cannot fail."""
    return Cast(Col(column, TYPES[column]), TYPES[column], (target,))


def condition(column, type_, op, value):
    """``column op value`` (a BOOLEAN row expression)."""
    return Call(op, (Col(column, type_), Lit(value, type_)), (type_, type_), "boolean")


def arithmetic(op, left, right, type_):
    """``left op right`` (a row expression of ``type_``)."""
    return Call(op, (left, right), (type_, type_), type_)


def boolean_agg(fn, vars_, arg):
    return Agg(fn, vars_, (arg,), ("boolean",), False, None, "bigint" if fn == "count_if" else "boolean")


def random_atoms(rng):
    var_set = lambda: rng.choice([None, (0,), (1,), (0, 2), (1, 2)])
    atoms = []
    for _ in range(rng.randint(1, 8)):
        roll, final = rng.random(), rng.random() < 0.5
        if roll < 0.3:
            expr = Nav(None, None, var_set(), rng.choice([FIRST, LAST]), rng.randint(0, 2), rng.randint(-2, 2))
        elif roll < 0.4:
            expr = Classifier(var_set(), rng.choice([FIRST, LAST]), rng.randint(0, 1), rng.randint(-2, 2))
        elif roll < 0.45:
            expr = MatchNumber()
        else:
            v = var_set()
            expr = rng.choice([
                agg("count", v), agg("count", v, "x", "bigint"), agg("count", v, "s", "string"),
                agg("sum", v, "x", "bigint"), agg("sum", v, "d", "double"), agg("avg", v, "d", "double"),
                agg("min", v, "d", "double"), agg("max", v, "d", "double"), agg("min", v, "x", "bigint"),
                agg("max", v, "x", "bigint", distinct=True), agg("max", v, "s", "string"),
                agg("collect_list", v, "x", "bigint", "array<bigint>"),
                agg("collect_list", v, "s", "string", "array<string>"),
                Agg("collect_list", v, (widened("i", "string"),), ("string",), False, None, "array<string>"),
                by_agg(rng.choice(["max_by", "min_by"]), v, rng.choice("sdx"), rng.choice("ixdsb")),
                agg(rng.choice(["var_samp", "var_pop", "stddev_samp", "stddev_pop"]), v, "d", "double", "double"),
                agg(rng.choice(["skewness", "kurtosis"]), v, "d", "double", "double"),
                Agg(rng.choice(["skewness", "kurtosis"]), v, (widened("x", "double"),), ("double",), False, None,
                    "double"),
                Agg(rng.choice(["var_samp", "stddev_pop"]), v, (widened("x", "double"),), ("double",), False, None,
                    "double"),
                Agg("max_by", v, (widened("i", "bigint"), Col("x", "bigint")), ("bigint", "bigint"), True, None,
                    "bigint"),
                Agg("sum", v, (arithmetic("*", Col("x", "bigint"), widened("i", "bigint"), "bigint"),), ("bigint",),
                    False, None, "bigint"),
                Agg("avg", v, (arithmetic("-", Col("d", "double"), widened("x", "double"), "double"),), ("double",),
                    False, None, "double"),
                Agg(rng.choice(["max", "count"]), v, (arithmetic("+", Col("x", "bigint"), widened("i", "bigint"),
                                                                 "bigint"),), ("bigint",), False, None, "bigint"),
                agg(rng.choice(["sum", "count"]), v, "x", "bigint", distinct=True),
                (lambda fn: agg(fn, v, "d", "double", "bigint" if fn == "count" else "double", distinct=True))(
                    rng.choice(["sum", "avg", "count"])),
                Agg("sum", v, (Col("x", "bigint"),), ("bigint",), False, condition("d", "double", ">", 0.5), "bigint"),
                Agg("count", v, (), (), False, condition("x", "bigint", "<", 2), "bigint"),
                Agg("max_by", v, (Col("d", "double"), Col("x", "bigint")), ("double", "bigint"), False,
                    condition("i", "int", "=", 1), "double"),
                agg(rng.choice(["min", "max"]), v, "b", "boolean"),
                boolean_agg(rng.choice(["count_if", "bool_and", "bool_or"]), v, rng.choice([
                    condition("x", "bigint", "<", 2), condition("d", "double", ">", 0.5),
                    condition("i", "int", "=", 1), Col("b", "boolean")]))])
        atoms.append(Atom(expr, final))
    return atoms


def random_matches(rng, size, kinds, long=False):
    """Matches over consecutive rows (some empty, some rows excluded); ``kinds``: unmatched rows
    and timed-out matches among them."""
    matches, start, number = [], 0, 0
    while start < size:
        if kinds and rng.random() < 0.15:
            matches.append(Match(None, start, start - 1, (), MatchKind.UNMATCHED))
            start += 1
            continue
        length = rng.randint(0, 400 if long else 5)
        rows = tuple((start + k, rng.randint(0, 2), rng.random() < 0.2) for k in range(min(length, size - start)))
        timed_out = kinds and rng.random() < 0.1
        number += not timed_out
        matches.append(Match(None if timed_out else number, start, start + len(rows) - 1, rows,
                             MatchKind.TIMED_OUT if timed_out else MatchKind.MATCH))
        start += max(len(rows), 1) + rng.randint(0, 2)
    return matches


def oracle(atoms, mode, values, size, matches, ansi):
    """(sources, columns, timed_out) row by row: each atom from its match's rows up to the row."""
    out = []
    for m in matches:
        if m.kind is MatchKind.UNMATCHED:
            out.append((m.start, [None] * len(atoms), False))
            continue
        timed_out = m.kind is MatchKind.TIMED_OUT
        if mode is RowsMode.ONE or not m.rows:
            if m.rows or mode is not RowsMode.ALL_OMIT:
                out.append((m.start, [value(a, m.rows, m, values, size, ansi) for a in atoms], timed_out))
            continue
        for i, (row, _, excluded) in enumerate(m.rows):
            if not excluded:
                out.append((row, [value(a, m.rows if a.final else m.rows[:i + 1], m, values, size, ansi)
                                  for a in atoms], timed_out))
    return [r[0] for r in out], [[r[1][k] for r in out] for k in range(len(atoms))], [r[2] for r in out]


def value(atom, rows, match, values, size, ansi):
    expr = atom.expr
    if isinstance(expr, MatchNumber):
        return match.number
    if isinstance(expr, Agg):
        fold = fold_of(expr, ansi, "UTC")
        args = [compile_row(a, FactTable([], values, NAMES, ansi)) for a in expr.args]
        keep = (lambda context: True) if expr.filter is None else compile_row(expr.filter, FactTable([], values, NAMES,
                                                                                                    ansi))
        state = fold.initial
        for row, var, _ in rows:
            if (expr.vars is None or var in expr.vars) and keep((row, var, match.number)) is True:
                state = fold.step(state, *(a((row, var, match.number)) for a in args))
        return fold.result(state)
    # FIRST counts over the whole match; a CLASSIFIER navigation reads any row of it
    read = [r for r in (match.rows if expr.mode is FIRST else rows) if expr.vars is None or r[1] in expr.vars]
    if len(read) <= expr.logical:
        return None
    row, var, _ = read[expr.logical if expr.mode is FIRST else -1 - expr.logical]
    target = row + expr.physical
    if not 0 <= target < size:
        return None
    if isinstance(expr, Nav):
        return target
    labels = {r: NAMES[v] for r, v, _ in match.rows}
    return labels.get(target)


def emitted(emitter, matches):
    """The output as (sources, columns, timed_out) lists, or the error."""
    try:
        out = emitter.emit(matches)
    except MatchRecognizeError as e:
        return str(e)
    listed = lambda c: c.to_pylist() if hasattr(c, "to_pylist") else c.tolist() if hasattr(c, "tolist") else c
    unchunk = lambda chunks: [v for c in chunks for v in listed(c)]
    return unchunk(out.sources), [unchunk(c) for c in out.columns], unchunk(out.timed_out)


def same(a, b) -> bool:
    """Equal, NaN = NaN and -0.0 told from 0.0."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b and type(a) is type(b)


def random_values(rng, size):
    big = rng.random() < 0.1  # (sums that overflow: ANSI raises, else they wrap)
    pick = lambda choices: [None if rng.random() < 0.15 else rng.choice(choices) for _ in range(size)]
    full = lambda choices: [rng.choice(choices) for _ in range(size)]  # (some without NULL: vectorized)
    some = lambda choices: (pick if rng.random() < 0.5 else full)(choices)
    return {"x": some([2 ** 62, -2 ** 62, 2 ** 63 - 1] if big else list(range(-5, 6))),
            "d": some([0.0, -0.0, math.nan, 1.5, -2.25, 0.1, 1e300, math.inf] if rng.random() < 0.5 else
                      [1.5, -2.25, 0.1] if rng.random() < 0.8 else [0.0, 1e-120]),  # (a moment underflows)
            "s": some(["a", "b", "c"]), "i": some([0, 1, 2]), "b": some([True, False])}


@pytest.mark.parametrize("mode", list(RowsMode)[:4])
def test_emitter_matches_oracle(mode):
    """Navigations with offsets, CLASSIFIER, MATCH_NUMBER and aggregates (vectorized and not;
    over expressions, with FILTER, DISTINCT; NULLs, NaN, -0.0, overflow) RUNNING and FINAL, over empty, excluded, unmatched and
    timed-out matches, as the oracle evaluates them row by row."""
    rng = random.Random(7)
    for case in range(300):
        long = rng.random() < 0.015  # (matches longer than emit_folds.LONGEST)
        size = 900 if long else rng.randint(1, 30)
        values, atoms, ansi = random_values(rng, size), random_atoms(rng), rng.random() < 0.5
        matches = random_matches(rng, size, mode is RowsMode.ALL_WITH_UNMATCHED, long)
        if mode is RowsMode.ONE:
            matches = [m._replace(rows=tuple((r, v, False) for r, v, _ in m.rows)) for m in matches]
        emitter = Emitter(atoms, mode, NAMES, values, lambda: size, ansi)
        try:
            expected = oracle(atoms, mode, values, size, matches, ansi)
        except Exception as e:  # (the error: the emitter's names the construct, the oracle's is Spark's)
            expected = str(e)
        got = emitted(emitter, matches)
        if isinstance(expected, str):
            assert isinstance(got, str) and expected in got, (case, atoms, matches)
        else:
            assert same(got, expected), (case, atoms, matches, values)
        if mode is RowsMode.ALL_WITH_UNMATCHED:  # the same rows as the matchers give them: in runs
            runs = []
            for m in matches:
                if m.kind is MatchKind.UNMATCHED:
                    unmatched(runs, m.start, m.start + 1)
                else:
                    runs.append(m)
            runs = [Unmatched(m.indexes()) if isinstance(m, Unmatched) and k % 2 else m for k, m in enumerate(runs)]
            assert same(emitted(emitter, runs), got), (case, atoms, runs)


@pytest.mark.parametrize("mode", [RowsMode.ONE, RowsMode.ALL_SHOW])
def test_match_blocks_give_their_matches_rows(mode):
    """Matches of a flat sequence as a ``MatchBlock`` (rows per element; atoms computed from
    those counts, or from the block's rows) give what their ``Match`` tuples give."""
    rng = random.Random(5)
    values = {"x": list(range(200)), "d": [0.5] * 200, "s": ["a"] * 200, "i": [1] * 200, "b": [True] * 200}
    for _ in range(200):
        elements = tuple(rng.randint(0, 2) for _ in range(rng.randint(1, 4)))  # (a variable may recur)
        starts, ends, takes, start = [], [], [], 0
        for _ in range(rng.randint(0, 6)):
            counts = [rng.randint(0, 3) for _ in elements]
            if not sum(counts):
                counts[rng.randrange(len(counts))] = 1
            starts.append(start)
            ends.append(start + sum(counts) - 1)
            takes.append(counts)
            start += sum(counts) + rng.randint(0, 2)
        size = start + 2
        block = MatchBlock(elements, np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64),
                           np.array(takes, dtype=np.int64).reshape(len(starts), len(elements)), rng.randint(1, 9))
        atoms = random_atoms(rng)
        emitter = Emitter(atoms, mode, NAMES, values, lambda: size)
        expected = oracle(atoms, mode, values, size, block.matches(), True)
        assert same(emitted(emitter, [block]), expected)
        assert same(emitted(emitter, block.matches()), expected)
        twice = emitted(emitter, [*block.matches(), block])  # (one flush: spans of both joined)
        assert same(twice, tuple([a + a for a in expected[:1]] + [[c + c for c in expected[1]]] + [expected[2] * 2]))


def test_atom_columns_take_arrow_chunks_of_their_type_and_convert_others():
    """An aggregate's numbers come out as Arrow chunks (int64, double, boolean); a column of
    another type (an INT's MIN, a DATE's MAX) is built from their Python values."""
    from udtf.arrow import atom_column
    from udtf.sparksql.types import SqlType

    t = lambda text: SqlType.parse(text)
    chunks = [pa.array(np.array([1, 2])), [3, None], pa.array(np.array([4]), mask=np.array([True]))]
    assert atom_column(t("bigint"), chunks, 1).to_pylist() == [1, 2, 3, None, None, None]
    column = atom_column(t("int"), chunks, 0)
    assert column.type == pa.int32() and column.to_pylist() == [1, 2, 3, None, None]
    column = atom_column(t("double"), [pa.array(np.array([0.5, -0.0, math.nan]))], 2)
    assert column.type == pa.float64() and same(column.to_pylist(), [0.5, -0.0, math.nan, None, None])
    assert atom_column(t("date"), [pa.array(np.array([0, 1]))], 0).to_pylist() == \
        [datetime.date(1970, 1, 1), datetime.date(1970, 1, 2)]


@pytest.mark.parametrize("type_, chunks, python", [
    ("int", [pa.array([1, None, -2 ** 31]), [5, None]], [1, None, -2 ** 31, 5, None]),
    ("tinyint", [pa.array([-128, 127]), [None]], [-128, 127, None]),
    ("date", [pa.array([0, None, -719162]), [3]], [0, None, -719162, 3]),
    ("timestamp", [pa.array([1, 253402300799999999]), [None, -1]], [1, 253402300799999999, None, -1]),
    ("timestamp_ntz", [pa.array([-5]), [7]], [-5, 7]),
    ("interval day to second", [pa.array([86400000000, None]), [1]], [86400000000, None, 1]),
    ("float", [pa.array([0.1, float("nan"), -0.0, None]), [0.5]], [0.1, float("nan"), -0.0, None, 0.5]),
    ("bigint", [[1, None], pa.array([2])], [1, None, 2]),
    ("array<timestamp>", [pa.array([[0, 1], None], pa.list_(pa.timestamp("us", tz="UTC"))), [None, (5,)]],
     [(0, 1), None, None, (5,)]),
    ("string", [pa.array(["A", None]), ["B"]], ["A", None, "B"])])
def test_atom_chunks_reach_arrow_as_their_python_values_do(type_, chunks, python):
    """``atom_column`` converts each chunk alone (Arrow chunks of numbers cast to the atom's
    Arrow type, chunks of its own type kept, Python values through ``to_arrow``): the column
    the Python values of them all give, NULLs after them included."""
    from udtf.arrow import atom_column
    from udtf.sparksql.types import SqlType, to_arrow

    t = SqlType.parse(type_)
    got, expected = atom_column(t, chunks, 2), to_arrow(t, python + [None, None])
    assert got.type == expected.type and same(got.to_pylist(), expected.to_pylist())
