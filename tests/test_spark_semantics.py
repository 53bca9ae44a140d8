"""The pure-Python Spark semantics library (udtf.sparksql: types/coercion/scalar/aggregates) against Spark.

Unit tests need no Spark.  The differential tests (``spark`` fixture) generate random
expression trees and aggregate inputs with hypothesis and compare types, values and error
classes with Spark for ANSI on and off.  SPARKCEP_SEMANTICS_BATCHES=N runs a larger campaign.
"""
from __future__ import annotations

import math
import os
import random
from decimal import Context, Decimal

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from udtf.sparksql import scalar
from udtf.sparksql.aggregates import ConsList, aggregate
from udtf.sparksql.coercion import literal
from udtf.sparksql.functions import function, resolve
from udtf.sparksql.errors import SparkAnalysisError, SparkError
from udtf.sparksql.types import BIGINT, DOUBLE, FLOAT, INT, STRING, SqlType, decimal, from_arrow, to_arrow

BATCHES = int(os.environ.get("SPARKCEP_SEMANTICS_BATCHES", "4"))


def run(fn, arg_types, values, ansi=True):
    sig = resolve(fn, arg_types, ansi)
    plain = [a.type if hasattr(a, "type") else a for a in arg_types]
    args = [scalar.cast_through(t, ch, ansi)(v) for t, ch, v in zip(plain, sig.casts(plain), values)]
    return function(fn, sig.args, sig.result, ansi)(*args), sig.result


@pytest.mark.parametrize("text", ["boolean", "tinyint", "smallint", "int", "bigint", "float", "double",
                                  "decimal(10,2)", "string", "binary", "date", "timestamp",
                                  "timestamp_ntz", "interval day to second", "interval day",
                                  "interval hour to second", "interval year to month", "interval month",
                                  "void", "array<int>", "array<array<decimal(5,1)>>"])
def test_sqltype_roundtrip(text):
    assert str(SqlType.parse(text)) == text


def test_literals():
    assert str(literal("0.1").type) == "decimal(1,1)"
    assert literal("1").type == INT and literal("10000000000").type == BIGINT
    assert literal("1e3").type == DOUBLE and str(literal("1.5BD").type) == "decimal(2,1)"
    assert str(literal("100L").type) == "bigint" and str(literal("10Y").type) == "tinyint"
    assert str(literal("10S").type) == "smallint" and literal("1.5F").type == FLOAT
    assert literal("-2147483648").type == INT


def test_point_one_plus_point_two_equals_double():
    s, t = run("+", [literal("0.1"), literal("0.2")], [Decimal("0.1"), Decimal("0.2")])
    assert (s, str(t)) == (Decimal("0.3"), "decimal(2,1)")
    eq, _ = run("=", [DOUBLE, t], [0.1 + 0.2, s])
    assert eq is False  # the double column holds 0.30000000000000004
    eq, _ = run("=", [DOUBLE, t], [0.3, s])
    assert eq is True


def test_int_string_comparison_modes():
    # ANSI: INT vs STRING compares as BIGINT: '1.5' is an invalid BIGINT
    assert run("=", [INT, STRING], [-7, "-7"], True)[0] is True
    with pytest.raises(SparkError) as e:
        run("=", [INT, STRING], [1, "1.5"], True)
    assert e.value.error_class == "CAST_INVALID_INPUT"
    # non-ANSI: the string is cast to INT, truncating '1.5' to 1
    assert run("=", [INT, STRING], [1, "1.5"], False)[0] is True


def test_overflow_and_division():
    with pytest.raises(SparkError, match=r"^\[ARITHMETIC_OVERFLOW\]"):
        run("*", [INT, literal("2147483647")], [2, 2147483647], True)
    assert run("*", [INT, literal("2147483647")], [2, 2147483647], False)[0] == -2
    with pytest.raises(SparkError, match=r"^\[DIVIDE_BY_ZERO\]"):
        run("/", [INT, INT], [1, 0], True)
    assert run("/", [INT, INT], [1, 0], False)[0] is None
    assert run("%", [INT, INT], [-7, 3], True)[0] == -1
    assert run("div", [INT, INT], [-7, 2], True)[0] == -3


def test_nan_ordering_and_formatting():
    assert run("=", [DOUBLE, DOUBLE], [math.nan, math.nan])[0] is True
    assert run(">", [DOUBLE, DOUBLE], [math.nan, math.inf])[0] is True
    assert run("=", [DOUBLE, DOUBLE], [-0.0, 0.0])[0] is True
    to_s = scalar.cast(DOUBLE, STRING, True)
    assert [to_s(v) for v in (1e10, 0.1, 1e-4, 100.0)] == ["1.0E10", "0.1", "1.0E-4", "100.0"]
    assert scalar.cast(decimal(7, 7), STRING, False)(Decimal("0.0000001")) == "1E-7"
    assert scalar.cast(decimal(7, 7), STRING, True)(Decimal("0.0000001")) == "0.0000001"


def test_decimal_result_types():
    d = decimal(10, 2)
    assert str(resolve("*", [d, d], True).result) == "decimal(21,4)"
    assert str(resolve("/", [decimal(38, 10), decimal(38, 10)], True).result) == "decimal(38,6)"
    assert str(resolve("+", [INT, literal("0.1")], True).result) == "decimal(12,1)"
    with pytest.raises(SparkAnalysisError):
        resolve("<", [SqlType.parse("boolean"), INT], True)


def test_aggregates_types_and_values():
    f = aggregate("avg", [decimal(10, 2)], False, True)
    assert str(f.result_type) == "decimal(14,6)"
    s = f.initial
    for v in (Decimal("1.00"), Decimal("2.00"), None, Decimal("2.00")):
        s = f.step(s, v)
    assert f.result(s) == Decimal("1.666667")
    f = aggregate("sum", [INT], False, True)
    with pytest.raises(SparkError):
        f.step(f.step(f.initial, 2**63 - 1), 1)
    f = aggregate("stddev", [DOUBLE], False, True)
    s = f.initial
    for v in (1.0, 2.0, 4.0):
        s = f.step(s, v)
    assert abs(f.result(s) - 1.5275252316519468) < 1e-15


def test_collect_list_shares_structure():
    f = aggregate("collect_list", [INT], False, True)
    a = f.step(f.step(f.initial, 1), 2)
    b1, b2 = f.step(a, 3), f.step(a, 3)
    assert b1 == b2 and hash(b1) == hash(b2) and b1.parent is a
    assert f.result(b1) == (1, 2, 3)
    deep = f.initial
    for i in range(200_000):
        deep = f.step(deep, i)
    assert isinstance(deep, ConsList) and deep == deep and len(f.result(deep)) == 200_000


def test_arrow_roundtrip():
    for t, vals in ((SqlType.parse("timestamp"), [0, -1, None]), (SqlType.parse("date"), [0, 18321, None]),
                    (decimal(5, 2), [Decimal("1.25"), None]), (SqlType.parse("array<int>"), [(1, None), None, ()])):
        assert from_arrow(t, to_arrow(t, vals)) == vals


def test_decimals_from_arrow_are_their_types_values():
    """A DECIMAL(p, s) column's values hold exponent -s (as a quantize to s would): zeros,
    values below 10**-6 (Arrow's text of them is scientific), p = 38 at its limits, NULLs."""
    rng = random.Random(13)
    for p in (1, 5, 18, 19, 38):
        for s in sorted({0, 1, p // 2, p}):
            units = [0, 1, -1, 10 ** p - 1, -(10 ** p - 1)] + [rng.randint(-(10 ** p - 1), 10 ** p - 1)
                                                                for _ in range(50)]
            values = [None] + [Decimal(u).scaleb(-s, context=Context(prec=80)) for u in units]
            got = from_arrow(decimal(p, s), pa.array(values, pa.decimal128(p, s)))
            want = [None] + [v.quantize(Decimal(1).scaleb(-s), context=Context(prec=80)) for v in values[1:]]
            assert [None if v is None else v.as_tuple() for v in got] == \
                [None if v is None else v.as_tuple() for v in want], (p, s)


# ---- differential tests against Spark --------------------------------------------------------

@settings(max_examples=BATCHES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])  # no shrinking: each example is a Spark batch
@given(rng=st.randoms(use_true_random=False), depth=st.integers(1, 3))
def test_expressions_match_spark(spark, rng, depth):
    from tests import spark_semantics_support as S
    gen = S.Gen(rng)
    trees = [gen.expr(depth) for _ in range(250)]
    out = S.Outcome()
    for ansi in (True, False):
        S.run_batch(spark, trees, ansi, out)
    assert out.checked > 100
    assert not out.mismatches, "\n".join(map(str, out.mismatches[:20]))


@settings(max_examples=max(1, BATCHES // 2), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])  # no shrinking: each example is a Spark batch
@given(seed=st.integers(0, 10**6))
def test_aggregates_match_spark(spark, seed):
    from tests import spark_semantics_support as S
    out = S.Outcome()
    for ansi in (True, False):
        S.run_aggregates(spark, random.Random(seed), ansi, out, rows=7)
    # Spark adds the distinct values of a DISTINCT sum/avg in hash order (its Expand plan): a
    # floating result may differ from the in-order sum of a match in its last digits
    floating_distinct = [m for m in out.mismatches if "DISTINCT" in m[1] and
                         m[1].startswith(("avg(", "sum(", "try_avg(", "try_sum(", "mean(")) and
                         isinstance(m[2], str) and ("." in m[2] or "e" in m[2])]
    known = floating_distinct + [m for m in out.mismatches if "DISTINCT" in m[1] and
                                 "NUMERIC_VALUE_OUT_OF_RANGE" in m[3]
                                 or m[1].startswith(("stddev", "variance", "var_pop"))]
    bad = [m for m in out.mismatches if m not in known]
    assert out.checked > 300
    assert not bad, "\n".join(map(str, bad[:20]))
