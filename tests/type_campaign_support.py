"""The type campaign (issue 24): every Spark data type in every role of the clause, against
what Spark's own GROUP BY, window functions and ORDER BY give over the same rows.

``TYPES`` lists a column per type over ``GROUPS`` x ``ROWS`` rows of the view ``tc(g, o, <columns>)``
(values chosen to meet Spark's grouping and ordering rules: NaN and -0.0, collations, trailing
spaces, NULLs at every depth).  Each role has a judge, a plain Spark query over ``tc``:

====================  ======================================================================
role                  judge
====================  ======================================================================
PARTITION BY c        ``GROUP BY c`` (the partitions and their sizes; EXCEPT ALL compares
                      with Spark's equality), where ``count(*) OVER (PARTITION BY c)`` is valid
ORDER BY c            ``row_number() OVER (PARTITION BY g ORDER BY c <dir>, o)`` against the
                      MATCH_NUMBER of one-row matches
carried c             ``SELECT c FROM tc``: ALL ROWS PER MATCH passes every value through as is
agg(c) in MEASURES    ``agg(c) OVER (PARTITION BY g ORDER BY o ROWS ...)`` (FINAL: the whole
                      partition, RUNNING: up to the row), ``GROUP BY g`` for DISTINCT
agg(c) in DEFINE      ``DEFINE A AS agg(A.c) <=> A.w`` with ``w`` the running window aggregate:
                      every row must be mapped to A
B.c <op> A.c          ``c <op> LAG(c)`` in DEFINE B of ``PATTERN (A B)``
====================  ======================================================================

Where the judge's analysis fails, sparkcep must refuse the same case at the construct's
line:column (``MatchRecognizeError``), never run it.  ``LIMITS`` are the cases Spark accepts
and sparkcep refuses, also at line:column (documented in docs/spark-semantics.md).  Cases that
Spark accepts are run together, a few queries in all; when a bundle disagrees, each case in it
runs alone so that the failure names it.
"""
from __future__ import annotations

import math
import re
from typing import NamedTuple

from udtf.errors import MatchRecognizeError

GROUPS = 3
ROWS = 8  # per group


class Type(NamedTuple):
    name: str  # column suffix
    sql: str  # Spark type
    values: tuple  # SQL expressions (NULL included), cycled over the rows


def _collated(collation: str) -> tuple:
    return tuple(f"'{v}' COLLATE {collation}" if v is not None else "NULL"
                 for v in ("a", "A", "a ", "b", "B", None, "İ", "i̇", "ς", "Σ", "", "😀"))


TYPES = (
    Type("tinyint", "TINYINT", ("0", "1", "-1", "127", "-128", "NULL", "1")),
    Type("smallint", "SMALLINT", ("0", "-32768", "32767", "NULL", "5", "5")),
    Type("int", "INT", ("0", "2147483647", "-2147483648", "NULL", "7", "-7", "7")),
    Type("bigint", "BIGINT", ("0", "9223372036854775807", "-9223372036854775808", "NULL", "3", "3")),
    Type("float", "FLOAT", ("'NaN'", "'-0.0'", "'0.0'", "'Infinity'", "'-Infinity'", "NULL", "'1.5'", "'NaN'",
                            "'3.4028235E38'")),
    Type("double", "DOUBLE", ("double('NaN')", "-0.0D", "0.0D", "-double('NaN')", "double('Infinity')",
                              "double('-Infinity')", "NULL", "1.5D", "4.9E-324D", "-1.5D")),
    Type("decimal", "DECIMAL(10,2)", ("0.00", "1.5", "1.50", "-99999999.99", "99999999.99", "NULL", "-0.01")),
    Type("decimal38", "DECIMAL(38,6)", ("0", "99999999999999999999999999999999.999999", "-1.000001", "NULL",
                                        "0.000001", "-1.000001")),
    Type("string", "STRING", ("'a'", "'A'", "'a '", "''", "NULL", "'b'", "'😀'", "'ß'", "'a'")),
    Type("lcase", "STRING COLLATE UTF8_LCASE", _collated("UTF8_LCASE")),
    Type("lcase_rtrim", "STRING COLLATE UTF8_LCASE_RTRIM", _collated("UTF8_LCASE_RTRIM")),
    Type("binary_rtrim", "STRING COLLATE UTF8_BINARY_RTRIM", _collated("UTF8_BINARY_RTRIM")),
    Type("unicode_ci", "STRING COLLATE UNICODE_CI", _collated("UNICODE_CI")),
    Type("binary", "BINARY", ("X''", "X'00'", "X'0000'", "X'FF'", "NULL", "X'00'", "X'7F'")),
    Type("boolean", "BOOLEAN", ("true", "false", "NULL", "true", "false")),
    Type("date", "DATE", ("DATE'1970-01-01'", "DATE'0001-01-01'", "DATE'9999-12-31'", "NULL", "DATE'2024-02-29'",
                          "DATE'1969-12-31'")),
    Type("timestamp", "TIMESTAMP", ("TIMESTAMP'2024-03-10 10:30:00Z'", "TIMESTAMP'1969-12-31 23:59:59.999999Z'",
                                    "NULL", "TIMESTAMP'2024-11-03 08:30:00Z'", "TIMESTAMP'2024-11-03 09:30:00Z'",
                                    "TIMESTAMP'1900-01-01 00:00:00Z'")),
    Type("timestamp_ntz", "TIMESTAMP_NTZ", ("TIMESTAMP_NTZ'2024-03-10 02:30:00'", "TIMESTAMP_NTZ'1969-12-31 23:59:59'",
                                            "NULL", "TIMESTAMP_NTZ'2024-11-03 01:30:00'",
                                            "TIMESTAMP_NTZ'0001-01-01 00:00:00'")),
    Type("day_time", "INTERVAL DAY TO SECOND", ("INTERVAL '1' DAY", "INTERVAL '24' HOUR", "INTERVAL '-0.5' SECOND",
                                                "NULL", "INTERVAL '0' SECOND", "INTERVAL '1 02:03:04.000005' DAY TO SECOND")),
    Type("year_month", "INTERVAL YEAR TO MONTH", ("INTERVAL '1' YEAR", "INTERVAL '12' MONTH", "NULL",
                                                  "INTERVAL '-1-2' YEAR TO MONTH")),
    Type("array_int", "ARRAY<INT>", ("array(1, 2)", "array()", "array(CAST(NULL AS INT))", "NULL", "array(1)",
                                     "array(1, 2)", "array(1, NULL)")),
    Type("array_double", "ARRAY<DOUBLE>", ("array(-0.0D)", "array(0.0D)", "array(double('NaN'))", "NULL",
                                           "array(CAST(NULL AS DOUBLE))", "array(1.0D, double('NaN'))")),
    Type("array_lcase", "ARRAY<STRING COLLATE UTF8_LCASE>", ("array('a' COLLATE UTF8_LCASE)",
                                                            "array('A' COLLATE UTF8_LCASE)", "NULL",
                                                            "array('b' COLLATE UTF8_LCASE, NULL)")),
    Type("map", "MAP<STRING, INT>", ("map('a', 1)", "map('a', 1, 'b', 2)", "map()", "NULL", "map('b', 2, 'a', 1)",
                                     "map('a', NULL)")),
    Type("struct", "STRUCT<a: INT, b: STRING>", ("named_struct('a', 1, 'b', 'x')", "named_struct('a', 1, 'b', NULL)",
                                                 "NULL", "named_struct('a', NULL, 'b', 'y')",
                                                 "named_struct('a', 1, 'b', 'x')", "named_struct('a', 2, 'b', '')")),
    Type("struct_mixed", "STRUCT<d: DOUBLE, s: STRING COLLATE UTF8_LCASE>", (
        "named_struct('d', double('NaN'), 's', 'x' COLLATE UTF8_LCASE)",
        "named_struct('d', double('NaN'), 's', 'X' COLLATE UTF8_LCASE)",
        "named_struct('d', -0.0D, 's', 'y' COLLATE UTF8_LCASE)", "NULL",
        "named_struct('d', 0.0D, 's', 'Y' COLLATE UTF8_LCASE)")),
    Type("variant", "VARIANT", ("parse_json('1')", "parse_json('\"a\"')", "parse_json('{\"a\": [1, null]}')", "NULL")),
)

# Cases Spark accepts and sparkcep refuses at line:column (docs/spark-semantics.md, Known gaps):
# a regular expression over the case's id, and why.
LIMITS = (
    (r"^year_month:(?!order)", "Spark has no Arrow conversion of year-month intervals into a Python UDTF"),
    (r"^unicode_ci:(agg|define):(min|max|max_by_value_of_o|min_by_value_of_o|count_distinct)$",
     "ICU collations: the engine has no ICU to compare them"),
    (r"^unicode_ci:compare:", "ICU collations: the engine has no ICU to compare them"),
)

# Cases Spark's analysis accepts but its run fails: not compared (sparkcep may run them).
SPARK_FAILS = (
    (r"^variant:(agg|define):count_distinct$", "a scala.MatchError hashing the variant for the DISTINCT"),
    (r"^(string|lcase|lcase_rtrim|binary_rtrim|unicode_ci):(agg|define):sum$",
     "CAST_INVALID_INPUT: these strings are no numbers (sum over strings: test_sql_match_state_semantics.py)"),
)


def limit(case_id: str) -> str | None:
    return next((why for pattern, why in LIMITS if re.search(pattern, case_id)), None)


def spark_fails(case_id: str) -> str | None:
    return next((why for pattern, why in SPARK_FAILS if re.search(pattern, case_id)), None)


def view_sql() -> str:
    """``tc(g, o, c_<type>...)``: row o of group g takes value (o * 5 + g * 3) mod n of each type."""
    rows = []
    for g in range(GROUPS):
        for k in range(ROWS):
            o = g * ROWS + k
            cells = [t.values[(k * 5 + g * 3) % len(t.values)] for t in TYPES]
            rows.append(f"SELECT {g} AS g, {o} AS o, " + ", ".join(
                f"CAST({v} AS {t.sql}) AS c_{t.name}" for v, t in zip(cells, TYPES)))
    return " UNION ALL ".join(rows)


# ---- aggregates --------------------------------------------------------------------------

class Agg(NamedTuple):
    name: str
    sparkcep: str  # over A.c and A.o
    spark: str  # over c and o
    distinct: bool = False  # the judge is GROUP BY (Spark's windows have no DISTINCT)
    ordered: bool = True  # its value depends on the order of the rows (else compared as a multiset)


AGGS = (
    Agg("count", "count(A.{c})", "count({c})"),
    Agg("min", "min(A.{c})", "min({c})"),
    Agg("max", "max(A.{c})", "max({c})"),
    Agg("first", "first(A.{c})", "first({c})"),
    Agg("last", "last(A.{c})", "last({c})"),
    Agg("any_value", "any_value(A.{c})", "any_value({c})"),
    Agg("array_agg", "array_agg(A.{c})", "array_agg({c})"),
    Agg("max_by_value_of_o", "max_by(A.o, A.{c})", "max_by(o, {c})"),
    Agg("max_by_o", "max_by(A.{c}, A.o)", "max_by({c}, o)"),
    Agg("min_by_value_of_o", "min_by(A.o, A.{c})", "min_by(o, {c})"),
    Agg("sum", "sum(A.{c})", "sum({c})"),
    Agg("count_distinct", "count(DISTINCT A.{c})", "count(DISTINCT {c})", distinct=True),
    Agg("collect_set", "collect_set(A.{c})", "collect_set({c})", distinct=True, ordered=False),
)

FINAL = "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
RUNNING = "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"


def canon(v):
    """A value as a comparable, exact text-like form: -0.0 and NaN kept apart, rows and maps in
    their order, binary as bytes."""
    if isinstance(v, float):
        return ("f", "nan" if math.isnan(v) else repr(v))
    if isinstance(v, (bytes, bytearray)):
        return ("b", bytes(v))
    if isinstance(v, dict):
        return ("m", tuple((canon(k), canon(x)) for k, x in v.items()))
    if hasattr(v, "asDict"):
        return ("r", tuple(canon(x) for x in v))
    if isinstance(v, (list, tuple)):
        return ("l", tuple(canon(x) for x in v))
    if type(v).__name__ == "VariantVal":
        return ("v", str(v))
    return ("x", repr(v))


def canon_set(v):
    return None if v is None else tuple(sorted(map(repr, map(canon, v))))


# ---- running a case through sparkcep ----------------------------------------------------------

def refusal_problem(spark, sql: str, construct: str | None, case: str) -> str | None:
    """What is wrong with sparkcep's refusal of ``sql`` (None: it raises a MatchRecognizeError at
    ``construct``'s first occurrence, or anywhere but with a line:column when None)."""
    try:
        spark.sql(sql)
    except MatchRecognizeError as e:
        if e.line is None:
            return f"{case}: refused without a position: {e}"
        if construct is not None:
            offset = sql.index(construct)
            want = (sql.count("\n", 0, offset) + 1, offset - (sql.rfind("\n", 0, offset) + 1) + 1)
            if (e.line, e.column) != want:
                return f"{case}: refused at {e.line}:{e.column}, not at {construct!r}: {e}"
        return None
    except Exception as e:  # noqa: BLE001  (anything else is the defect the campaign looks for)
        return f"{case}: {type(e).__name__} instead of a positioned refusal: {str(e)[:300]}"
    return f"{case}: accepted, but Spark refuses it" if not limit(case) else f"{case}: accepted, not the known limit"


_ACCEPTED: dict = {}


def spark_accepts(spark, sql: str) -> bool:
    """Does Spark's analysis accept ``sql`` (no job runs)?"""
    from pyspark.errors import AnalysisException

    if sql not in _ACCEPTED:
        try:
            spark.sql(sql).schema
            _ACCEPTED[sql] = True
        except AnalysisException:
            _ACCEPTED[sql] = False
    return _ACCEPTED[sql]
