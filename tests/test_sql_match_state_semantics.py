"""Match-state expressions give exactly what Spark gives: the differential property test.

Random expressions over random typed values are evaluated by the engine inside DEFINE (over
the row mapped to A: match state) and by Spark over the same values (``PREV(...)``, a LAG
window, in the same DEFINE; a plain ``SELECT`` for errors), and must be equal -- value, NULL,
sign of zero, decimal scale -- with ANSI on and off; where Spark raises, MATCH_RECOGNIZE must
raise the same ``[ERROR_CLASS]``; where Spark's analysis rejects the expression, ``spark.sql``
must raise ``MatchRecognizeError`` at a line:column inside it before any job runs.  Random
aggregates (RUNNING / FINAL, variables, DISTINCT, FILTER, CLASSIFIER() and MATCH_NUMBER()
arguments) are compared with Spark's window aggregates over the same rows, in MEASURES and in
DEFINE.  The harness is ``tests/match_state_support.py``.

The seed is fixed; ``SPARKCEP_MATCH_STATE_CASES=N`` runs N random expressions per ANSI mode
(and N / 4 aggregates) instead of the default, ``SPARKCEP_MATCH_STATE_SEED`` another seed.
Known product gaps the random cases hit are counted and printed, not failed; each one is pinned
below by an ``xfail(strict=True)`` test with a minimal repro.
"""
from __future__ import annotations

import os
import random
import re

import pytest

from sql_support import analysis_error, at, mr_spark, rows, view  # noqa: F401  (fixture)
from tests import match_state_support as M

CASES = int(os.environ.get("SPARKCEP_MATCH_STATE_CASES", "120"))
SEED = int(os.environ.get("SPARKCEP_MATCH_STATE_SEED", "20261124"))
BATCH = 150  # expressions per MATCH_RECOGNIZE query
AGG_BATCH = 30  # aggregates per query


@pytest.fixture
def ms(mr_spark, confs):
    """The shared session with MATCH_RECOGNIZE; spark.sql.ansi.enabled, which the test sets
    (``ansi_mode``), is restored at its teardown."""
    confs(mr_spark, {"spark.sql.ansi.enabled": mr_spark.conf.get("spark.sql.ansi.enabled")})
    return mr_spark


def ansi_mode(spark, ansi: bool):
    spark.conf.set("spark.sql.ansi.enabled", str(ansi).lower())  # (within a test of ``ms``)


def _print(title: str, report: M.Report):
    print(f"\n{title}: {report.summary()}")
    for key, repros in sorted(report.known.items()):
        print(f"  known gap {key!r} ({len(repros)}): {M.KNOWN.get(key, '')}\n    e.g. {repros[0][:400]}")
    for m in report.mismatches:
        print("  MISMATCH", *m, sep="\n    ")


def _failure(report: M.Report) -> str:
    return "\n\n".join("\n".join(map(str, m)) for m in report.mismatches[:10])


# ---- random expressions over match state ------------------------------------------------------

@pytest.mark.parametrize("ansi", [True, False], ids=["ansi", "no_ansi"])
def test_random_expressions_in_define_match_spark(ms, ansi):
    report = M.Report()
    for b, start in enumerate(range(0, CASES, BATCH)):
        M.define_batch(ms, random.Random(f"{SEED}-define-{ansi}-{b}"), min(BATCH, CASES - start), ansi, report)
    _print(f"DEFINE over match state, {'ANSI' if ansi else 'non-ANSI'}", report)
    assert report.values >= CASES * 2, report.summary()
    assert report.runtime_errors + report.analysis_errors >= 3, report.summary()
    assert not report.mismatches, _failure(report)


@pytest.mark.parametrize("ansi", [True, False], ids=["ansi", "no_ansi"])
def test_random_aggregates_over_match_state_match_spark(ms, ansi):
    report = M.Report()
    total = max(AGG_BATCH, CASES // 4)
    for b, start in enumerate(range(0, total, AGG_BATCH)):
        M.aggregate_batch(ms, random.Random(f"{SEED}-aggregates-{ansi}-{b}"), min(AGG_BATCH, total - start),
                          ansi, report)
    _print(f"aggregates over match state, {'ANSI' if ansi else 'non-ANSI'}", report)
    assert report.aggregates >= 1000 and report.define_aggregates >= 300, report.summary()
    assert not report.mismatches, _failure(report)


# ---- the three reported bugs -----------------------------------------------------------------

@pytest.fixture
def reported(ms):
    view(ms, "reported", "o int, x int, f double", [(1, -7, 0.3), (2, 0, 0.0)])
    return ms


def _matches(spark, define: str) -> list:
    return rows(spark, f"""SELECT * FROM reported MATCH_RECOGNIZE (
        ORDER BY o MEASURES A.o AS a, B.o AS b PATTERN (A B) DEFINE B AS {define}) AS m""")


@pytest.mark.parametrize("ansi", [True, False], ids=["ansi", "no_ansi"])
@pytest.mark.parametrize("ours, theirs", [
    ("LAST(A.f) = 0.1 + 0.2", "PREV(f) = 0.1 + 0.2"),  # decimal(2,1) 0.3, cast to double: 0.3D
    ("A.x = '-7'", "PREV(x) = '-7'"),  # int vs string: BIGINT (ANSI) or INT comparison
    ("A.f = 0.3", "PREV(f) = 0.3"),
    ("A.x * 2147483647 < 0", "PREV(x) * 2147483647 < 0"),  # ARITHMETIC_OVERFLOW, or the wrapped INT
])
def test_reported_bugs_match_spark(reported, ansi, ours, theirs):
    ansi_mode(reported, ansi)
    try:
        want = _matches(reported, theirs)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(Exception) as info:
            _matches(reported, ours)
        assert M.error_class(info.value) == M.error_class(e)
        return
    assert _matches(reported, ours) == want


def test_reported_bugs_values(reported):
    ansi_mode(reported, True)
    assert _matches(reported, "LAST(A.f) = 0.1 + 0.2") == [(1, 2)]
    assert _matches(reported, "A.x = '-7'") == [(1, 2)]
    with pytest.raises(Exception, match=r"\[ARITHMETIC_OVERFLOW\]"):
        _matches(reported, "A.x * 2147483647 < 0")
    ansi_mode(reported, False)
    # -7 * 2147483647 wraps to -2147483641 in 32 bits, as Spark computes it
    assert rows(reported, "SELECT CAST(-7 AS INT) * 2147483647")[0][0] == -2147483641
    assert _matches(reported, "A.x * 2147483647 < 0") == [(1, 2)]


# ---- analysis errors: at line:column, before any job ------------------------------------------

@pytest.mark.parametrize("ansi", [True, False], ids=["ansi", "no_ansi"])
@pytest.mark.parametrize("expression, text", [
    ("A.x AND A.f > 0", "A.x AND"),
    ("A.x + DATE'2020-01-01' > 0", "A.x +"),
    ("A.o > 0 AND A.f < DATE'2020-01-01'", "A.f <"),
])
def test_type_errors_are_analysis_errors_at_line_column_without_a_job(reported, ansi, expression, text):
    ansi_mode(reported, ansi)
    sql = f"""SELECT * FROM reported MATCH_RECOGNIZE (
        ORDER BY o MEASURES A.o AS a
        PATTERN (A B)
        DEFINE B AS {expression}) AS m"""
    plain = expression.replace("A.", "")
    with pytest.raises(Exception):  # Spark's analyzer rejects the expression too
        reported.sql(f"SELECT {plain} FROM reported").schema
    tracker = reported.sparkContext.statusTracker()
    reported.sparkContext.setJobGroup("ms-analysis", "analysis error")
    try:
        error = analysis_error(reported, sql)
    finally:
        reported.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    assert not tracker.getJobIdsForGroup("ms-analysis")
    line, column = at(sql, text)
    assert error.line == line and column <= error.column <= column + len(expression), (str(error), line, column)


# ---- what Spark's analyzer and optimizer decide (sql_ext/compiler/optimize.py, typecheck) -------------

@pytest.fixture
def gaps(ms):
    ms.sql("""SELECT * FROM VALUES
        (1, 7, CAST(NULL AS INT), CAST(1.5 AS DECIMAL(38,6)), 1.0D, CAST('1.17549435E-38' AS FLOAT),
         CAST(NULL AS DATE)),
        (2, 0, 0, CAST(0 AS DECIMAL(38,6)), 0.0D, CAST(0 AS FLOAT), CAST(NULL AS DATE))
        AS t(o, x, y, d, f, r, dt)""").createOrReplaceTempView("gaps")
    return ms


def _define(spark, condition: str) -> list:
    return rows(spark, f"""SELECT * FROM gaps MATCH_RECOGNIZE (
        ORDER BY o MEASURES A.o AS a PATTERN (A B) DEFINE B AS {condition}) AS m""")


def _outcome(spark, condition: str):
    """("rows", rows) or ("error", Spark's [ERROR_CLASS]) of ``DEFINE B AS condition``."""
    try:
        return ("rows", _define(spark, condition))
    except Exception as e:  # noqa: BLE001
        return ("error", M.error_class(e))


def _spark_side(condition: str) -> str:
    """The same condition over Spark's ``PREV(column)`` (a LAG window) instead of ``A.column``."""
    return re.sub(r"\bA\.(\w+)", r"PREV(\1)", condition)


MATCHES, DIVIDE_BY_ZERO = ("rows", [(1,)]), ("error", "DIVIDE_BY_ZERO")
# (id, ANSI, condition over the row mapped to A (x = 7, y = NULL, d = 1.5, dt = NULL), outcome)
SPARK_RULES = [
    # ConstantFolding: a failing constant runs lazily inside CASE / IF / COALESCE / NULLIF ...
    ("constant_in_case", True, "CASE WHEN A.x > 100 THEN 1 / 0 ELSE 1 END = 1", MATCHES),
    ("constant_in_if", True, "IF(A.x > 100, CAST('x' AS INT), 1) = 1", MATCHES),
    ("constant_in_coalesce", True, "coalesce(A.x IS NOT NULL, 1 / 0 = 1)", MATCHES),
    ("constant_in_nullif", True, "nullif(A.y, 1 / 0) IS NULL", MATCHES),
    # ... and fails the statement anywhere else, whatever the rows (an implicit cast too)
    ("constant_outside_conditional", True, "(A.x > 0 OR 1 / 0 = 1)", DIVIDE_BY_ZERO),
    ("literal_cast", True, "('9223372036854775808' DIV A.y) IS NULL", ("error", "CAST_INVALID_INPUT")),
    ("literal_cast_after_null", True, "(A.y + 'abc') IS NULL", ("error", "CAST_INVALID_INPUT")),
    # NullPropagation: a NULL operand of a null-intolerant call; never-NULL IS NULL
    ("null_literal_operand", True, "(A.x / 0 + NULL) IS NULL", MATCHES),
    ("not_nullable_is_not_null", True, "(CASE WHEN A.x / 0 = 1 THEN 1 ELSE 2 END) IS NOT NULL", MATCHES),
    ("cast_may_be_null", False, "CAST(coalesce(CAST(A.y AS STRING), 'x') AS INT) IS NULL", MATCHES),
    # BooleanSimplification, SimplifyConditionals, ReorderAssociativeOperator
    ("and_false", True, "(A.x / 0 = 1 AND false) IS NOT NULL", MATCHES),
    ("if_same_branches", True, "IF(A.x / 0 = 1, 1, 1) = 1", MATCHES),
    ("case_values_all_null", True, "(CASE WHEN A.x / 0 = 1 THEN NULL END) IS NULL", MATCHES),
    ("integral_constants_combined", True, "A.x + 2147483647 + -2147483647 = 7", MATCHES),
    # DecimalPrecision: integral vs decimal literal, reduced to a BIGINT bound or a constant
    ("decimal_literal_beyond_bigint", True, "(A.y < 99999999999999999999.99) IS NOT NULL", MATCHES),
    ("decimal_literal_bound", True, "A.x > 6.5 AND A.x < 7.5 AND 6.5 < A.x", MATCHES),
    # negative numeric literals are literals (typed by their digits)
    ("negative_round_scale", True, "round(A.x, -1) = 10", MATCHES),
    ("negative_decimal_literal", True, "CAST(-1.5 * A.d AS STRING) = '-2.250000'", MATCHES),
    # Spark's functions as written: log10, log(base, x), date_add / date_sub / datediff
    ("log10", True, "log10(A.f) = 0", MATCHES),
    ("log_base", True, "log(10, A.f * 1000) = 2.9999999999999996", MATCHES),
    ("date_add", False, "date_add(A.dt, 1) IS NULL", MATCHES),
    ("date_sub", True, "date_sub(DATE'2020-03-01', A.x) = DATE'2020-02-23'", MATCHES),
    ("datediff", False, "datediff(A.dt, A.dt) IS NULL", MATCHES),
    ("datediff_strings", True, "datediff('2020-03-01', DATE'2020-02-23') = A.x", MATCHES),
    # simple CASE: CASE v WHEN w is CASE WHEN v = w (Spark's comparison coercion)
    ("simple_case", True, "CASE A.x WHEN 7 THEN true END", MATCHES),
    ("simple_case_string", True, "CASE A.x WHEN '8' THEN false WHEN '7' THEN true ELSE false END", MATCHES),
    ("simple_case_invalid", True, "CASE A.x WHEN 'seven' THEN true END", ("error", "CAST_INVALID_INPUT")),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in SPARK_RULES])
def test_spark_rules_match_spark(gaps, case):
    _, ansi, ours, want = case
    ansi_mode(gaps, ansi)
    assert _outcome(gaps, _spark_side(ours)) == want
    assert _outcome(gaps, ours) == want


def test_failing_constant_is_an_error_at_its_construct(gaps):
    ansi_mode(gaps, True)
    sql = """SELECT * FROM gaps MATCH_RECOGNIZE (
        ORDER BY o MEASURES A.o AS a PATTERN (A B)
        DEFINE B AS ('9223372036854775808' DIV A.y) IS NULL) AS m"""
    error = analysis_error(gaps, sql)
    assert "[CAST_INVALID_INPUT]" in str(error) and (error.line, error.column) == at(sql, "'9223")


# ---- known product gaps, pinned -------------------------------------------------------------

# (id, ANSI, the engine's condition over A.*, KNOWN key): Spark's (over PREV) matches
KNOWN_GAPS = [
    ("float_to_string_java17", True, "CAST(A.r AS STRING) = '1.17549435E-38'", "java_to_string"),
    ("exp_ulp", True, "exp(A.f) = exp(PREV(f))", "transcendental"),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in KNOWN_GAPS])
def test_known_gap_spark_side(gaps, case):
    """What each pinned gap compares with: Spark's own condition matches (A = row 1, B = row 2)."""
    _, ansi, ours, _ = case
    ansi_mode(gaps, ansi)
    assert _outcome(gaps, _spark_side(ours)) == MATCHES


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0], marks=pytest.mark.xfail(
    strict=True, reason=M.KNOWN[c[3]])) for c in KNOWN_GAPS])
def test_known_gap(gaps, case):
    _, ansi, ours, _ = case
    ansi_mode(gaps, ansi)
    assert _outcome(gaps, ours) == MATCHES


def test_analysis_error_in_a_constant_part(gaps):
    ansi_mode(gaps, True)
    sql = """SELECT * FROM gaps MATCH_RECOGNIZE (
        ORDER BY o MEASURES A.o AS a PATTERN (A B)
        DEFINE B AS A.x + CAST(DATE'2020-01-01' AS INT) > 0) AS m"""
    error = analysis_error(gaps, sql)
    assert (error.line, error.column) == at(sql, "CAST(DATE")


# ---- the library fixes the random cases found (udtf/sparksql) -------------------------------

@pytest.mark.parametrize("ansi, ours, theirs", [
    # non-ANSI: a string next to a decimal of scale 0 is cast to that decimal ('8.9' -> 9)
    (False, "A.d0 = '8.9'", "PREV(d0) = '8.9'"),
    (False, "A.d0 <=> A.s", "PREV(d0) <=> PREV(s)"),
    # BETWEEN / NULLIF cast their first argument before they look at the others
    (True, "(A.s BETWEEN A.nb AND A.nb) IS NULL", "(PREV(s) BETWEEN PREV(nb) AND PREV(nb)) IS NULL"),
    (True, "nullif(A.s, A.nb) IS NULL", "nullif(PREV(s), PREV(nb)) IS NULL"),
    # substring from a huge negative position; pmod; timestamp to int; string - date; decimal(38,10) input
    (True, "substring(A.s, -2147483648) = '8.'", "substring(PREV(s), -2147483648) = '8.'"),
    (True, "pmod(A.i, 3) = 2 AND pmod(A.f, 2.5D) = 0", "pmod(PREV(i), 3) = 2 AND pmod(PREV(f), 2.5D) = 0"),
    (False, "CAST(A.ts AS INT) IS NULL", "CAST(PREV(ts) AS INT) IS NULL"),
    (False, "(A.ds - A.dt) = INTERVAL '59' DAY", "(PREV(ds) - PREV(dt)) = INTERVAL '59' DAY"),
    (True, "A.big > 0", "PREV(big) > 0"),
])
def test_library_fixes(ms, ansi, ours, theirs):
    """Cases the random tests found, fixed in udtf/sparksql: both sides match (row 1 = A)."""
    ms.sql("""SELECT * FROM VALUES
        (1, CAST(9 AS DECIMAL(1,0)), '8.9', CAST(NULL AS BOOLEAN), -7, -7.5D,
         TIMESTAMP'9999-12-31 23:59:59.999999', DATE'2020-01-01', '2020-02-29',
         CAST('99999999999999999999.5' AS DECIMAL(38,10))),
        (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
        AS t(o, d0, s, nb, i, f, ts, dt, ds, big)""").createOrReplaceTempView("fixes")
    ansi_mode(ms, ansi)

    def run(condition):
        try:
            return rows(ms, f"""SELECT * FROM fixes MATCH_RECOGNIZE (ORDER BY o MEASURES A.o AS a
                PATTERN (A B) DEFINE B AS {condition}) AS m""")
        except Exception as e:  # noqa: BLE001
            return ("error", M.error_class(e))
    want = run(theirs)
    assert want in ([(1,)], ("error", "CAST_INVALID_INPUT"))
    assert run(ours) == want


def test_sum_of_negative_zero_and_decimal_overflow_classes(ms):
    from decimal import Decimal
    big = Decimal(9 * 10 ** 37)
    view(ms, "sums", "k int, t int, f double, d decimal(38,0)", [(1, 1, -0.0, big), (1, 2, None, big)])
    ansi_mode(ms, False)
    got = rows(ms, """SELECT * FROM sums MATCH_RECOGNIZE (PARTITION BY k ORDER BY t
        MEASURES FINAL sum(A.f) AS s, FINAL sum(A.d) AS sd, FINAL avg(A.d) AS ad PATTERN (A+) DEFINE A AS true) AS m""")
    want = rows(ms, "SELECT k, sum(f), sum(d), avg(d) FROM sums GROUP BY k")
    assert got == want == [(1, 0.0, None, None)] and str(got[0][1]) == "0.0"
    ansi_mode(ms, True)
    for agg in ("sum", "avg"):
        with pytest.raises(Exception) as info:
            rows(ms, f"""SELECT * FROM sums MATCH_RECOGNIZE (PARTITION BY k ORDER BY t
                MEASURES FINAL {agg}(A.d) AS v PATTERN (A+) DEFINE A AS true) AS m""")
        assert M.error_class(info.value) == "NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION"


@pytest.mark.parametrize("ours, theirs", [
    ("ltrim(A.s) = 'a  '", "ltrim(PREV(s)) = 'a  '"),
    ("rtrim(A.s) = '  a'", "rtrim(PREV(s)) = '  a'"),
    ("TRIM(LEADING FROM A.s) = 'a  '", "TRIM(LEADING FROM PREV(s)) = 'a  '"),
    ("trim(A.s) = 'a'", "trim(PREV(s)) = 'a'"),
])
def test_one_sided_trims_over_match_state(ms, ours, theirs):
    """LTRIM / RTRIM over match state trim one side, as Spark does (they once trimmed both)."""
    view(ms, "padded", "o int, s string", [(1, "  a  "), (2, "b")])

    def run(condition):
        return rows(ms, f"""SELECT * FROM padded MATCH_RECOGNIZE (ORDER BY o MEASURES A.o AS a
            PATTERN (A B) DEFINE B AS {condition}) AS m""")
    assert run(ours) == run(theirs) == [(1,)]


@pytest.mark.parametrize("ansi", [True, False], ids=["ansi", "no_ansi"])
@pytest.mark.parametrize("ours, theirs", [
    ("isnan(A.f)", "isnan(PREV(f))"),  # DOUBLE
    ("NOT isnan(A.i)", "NOT isnan(PREV(i))"),  # INT, implicitly cast to DOUBLE
    ("isnan(A.s)", "isnan(PREV(s))"),  # STRING 'NaN', cast to DOUBLE
    ("isnan(A.f * 0)", "isnan(PREV(f) * 0)"),
    ("isnan(A.n) = false", "isnan(PREV(n)) = false"),  # NULL in, false out
])
def test_isnan_over_match_state(ms, ansi, ours, theirs):
    view(ms, "nans", "o int, f double, i int, s string, n double",
         [(1, float("nan"), 3, "NaN", None), (2, 1.0, 4, "1", None)])
    ansi_mode(ms, ansi)

    def run(condition):
        return rows(ms, f"""SELECT * FROM nans MATCH_RECOGNIZE (ORDER BY o MEASURES A.o AS a
            PATTERN (A B) DEFINE B AS {condition}) AS m""")
    assert run(ours) == run(theirs) == [(1,)]


def test_isnan_of_a_boolean_is_an_analysis_error(ms):
    view(ms, "nans", "o int, b boolean", [(1, True), (2, False)])
    sql = "SELECT * FROM nans MATCH_RECOGNIZE (ORDER BY o MEASURES A.o AS a PATTERN (A B) DEFINE B AS isnan(A.b))"
    error = analysis_error(ms, sql)
    assert (error.line, error.column) == at(sql, "isnan(A.b)") and "UNEXPECTED_INPUT_TYPE" in error.message


@pytest.mark.parametrize("ansi", [True, False], ids=["ansi", "no_ansi"])
@pytest.mark.parametrize("ours, theirs", [
    ("degrees(A.f) = degrees(B.f) - 180", "degrees(PREV(f)) = degrees(f) - 180"),  # DOUBLE
    ("degrees(A.i) > 57.29577951308232", "degrees(PREV(i)) > 57.29577951308232"),  # INT, cast to DOUBLE
    ("degrees(A.s) < 57.2957795130823", "degrees(PREV(s)) < 57.2957795130823"),  # STRING '1e-3', to DOUBLE
    ("degrees(A.big) = double('inf')", "degrees(PREV(big)) = double('inf')"),  # overflow: infinity, no error
    ("isnan(degrees(A.nan))", "isnan(degrees(PREV(nan)))"),
    ("degrees(A.n) IS NULL", "degrees(PREV(n)) IS NULL"),  # NULL in, NULL out
])
def test_degrees_over_match_state(ms, ansi, ours, theirs):
    view(ms, "angles", "o int, f double, i int, s string, big double, nan double, n double",
         [(1, 3.141592653589793, 2, "1e-3", 1e308, float("nan"), None), (2, 6.283185307179586, 0, "x", 0.0, 0.0, 1.0)])
    ansi_mode(ms, ansi)

    def run(condition):
        return rows(ms, f"""SELECT * FROM angles MATCH_RECOGNIZE (ORDER BY o MEASURES A.o AS a,
            degrees(A.f) AS d PATTERN (A B) DEFINE B AS {condition}) AS m""")
    assert run(ours) == run(theirs) == [(1, 180.0)]


def test_degrees_of_a_malformed_string_raises_under_ansi(ms):
    view(ms, "angles", "o int, s string", [(1, "x"), (2, "1")])
    ansi_mode(ms, True)
    sql = "SELECT * FROM angles MATCH_RECOGNIZE (ORDER BY o MEASURES A.o AS a PATTERN (A B) DEFINE B AS degrees(A.s) > 0)"
    with pytest.raises(Exception, match="CAST_INVALID_INPUT"):
        rows(ms, sql)
    ansi_mode(ms, False)
    assert rows(ms, sql.replace("> 0", "IS NULL")) == [(1,)]
