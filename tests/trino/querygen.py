"""Random standard MATCH_RECOGNIZE queries, as abstract queries rendered for Spark and Trino.

A :class:`Query` is a plain tree (dataclasses); :meth:`Query.render` writes it either as the
Spark SQL that sparkcep accepts (``dialect="spark"``) or as Trino SQL (``dialect="trino"``).
The two texts differ only where the dialects do: type names in CAST (STRING/INT vs
varchar/integer) and the table name (a temp view vs ``memory.default.<name>``).  Everything
else stays in a common subset on purpose: unquoted lower-case identifiers that are keywords
in neither engine, single-quoted string literals, explicit NULLS FIRST/LAST in ORDER BY (the
engines' defaults differ), no ``/`` (integer division differs), no GREATEST/LEAST (NULL
handling differs).

:class:`Generator` draws tables and queries from a seeded ``random.Random`` (the corpus is
reproducible from the seed).  Besides COUNT/SUM/AVG/MIN/MAX, navigation and the pattern
operators, every query may draw the wider surface of docs/sql.md (what Trino has too): the
other aggregates (ARRAY_AGG, MAX_BY/MIN_BY, COUNT_IF, BOOL_AND/BOOL_OR/EVERY, the
STDDEV/VARIANCE family, ANY_VALUE/ARBITRARY, APPROX_DISTINCT), aggregates over CLASSIFIER() and
MATCH_NUMBER() and combined in one expression, CLASSIFIER() in navigation, comparisons and
CASE, MATCH_NUMBER() in DEFINE, navigation nested both ways (the FIRST(PREV(..)) way both
engines refuse), RUNNING/FINAL inside nested navigation, quantified anchors and empty loops.
``extended=True`` draws that wider surface about twice as often (campaigns).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import random
import re
from dataclasses import dataclass, field
from decimal import Decimal

# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------

# column -> (Spark type, Trino type)
COLUMNS: dict[str, tuple[str, str]] = {
    "p": ("STRING", "varchar"),
    "id": ("INT", "integer"),
    "x": ("INT", "integer"),
    "k": ("BIGINT", "bigint"),
    "y": ("DOUBLE", "double"),
    "d": ("DECIMAL(5,2)", "decimal(5,2)"),
    "s": ("STRING", "varchar"),
    "dt": ("DATE", "date"),
    "ts": ("TIMESTAMP", "timestamp(6)"),
    "b": ("BOOLEAN", "boolean"),
}
COLUMN_NAMES = list(COLUMNS)
NUMERIC = ["x", "k", "y", "d"]
# dyadic doubles: sums and averages of a dozen of them are exact, so doubles compare exactly
Y_VALUES = [-1.5, 0.0, 0.25, 1.0, 2.5, 4.0, 0.75]
D_VALUES = [Decimal(v) for v in ("-1.25", "0.00", "0.50", "1.75", "3.10", "0.05")]
S_VALUES = ["a", "b", "c"]
DAY0 = dt.date(2024, 1, 1)
TS0 = dt.datetime(2024, 1, 1, 8, 0, 0)


def spark_type(trino_type: str) -> str:
    for sp, tr in COLUMNS.values():
        if tr == trino_type:
            return sp
    mapping = {"varchar": "STRING", "integer": "INT", "double": "DOUBLE", "bigint": "BIGINT",
               "boolean": "BOOLEAN", "date": "DATE", "timestamp(6)": "TIMESTAMP"}
    if trino_type.startswith("decimal"):
        return trino_type.upper()
    return mapping[trino_type]


@dataclass
class Table:
    name: str
    rows: list[tuple]                      # in COLUMN_NAMES order
    columns: tuple[str, ...] = tuple(COLUMN_NAMES)

    def trino_columns(self) -> list[tuple[str, str]]:
        return [(c, COLUMNS[c][1]) for c in self.columns]

    def spark_query(self) -> str:
        """The rows as a Spark query over an inline VALUES (a LocalRelation: no Python)."""
        cols = ", ".join(self.columns)
        body = self.rows or [tuple(None for _ in self.columns)]
        values = ", ".join("(" + ", ".join(spark_literal(v, COLUMNS[c][0]) for v, c in zip(r, self.columns))
                           + ")" for r in body)
        where = "" if self.rows else " WHERE false"
        return f"SELECT * FROM VALUES {values} AS t({cols}){where}"

    def describe(self) -> str:
        head = " | ".join(self.columns)
        lines = [head] + [" | ".join("NULL" if v is None else str(v) for v in r) for r in self.rows]
        return "\n".join(lines)


def spark_literal(value, spark_t: str) -> str:
    if value is None:
        return f"CAST(NULL AS {spark_t})"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "CAST('" + value.replace("'", "''") + f"' AS {spark_t})"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ', timespec='microseconds')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, float):
        return f"CAST('{value!r}' AS {spark_t})"
    return f"CAST({value} AS {spark_t})"


def random_table(rng: random.Random, name: str, *, max_rows: int = 12, max_parts: int = 3) -> Table:
    rows = []
    parts = rng.randint(1, max_parts)
    keys = ["p1", "p2", "p3"][:parts]
    if parts > 1 and rng.random() < 0.1:
        keys[-1] = None                    # a NULL partition key is a partition of its own
    next_id = 1
    for key in keys:
        n = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 6, 8, 10]) if rng.random() < 0.9 else rng.randint(0, 2)
        null_rate = rng.choice([0.0, 0.0, 0.1, 0.25])
        # x: a short random walk (so PREV comparisons are mixed) or a small domain
        walk = rng.random() < 0.5
        xv = rng.randint(0, 3)
        for i in range(n):
            if walk:
                xv += rng.choice([-1, -1, 0, 1, 1, 2])
            else:
                xv = rng.randint(-1, 4)
            nul = lambda: rng.random() < null_rate  # noqa: E731
            rows.append((
                key,
                next_id,
                None if nul() else xv,
                None if nul() else rng.randint(0, 3) * 10,
                None if nul() else rng.choice(Y_VALUES),
                None if nul() else rng.choice(D_VALUES),
                None if nul() else rng.choice(S_VALUES),
                None if nul() else DAY0 + dt.timedelta(days=rng.randint(0, 5)),
                None if nul() else TS0 + dt.timedelta(minutes=rng.randint(0, 50), microseconds=rng.choice([0, 1, 123456])),
                None if nul() else rng.random() < 0.5,
            ))
            next_id += 1
    rng.shuffle(rows)                      # input order must not matter
    return Table(name, rows)


# ---------------------------------------------------------------------------------------------
# Expressions (rendered identically in both dialects except CAST types)
# ---------------------------------------------------------------------------------------------

class Expr:
    def render(self, dialect: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def children(self) -> list["Expr"]:
        return []


@dataclass
class Raw(Expr):
    """Literal text, the same in both dialects (a literal, a column, ``A.x``, ``*``, ``A.*``)."""
    text: str

    def render(self, dialect):
        return self.text


@dataclass
class Cast(Expr):
    arg: Expr
    trino_type: str

    def render(self, dialect):
        t = self.trino_type if dialect == "trino" else spark_type(self.trino_type)
        return f"CAST({self.arg.render(dialect)} AS {t})"

    def children(self):
        return [self.arg]


@dataclass
class Func(Expr):
    """``[RUNNING|FINAL] NAME(args)``."""
    name: str
    args: list[Expr]
    semantics: str = ""                    # "", "RUNNING", "FINAL"

    def render(self, dialect):
        prefix = self.semantics + " " if self.semantics else ""
        return f"{prefix}{self.name}(" + ", ".join(a.render(dialect) for a in self.args) + ")"

    def children(self):
        return list(self.args)


@dataclass
class Op(Expr):
    """Infix ``left op right`` (parenthesized)."""
    op: str
    left: Expr
    right: Expr

    def render(self, dialect):
        return f"({self.left.render(dialect)} {self.op} {self.right.render(dialect)})"

    def children(self):
        return [self.left, self.right]


@dataclass
class Unary(Expr):
    """``NOT e`` or ``e IS NULL`` / ``e IS NOT NULL`` (``template`` has one ``{}``)."""
    template: str
    arg: Expr

    def render(self, dialect):
        return "(" + self.template.format(self.arg.render(dialect)) + ")"

    def children(self):
        return [self.arg]


@dataclass
class Case(Expr):
    cond: Expr
    then: Expr
    other: Expr

    def render(self, dialect):
        return (f"CASE WHEN {self.cond.render(dialect)} THEN {self.then.render(dialect)} "
                f"ELSE {self.other.render(dialect)} END")

    def children(self):
        return [self.cond, self.then, self.other]


@dataclass
class ArrayAgg(Expr):
    """``[RUNNING|FINAL] ARRAY_AGG(arg)`` with Spark's value over no rows: Spark's array_agg
    (collect_list) gives ``[]`` where Trino's gives NULL (a deliberate difference, known.py
    ``spark-array-agg``), so Trino's rendering is ``coalesce(array_agg(arg), ARRAY[])``.  The
    argument is never NULL (Spark's skips NULL elements, Trino's keeps them)."""
    arg: Expr
    semantics: str = ""

    def render(self, dialect):
        agg = (self.semantics + " " if self.semantics else "") + f"ARRAY_AGG({self.arg.render(dialect)})"
        return agg if dialect == "spark" else f"coalesce({agg}, ARRAY[])"

    def children(self):
        return [self.arg]


def walk(e: Expr):
    yield e
    for c in e.children():
        yield from walk(c)


# ---------------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------------

class Pat:
    def render(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def children(self) -> list["Pat"]:
        return []


@dataclass
class PVar(Pat):
    name: str

    def render(self):
        return self.name


@dataclass
class PAnchor(Pat):
    text: str                              # "^" or "$"

    def render(self):
        return self.text


@dataclass
class PEmpty(Pat):
    def render(self):
        return "()"


@dataclass
class PSeq(Pat):
    items: list[Pat]

    def render(self):
        return " ".join(_atom(i) if isinstance(i, PAlt) else i.render() for i in self.items)

    def children(self):
        return list(self.items)


@dataclass
class PAlt(Pat):
    options: list[Pat]

    def render(self):
        return " | ".join(o.render() for o in self.options)

    def children(self):
        return list(self.options)


@dataclass
class PGroup(Pat):
    inner: Pat

    def render(self):
        return "(" + self.inner.render() + ")"

    def children(self):
        return [self.inner]


@dataclass
class PQuant(Pat):
    inner: Pat
    text: str                              # "*", "+", "?", "{2}", "{1,}", "{,2}", "{1,3}"
    reluctant: bool = False

    def render(self):
        return _atom(self.inner) + self.text + ("?" if self.reluctant else "")

    def children(self):
        return [self.inner]


@dataclass
class PPermute(Pat):
    items: list[Pat]

    def render(self):
        return "PERMUTE(" + ", ".join(i.render() for i in self.items) + ")"

    def children(self):
        return list(self.items)


@dataclass
class PExclude(Pat):
    inner: Pat

    def render(self):
        return "{- " + self.inner.render() + " -}"

    def children(self):
        return [self.inner]


def _atom(p: Pat) -> str:
    if isinstance(p, (PVar, PGroup, PPermute, PExclude, PEmpty, PAnchor)):
        return p.render()
    return "(" + p.render() + ")"


def pat_walk(p: Pat):
    yield p
    for c in p.children():
        yield from pat_walk(c)


def quant_bounds(text: str) -> tuple[int, float]:
    """(min, max) of a quantifier text; max is ``inf`` when unbounded."""
    inf = float("inf")
    if text in ("*", "+", "?"):
        return {"*": (0, inf), "+": (1, inf), "?": (0, 1)}[text]
    body = text.strip("{}")
    if "," not in body:
        return int(body), int(body)
    lo, hi = body.split(",")
    return int(lo or 0), (int(hi) if hi else inf)


def nullable(p: Pat) -> bool:
    """Whether ``p`` can match the empty sequence of rows."""
    if isinstance(p, (PAnchor, PEmpty)):
        return True
    if isinstance(p, PVar):
        return False
    if isinstance(p, (PSeq, PPermute)):
        return all(nullable(i) for i in p.items)
    if isinstance(p, PAlt):
        return any(nullable(o) for o in p.options)
    if isinstance(p, (PGroup, PExclude)):
        return nullable(p.inner)
    if isinstance(p, PQuant):
        return quant_bounds(p.text)[0] == 0 or nullable(p.inner)
    raise TypeError(p)


def pattern_vars(p: Pat) -> list[str]:
    seen = []
    for n in pat_walk(p):
        if isinstance(n, PVar) and n.name not in seen:
            seen.append(n.name)
    return seen


# ---------------------------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------------------------

ROWS_MODES = {
    "one": "ONE ROW PER MATCH",
    "all": "ALL ROWS PER MATCH",
    "all_show": "ALL ROWS PER MATCH SHOW EMPTY MATCHES",
    "all_omit": "ALL ROWS PER MATCH OMIT EMPTY MATCHES",
    "all_unmatched": "ALL ROWS PER MATCH WITH UNMATCHED ROWS",
}


@dataclass
class Query:
    table: str
    pattern: Pat
    partition: bool = True
    order: list[tuple[str, bool, bool]] = field(default_factory=lambda: [("id", False, False)])
    measures: list[tuple[Expr, str]] = field(default_factory=list)
    rows: str = "one"                      # key of ROWS_MODES, or "" (clause omitted: ONE ROW)
    skip: tuple = ("past",)                # ("past",) ("next",) ("first", v) ("last", v) ("to", v)
    subsets: list[tuple[str, list[str]]] = field(default_factory=list)
    defines: list[tuple[str, Expr]] = field(default_factory=list)
    tags: frozenset = frozenset()          # generator notes (e.g. "extended")

    def render(self, dialect: str, table_ref: str | None = None) -> str:
        parts = self.clauses(dialect, [ROWS_MODES[self.rows]] if self.rows else [], [])
        return f"SELECT * FROM {self.source(dialect, table_ref)} MATCH_RECOGNIZE (\n  " + "\n  ".join(parts) + \
            "\n) AS mr"

    def source(self, dialect: str, table_ref: str | None = None) -> str:
        return table_ref or (self.table if dialect == "spark" else f"memory.default.{self.table}")

    def clauses(self, dialect: str, output: list, search: list) -> list:
        """PARTITION BY ... DEFINE, with ``output`` (a rows mode or a frame) after MEASURES and
        ``search`` (INITIAL / SEEK) after AFTER MATCH SKIP."""
        parts = []
        if self.partition:
            parts.append("PARTITION BY p")
        if self.order:
            parts.append("ORDER BY " + ", ".join(
                f"{c} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if nf else 'LAST'}"
                for c, desc, nf in self.order))
        if self.measures:
            parts.append("MEASURES " + ", ".join(f"{e.render(dialect)} AS {n}" for e, n in self.measures))
        parts += output
        skip = {"past": "PAST LAST ROW", "next": "TO NEXT ROW"}.get(self.skip[0])
        if skip is None:
            skip = {"first": "TO FIRST ", "last": "TO LAST ", "to": "TO "}[self.skip[0]] + self.skip[1]
        parts.append("AFTER MATCH SKIP " + skip)
        parts += search
        parts.append("PATTERN (" + self.pattern.render() + ")")
        if self.subsets:
            parts.append("SUBSET " + ", ".join(f"{n} = ({', '.join(m)})" for n, m in self.subsets))
        if self.defines:
            parts.append("DEFINE " + ", ".join(f"{v} AS {e.render(dialect)}" for v, e in self.defines))
        return parts

    def replace(self, **kw) -> "Query":
        return dataclasses.replace(self, **kw)

    # features, for matching known disagreements ------------------------------------------
    def exprs(self):
        for e, _ in self.measures:
            yield from walk(e)
        for _, e in self.defines:
            yield from walk(e)

    def measure_exprs(self):
        for e, _ in self.measures:
            yield from walk(e)

    def define_exprs(self):
        for _, e in self.defines:
            yield from walk(e)

    def funcs(self, where: str = "all") -> set[str]:
        it = {"all": self.exprs, "measures": self.measure_exprs, "define": self.define_exprs}[where]()
        return {e.name.upper() for e in it if isinstance(e, Func)}

    def pattern_nodes(self):
        return list(pat_walk(self.pattern))


@dataclass
class Over(Expr):
    """``fn OVER w``: a measure (``Raw`` name) or a function over the window ``w``.  A Spark
    ARRAY_AGG over an empty frame is ``[]`` where Trino's is NULL (known ``spark-array-agg``):
    Trino's rendering is ``coalesce(ARRAY_AGG(..) OVER w, ARRAY[])``."""
    fn: Expr

    def render(self, dialect):
        if isinstance(self.fn, ArrayAgg):
            call = f"ARRAY_AGG({self.fn.arg.render(dialect)}) OVER w"
            return call if dialect == "spark" else f"coalesce({call}, ARRAY[])"
        return f"{self.fn.render(dialect)} OVER w"

    def children(self):
        return [self.fn]


@dataclass
class WindowQuery(Query):
    """``SELECT id, <calls> FROM t WINDOW w AS (...)``: row pattern recognition in a window
    (R020).  ``calls``: (an ``Over`` expression, its column name); the window's frame is ``ROWS
    BETWEEN CURRENT ROW AND`` ``frame_end`` rows FOLLOWING (None: UNBOUNDED FOLLOWING);
    ``search``: "", "INITIAL" or "SEEK".  ``rows`` is not rendered (one row per input row)."""
    rows: str = ""
    frame_end: int | None = None
    search: str = ""
    calls: list[tuple[Expr, str]] = field(default_factory=list)

    def render(self, dialect: str, table_ref: str | None = None) -> str:
        end = "CURRENT ROW" if self.frame_end == 0 else \
            f"{'UNBOUNDED' if self.frame_end is None else self.frame_end} FOLLOWING"
        parts = self.clauses(dialect, [f"ROWS BETWEEN CURRENT ROW AND {end}"], [self.search] if self.search else [])
        items = ["id"] + [f"{e.render(dialect)} AS {n}" for e, n in self.calls]
        return f"SELECT {', '.join(items)} FROM {self.source(dialect, table_ref)}\nWINDOW w AS (\n  " + \
            "\n  ".join(parts) + "\n)"

    def exprs(self):
        yield from super().exprs()
        for e, _ in self.calls:
            yield from walk(e)


# ---------------------------------------------------------------------------------------------
# The generator
# ---------------------------------------------------------------------------------------------

VARS = ["A", "B", "C", "D"]
QUANTS = ["*", "+", "?", "{2}", "{1,}", "{0,}", "{2,}", "{,2}", "{,1}", "{1,2}", "{0,3}", "{1,3}", "{2,2}"]
BASIC_AGGS = ["COUNT", "SUM", "AVG", "MIN", "MAX"]
# Spark's other aggregates under names Trino has too (ARBITRARY, APPROX_DISTINCT: Trino's names,
# sparkcep's aliases); Trino's GEOMETRIC_MEAN, LISTAGG (WITHIN GROUP is refused in MATCH_RECOGNIZE
# by Trino) and DISTINCT / FILTER (refused by Trino there) are left out
WIDE_AGGS = ["ARRAY_AGG", "MAX_BY", "MIN_BY", "COUNT_IF", "BOOL_AND", "BOOL_OR", "EVERY", "STDDEV",
             "STDDEV_POP", "VARIANCE", "VAR_POP", "ANY_VALUE", "ARBITRARY", "APPROX_DISTINCT"]


class Generator:
    """Seeded generator of (tables, queries).  ``extended`` draws the wider surface more often."""

    def __init__(self, seed: int = 0, *, extended: bool = False):
        self.rng = random.Random(seed)
        self.extended = extended
        self.wide = 2.0 if extended else 1.0   # weight of the wider surface
        self.partitioned = True                # of the query being drawn

    # tables --------------------------------------------------------------------------------
    def tables(self, n: int, prefix: str = "trq") -> list[Table]:
        return [random_table(self.rng, f"{prefix}{i}") for i in range(n)]

    # patterns ------------------------------------------------------------------------------
    def pattern(self, nvars: int) -> Pat:
        names = VARS[:nvars]
        r = self.rng
        used: list[str] = []

        def var() -> Pat:
            # mostly fresh variables in order, sometimes a repeat
            if used and (len(used) == len(names) or r.random() < 0.2):
                name = r.choice(used)
            else:
                name = names[len(used)]
            if name not in used:
                used.append(name)
            return PVar(name)

        def quant(p: Pat) -> Pat:
            # {0} / {0,0}: Trino refuses an upper bound of 0 (a known disagreement): rare
            text = r.choice(QUANTS) if r.random() > 0.002 else r.choice(["{0}", "{0,0}"])
            return PQuant(p, text, r.random() < 0.3)

        def node(depth: int) -> Pat:
            roll = r.random()
            if depth >= 2 or roll < 0.45:
                p = var()
                return quant(p) if r.random() < 0.5 else p
            if roll < 0.65:
                items = [node(depth + 1) for _ in range(r.randint(2, 3))]
                g = PGroup(PSeq(items))
                return quant(g) if r.random() < 0.6 else g
            if roll < 0.8:
                opts = [node(depth + 1) for _ in range(r.randint(2, 3))]
                g = PGroup(PAlt(opts))
                return quant(g) if r.random() < 0.4 else g
            if roll < 0.87:
                # Trino 476 parses a one-element PERMUTE(x) as a variable named PERMUTE followed
                # by the group (x) (a known disagreement): rare
                items = [node(depth + 1) for _ in range(r.randint(2, 3) if r.random() > 0.02 else 1)]
                return PPermute(items)
            if roll < 0.93:
                return PExclude(node(depth + 1))
            if roll < 0.96:
                return quant(PEmpty()) if r.random() < 0.3 else PEmpty()
            anchor = PAnchor(r.choice(["^", "$"]))
            return PQuant(anchor, r.choice(["*", "+", "?", "{1,2}"])) if r.random() < 0.3 else anchor

        length = r.choice([1, 2, 2, 3, 3, 4])
        items = [node(0) for _ in range(length)]
        if r.random() < 0.12:
            items.insert(0, PAnchor("^"))
        if r.random() < 0.12:
            items.append(PAnchor("$"))
        top: Pat = PSeq(items) if len(items) > 1 else items[0]
        if r.random() < 0.12:
            top = PAlt([top, node(1)])
        if r.random() < 0.02:
            top = PEmpty()
        return top

    # expressions ---------------------------------------------------------------------------
    def literal_for(self, col: str) -> Expr:
        r = self.rng
        if col in ("x",):
            return Raw(str(r.randint(-1, 4)))
        if col == "k":
            return Raw(str(r.randint(0, 3) * 10))
        if col == "y":
            return Raw(r.choice(["0.5", "1.0", "2.5", "0", "-1.5"]))
        if col == "d":
            return Raw(r.choice(["0.50", "1.75", "0", "3.1"]))
        if col == "s":
            return Raw("'" + r.choice(S_VALUES) + "'")
        if col == "dt":
            return Raw(f"DATE '{(DAY0 + dt.timedelta(days=r.randint(0, 5))).isoformat()}'")
        if col == "ts":
            return Raw(f"TIMESTAMP '{(TS0 + dt.timedelta(minutes=r.randint(0, 50))).isoformat(sep=' ')}'")
        return Raw(r.choice(["true", "false"]))

    def colref(self, col: str, var: str | None) -> Expr:
        return Raw(f"{var}.{col}" if var else col)

    def nav(self, col: str, var: str | None, kinds=("PREV", "NEXT", "FIRST", "LAST"), sem: str = "") -> Expr:
        r = self.rng
        kind = r.choice(kinds)
        args: list[Expr] = [self.colref(col, var)]
        if r.random() < 0.4:
            args.append(Raw(str(r.choice([0, 1, 1, 2, 3]))))
        e = Func(kind, args, sem if kind in ("FIRST", "LAST") else "")
        if kind in ("PREV", "NEXT") and r.random() < 0.15:
            # nesting: physical navigation over a logical one (PREV(FIRST(A.x), 2)), RUNNING/FINAL
            # on the inner one
            inner = Func(r.choice(["FIRST", "LAST"]), [self.colref(col, var)] +
                         ([Raw(str(r.randint(0, 2)))] if r.random() < 0.3 else []), sem)
            e = Func(kind, [inner] + ([Raw(str(r.randint(0, 2)))] if r.random() < 0.6 else []))
        return e

    def wide_aggregate(self, var: str | None, sem: str = "", define: bool = False) -> Expr:
        """One of WIDE_AGGS, with arguments for which both engines define one answer: ARRAY_AGG
        of a never-NULL value, MAX_BY/MIN_BY by a key unique per row (ties are unspecified),
        ANY_VALUE/ARBITRARY of a value constant in the match, STDDEV/VARIANCE rounded (the engines
        sum in different orders).  Not APPROX_DISTINCT in DEFINE (Trino 476: 'does not support
        copying')."""
        r = self.rng
        fn = r.choice([f for f in WIDE_AGGS if not (define and f == "APPROX_DISTINCT")])
        col = lambda c: self.colref(c, var)  # noqa: E731
        if fn == "ARRAY_AGG":
            return ArrayAgg(r.choice([col("id"), Func("COALESCE", [col("x"), Raw("-9")]),
                                      Func("CLASSIFIER", [Raw(var)] if var else []), Func("MATCH_NUMBER", [])]), sem)
        if fn in ("MAX_BY", "MIN_BY"):
            key = col("id") if r.random() < 0.4 else Op("+", Op("*", col(r.choice(["x", "k"])), Raw("100")), col("id"))
            return Func(fn, [col(r.choice(["x", "s", "id", "dt", "y"])), key], sem)
        if fn in ("COUNT_IF", "BOOL_AND", "BOOL_OR", "EVERY"):
            c = r.choice(["x", "x", "y", "s", "k"])
            arg = Op(r.choice([">", "<=", "=", "<>"]), col(c), self.literal_for(c)) if r.random() < 0.8 \
                else Op("=", Func("CLASSIFIER", [Raw(var)] if var else []), Raw(f"'{r.choice(VARS[:2])}'"))
            return Func(fn, [arg], sem)
        if fn in ("STDDEV", "STDDEV_POP", "VARIANCE", "VAR_POP"):
            return Func("ROUND", [Func(fn, [col(r.choice(["x", "y", "k"]))], sem), Raw("6")])
        if fn in ("ANY_VALUE", "ARBITRARY"):
            return Func(fn, [r.choice([Func("MATCH_NUMBER", [])] + ([col("p")] if self.partitioned else []))], sem)
        return Func(fn, [col(r.choice(["x", "s", "k", "dt"]))], sem)

    def aggregate(self, targets: list[str | None], sem: str = "") -> Expr:
        r = self.rng
        var = r.choice(targets)
        if r.random() < 0.3 * self.wide:
            return self.wide_aggregate(var, sem)
        fn = r.choice(BASIC_AGGS)
        if fn == "COUNT":
            roll = r.random()
            if roll < 0.3:
                return Func("COUNT", [Raw("*")], sem) if var is None or r.random() < 0.5 \
                    else Func("COUNT", [Raw(f"{var}.*")], sem)
            if roll < 0.5 and var is not None:
                return Func("COUNT", [Raw(f"{var}.*")], sem)
            return Func("COUNT", [self.colref(r.choice(COLUMN_NAMES), var)], sem)
        if fn in ("SUM", "AVG"):
            col = r.choice(NUMERIC)
            arg: Expr = self.colref(col, var)
            if r.random() < 0.1:
                arg = Op("*", arg, Raw("2"))
            if fn == "AVG" and col == "d":
                # AVG(decimal(5,2)): Spark's type is decimal(9,6), Trino's decimal(5,2) (rounded);
                # a type-system difference, not a MATCH_RECOGNIZE one: compare at Trino's scale
                return Cast(Func(fn, [arg], sem), "decimal(5,2)")
            return Func(fn, [arg], sem)
        col = r.choice(["x", "k", "y", "d", "s", "dt", "ts", "id"])
        return Func(fn, [self.colref(col, var)], sem)

    def condition(self, var: str, others: list[str], subsets: list[str]) -> Expr:
        """A DEFINE condition for ``var``."""
        r = self.rng
        col = r.choice(["x", "x", "x", "y", "d", "s", "k", "b", "ts"])

        def atom() -> Expr:
            roll = r.random()
            c = r.choice(["x", "x", "y", "d", "s", "k", "dt"])
            cur = self.colref(c, r.choice([None, None, var]))
            if roll < 0.3:
                return Op(r.choice(["<", ">", "<=", ">=", "=", "<>"]), cur,
                          Func(r.choice(["PREV", "PREV", "NEXT"]), [self.colref(c, r.choice([None, var]))] +
                               ([Raw(str(r.randint(1, 2)))] if r.random() < 0.3 else [])))
            if roll < 0.5:
                return Op(r.choice(["<", ">", "<=", ">=", "=", "<>"]), cur, self.literal_for(c))
            if roll < 0.58:
                return Unary(r.choice(["{} IS NULL", "{} IS NOT NULL"]), cur)
            if roll < 0.63:
                # a bare boolean column as the condition is rare: Trino 476 evaluates it wrongly
                # over memory tables (a known disagreement); compare it with a literal instead
                if r.random() < 0.1:
                    return Raw(r.choice(["b", "NOT b", f"{var}.b"]))
                return Raw(r.choice(["(b = true)", "(b = false)", f"({var}.b = true)", "(b <> PREV(b))"]))
            if roll < 0.68 and c in ("x", "k"):
                return Raw(f"{cur.render('spark')} IN ({r.randint(-1, 2)}, {r.randint(1, 4) * (10 if c == 'k' else 1)})")
            if roll < 0.72 and c == "x":
                lo = r.randint(-1, 2)
                return Raw(f"{cur.render('spark')} BETWEEN {lo} AND {lo + r.randint(0, 2)}")
            # match state: another variable's last row, logical navigation, running aggregates
            other = r.choice(others + [var])
            roll = r.random()
            if roll < 0.3 and c in ("x", "y", "d", "k"):
                agg = Func(r.choice(["SUM", "COUNT", "MAX", "MIN"] + (["AVG"] if c != "d" else [])),
                           [self.colref(c, r.choice([var, other] + subsets + [None]))])
                lim = {"x": r.randint(1, 8), "k": r.randint(1, 6) * 10, "y": 3, "d": 2}[c]
                return Op(r.choice(["<", "<=", ">"]), agg, Raw(str(lim)))
            if roll < 0.45:
                target = r.choice([var] + subsets)
                return Op(r.choice(["<", "<=", ">"]), Func("COUNT", [Raw(f"{target}.*")]), Raw(str(r.randint(1, 3))))
            if roll < 0.75:
                return Op(r.choice(["<", ">", "=", ">=", "<>"]), cur,
                          Func(r.choice(["FIRST", "LAST"]), [self.colref(c, other)] +
                               ([Raw(str(r.randint(0, 2)))] if r.random() < 0.3 else [])))
            if roll < 0.85:
                return Op(r.choice(["<", ">", "="]), cur, self.colref(c, other))
            if roll < 0.92:
                return Op(">", Func("COALESCE", [cur, self.literal_for(c)]), self.literal_for(c)) \
                    if c != "s" else Op("=", Func("COALESCE", [cur, Raw("'a'")]), Raw("'b'"))
            return Op("=", Case(Op(">", self.colref("x", other), Raw("1")), Raw("1"), Raw("0")), Raw("1"))

        e = atom()
        if r.random() < 0.3:
            e = Op(r.choice(["AND", "OR"]), e, atom())
        if r.random() < 0.05:
            e = Unary("NOT {}", e)
        if r.random() < 0.15 * self.wide:
            e = Op(r.choice(["AND", "OR"]), e, self.wide_condition(var, others))
        del col
        return e

    def wide_condition(self, var: str, others: list[str]) -> Expr:
        """A DEFINE atom over the wider surface: CLASSIFIER(), MATCH_NUMBER(), nested navigation,
        aggregates of expressions and of the wide kinds."""
        r = self.rng
        roll = r.random()
        other = r.choice(others + [var])
        if roll < 0.2:
            return Op(r.choice(["<>", "="]), Func("CLASSIFIER", []), Raw(f"'{other}'"))
        if roll < 0.3:
            prev = Func("PREV", [Func("CLASSIFIER", [])] + ([Raw("2")] if r.random() < 0.3 else []))
            return Unary("{} IS NULL", prev) if r.random() < 0.3 else Op(r.choice(["=", "<>"]), prev, Raw(f"'{other}'"))
        if roll < 0.4:
            return Op("<=", Func("MATCH_NUMBER", []), Raw(str(r.randint(1, 3))))
        if roll < 0.5:
            return Op("<", Func("SUM", [Op("+", Raw(f"{var}.x"), Raw(f"{var}.k"))]), Raw("40"))
        if roll < 0.6:
            return Op(">=", Func("PREV", [Func("LAST", [Raw(f"{other}.x")]), Raw("1")]), Raw("0"))
        if roll < 0.7:
            return Op(">", Func("ABS", [Op("-", Raw("x"), Func("FIRST", [Raw(f"{var}.x")]))]), Raw("0"))
        agg = self.wide_aggregate(r.choice([var, other, None]), define=True)
        if isinstance(agg, ArrayAgg):  # (arrays are not match-state values in DEFINE)
            return Op("<=", Func("COUNT", [agg.arg]), Raw(str(r.randint(1, 3))))
        if isinstance(agg, Func) and agg.name == "COUNT_IF":
            return Op("<=", agg, Raw(str(r.randint(0, 3))))
        if isinstance(agg, Func) and agg.name in ("BOOL_AND", "BOOL_OR", "EVERY"):
            return Op("=", agg, Raw(r.choice(["true", "false"])))
        if isinstance(agg, Func) and agg.name == "ROUND":
            return Op("<", agg, Raw("1.5"))
        return Unary(r.choice(["{} IS NULL", "{} IS NOT NULL"]), agg)

    def measure(self, pvars: list[str], subsets: list[str], rows: str) -> Expr:
        r = self.rng
        sem = ""
        if rows != "one" and r.random() < 0.5:
            sem = r.choice(["RUNNING", "FINAL"])
        elif rows == "one" and r.random() < 0.15:
            sem = r.choice(["RUNNING", "FINAL"])
        targets: list[str | None] = pvars + subsets + [None]
        if r.random() < 0.12 * self.wide:
            return self.wide_measure(pvars, subsets, sem)
        roll = r.random()
        if roll < 0.1:
            return Func("CLASSIFIER", [])
        if roll < 0.14 and (subsets or pvars):
            return Func("CLASSIFIER", [Raw(r.choice(subsets + pvars))])
        if roll < 0.2:
            return Func("MATCH_NUMBER", [])
        if roll < 0.45:
            return self.nav(r.choice(COLUMN_NAMES), r.choice(targets), sem=sem)
        if roll < 0.75:
            return self.aggregate(targets, sem)
        if roll < 0.85:
            return self.colref(r.choice(COLUMN_NAMES), r.choice(targets))
        if roll < 0.93:
            col = r.choice(["x", "k", "d", "y"])
            return Op(r.choice(["+", "-", "*"]), self.nav(col, r.choice(targets), ("FIRST", "LAST"), sem),
                      self.nav(col, r.choice(targets), ("FIRST", "LAST", "PREV"), sem))
        if roll < 0.97:
            # CAST only where both dialects give the same text/value (no double/timestamp -> varchar)
            agg = self.aggregate(targets, sem)
            if not isinstance(agg, Func):
                return agg
            if agg.name == "COUNT":
                return Cast(agg, r.choice(["double", "varchar"]))
            if agg.name in ("SUM", "AVG") or (agg.args and agg.args[0].render("spark").split(".")[-1] in NUMERIC):
                return Cast(agg, "double")
            return agg
        agg = Func(r.choice(["COUNT", "SUM", "MAX"]), [self.colref(r.choice(["x", "k", "y"]), r.choice(targets))], sem)
        return Case(Op(">", agg, Raw("1")), Func("CLASSIFIER", []), Raw("'none'"))

    def wide_measure(self, pvars, subsets, sem) -> Expr:
        """A measure over the wider surface."""
        r = self.rng
        roll = r.random()
        targets = pvars + subsets + [None]
        offset = lambda: [Raw(str(r.randint(1, 2)))] if r.random() < 0.3 else []  # noqa: E731
        if roll < 0.35:
            return self.wide_aggregate(r.choice(targets), sem)
        if roll < 0.45:
            return Func(r.choice(["PREV", "NEXT"]), [Func("CLASSIFIER", [])] + offset())
        if roll < 0.5:
            # the other nesting (navigation inside FIRST/LAST): both engines refuse it
            return Func(r.choice(["FIRST", "LAST"]), [Func(r.choice(["PREV", "NEXT"]), [Raw(f"{r.choice(pvars)}.x")])], sem)
        if roll < 0.6:
            cls = Func("CLASSIFIER", [Raw(r.choice(pvars + subsets))] if r.random() < 0.3 else [])
            return Func(r.choice(["FIRST", "LAST"]), [cls] + offset(), sem)
        if roll < 0.65:
            inner = Func(r.choice(["FIRST", "LAST"]), [Func("CLASSIFIER", [])], sem)
            return Func(r.choice(["PREV", "NEXT"]), [inner] + offset())
        if roll < 0.75:
            return Op("+", Func("MATCH_NUMBER", []), Func("COUNT", [Raw("*")], sem))
        if roll < 0.85:
            var = r.choice(pvars)
            return r.choice([Func("MAX", [Func("MATCH_NUMBER", [])], sem),
                             Func("COUNT", [Case(Op("=", Func("CLASSIFIER", []), Raw(f"'{var}'")), Raw("1"), Raw("NULL"))], sem),
                             Func("SUM", [Case(Op("=", Func("CLASSIFIER", []), Raw(f"'{var}'")), Raw("x"), Raw("0"))], sem)])
        if roll < 0.92:
            return Case(Op("=", Func("CLASSIFIER", []), Raw(f"'{r.choice(pvars)}'")),
                        self.nav("x", None, ("FIRST", "LAST", "PREV"), sem), Raw("-1"))
        # several aggregates in one expression
        var = r.choice(targets)
        return Op(r.choice(["+", "-", "*"]), Func("SUM", [self.colref("x", var)], sem),
                  Op("*", Func("COUNT", [Raw("*")], sem), Func("MAX", [self.colref("k", r.choice(targets))], sem)))

    # queries -------------------------------------------------------------------------------
    def query(self, table: str) -> Query:
        r = self.rng
        nvars = r.choice([1, 2, 2, 3, 3, 4])
        self.partitioned = partition = r.random() < 0.7
        pattern = self.pattern(nvars)
        pvars = pattern_vars(pattern)
        if not pvars:                      # () or anchors only: DEFINE a variable that is absent
            pattern = PSeq([pattern, PQuant(PVar("A"), "*")]) if r.random() < 0.7 else pattern
            pvars = ["A"]
        subsets: list[tuple[str, list[str]]] = []
        if len(pvars) >= 2 and r.random() < 0.3:
            for name in ["U", "V"][: r.randint(1, 2)]:
                members = r.sample(pvars, r.randint(1, min(3, len(pvars))))
                subsets.append((name, sorted(members)))
        snames = [n for n, _ in subsets]
        rows = r.choice(["one", "one", "all", "all", "all_show", "all_omit", "all_unmatched", ""])
        nmeasures = r.choice([0, 1, 2, 2, 3, 4]) if rows not in ("one", "") else r.choice([1, 1, 2, 3, 4])
        measures = [(self.measure(pvars, snames, rows or "one"), f"m{i}") for i in range(nmeasures)]
        defines = []
        for v in pvars:
            if r.random() < 0.8:
                defines.append((v, self.condition(v, [o for o in pvars if o != v], snames)))
        if not defines and r.random() > 0.01:
            # DEFINE is mandatory in the standard and in Trino (sparkcep accepts none): rare
            v = r.choice(pvars)
            defines.append((v, self.condition(v, [o for o in pvars if o != v], snames)))
        if r.random() < 0.02:
            defines.append(("Z", Raw("x > 0")))     # not a pattern variable: both must refuse
        r.shuffle(defines)
        skip_roll = r.random()
        targets = pvars + snames
        # SKIP TO [FIRST|LAST] v often fails at run time (v absent, or the match's first row):
        # each such query costs a Spark job of its own, so they are a minority
        if skip_roll < 0.6:
            skip: tuple = ("past",)
        elif skip_roll < 0.92:
            skip = ("next",)
        else:
            skip = (r.choice(["first", "last", "to"]), r.choice(targets))
        order = [("id", False, False)]
        if r.random() < 0.15:
            order = [(r.choice(["x", "s", "y", "k"]), r.random() < 0.5, r.random() < 0.5),
                     ("id", r.random() < 0.5, False)]
        elif r.random() < 0.1:
            order = [("id", True, False)]
        return Query(table=table, pattern=pattern, partition=partition, order=order, measures=measures,
                     rows=rows, skip=skip, subsets=subsets, defines=defines,
                     tags=frozenset({"extended"}) if self.extended else frozenset())

    def window_function(self) -> Expr:
        """A function over a window with pattern recognition, with arguments on which both
        engines give one answer (see ``wide_aggregate``)."""
        r = self.rng
        roll = r.random()
        if roll < 0.2:
            return Over(Func("COUNT", [Raw("*")]))
        if roll < 0.55:
            fn = r.choice(BASIC_AGGS)
            col = r.choice(["x", "k", "y"] if fn in ("SUM", "AVG") else COLUMN_NAMES)
            return Over(Func(fn, [Raw(col)]))
        if roll < 0.65:
            return Cast(Over(Func("AVG", [Raw("d")])), "decimal(5,2)")
        if roll < 0.85:
            fn = r.choice(["FIRST_VALUE", "LAST_VALUE", "NTH_VALUE"])
            args = [Raw(r.choice(["x", "s", "id", "dt", "d"]))] + ([Raw(str(r.randint(1, 3)))] if fn == "NTH_VALUE" else [])
            return Over(Func(fn, args))
        agg = self.wide_aggregate(None)
        if isinstance(agg, Func) and agg.name == "ROUND":  # ROUND(STDDEV(x) OVER w, 6)
            return Func("ROUND", [Over(agg.args[0]), agg.args[1]])
        if isinstance(agg, Func) and agg.name in ("ANY_VALUE", "ARBITRARY") or \
                any(isinstance(n, Func) and n.name in ("MATCH_NUMBER", "CLASSIFIER") for n in walk(agg)):
            return Over(Func("COUNT", [Raw("x")]))
        return Over(agg)

    def window_query(self, table: str) -> WindowQuery:
        """A window with pattern recognition (R020) and measures and functions read over it."""
        r = self.rng
        nvars = r.choice([1, 2, 2, 3, 3, 4])
        self.partitioned = partition = r.random() < 0.7
        while True:  # (anchors are refused in a window, by both engines: rare)
            pattern = self.pattern(nvars)
            if r.random() < 0.02 or not any(isinstance(n, PAnchor) for n in pat_walk(pattern)):
                break
        pvars = pattern_vars(pattern) or ["A"]
        if not pattern_vars(pattern):
            pattern = PSeq([pattern, PQuant(PVar("A"), "*")])
        subsets: list[tuple[str, list[str]]] = []
        if len(pvars) >= 2 and r.random() < 0.3:
            subsets = [("U", sorted(r.sample(pvars, r.randint(1, min(3, len(pvars))))))]
        snames = [n for n, _ in subsets]
        measures = []
        for i in range(r.choice([0, 1, 1, 2, 3])):
            while True:  # (MATCH_NUMBER() is refused in a window, by both engines: rare)
                m = self.measure(pvars, snames, "one")
                if r.random() < 0.02 or not any(isinstance(n, Func) and n.name == "MATCH_NUMBER" for n in walk(m)):
                    break
            measures.append((m, f"m{i}"))
        defines = []
        for v in pvars:
            if r.random() < 0.85:
                defines.append((v, self.condition(v, [o for o in pvars if o != v], snames)))
        if not defines:  # DEFINE is mandatory in a window (both engines)
            v = r.choice(pvars)
            defines.append((v, self.condition(v, [o for o in pvars if o != v], snames)))
        r.shuffle(defines)
        skip_roll = r.random()
        skip: tuple = ("past",) if skip_roll < 0.55 else ("next",) if skip_roll < 0.92 else \
            (r.choice(["first", "last", "to"]), r.choice(pvars + snames))
        order = [("id", False, False)]
        if r.random() < 0.15:
            order = [(r.choice(["x", "s", "y", "k"]), r.random() < 0.5, r.random() < 0.5), ("id", r.random() < 0.5, False)]
        # each measure read or not (an unread one is not computed), and some functions
        calls = [(Over(Raw(n)), n) for _, n in measures if r.random() < 0.8]
        calls += [(self.window_function(), f"f{i}") for i in range(r.choice([0, 1, 1, 2, 3]) if calls else r.randint(1, 3))]
        return WindowQuery(table=table, pattern=pattern, partition=partition, order=order, measures=measures,
                           skip=skip, subsets=subsets, defines=defines,
                           frame_end=self.frame_end(" ".join(e.render("trino") for e in [m for m, _ in measures] +
                                                              [d for _, d in defines])),
                           search=r.choice(["", "", "INITIAL", "SEEK", "SEEK"]), calls=calls,
                           tags=frozenset({"window"}))

    def frame_end(self, clauses: str) -> int | None:
        """Rows after the current one in a window's frame (None: UNBOUNDED FOLLOWING).  An n
        written in ``clauses`` (the rendered MEASURES and DEFINE) is rare: Trino 476 fails on
        functions over a frame ending at n FOLLOWING then (known ``trino-window-frame-literal``)."""
        r = self.rng
        taken = {int(n) for n in re.findall(r"\b\d+\b", clauses)}
        ends = [None, None, None, 0, 1, 2, 3, 4, 6]
        end = r.choice(ends)
        if end in taken and r.random() > 0.03:
            end = r.choice([e for e in ends if e not in taken])
        return end

    def window_corpus(self, n_queries: int, n_tables: int = 24, prefix: str = "trw"):
        """(tables, window queries): as ``corpus``, for row pattern recognition in a window."""
        tables = self.tables(n_tables, prefix)
        return tables, [self.window_query(self.rng.choice(tables).name) for _ in range(n_queries)]

    def corpus(self, n_queries: int, n_tables: int = 24, prefix: str = "trq") -> tuple[list[Table], list[Query]]:
        tables = self.tables(n_tables, prefix)
        queries = [self.query(self.rng.choice(tables).name) for _ in range(n_queries)]
        return tables, queries
