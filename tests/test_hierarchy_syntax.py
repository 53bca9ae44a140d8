"""The event hierarchy syntax of docs/hierarchies.md (PERIOD, LAYER, ``DEFINE v FROM layer``,
EVENT_START / EVENT_END / MATCH_START / MATCH_END) parsed, printed back, and checked without
Spark: each misuse is an error at its line:column, and what is not evaluated yet is refused
there too."""
from __future__ import annotations

import re

import pytest

from catalog_support import StaticCatalog
from sql_ext.compiler.parse import Layer, MatchRecognizeClause, SpanCall, parse_one, to_spark_sql
from sql_ext.compiler.rewrite import rewrite_sql
from sql_support import at
from udtf.errors import MatchRecognizeError

READINGS = StaticCatalog({"readings": "sensor string, ts timestamp, kind string, temp int, a_start timestamp"})

EXAMPLE_3 = """SELECT * FROM readings MATCH_RECOGNIZE (
  PARTITION BY sensor ORDER BY ts
  LAYER spike AS (
    MEASURES MAX(temp) AS peak
    PATTERN (HOT{2,}) WITHIN INTERVAL '3' MINUTE
    DEFINE HOT AS kind = 'temp' AND temp >= 80),
  LAYER episode AS (
    MEASURES COUNT(*) AS spikes
    PATTERN (S1 S2) WITHIN INTERVAL '10' MINUTE
    DEFINE S1 FROM spike, S2 FROM spike)
  MEASURES MATCH_START() AS match_start, MATCH_END() AS match_end, EVENT_END(E) AS e_end
  PATTERN (E R*? OFF) WITHIN INTERVAL '12' MINUTE
  DEFINE E FROM episode AS E.spikes = 2, OFF AS kind = 'fan_off') AS m"""


def test_the_hierarchy_syntax_parses_and_prints_back():
    clause = parse_one(EXAMPLE_3).find(MatchRecognizeClause)
    assert [layer.name for layer in clause.layers] == ["spike", "episode"]
    assert [d.source and d.source.name for d in clause.layers[1].definitions] == ["spike", "spike"]
    assert [d.source and d.source.name for d in clause.definitions] == ["episode", None]
    assert [c.args["kind"] for c in clause.find_all(SpanCall)] == ["MATCH_START", "MATCH_END", "EVENT_END"]
    text = to_spark_sql(parse_one(EXAMPLE_3))
    assert to_spark_sql(parse_one(text)) == text
    assert "S1 FROM spike AS TRUE" in text and "LAYER episode AS (" in text


def test_period_parses_after_order_by():
    sql = ("SELECT * FROM readings MATCH_RECOGNIZE (ORDER BY ts PERIOD (a_start, ts) "
           "MEASURES EVENT_START(C) AS c PATTERN (W C) DEFINE W AS kind = 'W') AS m")
    clause = parse_one(sql).find(MatchRecognizeClause)
    assert (clause.period.this.name, clause.period.expression.name) == ("a_start", "ts")
    assert "PERIOD (a_start, ts)" in to_spark_sql(parse_one(sql))


def test_the_new_words_stay_names_outside_the_clause():
    sql = "SELECT layer, period, event_start(x), match_start FROM t"
    tree = parse_one(sql)
    assert tree.find(Layer) is None and tree.find(SpanCall) is None


def _error(sql: str) -> MatchRecognizeError:
    with pytest.raises(MatchRecognizeError) as info:
        rewrite_sql(sql, READINGS)
    return info.value


def _replace(old: str, new: str) -> str:
    assert old in EXAMPLE_3
    return EXAMPLE_3.replace(old, new, 1)


def _clause(body: str) -> str:
    return f"SELECT * FROM readings MATCH_RECOGNIZE ({body}) AS m"


def _keyed(body: str) -> str:
    return _clause(f"PARTITION BY sensor {body}")


# (id, the statement, message, the text at the error position, its occurrence)
ERRORS = [
    ("a layer declared twice", _replace("LAYER episode", "LAYER spike"),
     "LAYER: SPIKE is declared twice", "spike AS (\n    MEASURES COUNT", 1),
    ("FROM naming no layer", _replace("E FROM episode", "E FROM episodes"),
     "DEFINE E FROM EPISODES: EPISODES names no LAYER of the clause", "episodes"),
    ("FROM naming a later layer", _replace("S2 FROM spike", "S2 FROM episode"),
     "DEFINE S2 FROM EPISODE: EPISODE is declared after it: a layer reads only layers declared before it",
     "episode)"),
    ("FROM naming the layer itself", _replace("DEFINE HOT AS", "DEFINE HOT FROM spike AS"),
     "DEFINE HOT FROM SPIKE: SPIKE is declared after it: a layer reads only layers declared before it",
     "spike AS kind"),
    ("a layer no variable reads", _replace("E FROM episode AS E.spikes = 2", "E AS kind = 'x'"),
     "LAYER EPISODE: no variable reads it (DEFINE v FROM EPISODE)", "episode AS"),
    ("a column that is not a measure of the layer", _replace("E.spikes = 2", "E.temp = 2"),
     "E.temp: temp is not a measure of LAYER EPISODE (its MEASURES and PARTITION BY: spikes)", "E.temp"),
    ("EVENT_END of no variable", _replace("EVENT_END(E)", "EVENT_END(Q)"),
     "EVENT_END: Q is not a pattern variable", "Q)"),
    ("ALL ROWS PER MATCH with layers", _replace("  PATTERN (E R*? OFF)", "  ALL ROWS PER MATCH PATTERN (E R*? OFF)"),
     "ALL ROWS PER MATCH: a statement with LAYERs has ONE ROW PER MATCH (its rows would mix input rows and "
     "events)", "ALL ROWS"),
    ("WITH TIMEOUT ROWS in a layer", _replace("WITHIN INTERVAL '3' MINUTE", "WITHIN INTERVAL '3' MINUTE WITH TIMEOUT ROWS"),
     "a LAYER has no WITH TIMEOUT ROWS: only the statement's partial matches are reported", "WITH TIMEOUT"),
    ("ROWS PER MATCH in a layer", _replace("    PATTERN (HOT{2,})", "    ONE ROW PER MATCH PATTERN (HOT{2,})"),
     "a LAYER has no ROWS PER MATCH: each of its matches is one event of the layers that read it", "ONE ROW"),
    ("ORDER BY in a layer", _replace("LAYER spike AS (", "LAYER spike AS (ORDER BY ts"),
     "a LAYER has the statement's ORDER BY", "ORDER BY ts\n    MEASURES"),
    ("a layer in a layer", _replace("LAYER episode AS (", "LAYER episode AS (LAYER x AS (PATTERN (A)) "),
     "a LAYER cannot declare LAYERs (declare them in the statement, before the layer that reads them)",
     "LAYER x"),
    ("a layer's undefined DEFINE variable", _replace("DEFINE S1 FROM spike", "DEFINE S3 FROM spike"),
     "DEFINE: S3 is not a pattern variable of PATTERN", "S3"),
    ("a layer's NO SKIP in standard semantics", _replace("PATTERN (S1 S2)", "AFTER MATCH NO SKIP PATTERN (S1 S2)"),
     "AFTER MATCH NO SKIP requires SEMANTICS FLINKCEP (standard semantics report one match per start row; use "
     "AFTER MATCH SKIP TO NEXT ROW)", "AFTER MATCH NO"),
    ("a clause out of order", _replace("  MEASURES MATCH_START()", "  MEASURES MATCH_START() AS q LAYER z AS (PATTERN (A)) MEASURES MATCH_START()"),
     "LAYER clause is out of order or repeated in MATCH_RECOGNIZE; clauses must appear in the order PARTITION BY, "
     "ORDER BY, PERIOD, LAYER, MEASURES, ROWS PER MATCH, AFTER MATCH SKIP, SEMANTICS, PATTERN, WITHIN, WITH "
     "TIMEOUT ROWS, SUBSET, DEFINE", "LAYER z"),
    ("FROM without a layer name", _replace("E FROM episode AS", "E FROM AS"),
     "Expecting a LAYER name after FROM in DEFINE", "AS E.spikes"),
    ("EVENT_START without a variable", _replace("EVENT_END(E)", "EVENT_END()"),
     "EVENT_END takes one pattern variable: EVENT_END(<variable>)", "EVENT_END"),
    ("MATCH_START with an argument", _replace("MATCH_START()", "MATCH_START(E)"),
     "MATCH_START() takes no arguments", "MATCH_START"),
    ("PERIOD with one expression", _clause("ORDER BY ts PERIOD (ts) PATTERN (A)"),
     "Expecting PERIOD (<start>, <end>)", ") PATTERN"),
    ("FROM in a clause without layers", _clause("ORDER BY ts MEASURES A.ts AS x PATTERN (A) DEFINE A FROM x"),
     "DEFINE A FROM X: X names no LAYER of the clause", "x)"),
    ("PERIOD whose end is not the first ORDER BY key", _clause("ORDER BY a_start PERIOD (a_start, ts) PATTERN (A)"),
     "PERIOD (a_start, ts): the first ORDER BY key must be its end, ts, ascending (the rows are ordered by when "
     "they are complete)", "a_start PERIOD"),
    ("PERIOD ordered by its end descending", _clause("ORDER BY TS DESC, kind PERIOD (a_start, ts) PATTERN (A)"),
     "PERIOD (a_start, ts): the first ORDER BY key must be its end, ts, ascending (the rows are ordered by when "
     "they are complete)", "TS DESC"),
    ("PERIOD without ORDER BY", _clause("PERIOD (a_start, ts) PATTERN (A)"),
     "PERIOD (a_start, ts): the first ORDER BY key must be its end, ts, ascending (the rows are ordered by when "
     "they are complete)", "PERIOD"),
    ("PERIOD of an aggregate", _clause("ORDER BY ts PERIOD (MIN(a_start), ts) PATTERN (A)"),
     "PERIOD: MIN(a_start): start and end are expressions of the row's own columns", "MIN(a_start)"),
    ("PERIOD of a qualified column", _clause("ORDER BY ts PERIOD (A.a_start, ts) PATTERN (A)"),
     "PERIOD: A.a_start: start and end are expressions of the row's own columns", "A.a_start"),
    ("PERIOD of a number", _keyed("ORDER BY temp PERIOD (temp - 1, temp) PATTERN (A)"),
     "PERIOD: temp - 1 is INT; start and end are TIMESTAMP, TIMESTAMP_NTZ or DATE (what WITHIN measures)",
     "temp - 1"),
    ("PERIOD of two types", _keyed("ORDER BY ts PERIOD (CAST(a_start AS DATE), ts) PATTERN (A)"),
     "PERIOD: start and end have one type (start DATE, end TIMESTAMP)", "ts) PATTERN"),
    ("PERIOD over an unknown column", _keyed("ORDER BY ts PERIOD (a_begin, ts) PATTERN (A)"),
     None, "a_begin"),
    ("EVENT_START without ORDER BY", _clause("MEASURES EVENT_START(A) AS x PATTERN (A)"),
     "EVENT_START: a row's interval is its first ORDER BY key (or its PERIOD): the clause needs ORDER BY",
     "EVENT_START"),
    ("WITHIN over PERIOD rows in FLINKCEP semantics",
     _keyed("ORDER BY ts PERIOD (a_start, ts) SEMANTICS FLINKCEP PATTERN (A -> B) WITHIN INTERVAL '5' MINUTE"),
     "WITHIN over PERIOD rows is evaluated for SEMANTICS STANDARD without possessive quantifiers only, for now "
     "(docs/hierarchies.md)", "INTERVAL '5'"),
    ("WITHIN over PERIOD rows with a possessive quantifier",
     _keyed("ORDER BY ts PERIOD (a_start, ts) PATTERN (A++ B) WITHIN INTERVAL '5' MINUTE"),
     "WITHIN over PERIOD rows is evaluated for SEMANTICS STANDARD without possessive quantifiers only, for now "
     "(docs/hierarchies.md)", "INTERVAL '5'"),
    ("WITH TIMEOUT ROWS over PERIOD rows",
     _keyed("ORDER BY ts PERIOD (a_start, ts) PATTERN (A B) WITHIN INTERVAL '5' MINUTE WITH TIMEOUT ROWS"),
     "WITH TIMEOUT ROWS: a WITHIN over PERIOD rows is evaluated at each take, with no timer to time a partial "
     "match out, for now (docs/hierarchies.md)", "WITH TIMEOUT"),
    ("a layer's PARTITION BY expression", _replace("LAYER spike AS (", "LAYER spike AS (PARTITION BY temp + 1"),
     "PARTITION BY: only column names of the input are supported", "temp + 1"),
    ("a refined layer over events lacking its keys", _replace("LAYER episode AS (", "LAYER episode AS (PARTITION BY kind"),
     "LAYER EPISODE PARTITION BY kind: the events of LAYER SPIKE do not carry kind (a layer partitioned by it does)",
     "kind\n    MEASURES COUNT"),
    ("layers without ORDER BY", _replace("PARTITION BY sensor ORDER BY ts", "PARTITION BY sensor").replace(
        " WITHIN INTERVAL '12' MINUTE", ""),
     "a statement with LAYERs needs ORDER BY: events are ordered by the rows that complete them", "LAYER spike"),
    ("WITHIN over events in FLINKCEP semantics",
     _replace("PATTERN (S1 S2) WITHIN", "SEMANTICS FLINKCEP PATTERN (S1 S2) WITHIN"),
     "WITHIN over a layer's events is evaluated for SEMANTICS STANDARD without possessive quantifiers only, "
     "for now (docs/hierarchies.md)", "INTERVAL '10'"),
    ("WITHIN over events with a possessive quantifier", _replace("PATTERN (S1 S2)", "PATTERN (S1*+ S2)"),
     "WITHIN over a layer's events is evaluated for SEMANTICS STANDARD without possessive quantifiers only, "
     "for now (docs/hierarchies.md)", "INTERVAL '10'"),
    ("a measure named like an input column the reader reads",
     _replace("MEASURES MAX(temp) AS peak", "MEASURES MAX(temp) AS temp").replace("PATTERN (S1 S2)", "PATTERN (S1 S2 X)"),
     "LAYER SPIKE: its measure temp has the name of another column the pattern reads (an input column or another "
     "layer's measure): name it otherwise", "temp\n"),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_misuse_is_an_error_at_its_position(case):
    name, sql, message, needle, *occurrence = case
    error = _error(sql)
    expected = message or error.message  # (None: the catalog's own message, at the user's construct)
    assert (error.message, error.line, error.column) == (expected, *at(sql, needle, *occurrence))


STREAM_REFUSED = [  # (id, statement, processing time, message, the text at the error position)
    ("PERIOD in processing time", _keyed("ORDER BY ts PERIOD (a_start, ts) PATTERN (A)"), True,
     "PERIOD: a statement streamed in processing time orders and windows its rows by their arrival (the first "
     "ORDER BY key), so a row's interval is [arrival, arrival], which a PERIOD of the row's own times cannot be: "
     "stream it in event time (docs/streaming.md)", "PERIOD"),
    ("timed-out rows", _replace("WITHIN INTERVAL '12' MINUTE", "WITHIN INTERVAL '12' MINUTE WITH TIMEOUT ROWS"),
     False, "WITH TIMEOUT ROWS: a statement with LAYERs has no timed-out rows, in batch or on a stream: its top "
     "reads a layer's events, so its WITHIN is over its members' span, evaluated at each take, with no timer to "
     "time a partial match out, for now (docs/hierarchies.md)", "WITH TIMEOUT"),
    ("a refined layer", _replace("LAYER episode AS (", "LAYER episode AS (PARTITION BY sensor, kind"), False,
     "LAYER EPISODE PARTITION BY kind: a layer refining the statement's partition does not stream yet (on a stream "
     "the layers run in one pass, in the statement's partition; docs/hierarchies.md)", "kind\n"),
]


@pytest.mark.parametrize("case", STREAM_REFUSED, ids=[c[0] for c in STREAM_REFUSED])
def test_what_of_a_hierarchy_does_not_stream_is_refused_at_its_position(case):
    """Before anything is typed by Spark (the catalog here knows no stream); what streams is
    tests/test_streaming.py's and tests/test_stream_layers.py's."""
    _, sql, processing_time, message, needle = case
    streaming = StaticCatalog({"readings": "sensor string, ts timestamp, kind string, temp int, a_start timestamp"})
    streaming.streaming, streaming.processing_time, streaming.late_rows = True, processing_time, None
    with pytest.raises(MatchRecognizeError) as info:
        rewrite_sql(sql, streaming)
    assert (info.value.message, info.value.line, info.value.column) == (message, *at(sql, needle))


class _StreamLayers(StaticCatalog):
    """A streaming statement's catalog whose LAYERs are planned as ``StreamCatalog``'s are."""
    streaming, processing_time, late_rows = True, False, None

    def layer_catalog(self):
        layers = StaticCatalog({})
        layers.schemas, layers.registered, layers.layer_of_stream = self.schemas, self.registered, True
        return layers


@pytest.mark.parametrize("pattern, needle, message", [
    ("HOT{2,} $", "$", "PATTERN anchor $ on a stream: the last row of a partition is known only when the stream "
     "ends, so no match using it could be emitted"),
    ("HOT X*", "X*", "PATTERN: a greedy unbounded loop over X (no DEFINE: always true) takes every later row, so no "
     "match is final before the stream ends; add WITHIN, a DEFINE, or make the loop reluctant"),
], ids=["$", "a loop over a variable without DEFINE"])
def test_a_layer_no_row_could_make_final_is_refused_on_a_stream(pattern, needle, message):
    """As the statement's own PATTERN is (tests/test_streaming.py): a layer whose matches no row
    decides would hold every row of its key and emit nothing before the stream ends."""
    sql = EXAMPLE_3.replace("PATTERN (HOT{2,}) WITHIN INTERVAL '3' MINUTE", f"PATTERN ({pattern})")
    with pytest.raises(MatchRecognizeError) as info:
        rewrite_sql(sql, _StreamLayers({"readings": "sensor string, ts timestamp, kind string, temp int, "
                                                    "a_start timestamp"}))
    assert (info.value.message, info.value.line, info.value.column) == (message, *at(sql, needle))


def test_layers_sharing_the_partition_are_one_udtf_over_the_input():
    """The one pass: one UDTF over the input rows, sorted in the statement's partition and order,
    its plan the top's with the layers below it."""
    sql = EXAMPLE_3.replace(" WITHIN INTERVAL '10' MINUTE", "").replace(" WITHIN INTERVAL '12' MINUTE", "")
    text, done = rewrite_sql(sql, READINGS)  # (this catalog's types of intervals are not Spark's)
    assert len(set(re.findall(r"sparkcep_mr_[0-9a-f]{16}\(", text))) == 1 and "UNION ALL" not in text
    assert "FROM readings)) DISTRIBUTE BY `sensor` SORT BY `sensor`, `ts`" in text
    (_, top), = done
    hierarchy = top.plan.hierarchy
    assert [(layer.name, layer.sources, layer.reads_rows) for layer in hierarchy.layers] == [
        ("SPIKE", (), True), ("EPISODE", (0,), False)]
    assert (hierarchy.sources, hierarchy.reads_rows) == ((1,), True)


def test_a_refined_layer_is_in_the_one_pass_with_its_keys():
    """A layer with its own PARTITION BY runs in the one pass, one matcher per refined key
    (``LayerPlan.keys``), the key shipped with the input rows."""
    sql = EXAMPLE_3.replace(" WITHIN INTERVAL '10' MINUTE", "").replace(" WITHIN INTERVAL '12' MINUTE", "") \
        .replace("LAYER spike AS (", "LAYER spike AS (PARTITION BY kind")
    text, done = rewrite_sql(sql, READINGS)
    assert len(set(re.findall(r"sparkcep_mr_[0-9a-f]{16}\(", text))) == 1 and "UNION ALL" not in text
    (_, top), = done
    hierarchy = top.plan.hierarchy
    assert [layer.keys for layer in hierarchy.layers] == [("kind",), ()]
    assert "kind" in {v.name for v in hierarchy.rows}


def test_each_layer_is_a_clause_over_what_it_reads(monkeypatch):
    """The expansion (the one pass answering "not covered"): the lowest layer reads the numbered
    rows, the upper ones a UNION ALL of their sources' events (and rows) ordered by (completing
    row, level, MATCH_NUMBER)."""
    from sql_ext.compiler import one_pass

    monkeypatch.setattr(one_pass, "layers", lambda *args, **kwargs: None)
    sql = EXAMPLE_3.replace(" WITHIN INTERVAL '10' MINUTE", "").replace(" WITHIN INTERVAL '12' MINUTE", "") \
        .replace("LAYER spike AS (", "LAYER spike AS (PARTITION BY kind")
    text, done = rewrite_sql(sql, READINGS)  # (this catalog's types of intervals are not Spark's)
    assert text.count("UNION ALL") == 1 and text.count("ROW_NUMBER() OVER (PARTITION BY `sensor` ORDER BY ts)") == 2
    (_, top), = done
    assert top.plan.skip.mode.value == "PAST LAST ROW" and "'EPISODE'" in text and "'SPIKE'" in text
