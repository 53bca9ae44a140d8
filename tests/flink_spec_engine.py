"""Run a tests/flink spec (the JSON format of tests/flink/README.md) on sparkcep's engine in
FLINKCEP mode, and compare the result with real FlinkCEP's.

Translation (docs/flinkcep.md's mapping): ``next``/``followedBy``/``followedByAny`` -> juxtaposition
/ ``->`` / ``->>``; ``notNext n`` -> ``~N``, ``notFollowedBy n`` -> ``-> ~N`` (the junction after
it is the next element's); ``oneOrMore``/``times``/``timesOrMore`` -> ``+``/``{n}``/``{n,m}``/
``{n,}`` with the inner contiguity ``consecutive`` -> none, default (relaxed) -> ``->``,
``allowCombinations`` -> ``->>``; ``optional`` -> minimum 0, or for Flink's "0 or n..m" with
n > 1 the loop in an optional group ``(B->{n,m})?``; ``greedy`` -> possessive; ``until`` -> ``DEFINE v ... UNTIL`` (an
element) or ``(...)+ UNTIL Sk`` (a group); ``within_ms`` -> WITHIN over ``ts``; conditions
``name_eq``/``cmp`` -> row masks, ``sum_price_le`` -> ``SUM(v.price) <= n`` (match state).
Names are upper-cased (``p1`` -> ``P1``).  What has no translation raises NotImplementedError.
"""
from __future__ import annotations

from collections import OrderedDict
from engine_support import agg, call, col, lit, nav

_JUNCTION = {"next": " ", "followedBy": " -> ", "followedByAny": " ->> ", "notNext": " ", "notFollowedBy": " -> "}
_INNER = {"consecutive": "", "relaxed": "->", "allowCombinations": "->>"}
_SKIP = {"NO_SKIP": "NO SKIP", "SKIP_TO_NEXT": "TO NEXT ROW", "SKIP_PAST_LAST_EVENT": "PAST LAST ROW",
         "SKIP_TO_FIRST": "TO FIRST", "SKIP_TO_LAST": "TO LAST"}
_OPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _events(spec):
    return [dict(e, id=e.get("id", i), ts=e.get("ts", i * 1000), price=e.get("price", 0))
            for i, e in enumerate(spec["events"])]


def _row_pred(cond):
    """A COND without iterative parts -> predicate(event)."""
    parts = []
    for key, v in cond.items():
        if key == "name_eq":
            parts.append(lambda e, v=v: e["name"] == v)
        elif key == "cmp":
            parts.append(lambda e, f=v[0], op=_OPS[v[1]], x=v[2]: op(e[f], x))
        elif key == "and":
            subs = [_row_pred(c) for c in v]
            parts.append(lambda e, subs=subs: all(p(e) for p in subs))
        elif key == "or":
            subs = [_row_pred(c) for c in v]
            parts.append(lambda e, subs=subs: any(p(e) for p in subs))
        elif key == "not":
            sub = _row_pred(v)
            parts.append(lambda e, sub=sub: not sub(e))
        elif key == "true":
            parts.append(lambda e, b=bool(v): b)
        elif key == "false":
            parts.append(lambda e, b=bool(v): not b)
        else:
            raise NotImplementedError(f"condition {key} inside and/or/not")
    return lambda e: all(p(e) for p in parts)


class _Builder:
    def __init__(self, events):
        self.events = events
        self.masks, self.state, self.until = {}, {}, {}
        self.stops = 0

    def cond(self, var, cond):
        cond = dict(cond or {})
        if "sum_price_le" in cond:
            of = cond.pop("sum_of", var).upper()
            self.state[var] = call("<=", agg("sum", (of,), "price"), lit(cond.pop("sum_price_le")))
        pred = _row_pred(cond)
        self.masks[var] = [pred(e) for e in self.events]

    def quant(self, el, text):
        q, optional = el.get("quant"), bool(el.get("optional"))
        if q is None:
            lo, hi = 1, 1
        elif "oneOrMore" in q:
            lo, hi = 1, None
        elif "timesOrMore" in q:
            lo, hi = q["timesOrMore"], None
        elif isinstance(q["times"], list):
            lo, hi = q["times"]
        else:
            lo = hi = q["times"]
        if optional and lo > 1:  # "0 or n..m times": the loop inside an optional group
            return "(" + self.quant({**el, "optional": False}, text) + ")?"
        if optional:
            lo = 0
        if (lo, hi) == (1, 1):
            qt = ""
        elif hi is None:
            qt = "*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}"
        elif (lo, hi) == (0, 1) and q is None:
            qt = "?"
        else:
            qt = f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"
        if qt:
            if q is not None:
                qt = _INNER[el.get("inner") or "relaxed"] + qt
            if el.get("greedy"):
                qt += "+"
        return text + qt

    def sequence(self, elems, top=False):
        out = []
        for k, el in enumerate(elems):
            junction = el.get("junction") or "next"
            if k:
                out.append(_JUNCTION[junction])
            if "group" in el:
                body = "(" + self.sequence(el["group"]) + ")"
                text = self.quant(el, body)
                if el.get("until"):
                    self.stops += 1
                    stop = f"STOP{self.stops}"
                    self.masks[stop] = [_row_pred(el["until"])(e) for e in self.events]
                    text += f" UNTIL {stop}"
                out.append(text)
                continue
            var = el["name"].upper()
            self.cond(var, el.get("cond"))
            if junction in ("notNext", "notFollowedBy"):
                out.append(f"~{var}")
                continue
            out.append(self.quant(el, var))
            if el.get("until"):
                self.until[var] = [_row_pred(el["until"])(e) for e in self.events]
        return "".join(out).strip()


def translate(spec, flink_within=False) -> dict:
    """engine_result keyword arguments (plus ``pattern`` and ``n``) for a tests/flink spec.

    ``flink_within``: translate ``within_ms`` W to our WITHIN W - 1.  Flink keeps a match only
    when ``last.ts - first.ts < W`` (its NFA prunes a partial match once ``ts - start >= W``);
    ours keeps ``last - first <= WITHIN``; on integer milliseconds the two agree for W - 1."""
    events = _events(spec)
    b = _Builder(events)
    pattern = b.sequence(spec["pattern"], top=True)
    skip = spec.get("skip") or "NO_SKIP"
    skip_kind, _, target = skip.partition(":")
    args = dict(pattern=pattern, n=len(events), masks=b.masks, state=b.state, until=b.until,
                columns={"price": [e["price"] for e in events]}, mode="flinkcep", skip=_SKIP[skip_kind],
                skip_to=(target.upper(),) if target else ())
    if spec.get("within_ms") is not None:
        args.update(within=spec["within_ms"] - (1 if flink_within else 0), order=[e["ts"] for e in events])
    return args


def run_engine(spec, args=None) -> list:
    """Our matches for ``spec`` as [((id, VAR), ...)] in report order."""
    from test_engine import engine_result

    args = dict(args or translate(spec))
    pattern, n = args.pop("pattern"), args.pop("n")
    ids = [e["id"] for e in _events(spec)]
    out = engine_result(pattern, n, **args)
    return [tuple((ids[r], v) for r, v, _ in rows) for kind, _s, _e, rows in out if kind == "match"]


def from_flink(m: dict) -> tuple:
    """Flink's {name: [ids]} -> ((id, NAME), ...) in event order."""
    return tuple(sorted((i, k.upper()) for k, ids in m.items() for i in ids))


def by_completing_event(matches) -> list:
    """[(completing event id, sorted matches it completes)] in emission order."""
    groups: OrderedDict = OrderedDict()
    for m in matches:
        groups.setdefault(max(i for i, _ in m), []).append(m)
    return [(end, sorted(ms)) for end, ms in groups.items()]


def compare(spec, ours, flink_full) -> str:
    """'same', 'same-with-held' (ours = Flink's emitted + held matches, the skip-strategy
    buffering of tests/flink/README.md) or 'differ'.  NO_SKIP: per completing event as sets
    (Flink's order among matches completed by one event is its PriorityQueue order)."""
    emitted = [from_flink(m) for m in flink_full["matches"]]
    held = [from_flink(m) for m in flink_full.get("held_matches", [])]
    if (spec.get("skip") or "NO_SKIP") == "NO_SKIP":
        return "same" if by_completing_event(emitted) == by_completing_event(ours) else "differ"
    if emitted == ours:
        return "same"
    return "same-with-held" if held and emitted + held == ours else "differ"


def fmt(matches) -> str:
    """[((1, 'A'), (2, 'B'))] -> '{a:1 b:2}' ..."""
    return " ".join("{" + " ".join(f"{v.lower()}:{i}" for i, v in m) + "}" for m in matches) or "(none)"


def compact(matches) -> list:
    """[((1, 'A'), (2, 'B'))] -> ['a:1;b:2'] (names in first-event order, as Flink's keys)."""
    out = []
    for m in matches:
        names: dict = {}
        for i, v in m:
            names.setdefault(v.lower(), []).append(str(i))
        out.append(";".join(f"{k}:{','.join(ids)}" for k, ids in names.items()))
    return out
