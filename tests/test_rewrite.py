"""The rewrite without Spark: analysis, planning and lowering are pure functions of the clause
and the types a catalog gives (here ``catalog_support.StaticCatalog``); the engine plan and the
program survive their JSON wire format."""
from __future__ import annotations

import pytest
import sqlglot

from catalog_support import StaticCatalog
from sql_ext.compiler import explain
from sql_ext.compiler.parse import split_statements
from sql_ext.compiler.interval import year_month
from sql_ext.compiler.rewrite import rewrite_sql
from test_sql_errors import CASES, MALFORMED, SPECIAL, query
from test_sql_statements import SPACED
from sql_support import at
from udtf.compile import compile_pattern
from udtf.errors import MatchRecognizeError
from udtf.pattern import parse_pattern, variables
from udtf.plan import VERSION, EnginePlan
from udtf.program import Program

SERIES = StaticCatalog({"series": "k string, t int, p int"})
TICKS = StaticCatalog({"ticks": "symbol string, ts timestamp, price decimal(10,2), day date"})


def lowered(sql: str, catalog=TICKS) -> list:
    return [lowered for _, lowered in rewrite_sql(sql, catalog)[1]]


# the analysis errors of test_sql_errors, raised without Spark
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_analysis_errors_need_no_spark(case):
    name, parts, message, needle, *occurrence = case
    sql = SPECIAL[name]() if name in SPECIAL else query(**parts)
    with pytest.raises(MatchRecognizeError) as info:
        lowered(sql, SERIES)
    assert (info.value.message, info.value.line, info.value.column) == (message, *at(sql, needle, *occurrence))


@pytest.mark.parametrize("case", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_clauses_need_no_spark(case):
    name, body, message, needle, *occurrence = case
    sql = f"SELECT * FROM series MATCH_RECOGNIZE ({body})"
    with pytest.raises(MatchRecognizeError) as info:
        lowered(sql, SERIES)
    assert (info.value.message, info.value.line, info.value.column) == (message, *at(sql, needle, *occurrence))


V_SHAPE = """SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES FIRST(DOWN.ts) AS start_ts, LAST(UP.ts) AS end_ts, MAX(DOWN.price) AS max_down
  PATTERN (STRT DOWN+ UP+) WITHIN INTERVAL '1' HOUR
  DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price) AND price - FIRST(DOWN.price) < 5) AS m"""


def test_engine_plan_round_trips_through_json():
    (plan,) = [l.plan for l in lowered(V_SHAPE)]
    assert EnginePlan.from_json(plan.to_json()) == plan
    assert plan.within == 3_600_000_000 and plan.order_key is not None
    assert [d.name for d in plan.derived] and plan.values


def test_engine_plan_version_is_checked():
    (plan,) = [l.plan for l in lowered(V_SHAPE)]
    stale = plan.to_json().replace(f'"version": {VERSION}', '"version": 0')
    with pytest.raises(MatchRecognizeError, match=f"engine plan version is 0, but the worker runs version {VERSION}"):
        EnginePlan.from_json(stale)


@pytest.mark.parametrize("pattern", ["A B+ C*?", "(A | B){2,3} PERMUTE(C, D)", "^ A {- B -} C $",
                                     "A -> ~B -> C", "A ->> B->>+ -> C", "(A B)+ UNTIL C", "A B++ C",
                                     "A ~B C", "()", "(A*)*"])
def test_program_round_trips_through_json(pattern):
    node = parse_pattern(pattern)
    program = compile_pattern(node, variables(node), within=True)
    assert Program.from_json(program.to_json()) == program


def test_same_plan_same_udtf_name():
    first, second = lowered(V_SHAPE), lowered(V_SHAPE)
    assert first[0].name == second[0].name
    other = lowered(V_SHAPE.replace("< 5)", "< 6)"))
    assert other[0].name != first[0].name


def test_generated_sql_calls_the_udtf_over_a_sorted_table_argument():
    sql, ((_, result),) = rewrite_sql(V_SHAPE, TICKS)
    assert f"FROM {result.name}(TABLE(SELECT `symbol`, " in sql
    assert "DISTRIBUTE BY `symbol` SORT BY `symbol`, `ts`" in sql
    assert sql.startswith("SELECT * FROM (SELECT `symbol`,") and sql.endswith(") AS m")
    assert "MATCH_RECOGNIZE" not in sql.upper()


@pytest.mark.parametrize("interval, micros", [
    ("INTERVAL '10' SECOND", 10_000_000), ("INTERVAL 10 SECONDS", 10_000_000),
    ("INTERVAL '1.5' SECOND", 1_500_000), ("INTERVAL 1 HOUR 30 MINUTES", 5_400_000_000),
    ("INTERVAL '1 day 2 hours'", 93_600_000_000), ("INTERVAL '1 10:00:00' DAY TO SECOND", 122_400_000_000),
    ("INTERVAL '10:30' HOUR TO MINUTE", 37_800_000_000), ("INTERVAL 100 MILLISECONDS", 100_000),
    ("INTERVAL '2' DAY", 172_800_000_000)])
def test_within_lengths_without_spark(interval, micros):
    (plan,) = [l.plan for l in lowered(V_SHAPE.replace("INTERVAL '1' HOUR", interval))]
    assert plan.within == micros


# Spark 4.2's type and value (months) of each literal; None: left for Spark to type or refuse
@pytest.mark.parametrize("interval, expected", [
    ("INTERVAL '1' MONTH", (1, "interval month")), ("INTERVAL 2 MONTHS", (2, "interval month")),
    ("INTERVAL '- 1' MONTH", (-1, "interval month")), ("INTERVAL '-3' YEAR", (-36, "interval year")),
    ("INTERVAL 2 YEARS", (24, "interval year")), ("INTERVAL '1-2' YEAR TO MONTH", (14, "interval year to month")),
    ("INTERVAL '-1-11' YEAR TO MONTH", (-23, "interval year to month")),
    ("INTERVAL '1-12' YEAR TO MONTH", None), ("INTERVAL '1.5' YEAR", None), ("INTERVAL '1' DAY", None)])
def test_year_month_literals_without_spark(interval, expected):
    node = sqlglot.parse_one(f"SELECT {interval}", read="spark").selects[0]
    assert year_month(node) == expected


@pytest.mark.parametrize("interval, message", [
    ("INTERVAL '1' MONTH", "WITHIN must be a day-time interval; MONTH is not a day-time unit"),
    ("INTERVAL -5 MINUTES", "WITHIN must not be negative"),
    ("INTERVAL '1:2:3' HOUR TO MINUTE", "WITHIN: '1:2:3' does not fit INTERVAL HOUR TO MINUTE")])
def test_within_errors(interval, message):
    sql = V_SHAPE.replace("INTERVAL '1' HOUR", interval)
    with pytest.raises(MatchRecognizeError) as info:
        lowered(sql)
    assert info.value.message.startswith(message)
    assert (info.value.line, info.value.column) == at(sql, "INTERVAL")


def test_explain_shows_the_program_that_runs():
    ((clause, plan),) = explain.automata(V_SHAPE, TICKS)
    assert plan == lowered(V_SHAPE)[0].plan
    text = explain.text(clause, plan)
    assert "PATTERN (STRT DOWN+ UP+)" in text and "DOWN --" not in text
    assert "--1: DOWN--> q" in text or "--1: DOWN" in text
    assert explain.graphviz(plan).startswith("digraph dst {")
    assert explain.mermaid(plan).startswith("flowchart LR")


class _Chunked(StaticCatalog):
    def chunk_rows(self) -> int:
        return 5


def test_explain_shows_a_chunked_plan():
    sql = "SELECT * FROM ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES COUNT(*) AS n PATTERN (A B{1,3}) " \
          "DEFINE B AS price > PREV(price, 2)) AS m"
    ((clause, plan),) = explain.automata(sql, _Chunked({"ticks": "symbol string, ts timestamp, price decimal(10,2)"}))
    assert "in chunks of 5 attempt rows matched in parallel (spark.sparkcep.chunkRows), each reading 2 rows " \
           "before and 4 after" in explain.text(clause, plan)
    ((clause, plan),) = explain.automata(sql, TICKS)
    assert "in chunks" not in explain.text(clause, plan)


def test_statements_keep_their_positions_in_the_script():
    script = "SELECT 1;\nSELECT ';' ;\n\n  SELECT x FROM t MATCH_RECOGNIZE (PATTERN (A+ B)) AS m"
    statements = split_statements(script)
    assert len(statements) == 3
    with pytest.raises(MatchRecognizeError) as info:
        lowered(statements[2], StaticCatalog({"t": "x int"}))
    assert (info.value.line, info.value.column) == at(script, "MATCH_RECOGNIZE")


def test_text_outside_the_clauses_is_kept_as_written():
    """Only each clause (with its input and alias) is replaced; the rest of the statement,
    comments and literal spellings included, stays the user's text."""
    sql = ("/* report */ WITH w AS (SELECT * FROM ticks WHERE symbol <> 'O''Brien')\n"
           "SELECT m.*, 'it''s' AS note, DATE '2020-01-01' AS d -- keep me\n"
           "FROM w MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES LAST(A.ts) AS t\n"
           "  PATTERN (A B) DEFINE B AS price > A.price) AS m (sym, t)\n"
           "JOIN w MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES FIRST(A.ts) AS t\n"
           "  PATTERN (A) DEFINE A AS price > 1) AS n ON m.sym = n.symbol WHERE 1 = 1")
    out, done = rewrite_sql(sql, TICKS)
    first, second = (lowered.text for _, lowered in done)
    assert out == sql[:sql.index("FROM w MATCH")] + "FROM " + first + "\nJOIN " + second + \
        sql[sql.index(" ON m.sym"):]
    assert first.endswith(") AS m (sym, t)") and second.endswith(") AS n")


def test_nested_clauses_splice_the_inner_text_into_the_outer_input():
    sql = ("SELECT * FROM (SELECT * FROM ticks MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts\n"
           "  MEASURES LAST(A.ts) AS ts, LAST(A.price) AS price PATTERN (A+) DEFINE A AS price > 0) AS i)\n"
           "MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES COUNT(*) AS n PATTERN (X+)) AS o")
    catalog = StaticCatalog({"ticks": "symbol string, ts timestamp, price decimal(10,2)"})
    out, ((_, inner), (_, outer)) = rewrite_sql(sql, catalog)
    assert out == "SELECT * FROM " + outer.text
    assert inner.text in outer.text and "MATCH_RECOGNIZE" not in out


@pytest.mark.parametrize("sql", SPACED, ids=["one row", "all rows"])
def test_a_line_comment_in_any_gap_swallows_nothing(sql):
    """The rewrite re-emits the input, the alias and the rest of the statement as written: a
    ``--`` comment in any gap (the end of the input first) still ends at its line."""
    words = sql.split(" ")
    first = words.index("MATCH_RECOGNIZE")
    expected = rewrite_sql(sql, SERIES)[0]
    for k in [first, *range(1, len(words))]:
        out = rewrite_sql(" ".join(words[:k]) + " -- c\n" + " ".join(words[k:]), SERIES)[0]
        assert _words(out) == _words(expected), k


def _words(sql: str) -> list:
    """The tokens of ``sql`` (comments and layout dropped), UDTF names aside."""
    from sql_ext.compiler.parse import SparkCep

    return [t.text for t in SparkCep().tokenizer().tokenize(sql) if not t.text.startswith("sparkcep_mr_")]
