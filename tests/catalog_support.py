"""A ``sql_ext.compiler.catalog.Catalog`` without Spark, for tests of the rewrite that need no JVM.

Schemas come from a table of DDL strings; the types of computed columns are sqlglot's guess
(``annotate_types``), which is close enough for tests of analysis, planning and lowering but
is not Spark's word: tests that check types or results go through Spark.
"""
from __future__ import annotations

import json
import re

import sqlglot
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from sql_ext.compiler.catalog import Field
from udtf.plan import Limits

_JSON = {"int": "integer", "bigint": "long", "smallint": "short", "tinyint": "byte", "string": "string",
         "double": "double", "float": "float", "boolean": "boolean", "date": "date", "timestamp": "timestamp",
         "timestamp_ntz": "timestamp_ntz"}


def field(name: str, type_: str) -> Field:
    type_ = type_.lower().replace(" ", "")
    return Field(name, type_, json.dumps(_JSON.get(type_, type_)))


class StaticCatalog:
    def __init__(self, tables: dict):
        """``tables``: name -> DDL column list such as ``"k string, t int, p decimal(10,2)"``."""
        self.schemas = {name: dict(column.split(None, 1) for column in re.split(r",(?![^(]*\))", ddl))
                        for name, ddl in tables.items()}
        self.registered: dict = {}  # UDTF name -> (EnginePlan, output Fields)

    def schema(self, sql: str) -> tuple:
        for name in self.registered:
            sql = _as_table(sql, name)  # a call of a UDTF registered here reads as a table
        tree = qualify(sqlglot.parse_one(sql, read="spark"), schema=self.schemas, dialect="spark")
        tree = annotate_types(tree, schema=self.schemas, dialect="spark")
        return tuple(field(e.alias_or_name, e.type.sql("spark").lower()) for e in tree.selects)

    def is_streaming(self, sql: str) -> bool:
        return False

    def syntax_error(self, sql: str) -> None:
        return None  # (Spark's parser: the Spark tests)

    def ansi(self) -> bool:
        return True

    def time_zone(self) -> str:
        return "UTC"

    def size_of_null(self) -> bool:
        return True

    def limits(self) -> Limits:
        return Limits()

    def chunk_rows(self) -> int:
        return 0

    def register(self, name: str, plan, output: tuple) -> None:
        self.registered.setdefault(name, (plan, output))
        self.schemas[name] = {f.name: f.type for f in output}


def _as_table(sql: str, name: str) -> str:
    """``sql`` with each ``name(...)`` call replaced by the bare table name ``name``."""
    while (start := sql.find(name + "(")) >= 0:
        depth, end = 0, start + len(name)
        while True:
            depth += {"(": 1, ")": -1}.get(sql[end], 0)
            end += 1
            if depth == 0:
                break
        sql = sql[:start] + name + sql[end:]
    return sql
