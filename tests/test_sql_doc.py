"""Every example of docs/sql.md (a ```sql block followed by a ```text result) runs through
spark.sql and gives the result printed under it (rows in any order)."""
from __future__ import annotations

import pathlib
import re

import pytest

from sql_support import mr_spark  # noqa: F401  (fixture)

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "sql.md"
EXAMPLES = re.findall(r"```sql\n(.*?)```\n```text\n(.*?)```", DOC.read_text(), re.S)


def show(value) -> str:
    """A value as the doc prints it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.split("|")]


def test_doc_has_examples():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("sql, expected", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_doc_example(mr_spark, sql, expected):
    header, *lines = expected.strip().splitlines()
    df = mr_spark.sql(sql)
    assert df.columns == cells(header)
    got = sorted([show(v) for v in row] for row in df.collect())
    assert got == sorted(cells(line) for line in lines)
