"""Rewrite each MATCH_RECOGNIZE into plain Spark SQL calling a per-query Arrow UDTF.

For ``<input> MATCH_RECOGNIZE (...) AS m`` the replacement is::

    (SELECT <partition cols>, <measures over atoms> [, <order cols>, <other cols>]
     FROM <udtf>(TABLE(SELECT * FROM (SELECT *, <precomputed> FROM <input>)
                       DISTRIBUTE BY <partition cols> SORT BY <partition cols>, <order>))) AS m

The UDTF's output schema is fixed per query (Arrow UDTFs have no ``analyze``), so each
distinct plan is registered under a name derived from its hash.  Spark is asked for every
type: the input schema, the types of precomputed columns and of aggregate measures.
"""
from __future__ import annotations

import datetime
import hashlib
import json

from sqlglot import exp

from udtf.compile import compile_pattern

from .analyze import Analysis, analysis_column, analyze, error
from .parse import MatchRecognizeClause, to_spark_sql
from .plan import Plan, atom_name, plan

MAX_THREADS = 100_000


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class Rewrite:
    """The Spark SQL and UDTF for one clause."""

    def __init__(self, clause: MatchRecognizeClause, spark):
        self.clause = clause
        self.spark = spark
        self.ctes = _enclosing_ctes(clause)
        self.input_sql = to_spark_sql(clause.input.copy())
        input_schema = self.schema(f"SELECT * FROM {self.input_sql}")
        self.input_fields = list(input_schema.fields)
        self.analysis: Analysis = analyze(clause, [f.name for f in self.input_fields])
        self.plan: Plan = plan(self.analysis, {f.name: f.dataType.simpleString() for f in self.input_fields})
        self.partition = [analysis_column(self.analysis, c) for c in clause.partition_by]

    def schema(self, select_sql: str):
        return self.spark.sql(self.ctes + select_sql).schema

    # ---- pieces --------------------------------------------------------------------------
    def order_sql(self) -> list:
        keys = []
        for ordered in self.clause.order:
            key = ordered.copy()
            key.set("this", exp.column(analysis_column(self.analysis, _column(ordered.this, self.analysis)),
                                       quoted=True))
            keys.append(to_spark_sql(key))
        return keys

    def within(self):
        """(order-key column SQL, window in its units) or (None, None)."""
        within = self.clause.within
        if within is None:
            return None, None
        first = self.clause.order[0]
        if first.args.get("desc"):
            raise error("WITHIN requires the first ORDER BY key to be ascending", first)
        column = analysis_column(self.analysis, _column(first.this, self.analysis))
        dtype = next(f.dataType for f in self.input_fields if f.name == column).typeName()
        value = self.spark.sql(f"SELECT {to_spark_sql(within.copy())} AS w").collect()[0][0]
        if not isinstance(value, datetime.timedelta):
            raise error("WITHIN must be a day-time interval such as INTERVAL '10' SECOND", within)
        micros = value // datetime.timedelta(microseconds=1)
        if dtype in ("timestamp", "timestamp_ntz"):
            return f"unix_micros(CAST({quote(column)} AS TIMESTAMP))", micros
        if dtype == "date":
            return f"unix_date({quote(column)})", micros / 86_400_000_000
        raise error(f"WITHIN needs a timestamp or date first ORDER BY key; {column} is {dtype}", first)

    def build(self) -> exp.Expression:
        analysis, p = self.analysis, self.plan
        within_sql, within = self.within()
        computed = dict(p.computed)
        order_key = None
        if within_sql is not None:
            order_key = computed.setdefault(within_sql, f"__mr_c{len(computed)}")
        select = ", ".join(["*"] + [f"{sql} AS {quote(name)}" for sql, name in computed.items()])
        computed_sql = f"SELECT {select} FROM {self.input_sql}"
        computed_schema = self.schema(computed_sql)
        types = {f.name: f.dataType for f in computed_schema.fields}

        one_row = self.clause.rows == "ONE"
        carry = self.partition if one_row else [f.name for f in self.input_fields]
        from pyspark.sql.types import LongType, StringType, StructField, StructType

        fields = [StructField(name, types[name]) for name in carry]
        output = [["carry", name] for name in carry]
        aggregate_types = self.aggregate_types(computed_sql)
        for k, atom in enumerate(p.atoms):
            kind = atom.ir[0]
            if kind == "navrow":
                fields.append(StructField(atom_name(k), types[atom.column]))
                output.append(["take", [k, atom.column]])
            else:
                dtype = {"match_number": LongType(), "classifier": StringType()}.get(kind)
                if kind == "agg":
                    dtype = LongType() if atom.ir[1] == "count" else aggregate_types[k]
                fields.append(StructField(atom_name(k), dtype))
                output.append(["value", k])
        return_type = StructType(fields)

        program = compile_pattern(analysis.pattern, analysis.var_names,
                                  untils={analysis.var_names[v] for v, _, _ in p.until},
                                  within=within is not None)
        masks = sorted({m for _, m, _ in p.define + p.until if m is not None})
        derived = {m: p.derived[m] for m in masks if m in p.derived}
        engine_plan = {
            "mode": analysis.mode, "skip": analysis.skip, "skip_vars": list(analysis.skip_vars),
            "skip_name": analysis.skip_name, "skip_at": list(analysis.skip_at), "within": within, "max_threads": MAX_THREADS,
            "lookahead": p.lookahead, "program": program, "vars": analysis.var_names,
            "define": p.define, "until": p.until, "partition": self.partition, "order_key": order_key,
            "values": list(p.values), "masks": masks, "derived": derived, "rows": self.clause.rows,
            "atoms": [[a.ir, a.final] for a in p.atoms], "output": output,
        }
        name = self.register(engine_plan, return_type)

        keys = [quote(c) for c in self.partition]
        distribute = ", ".join(keys) if keys else "1"
        sort = ", ".join(keys + self.order_sql())
        table_arg = f"SELECT * FROM ({computed_sql}) DISTRIBUTE BY {distribute}" + (f" SORT BY {sort}" if sort else "")
        columns = [quote(c) for c in self.partition]
        measures_sql = [f"{to_spark_sql(e)} AS {quote(n)}" for n, e in p.measures]
        if one_row:
            columns += measures_sql
        else:
            order_columns = [c for c in (self._plain_order_columns()) if c not in self.partition]
            rest = [f.name for f in self.input_fields if f.name not in self.partition and f.name not in order_columns]
            columns += [quote(c) for c in order_columns] + measures_sql + [quote(c) for c in rest]
        sql = f"SELECT {', '.join(columns)} FROM {name}(TABLE({table_arg}))"
        from .parse import parse_one

        return parse_one(sql)

    def _plain_order_columns(self) -> list:
        names = []
        for ordered in self.clause.order:
            if isinstance(ordered.this, exp.Column):
                names.append(analysis_column(self.analysis, ordered.this))
        return names

    def aggregate_types(self, computed_sql: str) -> dict:
        typed = [(k, atom.sql) for k, atom in enumerate(self.plan.atoms) if atom.sql is not None]
        if not typed:
            return {}
        select = ", ".join(f"{to_spark_sql(sql)} AS {quote(atom_name(k))}" for k, sql in typed)
        schema = self.schema(f"SELECT {select} FROM ({computed_sql})")
        return {k: schema[atom_name(k)].dataType for k, _ in typed}

    def register(self, engine_plan: dict, return_type) -> str:
        from udtf.arrow import make_udtf

        digest = hashlib.sha1((json.dumps(engine_plan, sort_keys=True) + return_type.json()).encode()).hexdigest()
        name = f"sparkcep_mr_{digest[:16]}"
        if not self.spark.catalog.functionExists(name):  # the name is the plan's hash
            self.spark.udtf.register(name, make_udtf(engine_plan, return_type))
        return name


def _column(node, analysis: Analysis) -> exp.Column:
    if not isinstance(node, exp.Column) or node.table:
        raise error("ORDER BY: only column names of the input are supported", node)
    return node


def _enclosing_ctes(node) -> str:
    """``WITH ...`` prefix of the CTEs visible at ``node`` (so its input can be analyzed alone).

    Visible are, for each enclosing ``WITH``: every CTE when ``node`` is in the query body, only
    the CTEs before its own when ``node`` is inside one of them (Spark's WITH is not recursive;
    the CTE holding ``node`` must never be included: it still contains the clause).  Outer
    scopes come first."""
    scopes = []
    while node.parent is not None:
        parent = node.parent
        if isinstance(parent, exp.With):
            own = next(k for k, cte in enumerate(parent.expressions) if cte is node)
            scopes.append(parent.expressions[:own])
        else:
            with_ = parent.args.get("with_") or parent.args.get("with")
            if isinstance(with_, exp.With) and with_ is not node:
                scopes.append(with_.expressions)
        node = parent
    ctes = [to_spark_sql(cte) for scope in reversed(scopes) for cte in scope]
    return ("WITH " + ", ".join(ctes) + " ") if ctes else ""
