"""The multi-layer oracle (tests/hierarchy_oracle.py) on docs/hierarchies.md's worked
examples, its ordering and window rules, and its agreement with tests/oracle.py on one layer.

Pure Python, no Spark.  Times are integers (minutes in the doc's SQL)."""
from __future__ import annotations

import random

import pytest

import oracle
from hierarchy_oracle import Event, HierarchyError, Layer, evaluate, raw_events, span_within, summary


def _rows(cols, *values):
    return [dict(zip(cols, v)) for v in values]


def _span(members):
    return {"match_start": min(m.event.start for m in members), "match_end": max(m.event.end for m in members)}


HOT = lambda e, m: e["kind"] == "temp" and e["temp"] >= 80  # noqa: E731
OFF = lambda e, m: e["kind"] == "fan_off"  # noqa: E731


# ------------------------------------------------------------------------------------------
# docs/hierarchies.md, worked examples (the tables there are these results)
# ------------------------------------------------------------------------------------------

def test_example_1_a_spike_then_the_fan_stopping():
    readings = _rows(("ts", "kind", "temp"), (0, "temp", 70), (1, "temp", 85), (2, "temp", 90), (3, "temp", 88),
                     (4, "fan_off", None), (5, "temp", 95), (6, "temp", 96), (7, "temp", 50), (8, "fan_off", None))
    spike = Layer("spike", "HOT{2,}", define={"HOT": HOT}, within=3,
                  measures=lambda m: {"peak": max(x.event["temp"] for x in m), "readings": len(m)})
    top = Layer("top", "S OFF", sources={"S": "spike"},
                define={"S": lambda e, m: e["peak"] >= 90, "OFF": OFF},
                measures=lambda m: {"spike_start": m[0].event.start, "peak": m[0].event["peak"],
                                    "off_ts": m[1].event["ts"], **_span(m)})
    out = evaluate([spike, top], raw_events(readings))
    assert [summary(e) for e in out["spike"]] == [
        (1, 1, 3, "HOT:row#1 HOT:row#2 HOT:row#3", {"peak": 90, "readings": 3}),
        (2, 5, 6, "HOT:row#5 HOT:row#6", {"peak": 96, "readings": 2})]
    # spike 2 is followed by the reading at 7, not by the fan stopping at 8: strict contiguity
    assert [summary(e) for e in out["top"]] == [
        (1, 1, 4, "S:spike#1 OFF:row#4",
         {"spike_start": 1, "peak": 90, "off_ts": 4, "match_start": 1, "match_end": 4})]


def test_example_2_interval_rows_within_from_the_earliest_start():
    alarms = _rows(("a_start", "a_end", "sev"), (0, 2, "W"), (1, 5, "C"), (5, 6, "W"), (0, 7, "C"), (6, 9, "W"),
                   (8, 10, "C"))
    top = Layer("top", "W C", define={"W": lambda e, m: e["sev"] == "W", "C": lambda e, m: e["sev"] == "C"},
                within=6, measures=lambda m: {"c_start": m[1].event.start, **_span(m)})
    out = evaluate([top], raw_events(alarms, "a_start", "a_end"))
    # W [5,6] C [0,7]: 7 - 5 = 2 from the first member's start, but 7 - 0 = 7 > 6 from the earliest
    assert [summary(e) for e in out["top"]] == [
        (1, 0, 5, "W:row#0 C:row#1", {"c_start": 1, "match_start": 0, "match_end": 5}),
        (2, 6, 10, "W:row#4 C:row#5", {"c_start": 8, "match_start": 6, "match_end": 10})]


def _example_3():
    readings = _rows(("ts", "kind", "temp"),
                     (0, "temp", 85), (1, "temp", 86), (2, "temp", 60), (3, "temp", 90), (4, "temp", 91),
                     (5, "temp", 40), (6, "temp", 30), (7, "fan_off", None),
                     (10, "temp", 85), (11, "temp", 88), (12, "temp", 50), (20, "temp", 92), (21, "temp", 93),
                     (22, "temp", 10), (24, "fan_off", None),
                     (30, "temp", 85), (31, "temp", 86), (32, "temp", 50), (34, "temp", 90), (35, "temp", 95),
                     (36, "temp", 20), (45, "fan_off", None))
    spike = Layer("spike", "HOT{2,}", define={"HOT": HOT}, within=3,
                  measures=lambda m: {"peak": max(x.event["temp"] for x in m)})
    episode = Layer("episode", "S1 S2", sources={"S1": "spike", "S2": "spike"}, within=10,
                    measures=lambda m: {"spikes": len(m)})
    incident = Layer("incident", "E R*? OFF", sources={"E": "episode"}, define={"OFF": OFF}, within=12,
                     measures=_span)
    return [spike, episode, incident], raw_events(readings)


def test_example_3_three_layers_and_their_windows():
    out = evaluate(*_example_3())
    assert [(e.number, e.start, e.end) for e in out["spike"]] == [
        (1, 0, 1), (2, 3, 4), (3, 10, 11), (4, 20, 21), (5, 30, 31), (6, 34, 35)]
    # spikes 3-4 and 4-5 span 11 minutes > 10: no episode; spikes 5-6 span 5
    assert [summary(e) for e in out["episode"]] == [
        (1, 0, 4, "S1:spike#1 S2:spike#2", {"spikes": 2}),
        (2, 30, 35, "S1:spike#5 S2:spike#6", {"spikes": 2})]
    # episode 2 and the fan stopping at 45 span 15 minutes > 12: the global window
    assert [summary(e) for e in out["incident"]] == [
        (1, 0, 7, "E:episode#1 R:row#5 R:row#6 OFF:row#7", {"match_start": 0, "match_end": 7})]


def test_example_4_skip_modes_and_match_numbers_per_layer():
    readings = _rows(("ts", "temp"), (0, 85), (1, 90), (2, 95), (3, 60), (4, 88), (5, 91), (6, 50))
    hot = lambda e, m: e["temp"] >= 80  # noqa: E731
    pair = Layer("pair", "HOT HOT", define={"HOT": hot}, skip="TO NEXT ROW",
                 measures=lambda m: {"hi": m[1].event["temp"]})
    cooling = Layer("cooling", "HOT COOL", define={"HOT": hot, "COOL": lambda e, m: e["temp"] < 80},
                 measures=lambda m: {"lo": m[1].event["temp"]})
    top = Layer("top", "P+ D", sources={"P": "pair", "D": "cooling"},
                measures=lambda m: {"pairs": sum(x.var == "P" for x in m), "first_pair": m[0].event.number,
                                    "cool_no": m[-1].event.number, **_span(m)})
    out = evaluate([pair, cooling, top], raw_events(readings))
    assert [(e.number, e.start, e.end) for e in out["pair"]] == [(1, 0, 1), (2, 1, 2), (3, 4, 5)]
    assert [(e.number, e.start, e.end) for e in out["cooling"]] == [(1, 2, 3), (2, 5, 6)]
    assert [summary(e) for e in out["top"]] == [
        (1, 0, 3, "P:pair#1 P:pair#2 D:cooling#1",
         {"pairs": 2, "first_pair": 1, "cool_no": 1, "match_start": 0, "match_end": 3}),
        (2, 4, 6, "P:pair#3 D:cooling#2",
         {"pairs": 1, "first_pair": 3, "cool_no": 2, "match_start": 4, "match_end": 6})]


def test_example_5_alarms_per_sensor_incidents_per_zone():
    """sql_examples/sensor_incidents.sql in one statement: the alarm layer refines the zone's
    partition by sensor (MATCH_NUMBER per sensor); the top reads alarms of all sensors."""
    readings = _rows(("ts", "sensor", "temp", "smoke"),
                     (0, "s1", 65, 0.0), (1, "s2", 20, 0.4), (2, "s1", 66, 0.0), (3, "s2", 20, 0.5),
                     (4, "s1", 30, 0.0), (5, "s2", 20, 0.0), (10, "s2", 20, 0.6), (11, "s2", 20, 0.7),
                     (12, "s2", 20, 0.0), (20, "s1", 70, 0.0), (21, "s1", 71, 0.0), (22, "s1", 20, 0.0),
                     (30, "s2", 20, 0.3), (31, "s2", 20, 0.3), (32, "s2", 20, 0.0))
    alarm = Layer("alarm", "H{2,} | S{2,}", partition_by=("sensor",), within=5,
                  define={"H": lambda e, m: e["temp"] >= 60, "S": lambda e, m: e["smoke"] >= 0.3},
                  measures=lambda m: {"kind": "heat" if m[0].var == "H" else "smoke"})
    top = Layer("top", "HEAT SMOKE", sources={"HEAT": "alarm", "SMOKE": "alarm"}, within=10,
                define={"HEAT": lambda e, m: e["kind"] == "heat",
                        "SMOKE": lambda e, m: e["kind"] == "smoke" and e["sensor"] != m[0].event["sensor"]},
                measures=lambda m: {"heat_sensor": m[0].event["sensor"], "smoke_sensor": m[1].event["sensor"],
                                    **_span(m)})
    out = evaluate([alarm, top], raw_events(readings))
    assert [(e.values["sensor"], e.number, e.start, e.end, e.values["kind"]) for e in out["alarm"]] == [
        ("s1", 1, 0, 2, "heat"), ("s2", 1, 1, 3, "smoke"), ("s2", 2, 10, 11, "smoke"), ("s1", 2, 20, 21, "heat"),
        ("s2", 3, 30, 31, "smoke")]
    # heat 2 then smoke 3 span 11 minutes > 10
    assert [summary(e) for e in out["top"]] == [
        (1, 0, 3, "HEAT:alarm#1 SMOKE:alarm#1",
         {"heat_sensor": "s1", "smoke_sensor": "s2", "match_start": 0, "match_end": 3})]


def test_a_refined_layer_needs_its_keys_on_every_item():
    rows = raw_events(_rows(("ts", "k"), (0, "a"), (1, "a")))
    low = Layer("low", "X")
    with pytest.raises(ValueError, match="partitions by"):
        evaluate([low, Layer("top", "L", sources={"L": "low"}, partition_by=("k",))], rows)
    with pytest.raises(ValueError, match="measure named like"):
        evaluate([Layer("low", "X", partition_by=("k",), measures=lambda m: {"k": 1})], rows)


# ------------------------------------------------------------------------------------------
# ordering, windows, errors
# ------------------------------------------------------------------------------------------

def test_an_event_comes_after_the_row_completing_it_then_by_layer_then_number():
    """Row 1 completes a match of A (rows 0-1) and of B (row 1); the top sees row 0, row 1,
    A#1, B#1, row 2 (CLASSIFIER-like trace through the top's variables)."""
    rows = raw_events(_rows(("ts",), (0,), (1,), (2,)))
    a = Layer("a", "X Y")
    b = Layer("b", "Y", define={"Y": lambda e, m: e["ts"] == 1})
    top = Layer("top", "R R EA EB R", sources={"EA": "a", "EB": "b"})
    (match,) = evaluate([a, b, top], rows)["top"]
    assert summary(match)[3] == "R:row#0 R:row#1 EA:a#1 EB:b#1 R:row#2"
    assert match.last_row == 2


def test_the_top_reads_only_the_layers_its_variables_range_over():
    rows = raw_events(_rows(("ts",), (0,), (1,), (2,), (3,)))
    pairs = Layer("pairs", "X X", skip="TO NEXT ROW")
    # no raw variable: the sequence is the three pairs alone, contiguous
    (match,) = evaluate([pairs, Layer("top", "P{3}", sources={"P": "pairs"})], rows)["top"]
    assert (match.start, match.end, summary(match)[3]) == (0, 3, "P:pairs#1 P:pairs#2 P:pairs#3")


def test_a_layer_reads_only_layers_below_it():
    with pytest.raises(ValueError, match="layer low reads"):
        evaluate([Layer("low", "P", sources={"P": "high"}), Layer("high", "X")], raw_events([{"ts": 0}]))


def test_a_layers_skip_error_is_the_hierarchys():
    rows = raw_events(_rows(("ts",), (0,), (1,)))
    with pytest.raises(HierarchyError) as err:
        evaluate([Layer("low", "A B?", define={"B": lambda e, m: False}, skip="TO LAST", skip_to=("B",))], rows)
    assert (err.value.layer, err.value.kind) == ("low", "absent")


def test_empty_matches_are_no_events_but_keep_their_number():
    rows = raw_events(_rows(("ts", "v"), (0, 0), (1, 1)))
    low = Layer("low", "A*", define={"A": lambda e, m: e["v"] == 1})
    events = evaluate([low], rows)["low"]
    assert [(e.number, e.start) for e in events] == [(2, 1)]


def test_a_lower_events_interval_widens_the_upper_span():
    """The upper WITHIN is measured over the lower members' whole intervals."""
    rows = raw_events(_rows(("ts",), (0,), (5,), (6,)))
    low = Layer("low", "X X", define={"X": lambda e, m: e["ts"] <= 5})
    for within, found in ((6, 1), (5, 0)):
        top = Layer("top", "L R", sources={"L": "low"}, within=within)
        assert len(evaluate([low, top], rows)["top"]) == found


def test_rows_must_be_sorted_by_their_end():
    with pytest.raises(ValueError, match="sorted"):
        raw_events(_rows(("s", "e"), (0, 5), (1, 4)), "s", "e")


def test_span_within_is_inclusive():
    events = [Event(None, 0, 2, 3, {}, 0), Event(None, 1, 0, 7, {}, 1)]
    assert span_within(events, 7) and not span_within(events, 6)


# ------------------------------------------------------------------------------------------
# one layer over instantaneous rows is tests/oracle.py with its WITHIN
# ------------------------------------------------------------------------------------------

PATTERNS = ["A B", "A B+ C", "A+ B?", "(A | B)+ C", "A B* C", "A{2,3}", "A+? B"]
FLINK_PATTERNS = ["A -> B", "A ->> B", "A B+ C", "A -> B+ -> C", "A+ B"]


def _masks(rng, n):
    return {v: [rng.random() < .5 for _ in range(n)] for v in "ABC"}


@pytest.mark.parametrize("seed", range(60))
def test_one_layer_agrees_with_the_flat_oracle(seed):
    rng = random.Random(seed)
    n = rng.randint(0, 7)
    masks = _masks(rng, n)
    ts = sorted(rng.randint(0, 6) for _ in range(n))
    rows = raw_events([{"ts": t, "k": k} for k, t in enumerate(ts)])
    define = {v: (lambda e, m, mask=mask: mask[e["k"]]) for v, mask in masks.items()}
    within = rng.choice([None, 1, 3])
    if seed % 2:
        pattern, skip = rng.choice(PATTERNS), rng.choice(["PAST LAST ROW", "TO NEXT ROW"])
        ref = oracle.standard(pattern, n, oracle.Conditions.from_masks(masks), skip=skip, within=within, order=ts)
        semantics = "standard"
    else:
        pattern, skip = rng.choice(FLINK_PATTERNS), rng.choice(["NO SKIP", "TO NEXT ROW", "PAST LAST ROW"])
        ref = oracle.flinkcep(pattern, n, oracle.Conditions.from_masks(masks), skip=skip, within=within, order=ts)
        semantics = "flinkcep"
    layer = Layer("top", pattern, define=define, semantics=semantics, skip=skip, within=within)
    got = evaluate([layer], rows)["top"]
    expected = [(k, [(r, v) for r, v, _ in m[3]]) for k, m in enumerate(ref, start=1) if m[3]]
    assert [(e.number, [(x.event.number, x.var) for x in e.members]) for e in got] == expected


@pytest.mark.parametrize("seed", range(40))
def test_a_layer_of_one_row_events_is_a_filter(seed):
    """Upper variables over a layer whose matches are single rows (``X``, rows where c holds)
    see exactly those rows, in order, with their numbers: the hierarchy equals the flat
    pattern over the filtered partition (WITHIN included)."""
    rng = random.Random(1000 + seed)
    n = rng.randint(0, 8)
    ts = sorted(rng.randint(0, 8) for _ in range(n))
    rows = raw_events([{"ts": t, "c": rng.random() < .7, "a": rng.random() < .5, "b": rng.random() < .5}
                       for t in ts])
    low = Layer("low", "X", define={"X": lambda e, m: e["c"]}, measures=lambda m: dict(m[0].event.values))
    pattern, skip = rng.choice(PATTERNS), rng.choice(["PAST LAST ROW", "TO NEXT ROW"])
    within = rng.choice([None, 2, 4])
    top = Layer("top", pattern, sources={v: "low" for v in "ABC"}, skip=skip, within=within,
                define={"A": lambda e, m: e["a"], "B": lambda e, m: e["b"]})
    kept = [e for e in rows if e["c"]]
    masks = {"A": [e["a"] for e in kept], "B": [e["b"] for e in kept]}
    ref = oracle.standard(pattern, len(kept), oracle.Conditions.from_masks(masks), skip=skip, within=within,
                          order=[e.start for e in kept])
    got = evaluate([low, top], rows)["top"]
    expected = [(k, [(kept[r].number, v) for r, v, _ in m[3]]) for k, m in enumerate(ref, start=1) if m[3]]
    assert [(e.number, [(x.event.members[0].event.number, x.var) for x in e.members]) for e in got] == expected


# ------------------------------------------------------------------------------------------
# a hierarchy of relaxed sequences is its flat pattern (the bench's equivalence)
# ------------------------------------------------------------------------------------------

def _flat_rows(event) -> list:
    """The raw rows under an event, with their variables, in row order."""
    out = []
    for m in event.members:
        out += [(m.event.number, m.var)] if m.event.source is None else _flat_rows(m.event)
    return sorted(out)


def _after_previous_members(e, members):
    return all(m.event.end < e.start for m in members[:-1])


@pytest.mark.parametrize("junction", ["->>", "->"])
@pytest.mark.parametrize("seed", range(80))
def test_a_hierarchy_of_relaxed_sequences_is_its_flat_pattern(seed, junction):
    """The seed's setting (section 5.3, experiment 1): module i is a sequence of L elements,
    one of them a box for module i + 1.  With skip-till-any-match (``->>``) or skip-till-next
    (``->``), NO SKIP, a box taken only after the members before it (``EVENT_START(S) >
    ...``) and WITHIN on every layer, the hierarchy's top matches are the flat pattern's (the
    boxes substituted), run for run: the bench (issue 30, item 4) compares the two on equal
    answers.  (With ``->`` the first lower match after the members is the flat run's: lower
    matches completing at one row come in start order.)"""
    rng = random.Random(seed)
    depth, types = rng.choice([2, 2, 3]), "ab"
    modules = []  # top first: [(variable, type or None for the box)]
    for level in range(depth):
        length = rng.choice([2, 2, 3])
        box = rng.randrange(length) if level < depth - 1 else None
        modules.append([(f"S{level}", None) if k == box else (f"V{level}{k}", rng.choice(types))
                        for k in range(length)])
    within = rng.choice([None, 6, 9])
    layers = []
    for level in reversed(range(depth)):
        elements = modules[level]
        define = {v: (lambda e, m, t=t: e["type"] == t) for v, t in elements if t is not None}
        sources = {v: f"m{level + 1}" for v, t in elements if t is None}
        define.update({v: _after_previous_members for v in sources})
        layers.append(Layer(f"m{level}", f" {junction} ".join(v for v, _ in elements), sources=sources, define=define,
                            semantics="flinkcep", skip="NO SKIP", within=within))

    def flat(level):
        return [x for v, t in modules[level] for x in (flat(level + 1) if t is None else [(v, t)])]

    n = rng.randint(5, 9)
    ts = sorted(rng.sample(range(12), n))
    rows = [{"ts": t, "type": rng.choice(types)} for t in ts]
    elements = flat(0)
    masks = {v: [row["type"] == t for row in rows] for v, t in elements}
    ref = oracle.flinkcep(f" {junction} ".join(v for v, _ in elements), n, oracle.Conditions.from_masks(masks),
                          skip="NO SKIP", within=within, order=ts)
    got = evaluate(layers, raw_events(rows))["m0"]
    assert sorted(_flat_rows(e) for e in got) == sorted([(r, v) for r, v, _ in m[3]] for m in ref)


@pytest.mark.parametrize("seed", range(60))
def test_the_benchs_hierarchy_of_earliest_chains_is_its_flat_pattern(seed):
    """bench/hierarchy.py's shape: module i is ``S (R | Q)*? V2 ... (R | Q)*? VL`` (the box S
    first, gaps over rows R and skipped lower events Q), the lowest ``V1 R*? ... VL``, standard
    semantics, AFTER MATCH SKIP TO NEXT ROW, WITHIN on every module.  Per start, each module's
    match is its earliest chain; a lower event completing after the box starts after it, so the
    skipped Q do not widen the span: the top's matches are the flat pattern's, element rows and
    spans alike."""
    rng = random.Random(5000 + seed)
    depth, length, types = rng.choice([1, 2, 3]), rng.choice([2, 3]), "abc"[:rng.choice([2, 3])]
    kinds = [rng.choice(types) for _ in range(depth * (length - 1) + 1)]
    modules = [kinds[:length]] + [kinds[length + (i - 1) * (length - 1):length + i * (length - 1)]
                                  for i in range(1, depth)]
    within = rng.choice([None, 5, 8, 12])

    def element(t):
        return lambda e, m: e["type"] == t and e["v"]

    layers = []
    for i, module in enumerate(modules):
        if i == 0:
            names = [f"V{j + 1}" for j in range(length)]
            pattern, sources = " R*? ".join(names), {}
        else:
            names = [f"V{j + 2}" for j in range(length - 1)]
            pattern, sources = " (R | Q)*? ".join(["S", *names]), {"S": f"m{i - 1}", "Q": f"m{i - 1}"}
        layers.append(Layer(f"m{i}", pattern, sources=sources, skip="TO NEXT ROW", within=within,
                            define={n: element(t) for n, t in zip(names, module)}))
    ts = sorted(rng.sample(range(40), rng.randint(4, 24)))
    rows = [{"ts": t, "type": rng.choice(types), "v": rng.random() < .7} for t in ts]
    names = [f"V{j + 1}" for j in range(len(kinds))]
    ref = oracle.standard(" R*? ".join(names), len(rows),
                          oracle.Conditions({n: (lambda r, m, t=t: rows[r]["type"] == t and rows[r]["v"])
                                             for n, t in zip(names, kinds)}),
                          skip="TO NEXT ROW", within=within, order=ts)

    def elements(event):  # the element rows under an event (gaps and skipped events left out)
        return sorted(r for m in event.members if m.var not in ("R", "Q")
                      for r in ([m.event.number] if m.event.source is None else elements(m.event)))

    expected = sorted([r for r, v, _ in m[3] if v != "R"] for m in ref if m[0] == "match")
    got = [(e.start, e.end, elements(e)) for e in evaluate(layers, raw_events(rows))[f"m{depth - 1}"]]
    assert sorted(chain for *_, chain in got) == expected
    assert all((start, end) == (ts[chain[0]], ts[chain[-1]]) for start, end, chain in got)
