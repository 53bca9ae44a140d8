"""The function registry (``udtf.sparksql.functions``) and sql_ext's mapping from sqlglot's nodes
to it (``sql_ext.calls``) agree: every name the mapping produces is registered, every registered
function is reached by some node, and the functions kept as written parse as written."""
from __future__ import annotations

import pytest
from sqlglot import exp

from sql_ext import calls
from sql_ext.parse import parse
from udtf.sparksql import functions


def _expression(sql: str):
    return parse(f"SELECT {sql} FROM t")[0].expressions[0]


def test_every_mapped_name_is_registered():
    for name in calls.NAMES:
        assert functions.lookup(name), name


def test_every_registered_function_is_reachable_from_a_node():
    reached = {functions.lookup(name).name for name in calls.NAMES}
    assert reached == {f.name for f in functions.FUNCTIONS}


@pytest.mark.parametrize("name, counts", sorted(calls.AS_WRITTEN.items()))
def test_functions_kept_as_written_parse_as_written(name, counts):
    n = (counts or (1,))[0]
    node = _expression(f"{name}({', '.join(f'a{i}' for i in range(n))})")
    assert isinstance(node, exp.Anonymous) and calls.call(node) == (name, list(node.expressions))


@pytest.mark.parametrize("sql, name", [
    ("x IS NULL", "is_null"), ("x IS NOT NULL", "is_not_null"), ("x IN (1, 2)", "in"),
    ("x BETWEEN 1 AND 2", "between"), ("CASE WHEN x THEN 1 ELSE 2 END", "case"), ("IF(x, 1, 2)", "if"),
    ("LOG(x)", "ln"), ("LN(x)", "ln"), ("LOG(2, x)", "logarithm"), ("LOG10(x)", "log10"),
    ("TRIM(x)", "trim"), ("TRIM(BOTH FROM x)", "trim"), ("LTRIM(x)", "ltrim"), ("RTRIM(x)", "rtrim"),
    ("TRIM(LEADING FROM x)", "ltrim"), ("TRIM(TRAILING FROM x)", "rtrim"), ("NOT x", "not"),
    ("NVL(x, 1)", "coalesce"), ("x || y", "concat"), ("CEILING(x)", "ceil"), ("MOD(x, 2)", "%"),
])
def test_nodes_call_the_function_spark_calls(sql, name):
    found = calls.call(_expression(sql))
    assert found is not None and functions.lookup(found[0]).name == name


def test_trim_with_characters_is_not_a_registered_call():
    # Spark's TRIM(BOTH 'x' FROM s) is another function (StringTrim with trimStr)
    assert calls.call(_expression("TRIM(BOTH 'x' FROM s)")) is None
