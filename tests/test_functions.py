"""The function registry (``udtf.sparksql.functions``) and sql_ext's mapping from sqlglot's nodes
to it (``sql_ext.compiler.calls``) agree: every name the mapping produces is registered, every registered
function is reached by some node, and the functions kept as written parse as written."""
from __future__ import annotations

import pytest
from sqlglot import exp

from sql_ext.compiler import calls
from sql_ext.compiler.parse import parse
from udtf.sparksql import functions


def _expression(sql: str):
    return parse(f"SELECT {sql} FROM t")[0].expressions[0]


def test_every_mapped_name_is_registered():
    for name in calls.NAMES:
        assert functions.lookup(name), name


def test_every_registered_function_is_reachable_from_a_node():
    reached = {functions.lookup(name).name for name in calls.NAMES}
    # (legacy_size: the size a call compiles to under spark.sql.legacy.sizeOfNull without ANSI)
    assert reached | {"legacy_size"} == {f.name for f in functions.FUNCTIONS}


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


# ---- aggregates: sql_ext.compiler.rules.aggregate_call maps nodes to the aggregate registry -------------

def _aggregate_calls():
    from udtf.sparksql import aggregates
    for agg in aggregates.AGGREGATES:
        fewest = max(1, sum(not p.optional for p in agg.params))
        for name in (agg.name, *agg.aliases):
            for n in sorted({fewest, len(agg.params)}):
                yield agg.name, name, n


@pytest.mark.parametrize("registered, name, n", list(_aggregate_calls()))
def test_every_registered_aggregate_is_reached_with_its_arguments_in_order(registered, name, n):
    """Whatever node sqlglot makes of ``name(a0, ..., DISTINCT?)``, ``aggregate_call`` finds the
    registered aggregate and its arguments as written, DISTINCT included."""
    from sql_ext.compiler.rules import aggregate_call
    from udtf.sparksql import aggregates
    if aggregates.lookup(registered).ordered:  # the key of WITHIN GROUP first, DESC last (always)
        n = len(aggregates.lookup(registered).params)
        found = aggregate_call(_expression(f"{name}({', '.join(f'a{i}' for i in range(1, n - 1))}) "
                                           "WITHIN GROUP (ORDER BY a0 DESC)"))
        assert found is not None and aggregates.lookup(found[0]).name == registered
        assert [a.sql() for a in found[1]] == [f"a{i}" for i in range(n - 1)] + ["TRUE"]
        return
    for distinct in ("", "DISTINCT ") if name != "any" else ("",):  # (any(DISTINCT x): a parse error)
        written = [f"a{i}" for i in range(n)]
        found = aggregate_call(_expression(f"{name}({distinct}{', '.join(written)})"))
        assert found is not None, name
        got, args, is_distinct, _, _ = found
        assert aggregates.lookup(got).name == registered
        assert [a.sql() for a in args] == written and is_distinct == bool(distinct)


def test_every_refused_aggregate_is_recognized_as_one():
    from sql_ext.compiler.rules import aggregate_call
    from udtf.sparksql import aggregates
    for name in aggregates.REFUSED:
        found = aggregate_call(_expression(f"{name}(a0)"))
        assert found is not None and found[0] in aggregates.REFUSED, name


def test_trino_aggregate_names_map_to_registered_aggregates():
    from sql_ext.compiler.rules import aggregate_call
    from udtf.sparksql import aggregates
    for trino, spark in calls.TRINO_AGGREGATES.items():
        found = aggregate_call(_expression(f"{trino}(a0)"))
        assert found is not None and aggregates.lookup(found[0]).name == aggregates.lookup(spark).name
