"""The chunked plan: a clause without PARTITION BY whose matches are bounded, its one partition
cut into chunks matched in parallel, with the serial plan's answer (issue 28 item 3;
``udtf.chunks``, ``udtf.match.seams``; docs/architecture.md, "Chunks").

In place of the serial UDTF call, with S = spark.sparkcep.chunkRows rows a chunk::

    (WITH sorted AS (SELECT *, monotonically_increasing_id() AS mid          -- ORDER BY's range
                     FROM (SELECT <shipped> FROM (<computed>) ORDER BY <order>)),  -- partitions
          bases AS (<each Spark partition's first row number: the counts before it>),
          numbered AS (SELECT sorted.*, base + <mid's index in its partition> AS rn FROM sorted JOIN bases),
          out AS (SELECT * FROM <chunk udtf>(TABLE(SELECT <shipped>, rn, chunk FROM numbered
                    LATERAL VIEW explode(<the chunks reading row rn>) AS chunk
                    DISTRIBUTE BY chunk SORT BY rn + chunk x (behind + ahead)))),
          keep AS (SELECT kind, explode(sequence(at, to)) AS at, number
                   FROM <stitch udtf>(TABLE(SELECT <facts> FROM out WHERE kind < 2 DISTRIBUTE BY 1)))
     SELECT /*+ BROADCAST(keep) */ <the serial UDTF's columns, MATCH_NUMBER from keep>
     FROM out JOIN keep ON (kind, at))

Row numbers come from the range-partitioned sort of ORDER BY, numbered within each Spark
partition (a ``row_number()`` over the whole partition would run in one task); the bases are
a self-join of the partitions' counts whose two sides read one aggregation (a side reading
only the partition number was a second pass over the rows), and the join with them broadcasts
the bases (without the hint Spark broadcast the sorted rows: 2M of them took 30 s).  Chunk c
gets the rows rn of c x S - behind to (c + 1) x S - 1 + ahead (``Chunking``), sorted on one
bigint that orders them by chunk, then rn (Spark's radix sort; on the pair (chunk, rn) it
compared whole rows: 1.5 s of executor time for 1M rows).  Both readers of the
chunk UDTF's output read one exchange of it: Spark keeps a CTE over a nondeterministic call
(the UDTF) whole and materializes it with a round-robin repartition, which adaptive execution
reuses, so the UDTF runs once (a DISTRIBUTE BY of its own was a second shuffle); the final
join broadcasts the stitch's rows (one a match), so that ``out`` is not shuffled again, except
WITH UNMATCHED ROWS (up to a row per input row).  The serial plan stays where the bound cannot
be shown (``chunking``).
"""
from __future__ import annotations

from udtf.chunks import EXTRA, ROW_MATCH, STITCHED, column
from udtf.expr import MatchNumber, lookback
from udtf.pattern import Anchor, max_rows, walk
from udtf.plan import Chunking, EnginePlan, OutputKind, RowsMode, Semantics

from .analyze import Analysis
from .catalog import Field

_FIELDS = {"bigint": Field("", "bigint", '"long"'), "int": Field("", "int", '"integer"'),
           "string": Field("", "string", '"string"')}
_SPARK = {"int64": "bigint", "int32": "int", "string": "string"}


def chunking(analysis: Analysis, plan: EnginePlan, rows: int, prefix: str, streaming: bool) -> Chunking | None:
    """How the clause's partition is cut into chunks of ``rows`` attempt rows, None for the
    serial plan: ``rows`` 0, a stream, PARTITION BY, no ORDER BY, a pattern whose matches are
    unbounded in rows or end at the partition's end (``$``), MATCH_NUMBER() in DEFINE or inside
    a measure's expression, FlinkCEP semantics, a window, WITH TIMEOUT ROWS."""
    longest = max_rows(analysis.pattern)
    if rows <= 0 or streaming or plan.partition or not analysis.clause.order or longest is None or \
            plan.semantics is not Semantics.STANDARD or plan.frame is not None or plan.timeouts or \
            analysis.late is not None:
        return None
    if any(isinstance(node, Anchor) and node.kind == "$" for node in walk(analysis.pattern)):
        return None
    if any(_mentions(c.expr, MatchNumber) for c in (*plan.define, *plan.until)) or \
            any(_mentions(a.expr, MatchNumber) and not isinstance(a.expr, MatchNumber) for a in plan.atoms):
        return None
    lags = [lag for mask in plan.derived for c in mask.comparisons for _, lag in (c.left, c.right)]
    behind = max([lookback(e) for e in (*(c.expr for c in (*plan.define, *plan.until)),
                                         *(a.expr for a in plan.atoms))] + lags + [0])
    return Chunking(rows, max(longest, 1), behind, max(longest, 1) + plan.lookahead, prefix)


def _mentions(expr, kind) -> bool:
    """Does the record ``expr`` hold a ``kind`` at any depth?"""
    if isinstance(expr, kind):
        return True
    return isinstance(expr, tuple) and any(_mentions(e, kind) for e in expr)


def extra_fields(prefix: str) -> tuple:
    """The chunk UDTF's columns after the serial UDTF's (``udtf.chunks.EXTRA``)."""
    return tuple(_FIELDS[_SPARK[str(t)]]._replace(name=column(prefix, what)) for what, t in EXTRA)


def stitch_fields(prefix: str) -> tuple:
    """The stitch UDTF's columns (``udtf.chunks.STITCHED``)."""
    return tuple(_FIELDS[_SPARK[str(t)]]._replace(name=column(prefix, what)) for what, t in STITCHED)


def relation(chunk: str, stitch: str, plan: EnginePlan, output: tuple, shipped: list, order: list,
             computed: str, quote) -> str:
    """The chunked plan's relation with the serial UDTF call's columns (``output``: its
    ``Field``s): ``chunk`` and ``stitch`` name the two UDTFs; ``order``: the ORDER BY keys as
    Spark SQL; ``quote``: an identifier's quoting."""
    c = plan.chunk
    name = lambda what: quote(column(c.prefix, what))
    mid, rn, part, count, base = name("mid"), name("rn"), name("part"), name("count"), name("base")
    sorted_, counts, bases, numbered, out, keep = (name(w) for w in ("sorted", "counts", "bases", "numbered", "out",
                                                                      "keep"))
    ids, kind, at, to, number = name("chunk"), name("kind"), name("at"), name("to"), name("number")
    columns = ", ".join(map(quote, shipped)) or "1 AS " + name("none")
    shipped_names = ", ".join([*map(quote, shipped), rn]) if shipped else f"{name('none')}, {rn}"
    rows = c.rows
    first = f"greatest(0, ({rn} - {c.ahead} + {rows}) div {rows} - 1)"  # the chunks whose rows hold rn
    last = f"({rn} + {c.behind}) div {rows}"
    facts = ", ".join(name(w) for w in ("chunk", "run", "kind", "at", "to", "next", "error"))
    numbers = {k for k, o in enumerate(plan.output)
               if o.kind is OutputKind.VALUE and isinstance(plan.atoms[o.atom].expr, MatchNumber)}
    select = ", ".join(f"{keep}.{number} AS {quote(f.name)}" if k in numbers else f"{out}.{quote(f.name)}"
                       for k, f in enumerate(output))
    hint = "" if plan.rows is RowsMode.ALL_WITH_UNMATCHED else f"/*+ BROADCAST({keep}) */ "
    return (
        f"(WITH {sorted_} AS (SELECT *, monotonically_increasing_id() AS {mid} FROM "
        f"(SELECT {columns} FROM ({computed}) ORDER BY {', '.join(order)})), "
        f"{counts} AS (SELECT shiftright({mid}, 33) AS {part}, count(*) AS {count} FROM {sorted_} GROUP BY 1), "
        f"{bases} AS (SELECT a.{part}, sum(b.{count}) - a.{count} AS {base} FROM {counts} a "
        f"JOIN {counts} b ON b.{part} <= a.{part} GROUP BY a.{part}, a.{count}), "
        f"{numbered} AS (SELECT /*+ BROADCAST({bases}) */ {sorted_}.*, {base} + ({mid} & 8589934591) AS {rn} "
        f"FROM {sorted_} "
        f"JOIN {bases} ON shiftright({mid}, 33) = {part}), "
        f"{out} AS (SELECT * FROM {chunk}(TABLE(SELECT {shipped_names}, {ids} FROM (SELECT *, "
        f"explode(sequence({first}, {last})) AS {ids} FROM {numbered}) "
        f"DISTRIBUTE BY {ids} SORT BY {rn} + {ids} * {c.behind + c.ahead}))), "
        f"{keep} AS (SELECT {kind}, explode(sequence({at}, {to})) AS {at}, {number} FROM "
        f"{stitch}(TABLE(SELECT {facts} FROM {out} WHERE {kind} < {ROW_MATCH} DISTRIBUTE BY 1))) "
        f"SELECT {hint}{select} FROM {out} JOIN {keep} ON {out}.{kind} = {keep}.{kind} AND {out}.{at} = {keep}.{at})")
