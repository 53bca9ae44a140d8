"""Every example of docs/flinkcep.md runs through spark.sql and gives the matches it states
(``-- expect:``) or the rows printed under it (a ```text table, as in docs/sql.md)."""
import pathlib
import re

import pytest

import sql_ext
from test_sql_doc import cells, show

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "flinkcep.md"
EXAMPLES = re.findall(r"```sql\n-- expect:(.*?)\n(.*?)```", DOC.read_text(), re.S)
TABLES = re.findall(r"```sql\n((?:(?!```).)*)```\n```text\n((?:(?!```).)*)```", DOC.read_text(), re.S)


def matches(rows) -> str:
    """Rows of ALL ROWS PER MATCH (with measure ``m`` and column ``label``) as '{a b} {c}'."""
    groups: dict = {}
    for row in rows:
        key = (row["tag"] if "tag" in row else None, row["m"])
        groups.setdefault(key, []).append(row["label"])
    return " ".join("{" + " ".join(labels) + "}" for labels in groups.values())


def test_doc_has_examples():
    assert len(EXAMPLES) >= 20


@pytest.mark.parametrize("expected, sql", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_doc_example(spark, expected, sql):
    sql_ext.enable(spark)
    assert matches(row.asDict() for row in spark.sql(sql).collect()) == expected.strip()


def test_doc_has_tables():
    assert len(TABLES) >= 3


@pytest.mark.parametrize("sql, expected", TABLES, ids=[f"table{i}" for i in range(len(TABLES))])
def test_doc_table(spark, sql, expected):
    sql_ext.enable(spark)
    header, *lines = expected.strip().splitlines()
    df = spark.sql(sql)
    assert df.columns == cells(header)
    assert sorted([show(v) for v in row] for row in df.collect()) == sorted(cells(line) for line in lines)
