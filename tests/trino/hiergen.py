"""Random event hierarchies (docs/hierarchies.md) written twice: as sparkcep's one statement
with LAYERs, and as the plain SQL a Trino user writes instead (docs/hierarchies.md, "What Trino
and Oracle users write"): each layer a MATCH_RECOGNIZE over the UNION ALL of the rows and the
events it reads, with a kind column, the events' interval, completing row, level and match
number as columns, the reader ordered by (completing row, level, match number) and WITHIN as
the conjunct ``MAX(end) <= MIN(start) + T`` in every condition (rule 6).

A :class:`Case` is one table (two partitions of random rows ``part, id, ts, s, c, v, g``) and
one statement: 2-3 LAYERs under the top, standard semantics (Trino has no other), patterns with
quantifiers (reluctant ones too) and alternation, DEFINE over the rows (PREV, running SUM) and
over lower layers' measures, EVENT_START / EVENT_END, the four skip modes, WITHIN, ONE ROW PER
MATCH; with ``period`` the rows are intervals ``PERIOD (s, ts)`` (ends tied, NULL bounds); a
layer over rows only may refine the partition by ``g`` (rule 8: a matcher per key in the one pass).
"""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from querygen import spark_literal

T0 = dt.datetime(2026, 1, 1)
COLUMNS = [("part", "STRING", "varchar"), ("id", "INT", "integer"), ("ts", "TIMESTAMP", "timestamp(6)"),
           ("s", "TIMESTAMP", "timestamp(6)"), ("c", "STRING", "varchar"), ("v", "INT", "integer"),
           ("g", "STRING", "varchar")]
QUANTIFIERS = ["", "", "", "+", "*", "?", "{1,2}", "+?", "*?", "{2}", "??"]


@dataclass
class Measure:
    name: str
    spark: str
    trino: str
    trino_type: str


@dataclass
class Clause:
    """A layer (``name``) or the top (``name`` None); ``sources``: variable -> layer read (None: rows)."""
    name: str | None
    pattern: str
    sources: dict
    conditions: dict               # variable -> (spark text, trino text); absent: no DEFINE
    measures: list
    skip: str
    within: int | None
    refined: bool = False

    @property
    def reads_rows(self) -> bool:
        return any(s is None for s in self.sources.values())

    @property
    def layers_read(self) -> list:
        return sorted({s for s in self.sources.values() if s})


@dataclass
class Case:
    seed: int
    period: bool
    name: str = ""                 # the table's name in both engines
    rows: list = field(default_factory=list)
    layers: list = field(default_factory=list)
    top: Clause | None = None

    # -- the statement --------------------------------------------------------------------
    def spark_sql(self) -> str:
        table = self.name
        parts = [f"LAYER {layer.name} AS ({_spark_body(layer)})" for layer in self.layers]
        order = "ORDER BY ts, id PERIOD (s, ts)" if self.period else "ORDER BY ts, id"
        return (f"SELECT * FROM {table} MATCH_RECOGNIZE (\n  PARTITION BY part {order}\n  "
                + ",\n  ".join(parts) + "\n  " + _spark_body(self.top, top=True) + ") AS m")

    def trino_sql(self) -> str:
        table = self.name
        order = "ts ASC NULLS FIRST, id" if self.period else "ts, id"
        start = "s" if self.period else "ts"
        ctes = [f"base AS (SELECT part, id, ts, s, c, v, g, {start} AS h_start, ts AS h_end, "
                f"ROW_NUMBER() OVER (PARTITION BY part ORDER BY {order}) AS h_crow FROM {table})"]
        extra = [(m.name, m.trino_type) for layer in self.layers for m in layer.measures]
        for level, clause in enumerate(self.layers + [self.top], start=1):
            ctes.append(f"u{level} AS ({self._union(clause, extra)})")
            if clause.name:
                ctes.append(f"{clause.name} AS ({_trino_match(clause, f'u{level}')})")
        names = ", ".join(["part"] + [m.name for m in self.top.measures])
        return ("WITH " + ",\n".join(ctes) + f"\nSELECT {names} FROM ("
                + _trino_match(self.top, f"u{len(self.layers) + 1}") + ")")

    def _union(self, clause: Clause, extra: list) -> str:
        def null(t):
            return f"CAST(NULL AS {t})"
        selects = []
        if clause.reads_rows:
            selects.append("SELECT 'row' AS h_kind, 0 AS h_lvl, CAST(0 AS bigint) AS h_mn, h_crow, h_start, h_end, "
                           "part, g, id, ts, c, v" + "".join(f", {null(t)} AS {n}" for n, t in extra)
                           + " FROM base")
        for name in clause.layers_read:
            level = 1 + [layer.name for layer in self.layers].index(name)
            layer = self.layers[level - 1]
            own = {m.name for m in layer.measures}
            selects.append(f"SELECT '{name}' AS h_kind, {level} AS h_lvl, e_mn AS h_mn, e_crow AS h_crow, "
                           "e_start AS h_start, e_end AS h_end, part, " + ("g" if layer.refined else null("varchar"))
                           + f" AS g, {null('integer')} AS id, {null('timestamp(6)')} AS ts, {null('varchar')} AS c, "
                           f"{null('integer')} AS v"
                           + "".join(f", {n}" if n in own else f", {null(t)} AS {n}" for n, t in extra)
                           + f" FROM {name} WHERE e_cnt > 0")
        return "\nUNION ALL ".join(selects)

    # -- the data -------------------------------------------------------------------------
    def spark_query(self) -> str:
        """The stream as a Spark query over an inline VALUES."""
        values = ", ".join("(" + ", ".join(spark_literal(x, t) for x, (_, t, _) in zip(r, COLUMNS)) + ")"
                           for r in self.rows or [tuple(None for _ in COLUMNS)])
        where = "" if self.rows else " WHERE false"
        return f"SELECT * FROM VALUES {values} AS t({', '.join(c for c, _, _ in COLUMNS)}){where}"

    def trino_columns(self) -> list:
        return [(c, t) for c, _, t in COLUMNS]

    def describe(self) -> str:
        return "\n".join([" | ".join(c for c, _, _ in COLUMNS)] + [
            " | ".join("NULL" if x is None else str(x) for x in r) for r in self.rows])


def _skip(skip: str) -> str:
    return f"AFTER MATCH SKIP {skip}"


def _spark_body(clause: Clause, top: bool = False) -> str:
    define = []
    for v, source in clause.sources.items():
        cond = clause.conditions.get(v)
        if source:
            define.append(f"{v} FROM {source}" + (f" AS {cond[0]}" if cond else ""))
        elif cond:
            define.append(f"{v} AS {cond[0]}")
    return (("PARTITION BY g " if clause.refined else "")
            + "MEASURES " + ", ".join(f"{m.spark} AS {m.name}" for m in clause.measures)
            + (" ONE ROW PER MATCH" if top else "") + f" {_skip(clause.skip)} PATTERN ({clause.pattern})"
            + (f" WITHIN INTERVAL '{clause.within}' MINUTE" if clause.within else "")
            + (" DEFINE " + ", ".join(define) if define else ""))


def _trino_match(clause: Clause, union: str) -> str:
    window = ""
    if clause.within:
        window = (f" AND h_start IS NOT NULL AND h_end IS NOT NULL AND "
                  f"MAX(h_end) <= MIN(h_start) + INTERVAL '{clause.within}' MINUTE")
    define = []
    for v, source in clause.sources.items():
        cond = clause.conditions.get(v)
        test = f"h_kind = '{source or 'row'}'" + (f" AND ({cond[1]})" if cond else "")
        define.append(f"{v} AS {test}{window}")
    helpers = ("MIN(h_start) AS e_start, MAX(h_end) AS e_end, MAX(h_crow) AS e_crow, MATCH_NUMBER() AS e_mn, "
               "COUNT(*) AS e_cnt, ") if clause.name else ""
    partition = "part, g" if clause.refined else "part"
    return (f"SELECT * FROM {union} MATCH_RECOGNIZE (PARTITION BY {partition} ORDER BY h_crow, h_lvl, h_mn "
            f"MEASURES {helpers}" + ", ".join(f"{m.trino} AS {m.name}" for m in clause.measures)
            + f" ONE ROW PER MATCH {_skip(clause.skip)} PATTERN ({clause.pattern}) DEFINE " + ", ".join(define) + ")")


# ---- the generator -----------------------------------------------------------------------------

def _pattern(rng: random.Random, names: list) -> str:
    factors = []
    for _ in range(rng.choice([1, 2, 2, 3])):
        if rng.random() < .2 and len(names) > 1:
            a, b = rng.sample(names, 2)
            body = f"({a} | {b})"
        else:
            body = rng.choice(names)
        factors.append(body + rng.choice(QUANTIFIERS))
    text = " ".join(factors)
    if rng.random() < .12:
        text = f"{text} | {rng.choice(names)}{rng.choice(QUANTIFIERS)}"
    return text


def _row_condition(rng: random.Random, v: str):
    k = rng.randint(2, 6)
    return rng.choice([
        (f"c = '{rng.choice('ab')}'",) * 2,
        (f"v >= {k}",) * 2,
        ("v > PREV(v)",) * 2,
        (f"c = 'b' AND v < {k}",) * 2,
        (f"SUM({v}.v) <= {k + 6}",) * 2,
        None,
    ])


def _event_condition(rng: random.Random, v: str, layer: Clause, raw: list):
    names = {m.name for m in layer.measures}
    n = f"n_{layer.name}"
    options = [None, None, (f"{v}.{n} >= {rng.randint(1, 2)}",) * 2, (f"{n} <= {rng.randint(1, 4)}",) * 2,
               (f"COUNT({v}.*) <= 2",) * 2,
               (f"EVENT_END({v}) <= EVENT_START({v}) + INTERVAL '2' MINUTE",
                f"{v}.h_end <= {v}.h_start + INTERVAL '2' MINUTE")]
    if f"mn_{layer.name}" in names:
        options.append((f"{v}.mn_{layer.name} > 1",) * 2)
    if f"sv_{layer.name}" in names:
        options.append((f"{v}.sv_{layer.name} >= {rng.randint(3, 12)}",) * 2)
    if f"cl_{layer.name}" in names:
        options.append((f"{v}.cl_{layer.name} <> 'A'",) * 2)
    if raw:
        w = rng.choice(raw)
        options.append((f"EVENT_START({v}) >= FIRST({w}.ts)", f"{v}.h_start >= FIRST({w}.ts)"))
    return rng.choice(options)


def _measures(rng: random.Random, clause: Clause, top: bool) -> list:
    if top:
        out = [Measure("mn", "MATCH_NUMBER()", "MATCH_NUMBER()", "bigint"),
               Measure("ms", "MATCH_START()", "MIN(h_start)", "timestamp(6)"),
               Measure("me", "MATCH_END()", "MAX(h_end)", "timestamp(6)"),
               Measure("items", "COUNT(*)", "COUNT(*)", "bigint")]
        suffix = ""
    else:
        out = [Measure(f"n_{clause.name}", "COUNT(*)", "COUNT(*)", "bigint")]
        suffix = f"_{clause.name}"
    if rng.random() < .5:
        out.append(Measure(f"mn{suffix}" if suffix else "mno", "MATCH_NUMBER()", "MATCH_NUMBER()", "bigint")
                   if suffix else Measure("cls", "CLASSIFIER()", "CLASSIFIER()", "varchar"))
    if clause.reads_rows and rng.random() < .6:
        out.append(Measure(f"sv{suffix}", "SUM(v)", "SUM(v)", "bigint"))
    if suffix and rng.random() < .4:
        out.append(Measure(f"cl{suffix}", "CLASSIFIER()", "CLASSIFIER()", "varchar"))
    for v, source in clause.sources.items():
        if rng.random() < .25:
            if source:
                out.append(Measure(f"x{v.lower()}{suffix}", f"FIRST(EVENT_END({v}))", f"FIRST({v}.h_end)",
                                   "timestamp(6)"))
                out.append(Measure(f"y{v.lower()}{suffix}", f"{v}.n_{source}", f"{v}.n_{source}", "bigint"))
            else:
                out.append(Measure(f"x{v.lower()}{suffix}", f"COUNT({v}.*)", f"COUNT({v}.*)", "bigint"))
    return out


def generate(seed: int, period: bool = False) -> Case:
    rng = random.Random(seed)
    case = Case(seed, period, f"hier_{seed}")
    count = rng.choice([2, 3, 3])          # layers under the top
    clauses = []
    for level in range(count + 1):
        names = rng.sample("ABCDEF", rng.choice([2, 2, 3]))
        pattern = _pattern(rng, names)
        used = [n for n in names if n in pattern]
        sources = {}
        for v in used:
            sources[v] = None if level == 0 or rng.random() < .35 else clauses[rng.randrange(level)].name
        if level and clauses[level - 1].name not in sources.values():
            sources[rng.choice(used)] = clauses[level - 1].name
        top = level == count
        clause = Clause(None if top else f"l{level}", pattern, sources, {}, [], "PAST LAST ROW", None)
        raw = [v for v, s in sources.items() if s is None]
        for v, s in sources.items():
            cond = _row_condition(rng, v) if s is None else _event_condition(rng, v, clauses[[c.name for c in clauses].index(s)], raw)
            if cond:
                clause.conditions[v] = cond
        if not clause.conditions:
            v = rng.choice(used)
            clause.conditions[v] = _row_condition(rng, v) or (("c = 'a'",) * 2) if sources[v] is None else \
                (f"{v}.n_{sources[v]} >= 1",) * 2
        # (TO FIRST / LAST v fails when v is absent or the match's first item: rare, or most
        # hierarchies would compare an error)
        clause.skip = rng.choice(["PAST LAST ROW", "TO NEXT ROW"]) if rng.random() < .96 else \
            f"TO {rng.choice(['FIRST', 'LAST'])} {rng.choice(used)}"
        clause.within = rng.choice([None, None, 3, 6, 10])
        clause.refined = not top and not clause.layers_read and rng.random() < .25
        clause.measures = _measures(rng, clause, top)
        clauses.append(clause)
    # every layer below the top is read by a layer above it (a LAYER nobody reads is an error)
    case.layers, case.top = clauses[:-1], clauses[-1]
    while True:
        read = {s for c in case.layers + [case.top] for s in c.sources.values() if s}
        kept = [layer for layer in case.layers if layer.name in read]
        if kept == case.layers:
            break
        case.layers = kept
    ident = 0
    for part in ("p", "q"):
        t = 0
        for _ in range(rng.randint(0, 20)):
            t += rng.choice([0, 1, 1, 2, 3])
            end = T0 + dt.timedelta(minutes=t)
            start = end - dt.timedelta(minutes=rng.randint(0, 3))
            if period and rng.random() < .08:
                if rng.random() < .5:
                    start = None
                else:
                    end = None
            case.rows.append((part, ident, end, start, rng.choice("ab"), rng.choice([None] + list(range(10)) * 3),
                              rng.choice("xy")))
            ident += 1
    return case

