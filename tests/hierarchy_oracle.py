"""Brute-force reference semantics of event hierarchies (docs/hierarchies.md; seed 002).

A hierarchy is a list of layers, lowest first; the last one is the statement's own pattern
(the top).  Each layer is an ordinary MATCH_RECOGNIZE evaluated by ``tests/oracle.py`` over
its own *input sequence*, built here, and each of its matches becomes one *event* of the
layers above.  Evaluation is layer by layer over the whole partition: the reference the
one-pass engine (the EH-Tree's super nodes) must reproduce.

Invariants (the design's semantics, section "Semantics" of docs/hierarchies.md):

* Every event has an interval ``[start, end]``: a raw row's are its PERIOD columns (both the
  ORDER BY key when there is no PERIOD); a match's are the earliest start and the latest end
  of its members (raw rows and lower events alike), NULL bounds ignored as SQL's MIN / MAX
  ignore them (NULL when every member's is).  Empty matches are no events.
* A layer's input sequence holds the raw rows if one of its variables ranges over raw rows,
  and the events of every lower layer one of its variables ranges over (``sources``), ordered
  by ``(last_row, level, number)``: ``last_row`` is the raw row position at which the event
  completes (the last raw row under it), ``level`` 0 for a raw row and 1 + the layer's index
  for a layer's event, ``number`` the row position or the event's MATCH_NUMBER.  So an event
  comes right after the raw row that completes it, before the next raw row, and after all its
  members (a layer only reads layers listed before it).
* A variable ranging over layer L takes only L's events, a raw variable only raw rows; the
  DEFINE condition is conjoined.  ``within``: a take is admitted only if the span of the
  mapping with it, ``max(end) - min(start)``, stays within (monotone, so the check prunes),
  and never when a member's start or end is NULL.
* A layer's matches are numbered 1, 2, ... in its report order (MATCH_NUMBER per layer, empty
  matches counted); every non-empty match of a layer, as its skip mode reports them, is an
  event of the layers above.
* A layer with its own PARTITION BY (``partition_by``) is evaluated per value of those
  columns within the partition, numbering per refined partition; its input items must all
  have those columns (rows do; events of a layer refined by them carry them), and its events
  are listed in completing-row order, then MATCH_NUMBER (no two refined partitions share a
  completing row).  Keys group as Python's equality (a test wanting NaN = NaN passes one NaN
  object).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import oracle
from udtf.pattern import parse_pattern, variables


@dataclass(frozen=True, eq=False)
class Event:
    """A raw row (``source`` None, ``number`` its 0-based position) or a layer's match
    (``source`` the layer, ``number`` its MATCH_NUMBER).  ``values``: the raw row's columns
    or the layer's MEASURES."""

    source: str | None
    number: int
    start: Any
    end: Any
    values: Mapping[str, Any]
    last_row: int
    members: tuple["Member", ...] = ()

    def __getitem__(self, name: str) -> Any:
        return self.values.get(name)


class Member(NamedTuple):
    """One member of a match: the event and the pattern variable it is mapped to."""

    event: Event
    var: str


# define[var](event, members) -> bool; members = the mapping so far, the candidate included
Condition = Callable[[Event, tuple[Member, ...]], bool]
Measures = Callable[[tuple[Member, ...]], Mapping[str, Any]]


@dataclass(frozen=True)
class Layer:
    """One MATCH_RECOGNIZE of the hierarchy.  ``sources[var]`` names the lower layer ``var``
    ranges over (absent: raw rows).  ``skip`` None is the semantics' default (PAST LAST ROW
    for "standard", NO SKIP for "flinkcep").  ``partition_by``: the LAYER's own PARTITION BY
    columns, refining the statement's partition; its events carry them as columns."""

    name: str
    pattern: str
    sources: Mapping[str, str] = field(default_factory=dict)
    define: Mapping[str, Condition] = field(default_factory=dict)
    measures: Measures = lambda members: {}
    semantics: str = "standard"
    skip: str | None = None
    skip_to: tuple[str, ...] = ()
    within: Any = None
    partition_by: tuple[str, ...] = ()


class HierarchyError(Exception):
    """A layer ended with the standard's AFTER MATCH SKIP runtime error."""

    def __init__(self, layer: str, kind: str):
        super().__init__(f"layer {layer}: SKIP TO target {kind}")
        self.layer, self.kind = layer, kind


def raw_events(rows: Sequence[Mapping[str, Any]], start: str = "ts", end: str | None = None) -> list[Event]:
    """The partition's rows (sorted by ``end``, which defaults to ``start``; NULL ends anywhere)
    as events."""
    end = end or start
    events = [Event(None, k, row[start], row[end], row, k) for k, row in enumerate(rows)]
    ends = [e.end for e in events if e.end is not None]
    if any(a > b for a, b in zip(ends, ends[1:])):
        raise ValueError("rows must be sorted by the PERIOD's end")
    return events


def evaluate(layers: Sequence[Layer], rows: Sequence[Event]) -> dict[str, list[Event]]:
    """Every layer's events (its matches, in report order) over one partition."""
    out: dict[str, list[Event]] = {}
    for layer in layers:
        unknown = set(layer.sources.values()) - set(out)
        if unknown:
            raise ValueError(f"layer {layer.name} reads {sorted(unknown)}: not a layer below it")
        out[layer.name] = _run(layer, _input(layer, rows, out, [x.name for x in layers]))
    return out


def _input(layer: Layer, rows: Sequence[Event], done: Mapping[str, list[Event]], order: list[str]) -> list[Event]:
    node = parse_pattern(layer.pattern)
    used = {layer.sources.get(v) for v in variables(node)}
    seq = list(rows) if None in used else []
    for name in sorted(used - {None}, key=order.index):
        seq += done[name]

    def key(e: Event):
        return e.last_row, 0 if e.source is None else 1 + order.index(e.source), e.number

    return sorted(seq, key=key)


def span_within(events: Sequence[Event], within: Any) -> bool:
    if any(e.start is None or e.end is None for e in events):
        return False
    return max(e.end for e in events) - min(e.start for e in events) <= within


def _bound(values, pick):
    """SQL's MIN / MAX (``pick``): NULLs ignored, NULL when all are."""
    known = [v for v in values if v is not None]
    return pick(known) if known else None


def _run(layer: Layer, seq: list[Event]) -> list[Event]:
    if not layer.partition_by:
        return _run_partition(layer, seq, {})
    groups: dict[tuple, list[Event]] = {}
    for e in seq:
        if any(k not in e.values for k in layer.partition_by):
            raise ValueError(f"layer {layer.name} partitions by {layer.partition_by}, which "
                             f"{e.source or 'a row'} lacks")
        groups.setdefault(tuple(e[k] for k in layer.partition_by), []).append(e)
    events = [e for values, group in groups.items()
              for e in _run_partition(layer, group, dict(zip(layer.partition_by, values)))]
    events.sort(key=lambda e: (e.last_row, e.number))
    if any(a.last_row == b.last_row and _key(a, layer) != _key(b, layer) for a, b in zip(events, events[1:])):
        raise ValueError(f"layer {layer.name}: two refined partitions complete at one row")
    return events


def _key(event: Event, layer: Layer) -> tuple:
    return tuple(event[k] for k in layer.partition_by)


def _run_partition(layer: Layer, seq: list[Event], keys: Mapping[str, Any]) -> list[Event]:
    def condition(var):
        own = layer.define.get(var)
        source = layer.sources.get(var)

        def holds(row, mapped):
            event = seq[row]
            if event.source != source:
                return False
            return own is None or own(event, tuple(Member(seq[r], v) for r, v, _ in mapped))

        return holds

    names = variables(parse_pattern(layer.pattern))
    conds = oracle.Conditions({v: condition(v) for v in names})
    admits = None
    if layer.within is not None:
        admits = lambda mapped: span_within([seq[r] for r, _, _ in mapped], layer.within)  # noqa: E731
    if layer.semantics == "standard":
        found = oracle.standard(layer.pattern, len(seq), conds, skip=layer.skip or "PAST LAST ROW",
                                skip_to=layer.skip_to, admits=admits)
    elif layer.semantics == "flinkcep":
        found = oracle.flinkcep(layer.pattern, len(seq), conds, skip=layer.skip or "NO SKIP",
                                skip_to=layer.skip_to, admits=admits)
    else:
        raise ValueError(layer.semantics)
    events = []
    for number, result in enumerate(found, start=1):
        if result[0] == "error":
            raise HierarchyError(layer.name, result[1])
        members = tuple(Member(seq[r], v) for r, v, _ in result[3])
        if not members:
            continue  # an empty match has no interval: no event (it keeps its MATCH_NUMBER)
        events.append(Event(layer.name, number, _bound((m.event.start for m in members), min),
                            _bound((m.event.end for m in members), max), _columns(layer, keys, members),
                            max(m.event.last_row for m in members), members))
    return events


def _columns(layer: Layer, keys: Mapping[str, Any], members: tuple[Member, ...]) -> dict:
    """An event's columns: its refined partition's keys and its MEASURES (distinct names)."""
    measures = dict(layer.measures(members))
    if set(measures) & set(keys):
        raise ValueError(f"layer {layer.name}: a measure named like a PARTITION BY column")
    return {**keys, **measures}


def summary(event: Event) -> tuple:
    """``(number, start, end, members as 'VAR:source#number', measures)`` for assertions."""
    members = " ".join(f"{m.var}:{m.event.source or 'row'}#{m.event.number}" for m in event.members)
    return event.number, event.start, event.end, members, dict(event.values)
