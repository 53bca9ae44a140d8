"""The rewrite never changes the meaning of the SQL it keeps or re-emits.

A corpus of Spark literal and syntax forms (quotes doubled and escaped, raw strings, unicode,
hex, typed literals, intervals, numeric suffixes, comments, hints, backquoted names with
backquotes) is embedded in statements with a MATCH_RECOGNIZE -- in MEASURES, in DEFINE, in the
input subquery and in the outer query -- and each value is compared with the same expression
evaluated by plain ``spark.sql``.
"""
from __future__ import annotations

import pytest

from sql_support import at, mr_spark, rows, view  # noqa: F401  (fixture)
from udtf.errors import MatchRecognizeError

FORMS = [
    "'O''Brien'", '"x""y"', "'it''s' 'x'", "'a\\'b'", "'a\"\"b'", '"a\'\'b"', "r'a\\nb'",
    'R"c:\\dir"', "'tab\\there'", "'\\u00e9t\\u00e9'", "'日本語'", "'back\\\\slash'", "''",
    "X'0A1B'", "DATE '2020-02-29'", "TIMESTAMP '2020-01-01 10:00:00'",
    "TIMESTAMP_NTZ '2020-01-01 10:00:00'", "INTERVAL '1 2:03:04' DAY TO SECOND", "INTERVAL 90 MINUTES",
    "INTERVAL '1-2' YEAR TO MONTH", "1e3", "1.5BD", "100L", "10Y", "7S", "1.5D", "1.25F", "0.1 + 0.2",
    "-0.0", "12345678901234567890", "CAST('1.50' AS DECIMAL(5,2))", "'a' || 'b'", "/* c */ 1",
    "concat_ws('-', 'a', 'b')", "array(1, 2)[1]", "named_struct('a', 1).a", "IF(1 < 2, 'y', 'n')",
    "CASE WHEN 1 = 1 THEN 'one' END", "2 BETWEEN 1 AND 3", "'abc' LIKE 'a%'", "'abc' RLIKE '^a'",
]


# PySpark cannot collect year-month intervals (YearMonthIntervalType.fromInternal): those
# forms are checked in DEFINE only
COLLECTED = [f for f in FORMS if "YEAR TO MONTH" not in f]


@pytest.fixture(scope="module")
def table(mr_spark):
    view(mr_spark, "fidelity", "k int, t int, `a``b` int", [(1, 1, 5), (1, 2, 6), (1, 3, 7)])
    return mr_spark


def expected(spark) -> list:
    return list(spark.sql("SELECT " + ", ".join(f"{f} AS v{i}" for i, f in enumerate(COLLECTED))).collect()[0])


def test_forms_in_measures(table):
    measures = ", ".join(f"{f} AS v{i}" for i, f in enumerate(COLLECTED))
    got = rows(table, f"""SELECT * FROM fidelity MATCH_RECOGNIZE (
        PARTITION BY k ORDER BY t MEASURES {measures} PATTERN (A+) DEFINE A AS t > 0) AS m""")
    assert [list(r[1:]) for r in got] == [expected(table)]


def test_forms_in_the_input_subquery_and_the_outer_query(table):
    values = ", ".join(f"{f} AS v{i}" for i, f in enumerate(COLLECTED))
    outer = " AND ".join(f"m.v{i} <=> ({f})" for i, f in enumerate(COLLECTED))
    measures = ", ".join(f"LAST(A.v{i}) AS v{i}" for i in range(len(COLLECTED)))
    got = rows(table, f"""SELECT /*+ REPARTITION(1) */ m.* FROM (SELECT k, t, {values} FROM fidelity) AS s
        MATCH_RECOGNIZE (PARTITION BY k ORDER BY t MEASURES {measures} PATTERN (A+) DEFINE A AS t > 0) AS m
        WHERE {outer} -- a comment ' with a quote""")
    assert [list(r[1:]) for r in got] == [expected(table)]


@pytest.mark.parametrize("index", range(len(FORMS)))
def test_each_form_in_define(table, index):
    """DEFINE A AS <column holding Spark's value> <=> (form): all three rows match."""
    form = FORMS[index]
    table.sql(f"SELECT k, t, {form} AS e FROM fidelity").createOrReplaceTempView("fidelity_expected")
    got = rows(table, f"""SELECT * FROM fidelity_expected MATCH_RECOGNIZE (
        PARTITION BY k ORDER BY t MEASURES COUNT(*) AS n PATTERN (A+) DEFINE A AS e <=> ({form})) AS m""")
    assert got == [(1, 3)], form


def test_backquoted_names_with_backquotes(table):
    got = rows(table, """SELECT * FROM fidelity MATCH_RECOGNIZE (
        PARTITION BY k ORDER BY t MEASURES LAST(`a``b`) AS `x``y`, SUM(A.`a``b`) AS s
        PATTERN (A+) DEFINE A AS `a``b` > 4) AS m""")
    assert got == [(1, 7, 18)]
    assert table.sql("SELECT * FROM fidelity MATCH_RECOGNIZE (PARTITION BY k ORDER BY t "
                     "MEASURES LAST(`a``b`) AS `x``y` PATTERN (A+) DEFINE A AS t > 0) AS m").columns == ["k", "x`y"]


def test_brackets_after_a_column_named_array_or_list_are_subscripts(table):
    """Spark has no ``ARRAY[...]`` constructor: ``array[i]`` (``A.array[i]``, ```array`[i]``)
    is the element i of a column named ``array``, as in plain Spark; sqlglot read them as
    ``array(i)`` (the qualifier dropped), whose values and types differ."""
    view(table, "arrays", "k int, t int, `array` ARRAY<INT>, list ARRAY<STRING>",
         [(1, 1, [5, 1], ["x", "y"]), (1, 2, [7, 0], ["z", "w"]), (1, 3, [9, 1], ["u", "v"])])
    expected = rows(table, "SELECT t, array[0], `array`[t % 2], list[1], size(array(array[1] + 1)) "
                           "FROM arrays ORDER BY t")
    got = rows(table, """SELECT t, a0, at, l1, s FROM arrays MATCH_RECOGNIZE (
        PARTITION BY k ORDER BY t
        MEASURES array[0] AS a0, `array`[t % 2] AS at, list[1] AS l1, size(array(A.array[1] + 1)) AS s
        ALL ROWS PER MATCH PATTERN (A | B) DEFINE A AS A.array[1] = 1, B AS `array`[1] = 0) AS m
        WHERE array[0] > 0 ORDER BY t""")
    assert got == expected and len(got) == 3
    sql = "SELECT * FROM arrays MATCH_RECOGNIZE (ORDER BY t PATTERN (A) DEFINE A AS t IN (ARRAY[1, 2])) AS m"
    with pytest.raises(MatchRecognizeError) as info:
        table.sql(sql)
    assert (info.value.line, info.value.column) == at(sql, ", 2]")
