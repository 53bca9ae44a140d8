"""The documentation's standard MATCH_RECOGNIZE (and window pattern recognition) examples,
checked by a second engine (Trino).

Collected: every ```sql block of README.md and docs/*.md, and every sql_examples/*.sql.  Those
using FlinkCEP-only syntax (``->``, ``~``, UNTIL, WITHIN, SEMANTICS, NO SKIP, possessive
quantifiers) or event hierarchies (LAYER, PERIOD, EVENT_START and the other interval functions)
are not standard and are skipped, and so are examples over tables sql_examples/data.py does not
generate (docs/hierarchies.md's plain-SQL form reads its own ``readings``); the others run on
sparkcep and on Trino (the same text, backquoted identifiers as Trino's double-quoted ones) and must give the same rows.
Examples over sql_examples' generated tables get smaller instances of them (same generators).
"""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from sqlglot import exp

import harness
from server import REPO_ROOT, load_table
from sql_examples.data import TABLES
from sql_ext.compiler.parse import parse_one

pytestmark = [pytest.mark.trino]

WINDOW_PATTERN = re.compile(r"\bPATTERN\s*\(", re.I)  # row pattern recognition in a window (R020)
FLINKCEP_ONLY = re.compile(r"->|~|\bUNTIL\b|\bWITHIN\b|\bSEMANTICS\b|\bNO\s+SKIP\b|[*+?}]\+", re.I)
# event hierarchies (docs/hierarchies.md): sparkcep's own syntax
HIERARCHY_ONLY = re.compile(r"\bLAYER\b|\bPERIOD\s*\(|\b(EVENT|MATCH)_(START|END)\s*\(", re.I)
# smaller instances of sql_examples/data.py's tables (keyword arguments of the generators)
SIZES = {"stock_ticks": {"symbols": 3, "ticks": 150}, "clicks": {"users": 60},
         "rfid_readings": {"tags": 60}, "sensor_readings": {"zones": 2, "minutes": 60},
         "alarm_intervals": {"sensors": 4, "count": 120}}


def _strip_comments(sql: str) -> str:
    return "\n".join(line.split("--", 1)[0] if not line.lstrip().startswith("--") else ""
                     for line in sql.splitlines()).strip().rstrip(";")


def collect():
    found = []
    for md in [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]:
        for i, block in enumerate(re.findall(r"```sql\n(.*?)```", md.read_text(), re.S)):
            found.append((f"{md.relative_to(REPO_ROOT)}#{i}", _strip_comments(block)))
    for f in sorted((REPO_ROOT / "sql_examples").glob("*.sql")):
        found.append((str(f.relative_to(REPO_ROOT)), _strip_comments(f.read_text())))
    return [(name, sql) for name, sql in found if "MATCH_RECOGNIZE" in sql.upper() or WINDOW_PATTERN.search(sql)]


EXAMPLES = collect()


def _reads_known_tables(sql: str) -> bool:
    """Does ``sql`` read only its own WITH queries and sql_examples/data.py's tables?"""
    tree = parse_one(sql)
    own = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    return {t.name.lower() for t in tree.find_all(exp.Table)} <= own | set(TABLES)


STANDARD = [(n, s) for n, s in EXAMPLES if not FLINKCEP_ONLY.search(s) and not HIERARCHY_ONLY.search(s)
            and _reads_known_tables(s)]


def test_docs_have_standard_examples():
    # docs/flinkcep.md's examples all use SEMANTICS FLINKCEP; the standard ones are docs/sql.md's
    # and sql_examples/v_shape_ticker.sql and web_sessions.sql
    assert sum(n.startswith("docs/sql.md") for n, _ in STANDARD) >= 4, [n for n, _ in EXAMPLES]
    assert len(STANDARD) >= 6, [n for n, _ in EXAMPLES]


def _trino_type(spark_type: str) -> str:
    t = spark_type.strip().upper()
    return {"STRING": "varchar", "INT": "integer", "INTEGER": "integer", "BIGINT": "bigint",
            "DOUBLE": "double", "TIMESTAMP": "timestamp(6)", "DATE": "date",
            "BOOLEAN": "boolean"}.get(t) or t.lower()


@pytest.fixture(scope="module")
def doc_tables(spark, trino):
    conn = trino.connect()
    made = {}
    for name, generate in TABLES.items():
        params = inspect.signature(generate).parameters
        kwargs = {k: v for k, v in SIZES.get(name, {}).items() if k in params}
        schema, rows = generate(**kwargs)
        columns = [(c.split()[0], _trino_type(c.split(None, 1)[1]))
                   for c in re.split(r",\s*(?![^()]*\))", schema)]
        alias = f"trdoc_{name}"
        spark.createDataFrame(rows, schema).createOrReplaceTempView(alias)
        load_table(conn, alias, columns, rows)
        made[name] = alias
    yield made
    for alias in made.values():
        spark.catalog.dropTempView(alias)


@pytest.mark.parametrize("name, sql", STANDARD, ids=[n for n, _ in STANDARD])
def test_doc_example_on_trino(spark, trino, doc_tables, name, sql):
    import sql_ext

    for table, alias in doc_tables.items():
        sql = re.sub(rf"\b{table}\b", alias, sql)
    sql_ext.enable(spark)
    df = spark.sql(sql)
    got = harness.Outcome(columns=[c.lower() for c in df.columns],
                          rows=[tuple(harness.normalize(v) for v in r) for r in df.collect()])
    engine = harness.TrinoEngine(trino, threads=1)
    try:
        want = engine.run_one(sql.replace("`", '"'))
    finally:
        engine.close()
    assert want.ok, want.error
    assert got.rows, "the example matches nothing on the test data"
    assert harness.compare(got, want) is None, f"{name}\n-- sparkcep:\n{got.show()}\n-- Trino:\n{want.show()}"
