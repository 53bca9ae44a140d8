"""A statement with LAYERs in one pass per partition (docs/hierarchies.md, "Evaluation in one
pass"): the UDTF reads the partition's input rows once, and ``match.layers.LayerStack`` feeds
them and the lower layers' events to one matcher per layer, the top's last.

Each layer runs its ordinary ``EnginePlan`` (``plan.LayerPlan``) over a ``Rows`` that is the
expansion's union for that layer, built here instead of in SQL: a row item has the input
row's columns and the helpers of a row (its number in the partition from 1, level 0, number 0,
no source; its interval start and end come with the input); an event of layer s has s's measures (the
helpers among them), level s + 1, source s's name and the partition's keys; every other column
is NULL.  Every column is a value (the plan evaluates its conditions in the engine), so the
conditions, navigation, aggregates and emitter run unchanged.  An event's columns are its
layer's measures, evaluated from the emitter's atoms when the layer reports the match; the
top's matches become output batches then, while the rows they read are held.

A condition's row-level conjuncts (``row_masks``: over the current item's own columns, with no
navigation, aggregate, CLASSIFIER or MATCH_NUMBER) are evaluated once per item as the item is
loaded, into a mask of the layer's ``Rows``, as Spark computes a plain clause's masks; the
matcher evaluates only the rest, per run, and only where the mask holds.  So every item of a
layer's union raises the errors of those conjuncts, as every row of the expansion's does.

A layer with its own PARTITION BY (``LayerPlan.keys``, rule 8) runs one matcher per refined key
met in the partition (``LayerStack``'s parts), its plan compiled once for all its keys
(``udtf.refined``: one load and one emission per step for every key fed): a row's key is its key
columns', an event's the key columns it carries (its source is refined by them), compared as
Spark groups them (NULL = NULL, NaN = NaN, -0.0 = 0.0); its events carry the key as Spark's
partition output reports it (-0.0 as 0.0).
"""
from __future__ import annotations

import pyarrow as pa

from .arrow import PartitionRunner, output_batch
from .item_masks import Masks, row_masks
from .match.layers import Event, Layer, LayerStack, RefinedLayer
from .plan import EnginePlan
from .refined import LayerMeasures, RefinedParts, group_key
from .sparksql.types import SqlType, from_arrow, to_arrow


class HierarchyRunner(PartitionRunner):
    """The top's ``PartitionRunner`` whose rows come from the layer stack (``plan.hierarchy``).
    ``below[k]``: the runner of layer ``k`` (None for a refined layer), ``refined[k]``: a refined
    layer's parts (None for the others)."""

    def __init__(self, plan: EnginePlan, output_schema: pa.Schema):
        hierarchy = plan.hierarchy
        top, top_masks = row_masks(plan._replace(hierarchy=None))
        super().__init__(top, output_schema)
        self.hierarchy = hierarchy
        self.helpers = dict(zip(("row", "level", "number", "source", "start", "end"), hierarchy.helpers))
        split = [row_masks(layer.plan) for layer in hierarchy.layers]
        self.plans = [layer_plan for layer_plan, _ in split]
        self.masks = [*(layer_masks for _, layer_masks in split), top_masks]  # per layer: {name: row-level conjunction}
        self.raw_types = [(v.name, SqlType.parse(v.type)) for v in hierarchy.rows]
        self.raw: dict = {name: [] for name, _ in self.raw_types}  # the partition's rows from ``raw_first``
        self.raw_first = 0
        self.row_base = 0  # the partition's rows before the first one fed (a stream's, ``udtf.stream_layers``)
        # per layer below: the index of each of its measures (then refined keys) among its events' values
        self.measure_index = [{name: k for k, name in enumerate((*(m for m, _ in layer.measures), *layer.keys))}
                              for layer in hierarchy.layers]
        self.key_types = {v.name: SqlType.parse(v.type) for p in (*self.plans, top) for v in p.values
                          if v.name in self.keys}
        self.below = [None if layer.keys else PartitionRunner(layer_plan, pa.schema([]))
                      for layer, layer_plan in zip(hierarchy.layers, self.plans)]
        self.refined = [RefinedParts(layer, layer_plan, masks, self._column) if layer.keys else None
                        for layer, layer_plan, masks in zip(hierarchy.layers, self.plans, self.masks)]
        layers: list = []
        for k, (layer, runner, parts) in enumerate(zip(hierarchy.layers, self.below, self.refined)):
            sources = frozenset(layer.sources)
            if parts is not None:
                layers.append(RefinedLayer(sources, layer.reads_rows, self._refiner(k), parts.part, parts.load,
                                           parts.measures, parts.lookback))
            else:
                layers.append(Layer(runner.matcher, sources, layer.reads_rows, self._loader(runner, self.masks[k]),
                                    self._measurer(k, runner), runner.lookback))
        layers.append(Layer(self.matcher, frozenset(hierarchy.sources), hierarchy.reads_rows,
                            self._loader(self, top_masks), self._output, self.lookback))
        self.stack = LayerStack(layers)
        self.done: list = []  # output batches not yet yielded

    # ---- rows in ----------------------------------------------------------------------
    def _append(self, part: pa.RecordBatch):
        for name, kind in self.raw_types:
            self.raw[name] += from_arrow(kind, part.column(name))
        self._located(self.stack.feed, part.num_rows)
        # rows every layer reading rows has taken are not needed any more
        fed = min((n for n, layer in zip(self.stack.rows_fed, self.stack.layers) if layer.reads_rows),
                  default=self.stack.size)
        if fed > self.raw_first:
            for column in self.raw.values():
                del column[:fed - self.raw_first]
            self.raw_first = fed

    def _open(self) -> bool:
        return self.stack.size > 0

    def _close_partition(self):
        self._located(self.stack.finish)
        out = self._flush()
        self.reset()
        if out is not None:
            yield out

    def _forget(self):
        """(The stack forgets what its layers no longer need after each feed.)"""

    def reset(self):
        super().reset()
        for runner in self.below:
            if runner is not None:
                runner.reset()
        for parts in self.refined:
            if parts is not None:
                parts.reset()
        for column in self.raw.values():
            column.clear()
        self.raw_first = 0
        self.done = []
        self.stack.reset()

    def _refiner(self, k: int):
        """``RefinedLayer.refine`` of the refined layer ``k``: an item's key, compared as Spark groups."""
        names = self.hierarchy.layers[k].keys

        def refine(item) -> tuple:
            if type(item) is Event:
                index = self.measure_index[item.layer]
                values = [item.values[index[name]] for name in names]
            else:
                values = [self.raw[name][item - self.raw_first] for name in names]
            return group_key(values)
        return refine

    def _loader(self, runner: PartitionRunner, masks: dict):
        """``Layer.load`` of the layer ``runner`` runs: append items' columns to its rows, and
        the items' ``masks`` ({name: row-level conjunction}) evaluated on each of them."""
        names, plan = list(runner.rows.values), runner.plan
        order = plan.order_key
        evaluate = Masks(masks, plan.ansi, plan.zone)

        def load(items: list):
            values = {name: self._column(name, items) for name in names}
            runner.rows.append(len(items), values=values, order=values[order] if order is not None else None,
                               masks=evaluate(values, len(items)))
        return load

    def _column(self, name: str, items: list) -> list:
        """Column ``name`` of ``items`` in the union (NULL where an item has no such column):
        what each kind of item gives is decided once per column, not per item."""
        helpers = self.helpers
        raw, first = self.raw.get(name), self.raw_first
        if raw is not None:
            row = lambda r: raw[r - first]
        elif name == helpers["row"]:
            row = lambda r: self.row_base + r + 1
        else:
            constant = 0 if name in (helpers["level"], helpers["number"]) else None
            row = lambda r: constant
        events = [self._event_value(k, name) for k in range(len(self.hierarchy.layers))]
        return [events[item.layer](item) if type(item) is Event else row(item) for item in items]

    def _event_value(self, k: int, name: str):
        """Column ``name`` of an event of layer ``k``, as a function of the event."""
        index = self.measure_index[k].get(name)
        if index is not None:
            return lambda event: event.values[index]
        if name == self.helpers["level"]:
            constant = k + 1
        elif name == self.helpers["source"]:
            constant = self.hierarchy.layers[k].name
        elif name in self.keys:
            constant = from_arrow(self.key_types[name], self.key.column(name))[0]
        else:
            constant = None
        return lambda event: constant

    # ---- matches out ------------------------------------------------------------------
    def _measurer(self, k: int, runner: PartitionRunner):
        """``Layer.measures`` of the layer ``k`` below the top, run by ``runner``: its events' values."""
        measure = LayerMeasures(self.hierarchy.layers[k], runner.plan, runner.rows.values)
        return lambda matches: measure(runner.emitter.emit(matches), len(matches)) if matches else []

    def _output(self, matches: list) -> list:
        """``Layer.measures`` of the top: its output rows (kept for ``_flush``)."""
        if matches:
            plan = self.plan
            columns = {o.column for o in plan.output if o.column is not None}
            table = pa.table({v.name: to_arrow(SqlType.parse(v.type), self.rows.values[v.name])
                              for v in plan.values if v.name in columns})
            batch = output_batch(self.schema, plan, self.atom_types, self.emitter.emit(matches), table)
            if batch is not None:
                self.done.append(batch)
        return [()] * len(matches)

    def _flush(self):
        if not self.done:
            return None
        batches, self.done = self.done, []
        return pa.Table.from_batches(batches, schema=self.schema).combine_chunks().to_batches()[0]
