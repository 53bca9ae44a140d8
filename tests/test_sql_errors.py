"""Errors of MATCH_RECOGNIZE queries: the message and the line:column in the user's SQL.

Analysis errors are raised by ``spark.sql`` before any Spark job runs (``MatchRecognizeError``,
``str()`` = ``line L:C: message``); positions are those of the offending construct in the
multi-line query, found with ``at(sql, text)``.  Unsupported constructs must fail the same way,
never give a wrong answer.  Errors of the running query (the standard's errors of AFTER MATCH
SKIP, an engine limit, Spark's ANSI errors) come as a ``MatchRecognizeError`` too, raised by the
action that runs the query (``sql_ext.spark.failures``).
"""
from __future__ import annotations

import pytest

import sql_ext
from spark_confs import session_confs
from sql_support import analysis_error, at, mr_spark, view  # noqa: F401  (fixture)
from udtf.errors import MatchRecognizeError

QUERY = """SELECT *
FROM series
  MATCH_RECOGNIZE (
    PARTITION BY k
    ORDER BY t
    MEASURES {measures}
    {rows}
    {skip}
    PATTERN ({pattern})
    {subset}
    DEFINE {define}
  ) AS m"""

DEFAULTS = dict(measures="FIRST(A.t) AS start", rows="ONE ROW PER MATCH",
                skip="AFTER MATCH SKIP PAST LAST ROW", pattern="A B+", subset="",
                define="B AS p < PREV(p)")


@pytest.fixture(scope="module")
def series(mr_spark):
    view(mr_spark, "series", "k string, t int, p int",
         [("a", t, p) for t, p in enumerate([10, 9, 8, 11, 12, 7], 1)])
    return mr_spark


def query(**parts) -> str:
    return QUERY.format(**{**DEFAULTS, **parts})


# (id, query parts, message, text at the error position[, occurrence])
CASES = [
    # names
    ("unknown variable in MEASURES", dict(measures="FIRST(Z.t) AS start"),
     "Z is not a pattern variable or subset", "Z.t"),
    ("unknown column in MEASURES", dict(measures="LAST(A.nope) AS x"),
     "column nope cannot be resolved; input columns are: k, t, p", "A.nope"),
    ("unknown column in DEFINE", dict(define="B AS nope < PREV(p)"),
     "column nope cannot be resolved; input columns are: k, t, p", "nope"),
    ("unknown variable in DEFINE", dict(define="B AS Z.p < PREV(p)"),
     "Z is not a pattern variable or subset", "Z.p"),
    ("variable defined twice", dict(define="B AS p < PREV(p),\n           b AS p > 0"),
     "DEFINE: pattern variable B is defined twice", "b AS p > 0"),
    ("DEFINE of a variable not in PATTERN", dict(define="B AS p < PREV(p), C AS p > 0"),
     "DEFINE: C is not a pattern variable of PATTERN", "C AS"),
    ("SUBSET of an unknown variable", dict(subset="SUBSET U = (A, Z)"),
     "SUBSET U: Z is not a pattern variable", "Z)"),
    ("SUBSET named like a variable", dict(subset="SUBSET A = (A, B)"),
     "SUBSET: A is already a pattern variable or subset", "A = ("),
    ("SKIP TO a variable not in PATTERN", dict(skip="AFTER MATCH SKIP TO Z"),
     "AFTER MATCH SKIP TO: Z is not a pattern variable or subset", "Z\n"),
    ("SKIP TO FIRST a variable not in PATTERN", dict(skip="AFTER MATCH SKIP TO FIRST Z"),
     "AFTER MATCH SKIP TO FIRST: Z is not a pattern variable or subset", "Z\n"),
    ("measure named twice", dict(measures="FIRST(A.t) AS x,\n             LAST(A.t) AS X"),
     "MEASURES: X is defined twice", "X\n"),
    ("measure named like a partition column", dict(measures="LAST(p) AS K"),
     "MEASURES: K clashes with an input column of the output", "K\n"),
    ("ALL ROWS measure named like an input column", dict(measures="LAST(t) AS p", rows="ALL ROWS PER MATCH"),
     "MEASURES: p clashes with an input column of the output", "p\n"),
    # semantics of DEFINE / MEASURES
    ("FINAL in DEFINE", dict(define="B AS FINAL LAST(B.p) > 1"),
     "FINAL is not allowed in DEFINE (conditions see the match as it grows)", "FINAL"),
    ("MATCH_NUMBER in UNTIL", dict(pattern="A B+", define="B AS p < PREV(p) UNTIL MATCH_NUMBER() > 3"),
     "MATCH_NUMBER() is not allowed in DEFINE with SEMANTICS FLINKCEP or in UNTIL (a run's match number "
     "is known only when it is reported)", "MATCH_NUMBER"),
    ("nested aggregates", dict(measures="SUM(COUNT(*)) AS x"),
     "SUM: nested COUNT is not allowed in its argument", "COUNT"),
    ("navigation inside an aggregate", dict(measures="AVG(LAST(A.p)) AS x"),
     "AVG: nested LAST is not allowed in its argument", "LAST"),
    ("aggregate inside a navigation", dict(measures="LAST(SUM(A.p)) AS x"),
     "LAST: nested SUM is not allowed in its argument", "SUM"),
    ("PREV inside PREV", dict(define="B AS p < PREV(PREV(p))"),
     "PREV: nested PREV is not allowed in its argument", "PREV(p)"),
    ("variables mixed in one navigation", dict(measures="LAST(A.p + B.p) AS x"),
     "LAST: all column references in the argument must be qualified by the same pattern variable, "
     "found A, B", "LAST"),
    ("variables mixed in one aggregate", dict(measures="SUM(A.p * B.p) AS x"),
     "SUM: all column references in the argument must be qualified by the same pattern variable, "
     "found A, B", "SUM"),
    ("navigation without a column", dict(measures="FIRST(1) AS x"),
     "FIRST: the argument must reference a column, e.g. FIRST(A.price)", "FIRST"),
    ("non-literal logical offset", dict(measures="LAST(A.p, t + 1) AS x"),
     "LAST: the offset must be a non-negative integer literal", "t + 1"),
    ("negative physical offset", dict(define="B AS p < PREV(p, -1)"),
     "PREV: the offset must be a non-negative integer literal", "-1"),
    ("v.* outside COUNT", dict(measures="SUM(A.*) AS x"),
     "SUM: * and v.* are only allowed as the only argument of COUNT", "A.*"),
    # unsupported constructs
    ("window function in MEASURES", dict(measures="COUNT(*) OVER () AS x"),
     "window functions (OVER) are not allowed in MEASURES or DEFINE; navigate with "
     "PREV/NEXT/FIRST/LAST and aggregate over pattern variables", "COUNT(*) OVER"),
    ("window function in DEFINE", dict(define="B AS p < AVG(p) OVER (PARTITION BY k)"),
     "window functions (OVER) are not allowed in MEASURES or DEFINE; navigate with "
     "PREV/NEXT/FIRST/LAST and aggregate over pattern variables", "AVG(p)"),
    ("unsupported aggregate", dict(measures="HLL_SKETCH_AGG(A.p) AS x"),
     "aggregate HLL_SKETCH_AGG is not supported in MATCH_RECOGNIZE: returns a serialized sketch (BINARY) whose "
     "bytes are Apache DataSketches'", "HLL_SKETCH_AGG"),
    ("IGNORE NULLS", dict(measures="MAX(A.p) IGNORE NULLS AS x"),
     "MAX: IGNORE NULLS is not supported (Spark takes it for FIRST, LAST and ANY_VALUE)", "MAX"),
    # Trino's min(x, n): the message named LEAST, which sqlglot writes for it
    ("min with two arguments", dict(measures="min(A.t, 2) AS m"),
     "MIN: [WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `min` requires 1 parameters but the actual number is 2.", "min"),
    ("max with two arguments in DEFINE", dict(define="B AS max(B.p, 1) > 0"),
     "MAX: [WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `max` requires 1 parameters but the actual number is 2.", "max"),
    # Spark 4.2's max_by(x, y, k): the message named WRONG_NUM_ARGS ("requires 2 parameters"), which Spark does not say
    ("max_by with k", dict(measures="max_by(A.t, A.p, 2) AS top2"),
     "MAX_BY(x, y, k): Spark's k-element form is not supported in MATCH_RECOGNIZE (the order of its ties is that "
     "of Spark's heap); max_by(x, y) and array_agg are", "max_by"),
    ("min_by with k in DEFINE", dict(define="B AS min_by(B.t, B.p, 2)[0] > 0"),
     "MIN_BY(x, y, k): Spark's k-element form is not supported in MATCH_RECOGNIZE (the order of its ties is that "
     "of Spark's heap); min_by(x, y) and array_agg are", "min_by"),
    ("function of match state in DEFINE", dict(define="B AS soundex(CLASSIFIER()) = 'B'"),
     "SOUNDEX over match state (aggregates, FIRST/LAST, CLASSIFIER or variable columns) is not supported; "
     "the engine evaluates Spark's operators, comparisons, CASE, IF, COALESCE, NULLIF, IN, BETWEEN, CAST, "
     "LIKE and the arithmetic, rounding, string, date and array functions of docs/spark-semantics.md", "soundex"),
    ("MATCH_RECOGNIZE inside MEASURES", dict(measures="(SELECT max(n) FROM series MATCH_RECOGNIZE ("
                                                      "MEASURES COUNT(*) AS n PATTERN (X)) AS i) AS x"),
     "a MATCH_RECOGNIZE cannot stand inside MEASURES or DEFINE", "series MATCH_RECOGNIZE"),
    ("FIRST inside PREV not whole", dict(define="B AS p < PREV(LAST(B.p) + 1)"),
     "PREV: a nested LAST must be its whole first argument (e.g. PREV(LAST(A.price), 2))", "LAST(B.p)"),
    ("PREV inside FIRST", dict(measures="FIRST(PREV(A.p)) AS x"),
     "FIRST: nested PREV is not allowed in its argument", "PREV(A.p)"),
    ("RUNNING on PREV", dict(measures="RUNNING PREV(A.p) AS x"),
     "RUNNING applies to FIRST, LAST and aggregates, not to PREV", "RUNNING"),
    ("offset too large", dict(measures="LAST(A.p, 3000000000) AS x"),
     "LAST: the offset must not exceed 2147483647", "3000000000"),
    ("PARTITION BY an expression", dict(),
     "PARTITION BY: only column names of the input are supported", "upper(k)"),
    ("ORDER BY an expression", dict(),
     "ORDER BY: only column names of the input are supported", "t + 0"),
    ("DISTINCT with standard semantics", dict(skip="SEMANTICS STANDARD DISTINCT"),
     "SEMANTICS STANDARD DISTINCT: DISTINCT applies to SEMANTICS FLINKCEP (standard semantics report each "
     "match once)", "DISTINCT"),
    ("NO SKIP with standard semantics", dict(skip="AFTER MATCH NO SKIP"),
     "AFTER MATCH NO SKIP requires SEMANTICS FLINKCEP (standard semantics report one match per "
     "start row; use AFTER MATCH SKIP TO NEXT ROW)", "AFTER MATCH NO SKIP"),
    ("ONE ROW without PARTITION BY and MEASURES", dict(),
     "ONE ROW PER MATCH without PARTITION BY needs MEASURES: the output would have no columns",
     "MATCH_RECOGNIZE"),
    ("exclusion with unmatched rows", dict(rows="ALL ROWS PER MATCH WITH UNMATCHED ROWS", pattern="A {- B+ -}"),
     "a pattern exclusion {- ... -} cannot be used with ALL ROWS PER MATCH WITH UNMATCHED ROWS "
     "(excluded rows would be neither matched nor unmatched in the output)", "{-"),
    # PATTERN syntax: positions inside the pattern text
    ("quantifier bounds", dict(pattern="A B{3,2}"),
     "quantifier {3,2} has its maximum below its minimum", "{3,2}"),
    ("character not in the pattern syntax", dict(pattern="A B+ %"),
     "unexpected character '%' in PATTERN", "%"),
    ("quantifier after quantifier", dict(pattern="A B+*"),
     "a quantifier cannot directly follow another quantifier; use parentheses", "*)"),
    ("quantified negation", dict(pattern="A ~B+ A"),
     "unexpected '+' in PATTERN", "+ A)"),
    ("unbalanced parenthesis", dict(pattern="A (B"),
     "Unbalanced parentheses in PATTERN: '(' at line 9:13 is never closed", "(A (B"),
    ("pattern on several lines", dict(pattern="A\n             B{5,1}"),
     "quantifier {5,1} has its maximum below its minimum", "{5,1}"),
    ("missing PATTERN", dict(pattern=None),
     "MATCH_RECOGNIZE requires a PATTERN clause", "DEFINE"),
]

SPECIAL = {
    "PARTITION BY an expression": lambda: query().replace("PARTITION BY k", "PARTITION BY upper(k)"),
    "ORDER BY an expression": lambda: query().replace("ORDER BY t", "ORDER BY t + 0"),
    "ONE ROW without PARTITION BY and MEASURES":
        lambda: query().replace("PARTITION BY k\n", "").replace("MEASURES FIRST(A.t) AS start\n", ""),
    "missing PATTERN": lambda: query(pattern="A").replace("    PATTERN (A)\n", ""),
}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_analysis_error_message_and_position(series, case):
    name, parts, message, needle, *occurrence = case
    sql = SPECIAL[name]() if name in SPECIAL else query(**parts)
    err = analysis_error(series, sql)
    assert err.message == message
    assert (err.line, err.column) == at(sql, needle, *occurrence)
    assert str(err) == f"line {err.line}:{err.column}: {message}"


def test_spark_only_arguments_log_no_sqlglot_warning(series, caplog):
    """max_by(x, y, k) in the clause: sqlglot's Spark generator, which names the call, drops k and
    logged "Argument 'count' is not supported" several times per statement before the error."""
    sql = query(measures="max_by(A.t, A.p, 2) AS top2")
    with caplog.at_level("WARNING", logger="sqlglot"):
        analysis_error(series, sql)
    assert not [r for r in caplog.records if r.name == "sqlglot"]


ORDER = ("clauses must appear in the order PARTITION BY, ORDER BY, PERIOD, LAYER, MEASURES, ROWS PER MATCH, "
         "AFTER MATCH SKIP, SEMANTICS, PATTERN, WITHIN, WITH TIMEOUT ROWS, SUBSET, DEFINE")

# malformed clauses: (id, the clause's body, message, the text at the error position)
MALFORMED = [
    ("empty SUBSET list", "ORDER BY t PATTERN (A B) SUBSET U = () DEFINE B AS p > 0",
     "Expecting a pattern variable of the SUBSET", ") DEFINE"),
    ("SUBSET list ending in a comma", "ORDER BY t PATTERN (A B) SUBSET U = (A,) DEFINE B AS p > 0",
     "Expecting a pattern variable of the SUBSET", ") DEFINE"),
    ("SUBSET without a subset", "ORDER BY t PATTERN (A B) SUBSET DEFINE B AS p > 0",
     "Expecting a subset (<name> = (<variables>)), found the DEFINE clause", "DEFINE"),
    ("DEFINE without a definition", "ORDER BY t PATTERN (A B) DEFINE", "Expecting a definition "
     "(<variable> AS <condition>)", ")", 2),
    ("DEFINE list ending in a comma", "ORDER BY t PATTERN (A B) DEFINE B AS p > 0,",
     "Expecting a definition (<variable> AS <condition>)", ")", 2),
    ("DEFINE before PATTERN", "ORDER BY t DEFINE B AS p > 0 PATTERN (A B)",
     f"DEFINE clause is out of order or repeated in MATCH_RECOGNIZE; {ORDER}", "DEFINE"),
    ("WITHIN before PATTERN", "ORDER BY t WITHIN INTERVAL '1' SECOND PATTERN (A B)",
     f"WITHIN clause is out of order or repeated in MATCH_RECOGNIZE; {ORDER}", "WITHIN"),
    ("MEASURES without a measure", "ORDER BY t MEASURES PATTERN (A B) DEFINE B AS p > 0",
     "Expecting a measure (<expression> AS <name>), found the PATTERN clause", "PATTERN"),
    ("MEASURES list ending in a comma", "ORDER BY t MEASURES COUNT(*) AS n, PATTERN (A B) DEFINE B AS p > 0",
     "Expecting a measure (<expression> AS <name>), found the PATTERN clause", "PATTERN"),
    ("MEASURES before ONE ROW", "ORDER BY t MEASURES ONE ROW PER MATCH PATTERN (A B) DEFINE B AS p > 0",
     "Expecting a measure (<expression> AS <name>), found the ROWS PER MATCH clause", "ONE"),
    ("ORDER BY without a key", "ORDER BY PATTERN (A B) DEFINE B AS p > 0",
     "Expecting an ORDER BY key, found the PATTERN clause", "PATTERN"),
    ("PARTITION BY without a key", "PARTITION BY ORDER BY t PATTERN (A B) DEFINE B AS p > 0",
     "Expecting a PARTITION BY expression, found the ORDER BY clause", "ORDER BY"),
    ("MEASURES twice", "ORDER BY t MEASURES COUNT(*) AS n MEASURES LAST(t) AS l PATTERN (A B)",
     f"MEASURES clause is out of order or repeated in MATCH_RECOGNIZE; {ORDER}", "MEASURES LAST"),
    ("WITHIN without a unit", "ORDER BY t PATTERN (A B) WITHIN INTERVAL '10' DEFINE B AS p > 0",
     "WITHIN: DEFINE is not an interval unit (SECOND, MINUTE, HOUR, DAY, ...)", "DEFINE"),
    ("an incomplete WITH UNMATCHED ROWS", "ORDER BY t MEASURES COUNT(*) AS n ALL ROWS PER MATCH WITH UNMATCHED "
     "PATTERN (A B)", "Expecting SHOW EMPTY MATCHES, OMIT EMPTY MATCHES or WITH UNMATCHED ROWS after ALL ROWS "
     "PER MATCH", "WITH"),
    ("RUNNING on a column", "ORDER BY t PATTERN (A B) DEFINE B AS RUNNING p > 0",
     "RUNNING applies to a navigation function or an aggregate, e.g. RUNNING LAST(A.price)", "RUNNING"),
    ("CLASSIFIER of two variables", "ORDER BY t PATTERN (A B) DEFINE B AS CLASSIFIER(A, B) = 'A'",
     "CLASSIFIER takes one pattern variable or subset (or none)", ", B)"),
    ("an empty alternative", "ORDER BY t PATTERN (A | | B) DEFINE B AS p > 0", "expected a pattern element (a "
     "variable, (...), PERMUTE, ^, $ or {- ... -}; () is the empty pattern)", "| B"),
    ("ORDER without BY", "ORDER t PATTERN (A B) DEFINE B AS p > 0", "Expecting BY after ORDER", "ORDER"),
    ("PARTITION without BY", "PARTITION t ORDER BY t PATTERN (A B) DEFINE B AS p > 0", "Expecting BY after PARTITION",
     "PARTITION"),
    ("an ALL ROWS option after ONE ROW PER MATCH", "ORDER BY t MEASURES COUNT(*) AS n ONE ROW PER MATCH SHOW EMPTY "
     "MATCHES PATTERN (A B) DEFINE B AS p > 0", "SHOW ... is an option of ALL ROWS PER MATCH, not of ONE ROW PER "
     "MATCH", "SHOW"),
    ("COUNT of two stars", "ORDER BY t MEASURES COUNT(A.*, B.*) AS n PATTERN (A B) DEFINE B AS p > 0",
     "COUNT: * and v.* are only allowed as the only argument of COUNT", "A.*"),
    ("an empty last alternative", "ORDER BY t PATTERN (A | ) DEFINE B AS p > 0", "expected a pattern element (a "
     "variable, (...), PERMUTE, ^, $ or {- ... -}; () is the empty pattern)", ") DEFINE"),
    ("an empty exclusion", "ORDER BY t PATTERN (A {- -}) DEFINE B AS p > 0", "expected a pattern element (a "
     "variable, (...), PERMUTE, ^, $ or {- ... -}; () is the empty pattern)", "-})"),
    ("an empty PATTERN", "ORDER BY t PATTERN () DEFINE B AS p > 0", "expected a pattern element (a variable, "
     "(...), PERMUTE, ^, $ or {- ... -}; () is the empty pattern)", ") DEFINE"),
    ("a malformed quantifier", "ORDER BY t PATTERN (A B{1,2,3}) DEFINE B AS p > 0",
     "quantifier {1,2,3}: expecting {n}, {n,}, {,m} or {n,m} with non-negative integers n and m", "{1,2,3}"),
    ("column names of another count", "ORDER BY t MEASURES COUNT(*) AS n PATTERN (A B) DEFINE B AS p > 0) AS m "
     "(a, b, c", "AS m (a, b, c) names 3 columns, but MATCH_RECOGNIZE has 1: n", "a, b, c"),
]


@pytest.mark.parametrize("case", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_clauses_name_the_problem(series, case):
    name, body, message, needle, *occurrence = case
    sql = f"SELECT * FROM series MATCH_RECOGNIZE ({body})"
    err = analysis_error(series, sql)
    assert (err.message, err.line, err.column) == (message, *at(sql, needle, *occurrence))


# Spark's parser reads the clause's Spark expressions (sql_ext.compiler.syntax): its errors, at the user's text
SPARK_SYNTAX = [
    ("two comparison operators", dict(define="B AS p > > 1"), "[PARSE_SYNTAX_ERROR] Syntax error at or near '>'.",
     "> 1"),
    ("a leading comma in a call", dict(measures="max(, A.t) AS x"),
     "[PARSE_SYNTAX_ERROR] Syntax error at or near ','.", ", A.t"),
    ("an empty tuple", dict(measures="() AS x"), "[PARSE_SYNTAX_ERROR] Syntax error at or near ')'.", ") AS x"),
    ("an interval without a unit", "SELECT * FROM series MATCH_RECOGNIZE (ORDER BY t MEASURES COUNT(*) AS n\n"
                                   "  PATTERN (A B) WITHIN INTERVAL '1')",
     "[INVALID_TYPED_LITERAL] The value of the typed literal \"INTERVAL\" is invalid: '1'.", "INTERVAL '1'"),
    ("a measure name Spark does not read", dict(measures="COUNT(*) AS 1"),
     "[PARSE_SYNTAX_ERROR] Syntax error at or near '1'.", "1\n"),
    # (found by test_grammar's token edits: sqlglot read an empty IN, Spark the word as an alias)
    ("a word after a condition", dict(define="B AS p > 1 IN"),
     "[PARSE_SYNTAX_ERROR] Syntax error at or near ')'.", "N\n"),
]


@pytest.mark.parametrize("case", SPARK_SYNTAX, ids=[c[0] for c in SPARK_SYNTAX])
def test_spark_syntax_errors_in_the_clause(series, case):
    name, parts, message, needle = case
    sql = parts if isinstance(parts, str) else query(**parts)
    err = analysis_error(series, sql)
    assert (err.message, err.line, err.column) == (message, *at(sql, needle))


def test_the_generated_sqls_errors_are_not_logged(series):
    """pyspark logs a failed call's error with the SQL it failed on: the queries the rewrite has
    Spark analyse are generated SQL, whose errors reach the user at their own SQL, not in that
    log; a failed query of the user's own is logged as pyspark logs it."""
    import logging

    from pyspark.logger import PySparkLogger

    records, handler = [], logging.Handler()
    handler.emit = records.append
    logger = PySparkLogger.getLogger("SQLQueryContextLogger")
    logger.addHandler(handler)
    try:
        for sql in (query(define="B AS p > > 1"), query(measures="COUNT(*) AS 1"),
                    query(define="B AS date_trunc() IS NULL")):
            with pytest.raises(MatchRecognizeError):
                series.sql(sql).collect()
        assert not records
        with pytest.raises(Exception):
            series.sql("SELECT no_such_column")
        assert records
    finally:
        logger.removeHandler(handler)


def test_positions_in_ctes_nested_clauses_and_later_statements(series):
    """Positions are in the whole SQL text: inside a CTE, in the outer of two nested clauses,
    in the second statement of a script."""
    sql = """WITH low AS (
  SELECT * FROM series MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY t
    MEASURES FIRST(A.t) AS start, COUNT(*) AS n
    PATTERN (A B+) DEFINE B AS p < PREV(p))
)
SELECT * FROM low MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY start
  MEASURES SUM(X.nn) AS total
  PATTERN (X+))"""
    err = analysis_error(series, sql)
    assert (err.message, err.line, err.column) == (
        "column nn cannot be resolved; input columns are: k, start, n", *at(sql, "X.nn"))

    inner = sql.replace("PREV(p))", "PREV(Q.p))").replace("X.nn", "X.n")
    err = analysis_error(series, inner)
    assert (err.message, err.line, err.column) == ("Q is not a pattern variable or subset", *at(inner, "Q.p"))

    script = "SELECT 1;\n" + query(measures="LAST(Y.p) AS y")
    with pytest.raises(MatchRecognizeError) as info:
        sql_ext.transpile(script, series)
    assert (info.value.line, info.value.column) == at(script, "Y.p")


FLINK_SKIP = [7, 9, 10, 5, 10, 7, 14]


@pytest.mark.parametrize("skip, pattern, define, message", [
    # Flink docs, "AFTER MATCH SKIP TO FIRST A": the first match {#1..#4} starts with A
    ("TO FIRST A", "A+ C", "", "AFTER MATCH SKIP TO FIRST A failed: cannot skip to first row of match"),
    # Flink docs, "AFTER MATCH SKIP TO LAST A": the docs show three rows, but the standard's
    # fourth step fails: the match {#6, #7} found from #6 (its last A) starts at its last A.
    ("TO LAST A", "A+ C", "", "AFTER MATCH SKIP TO LAST A failed: cannot skip to first row of match"),
    # B? may map no row to B: the match {#1..#4} of start #1 has no B
    ("TO LAST B", "B? A+ C", ", B AS price > 100",
     "AFTER MATCH SKIP TO LAST B failed: pattern variable is not present in match"),
])
@pytest.mark.parametrize("flinkcep", [False, True])
def test_skip_runtime_errors(series, skip, pattern, define, message, flinkcep):
    """The standard's runtime errors; with SEMANTICS FLINKCEP, ERROR ON MISS (FlinkCEP's
    ``throwExceptionOnMiss``) raises them on the first match reported (here the same one)."""
    view(series, "flink_skip_errors", "symbol string, t int, price int",
         [("XYZ", t, price) for t, price in enumerate(FLINK_SKIP, 1)])
    clause = f"AFTER MATCH SKIP {skip}"
    sql = f"""
        SELECT * FROM flink_skip_errors MATCH_RECOGNIZE (
          PARTITION BY symbol ORDER BY t
          MEASURES SUM(A.price) AS sumPrice
          {clause + " ERROR ON MISS SEMANTICS FLINKCEP" if flinkcep else clause}
          PATTERN ({pattern})
          DEFINE A AS SUM(A.price) < 30{define})"""
    with pytest.raises(MatchRecognizeError) as info:
        series.sql(sql).collect()
    line, column = at(sql, clause)
    column += len(clause) - len(skip.split()[-1])  # the SKIP TO target
    assert (info.value.message, info.value.line, info.value.column) == (message, line, column)
    if flinkcep:  # without ERROR ON MISS, FlinkCEP skips nothing where the target is absent or first
        assert series.sql(sql.replace(" ERROR ON MISS", "")).count() > 0


SPARK_ERRORS = [
    # (what, query parts, the start of the message, the text at the error position)
    ("unknown function in MEASURES", dict(measures="no_such_fn(LAST(A.p)) AS x"), "[UNRESOLVED_ROUTINE]",
     "no_such_fn"),
    ("comparison of a number with an array", dict(define="B AS p > array(1)"),
     "[DATATYPE_MISMATCH", "p > array(1)"),
    ("non-boolean DEFINE", dict(define="B AS p + 1"), "[DATATYPE_MISMATCH", "p + 1"),
    ("unknown function over match state", dict(define="B AS no_such_fn(A.p) > 1"), "NO_SUCH_FN over match state",
     "no_such_fn"),
    ("interval times a number over match state",
     dict(define="B AS INTERVAL '1' MINUTE * COUNT(B.*) > INTERVAL '2' MINUTE"),
     "*: interval arithmetic with numbers is not supported over match state", "INTERVAL '1' MINUTE * COUNT"),
    ("year-month interval computed per row for match state",
     dict(define="B AS CASE WHEN COUNT(B.*) > 1 THEN INTERVAL '1' MONTH * p END > INTERVAL '1' MONTH"),
     "INTERVAL '1' MONTH * p of type interval year to month cannot pass through MATCH_RECOGNIZE",
     "INTERVAL '1' MONTH * p"),
]


@pytest.mark.parametrize("case", SPARK_ERRORS, ids=[c[0] for c in SPARK_ERRORS])
def test_spark_errors_name_the_users_construct(series, case):
    """Errors Spark raises on the rewritten SQL come at the user's line:column, with Spark's
    message and none of the generated SQL's positions or column names."""
    name, parts, start, needle = case
    sql = query(**parts)
    try:
        series.sql(sql).collect()
    except MatchRecognizeError as e:
        err = e
    else:
        raise AssertionError("no error")
    assert start in err.message, err.message
    assert (err.line, err.column) == at(sql, needle)
    assert "__mr" not in err.message and " pos " not in err.message


def test_an_error_spark_finds_in_a_measure_comes_first_wherever_the_clause_stands(series):
    """A clause's measures are checked alone or, where the statement's analysis covers them,
    with it (``rewrite_sql``'s deferred checks): either way the first clause's error is the one
    reported, at its measure - also when a later clause fails before Spark sees the statement."""
    bad = query(measures="no_such_fn(LAST(A.p)) AS x")
    later = query(measures="LAST(Z.p) AS z")  # (an error of the rewrite itself: Z is no variable)
    good = query(measures="LAST(A.p) AS y")
    for sql in (bad, f"SELECT * FROM ({bad}) o", f"SELECT * FROM ({bad}) a JOIN ({later}) b ON a.k = b.k",
                f"SELECT * FROM ({bad}) a JOIN ({good}) b ON a.k = b.k", f"SELECT 1 UNION ALL SELECT x FROM ({bad})",
                f"WITH c AS ({bad}) SELECT * FROM c", f"SELECT * FROM series WHERE EXISTS ({bad})",
                f"SELECT ({bad.replace('SELECT *', 'SELECT max(x)')}) AS s"):
        with pytest.raises(MatchRecognizeError) as info:
            series.sql(sql).collect()
        assert info.value.message.startswith("[UNRESOLVED_ROUTINE]"), (sql, info.value.message)
        assert (info.value.line, info.value.column) == at(sql, "no_such_fn"), sql


CAST_FAILS = '[CAST_INVALID_INPUT] The value \'{}\' of the type "STRING" cannot be cast to "INT" because it is malformed.'


@pytest.mark.parametrize("parts, needle, value", [
    (dict(define="B AS CAST(k AS INT) > 0"), "CAST(k AS INT)", "a"),  # row-level: Spark computes it
    (dict(measures="CAST(LAST(A.k) AS INT) AS x"), "CAST(LAST(A.k) AS INT)", "a"),  # over the engine's atom
    (dict(define="B AS CAST(A.k AS INT) > p"), "CAST(A.k AS INT)", "a"),  # match state: the engine computes it
])
def test_run_time_errors_name_the_users_construct(spark, series, confs, parts, needle, value):
    """An error of the running query (ANSI's: spark.sql.ansi.enabled is on) is one message at the
    user's line:column: Spark's, without the generated SQL, or the engine's, without a worker's
    traceback."""
    sql = query(**parts)
    confs(spark, {"spark.sql.ansi.enabled": "true"})
    with pytest.raises(MatchRecognizeError) as info:
        series.sql(sql).collect()
    assert info.value.message.startswith(CAST_FAILS.format(value)), info.value.message
    assert (info.value.line, info.value.column) == at(sql, needle)
    assert "__mr" not in info.value.message and "Traceback" not in info.value.message


@pytest.mark.parametrize("conf, value, pattern, define, semantics, message", [
    # a run of B's longer than the limit (the run-length tier, then the Pike VM)
    ("spark.sparkcep.maxMatchRows", 4, "A B+", "B AS price > 0", "",
     "a match (or a run that may become one) from row 1 spans more than 4 rows"),
    ("spark.sparkcep.maxMatchRows", 4, "A B+", "B AS SUM(B.price) > 0", "",
     "a match (or a run that may become one) from row 1 spans more than 4 rows"),
    # every start row fails after reading the whole partition
    ("spark.sparkcep.maxStepsPerStartRow", 5, "A B+ C", "B AS B.price > A.price - 100, C AS price < 0", "",
     "more than 5 run steps from start row 1"),
    # FlinkCEP NO SKIP: a run per start row stays alive
    ("spark.sparkcep.maxLiveRuns", 3, "A B->+ C", "B AS price > 0, C AS price < 0",
     "AFTER MATCH NO SKIP SEMANTICS FLINKCEP", "more than 3 partial matches alive at once"),
    # FlinkCEP NO SKIP: a run per split of the B rows into iterations (2^(k-1)); the error names DISTINCT
    ("spark.sparkcep.maxLiveRuns", 50, "A (B+)+ C", "B AS price > 0, C AS price < 0",
     "AFTER MATCH NO SKIP SEMANTICS FLINKCEP", "more than 50 partial matches alive at once; the pattern is too "
     "ambiguous for this data (tighten DEFINE, add WITHIN, or use a stricter contiguity; every run of a match is "
     "reported, SEMANTICS FLINKCEP DISTINCT reports each distinct match once"),
])
def test_engine_limits_name_the_conf_the_partition_and_the_row(series, conf, value, pattern, define,
                                                             semantics, message):
    view(series, "limited", "symbol string, t int, price int", [("XYZ", t, 10 + t) for t in range(1, 13)])
    sql = f"""
        SELECT * FROM limited MATCH_RECOGNIZE (
          PARTITION BY symbol ORDER BY t MEASURES COUNT(*) AS n
          {semantics}
          PATTERN ({pattern})
          DEFINE A AS price > 0, {define})"""
    with session_confs(series, {conf: str(value)}):
        with pytest.raises(MatchRecognizeError) as info:
            series.sql(sql).collect()
    text = info.value.message
    assert message in text and f"(the limit is the Spark conf {conf})" in text
    assert "in partition (symbol = 'XYZ') at its row" in text
    assert (info.value.line, info.value.column) == at(sql, "MATCH_RECOGNIZE")
    assert len(series.sql(sql).collect()) >= 0  # within the default limits the query runs


def test_engine_limits_must_be_positive(series, confs):
    confs(series, {"spark.sparkcep.maxMatchRows": "0"})
    with pytest.raises(MatchRecognizeError, match="spark.sparkcep.maxMatchRows must be a positive integer"):
        series.sql("SELECT * FROM limited MATCH_RECOGNIZE (ORDER BY t MEASURES COUNT(*) AS n "
                   "PATTERN (A) DEFINE A AS price > 0)")
