"""Incremental Delta -> Delta MATCH_RECOGNIZE: process appended rows without re-reading
all history, and without losing or duplicating matches that straddle a run's end.

Usage::

    from sql_examples.incremental import IncrementalJob, run_incremental
    job = IncrementalJob(sql=open("sql_examples/web_funnel.sql").read(), source="clicks_feed",
                         target="funnel_matches", start_col="funnel_start", end_col="funnel_end")
    run_incremental(spark, job)      # first call: full run; later calls: only what changed

The query is an ordinary sparkcep query (e.g. ``web_funnel.sql``) with one
MATCH_RECOGNIZE whose input is a plain table; the driver swaps that table for ``source``
restricted to the rows that must be (re)processed.

Requirements (checked where possible)
-------------------------------------
* ``source`` is an append-only Delta table with the change data feed enabled
  (``delta.enableChangeDataFeed = true``): the rows added since the last run are read
  with ``table_changes`` from the files those commits added, not from all history.
* ONE ROW PER MATCH, AFTER MATCH SKIP PAST LAST ROW, standard semantics, no MATCH_NUMBER().
* A ``WITHIN`` window W, and the first ORDER BY key is an ascending timestamp column
  ``ts`` that is unique within a partition (ties make the resume point ambiguous).
* The output has the PARTITION BY columns (plain columns) and two measures: ``start_col``
  = ``ts`` of the match's first row and ``end_col`` = ``ts`` of its last row.
* DEFINE does not navigate to rows before the match start (PREV of the first row) and
  does not look ahead with NEXT past the match's rows; otherwise the rows at the resume
  point would see different neighbours than in a full run.

Why it is exact
---------------
Per partition let m = the smallest ``ts`` among the rows appended since the last run
(late rows included) and lo = m - W.  With WITHIN W a match attempt starting at a row s
only ever reads rows with ts <= s.ts + W, so every attempt with s.ts < lo reads only rows
that were already there: its outcome (a match, or none) is final.  Under SKIP PAST LAST
ROW the attempts before lo therefore happen exactly as in the previous run, the matches
that start before lo are final, and the full run's next attempt starts at the first row
x with x.ts >= lo that lies after the end e of the last final match.  Running the query
on the partition's rows from x on reproduces the full run from x on.  So, per partition
with new rows:

    input    = rows with ts >= lo and ts > e         (e = NULL: no final match)
    replaced = target rows with match start >= lo and > e (the matches of the previous run
               that were still open, e.g. found at the old end of the data)

and partitions without new rows are untouched.  The new matches and the replaced ones
are combined in one Delta MERGE keyed by (partition columns, start_col): updated when the
key is found again, inserted when new, deleted when a replaced match is not found again.
The last processed source version is kept in a small state table and written after the
MERGE; re-running an increment whose state write was lost recomputes the same MERGE, so
the job is idempotent.  The input scan and the MERGE also get a literal lower bound (the
smallest lo over all partitions), so Delta's file statistics skip the files that hold only
older rows (appended data is naturally clustered by time).  The previous matches of the
partitions with new rows are read to find e (the match table is small next to the events).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta

from sqlglot import exp

INPUT_VIEW = "__sparkcep_incremental_input"


class IncrementalError(ValueError):
    """The query or the source does not meet the incremental driver's requirements."""


@dataclass
class IncrementalJob:
    sql: str
    source: str
    target: str
    start_col: str
    end_col: str
    state: str | None = None  # default: f"{target}__state"
    target_location: str | None = None  # external Delta folders (None: managed tables)
    state_location: str | None = None

    @property
    def state_table(self) -> str:
        return self.state or f"{self.target}__state"


@dataclass
class QueryShape:
    """What the driver needs to know about the query."""
    template: str  # the query with its input table replaced by INPUT_VIEW
    partition: list = field(default_factory=list)
    order_key: str = ""
    within: timedelta = timedelta(0)


def analyze_query(spark, sql: str) -> QueryShape:
    from sql_ext.compiler.parse import MatchNumberCall, find_match_recognize, parse_one, to_spark_sql

    tree = parse_one(sql.strip().rstrip(";"))
    clauses = find_match_recognize(tree)
    if len(clauses) != 1:
        raise IncrementalError(f"expected exactly one MATCH_RECOGNIZE, found {len(clauses)}")
    clause = clauses[0]
    if clause.rows != "ONE":
        raise IncrementalError("incremental runs need ONE ROW PER MATCH")
    if clause.skip_kind != "PAST LAST ROW":
        raise IncrementalError("incremental runs need AFTER MATCH SKIP PAST LAST ROW")
    if clause.semantics != "STANDARD":
        raise IncrementalError("incremental runs need standard semantics")
    if any(m.find(MatchNumberCall) for m in clause.measures):
        raise IncrementalError("MATCH_NUMBER() cannot be computed incrementally")
    if clause.within is None:
        raise IncrementalError("incremental runs need a WITHIN window (it bounds what a new row can change)")
    partition = []
    for key in clause.partition_by:
        if not isinstance(key, exp.Column):
            raise IncrementalError(f"PARTITION BY must list plain columns, found {key.sql()}")
        partition.append(key.name)
    order = clause.order
    if not order or not isinstance(order[0].this, exp.Column) or order[0].args.get("desc"):
        raise IncrementalError("the first ORDER BY key must be a plain column, ascending")
    table = clause.input
    if not isinstance(table, exp.Table):
        raise IncrementalError("the MATCH_RECOGNIZE input must be a plain table")
    within = _interval(clause.within)
    if within is None:  # not a simple literal: let Spark evaluate it
        within = spark.sql(f"SELECT {clause.within.sql(dialect='spark')} AS w").first()["w"]
    if not isinstance(within, timedelta):
        raise IncrementalError("WITHIN must be a day-time interval")
    table.replace(exp.Table(this=exp.to_identifier(INPUT_VIEW), alias=table.args.get("alias")))
    return QueryShape(to_spark_sql(tree), partition, order[0].this.name, within)


_UNITS = {"SECOND": 1, "MINUTE": 60, "HOUR": 3600, "DAY": 86400}


def _interval(node) -> timedelta | None:
    """``INTERVAL '30' MINUTE`` (and sums of such) as a timedelta; None for other forms."""
    if isinstance(node, exp.Add):
        left, right = _interval(node.this), _interval(node.expression)
        return None if left is None or right is None else left + right
    if isinstance(node, exp.Interval) and isinstance(node.this, exp.Literal):
        unit = (node.unit.name if node.unit is not None else "").upper().rstrip("S")
        try:
            amount = float(node.this.name)
        except ValueError:
            return None
        return timedelta(seconds=amount * _UNITS[unit]) if unit in _UNITS else None
    return None


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _version(spark, table: str) -> int:
    return spark.sql(f"DESCRIBE HISTORY {table} LIMIT 1").first()["version"]


def _table_exists(spark, table: str) -> bool:
    return spark.catalog.tableExists(table)


def _write(df, table: str, location: str | None):
    from .data import save_delta

    save_delta(df, table, location)


def _last_version(spark, job: IncrementalJob):
    if not _table_exists(spark, job.state_table) or not _table_exists(spark, job.target):
        return None
    row = spark.sql(f"SELECT version FROM {job.state_table} "
                    f"WHERE source = '{job.source}' AND target = '{job.target}'").first()
    return None if row is None else row["version"]


def _save_state(spark, job: IncrementalJob, version: int):
    if _table_exists(spark, job.state_table):
        spark.sql(f"INSERT OVERWRITE {job.state_table} "
                  f"VALUES ('{job.source}', '{job.target}', CAST({version} AS BIGINT))")
        return
    df = spark.createDataFrame([(job.source, job.target, version)],
                               "source STRING, target STRING, version BIGINT")
    _write(df, job.state_table, job.state_location)


def run_incremental(spark, job: IncrementalJob) -> dict:
    """One incremental step; returns statistics (mode, versions, rows read, matches)."""
    import sql_ext

    sql_ext.enable(spark)
    shape = analyze_query(spark, job.sql)
    started = time.time()
    current = _version(spark, job.source)
    last = _last_version(spark, job)
    stats = {"source_version": current, "previous_version": last}
    if last is None:  # first run: everything
        spark.sql(f"SELECT * FROM {job.source} VERSION AS OF {current}").createOrReplaceTempView(INPUT_VIEW)
        result = spark.sql(shape.template)
        _check_columns(result.columns, job, shape)
        _write(result, job.target, job.target_location)
        stats.update(mode="full", rows_read=spark.table(INPUT_VIEW).count(),
                     matches_recomputed=spark.table(job.target).count(), matches_deleted=0)
    elif last == current:
        stats.update(mode="up to date", rows_read=0, matches_recomputed=0, matches_deleted=0)
    else:
        stats.update(mode="incremental", **_increment(spark, job, shape, last, current))
    _save_state(spark, job, current)
    spark.catalog.dropTempView(INPUT_VIEW)
    stats["seconds"] = round(time.time() - started, 1)
    return stats


def _check_columns(columns, job, shape):
    missing = [c for c in [*shape.partition, job.start_col, job.end_col] if c not in columns]
    if missing:
        raise IncrementalError(f"the query's output lacks the column(s) {', '.join(missing)} "
                               "(partition columns, match start and end)")


def _increment(spark, job: IncrementalJob, shape: QueryShape, last: int, current: int) -> dict:
    keys = shape.partition
    ts = _q(shape.order_key)
    seconds = shape.within.total_seconds()
    spark.sql(f"SELECT * FROM table_changes('{job.source}', {last + 1}, {current})") \
        .createOrReplaceTempView("__sparkcep_changes")
    key_cols = ", ".join(_q(k) for k in keys)
    select_keys = f"{key_cols}, " if keys else ""
    group = f"GROUP BY {key_cols}" if keys else ""
    # Per partition with new rows: lo = min new ts - W; e = end of the last final match.
    on_keys = " AND ".join(f"t.{_q(k)} <=> n.{_q(k)}" for k in keys) or "TRUE"
    bounds = spark.sql(f"""
        SELECT n.*, MAX(CASE WHEN t.{_q(job.start_col)} < n.lo THEN t.{_q(job.end_col)} END) AS e
        FROM (SELECT {select_keys}MIN({ts}) - make_dt_interval(0, 0, 0, {seconds}) AS lo,
                     MAX(CASE WHEN _change_type = 'insert' THEN 0 ELSE 1 END) AS not_insert
              FROM __sparkcep_changes {group}) n
        LEFT JOIN {job.target} t ON {on_keys}
        GROUP BY ALL
    """).cache()
    bounds.createOrReplaceTempView("__sparkcep_bounds")
    floor, not_append_only, partitions = spark.sql(
        "SELECT date_format(MIN(lo), 'yyyy-MM-dd HH:mm:ss.SSSSSS'), MAX(not_insert), COUNT(*) "
        "FROM __sparkcep_bounds").first()
    try:
        if not_append_only:
            raise IncrementalError(f"{job.source} is not append-only: it has updates or deletes "
                                   f"since version {last}; run a full refresh (drop {job.state_table})")
        if floor is None:
            return {"rows_read": 0, "matches_recomputed": 0, "matches_deleted": 0, "partitions": 0}
        return {**_merge(spark, job, shape, current, floor), "partitions": partitions}
    finally:
        bounds.unpersist()
        for view in ("__sparkcep_bounds", "__sparkcep_changes"):
            spark.catalog.dropTempView(view)


def _merge(spark, job: IncrementalJob, shape: QueryShape, current: int, floor: str) -> dict:
    keys = shape.partition
    ts = _q(shape.order_key)
    on_source = " AND ".join(f"s.{_q(k)} <=> b.{_q(k)}" for k in keys) or "TRUE"
    # The literal floor lets Delta skip the files whose max ts is older (data skipping).
    spark.sql(f"""
        SELECT s.* FROM {job.source} VERSION AS OF {current} s
        JOIN __sparkcep_bounds b ON {on_source}
        WHERE s.{ts} >= TIMESTAMP '{floor}'
          AND s.{ts} >= b.lo AND (b.e IS NULL OR s.{ts} > b.e)
    """).createOrReplaceTempView(INPUT_VIEW)
    rows_read = spark.table(INPUT_VIEW).count()
    new = spark.sql(shape.template)
    _check_columns(new.columns, job, shape)
    new = new.cache()
    new.createOrReplaceTempView("__sparkcep_new")
    columns = new.columns
    on_target = " AND ".join(f"t.{_q(k)} <=> b.{_q(k)}" for k in keys) or "TRUE"
    on_match = " AND ".join(f"t.{_q(k)} <=> s.{_q(k)}" for k in [*keys, job.start_col])
    cols = ", ".join(_q(c) for c in columns)
    try:
        # New matches, plus the previous run's open matches that are not found again (delete).
        spark.sql(f"""
            SELECT {cols}, FALSE AS __delete FROM __sparkcep_new
            UNION ALL
            SELECT {", ".join(f"t.{_q(c)}" for c in columns)}, TRUE AS __delete
            FROM {job.target} t JOIN __sparkcep_bounds b ON {on_target}
            WHERE t.{_q(job.start_col)} >= b.lo AND (b.e IS NULL OR t.{_q(job.start_col)} > b.e)
              AND NOT EXISTS (SELECT 1 FROM __sparkcep_new s WHERE {on_match})
        """).createOrReplaceTempView("__sparkcep_merge")
        # Every source row starts at or after the floor: the extra target-only predicate lets
        # Delta prune the target files holding only older matches.
        metrics = spark.sql(f"""
            MERGE INTO {job.target} t USING __sparkcep_merge s
            ON {on_match} AND t.{_q(job.start_col)} >= TIMESTAMP '{floor}'
            WHEN MATCHED AND s.__delete THEN DELETE
            WHEN MATCHED THEN UPDATE SET {", ".join(f"t.{_q(c)} = s.{_q(c)}" for c in columns)}
            WHEN NOT MATCHED AND NOT s.__delete THEN INSERT ({cols})
              VALUES ({", ".join(f"s.{_q(c)}" for c in columns)})
        """).first().asDict()
    finally:
        new.unpersist()
        for view in ("__sparkcep_new", "__sparkcep_merge"):
            spark.catalog.dropTempView(view)
    return {"rows_read": rows_read,
            "matches_recomputed": metrics.get("num_updated_rows", 0) + metrics.get("num_inserted_rows", 0),
            "matches_deleted": metrics.get("num_deleted_rows", 0)}


# --------------------------------------------------------------------------------------
# The demo: web_funnel.sql over a click feed loaded in two steps
# --------------------------------------------------------------------------------------
FUNNEL_SQL = "web_funnel.sql"


def create_feed(spark, table: str, schema: str, location: str | None = None):
    """An empty append-only Delta table with the change data feed enabled."""
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    where = f" LOCATION '{location}'" if location else ""
    spark.sql(f"CREATE TABLE {table} ({schema}) USING DELTA{where} "
              "TBLPROPERTIES (delta.enableChangeDataFeed = true)")


def demo_two_steps(spark, root, clicks_args: dict | None = None, cut_hours: float = 36) -> dict:
    """Load the click feed up to ``cut_hours`` of arrival time, run the funnel incrementally,
    append the rest (which holds late rows: event time before the cut), run again, and
    compare with a full run over the whole feed.  ``root``: folder for the Delta tables
    (emptied first: the demo starts its feed from scratch)."""
    import shutil
    from pathlib import Path

    from . import data

    root = Path(root)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    schema, rows = data.clicks(**(clicks_args or {}))
    cut = data.T0 + timedelta(hours=cut_hours)
    first = [r for r in rows if r[4] < cut]
    second = [r for r in rows if r[4] >= cut]
    late = sum(1 for r in second if r[1] < cut)
    feed, target = "clicks_feed", "funnel_incremental"
    create_feed(spark, feed, schema, str(root / feed))
    for table in (target, f"{target}__state"):
        spark.sql(f"DROP TABLE IF EXISTS {table}")
    sql = (Path(__file__).resolve().parent / FUNNEL_SQL).read_text()
    job = IncrementalJob(sql=sql, source=feed, target=target, start_col="funnel_start",
                         end_col="funnel_end", target_location=str(root / target),
                         state_location=str(root / f"{target}__state"))
    steps = []
    spark.createDataFrame(first, schema).write.format("delta").mode("append").saveAsTable(feed)
    stats = run_incremental(spark, job)
    steps.append(f"step 1: loaded {len(first)} rows; {_describe(stats)}")
    spark.createDataFrame(second, schema).write.format("delta").mode("append").saveAsTable(feed)
    stats = run_incremental(spark, job)
    steps.append(f"step 2: appended {len(second)} rows ({late} late); {_describe(stats)}")
    full = spark.sql(analyze_query(spark, sql).template.replace(INPUT_VIEW, feed)).cache()
    incremental = spark.table(target)
    equal = incremental.exceptAll(full).isEmpty() and full.exceptAll(incremental).isEmpty()
    report = {"steps": steps, "equal": equal, "incremental_rows": incremental.count(),
              "full_rows": full.count(), "stats": stats}
    full.unpersist()
    return report


def _describe(stats: dict) -> str:
    return (f"{stats['mode']} run read {stats['rows_read']} rows, recomputed "
            f"{stats['matches_recomputed']} matches, deleted {stats['matches_deleted']} "
            f"({stats['seconds']} s)")
