"""The four query families of Fu & Wu, *Formal Semantics of Apache Flink CEP* (seed 000),
Section 8.2, on the paper's fixed stream -- shared by ``test_flinkcep_families.py`` (engine,
oracle, spark.sql) and ``test_flinkcep_differential.py`` (real FlinkCEP).

Families (Section 8.2; counts as in Table 1):

* NOGP  ``spat θ lpat``                    3 θ x 42 lpat x 3 skips             =  378
* SLGP  ``(spat θ lpat) quan``             378 x 8 group quantifiers           = 3024
* LGP   ``(lpat) quan``                    42 lpat x 8 quan x 3 skips          = 1008
* SLGGP ``((spat θ lpat) q1) q2``          3024 x 3 outer quantifiers          = 9072

where ``θ`` in {strict, ->, ->>}; ``lpat`` = 3 inner contiguities x 2 conditions (a simple
one, ``name = 2``, and an iterative one, the fold ``SUM(P.price) <= 7``) x 7 quantifiers
({0,3} {1,3} {3,3} {0,∞} {1,∞} {0,∞}U {1,∞}U, U = ``UNTIL name = 3``); the group
quantifiers are none (a plain group ``(patseq)``), {0,3} {1,3} {3,3} {0,∞} {1,∞} {0,∞}U
{1,∞}U; ``q2`` is none, {0,3} or {1,∞}.  ``spat`` is fixed: ``A AS name = 1``.  Skip
strategies: NO SKIP, SKIP TO NEXT ROW, SKIP PAST LAST ROW.  (The paper does not print its
constants; 378 = 3 θ x 3 inner x 2 conditions x 7 quantifiers x 3 skips fixes the shape.)

Group iterations are strictly contiguous (the paper's grammar); in Flink that is
``consecutive()`` on the GroupPattern.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from udtf.pattern import ANY, RELAXED, STRICT
from engine_support import agg, call, col, lit, nav

# the paper's fixed stream e(id, name, price)
STREAM = [(1, 1, 0), (2, 2, 5), (3, 1, 0), (4, 2, 2), (5, 1, 0), (6, 3, 2), (7, 1, 0), (8, 2, 5), (9, 1, 8)]

A_NAME = 1      # spat: A AS name = 1
P_NAME = 2      # simple lpat condition: P AS name = 2
P_SUM = 7       # iterative lpat condition: P AS SUM(P.price) <= 7
UNTIL_NAME = 3  # U[name = 3]

THETAS = (STRICT, RELAXED, ANY)
INNERS = (STRICT, RELAXED, ANY)
CONDS = ("name", "fold")
# (min, max, until); max None = unbounded
LOOP_QUANTS = ((0, 3, False), (1, 3, False), (3, 3, False), (0, None, False), (1, None, False),
               (0, None, True), (1, None, True))
GROUP_QUANTS = (None,) + LOOP_QUANTS  # None = a plain group (patseq)
OUTER_QUANTS = (None, (0, 3, False), (1, None, False))
SKIPS = ("NO SKIP", "TO NEXT ROW", "PAST LAST ROW")
FAMILIES = ("NOGP", "SLGP", "LGP", "SLGGP")

JUNCTION_TEXT = {STRICT: " ", RELAXED: " -> ", ANY: " ->> "}
INNER_TEXT = {STRICT: "", RELAXED: "->", ANY: "->>"}
SKIP_SQL = {"NO SKIP": "AFTER MATCH NO SKIP", "TO NEXT ROW": "AFTER MATCH SKIP TO NEXT ROW",
            "PAST LAST ROW": "AFTER MATCH SKIP PAST LAST ROW"}
SKIP_FLINK = {"NO SKIP": "NO_SKIP", "TO NEXT ROW": "SKIP_TO_NEXT", "PAST LAST ROW": "SKIP_PAST_LAST_EVENT"}


def quant_text(q) -> str:
    lo, hi, _ = q
    if hi is None:
        return "*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}"
    return f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"


def quant_label(q) -> str:
    if q is None:
        return "()"
    lo, hi, until = q
    return "{%d,%s}%s" % (lo, "inf" if hi is None else hi, "U" if until else "")


@dataclass(frozen=True)
class Query:
    family: str
    theta: str | None      # junction A -> P (None for LGP)
    inner: str             # contiguity between P's iterations
    cond: str              # "name" | "fold"
    lq: tuple              # P's quantifier (min, max, until)
    g1: tuple | None       # group quantifier (SLGP, LGP, SLGGP); None = plain group
    g2: tuple | None       # outer group quantifier (SLGGP)
    skip: str
    until_form: str = "define"   # lpat until as "define" (DEFINE P ... UNTIL c) or "pattern" (P+ UNTIL S)

    # ---- naming ----------------------------------------------------------------------------
    @property
    def id(self) -> str:
        lp = f"P{INNER_TEXT[self.inner]}[{self.cond}]{quant_label(self.lq)}"
        if self.until_form == "pattern" and self.lq[2]:
            lp += "S"
        body = lp if self.theta is None else f"A{JUNCTION_TEXT[self.theta].strip() or '.'}{lp}"
        if self.family in ("SLGP", "LGP", "SLGGP"):
            body = f"({body}){quant_label(self.g1)}"
        if self.family == "SLGGP":
            body = f"({body}){quant_label(self.g2)}"
        return f"{self.family}:{body}:{self.skip.replace(' ', '_')}"

    # ---- pattern text (udtf.pattern syntax = the SQL PATTERN syntax) -----------------------
    @property
    def uses_s(self) -> bool:
        """Whether variable S (name = 3) is the stop condition of some loop."""
        return ((self.lq[2] and self.until_form == "pattern") or bool(self.g1 and self.g1[2])
                or bool(self.g2 and self.g2[2]))

    @property
    def p_until(self) -> bool:
        """``DEFINE P AS ... UNTIL name = 3``."""
        return self.lq[2] and self.until_form == "define"

    def lpat_text(self) -> str:
        text = "P" + INNER_TEXT[self.inner] + quant_text(self.lq)
        if self.lq[2] and self.until_form == "pattern":
            text += " UNTIL S"
        return text

    @staticmethod
    def _group(body: str, q) -> str:
        if q is None:
            return f"({body})"
        return f"({body}){quant_text(q)}" + (" UNTIL S" if q[2] else "")

    def pattern(self) -> str:
        body = self.lpat_text()
        if self.theta is not None:
            body = "A" + JUNCTION_TEXT[self.theta] + body
        if self.family == "NOGP":
            return body
        body = self._group(body, self.g1)
        if self.family == "SLGGP":
            body = self._group(body, self.g2)
        return body

    @property
    def variables(self) -> list:
        return (["A"] if self.theta is not None else []) + ["P"] + (["S"] if self.uses_s else [])

    # ---- conditions for the oracle and the engine -----------------------------------------
    def oracle_conditions(self, stream=STREAM):
        import oracle

        names, prices = [e[1] for e in stream], [e[2] for e in stream]
        define = {"A": lambda row, mapped: names[row] == A_NAME,
                  "S": lambda row, mapped: names[row] == UNTIL_NAME}
        if self.cond == "name":
            define["P"] = lambda row, mapped: names[row] == P_NAME
        else:
            define["P"] = lambda row, mapped: sum(prices[r] for r, v, _ in mapped if v == "P") <= P_SUM
        until = {"P": lambda row: names[row] == UNTIL_NAME} if self.p_until else {}
        return oracle.Conditions(define, until)

    def engine_args(self, stream=STREAM) -> dict:
        names, prices = [e[1] for e in stream], [e[2] for e in stream]
        masks = {}
        if self.theta is not None:
            masks["A"] = [n == A_NAME for n in names]
        state = {}
        if self.cond == "name":
            masks["P"] = [n == P_NAME for n in names]
        else:
            state["P"] = call("<=", agg("sum", ("P",), "price"), lit(P_SUM))
        if self.uses_s:
            masks["S"] = [n == UNTIL_NAME for n in names]
        until = {"P": [n == UNTIL_NAME for n in names]} if self.p_until else {}
        return dict(masks=masks, state=state, until=until, columns={"price": prices})

    # ---- SQL -------------------------------------------------------------------------------
    def sql(self, qid: int, table: str = "paper_events") -> str:
        defines = []
        if self.theta is not None:
            defines.append(f"A AS name = {A_NAME}")
        p = f"name = {P_NAME}" if self.cond == "name" else f"SUM(P.price) <= {P_SUM}"
        if self.p_until:
            p += f" UNTIL name = {UNTIL_NAME}"
        defines.append(f"P AS {p}")
        if self.uses_s:
            defines.append(f"S AS name = {UNTIL_NAME}")
        return (f"SELECT {qid} AS q, m, id, cls FROM {table} MATCH_RECOGNIZE (\n"
                f"  ORDER BY id MEASURES MATCH_NUMBER() AS m, CLASSIFIER() AS cls\n"
                f"  ALL ROWS PER MATCH {SKIP_SQL[self.skip]} SEMANTICS FLINKCEP\n"
                f"  PATTERN ({self.pattern()})\n"
                f"  DEFINE {', '.join(defines)})")

    # ---- real FlinkCEP spec (tests/flink) --------------------------------------------------
    def flink_pattern(self) -> list:
        """The pattern as a tests/flink spec element list (NOGP, SLGP, LGP, SLGGP)."""
        elems = []
        if self.theta is not None:
            elems.append(_elem("a", {"name_eq": A_NAME}))
        cond = {"name_eq": P_NAME} if self.cond == "name" else {"sum_price_le": P_SUM}
        p = _elem("p", cond, junction=_FLINK_JUNCTION[self.theta] if self.theta is not None else "next")
        _quantify(p, self.lq, self.inner)
        elems.append(p)
        if self.family == "NOGP":
            return elems
        g = _group(elems, self.g1)
        if self.family == "SLGGP":
            g = _group([g], self.g2)
        return [g]

    def flink_spec(self, events=None, within_ms=None) -> dict:
        return {"events": events or flink_events(), "skip": SKIP_FLINK[self.skip], "within_ms": within_ms,
                "pattern": self.flink_pattern()}


_FLINK_JUNCTION = {STRICT: "next", RELAXED: "followedBy", ANY: "followedByAny"}
_FLINK_INNER = {STRICT: "consecutive", RELAXED: "relaxed", ANY: "allowCombinations"}


def _elem(name, cond, junction="next"):
    return {"name": name, "junction": junction, "cond": cond, "quant": None, "optional": False,
            "greedy": False, "inner": "relaxed", "until": None}


def _quantify(el, q, inner):
    """{n,m} / {n,inf} [U] as Flink quantifiers; minimum 0 = the minimum-1 form + optional()
    (the paper: "{0,∞} is {1,∞}.optional()")."""
    if q is None:
        return
    lo, hi, until = q
    if hi is None:
        el["quant"] = {"oneOrMore": True}
    elif lo == hi:
        el["quant"] = {"times": hi}
    else:
        el["quant"] = {"times": [max(lo, 1), hi]}
    el["optional"] = lo == 0
    el["inner"] = _FLINK_INNER[inner]
    if until:
        el["until"] = {"name_eq": UNTIL_NAME}


def _group(elems, q):
    g = {"group": elems, "junction": "next", "quant": None, "optional": False, "greedy": False,
         "inner": "relaxed", "until": None}
    _quantify(g, q, STRICT)  # group iterations strictly contiguous (the paper's grammar)
    return g


def flink_events(stream=STREAM):
    return [{"id": i, "name": n, "price": p} for i, n, p in stream]


# ---- generation ------------------------------------------------------------------------------

def lpats():
    return list(itertools.product(INNERS, CONDS, LOOP_QUANTS))


def family(name: str) -> list[Query]:
    out = []
    if name == "NOGP":
        for theta, (inner, cond, lq), skip in itertools.product(THETAS, lpats(), SKIPS):
            out.append(Query("NOGP", theta, inner, cond, lq, None, None, skip))
    elif name == "SLGP":
        for theta, (inner, cond, lq), g1, skip in itertools.product(THETAS, lpats(), GROUP_QUANTS, SKIPS):
            out.append(Query("SLGP", theta, inner, cond, lq, g1, None, skip))
    elif name == "LGP":
        for (inner, cond, lq), g1, skip in itertools.product(lpats(), GROUP_QUANTS, SKIPS):
            out.append(Query("LGP", None, inner, cond, lq, g1, None, skip))
    elif name == "SLGGP":
        for theta, (inner, cond, lq), g1, g2, skip in itertools.product(
                THETAS, lpats(), GROUP_QUANTS, OUTER_QUANTS, SKIPS):
            out.append(Query("SLGGP", theta, inner, cond, lq, g1, g2, skip))
    else:
        raise ValueError(name)
    return out


def with_pattern_until(q: Query) -> Query:
    """The same query with the lpat's until written on the pattern (``P->+ UNTIL S``)."""
    from dataclasses import replace

    return replace(q, until_form="pattern")


def all_queries() -> list[Query]:
    return [q for f in FAMILIES for q in family(f)]


# ---- running the oracle and the engine ------------------------------------------------------

def oracle_result(q: Query, stream=STREAM, skip=None, skip_to=(), **options):
    """The result of tests/paper_dst.py (the DST of Appendix A, its runs enumerated) on
    ``stream``, under the query's skip strategy or ``skip`` (with ``skip_to``); ``options``:
    ``distinct``, ``error_on_miss``."""
    import paper_dst

    return paper_dst.flinkcep(q.pattern(), len(stream), q.oracle_conditions(stream), skip=skip or q.skip,
                              skip_to=skip_to, **options)


def engine_result(q: Query, stream=STREAM, skip=None, skip_to=(), **options):
    from test_engine import engine_result as run

    return run(q.pattern(), len(stream), mode="flinkcep", skip=skip or q.skip, skip_to=skip_to,
               **q.engine_args(stream), **options)


def as_matches(result) -> list[tuple]:
    """oracle/engine result -> [((id, var), ...) per match] in report order (ids 1-based)."""
    return [tuple((r + 1, v) for r, v, _ in rows) for kind, _s, _e, rows in result if kind == "match"]
