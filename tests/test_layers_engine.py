"""udtf/match/layers.py (the one-pass layer stack) against the multi-layer oracle
(tests/hierarchy_oracle.py): random hierarchies over random streams, fed in random chunks.

Conditions are masks: a raw row's by a random table per (variable, row), an event's by a
random table per (variable, layer, MATCH_NUMBER), so both sides read the same condition and a
wrong event (numbering, membership, order) shows.  No WITHIN: the stack's matchers do not
measure member intervals yet (udtf/match/layers.py)."""
from __future__ import annotations

import random

import pytest

import hierarchy_oracle as ho
from udtf.compile import compile_pattern
from udtf.errors import MatchRecognizeError
from udtf.match import Conditions, Options, matcher
from udtf.match.layers import Event, Layer, LayerStack, RefinedLayer
from udtf.pattern import parse_pattern, variables
from udtf.plan import Condition, Semantics, Skip, SkipMode
from udtf.rows import Rows

STANDARD = ["A B", "A B+ C", "A+ B?", "(A | B)+ C", "A B* C", "A{2,3}", "A+? B", "A | B C"]
FLINKCEP = ["A -> B", "A ->> B", "A B+ C", "A -> B+ -> C", "A+ B", "A -> B?"]


class Case:
    """A random hierarchy: per layer (pattern, semantics, skip, skip_to, sources), and the
    condition tables."""

    def __init__(self, seed: int):
        rng = random.Random(seed)
        self.n = rng.randint(0, 12)
        self.layers = []
        for level in range(rng.choice([1, 2, 2, 3, 3])):
            semantics = rng.choice(["standard", "flinkcep"])
            pattern = rng.choice(STANDARD if semantics == "standard" else FLINKCEP)
            names = variables(parse_pattern(pattern))
            sources = {v: f"l{rng.randrange(level)}" for v in names if level and rng.random() < .7}
            modes = ["PAST LAST ROW", "TO NEXT ROW"] + (["TO FIRST", "TO LAST"] if rng.random() < .2 else []) \
                if semantics == "standard" else ["NO SKIP", "TO NEXT ROW", "PAST LAST ROW"]
            skip = rng.choice(modes)
            skip_to = (rng.choice(names),) if skip in ("TO FIRST", "TO LAST") else ()
            self.layers.append((f"l{level}", pattern, semantics, skip, skip_to, sources))
        self.p = rng.choice([.5, .7, .85])
        self.rng = rng
        self.raw = {(v, r): rng.random() < self.p for v in "ABC" for r in range(self.n)}
        self.table: dict = {}

    def holds(self, var: str, layer: str | None, number: int) -> bool:
        if layer is None:
            return self.raw[var, number]
        if (var, layer, number) not in self.table:
            self.table[var, layer, number] = random.Random(f"{var}{layer}{number}").random() < self.p
        return self.table[var, layer, number]


def _oracle(case: Case):
    layers = [ho.Layer(name, pattern, sources=sources, semantics=semantics, skip=skip, skip_to=skip_to,
                       define={v: (lambda e, m, v=v: case.holds(v, e.source, e.number))
                               for v in variables(parse_pattern(pattern))})
              for name, pattern, semantics, skip, skip_to, sources in case.layers]
    top = ho.evaluate(layers, ho.raw_events([{"ts": r} for r in range(case.n)]))[case.layers[-1][0]]
    return [_shape_oracle(e) for e in top]


def _shape_oracle(e) -> tuple:
    if e.source is None:
        return ("row", e.number)
    return (e.source, e.number, tuple((_shape_oracle(m.event), m.var) for m in e.members))


def _stack(case: Case) -> tuple[LayerStack, list]:
    layers, all_names = [], []
    index_of = {name: i for i, (name, *_rest) in enumerate(case.layers)}
    for name, pattern, semantics, skip, skip_to, sources in case.layers:
        node = parse_pattern(pattern)
        names = variables(node)
        rows = Rows(masks=[f"m_{v}" for v in names])
        conditions = Conditions([Condition(k, f"m_{v}", None) for k, v in enumerate(names)], [], names, rows)
        options = Options(semantics=Semantics(semantics),
                          skip=Skip(SkipMode(skip), tuple(names.index(v) for v in skip_to), ",".join(skip_to)))
        engine = matcher(compile_pattern(node, names), conditions, options)

        def load(items, rows=rows, names=names, sources=sources):
            masks = {}
            for v in names:
                want = sources.get(v)
                masks[f"m_{v}"] = bytes(int(_source(item, case) == want and case.holds(v, want, _number(item)))
                                        for item in items)
            rows.append(len(items), masks=masks)

        layers.append(Layer(engine, frozenset(index_of[s] for s in sources.values()),
                            any(v not in sources for v in names), load, lambda matches: [()] * len(matches)))
        all_names.append(names)
    return LayerStack(layers), all_names


def _source(item, case):
    return case.layers[item.layer][0] if isinstance(item, Event) else None


def _number(item):
    return item.number if isinstance(item, Event) else item


def _shape_engine(item, case, names) -> tuple:
    if not isinstance(item, Event):
        return ("row", item)
    return (case.layers[item.layer][0], item.number,
            tuple((_shape_engine(x, case, names), names[item.layer][v]) for x, v in item.members))


def _engine(case: Case, chunks: list[int]):
    stack, names = _stack(case)
    top = []
    for count in chunks:
        top += stack.feed(count)
    top += stack.finish()
    return [_shape_engine(e, case, names) for e in top]


def _chunks(rng, n):
    out, left = [], n
    while left:
        out.append(rng.randint(1, left))
        left -= out[-1]
    return out


@pytest.mark.parametrize("seed", range(500))
def test_the_stack_agrees_with_the_oracle(seed):
    case = Case(seed)
    try:
        expected = _oracle(case)
    except ho.HierarchyError:
        expected = "error"
    for chunks in ([case.n] if case.n else [], _chunks(case.rng, case.n), [1] * case.n):
        try:
            got = _engine(case, chunks)
        except MatchRecognizeError:
            got = "error"
        assert got == expected, (case.layers, chunks)


def test_a_layer_reads_only_layers_below_it():
    case = Case(0)
    stack, _ = _stack(case)
    with pytest.raises(ValueError, match="only layers below it"):
        LayerStack([stack.layers[0]._replace(sources=frozenset({0}))])


def test_an_event_completing_at_a_row_waits_for_the_lower_layers_decision():
    """``A+`` (greedy, standard) decides its match only at the first row that is no A: the
    upper layer, reading rows and A-events, must not take row 2 before the event completing
    at row 1 is known."""
    case = Case(0)
    case.n = 3
    case.layers = [("l0", "A+", "standard", "PAST LAST ROW", (), {}),
                   ("l1", "A B C", "standard", "PAST LAST ROW", (), {"B": "l0"})]
    case.raw = {(v, r): (v == "A" and r < 2) or (v == "C" and r == 2) for v in "ABC" for r in range(3)}
    case.table = {("B", "l0", 1): True}
    expected = _oracle(case)
    assert expected == [("l1", 1, ((("row", 1), "A"), (("l0", 1, ((("row", 0), "A"), (("row", 1), "A"))), "B"),
                                   (("row", 2), "C")))]
    assert _engine(case, [1, 1, 1]) == _engine(case, [3]) == expected


def test_events_enter_an_upper_layer_in_key_order_whatever_their_report_order():
    """l0 (TO NEXT ROW) reports a match completing at row 3 before those completing at rows
    1 and 2; l1 still holds its frontier at row 2 (a greedy C+ from row 2).  l2 must read
    l0#2 (completing at 1) before l1#1 (completing at 1, a higher layer), not after."""
    case = Case(0)
    case.n = 4
    case.layers = [("l0", "A D D D | D", "standard", "TO NEXT ROW", (), {}),
                   ("l1", "B | C+", "standard", "PAST LAST ROW", (), {}),
                   ("l2", "E F", "standard", "PAST LAST ROW", (), {"E": "l0", "F": "l1"})]
    marks = {0: "A", 1: "DB", 2: "DC", 3: "DC"}
    case.raw = {(v, r): v in marks[r] for v in "ABCD" for r in range(4)}
    case.table = {(v, layer, k): True for v in "EF" for layer in ("l0", "l1") for k in range(1, 5)}
    expected = _oracle(case)
    assert [(e[2][0][0][:2], e[2][1][0][:2]) for e in expected] == [(("l0", 2), ("l1", 1)), (("l0", 4), ("l1", 2))]
    assert _engine(case, [1, 1, 1, 1]) == _engine(case, [4]) == expected


def test_layers_forget_what_no_matcher_and_no_reader_needs():
    """200 rows fed one at a time: each layer keeps a few items, not the partition."""
    case = Case(0)
    case.n = 200
    case.layers = [("l0", "A B", "standard", "PAST LAST ROW", (), {}),
                   ("l1", "E C", "flinkcep", "NO SKIP", (), {"E": "l0"})]
    case.raw = {(v, r): (v == "A") == (r % 3 == 0) if v != "C" else r % 3 == 2 for v in "ABC" for r in range(200)}
    case.table = {("E", "l0", k): True for k in range(1, 201)}
    stack, names = _stack(case)
    top, kept = [], []
    for _ in range(case.n):
        top += stack.feed(1)
        kept.append(max(len(part.items) for parts in stack.parts for part in parts.values()) +
                    max(len(r) for r in stack.released))
    top += stack.finish()
    assert [_shape_engine(e, case, names) for e in top] == _oracle(case)
    assert len(top) > 30 and max(kept) <= 4


@pytest.mark.parametrize("seed", range(6))
def test_a_span_window_is_min_start_and_max_end_from_the_start_to_the_item(seed):
    """``SpanWindow.admits(s, r)`` - asked start after start, item after item, with items
    forgotten on the way, as a matcher asks - is ``MAX(end) <= MIN(start) + T`` over the items
    s..r, NULLs ignored (a start or end all NULL: not admitted), on the compared-as-numbers
    path and on the expression's own (the same comparison under an AND)."""
    from udtf.expr import Call, Col, Lit
    from udtf.match.spans import SpanWindow

    rng = random.Random(seed)
    bound = Call("+", (Col("s", "timestamp"), Lit(10, "interval second")), ("timestamp", "interval second"),
                 "timestamp")
    plain = Call("<=", (Col("e", "timestamp"), bound), ("timestamp", "timestamp"), "boolean")
    for admits in (plain, Call("and", (Lit(True, "boolean"), plain), ("boolean", "boolean"), "boolean")):
        rows = Rows(values=["s", "e"])
        window = SpanWindow(10, admits, "s", "e", rows, True, "UTC")
        starts, ends = [], []
        for _ in range(8):
            fresh = [(None if rng.random() < .1 else rng.randrange(40),) for _ in range(rng.randrange(1, 12))]
            news = [v for v, in fresh]
            newe = [None if s is None or rng.random() < .1 else s + rng.randrange(8) for s in news]
            starts += news
            ends += newe
            rows.append(len(fresh), values={"s": news, "e": newe})
            drop = rng.randrange(rows.size // 2 + 1)
            rows.rebase(drop)
            for start in range(rows.size):
                for row in range(start, min(rows.size, start + rng.randrange(1, 9))):
                    lo = [v for v in starts[rows.dropped + start:rows.dropped + row + 1] if v is not None]
                    hi = [v for v in ends[rows.dropped + start:rows.dropped + row + 1] if v is not None]
                    expected = bool(lo and hi) and max(hi) <= min(lo) + 10
                    assert window.admits(start, row) is expected, (start, row, rows.dropped)


# ---- refined layers (rule 8): one matcher per key -------------------------------------------

class RefinedCase(Case):
    """``Case`` with a key per row (``g``: 0, 1 or None) and refined layers: a layer whose sources
    are all refined (and any layer over rows only) may have its own PARTITION BY g, run as one
    part per key; its events carry their key, and the conditions of events depend on it."""

    def __init__(self, seed: int):
        super().__init__(seed)
        rng = random.Random(f"refined {seed}")
        self.g = [rng.choice([0, 1, None]) for _ in range(self.n)]
        refined: set = set()
        layers = []
        for k, (name, pattern, semantics, skip, skip_to, sources) in enumerate(self.layers):
            top = k == len(self.layers) - 1
            refine = not top and all(s in refined for s in sources.values()) and rng.random() < .7
            if refine:
                refined.add(name)
            layers.append((name, pattern, semantics, skip, skip_to, sources, refine))
        self.refined = layers

    def holds_keyed(self, var: str, layer: str | None, number: int, g) -> bool:
        if layer is None:
            return self.raw[var, number]
        return random.Random(f"{var}{layer}{number}{g}").random() < self.p


def _refined_oracle(case: RefinedCase):
    layers = [ho.Layer(name, pattern, sources=sources, semantics=semantics, skip=skip, skip_to=skip_to,
                       define={v: (lambda e, m, v=v: case.holds_keyed(v, e.source, e.number, e["g"]))
                               for v in variables(parse_pattern(pattern))},
                       partition_by=("g",) if refine else ())
              for name, pattern, semantics, skip, skip_to, sources, refine in case.refined]
    top = ho.evaluate(layers, ho.raw_events([{"ts": r, "g": case.g[r]} for r in range(case.n)]))
    return [_shape_oracle_keyed(e) for e in top[case.refined[-1][0]]]


def _shape_oracle_keyed(e) -> tuple:
    if e.source is None:
        return ("row", e.number)
    return (e.source, e.number, e["g"], tuple((_shape_oracle_keyed(m.event), m.var) for m in e.members))


def _refined_stack(case: RefinedCase) -> tuple[LayerStack, list]:
    layers, all_names = [], []
    index_of = {name: i for i, (name, *_rest) in enumerate(case.refined)}

    def key_of(item):
        return item.values[0] if isinstance(item, Event) else case.g[item]

    for name, pattern, semantics, skip, skip_to, sources, refine in case.refined:
        node = parse_pattern(pattern)
        names = variables(node)

        def engine(names=names, node=node, semantics=semantics, skip=skip, skip_to=skip_to):
            rows = Rows(masks=[f"m_{v}" for v in names])
            conditions = Conditions([Condition(k, f"m_{v}", None) for k, v in enumerate(names)], [], names, rows)
            options = Options(semantics=Semantics(semantics),
                              skip=Skip(SkipMode(skip), tuple(names.index(v) for v in skip_to), ",".join(skip_to)))
            return matcher(compile_pattern(node, names), conditions, options)

        def load(parts, names=names, sources=sources):
            for _, engine, items in parts:
                masks = {}
                for v in names:
                    want = sources.get(v)
                    masks[f"m_{v}"] = bytes(int(_source(item, case) == want and
                                                case.holds_keyed(v, want, _number(item), key_of(item)))
                                            for item in items)
                engine.rows.append(len(items), masks=masks)

        # an event's values: the key of its refined partition (None when the layer is not refined)
        source_layers = frozenset(index_of[s] for s in sources.values())
        reads_rows = any(v not in sources for v in names)
        if refine:
            layers.append(RefinedLayer(source_layers, reads_rows, key_of, lambda g, engine=engine: engine(), load,
                                       lambda parts: [[(g,)] * len(found) for g, _, found in parts]))
        else:
            plain = engine()
            layers.append(Layer(plain, source_layers, reads_rows, lambda items, plain=plain, load=load:
                                load([(None, plain, items)]), lambda matches: [(None,)] * len(matches)))
        all_names.append(names)
    return LayerStack(layers), all_names


def _shape_engine_keyed(item, case, names) -> tuple:
    if not isinstance(item, Event):
        return ("row", item)
    return (case.refined[item.layer][0], item.number, item.values[0],
            tuple((_shape_engine_keyed(x, case, names), names[item.layer][v]) for x, v in item.members))


@pytest.mark.parametrize("seed", range(400))
def test_refined_layers_agree_with_the_oracle(seed):
    """Refined layers (a part per key, NULL keys a key of their own) fed in random chunks: the
    events, their keys, numbers per key, members and order as the oracle's partitions give them."""
    case = RefinedCase(seed)
    try:
        expected = _refined_oracle(case)
    except ho.HierarchyError:
        expected = "error"
    for chunks in ([case.n] if case.n else [], _chunks(case.rng, case.n), [1] * case.n):
        stack, names = _refined_stack(case)
        try:
            top = []
            for count in chunks:
                top += stack.feed(count)
            top += stack.finish()
            got = [_shape_engine_keyed(e, case, names) for e in top]
        except MatchRecognizeError:
            got = "error"
        assert got == expected, (case.refined, case.g, chunks)
    # (the parts a refined layer holds are the keys it met)
    assert sum(bool(r[-1]) for r in case.refined) == sum(type(layer) is RefinedLayer for layer in stack.layers)
