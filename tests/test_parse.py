"""Tests for sql_ext/compiler/parse.py: MATCH_RECOGNIZE inside Spark SQL (pure Python, no Spark)."""
from __future__ import annotations

import pickle

import pytest
import sqlglot
from sqlglot import exp

from sql_ext.compiler.parse import (
    ClassifierCall,
    Definition,
    Final,
    First,
    Last,
    MatchNumberCall,
    MatchRecognizeClause,
    Measure,
    Navigation,
    ParseError,
    Pattern,
    Prev,
    Next,
    Running,
    SkipTo,
    SparkCep,
    SubsetDef,
    find_match_recognize,
    line_col,
    parse,
    parse_one,
    position,
    replace_match_recognize,
    to_spark_sql,
)
from udtf.errors import MatchRecognizeError

MR = "MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B+) DEFINE B AS B.x > PREV(B.x)) AS m"


def mr(body: str, prefix: str = "SELECT * FROM t ", suffix: str = " AS m") -> MatchRecognizeClause:
    tree = parse_one(f"{prefix}MATCH_RECOGNIZE ({body}){suffix}")
    clauses = find_match_recognize(tree)
    assert len(clauses) == 1
    return clauses[0]


def roundtrip(sql: str) -> exp.Expr:
    """Parse, regenerate, reparse: the trees must be equal."""
    tree = parse_one(sql)
    again = parse_one(to_spark_sql(tree))
    assert again == tree, (to_spark_sql(tree), to_spark_sql(again))
    pretty = parse_one(to_spark_sql(tree, pretty=True))
    assert pretty == tree
    return tree


def error_of(sql: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(sql)
    return info.value


# --------------------------------------------------------------------------------------
# Clause by clause
# --------------------------------------------------------------------------------------


def test_minimal_clause_defaults():
    c = mr("PATTERN (A)")
    assert isinstance(c, MatchRecognizeClause)
    assert isinstance(c.input, exp.Table) and c.input.name == "t"
    assert c.partition_by == [] and c.order == [] and c.measures == []
    assert c.rows == "ONE" and c.args.get("rows") is None
    assert c.skip is None and c.skip_kind == "PAST LAST ROW" and c.skip_variable is None
    assert c.semantics == "STANDARD" and c.args.get("semantics") is None
    assert c.pattern.text == "A"
    assert c.within is None and c.subsets == [] and c.definitions == []
    assert c.alias == "m"
    assert isinstance(c.args["alias"], exp.TableAlias)


def test_full_clause():
    sql = """SELECT m.* FROM ticks AS t MATCH_RECOGNIZE (
  PARTITION BY sym, exch
  ORDER BY ts DESC NULLS FIRST, seq
  MEASURES FINAL LAST(A.x) - RUNNING FIRST(A.x, 1) AS d, CLASSIFIER() AS c
  ALL ROWS PER MATCH OMIT EMPTY MATCHES
  AFTER MATCH SKIP TO LAST B
  SEMANTICS FLINKCEP
  PATTERN (A B+ C?)
  WITHIN INTERVAL '10' SECOND
  SUBSET u = (A, B), v = (C)
  DEFINE A AS A.x > 0 UNTIL A.x > 100, B AS B.x > PREV(B.x)
) AS m"""
    tree = roundtrip(sql)
    (c,) = find_match_recognize(tree)
    assert isinstance(c.input, exp.Table) and c.input.alias == "t"
    assert [p.sql() for p in c.partition_by] == ["sym", "exch"]
    assert all(isinstance(o, exp.Ordered) for o in c.order)
    assert c.order[0].args.get("desc") is True and c.order[0].args.get("nulls_first") is True
    assert c.order[1].this.name == "seq" and not c.order[1].args.get("desc")
    assert [m.name for m in c.measures] == ["d", "c"]
    assert c.rows == "ALL OMIT"
    assert isinstance(c.skip, SkipTo) and c.skip_kind == "TO LAST" and c.skip_variable.name == "B"
    assert c.semantics == "FLINKCEP"
    assert c.pattern.text == "A B+ C?"
    assert isinstance(c.within, exp.Interval)
    assert c.within.this.name == "10" and c.within.unit.name == "SECOND"
    assert [(s.name, [v.name for v in s.variables]) for s in c.subsets] == [
        ("u", ["A", "B"]),
        ("v", ["C"]),
    ]
    a, b = c.definitions
    assert isinstance(a, Definition) and a.variable.name == "A" and a.name == "A"
    assert a.condition.sql() == "A.x > 0" and a.until.sql() == "A.x > 100"
    assert b.until is None and isinstance(b.condition.expression, Prev)
    assert c.alias == "m"


def test_partition_and_order_are_plain_spark():
    c = mr("PARTITION BY lower(k), first(z) ORDER BY ts ASC NULLS LAST PATTERN (A)")
    assert isinstance(c.partition_by[0], exp.Lower)
    # FIRST outside MEASURES/DEFINE is Spark's aggregate (kept as written), not navigation
    assert type(c.partition_by[1]) is exp.Anonymous and c.partition_by[1].name == "FIRST"
    assert c.order[0].args.get("nulls_first") is False


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "ONE"),
        ("ONE ROW PER MATCH", "ONE"),
        ("ALL ROWS PER MATCH", "ALL SHOW"),
        ("ALL ROWS PER MATCH SHOW EMPTY MATCHES", "ALL SHOW"),
        ("ALL ROWS PER MATCH OMIT EMPTY MATCHES", "ALL OMIT"),
        ("ALL ROWS PER MATCH WITH UNMATCHED ROWS", "ALL WITH UNMATCHED"),
        ("one row per match", "ONE"),
    ],
)
def test_rows_per_match(text, expected):
    c = mr(f"{text} PATTERN (A)")
    assert c.rows == expected
    roundtrip(f"SELECT * FROM t MATCH_RECOGNIZE ({text} PATTERN (A)) m")


@pytest.mark.parametrize(
    "text, kind, var",
    [
        ("AFTER MATCH SKIP PAST LAST ROW", "PAST LAST ROW", None),
        ("AFTER MATCH SKIP TO NEXT ROW", "TO NEXT ROW", None),
        ("AFTER MATCH SKIP TO FIRST B", "TO FIRST", "B"),
        ("AFTER MATCH SKIP TO LAST B", "TO LAST", "B"),
        ("AFTER MATCH SKIP TO B", "TO", "B"),
        ("AFTER MATCH NO SKIP", "NO SKIP", None),
        ("after match skip to last `b c`", "TO LAST", "b c"),
        # a variable that happens to be called FIRST / LAST
        ("AFTER MATCH SKIP TO FIRST", "TO", "FIRST"),
        ("AFTER MATCH SKIP TO LAST FIRST", "TO LAST", "FIRST"),
    ],
)
def test_after_match_skip(text, kind, var):
    c = mr(f"{text} PATTERN (A B)")
    assert c.skip_kind == kind
    assert (c.skip_variable.name if c.skip_variable is not None else None) == var
    roundtrip(f"SELECT * FROM t MATCH_RECOGNIZE ({text} PATTERN (A B)) m")


@pytest.mark.parametrize("text, kind, var", [
    ("AFTER MATCH SKIP TO FIRST B ERROR ON MISS", "TO FIRST", "B"),
    ("AFTER MATCH SKIP TO LAST B error on miss", "TO LAST", "B"),
    ("AFTER MATCH SKIP TO ERROR ERROR ON MISS", "TO", "ERROR"),  # a variable called ERROR
])
def test_skip_to_error_on_miss(text, kind, var):
    c = mr(f"{text} SEMANTICS FLINKCEP PATTERN (A B)")
    assert (c.skip_kind, c.skip_variable.name, c.skip_error_on_miss) == (kind, var, True)
    assert not mr(f"AFTER MATCH SKIP {kind} {var} PATTERN (A B)").skip_error_on_miss
    roundtrip(f"SELECT * FROM t MATCH_RECOGNIZE ({text} PATTERN (A B)) m")


def test_semantics_flinkcep_distinct():
    c = mr("ORDER BY ts AFTER MATCH NO SKIP SEMANTICS FLINKCEP DISTINCT PATTERN ((B+)+)")
    assert c.semantics == "FLINKCEP" and c.distinct is not None
    assert mr("ORDER BY ts SEMANTICS FLINKCEP PATTERN (A)").distinct is None
    roundtrip("SELECT * FROM t MATCH_RECOGNIZE (SEMANTICS FLINKCEP DISTINCT PATTERN (A)) m")


def test_skip_variable_quoting_and_position():
    sql = "SELECT * FROM t MATCH_RECOGNIZE (\n  AFTER MATCH SKIP TO `Bee`\n  PATTERN (A `Bee`)) m"
    (c,) = find_match_recognize(parse_one(sql))
    assert c.skip_variable.quoted and c.skip_variable.name == "Bee"
    assert position(c.skip) == (2, 3)
    assert position(c.skip_variable) == (2, 23)


@pytest.mark.parametrize("word, expected", [("STANDARD", "STANDARD"), ("flinkcep", "FLINKCEP")])
def test_semantics(word, expected):
    c = mr(f"ORDER BY ts SEMANTICS {word} PATTERN (A -> B)")
    assert c.semantics == expected
    roundtrip(f"SELECT * FROM t MATCH_RECOGNIZE (SEMANTICS {word} PATTERN (A)) m")


@pytest.mark.parametrize(
    "interval",
    [
        "INTERVAL '10' SECOND",
        "INTERVAL 5 MINUTES",
        "INTERVAL '1 2:03' DAY TO MINUTE",
        "INTERVAL 1 HOUR 30 MINUTES",
    ],
)
def test_within(interval):
    c = mr(f"PATTERN (A B) WITHIN {interval} DEFINE A AS true")
    assert isinstance(c.within, (exp.Interval, exp.Add))
    assert c.within.find(exp.Interval) is not None
    assert len(c.definitions) == 1
    roundtrip(f"SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A B) WITHIN {interval}) m")


def test_within_position():
    sql = "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A)\n    WITHIN INTERVAL '10' SECOND) m"
    (c,) = find_match_recognize(parse_one(sql))
    assert position(c.within) == (2, 12)


def test_subset_and_define_variants():
    c = mr(
        'PATTERN (A "q x" `c`) SUBSET u = (A, "q x"), `w` = (`c`) '
        'DEFINE "q x" AS `q x`.v > 0, `c` AS CLASSIFIER("q x") = \'A\', A AS true'
    )
    u, w = c.subsets
    assert isinstance(u, SubsetDef) and u.name == "u"
    assert [(v.name, v.quoted) for v in u.variables] == [("A", False), ("q x", True)]
    assert w.this.quoted
    q, cc, a = c.definitions
    assert q.variable.name == "q x" and q.variable.quoted
    assert q.condition.this.table == "q x"
    assert isinstance(cc.condition.this, ClassifierCall) and cc.condition.this.this.name == "q x"
    assert a.condition == exp.true()


def test_define_may_be_omitted():
    c = mr("MEASURES COUNT(*) AS n PATTERN (A+)")
    assert c.definitions == []


def test_until():
    c = mr("PATTERN (A+ B) DEFINE A AS A.x > 0 UNTIL A.x > 10 OR A.y IS NULL, B AS true")
    a, b = c.definitions
    assert isinstance(a.until, exp.Or)
    assert b.until is None
    assert "UNTIL A.x > 10 OR A.y IS NULL" in to_spark_sql(c)


# --------------------------------------------------------------------------------------
# Expressions inside MEASURES / DEFINE
# --------------------------------------------------------------------------------------


def test_running_final_nested_in_expression():
    c = mr("MEASURES FINAL LAST(A.x) - RUNNING FIRST(A.x) AS d PATTERN (A+)")
    (m,) = c.measures
    assert isinstance(m, Measure) and m.alias == "d" and m.name == "d"
    sub = m.this
    assert isinstance(sub, exp.Sub)
    assert isinstance(sub.this, Final) and isinstance(sub.this.this, Last)
    assert isinstance(sub.expression, Running) and isinstance(sub.expression.this, First)
    assert sub.this.this.this.sql() == "A.x"


def test_running_final_on_aggregates_columns_and_parens():
    c = mr(
        "MEASURES RUNNING SUM(A.v) AS s, FINAL COUNT(A.*) AS n, FINAL AVG(v) AS a, "
        "RUNNING A.x AS rx, FINAL (LAST(A.x) + 1) AS p, FINAL MAX(A.v) * 2 AS mx "
        "PATTERN (A+)"
    )
    s, n, a, rx, p, mx = (m.this for m in c.measures)
    assert isinstance(s, Running) and isinstance(s.this, exp.Sum)
    assert isinstance(n, Final) and isinstance(n.this, exp.Count)
    assert isinstance(n.this.this, exp.Column) and isinstance(n.this.this.this, exp.Star)
    assert n.this.this.table == "A"
    assert isinstance(a, Final) and isinstance(a.this, exp.Avg)
    assert isinstance(rx, Running) and isinstance(rx.this, exp.Column)
    assert isinstance(p, Final) and isinstance(p.this, exp.Paren)
    assert isinstance(mx, exp.Mul) and isinstance(mx.this, Final)


def test_running_final_as_column_names_inside_mr():
    c = mr("PATTERN (A) DEFINE A AS running > 1 AND final = 2 AND running.x < final.y")
    cols = [col.sql() for col in c.definitions[0].condition.find_all(exp.Column)]
    assert sorted(cols) == sorted(["running", "final", "running.x", "final.y"])
    assert not list(c.find_all(Running)) and not list(c.find_all(Final))


@pytest.mark.parametrize(
    "call, klass, offset",
    [
        ("PREV(A.x)", Prev, None),
        ("PREV(A.x, 2)", Prev, "2"),
        ("NEXT(A.x)", Next, None),
        ("next(x, 1)", Next, "1"),
        ("FIRST(A.x)", First, None),
        ("FIRST(A.x, 3)", First, "3"),
        ("LAST(A.x)", Last, None),
        ("last(A.x, 1)", Last, "1"),
    ],
)
def test_navigation(call, klass, offset):
    c = mr(f"MEASURES {call} AS v PATTERN (A+) DEFINE A AS {call} > 0")
    for node in (c.measures[0].this, c.definitions[0].condition.this):
        assert type(node) is klass
        assert isinstance(node, Navigation) and isinstance(node, exp.Func)
        assert node.this.sql().lower() in ("a.x", "x")
        assert (node.offset.sql() if node.offset is not None else None) == offset
    assert klass.physical == (klass in (Prev, Next))


def test_first_last_with_second_arg_not_spark_ignore_nulls():
    c = mr("MEASURES FIRST(A.x, true) AS f, LAST(A.x, 2) AS l PATTERN (A+)")
    f, l_ = (m.this for m in c.measures)
    assert type(f) is First and f.offset == exp.true()
    assert type(l_) is Last and l_.offset.sql() == "2"
    assert not list(c.find_all(exp.IgnoreNulls))


def test_nested_navigation():
    c = mr("PATTERN (A+) DEFINE A AS PREV(LAST(A.x, 1), 2) > NEXT(FIRST(A.x))")
    cond = c.definitions[0].condition
    assert isinstance(cond.this, Prev) and isinstance(cond.this.this, Last)
    assert isinstance(cond.expression, Next) and isinstance(cond.expression.this, First)


def test_classifier_match_number_and_aggregates():
    c = mr(
        "MEASURES CLASSIFIER() AS c, CLASSIFIER(B) AS cb, MATCH_NUMBER() AS mn, "
        "COUNT(*) AS n, COUNT(A.*) AS na, SUM(A.x) AS s, AVG(B.x) AS a, MIN(A.x) AS lo, "
        "MAX(A.x) AS hi PATTERN (A B)"
    )
    ms = {m.name: m.this for m in c.measures}
    assert isinstance(ms["c"], ClassifierCall) and ms["c"].this is None
    assert ms["cb"].this.name == "B"
    assert isinstance(ms["mn"], MatchNumberCall)
    assert isinstance(ms["n"], exp.Count) and isinstance(ms["n"].this, exp.Star)
    assert ms["na"].this.table == "A" and isinstance(ms["na"].this.this, exp.Star)
    assert isinstance(ms["s"], exp.Sum) and ms["s"].this.table == "A"
    assert isinstance(ms["a"], exp.Avg)
    assert isinstance(ms["lo"], exp.Min) and isinstance(ms["hi"], exp.Max)
    roundtrip(
        "SELECT * FROM t MATCH_RECOGNIZE (MEASURES CLASSIFIER() AS c, CLASSIFIER(B) AS cb, "
        "MATCH_NUMBER() AS mn, COUNT(A.*) AS na PATTERN (A B)) m"
    )


def test_measure_names_may_be_keywords():
    c = mr("MEASURES A.x AS first, A.y AS next, A.z AS pattern, A.w AS define PATTERN (A)")
    assert [m.name for m in c.measures] == ["first", "next", "pattern", "define"]


def test_subquery_inside_define_is_plain_spark():
    c = mr("PATTERN (A) DEFINE A AS A.k IN (SELECT first(k, true) FROM s)")
    inner = c.find(exp.Select)
    assert inner is not None
    assert not list(inner.find_all(Navigation))
    assert inner.find(exp.Anonymous).sql(dialect="spark") == "FIRST(k, TRUE)"


# --------------------------------------------------------------------------------------
# Where MATCH_RECOGNIZE may stand
# --------------------------------------------------------------------------------------

CONTEXTS = [
    f"SELECT * FROM t {MR}",
    f"SELECT * FROM t AS x {MR}",
    f"SELECT * FROM db.t x {MR} WHERE m.k > 1",
    f"SELECT * FROM t {MR} JOIN u ON m.k = u.k",
    f"SELECT * FROM u JOIN t {MR} ON m.k = u.k",
    f"SELECT * FROM u LEFT JOIN t {MR} ON m.k = u.k",
    f"SELECT * FROM u, t {MR}",
    f"SELECT * FROM (SELECT * FROM t WHERE x > 0) s {MR}",
    f"SELECT * FROM (SELECT * FROM t) {MR}",
    f"SELECT * FROM (t {MR})",
    f"SELECT * FROM x WHERE k IN (SELECT k FROM t {MR})",
    f"SELECT (SELECT COUNT(*) FROM t {MR}) AS n",
    f"WITH c AS (SELECT * FROM t {MR}) SELECT * FROM c",
    f"WITH s AS (SELECT * FROM t) SELECT * FROM s {MR}",
    f"CREATE VIEW v AS SELECT * FROM t {MR}",
    f"CREATE TEMP VIEW v AS SELECT * FROM t {MR}",
    f"CREATE OR REPLACE TEMPORARY VIEW v AS SELECT * FROM t {MR}",
    f"CREATE TABLE x USING parquet AS SELECT * FROM t {MR}",
    f"CREATE TABLE x AS SELECT * FROM t {MR}",
    f"INSERT INTO x SELECT * FROM t {MR}",
    f"INSERT OVERWRITE TABLE x SELECT * FROM t {MR}",
    f"SELECT * FROM t {MR} UNION ALL SELECT * FROM t2 {MR}",
    f"SELECT * FROM t {MR} LATERAL VIEW explode(m.arr) e AS v",
    f"SELECT m.k, COUNT(*) FROM t {MR} GROUP BY m.k ORDER BY 2 DESC LIMIT 10",
    f"SELECT * FROM range(10) {MR}",
]


@pytest.mark.parametrize("sql", CONTEXTS)
def test_contexts(sql):
    tree = roundtrip(sql)
    clauses = find_match_recognize(tree)
    assert clauses, sql
    for c in clauses:
        assert c.alias == "m"
        assert c.pattern.text == "A B+"
        assert isinstance(c.definitions[0].condition.expression, Prev)
        # the clause stands where the table factor stood
        assert isinstance(c.parent, (exp.From, exp.Join, exp.Subquery)), type(c.parent)


def test_from_and_join_shape():
    tree = parse_one(f"SELECT * FROM t {MR} JOIN u {MR.replace('AS m', 'AS n')} ON m.k = n.k")
    from_clause = tree.args["from_"].this
    join_clause = tree.args["joins"][0].this
    assert isinstance(from_clause, MatchRecognizeClause) and from_clause.input.name == "t"
    assert isinstance(join_clause, MatchRecognizeClause) and join_clause.input.name == "u"
    assert join_clause.alias == "n"
    assert tree.args["joins"][0].args["on"].sql() == "m.k = n.k"


def test_subquery_input_keeps_alias():
    tree = parse_one(f"SELECT * FROM (SELECT a FROM t) AS s {MR}")
    (c,) = find_match_recognize(tree)
    assert isinstance(c.input, exp.Subquery) and c.input.alias == "s"
    assert c.alias == "m"


def test_output_alias_forms():
    assert mr("PATTERN (A)", suffix=" m").alias == "m"
    assert mr("PATTERN (A)", suffix="").alias == ""
    c = mr("PATTERN (A)", suffix=" AS m(a, b)")
    assert c.alias == "m" and c.alias_column_names == ["a", "b"]


def test_nested_match_recognize_innermost_first():
    sql = (
        "SELECT * FROM (SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS true) AS inner_m) "
        "MATCH_RECOGNIZE (PATTERN (X Y) DEFINE X AS true) AS outer_m "
        "JOIN u MATCH_RECOGNIZE (PATTERN (Z)) AS z ON outer_m.k = z.k"
    )
    tree = roundtrip(sql)
    clauses = find_match_recognize(tree)
    assert [c.alias for c in clauses] == ["inner_m", "outer_m", "z"]
    inner, outer, _ = clauses
    assert isinstance(outer.input, exp.Subquery)
    assert inner in list(outer.input.find_all(MatchRecognizeClause))


def test_multiple_statements():
    trees = parse(f"SELECT 1; SELECT * FROM t {MR};\nINSERT INTO x SELECT * FROM t {MR}")
    assert len(trees) == 3
    assert [len(find_match_recognize(t)) for t in trees] == [0, 1, 1]
    assert len(find_match_recognize(trees)) == 2


def test_sqlglot_dialect_registration():
    tree = sqlglot.parse_one(f"SELECT * FROM t {MR}", read="sparkcep")
    assert isinstance(tree.args["from_"].this, MatchRecognizeClause)
    assert tree.sql(dialect=SparkCep) == to_spark_sql(tree)


# --------------------------------------------------------------------------------------
# PATTERN text and positions
# --------------------------------------------------------------------------------------


def test_pattern_text_preserved_with_positions():
    sql = (
        "SELECT *\n"
        "FROM t\n"
        "  MATCH_RECOGNIZE (\n"
        "    ORDER BY ts\n"
        "    PATTERN (   (A -> B ->> C)? ~D {- E -} ^ F $ \"q x\" G{2,3} H{,4}?\n"
        "\tPERMUTE(A, (B | C)) | X*? Y+   )\n"
        "    DEFINE A AS true\n"
        "  ) m"
    )
    (c,) = find_match_recognize(parse_one(sql))
    p = c.pattern
    assert isinstance(p, Pattern)
    expected = (
        '(A -> B ->> C)? ~D {- E -} ^ F $ "q x" G{2,3} H{,4}?\n'
        "\tPERMUTE(A, (B | C)) | X*? Y+"
    )
    assert p.text == expected
    assert sql[p.offset : p.offset + len(p.text)] == p.text
    assert (p.line, p.column) == (5, 17)
    assert p.origin == (5, 17) == position(p) == line_col(sql, p.offset)
    assert p.code == p.text + "   "  # up to the closing ')', where an error at the end points
    # positions inside the text map back into the SQL
    i = p.text.index("PERMUTE")
    assert p.position_at(i) == (6, 2)
    assert p.position_at(p.text.index("~D")) == (5, 17 + p.text.index("~D"))
    assert line_col(sql, p.offset + i) == (6, 2)
    assert position(c) == (3, 3)


def test_pattern_with_comments_and_crlf():
    sql = "SELECT * FROM t MATCH_RECOGNIZE (\r\n  PATTERN (A /* ) */ B -- c (\r\n  C)\r\n) m"
    (c,) = find_match_recognize(parse_one(sql))
    p = c.pattern
    assert p.text == "A /* ) */ B -- c (\r\n  C"
    assert p.code == "A         B       \r\n  C"
    assert "\t" in mr("PATTERN (A\n\tB)").pattern.code
    assert (p.line, p.column) == (2, 12)
    assert p.position_at(p.text.index("C")) == (3, 3)


def test_empty_pattern():
    c = mr("PATTERN ()")
    assert c.pattern.text == ""
    assert c.pattern.origin == (1, 43)  # just after "PATTERN ("
    assert c.pattern.offset == 42
    c = mr("PATTERN (())")
    assert c.pattern.text == "()"


def test_pattern_roundtrip_exact_text():
    text = 'A{-B-}  ->  C+?  |  "x y"{3}'
    c = mr(f"PATTERN ({text})")
    assert c.pattern.text == text
    assert f"PATTERN ({text})" in to_spark_sql(c)


def _col(sql: str, line: int, needle: str, nth: int = 0) -> tuple[int, int]:
    """(line, column) of the nth occurrence of needle on a 1-based line of sql."""
    text = sql.split("\n")[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = text.index(needle, col + 1)
    return (line, col + 1)


def test_positions_of_nodes():
    sql = (
        "SELECT m.a\n"
        "FROM t MATCH_RECOGNIZE (\n"
        "  PARTITION BY k\n"
        "  MEASURES FINAL LAST(A.x) - RUNNING FIRST(A.x) AS d,\n"
        "           CAST(A.y AS INT) AS y, MATCH_NUMBER() AS n\n"
        "  PATTERN (A+)\n"
        "  SUBSET u = (A)\n"
        "  DEFINE A AS A.x > PREV(A.x, 1) + 10\n"
        ") m"
    )
    (c,) = find_match_recognize(parse_one(sql))
    d, y, n = c.measures
    sub = d.this
    assert position(c) == _col(sql, 2, "MATCH_RECOGNIZE") == (2, 8)
    assert position(c.partition_by[0]) == (3, 16)
    assert position(d) == _col(sql, 4, "FINAL") == (4, 12)
    assert position(sub) == (4, 12)
    assert position(sub.this) == (4, 12)  # FINAL
    assert position(sub.this.this) == _col(sql, 4, "LAST")
    assert position(sub.this.this.this) == _col(sql, 4, "A.x")
    assert position(sub.expression) == _col(sql, 4, "RUNNING")
    assert position(sub.expression.this) == _col(sql, 4, "FIRST")
    assert position(sub.expression.this.this) == _col(sql, 4, "A.x", 1)
    assert position(d.args["alias"]) == _col(sql, 4, "d,")
    assert position(y) == position(y.this) == _col(sql, 5, "CAST") == (5, 12)
    assert position(n.this) == _col(sql, 5, "MATCH_NUMBER")
    assert position(c.pattern) == _col(sql, 6, "A+")
    assert position(c.subsets[0]) == _col(sql, 7, "u")
    definition = c.definitions[0]
    assert position(definition) == position(definition.variable) == _col(sql, 8, "A AS")
    cond = definition.condition
    assert position(cond) == _col(sql, 8, "A.x")
    prev = cond.find(Prev)
    assert position(prev) == _col(sql, 8, "PREV")
    assert position(prev.offset) == _col(sql, 8, "1")
    assert position(cond.find(exp.Add).expression) == _col(sql, 8, "10")
    # positions survive copies
    assert position(prev.copy()) == _col(sql, 8, "PREV")
    assert position(c.copy().definitions[0]) == _col(sql, 8, "A AS")


def test_positions_of_plain_spark_nodes():
    sql = "SELECT\n  coalesce(a, 1) AS c,\n  -b,\n  (x + y) * 2,\n  NULL\nFROM t"
    tree = parse_one(sql)
    c, neg, mul, null = tree.expressions
    assert position(c) == (2, 3)
    assert position(c.this) == (2, 3)
    assert position(neg) == (3, 3)
    assert position(mul) == (4, 3)
    assert position(mul.this) == (4, 3)
    assert position(null) == (5, 3)
    assert position(tree.args["from_"].this) == (6, 6)


def test_pickle_keeps_nodes_and_positions():
    tree = parse_one(f"SELECT * FROM t {MR}")
    again = pickle.loads(pickle.dumps(tree))
    assert again == tree
    (c,) = find_match_recognize(again)
    assert c.pattern.origin == find_match_recognize(tree)[0].pattern.origin


# --------------------------------------------------------------------------------------
# Rewriting support
# --------------------------------------------------------------------------------------


def test_replace_match_recognize_bottom_up():
    sql = (
        "SELECT * FROM (SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS true) AS i) "
        "MATCH_RECOGNIZE (PATTERN (X)) AS o JOIN u ON o.k = u.k"
    )
    tree = parse_one(sql)
    inner, outer = find_match_recognize(tree)
    with pytest.raises(Exception):
        to_spark_sql(tree, dialect="spark")

    new_inner = replace_match_recognize(inner, sqlglot.parse_one("SELECT 1 AS k", read="spark"))
    assert isinstance(new_inner, exp.Subquery) and new_inner.alias == "i"
    assert new_inner.find_ancestor(MatchRecognizeClause) is outer

    replacement = exp.Subquery(
        this=sqlglot.parse_one("SELECT * FROM r", read="spark"), alias=exp.TableAlias(this=exp.to_identifier("keep"))
    )
    replace_match_recognize(outer, replacement)
    assert replacement.alias == "keep"
    assert find_match_recognize(tree) == []
    out = to_spark_sql(tree, dialect="spark")
    assert out == "SELECT * FROM (SELECT * FROM r) AS keep JOIN u ON o.k = u.k"
    assert to_spark_sql(tree) == out


def test_replace_with_table():
    tree = parse_one(f"SELECT m.k FROM t {MR}")
    (c,) = find_match_recognize(tree)
    replace_match_recognize(c, exp.to_table("mr_out"))
    assert to_spark_sql(tree) == "SELECT m.k FROM mr_out AS m"


# --------------------------------------------------------------------------------------
# Non-MATCH_RECOGNIZE SQL is untouched
# --------------------------------------------------------------------------------------

PLAIN_SPARK = [
    "SELECT first, last, next, pattern, define, measures, subset, within, semantics, "
    "running, final, until, prev, classifier, match_number, permute FROM t",
    "SELECT pattern.first FROM t AS pattern",
    "SELECT next(x), prev(y), classifier(z), match_number(1), running(a), final(b) FROM t",
    "SELECT * FROM t AS define JOIN s AS measures ON define.a = measures.a",
    "SELECT * FROM subset WHERE within > 0 AND semantics = 'x' AND until IS NULL",
    "SELECT a AS running, b AS final, c AS first FROM t",
    "WITH pattern AS (SELECT 1 AS define) SELECT define FROM pattern",
    "SELECT match_recognize FROM t",
    "SELECT transform(arr, x -> x + 1), filter(arr, (x, i) -> i > 0) FROM t",
    "SELECT * FROM t LATERAL VIEW explode(arr) e AS v WHERE v > 1",
    "SELECT k, COUNT(*) FROM t GROUP BY k HAVING COUNT(*) > 1 ORDER BY k DESC NULLS LAST LIMIT 5",
    "SELECT CAST(x AS DECIMAL(10, 2)), INTERVAL '10' SECOND, DATE '2024-01-01' FROM t",
    "SELECT * FROM t DISTRIBUTE BY k SORT BY ts",
    "SELECT * FROM t TABLESAMPLE (10 PERCENT)",
    "INSERT OVERWRITE TABLE x PARTITION (dt = '2024') SELECT * FROM t",
    "CREATE TABLE x (a INT, b STRING) USING parquet PARTITIONED BY (b)",
    "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT a FROM t WHERE a IN (SELECT a FROM s)",
    "SELECT * FROM a LEFT ANTI JOIN b ON a.k = b.k",
    "SELECT CASE WHEN a > 1 THEN 'x' ELSE 'y' END, IF(a, b, c), a <=> b FROM t",
    "SELECT struct(a, b).a, map('k', 1)['k'], arr[0] FROM t",
    "SELECT * FROM VALUES (1, 2), (3, 4) AS v(a, b)",
    "SELECT * FROM t PIVOT (SUM(v) FOR k IN ('a', 'b'))",
    "SELECT a FROM t UNION SELECT b FROM s EXCEPT SELECT c FROM r",
]


@pytest.mark.parametrize("sql", [
    "SELECT FIRST(x), LAST(x), FIRST(x, TRUE), LAST(y, FALSE), ANY_VALUE(x, TRUE) FROM t GROUP BY k",
    "SELECT FIRST_VALUE(x) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), "
    "FIRST_VALUE(x) IGNORE NULLS OVER (ORDER BY ts) FROM t",
])
def test_aggregates_kept_as_written_roundtrip_as_written(sql):
    # (sqlglot would drop a non-literal ignoreNulls and refuses first_value(x, true))
    assert to_spark_sql(parse_one(sql)) == sql


@pytest.mark.parametrize("sql", PLAIN_SPARK)
def test_plain_spark_roundtrip_unchanged(sql):
    ours = parse_one(sql)
    theirs = sqlglot.parse_one(sql, read="spark")
    assert ours == theirs
    # typed literals stay typed literals (sqlglot prints them as CASTs)
    assert to_spark_sql(ours) == theirs.sql(dialect="spark").replace("CAST('2024-01-01' AS DATE)",
                                                                     "DATE '2024-01-01'")
    assert to_spark_sql(ours, dialect="spark") == theirs.sql(dialect="spark")
    assert not list(ours.find_all(Navigation, Running, Final, ClassifierCall, MatchNumberCall))
    assert parse_one(to_spark_sql(ours)) == ours


def test_keyword_named_columns_inside_mr_expressions():
    c = mr(
        "PARTITION BY pattern ORDER BY within "
        "MEASURES A.first AS f, A.define AS d, A.next AS n PATTERN (A) "
        "DEFINE A AS A.subset > 0 AND A.measures < A.semantics"
    )
    assert c.partition_by[0].name == "pattern"
    assert c.order[0].this.name == "within"
    assert [m.this.name for m in c.measures] == ["first", "define", "next"]


# --------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------


def test_error_is_match_recognize_error():
    err = error_of("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts) m")
    assert isinstance(err, MatchRecognizeError)
    assert "PATTERN" in err.message
    assert str(err) == f"line {err.line}:{err.column}: {err.message}"


@pytest.mark.parametrize(
    "sql, line, column, fragment",
    [
        (  # missing PATTERN
            "SELECT * FROM t MATCH_RECOGNIZE (\n  ORDER BY ts\n  DEFINE A AS true\n) m",
            3,
            3,
            "requires a PATTERN",
        ),
        ("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts) m", 1, 45, "requires a PATTERN"),
        (  # bad skip
            "SELECT * FROM t MATCH_RECOGNIZE (\n  AFTER MATCH SKIP PAST ROW\n  PATTERN (A)) m",
            2,
            20,
            "AFTER MATCH SKIP",
        ),
        (
            "SELECT * FROM t MATCH_RECOGNIZE (AFTER MATCH SKIP TO PATTERN (A)) m",
            1,
            54,
            "pattern variable",
        ),
        (
            "SELECT * FROM t MATCH_RECOGNIZE (AFTER MATCH JUMP PATTERN (A)) m",
            1,
            46,
            "SKIP",
        ),
        (  # unbalanced pattern parentheses: reported at the unclosed '('
            "SELECT * FROM t MATCH_RECOGNIZE (\n  PATTERN (A (B C)\n  DEFINE A AS x > 1) m",
            2,
            11,
            "Unbalanced parentheses in PATTERN",
        ),
        ("SELECT * FROM t MATCH_RECOGNIZE (PATTERN ((A B)", 1, 42, "Unbalanced"),
        (  # clause order
            "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x > 1 MEASURES x AS y) m",
            1,
            64,
            "out of order",
        ),
        ("SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) PATTERN (B)) m", 1, 46, "out of order"),
        ("SELECT * FROM t MATCH_RECOGNIZE (MEASURES A.x y PATTERN (A)) m", 1, 47, "AS"),
        ("SELECT * FROM t MATCH_RECOGNIZE PATTERN (A) m", 1, 33, "'('"),
        ("SELECT * FROM t MATCH_RECOGNIZE (SEMANTICS FOO PATTERN (A)) m", 1, 44, "FLINKCEP"),
        ("SELECT * FROM t MATCH_RECOGNIZE (ONE ROWS PER MATCH PATTERN (A)) m", 1, 34, "ROW"),
        ("SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) WITHIN 10) m", 1, 53, "INTERVAL"),
        (
            "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS PREV(x, 1, 2) > 0) m",
            1,
            58,
            "at most 2",
        ),
        ("SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS PREV() > 0) m", 1, 58, "argument"),
        (
            "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS MATCH_NUMBER(x) > 0) m",
            1,
            71,
            "no arguments",
        ),
        ("SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) SUBSET u (A)) m", 1, 55, "'='"),
        ("SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A x > 1) m", 1, 55, "AS"),
        ("SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x UNTIL) m", 1, 65, "UNTIL"),
        ("SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x > 1 m", 1, 64, "')'"),
        (  # tokenizer error: unterminated string
            "SELECT * FROM t MATCH_RECOGNIZE (\n  PATTERN (A)\n  DEFINE A AS x = 'abc) m",
            3,
            19,
            "tokenize",
        ),
        ("SELECT 1;\nSELECT 2 FROM", 2, 10, "end of input"),
    ],
)
def test_errors_with_line_and_column(sql, line, column, fragment):
    err = error_of(sql)
    assert (err.line, err.column) == (line, column), str(err)
    assert fragment in err.message, str(err)
    assert str(err).startswith(f"line {line}:{column}: ")


def test_parse_one_requires_single_statement():
    with pytest.raises(ParseError):
        parse_one("SELECT 1; SELECT 2")


def test_as_without_a_name_after_the_clause():
    sql = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES COUNT(*) AS n PATTERN (A) DEFINE A AS true) AS"
    with pytest.raises(ParseError, match=r"line 1:99: Expecting a name after AS"):
        parse(sql)


def test_the_sqlglot_methods_the_dialect_extends_exist():
    """The dialect extends sqlglot's Spark parser and generator by overriding some of their
    methods (sqlglot has no public hook for a new table-factor suffix): each one must still
    exist in the installed sqlglot, or the override would silently never run."""
    from sql_ext.compiler.parse import SparkCepGenerator, SparkCepParser

    from sql_ext.compiler.window_syntax import WindowSyntax

    parser = next(c for c in SparkCep.Parser.__mro__ if c.__module__.startswith("sqlglot."))
    generator = SparkCep.Generator.__mro__[1]
    ours = ("_parse_mr_", "_parse_match_recognize_", "_parse_level", "_parse_shift",  # the dialect's own
            "_parse_pattern_window", "_parse_frame", "_parse_window_pattern", "_parse_call_modifiers")
    overrides = [name for cls in (SparkCepParser, WindowSyntax) for name in vars(cls)
                 if name.startswith("_parse_") and not name.startswith(ours)]
    assert "_parse_table" in overrides and "_parse_function_call" in overrides
    for name in [*overrides, "raise_error", "reset", "FUNCTIONS", "TYPE_LITERAL_PARSERS", "NO_PAREN_FUNCTION_PARSERS",
                 "TEXT_MATCH_EXCLUDED_TOKENS", "ID_VAR_TOKENS"]:
        assert hasattr(parser, name), f"sqlglot {sqlglot.__version__}: Parser.{name} is gone"
    for name in ("cast_sql", "TRANSFORMS"):
        assert name in vars(SparkCepGenerator) and hasattr(generator, name), \
            f"sqlglot {sqlglot.__version__}: Generator.{name} is gone"


@pytest.mark.parametrize("call", ["map(1)", "map(1, 2, 3)", "date_trunc()"])
def test_calls_sqlglot_cannot_build_are_read_as_written(call):
    """Spark's parser reads a call with any argument count (its analysis checks it): a count
    sqlglot's builder cannot take is kept as written, not a crash in the parser."""
    c = mr(f"PATTERN (A+) DEFINE A AS {call} IS NULL")
    node = c.definitions[0].condition.this
    assert isinstance(node, exp.Anonymous) and node.sql(dialect=SparkCep).lower() == call


@pytest.mark.parametrize("clause", ["WINDOW w AS (PARTITION BY a), name", "WINDOW w AS", "WINDOW w (PARTITION BY a)"])
def test_a_named_window_needs_as_and_a_specification(clause):
    """Spark's namedWindow is ``name AS (spec)`` or ``name AS other``: anything else is a syntax
    error at the clause, not a window sqlglot would print as ``name AS ()``."""
    sql = f"SELECT count(*) OVER w FROM t {clause}"
    e = error_of(sql)
    assert "window specification" in e.message and e.line == 1 and e.column > len("SELECT count(*) OVER w FROM t ")


def test_a_named_window_may_name_another():
    assert "w2 AS (w1)" in to_spark_sql(parse_one("SELECT count(*) OVER w2 FROM t WINDOW w1 AS (PARTITION BY a), w2 AS w1"))


@pytest.mark.parametrize("sql", [
    "SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY i DESC) FROM t",
    "SELECT PERCENTILE_DISC(0.25) WITHIN GROUP (ORDER BY i) FILTER(WHERE i > 1) FROM t",
])
def test_a_percentile_within_group_is_written_as_it_reads(sql):
    # (sqlglot's Spark 2 generator writes it as PERCENTILE_APPROX(i, p): another function)
    assert to_spark_sql(parse_one(sql)) == sql


@pytest.mark.parametrize("call, written", [
    ("like(b, c)", "(b LIKE c)"), ("ilike(b, c)", "(b ILIKE c)"), ("like(b, c, '!')", "(b LIKE c ESCAPE '!')"),
    ("rlike(b, c)", "(b RLIKE c)"), ("regexp_like(b, c)", "(b RLIKE c)"),
])
def test_a_predicate_called_as_a_function_stays_one_operand(call, written):
    # Spark's grammar binds LIKE below comparisons: x = b LIKE c is (x = b) LIKE c
    assert to_spark_sql(parse_one(f"SELECT x = {call} FROM t")) == f"SELECT x = {written} FROM t"
