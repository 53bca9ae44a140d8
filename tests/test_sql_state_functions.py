"""LIKE / ILIKE (ESCAPE, NOT), array_join, element_at / try_element_at (of arrays and maps),
array_max / array_min, size / cardinality, array_contains, array_position, the array(...)
constructor, [NOT] LIKE / ILIKE ANY / ALL, subscripts (``a[i]``, ``m[k]``, ``get``), contains /
startswith / endswith / replace (UTF8_BINARY and UTF8_LCASE), instr / locate, lpad / rpad,
left / right and nanvl over match state give
what Spark gives for the same values.

The engine evaluates them where they read match state (a variable's column, an aggregate such
as ``array_agg``); each check compares that with Spark's own evaluation of the same expression
over the same values, computed in the view (``expected``): ``DEFINE Z AS CAST(E(A.x, ...) AS
STRING) <=> expected`` matches exactly when the engine's value is Spark's (as text: NaN, -0.0,
a decimal's scale and NULL are told apart).  Where Spark raises, MATCH_RECOGNIZE must raise the
same error class; where its analysis refuses, the error is at the call's line:column.  The
Trino-like shapes (a DEFINE over ``array_agg(CLASSIFIER())``, an aggregate's element, a LIKE
over a navigated string) are checked against Spark's window aggregates over the same rows.
"""
from __future__ import annotations

import datetime as dt
import random
import re
from decimal import Decimal

import pytest

from sql_support import analysis_error, at, mr_spark, rows, view  # noqa: F401  (fixture)
from spark_confs import session_confs
from tests.match_state_support import error_class

COLUMNS = ("ai array<int>, ad array<double>, ast array<string>, adec array<decimal(10,2)>, adt array<date>, "
           "ats array<timestamp>, ab array<boolean>, i int, s string, p string, d string, nr string, x double, "
           "m map<int,string>, l string collate utf8_lcase, lp string collate utf8_lcase")
NAN, INF = float("nan"), float("inf")
POOLS = {
    "ai": [None, (), (1, 2, 3), (None,), (7, None, -2), (5,), (-(1 << 31), (1 << 31) - 1, 0), (3, 3, None, 9)],
    "ad": [None, (), (1.5, NAN, -0.0), (0.0, -0.0), (-0.0, 0.0), (None, 1e20, -INF), (NAN,), (1e-5, 1e7, 12345678.9),
           (INF, NAN, None)],
    "ast": [None, (), ("a", "B", None), ("A",), ("b", "a", "ab"), ("", None, ""), ("😀", "z", "é")],
    "adec": [None, (), (Decimal("1.10"), None, Decimal("-0.50")), (Decimal("99999999.99"), Decimal("0.00"))],
    "adt": [None, (), (dt.date(2020, 2, 29), None, dt.date(1970, 1, 1)), (dt.date(1, 1, 1),)],
    "ats": [None, (), (dt.datetime(2020, 1, 1, 0, 0, 0, 500000), None), (dt.datetime(1969, 12, 31, 23, 59, 59),)],
    "ab": [None, (), (True, None, False), (False,)],
    "i": [None, 1, 2, 3, -1, -3, 4, -4, 100],  # (0: test_errors_over_match_state_are_sparks)
    "s": [None, "abc", "ABC", "a%c", "a\\b", "", "a\nc", "ǆx", "\\", "a!", "%", "😀", "A_C", "!!", "ΣΑΣ", "ab"],
    "p": [None, "a%", "%b", "_", "%", "", "a_c", "A%", "%\\%%", "a!%", "!!", "\\\\", "ǅ%", "%\n%", "__", "σας",
          "a\\_c", "%c"],
    "d": [None, ",", "", " - "],
    "nr": [None, "N", ""],
    "x": [None, NAN, -0.0, 0.0, 1.5, INF, 1e20, -2.0],
    "m": [None, {}, {1: "a", 2: None}, {-1: "z", 3: "c", 100: ""}],
    "l": [None, "", "\u0130", "i\u0307", "a\u0130b", "\u03a3\u0391\u03a3", "\u03c3\u03b1\u03c2", "\u03c2", "AbC",
          "abcABC", "\u01c5", "\u00df", "\u1e9e", "\u212a", "aaa"],
    "lp": [None, "", "i", "i\u0307", "\u0130", "\u03c3", "\u03a3", "\u03c2", "b", "BC", "\u01c6", "k", "A", "aa",
           "\u0307"],
}
# E(x, ...) with $c for a column: the engine reads A.c (match state), Spark c (the same row);
# #c: the engine reads Z.c (the current row, the same values), Spark c
EXPRESSIONS = [
    "element_at($ai, $i)", "element_at($ad, $i)", "element_at($ast, $i)", "element_at($adt, $i)",
    "element_at($ai, -1)", "element_at($ats, 1)", "try_element_at($ai, $i)", "try_element_at($ast, $i)",
    "element_at($ab, CAST(2 AS TINYINT))",
    "array_max($ai)", "array_min($ai)", "array_max($ad)", "array_min($ad)", "array_max($ast)", "array_min($ast)",
    "array_max($adec)", "array_min($adt)", "array_max($ats)", "array_min($ab)",
    "array_join($ai, $d)", "array_join($ad, ',')", "array_join($ast, $d, $nr)", "array_join($adec, '|')",
    "array_join($adt, ',')", "array_join($ats, ';', 'none')", "array_join($ab, ',', $nr)", "array_join($ai, NULL)",
    "$s LIKE $p", "$s ILIKE $p", "$s NOT LIKE $p", "$s NOT ILIKE $p", "$s LIKE $p ESCAPE '!'",
    "$s ILIKE $p ESCAPE '!'", "$s NOT LIKE $p ESCAPE '!'", "$s LIKE 'a%'", "$s LIKE '%\\\\%%'", "$s LIKE $p ESCAPE '%'",
    "$i LIKE '1%'", "array_join($ast, '') LIKE $p", "element_at($ast, 1) ILIKE 'a%'",
    "size($ai)", "cardinality($ast)", "size($m)", "size($ad) + cardinality($m)",
    "array_contains($ai, $i)", "array_contains($ad, $x)", "array_contains($ad, 0.0D)", "array_contains($ad, $i)",
    "array_contains($ast, 'a')", "array_contains($ast, $s)", "array_contains($ai, 2.0)", "array_contains($adec, 1.1)",
    "array_contains($adt, TIMESTAMP'2020-02-29 00:00:00')", "array_contains($ab, true)", "array_contains($ai, 3L)",
    "array_position($ai, $i)", "array_position($ad, $x)", "array_position($ast, $s)", "array_position($ai, NULL)",
    "array_position($adt, DATE'1970-01-01')", "array_position($ats, try_element_at($ats, -1))",
    "element_at($m, $i)", "try_element_at($m, $i)", "element_at($m, 100L)", "element_at($m, $x)",
    "array($i, $x)", "array($i, 1.5)", "array($s, $nr)", "size(array($i, NULL, $x))", "array_contains(array($i, 2), $i)",
    "array_position(array($x, 1.5D, $x), $x)", "element_at(array($s, $p), 2)", "array($ai, array(1))",
    "$s LIKE ANY ('a%', '%c')", "$s NOT LIKE ANY ('a%', '%c')", "$s LIKE ALL ('a%', '%c')", "$s NOT LIKE ALL ('a%', '_')",
    "$s ILIKE ANY ('a%', 'σας')", "$s NOT ILIKE ALL ('%B%', '')", "$i LIKE SOME ('1%', '-%')",
    "element_at($ast, 1) ILIKE ALL ('%', '_')", "array_contains(array($i + 16777216), CAST(16777216 AS FLOAT))",
    "array_position(array(CAST($i AS BIGINT) + 16777216), CAST(16777216 AS FLOAT))", "$s LIKE ANY ('%\\%%', 'a\\_c')",
    "$ai[$i]", "$ast[0]", "$ad[CAST($i AS BIGINT) + 4294967296]", "$adt[CAST($i AS TINYINT)]", "$ai[NULL]",
    "get($ai, $i)", "get($ast, CAST($i AS STRING))", "get($ad, CAST($i AS BIGINT) - 1)",
    "contains($s, $p)", "startswith($s, $p)", "endswith($s, $p)", "replace($s, $p, '<>')", "replace($s, $p)",
    "contains($i, '1')", "startswith($x, '1')", "endswith($p, NULL)", "replace($i, 1, $x)", "replace($s, 'a', $nr)",
    "contains($l, $lp)", "startswith($l, $lp)", "endswith($l, $lp)", "replace($l, $lp, '-')", "replace($l, 'A')",
    "contains($l, 'i')", "endswith($l, 'Σ')", "replace($l, $lp, $lp)",
    "nanvl($x, 0.5D)", "nanvl($x, CAST($i AS FLOAT))", "nanvl(CAST($x AS FLOAT), NULL)", "nanvl($i, $x)",
    "nanvl($x, NULL)", "nanvl($x, $x + 1)",
    "instr($s, $p)", "locate($p, $s, $i)", "locate($p, $s)", "position($p IN $s)", "locate('a', $s, NULL)",
    "instr($i, 1)", "locate($p, $s, '2')", "lpad($s, $i, $p)", "rpad($s, $i, $p)", "lpad($s, $i)", "rpad($i, 5, 0)",
    "left($s, $i)", "right($s, $i)", "left($p, '2')", "right(get($ast, 0), 1)", "lpad($l, $i, 'x')", "right($l, 2)",
    "instr($l, $lp)", "locate($lp, $l, $i)", "position('a' IN $l)",
    # an explicit collation (COLLATE) wins over the column's implicit UTF8_LCASE; these were
    # refused as INDETERMINATE_COLLATION (or "COLLATE over match state is not supported")
    "$l = 'abc' COLLATE UTF8_BINARY", "$l COLLATE UTF8_BINARY < $lp", "$lp > $l COLLATE UTF8_BINARY_RTRIM",
    "contains($l COLLATE UTF8_BINARY, $lp)", "$s COLLATE UTF8_LCASE = 'ABC'", "upper($l COLLATE UTF8_BINARY) = $lp",
    "$l IN ('AbC' COLLATE UTF8_BINARY, $lp)", "concat($l, 'x' COLLATE UTF8_BINARY) = concat($lp, 'x')",
    # ... also where the COLLATE sits in a sub-expression of the current row's columns alone
    "upper(#l COLLATE UTF8_BINARY) = $lp", "concat(#l COLLATE UTF8_BINARY, 'x') = concat($lp, 'x')",
    "length(#l COLLATE UTF8_BINARY) = length($l)", "lower(#l COLLATE UTF8_BINARY) < $l",
    "$m[$i]", "$m['3']", "$m[CAST($i AS BIGINT)]", "$m[NULL]", "array($s, $p)[1]",
]
# the subscripts Spark raises on under ANSI: (array column, index of the value row)
SUBSCRIPTS = {"$ai[$i]": ("ai", lambda i: i), "$ast[0]": ("ast", lambda i: 0),
              "$ad[CAST($i AS BIGINT) + 4294967296]": ("ad", lambda i: i), "$adt[CAST($i AS TINYINT)]": ("adt", lambda i: i)}
ROWS = 36


def _engine(e: str) -> str:
    return e.replace("$", "A.").replace("#", "Z.")


def _spark(e: str) -> str:
    return e.replace("$", "").replace("#", "")


def _value_rows(seed: int, n: int) -> list[tuple]:
    rng = random.Random(seed)
    names = [c.split()[0] for c in COLUMNS.split(", ")]
    return [tuple(rng.choice(POOLS[name]) for name in names) for _ in range(n)]


def _raises(spark, sql: str) -> str | None:
    try:
        spark.sql(sql).collect()
        return None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return error_class(e)


def _valid_pattern(p: str, escape: str) -> bool:
    chars = iter(p)
    return all(next(chars, None) in ("_", "%", escape) for c in chars if c == escape)


def _skipped(e: str, row: dict, ansi: bool) -> bool:
    """Would Spark raise for ``e`` on ``row``?  Those pairs are left to
    ``test_errors_over_match_state_are_sparks``; this only groups the checks: a pair Spark
    raises on in the grouped query fails the test."""
    if "LIKE" in e and row["p"] is not None and "$p" in e:
        escape = e.split("ESCAPE '")[1][0] if "ESCAPE" in e else "\\"
        pattern = row["p"].lower() if "ILIKE" in e else row["p"]
        return not _valid_pattern(pattern, escape)
    if e in SUBSCRIPTS and ansi:
        column, index = SUBSCRIPTS[e]
        arr, i = row[column], row["i"] if "$i" in e else 0
        return arr is not None and i is not None and not 0 <= index(i) < len(arr)
    call = re.match(r"element_at\(\$(a\w+), (\$i|-?\d+|CAST\((\d+) AS TINYINT\))\)", e)
    if call and ansi:
        column, index, small = call.groups()
        arr, i = row[column], row["i"] if index == "$i" else int(small or index)
        return arr is not None and i is not None and len(arr) < abs(i)
    return False


def _compare(spark, ansi: bool, values: list[tuple]) -> tuple[int, int, list]:
    """Every (expression, value row) pair is checked in one MATCH_RECOGNIZE, but those Spark
    raises on.  Returns (pairs compared, pairs skipped, the mismatches)."""
    names = [c.split()[0] for c in COLUMNS.split(", ")]
    view(spark, "sf_values", "r int, " + COLUMNS, [(r, *v) for r, v in enumerate(values)])
    good = [(eid, r) for eid, e in enumerate(EXPRESSIONS) for r, v in enumerate(values)
            if not _skipped(e, dict(zip(names, v)), ansi)]
    with session_confs(spark, {"spark.sql.ansi.enabled": str(ansi).lower()}):
        cases = ", ".join(f"({eid}, {r}, {o})" for eid, r in good for o in (1, 2))
        expected = " ".join(f"WHEN {eid} THEN CAST({_spark(e)} AS STRING)" for eid, e in enumerate(EXPRESSIONS))
        spark.sql(f"""CREATE OR REPLACE TEMP VIEW sf_grid AS SELECT c.eid, c.o, v.*,
            CASE WHEN c.o = 2 THEN CASE c.eid {expected} END END AS expected
            FROM VALUES {cases} AS c(eid, r, o) JOIN sf_values v ON v.r = c.r""")
        checks = " ".join(f"WHEN {eid} THEN CAST({_engine(e)} AS STRING) <=> Z.expected"
                          for eid, e in enumerate(EXPRESSIONS))
        matched = set(rows(spark, f"""SELECT eid, r FROM sf_grid MATCH_RECOGNIZE (PARTITION BY eid, r ORDER BY o
            MEASURES COUNT(*) AS n PATTERN (A Z) DEFINE Z AS CASE eid {checks} END)"""))
    mismatches = [(EXPRESSIONS[eid], dict(zip(names, values[r]))) for eid, r in good if (eid, r) not in matched]
    return len(good), len(EXPRESSIONS) * len(values) - len(good), mismatches


@pytest.mark.parametrize("ansi", [True, False], ids=["ansi", "no_ansi"])
def test_functions_over_match_state_give_sparks_values_and_errors(mr_spark, ansi):
    values = _value_rows(20261128 + ansi, ROWS)
    checked, skipped, mismatches = _compare(mr_spark, ansi, values)
    assert not mismatches, "\n".join(map(str, mismatches[:20]))
    assert skipped <= len(EXPRESSIONS) * ROWS * 0.1, skipped


@pytest.mark.parametrize("ansi", [True, False], ids=["ansi", "no_ansi"])
def test_errors_over_match_state_are_sparks(mr_spark, ansi):
    """The values that make Spark raise: index 0, out of range under ANSI, a pattern's escape
    before another character or at the end (with the default and a given escape character)."""
    cases = [("element_at($ai, $i)", dict(ai=(1, 2, 3), i=0)), ("try_element_at($ai, $i)", dict(ai=(), i=0)),
             ("element_at($ai, $i)", dict(ai=(1, 2, 3), i=4)), ("element_at($ast, $i)", dict(ast=(), i=-1)),
             ("$s LIKE $p", dict(s="ab", p="a\\b")), ("$s LIKE $p", dict(s="ab", p="a\\")),
             ("$s ILIKE $p ESCAPE '!'", dict(s="ab", p="a!b")), ("$s NOT LIKE $p ESCAPE 'a'", dict(s="a", p="A")),
             ("$s ILIKE $p ESCAPE 'a'", dict(s="a", p="A")), ("$s LIKE ANY ('%', 'a\\\\x')", dict(s="ab")),
             ("$s NOT ILIKE ALL ('x%', '\\\\')", dict(s="ab")), ("$ai[$i]", dict(ai=(1, 2, 3), i=3)),
             ("$ast[$i]", dict(ast=("a",), i=-1)), ("get($ai, $i)", dict(ai=(1, 2), i=2))]
    names = [c.split()[0] for c in COLUMNS.split(", ")]
    seen = set()
    with session_confs(mr_spark, {"spark.sql.ansi.enabled": str(ansi).lower()}):
        for e, given in cases:
            row = tuple(given.get(n) for n in names)
            view(mr_spark, "sf_one", "o int, " + COLUMNS, [(o, *row) for o in (1, 2)])
            want = _raises(mr_spark, f"SELECT {_spark(e)} FROM sf_one")
            got = _raises(mr_spark, f"""SELECT * FROM sf_one MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS n
                PATTERN (A Z) DEFINE Z AS coalesce(CAST({_engine(e)} AS STRING), '') <> '-')""")
            assert got == want, (e, given)
            seen.add(want)
    assert {"INVALID_INDEX_OF_ZERO", "INVALID_FORMAT.ESC_IN_THE_MIDDLE", "INVALID_FORMAT.ESC_AT_THE_END"} <= seen
    assert ("INVALID_ARRAY_INDEX_IN_ELEMENT_AT" in seen) == ansi and ("INVALID_ARRAY_INDEX" in seen) == ansi


@pytest.mark.parametrize("ansi, size_of_null", [(True, "true"), (False, "true"), (False, "false")])
def test_size_of_null_follows_the_session(mr_spark, ansi, size_of_null):
    """``size`` of a NULL array or map is -1 without ANSI and with spark.sql.legacy.sizeOfNull
    (Spark's default), else NULL: as Spark's own ``size`` of the same values in the session;
    ``array_size`` of NULL is NULL under either (it was written as ``size``, -1 without ANSI)."""
    view(mr_spark, "sz", "o int, a array<int>, m map<int, string>", [(1, None, None), (2, (1, None), {1: "a"})])
    confs = {"spark.sql.ansi.enabled": str(ansi).lower(), "spark.sql.legacy.sizeOfNull": size_of_null}
    null = -1 if not ansi and size_of_null == "true" else None
    with session_confs(mr_spark, confs):
        assert rows(mr_spark, "SELECT o, size(a), cardinality(m), array_size(a) FROM sz ORDER BY o") == [
            (1, null, null, None), (2, 2, 1, 2)]
        got = rows(mr_spark, """SELECT * FROM sz MATCH_RECOGNIZE (ORDER BY o
            MEASURES FIRST(A.o) AS o, LAST(B.o) AS last_o, array_size(FIRST(A.a)) AS n PATTERN (A B?)
            DEFINE A AS o = 1 AND array_size(a) IS NULL,
                   B AS size(LAST(A.a)) <=> {n} AND cardinality(FIRST(A.m)) <=> {n} AND array_size(LAST(A.a)) IS NULL)"""
                   .format(n="NULL" if null is None else null))
    assert got == [(1, 2, None)], got


# ---- the shapes of Trino's row-pattern tests: functions over aggregates in DEFINE --------------

SEQ = [(1, 1, "a", 3), (1, 2, "b", 5), (1, 3, "a", -1), (1, 4, "c", 12), (1, 5, "a", 4), (1, 6, "b", 2),
       (2, 1, "b", 1), (2, 2, "a", 2), (2, 3, "b", 8), (2, 4, "b", 20)]


def test_like_over_array_join_of_classifiers_in_define(mr_spark):
    """``array_join(array_agg(CLASSIFIER()), '') LIKE 'AB%'``: B is a row after A (the letters
    mapped so far, the current row's B included, start with AB)."""
    view(mr_spark, "seq", "p int, o int, v string, x int", SEQ)
    got = rows(mr_spark, """SELECT * FROM seq MATCH_RECOGNIZE (PARTITION BY p ORDER BY o
        MEASURES FIRST(o) AS first_o, LAST(o) AS last_o, array_join(array_agg(CLASSIFIER()), '') AS labels
        ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+)
        DEFINE A AS v = 'a', B AS array_join(array_agg(CLASSIFIER()), '') LIKE 'AB%' AND v <> 'a') ORDER BY p, first_o""")
    assert got == [(1, 1, 2, "AB"), (1, 3, 4, "AB"), (1, 5, 6, "AB"), (2, 2, 4, "ABB")]


def test_element_at_of_an_aggregate_in_define_is_sparks(mr_spark):
    """``element_at(array_agg(A.x), k)`` in DEFINE equals Spark's ``element_at`` of its
    window ``collect_list`` over the same rows, for the first, last and an absent element."""
    view(mr_spark, "seq", "p int, o int, v string, x int", SEQ)
    with session_confs(mr_spark, {"spark.sql.ansi.enabled": "false"}):
        got = rows(mr_spark, """SELECT * FROM (SELECT *, collect_list(x) OVER (PARTITION BY p ORDER BY o
                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS w FROM seq)
            MATCH_RECOGNIZE (PARTITION BY p ORDER BY o MEASURES COUNT(*) AS n PATTERN (A+)
              DEFINE A AS element_at(array_agg(A.x), 1) <=> element_at(w, 1)
                AND element_at(array_agg(A.x), -1) <=> element_at(w, -1)
                AND element_at(array_agg(A.x), 3) <=> element_at(w, 3)
                AND element_at(array_agg(A.x), 1) > 0) ORDER BY p""")
    assert got == [(1, 6), (2, 4)]


def test_array_max_of_an_aggregate_in_define(mr_spark):
    """``array_max(array_agg(x)) < 10``: a match grows while the largest value so far is below
    10 (as Spark's array_max of the window's collect_list)."""
    view(mr_spark, "seq", "p int, o int, v string, x int", SEQ)
    got = rows(mr_spark, """SELECT * FROM (SELECT *, array_max(collect_list(x) OVER (PARTITION BY p ORDER BY o
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS w,
            array_min(collect_list(x) OVER (PARTITION BY p ORDER BY o
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS lo FROM seq)
        MATCH_RECOGNIZE (PARTITION BY p ORDER BY o MEASURES COUNT(*) AS n, LAST(A.x) AS last_x
          PATTERN (A+) DEFINE A AS array_max(array_agg(x)) < 10 AND array_max(array_agg(A.x)) <=> w
            AND array_min(array_agg(x)) <=> lo) ORDER BY p""")
    assert got == [(1, 3, -1), (2, 3, 8)]


def test_like_over_a_navigated_string(mr_spark):
    """LIKE / NOT ILIKE over FIRST of a variable's column (match state): a B run after an A whose
    letter starts with a, its first letter not c."""
    view(mr_spark, "seq", "p int, o int, v string, x int", SEQ)
    got = rows(mr_spark, """SELECT * FROM seq MATCH_RECOGNIZE (PARTITION BY p ORDER BY o
        MEASURES FIRST(o) AS first_o, COUNT(*) AS n ONE ROW PER MATCH PATTERN (A B+)
        DEFINE A AS true, B AS FIRST(A.v) LIKE 'a%' AND FIRST(B.v) NOT ILIKE 'C' AND v <> 'a') ORDER BY p, first_o""")
    assert got == [(1, 1, 2), (1, 5, 2), (2, 2, 3)]


# ---- analysis: Spark's refusals and the engine's, at the call ----------------------------------

@pytest.mark.parametrize("define, needle, message", [
    ("element_at(array_agg(A.x), 2L) > 0", "element_at", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("array_join(array_agg(A.x), 1) = ''", "array_join", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("array_max(A.x) > 0", "array_max", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("A.v LIKE 'a' ESCAPE '!!'", "LIKE 'a'", "INVALID_ESC"),
    ("element_at(A.m, 1.0) = 'a'", "element_at", "DATATYPE_MISMATCH.MAP_FUNCTION_DIFF_TYPES"),
    ("array_contains(array_agg(A.x), NULL)", "array_contains", "DATATYPE_MISMATCH.NULL_TYPE"),
    ("array_position(array_agg(A.v), 1) > 0", "array_position", "DATATYPE_MISMATCH.ARRAY_FUNCTION_DIFF_TYPES"),
    ("array_contains(array_agg(A.m), A.m)", "array_contains", "DATATYPE_MISMATCH.INVALID_ORDERING_TYPE"),
    ("size(A.x) > 0", "size", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("array_position(A.x, 1) > 0", "array_position", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("A.v LIKE ANY ('a%', A.v)", "A.v LIKE ANY", "is not supported"),
    ("array_position(array_agg(CAST(A.x AS DECIMAL(2,1))), 99999999999999999999.99) > 0", "array_position",
     "DATATYPE_MISMATCH.ARRAY_FUNCTION_DIFF_TYPES"),
    ("size(array(A.x, A.v = 'a')) > 0", "array(", "DATATYPE_MISMATCH.DATA_DIFF_TYPES"),
    ("CAST(A.x AS DOUBLE) div 1 > 0", "CAST(A.x AS DOUBLE) div", "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES"),
    ("A.x + CAST(A.x AS DOUBLE) div B.x > 0", "CAST(A.x AS DOUBLE) div", "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES"),
    ("CAST(A.x AS FLOAT) div CAST(A.x AS FLOAT) > 0", "CAST(A.x AS FLOAT) div", "DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE"),
    ("CAST(A.x AS DECIMAL(4,1)) div CAST(B.x AS FLOAT) > 0", "CAST(A.x AS DECIMAL", "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES"),
    ("A.m[true] = 'a'", "A.m[", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("array_agg(A.x)['1'] > 0", "array_agg(A.x)[", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("array_agg(A.x)[1.0] > 0", "array_agg(A.x)[", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("get(A.m, 1) = 'a'", "get(", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("contains(array_agg(A.v), 'a')", "contains(", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("replace(A.v, A.m) = 'a'", "replace(", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("nanvl(A.v = 'a', 1.0D) > 0", "nanvl(", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("lpad(A.v, A.m) = 'a'", "lpad(", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("locate('a', A.v, true) > 0", "locate(", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("get(array_agg(A.x), true) > 0", "get(", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("upper(B.v COLLATE UTF8_BINARY) = A.v COLLATE UTF8_LCASE", "upper(B.v", "COLLATION_MISMATCH.EXPLICIT"),
    ("array_size(array_agg(A.x), 1) > 0", "array_size",
     "The `array_size` requires 1 parameters but the actual number is 2"),
])
def test_refused_calls_are_errors_at_the_call(mr_spark, define, needle, message):
    view(mr_spark, "seqm", "p int, o int, v string, x int, m map<int, string>", [(*r, {1: "a"}) for r in SEQ])
    sql = f"SELECT * FROM seqm MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS n PATTERN (A B) DEFINE B AS {define})"
    error = analysis_error(mr_spark, sql)
    assert (error.line, error.column) == at(sql, needle) and message in error.message, error


@pytest.mark.parametrize("call", ["startswith(A.v, 'a')", "replace(A.v, 'a', 'b') = 'b'", "instr(A.v, 'a') > 0"])
def test_string_search_over_a_trim_collation_is_refused_at_the_call(mr_spark, call):
    mr_spark.sql("CREATE OR REPLACE TEMP VIEW seq_rtrim AS SELECT p, o, v COLLATE UTF8_LCASE_RTRIM AS v FROM "
                 "VALUES (1, 1, 'a') AS t(p, o, v)")
    sql = f"SELECT * FROM seq_rtrim MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS n PATTERN (A B) DEFINE B AS {call})"
    error = analysis_error(mr_spark, sql)
    assert (error.line, error.column) == at(sql, call[:6]) and "UTF8_LCASE_RTRIM" in error.message, error


def test_like_over_a_collated_string_is_refused_at_the_call(mr_spark):
    mr_spark.sql("CREATE OR REPLACE TEMP VIEW seq_lcase AS SELECT p, o, v COLLATE UTF8_LCASE AS v FROM "
                 "VALUES (1, 1, 'a') AS t(p, o, v)")
    sql = "SELECT * FROM seq_lcase MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS n PATTERN (A B) DEFINE B AS A.v LIKE 'a%')"
    error = analysis_error(mr_spark, sql)
    assert (error.line, error.column) == at(sql, "A.v LIKE") and "UTF8_LCASE" in error.message, error


def test_like_called_as_a_function_keeps_its_grouping(mr_spark):
    """``(v = 'a') = like(v, 'a%')`` over the current row is Spark's: the call stays one operand
    when the statement is written back for Spark (sqlglot wrote ``(v = 'a') = v LIKE 'a%'``,
    which Spark's grammar reads as ``((v = 'a') = v) LIKE 'a%'``: NULL without ANSI, no row
    matched)."""
    view(mr_spark, "seq", "p int, o int, v string, x int", SEQ)
    with session_confs(mr_spark, {"spark.sql.ansi.enabled": "false"}):
        got = rows(mr_spark, """SELECT * FROM seq MATCH_RECOGNIZE (PARTITION BY p ORDER BY o
            MEASURES COUNT(*) AS n PATTERN (A+)
            DEFINE A AS (v = 'a') = like(v, 'a%') AND (v <> 'c') = (NOT ilike(v, 'C'))) ORDER BY p""")
    assert got == [(1, 6), (2, 4)]
