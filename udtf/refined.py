"""A one-pass layer's compiled parts (``udtf.hierarchy``): its events' values, and what the keys
of a refined layer (a LAYER with its own PARTITION BY, rule 8) share.

A refined layer's plan is compiled once (``RefinedParts``: its item masks, emitter and
measures); a key met in the partition costs only a matcher over rows of its own
(``RefinedParts.part``, reused from one partition to the next).  A step of the layer stack loads
every fed key's new items with one evaluation of the layer's columns and masks, and values
every fed key's matches with one emission: the keys' held rows are laid one after another
(from the first row a match or its navigation reads) and each match's navigation lands only in
its own key's rows, as in its own partition.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa

from .arrow import atom_column, plan_emitter, plan_lookback, plan_matcher, plan_rows
from .expr import FactTable, compile_row, type_of
from .item_masks import Masks
from .match import Matcher
from .plan import EnginePlan, LayerPlan, OutputKind
from .rows import Rows
from .sparksql.types import SqlType, from_arrow

_NAN_KEY = ("NaN",)  # a NaN in a refined key (NaN = NaN as Spark groups)


def group_key(values) -> tuple:
    """A refined key: ``values`` compared as Spark groups them (NULL = NULL, NaN = NaN, -0.0 =
    0.0); ``RefinedParts.measures`` shows it as Spark's partition output does."""
    return tuple(_NAN_KEY if v != v else v + 0.0 if type(v) is float else v for v in values)


class LayerMeasures:
    """The values of a layer's events (``LayerPlan.measures``, compiled once) from its emitter's
    atoms, over the rows ``values`` ({column: values}) the emitted row indexes point into."""

    def __init__(self, layer: LayerPlan, plan: EnginePlan, values: dict):
        self.outputs = list(zip(layer.outputs, plan.output))
        self.values = values
        self.atom_types = [SqlType.parse(type_of(a.expr)) for a in plan.atoms]
        self.columns: dict = {name: [] for name in layer.outputs}  # (filled in place: compiled against)
        table = FactTable([], self.columns, (), plan.ansi, plan.zone)
        self.evaluate = [compile_row(expr, table) for _, expr in layer.measures]

    def __call__(self, emitted, count: int) -> list[tuple]:
        """One tuple of measure values per match of ``emitted`` (``count`` matches)."""
        for name, output in self.outputs:
            if output.kind is OutputKind.TAKE:
                index = pa.concat_arrays([c if isinstance(c, pa.Array) else pa.array(c, type=pa.int64())
                                          for c in emitted.columns[output.atom]]).to_pylist()
                column = self.values[output.column]
                self.columns[name][:] = [None if i is None else column[i] for i in index]
            elif output.kind is OutputKind.VALUE:
                kind = self.atom_types[output.atom]
                self.columns[name][:] = from_arrow(kind, atom_column(kind, emitted.columns[output.atom], 0))
        evaluate = self.evaluate
        return [tuple(f((i, None, None)) for f in evaluate) for i in range(count)]


class RefinedParts:
    """What the keys of a refined layer share (``match.layers.RefinedLayer``'s ``part``, ``load``
    and ``measures``).  ``column(name, items)``: the items' values of column ``name`` in the
    layer's union.  Invariant: a key's matcher reads its own rows only (its conditions are
    compiled against them); the emitter reads ``flush``, rebuilt for each ``measures``."""

    def __init__(self, layer: LayerPlan, plan: EnginePlan, masks: dict, column: Callable[[str, list], list]):
        self.plan = plan
        self.column = column
        self.names = [v.name for v in plan.values]
        self.evaluate = Masks(masks, plan.ansi, plan.zone)
        self.lookback = plan_lookback(plan)
        self.flush = Rows(values=self.names)  # the rows of a step's matches, key after key
        self.emitter = plan_emitter(plan, self.flush)
        self.measure = LayerMeasures(layer, plan, self.flush.values)
        self.spare: list = []  # matchers free for a key
        self.used: list = []  # matchers of the partition's keys

    def part(self, key) -> Matcher:
        """A matcher for ``key`` over empty rows of its own."""
        matcher = self.spare.pop() if self.spare else plan_matcher(self.plan, plan_rows(self.plan))
        self.used.append(matcher)
        return matcher

    def reset(self):
        """The next partition: every key's matcher is free."""
        for matcher in self.used:
            matcher.rows.clear()
            matcher.reset()
        self.spare += self.used
        self.used.clear()

    def load(self, parts: list):
        """Append each (key, matcher, new items) of ``parts`` to its matcher's rows: the columns
        and masks of all the items evaluated at once."""
        items = [item for _, _, new in parts for item in new]
        values = {name: self.column(name, items) for name in self.names}
        masks = self.evaluate(values, len(items))
        order = self.plan.order_key
        at = 0
        for _, matcher, new in parts:
            end = at + len(new)
            own = {name: column[at:end] for name, column in values.items()}
            matcher.rows.append(len(new), masks={name: mask[at:end] for name, mask in masks.items()}, values=own,
                                order=own[order] if order is not None else None)
            at = end

    def measures(self, parts: list) -> list:
        """Per (key, matcher, matches) of ``parts``: one tuple per match, its measures then the
        key (as Spark's partition output shows it: -0.0 as 0.0), from one emission."""
        flush, lookback = self.flush, self.lookback
        flush.clear()
        matches, offsets, lo, hi = [], [], [], []
        for _, matcher, found in parts:
            if not found:
                continue
            rows = matcher.rows
            first = max(0, min(m.start for m in found) - lookback)  # (no match reads before it)
            start = flush.size
            flush.append(rows.size - first, values={name: column[first:] for name, column in rows.values.items()})
            matches += found
            offsets.append(start - first)
            lo.append(start)
            hi.append(flush.size)
        if not matches:
            return [[] for _ in parts]
        counts = [len(found) for _, _, found in parts if found]
        spread = lambda values: np.repeat(np.asarray(values, dtype=np.int64), counts)
        emitted = self.emitter.emit(matches, spread(offsets), (spread(lo), spread(hi)))
        values = self.measure(emitted, len(matches))
        flush.clear()
        out, at = [], 0
        for key, _, found in parts:
            shown = tuple(float("nan") if v is _NAN_KEY else v for v in key)
            out.append([(*v, *shown) for v in values[at:at + len(found)]])
            at += len(found)
        return out
