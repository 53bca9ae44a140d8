"""Spark's type semantics in the clause, item by item (issue 24): partitions are Spark's groups
(NaN, -0.0, collations, nested keys), WITHIN over TIMESTAMP_NTZ is wall-clock, aggregates take
nested values, match-state comparisons follow the strings' collation.  SQL in, rows out."""
from __future__ import annotations

import math

import pytest

from spark_confs import session_confs
from sql_support import analysis_error, at, mr_spark, rows  # noqa: F401  (fixture)


def _counts(spark, keys_sql: str, partition: str = "k") -> list:
    """(key, rows) per partition of ``SELECT * FROM VALUES ...`` as MATCH_RECOGNIZE sees them."""
    return rows(spark, f"""SELECT * FROM ({keys_sql}) MATCH_RECOGNIZE (
        PARTITION BY {partition} ORDER BY o MEASURES COUNT(*) AS n PATTERN (A+) DEFINE A AS true) AS m""")


def _group_counts(spark, keys_sql: str) -> list:
    return rows(spark, f"SELECT k, count(*) FROM ({keys_sql}) GROUP BY k")


def test_nan_partition_key_is_one_partition(mr_spark):
    got = rows(mr_spark, """SELECT * FROM VALUES (double('NaN'), 1), (double('NaN'), 2) AS t(x, o)
        MATCH_RECOGNIZE (PARTITION BY x ORDER BY o MEASURES COUNT(*) AS n PATTERN (A+) DEFINE A AS true) m""")
    assert len(got) == 1 and math.isnan(got[0][0]) and got[0][1] == 2


@pytest.mark.parametrize("keys", [
    "SELECT * FROM VALUES (-0.0D, 1), (0.0D, 2), (0.0D, 3), (double('NaN'), 4), (-double('NaN'), 5), "
    "(NULL, 6), (NULL, 7), (1.5D, 8) AS t(k, o)",
    "SELECT CAST(k AS FLOAT) AS k, o FROM VALUES (-0.0D, 1), (0.0D, 2), (double('NaN'), 3), (double('NaN'), 4) AS t(k, o)",
], ids=["double", "float"])
def test_floating_partition_keys_group_as_spark_groups(mr_spark, keys):
    # the key too is GROUP BY's: the group of -0.0 and 0.0 reports 0.0, whichever row comes first
    got = sorted(map(repr, _counts(mr_spark, keys)))
    assert got == sorted(map(repr, _group_counts(mr_spark, keys)))


@pytest.mark.parametrize("collation, groups", [
    ("UTF8_LCASE", [2, 2, 1]),  # a A | b B | a_
    ("UTF8_LCASE_RTRIM", [3, 2]),  # a A a_ | b B
    ("UNICODE_CI", [2, 2, 1]),
    ("UTF8_BINARY_RTRIM", [1, 1, 1, 2]),  # a a_ | A | b | B
])
def test_collated_partition_keys_group_as_spark_groups(mr_spark, collation, groups):
    keys = (f"SELECT s COLLATE {collation} AS k, o FROM VALUES ('a', 1), ('A', 2), ('b', 3), ('B', 4), ('a ', 5) "
            "AS t(s, o)")
    got = _counts(mr_spark, keys)
    assert sorted(n for _, n in got) == sorted(groups) == sorted(n for _, n in _group_counts(mr_spark, keys))


def test_partition_by_array_and_struct(mr_spark):
    keys = """SELECT k, o, named_struct('a', k[0], 's', s COLLATE UTF8_LCASE) AS st
              FROM VALUES (array(-0.0D, 1.0D), 'x', 1), (array(0.0D, 1.0D), 'X', 2), (array(double('NaN')), 'y', 3),
                          (array(double('NaN')), 'y', 4), (array(2.0D), 'x', 5) AS t(k, s, o)"""
    assert sorted(n for _, n in _counts(mr_spark, keys)) == [1, 2, 2]
    assert sorted(n for _, n in _counts(mr_spark, keys, "st")) == [1, 2, 2]
    # -0.0 at any depth of the key reported as GROUP BY reports it
    assert sorted(map(repr, _counts(mr_spark, keys))) == sorted(map(repr, _group_counts(mr_spark, keys)))
    by_struct = rows(mr_spark, f"SELECT st.a, count(*) FROM ({keys}) GROUP BY st")
    assert sorted(repr((st.a, n)) for st, n in _counts(mr_spark, keys, "st")) == sorted(map(repr, by_struct))


def test_partition_and_order_by_a_map_are_refused_where_written(mr_spark):
    sql = """SELECT * FROM (SELECT map(1, 2) AS k, 1 AS o) MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY o MEASURES COUNT(*) AS n PATTERN (A+) DEFINE A AS true) m"""
    e = analysis_error(mr_spark, sql)
    assert (e.line, e.column) == at(sql, "k ORDER") and "EXPRESSION_TYPE_IS_NOT_ORDERABLE" in str(e)
    sql = """SELECT * FROM (SELECT map(1, 2) AS k, 1 AS o) MATCH_RECOGNIZE (
  ORDER BY o, k MEASURES COUNT(*) AS n PATTERN (A+) DEFINE A AS true) m"""
    e = analysis_error(mr_spark, sql)
    assert (e.line, e.column) == at(sql, "k MEASURES") and "INVALID_ORDERING_TYPE" in str(e)


@pytest.fixture
def la_session(mr_spark, confs):
    confs(mr_spark, {"spark.sql.session.timeZone": "America/Los_Angeles"})
    return mr_spark


@pytest.mark.parametrize("second, matched", [("03:10:00", False), ("02:20:00", True)])
def test_within_over_timestamp_ntz_is_wall_clock_in_any_zone(la_session, second, matched):
    # 01:30 to 03:10 on 2024-03-10 is 1h40 of wall clock (the DST gap in Los Angeles is no part of NTZ)
    sql = f"""SELECT * FROM VALUES (TIMESTAMP_NTZ'2024-03-10 01:30:00'), (TIMESTAMP_NTZ'2024-03-10 {second}') AS t(ts)
        MATCH_RECOGNIZE (ORDER BY ts MEASURES COUNT(*) AS n PATTERN (A B) WITHIN INTERVAL '1' HOUR
                         DEFINE A AS true, B AS true) m"""
    assert rows(la_session, sql) == ([(2,)] if matched else [])
    with session_confs(la_session, {"spark.sql.session.timeZone": "UTC"}):
        assert rows(la_session, sql) == ([(2,)] if matched else [])


def test_within_over_timestamp_counts_instants(la_session):
    # 01:30 PST to 03:10 PDT is 40 minutes
    assert rows(la_session, """SELECT * FROM VALUES (TIMESTAMP'2024-03-10 01:30:00'), (TIMESTAMP'2024-03-10 03:10:00')
        AS t(ts) MATCH_RECOGNIZE (ORDER BY ts MEASURES COUNT(*) AS n PATTERN (A B) WITHIN INTERVAL '1' HOUR
                                   DEFINE A AS true, B AS true) m""") == [(2,)]


NESTED = """SELECT named_struct('a', o, 'b', CAST(o AS STRING)) AS st, map('k', o, 'j', -o) AS mp, array(o, NULL) AS ar,
                   o, 3 - o AS x
            FROM VALUES (1), (2) AS t(o)"""


def test_aggregates_over_structs_maps_and_arrays(mr_spark):
    got = mr_spark.sql(f"""SELECT * FROM ({NESTED}) MATCH_RECOGNIZE (ORDER BY o
        MEASURES array_agg(st) AS a, max_by(st, x) AS b, collect_list(mp) AS c, collect_list(ar) AS d,
                 min(st) AS e, max(ar) AS f, count(DISTINCT mp) AS g, last(mp) AS h
        PATTERN (A+) DEFINE A AS true) m""").collect()
    assert [r.asDict(recursive=True) for r in got] == [{
        "a": [{"a": 1, "b": "1"}, {"a": 2, "b": "2"}], "b": {"a": 1, "b": "1"},
        "c": [{"k": 1, "j": -1}, {"k": 2, "j": -2}], "d": [[1, None], [2, None]],
        "e": {"a": 1, "b": "1"}, "f": [2, None], "g": 2, "h": {"k": 2, "j": -2}}]


def test_aggregates_over_structs_in_define(mr_spark):
    # B holds while the running maximum of the struct is its own row's
    assert rows(mr_spark, f"""SELECT * FROM ({NESTED} UNION ALL SELECT named_struct('a', 0, 'b', '0'), map(), array(), 3, 0)
        MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(B.*) AS n PATTERN (A B+) DEFINE B AS max(st) = B.st) m""") == [(1,)]


@pytest.mark.parametrize("agg", ["min(A.mp)", "max_by(A.o, A.mp)", "collect_set(A.mp)"])
def test_aggregates_spark_refuses_over_maps_are_refused_where_written(mr_spark, agg):
    sql = f"SELECT * FROM ({NESTED}) MATCH_RECOGNIZE (ORDER BY o MEASURES {agg} AS m PATTERN (A+) DEFINE A AS true) m"
    e = analysis_error(mr_spark, sql)
    assert (e.line, e.column) == at(sql, agg) and "DATATYPE_MISMATCH" in str(e)


COLLATED = """SELECT s COLLATE UTF8_LCASE AS s, s AS b, s COLLATE UNICODE_CI AS u, o
              FROM VALUES ('a', 1), ('A', 2), ('b', 3), ('B', 4), ('İ', 5), ('i̇', 6), ('ς', 7), ('Σ', 8) AS t(s, o)"""


def test_match_state_comparisons_follow_the_collation(mr_spark):
    got = rows(mr_spark, f"""SELECT * FROM ({COLLATED}) MATCH_RECOGNIZE (ORDER BY o
        MEASURES FIRST(A.o) AS a, LAST(B.o) AS z PATTERN (A B+) DEFINE B AS B.s = A.s) m""")
    assert got == [(1, 2), (3, 4), (5, 6), (7, 8)]
    got = rows(mr_spark, f"""SELECT * FROM ({COLLATED}) MATCH_RECOGNIZE (ORDER BY o
        MEASURES FIRST(A.o) AS a, LAST(B.o) AS z PATTERN (A B+) DEFINE B AS B.s > FIRST(A.s)) m""")
    assert got == [(2, 8)]  # 'A' > 'a' fails from row 1 (equal); from row 2 every later row sorts above 'a'


def test_match_state_comparisons_of_two_collations_are_refused(mr_spark):
    sql = f"""SELECT * FROM ({COLLATED}) MATCH_RECOGNIZE (ORDER BY o
        MEASURES COUNT(*) AS n PATTERN (A B) DEFINE B AS B.s = A.b) m"""
    e = analysis_error(mr_spark, sql)
    assert "INDETERMINATE_COLLATION" in str(e) and (e.line, e.column) == at(sql, "B.s = A.b")


def test_icu_collations_in_match_state_are_refused_where_written(mr_spark):
    sql = f"""SELECT * FROM ({COLLATED}) MATCH_RECOGNIZE (ORDER BY o
        MEASURES max(A.u) AS m PATTERN (A+) DEFINE A AS true) m"""
    e = analysis_error(mr_spark, sql)
    assert "UNICODE_CI" in str(e) and (e.line, e.column) == at(sql, "max(A.u)")
    # what does not compare them runs
    got = mr_spark.sql(f"""SELECT * FROM ({COLLATED}) MATCH_RECOGNIZE (ORDER BY o
        MEASURES array_agg(A.u) AS m, first(A.u) AS f PATTERN (A+) DEFINE A AS true) m""")
    assert got.schema["m"].dataType.simpleString() == "array<string collate UNICODE_CI>"
    assert [tuple(r) for r in got.collect()] == [(["a", "A", "b", "B", "İ", "i̇", "ς", "Σ"], "a")]


def test_classifier_takes_the_collation_of_a_column_beside_it(mr_spark):
    # CLASSIFIER() is a function's result, of the default collation strength: beside a
    # UTF8_LCASE column it compares as that column does, as upper('b') = s does in Spark
    judge = rows(mr_spark, f"SELECT upper(s) = s, s = upper(s), upper(s) IN (s) FROM ({COLLATED}) WHERE o = 3")
    assert judge == [(True, True, True)]
    got = rows(mr_spark, f"""SELECT * FROM ({COLLATED}) MATCH_RECOGNIZE (ORDER BY o
        MEASURES CLASSIFIER() = LAST(s) AS eq, LAST(s) = CLASSIFIER() AS qe, CLASSIFIER() IN (LAST(B.s)) AS i,
                 CLASSIFIER() = LAST(b) AS binary, max(CLASSIFIER()) = LAST(s) AS agg
        PATTERN (A B) DEFINE A AS o = 2, B AS CLASSIFIER() = B.s) m""")
    assert got == [(True, True, True, False, True)]
    got = rows(mr_spark, f"""SELECT o, eq FROM ({COLLATED}) MATCH_RECOGNIZE (ORDER BY o
        MEASURES CLASSIFIER() = s AS eq ALL ROWS PER MATCH PATTERN (A B) DEFINE A AS o = 2, B AS true) m""")
    assert got == [(2, True), (3, True)]


BINARIES = "SELECT * FROM VALUES (X'41', true, 1), (X'42', false, 2), (X'0123', true, 3) AS t(b, x, o)"


def test_binary_literals_and_any_distinct_as_spark_reads_them(mr_spark):
    # X'..' is a BINARY literal (an odd count of digits padded with a leading 0), listagg's
    # delimiter over BINARY values among others; any(DISTINCT x) is bool_or(DISTINCT x)
    judge = rows(mr_spark, f"""SELECT listagg(b, X'2c'), listagg(b, X'123'), any(DISTINCT x),
        any(DISTINCT x) FILTER (WHERE o = 2) FROM ({BINARIES})""")
    got = rows(mr_spark, f"""{BINARIES} MATCH_RECOGNIZE (ORDER BY o MEASURES listagg(b, X'2c') AS l,
        listagg(b, X'123') AS l2, any(DISTINCT x) AS a, any(DISTINCT x) FILTER (WHERE o = 2) AS f
        PATTERN (A+) DEFINE A AS true) m""")
    assert got == judge == [(b"A,B,\x01#", b"A\x01#B\x01#\x01#", True, False)]
    got = rows(mr_spark, f"""{BINARIES} MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS n
        PATTERN (A B+) DEFINE B AS A.b = X'41' AND B.b <> X'' AND any(DISTINCT A.x) AND B.b <> X'0042') m""")
    assert got == [(3,)]


def test_collation_strength_of_casts_and_aggregates_over_match_state(mr_spark):
    # Spark's CollationTypeCoercion: a cast, call or aggregate of a string column keeps the
    # implicit strength (of its own collation); one reading no string column has the default one
    sql = f"SELECT * FROM ({COLLATED}) MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS n PATTERN (A B) " \
          "DEFINE A AS o = 1, B AS {}) m"
    assert rows(mr_spark, sql.format("lower(min(CLASSIFIER())) = B.s")) == [(2,)]  # 'a' = 'A' under UTF8_LCASE
    assert rows(mr_spark, sql.format("CAST(A.o AS STRING) = B.s")) == []
    for refused in ("CAST(A.s AS STRING) = B.s", "max(A.b) = B.s"):
        e = analysis_error(mr_spark, sql.format(refused))
        assert "INDETERMINATE_COLLATION" in str(e) and (e.line, e.column) == at(sql.format(refused), refused)


@pytest.mark.parametrize("key", ["TIMESTAMP'0001-01-01 00:00:00'", "TIMESTAMP'9999-12-31 23:59:59.999999'",
                                 "DATE'2024-01-01'", "named_struct('a', 1, 'b', 'x')"])
def test_partition_keys_of_any_value_with_and_without_layers(la_session, key):
    # the key is compared and reported as an Arrow value: a TIMESTAMP of year 1 or 9999 is no
    # Python datetime in Los Angeles (the worker failed), a DATE or STRUCT key of a LAYER's
    # events was a Python date / dict where the engine holds days / tuples (the worker failed)
    data = f"SELECT {key} AS k, o, IF(o % 3 = 0, 'x', 'y') AS kind FROM range(1, 9) AS r(o)"
    judge = rows(la_session, f"SELECT CAST(k AS STRING) FROM ({data}) LIMIT 1")[0][0]
    plain = f"""SELECT CAST(k AS STRING), n FROM ({data}) MATCH_RECOGNIZE (PARTITION BY k ORDER BY o
        MEASURES COUNT(*) AS n PATTERN (A+) DEFINE A AS true) m"""
    assert rows(la_session, plain) == [(judge, 8)]
    layered = f"""SELECT CAST(k AS STRING), n, xo FROM ({data}) MATCH_RECOGNIZE (PARTITION BY k ORDER BY o
        LAYER ys AS (MEASURES COUNT(*) AS n PATTERN (Y+) DEFINE Y AS kind = 'y')
        MEASURES S.n AS n, X.o AS xo PATTERN (S X) DEFINE S FROM ys, X AS kind = 'x') AS m"""
    assert sorted(rows(la_session, layered)) == [(judge, 2, 3), (judge, 2, 6)]


@pytest.mark.parametrize("values", ["(-0.0D, 1), (0.0D, 2)", "(0.0D, 1), (-0.0D, 2)", "(-0.0D, 1), (0.0D, 2), (1.0D, 3)",
                                    "(-1.0D, 1), (0.0D, 2), (-0.0D, 3), (double('NaN'), 4), (-double('NaN'), 5)"])
@pytest.mark.parametrize("cast", ["x", "CAST(x AS FLOAT)"])
def test_percentiles_keep_minus_zero_apart_as_spark(mr_spark, values, cast):
    # Spark counts -0.0 and 0.0 as two values, -0.0 sorted first: the median of {0.0, -0.0} is -0.0
    aggs = (f"percentile({cast}, 0.5)", f"median({cast})", f"percentile({cast}, 0.0)", f"percentile({cast}, 1.0)",
            f"percentile_cont(0.5) WITHIN GROUP (ORDER BY {cast} DESC)", f"percentile({cast}, 0.25)")
    judge = rows(mr_spark, f"SELECT {', '.join(aggs)} FROM VALUES {values} AS t(x, o)")
    got = rows(mr_spark, f"""SELECT * FROM VALUES {values} AS t(x, o) MATCH_RECOGNIZE (ORDER BY o
        MEASURES {', '.join(f'{a} AS m{k}' for k, a in enumerate(aggs))} PATTERN (A+) DEFINE A AS true) m""")
    assert repr(got) == repr(judge)


def test_listagg_keeps_the_collation_of_its_strings(mr_spark):
    # Spark types listagg(s) of a collated s with its collation (the clause refused it: 'the
    # engine types it string'), listagg(s, NULL) too (its worker failed); a delimiter of another
    # collation is Spark's DATA_DIFF_TYPES in DEFINE as in MEASURES
    data = "SELECT s COLLATE UTF8_LCASE AS l, s COLLATE UNICODE_CI AS u, o FROM VALUES ('a', 1), ('A', 2), ('b', 3) AS t(s, o)"
    aggs = ("listagg(l)", "listagg(u)", "listagg(l, NULL)", "typeof(listagg(l))")
    judge = rows(mr_spark, f"SELECT {', '.join(aggs)} FROM ({data})")
    got = rows(mr_spark, f"""SELECT * FROM ({data}) MATCH_RECOGNIZE (ORDER BY o
        MEASURES {', '.join(f'{a} AS m{k}' for k, a in enumerate(aggs))} PATTERN (A+) DEFINE A AS true) m""")
    assert got == judge == [("aAb", "aAb", "aAb", "string collate UTF8_LCASE")]
    # 'AAB' = 'aAb' under UTF8_LCASE: B takes rows 2 (o = 2) and 3
    assert rows(mr_spark, f"""SELECT * FROM ({data}) MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS n
        PATTERN (A B+) DEFINE B AS listagg(l) = 'AAB' OR o = 2) m""") == [(3,)]
    sql = f"""SELECT * FROM ({data}) MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS n
        PATTERN (A+) DEFINE A AS listagg(A.l, ',') = 'a') m"""
    e = analysis_error(mr_spark, sql)
    assert "DATA_DIFF_TYPES" in str(e) and (e.line, e.column) == at(sql, "listagg(A.l")


def test_listagg_takes_a_delimiter_of_its_strings_collation(mr_spark):
    # listagg(l, ',' COLLATE UTF8_LCASE) over a UTF8_LCASE l is Spark's (the COLLATE'd literal is
    # a constant: the clause refused it as NON_FOLDABLE_INPUT); over a UTF8_BINARY s, or with
    # COLLATE UTF8_BINARY over l, it is Spark's DATA_DIFF_TYPES, at the call
    data = "SELECT s, s COLLATE UTF8_LCASE AS l, o FROM VALUES ('a', 1), ('A', 2), (NULL, 3), ('b', 4) AS t(s, o)"
    aggs = ("listagg(l, ',' COLLATE UTF8_LCASE)", "listagg(DISTINCT l, ('-' COLLATE utf8_lcase))",
            "typeof(listagg(l, ',' COLLATE UTF8_LCASE))", "string_agg(l, '' COLLATE UTF8_LCASE)")
    judge = rows(mr_spark, f"SELECT {', '.join(aggs)} FROM ({data})")
    got = rows(mr_spark, f"""SELECT * FROM ({data}) MATCH_RECOGNIZE (ORDER BY o
        MEASURES {', '.join(f'{a} AS m{k}' for k, a in enumerate(aggs))} PATTERN (A+) DEFINE A AS true) m""")
    assert got == judge == [("a,A,b", "a-b", "string collate UTF8_LCASE", "aAb")]
    # 'A,A' = 'a,A' under UTF8_LCASE: B takes row 2, then row 3 (NULL skipped: 'a,A' still)
    assert rows(mr_spark, f"""SELECT * FROM ({data}) MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS n
        PATTERN (A B+) DEFINE B AS listagg(l, ',' COLLATE UTF8_LCASE) = 'A,A') m""") == [(3,)]
    for call in ("listagg(A.s, ',' COLLATE UTF8_LCASE)", "listagg(A.l, ',' COLLATE UTF8_BINARY)"):
        sql = f"""SELECT * FROM ({data}) MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS n
            PATTERN (A+) DEFINE A AS {call} = 'a') m"""
        e = analysis_error(mr_spark, sql)
        assert "DATA_DIFF_TYPES" in str(e) and (e.line, e.column) == at(sql, call), e


@pytest.mark.parametrize("condition", [
    "A.st = named_struct('a', 1, 'b', '1', 'c', array(1, -1))",
    "A.st < named_struct('a', 2.5D, 'b', '1', 'c', array(1, -1))",
    "A.st IN (named_struct('a', 2, 'b', '2', 'c', array(2, -2)), B.st)",
    "CAST(A.mp AS MAP<STRING, DOUBLE>) IS NOT NULL",
])
def test_match_state_structs_and_maps_cast_field_by_field(mr_spark, condition):
    # Spark widens a struct literal's INT fields to the column's BIGINT ones (the worker failed:
    # 'cast struct<a:int,...> to struct<a:bigint,...>' was not implemented)
    data = """SELECT named_struct('a', o, 'b', CAST(o AS STRING), 'c', array(o, -o)) AS st, map('k', o) AS mp,
                     o FROM range(1, 5) AS r(o)"""
    lagged = condition.replace("A.", "lg.").replace("B.", "")
    judge = rows(mr_spark, f"""SELECT o FROM (SELECT *, LAG(struct(st, mp)) OVER (ORDER BY o) AS lg FROM ({data}))
        WHERE o > 1 AND ({lagged}) ORDER BY o""")
    assert judge and rows(mr_spark, f"""SELECT o FROM ({data}) MATCH_RECOGNIZE (ORDER BY o MEASURES B.o AS o
        AFTER MATCH SKIP TO NEXT ROW PATTERN (A B) DEFINE B AS {condition}) m ORDER BY o""") == judge


_FIELDS = """SELECT k, o, st, st.a AS sa, st.b AS sb, named_struct('n', st) AS nst FROM VALUES
    (1, 1, named_struct('a', 1L, 'b', 'x')), (1, 2, named_struct('a', 5L, 'b', 'y')),
    (1, 3, named_struct('a', 7L, 'b', 'z')), (1, 4, named_struct('a', 2L, 'b', 'w')),
    (2, 1, named_struct('a', 4L, 'b', 'v')), (2, 2, CAST(NULL AS STRUCT<a: BIGINT, b: STRING>)) AS t(k, o, st)"""


@pytest.mark.parametrize("out, fields, flat", [
    ("k, m, f, la, ub, bb", """MEASURES max(A.st.a) AS m, FIRST(A.st.b) AS f, A.st.a AS la, LAST(U.st.b, 1) AS ub, B.st.b AS bb
        PATTERN (A+ B) SUBSET U = (A, B) DEFINE A AS st.a < 7 OR st IS NULL, B AS B.st.a >= PREV(st.a)""",
     """MEASURES max(A.sa) AS m, FIRST(A.sb) AS f, A.sa AS la, LAST(U.sb, 1) AS ub, B.sb AS bb
        PATTERN (A+ B) SUBSET U = (A, B) DEFINE A AS sa < 7 OR st IS NULL, B AS B.sa >= PREV(sa)"""),
    ("k, o, la, mx, s", """MEASURES A.nst.n.a AS la, max(nst.n.a) AS mx, RUNNING sum(st.a) AS s ALL ROWS PER MATCH WITH UNMATCHED ROWS
        PATTERN (A+) DEFINE A AS nst.n.a < 7 AND PREV(nst).n.b <> 'zz'""",
     """MEASURES A.sa AS la, max(sa) AS mx, RUNNING sum(sa) AS s ALL ROWS PER MATCH WITH UNMATCHED ROWS
        PATTERN (A+) DEFINE A AS sa < 7 AND PREV(sb) <> 'zz'"""),
])
def test_struct_fields_through_variables_and_columns(mr_spark, out, fields, flat):
    # A.st.a is field a of A.st and st.a field a of the column st (both were refused: 'ST is not
    # a pattern variable or subset'): the same rows as the query over the fields as columns
    clause = f"SELECT {out} FROM ({{}}) MATCH_RECOGNIZE (PARTITION BY k ORDER BY o {{}}) m ORDER BY ALL"
    expected = rows(mr_spark, clause.format(_FIELDS, flat))
    assert expected and rows(mr_spark, clause.format(_FIELDS, fields)) == expected


@pytest.mark.parametrize("condition, needle, message", [
    ("x.st > 3", "x.st", "X is not a pattern variable or subset"),
    ("B.st.a > A.st.a", "A.st.a", "over match state"),
])
def test_struct_fields_refused_where_written(mr_spark, condition, needle, message):
    sql = f"""SELECT * FROM ({_FIELDS}) MATCH_RECOGNIZE (PARTITION BY k ORDER BY o MEASURES COUNT(*) AS n
        PATTERN (A B+) DEFINE B AS {condition}) m"""
    e = analysis_error(mr_spark, sql)
    assert message in str(e) and (e.line, e.column) == at(sql, needle)
