"""Event hierarchies in one pass over a partition (docs/hierarchies.md, seed 002's EH-Tree).

A ``LayerStack`` drives one ordinary matcher per layer, lowest first, the top last.  Each
layer reads its own input sequence: the partition's rows (if it reads rows) and the
completed matches (``Event``) of the lower layers it reads, ordered by ``key``:
(completing row, level, MATCH_NUMBER).  A lower layer's completed matches go straight into
the inputs of the layers above it - the seed's super nodes - with no materialization, shuffle
or second pass in between.

Invariants:

* An item enters a layer only when every item ordered before it is known: a layer's
  ``frontier`` is the row before which all of its events are known (events completing at a
  row < frontier), and a reader takes the items completing before the minimum of its sources'
  frontiers and of the rows arrived (``_bound``).  A matcher's future matches start at or after
  its ``low_water()``, so they complete at or after that item's completing row.
* Events leave a layer sorted by ``key``: those completing before the frontier are released
  in key order, and no event completing before a frontier is reported after it.
* A layer's match numbers are its matcher's MATCH_NUMBERs; an empty match is no event.

What a raw row or an event contributes to a layer's rows (masks, values) is the caller's
``Layer.load``, and what a match is worth (an event's columns; the top's output) its
``Layer.measures``, called with every match the layer's matcher reports, empty ones included,
while its rows are still held; the stack only decides which items enter which layer, and when.  After each
feed a layer forgets the items before its matcher's low water but ``lookback`` (as the UDTF
forgets rows), and a layer's released events once every reader took them.  A layer's window
over member intervals is its plan's business (``plan.Span``, checked by its matcher:
``match.spans``; docs/hierarchies.md, "Evaluation"); on a stream,
``feed``'s horizon lets each matcher close its windows (``Matcher.closed``) without a row.

A *refined* layer (``RefinedLayer``: a LAYER with its own PARTITION BY, rule 8) has one part
per refined key met in the partition, each its own matcher over rows of its own (its own
MATCH_NUMBERs): its input is split by ``RefinedLayer.refine`` (an item's key), in order, and its
frontier is the least of its parts'.  What the parts share is compiled once per layer (the
caller's): a step loads every fed part's new items at once and values every fed part's matches
at once.  Its events still leave it in key order: a part's events complete at rows of its own
key, so two parts' events never share a completing row.
"""
from __future__ import annotations

from typing import Callable, Hashable, NamedTuple, Union

from .base import Matcher, forget
from .runs import expand

INF = float("inf")


class Event(NamedTuple):
    """A layer's completed match: ``members`` are ``(item, variable index)`` in the layer's
    input order, an item being a row number of the partition or a lower ``Event``; ``values``:
    what its layer's ``measures`` made of it."""
    layer: int
    number: int
    completing: int
    members: tuple
    values: tuple = ()


Item = Union[int, Event]


def key(item: Item) -> tuple:
    """The order of a layer's input: the completing row, rows before events, lower layers'
    events before upper ones', then MATCH_NUMBER."""
    if isinstance(item, Event):
        return item.completing, item.layer + 1, item.number
    return item, 0, 0


def completing(item: Item) -> int:
    return item.completing if isinstance(item, Event) else item


class Layer(NamedTuple):
    """A layer over the statement's partition: its matcher (over rows ``load`` appends to), the
    lower layers it reads (indexes in the stack, each below it), whether it reads the
    partition's rows, and how many items before its low water its conditions may read back
    (PREV)."""
    matcher: Matcher
    sources: frozenset
    reads_rows: bool
    load: Callable[[list], None]  # append the items' columns to ``matcher.rows``
    measures: Callable[[list], list]  # one tuple of values per match the matcher reported
    lookback: int = 0


class RefinedLayer(NamedTuple):
    """A layer with its own PARTITION BY: one matcher per refined key (``part(key)``: a fresh
    one over rows of its own, which only that key's items enter, in order), the fields as
    ``Layer``'s.  ``load`` and ``measures`` serve every part a step feeds at once: ``load``
    appends each part's new items to its matcher's rows, ``measures`` gives each part's
    matches their values (per part, one tuple per match), while their rows are held."""
    sources: frozenset
    reads_rows: bool
    refine: Callable[[Item], Hashable]  # an item's refined key
    part: Callable[[Hashable], Matcher]
    load: Callable[[list], None]  # [(key, matcher, new items)]
    measures: Callable[[list], list]  # [(key, matcher, matches)] -> [[tuple per match] per part]
    lookback: int = 0


class Part:
    """One matcher of a layer (a refined layer's for ``key``; None: the layer's only one), its
    input not yet forgotten, and ``pending``: the completing row of its first item a future
    match may still start at (INF if none) - what the part adds to its layer's frontier.  A
    part that gets no new item keeps its matcher's state, so its ``pending`` stands."""
    __slots__ = ("key", "matcher", "items", "pending")

    def __init__(self, key: Hashable, matcher: Matcher):
        self.key = key
        self.matcher = matcher
        self.items: list = []
        self.pending = INF


class LayerStack:
    """All layers over one partition: ``feed(count)`` after ``count`` more rows arrived (any
    number of times), then ``finish()``; both return the top layer's new events in its report
    order.  ``reset()`` starts the next partition (the caller clears the layers' rows)."""

    def __init__(self, layers: list[Layer | RefinedLayer]):
        for i, layer in enumerate(layers):
            if any(not 0 <= s < i for s in layer.sources) or not (layer.sources or layer.reads_rows):
                raise ValueError(f"layer {i} reads {sorted(layer.sources)}: only layers below it")
        self.layers = layers
        self.reset()

    def reset(self):
        n = len(self.layers)
        self.size = 0  # the partition's rows arrived
        # each layer's parts: {None: its matcher's} unless refined, then {refined key: its part}
        self.parts: list[dict] = [{} if type(layer) is RefinedLayer else {None: Part(None, layer.matcher)}
                                  for layer in self.layers]
        self.rows_fed = [0] * n  # the partition's rows already in each layer's input
        self.taken = [dict.fromkeys(layer.sources, 0) for layer in self.layers]  # per source: released events read
        self.held: list[list] = [[] for _ in range(n)]  # events completing at or after the frontier
        self.released: list[list] = [[] for _ in range(n)]  # events before the frontier, in key order
        self.frontier = [0] * n
        for layer in self.layers:
            if type(layer) is Layer:
                layer.matcher.reset()

    def matchers(self) -> list[Matcher]:
        """Each layer's matcher, the top's last: a stack without refined layers (a stream's)."""
        refined = [i for i, layer in enumerate(self.layers) if type(layer) is not Layer]
        if refined:
            raise TypeError(f"layers {refined} are refined: a matcher per key")
        return [layer.matcher for layer in self.layers]

    def decided(self, i: int) -> bool:
        """Has every matcher of layer ``i`` decided every item it read (its low water past them)?"""
        return all(part.matcher.low_water() >= len(part.items) for part in self.parts[i].values())

    def feed(self, count: int = 0, horizon=None) -> list[Event]:
        """(``horizon``: every row still to come lies, or ends, past it - a stream's watermark.)"""
        self.size += count
        return self._step(final=False, horizon=horizon)

    def finish(self) -> list[Event]:
        return self._step(final=True)

    def _bound(self, i: int, final: bool) -> float:
        """Items completing before this row may enter layer ``i``."""
        layer = self.layers[i]
        limits = [self.frontier[s] for s in layer.sources]
        if layer.reads_rows:
            limits.append(INF if final else self.size)
        return min(limits)

    def _step(self, final: bool, horizon=None) -> list[Event]:
        top = len(self.layers) - 1
        out: list[Event] = []
        for i, layer in enumerate(self.layers):
            bound = self._bound(i, final)
            # every item still to come ends past the horizon once the layers it reads released
            # every event they know of (those to come complete at rows to come)
            ahead = horizon if all(self.frontier[s] >= self.size for s in layer.sources) else None
            visits = self._split(i, self._arrivals(i, bound), every=final or ahead is not None)
            refined = type(layer) is RefinedLayer
            for part, new in visits:
                part.items += new
            loaded = [(part.key, part.matcher, new) for part, new in visits if new]
            if loaded and refined:
                layer.load(loaded)
            elif loaded:
                layer.load(loaded[0][2])
            found = []
            for part, new in visits:
                matcher = part.matcher
                matcher.horizon = ahead
                found.append(expand(matcher.finish() if final else matcher.feed(len(new))))
            values = layer.measures([(part.key, part.matcher, matches) for (part, _), matches in zip(visits, found)]) \
                if refined else [layer.measures(found[0])]
            events = []
            for (part, _), matches, row in zip(visits, found, values):
                events += self._events(i, part.items, matches, row)
                water = part.matcher.low_water()
                part.pending = completing(part.items[water]) if water < len(part.items) else INF
                if not final:  # drop what neither the matcher nor PREV reads (row indexes go down)
                    del part.items[:forget(part.matcher, layer.lookback)]
            frontier = min(bound, min((part.pending for part in self.parts[i].values()), default=INF))
            if i == top:
                out += events
                continue
            self.held[i] += events
            self.frontier[i] = INF if final else frontier
            ready = sorted((e for e in self.held[i] if e.completing < self.frontier[i]), key=key)
            self.held[i] = [e for e in self.held[i] if e.completing >= self.frontier[i]]
            self.released[i] += ready
        if not final:
            self._forget()
        return out

    def _split(self, i: int, new: list, every: bool) -> list:
        """(part, its new items) for the parts of layer ``i`` that get items (``every``: for
        all its parts, as finishing or a stream's horizon may end their runs without an
        item), the items routed by their key."""
        parts, layer = self.parts[i], self.layers[i]
        if type(layer) is Layer:
            return [(parts[None], new)]
        routed: dict = {k: [] for k in parts} if every else {}
        for item in new:
            k = layer.refine(item)
            if k not in parts:
                parts[k] = Part(k, layer.part(k))
            routed.setdefault(k, []).append(item)
        return [(parts[k], items) for k, items in routed.items()]

    def _forget(self):
        """Drop the released events every reader took (a part's items go as it is fed)."""
        for s in range(len(self.layers)):
            readers = [taken for taken in self.taken if s in taken]
            done = min((taken[s] for taken in readers), default=len(self.released[s]))
            del self.released[s][:done]
            for taken in readers:
                taken[s] -= done

    def _arrivals(self, i: int, bound: float) -> list:
        """The items entering layer ``i`` now, in key order."""
        new: list = []
        if self.layers[i].reads_rows:
            stop = int(min(bound, self.size))
            new += range(self.rows_fed[i], stop)
            self.rows_fed[i] = max(self.rows_fed[i], stop)
        for s, start in self.taken[i].items():
            events = self.released[s]
            stop = start
            while stop < len(events) and events[stop].completing < bound:
                stop += 1
            new += events[start:stop]
            self.taken[i][s] = stop
        return sorted(new, key=key)

    def _events(self, i: int, items: list, matches: list, values: list) -> list[Event]:
        events = []
        for m, row in zip(matches, values):
            if not m.rows:
                continue  # an empty match has no interval: no event
            members = tuple((items[r], var) for r, var, _ in m.rows)
            events.append(Event(i, m.number, max(completing(x) for x, _ in members), members, row))
        return events
