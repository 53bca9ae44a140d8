"""Matches -> output rows with their measure *atoms*.

The planner reduces every MEASURES expression to atoms the engine must compute (navigations,
aggregates, CLASSIFIER, MATCH_NUMBER, each RUNNING or FINAL) and leaves the arithmetic that
combines them to Spark.  A navigation atom is emitted as the *row index* it lands on, so its
value is later taken from the original Arrow column with its exact type.

Row shapes: ONE ROW PER MATCH gives one row per match (RUNNING = FINAL there); ALL ROWS PER
MATCH gives one row per matched row that is not excluded, an empty match (unless omitted)
gives one row at its start row, and an unmatched row gives one row with NULL atoms.  A
timed-out partial match is emitted as a match over its rows so far, MATCH_NUMBER NULL, its
rows flagged (``Emitted.timed_out``).  A window (R020) gives one row per row of the partition:
its match's as ONE ROW PER MATCH (navigation landing only in the row's frame), or NULL atoms.

As Trino evaluates measures: FIRST(x, n) counts over the whole match even under RUNNING; a
CLASSIFIER navigation sees every row of the match (NEXT(CLASSIFIER()) is the next row's
variable) and is NULL outside it; in an empty match navigations and CLASSIFIER are NULL,
MATCH_NUMBER is its number and aggregates are over no rows.

Every atom is computed for all the matches of a flush at once, over their rows as arrays
(``Spans``): navigations and CLASSIFIER from the ranks of the rows of their variables,
COUNT / SUM / AVG / MIN / MAX over numeric columns, COUNT_IF / BOOL_AND / BOOL_OR, MAX_BY /
MIN_BY and COLLECT_LIST with numpy (``udtf.emit_folds``); any other aggregate folds its own
rows with its Spark fold, one step per row it reads.
"""
from __future__ import annotations

import itertools
import operator
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .emit_folds import VectorFold, object_array
from .expr import Agg, Classifier, Fact, FactTable, MatchNumber, Nav, NavMode, fold_of, located
from .match import MatchBlock
from .plan import RowsMode
from .rows import Match, MatchKind, Unmatched
from .sparksql.errors import SparkError


def _vectorizable(expr) -> bool:
    """Does ``_emit_block`` compute ``expr`` (from a block's rows per element)?"""
    if isinstance(expr, Nav):
        return expr.column is None and not expr.logical
    if isinstance(expr, Agg):
        return expr.fn == "count" and not expr.args and expr.filter is None
    if isinstance(expr, Classifier):
        return expr.mode is NavMode.LAST and not expr.logical and not expr.physical
    return isinstance(expr, MatchNumber)


class Spans(NamedTuple):
    """Matches as arrays.  Per match: ``sources`` (the row its output stands for),
    ``numbers`` (MATCH_NUMBER where ``numbered``), ``timed_out``, ``unmatched`` (a row in no
    match: every atom NULL); per matched row, in match order: ``rows``, ``variables``,
    ``excluded`` and ``owner`` (index of its match); ``bounds``: match k's rows are
    ``bounds[k]:bounds[k + 1]``; ``memo``: arrays derived from these, shared by the atoms."""
    sources: np.ndarray
    numbers: np.ndarray
    numbered: np.ndarray
    timed_out: np.ndarray
    unmatched: np.ndarray
    rows: np.ndarray
    variables: np.ndarray
    excluded: np.ndarray
    owner: np.ndarray
    bounds: np.ndarray
    memo: dict

    @staticmethod
    def of_matches(matches: list) -> Spans:
        """``Match`` tuples as arrays: their fields transposed at once (``zip``), their
        ``(row, var, excluded)`` captures read as one flat stream of integers."""
        count = len(matches)
        numbers, starts, _, captures, kinds, owners = zip(*matches) if matches else ((),) * 6
        lengths = np.fromiter(map(len, captures), dtype=np.int64, count=count)
        total = int(lengths.sum())
        flat = np.fromiter(itertools.chain.from_iterable(itertools.chain.from_iterable(captures)),
                           dtype=np.int64, count=3 * total).reshape(total, 3)
        sources = starts if owners.count(None) == count else map(Match.source.fget, matches)
        unnumbered = numbers.count(None)  # (tuple.count: one C loop where most flushes are uniform)
        if unnumbered == 0:
            numbered, numbers = np.ones(count, dtype=bool), np.fromiter(numbers, dtype=np.int64, count=count)
        elif unnumbered == count:
            numbered, numbers = np.zeros(count, dtype=bool), np.zeros(count, dtype=np.int64)
        else:
            numbered = np.fromiter(map(operator.is_not, numbers, itertools.repeat(None)), dtype=bool, count=count)
            numbers = np.fromiter((n or 0 for n in numbers), dtype=np.int64, count=count)
        if kinds.count(MatchKind.MATCH) == count:
            timed_out = unmatched = np.zeros(count, dtype=bool)
        else:
            timed_out = np.fromiter(map(operator.is_, kinds, itertools.repeat(MatchKind.TIMED_OUT)), dtype=bool,
                                    count=count)
            unmatched = np.fromiter(map(operator.is_, kinds, itertools.repeat(MatchKind.UNMATCHED)), dtype=bool,
                                    count=count)
        return Spans(np.fromiter(sources, dtype=np.int64, count=count), numbers, numbered, timed_out, unmatched,
                     flat[:, 0].copy(), flat[:, 1].copy(), flat[:, 2].astype(bool),
                     np.repeat(np.arange(count), lengths), np.append(0, np.cumsum(lengths)), {})

    @staticmethod
    def of_items(items: list) -> Spans:
        """``Match`` tuples and ``Unmatched`` rows (each a match of no rows, ``unmatched``) as
        arrays, in order: the tuples through ``of_matches``, the rows' runs as whole arrays."""
        if set(map(type, items)) <= {Match}:
            return Spans.of_matches(items)
        matches = [item for item in items if type(item) is Match]
        s = Spans.of_matches(matches)
        count = len(items)
        sizes = np.fromiter((1 if type(item) is Match else len(item.rows) for item in items), dtype=np.int64,
                            count=count)
        matched = np.repeat(np.fromiter((type(item) is Match for item in items), dtype=bool, count=count), sizes)
        at = np.flatnonzero(matched)  # where each of ``s``'s matches goes
        spread = lambda values, fill: _spread(len(matched), at, values, fill)
        sources = spread(s.sources, 0)
        sources[~matched] = _unmatched_rows([item for item in items if type(item) is not Match])
        lengths = spread(np.diff(s.bounds), 0)
        return Spans(sources, spread(s.numbers, 0), spread(s.numbered, False), spread(s.timed_out, False),
                     spread(s.unmatched, True), s.rows, s.variables, s.excluded, at[s.owner],
                     np.append(0, np.cumsum(lengths)), {})

    @staticmethod
    def of_block(block: MatchBlock) -> Spans:
        count, lengths = len(block), block.lengths
        no = np.zeros(count, dtype=bool)
        return Spans(np.asarray(block.starts, dtype=np.int64), block.numbers, ~no, no, no, block.rows,
                     block.variables, np.zeros(len(block.rows), dtype=bool), block.owner,
                     np.append(0, np.cumsum(lengths)), {})

    def moved(self, offsets: np.ndarray) -> Spans:
        """The matches with each one's rows (and source) moved by ``offsets`` (one per match)."""
        return self._replace(sources=self.sources + offsets, rows=self.rows + offsets[self.owner], memo={})

    @staticmethod
    def concat(parts: list) -> Spans:
        """The matches of ``parts`` in order, as one."""
        if len(parts) == 1:
            return parts[0]
        matches = np.cumsum([0] + [len(p.sources) for p in parts])
        rows = np.cumsum([0] + [len(p.rows) for p in parts])
        joined = [np.concatenate(arrays) for arrays in zip(*(p[:9] for p in parts))]
        joined[8] = np.concatenate([p.owner + m for p, m in zip(parts, matches)])
        bounds = np.concatenate([p.bounds[:-1] + r for p, r in zip(parts, rows)] + [rows[-1:]])
        return Spans(*joined, bounds, {})

    def hit(self, vars_) -> np.ndarray:
        """Per matched row: is it one of variables ``vars_`` (None: any)?"""
        key = ("hit", vars_)
        if key not in self.memo:
            if vars_ is None:
                self.memo[key] = np.ones(len(self.rows), dtype=bool)
            else:
                member = np.zeros(max(*vars_, int(self.variables.max(initial=0))) + 1, dtype=bool)
                member[list(vars_)] = True
                self.memo[key] = member[self.variables]
        return self.memo[key]

    def before(self, vars_) -> np.ndarray:
        """Rows of variables ``vars_`` before each matched row (and after the last one)."""
        key = ("before", vars_)
        if key not in self.memo:
            self.memo[key] = np.append(0, np.cumsum(self.hit(vars_)))
        return self.memo[key]


class Emitted(NamedTuple):
    """Output rows as chunks: ``sources`` (int64 row indexes), ``columns`` (one list of chunks
    per atom) and ``timed_out`` (booleans), chunk k of each for the same rows."""
    sources: list
    columns: list
    timed_out: list


class Emitter:
    """``atoms``: ``udtf.plan.Atom``s (a navigation atom's ``Nav`` has no column: the engine
    gives the row index it lands on)."""

    def __init__(self, atoms, rows_mode: RowsMode, var_names, values: dict, size, ansi: bool = True,
                 zone: str = "UTC", frame=None):
        aggs = [atom.expr for atom in atoms if isinstance(atom.expr, Agg)]
        self.table = FactTable(list(dict.fromkeys(Fact("agg", a.vars, a) for a in aggs)), values, var_names,
                               ansi, zone)
        self.folds = {a: fold_of(a, ansi, zone) for a in aggs}
        self.vector_folds = {a: VectorFold.of(a, self.folds[a]) for a in aggs}
        self.size = size
        self.var_names = var_names
        self.names = np.array(list(var_names) + [None], dtype=object)  # (CLASSIFIER's values; -1: NULL)
        self.labels = pa.array(list(var_names), pa.string())
        self.width = len(atoms)
        self.one_row = rows_mode in (RowsMode.ONE, RowsMode.WINDOW)
        self.frame = frame  # a window's (``udtf.plan.Frame``): navigation lands in a row's frame
        self.omit_empty = rows_mode is RowsMode.ALL_OMIT
        self.atoms = [atom.expr for atom in atoms]
        self.vectorized = all(_vectorizable(expr) for expr in self.atoms)
        self.finals = [a.final for a in atoms]

    def emit(self, matches: list, offsets: np.ndarray | None = None, bounds: tuple | None = None) -> Emitted:
        """The output rows of ``matches`` (``Match`` tuples, ``MatchBlock``s, ``Unmatched``
        rows); chunks are python lists or numpy arrays, or Arrow arrays: for
        navigations int64 row indexes, for aggregates computed as numbers or booleans their
        values (int64, double or boolean: not necessarily the atom's type), for COLLECT_LIST
        (FINAL) its arrays, for CLASSIFIER and MATCH_NUMBER theirs.  ``offsets`` (``matches``
        all ``Match`` tuples): each match's rows are moved by its offset first; ``bounds`` (with
        ``offsets``: (lo, hi) arrays, one pair per match) the rows its navigation may land on,
        its partition's among others' (else the rows' whole extent)."""
        sources: list = []
        columns: list = [[] for _ in range(self.width)]
        flags: list = []
        if offsets is not None:
            more_sources, more_columns, more_flags = self._emit_spans(Spans.of_matches(matches).moved(offsets), bounds)
            return Emitted([more_sources], [[more] for more in more_columns], [more_flags])
        if matches and set(map(type, matches)) <= {Match, Unmatched}:  # (one C pass: no block, one part)
            more_sources, more_columns, more_flags = self._emit_spans(Spans.of_items(matches))
            return Emitted([more_sources], [[more] for more in more_columns], [more_flags])
        plain: list = []
        spans: list = []  # of the items since the last part emitted (one ``_emit_spans``)
        for item in matches + [None]:
            if isinstance(item, (Match, Unmatched)):
                plain.append(item)
                continue
            if plain:
                spans.append(Spans.of_items(plain))
                plain = []
            if isinstance(item, MatchBlock) and not self.vectorized:
                spans.append(Spans.of_block(item))
                continue
            parts = []
            if spans:
                parts.append(self._emit_spans(Spans.concat(spans)))
                spans = []
            if isinstance(item, MatchBlock):
                parts.append(self._emit_block(item))
            for more_sources, more_columns, more_flags in parts:
                sources.append(more_sources)
                flags.append(more_flags)
                for column, more in zip(columns, more_columns):
                    column.append(more)
        return Emitted(sources, columns, flags)

    def _emit_spans(self, s: Spans, bounds: tuple | None = None):
        """Every atom over all the matches of ``s`` at once: per output row, the match it
        belongs to and the matched row it is (-1: the row of an empty match or of an
        unmatched row), each atom's RUNNING values taken at that row, FINAL ones per match."""
        count = len(s.sources)
        if self.one_row:
            match = np.arange(count)
            at = np.full(count, -1, dtype=np.int64)
        else:
            lengths = np.diff(s.bounds)
            alone = np.flatnonzero((lengths == 0) & (s.unmatched | (not self.omit_empty)))
            kept = np.flatnonzero(~s.excluded)
            if len(alone):
                order = np.argsort(np.concatenate([s.owner[kept], alone]), kind="stable")
                match = np.concatenate([s.owner[kept], alone])[order]
                at = np.concatenate([kept, np.full(len(alone), -1, dtype=np.int64)])[order]
            else:  # (the matched rows are in match order already)
                match, at = s.owner[kept], kept
        row = at >= 0
        sources = np.where(row, s.rows[np.maximum(at, 0)] if len(s.rows) else 0, s.sources[match])
        null = s.unmatched[match]
        frames = self._frames(s.sources) if self.frame is not None else bounds
        columns = []
        for expr, final in zip(self.atoms, self.finals):
            running = not self.one_row and not final
            if isinstance(expr, MatchNumber):
                columns.append(_arrow(s.numbers[match], s.numbered[match]))
                continue
            values, valid = self._atom(s, expr, running, frames)
            if running and not row.all():  # an empty match's row: over no rows
                values, valid = _appended(values, valid, self._empty(expr))
                pick = np.where(row, at, len(values) - 1)
            else:
                pick = at if running else match
            valid = valid[pick] & ~null
            if isinstance(values, pa.Array):  # (an aggregate's Arrow array)
                values = values.take(pick)
                columns.append(values if valid.all() else pc.if_else(valid, values, pa.scalar(None, values.type)))
                continue
            values = values[pick]
            if isinstance(expr, Nav):
                columns.append(_arrow(values, valid, pa.int64()))
            elif isinstance(expr, Classifier):
                columns.append(self.labels.take(_arrow(np.where(valid, values, 0), valid)))
            elif values.dtype != object:  # (numbers and booleans: an Arrow array at once)
                columns.append(_arrow(values, valid))
            else:
                columns.append(_listed(values, valid))
        return sources, columns, s.timed_out[match].tolist()

    def _empty(self, expr):
        """The value of ``expr`` in an empty match (or None)."""
        if isinstance(expr, Agg):
            fold = self.folds[expr]
            return fold.result(fold.initial)
        return None

    def _atom(self, s: Spans, expr, running: bool, frames):
        """(values, valid) of ``expr`` per matched row (``running``) or per match."""
        if isinstance(expr, Agg):
            vector = self.vector_folds[expr]
            found = None if vector is None else vector.evaluate(s, running, self.table.ansi, self.table.columns)
            return self._folded(s, expr, running) if found is None else found
        if not len(s.rows):  # (no row to land on)
            count = len(s.sources)
            return np.zeros(count, dtype=np.int64), np.zeros(count, dtype=bool)
        pick, valid = self._landing(s, expr, running)
        target = s.rows[pick] + expr.physical
        lo, hi = (0, self.size()) if frames is None else (f[s.owner] if running else f for f in frames)
        valid &= (target >= lo) & (target < hi)
        if isinstance(expr, Nav):
            return target, valid
        if expr.physical:  # the variable of the row landed on, while it is in the match
            first, end = s.bounds[s.owner[pick]], s.bounds[s.owner[pick] + 1]
            at = first + target - s.rows[first]
            inside = (at >= first) & (at < end)
            pick = np.where(inside, at, 0)
            valid &= inside & (s.rows[pick] == target)
        return s.variables[pick], valid

    def _landing(self, s: Spans, expr, running: bool):
        """(index of the matched row, found) that a navigation or CLASSIFIER starts from: the
        logical-th FIRST of its variables' rows in the match, or LAST in the match (FINAL) or up
        to each row (RUNNING)."""
        hits = np.flatnonzero(s.hit(expr.vars))
        before = s.before(expr.vars)  # hits before each matched row
        base = before[s.bounds[:-1]]
        first, logical = expr.mode is NavMode.FIRST, expr.logical
        if running and not first:
            rank = before[1:] - 1 - logical
            found = rank >= base[s.owner]
        else:
            total = before[s.bounds[1:]] - base
            rank = base + logical if first else base + total - 1 - logical
            found = total > logical
            if running:  # (FIRST counts over the whole match)
                rank, found = rank[s.owner], found[s.owner]
        if not len(hits):
            return np.zeros(len(rank), dtype=np.int64), np.zeros(len(rank), dtype=bool)
        return hits[np.where(found, rank, 0)], found

    def _folded(self, s: Spans, expr: Agg, running: bool):
        """(values, valid) of an aggregate folded row by row with its Spark fold: per matched
        row that is output (``running``), or per match."""
        table = self.table
        update, initial = table.updater(table.index[Fact("agg", expr.vars, expr)])
        result = self.folds[expr].result
        rows, variables, bounds = s.rows.tolist(), s.variables.tolist(), s.bounds.tolist()
        numbers, numbered = s.numbers.tolist(), s.numbered.tolist()
        out = [None] * (len(rows) if running else len(numbers))
        read, shown = s.hit(expr.vars).tolist(), (~s.excluded).tolist()
        try:  # (a result's error, e.g. KURTOSIS dividing by an underflowed m2, names the aggregate)
            for k, unmatched in enumerate(s.unmatched.tolist()):
                if unmatched:
                    continue
                table.match_number = numbers[k] if numbered[k] else None
                state, value, fresh = initial, None, False  # (``value``: ``state``'s result when ``fresh``)
                for i in range(bounds[k], bounds[k + 1]):
                    if read[i]:
                        state, fresh = update(state, rows[i], variables[i]), False
                    if running and shown[i]:
                        if not fresh:
                            value, fresh = result(state), True
                        out[i] = value
                if not running:
                    out[k] = result(state)
        except SparkError as e:
            raise located(e, expr.at) from None
        return object_array(out), np.ones(len(out), dtype=bool)

    def _emit_block(self, block: MatchBlock):
        """A flat sequence's matches from the rows of each element, when every atom is one
        ``_vectorizable`` takes: a value fixed for a match or a (match, element) is repeated
        over its rows (ONE ROW PER MATCH: one per match), and under ALL ROWS a row of an element
        a RUNNING atom reads is its own LAST."""
        takes, elements = block.takes, np.asarray(block.elements, dtype=np.int64)
        count, width = takes.shape
        per_match = (lambda fixed: fixed) if self.one_row else (lambda fixed: np.repeat(fixed, block.lengths))
        expand = lambda fixed: np.repeat(fixed.reshape(-1), takes.reshape(-1))  # (match, element) -> row
        first_row = block.starts[:, None] + np.cumsum(takes, axis=1) - takes
        last_row = first_row + takes - 1
        rows = block.starts if self.one_row else block.rows
        bounds = self._frames(np.asarray(block.starts, dtype=np.int64)) if self.frame is not None else None
        matches = np.arange(count)
        columns = []
        for expr, final in zip(self.atoms, self.finals):
            running = not self.one_row and not final
            if isinstance(expr, MatchNumber):
                columns.append(pa.array(per_match(block.numbers), type=pa.int64()))
                continue
            members = np.ones(width, dtype=bool) if expr.vars is None else np.isin(elements, expr.vars)
            holds = (takes > 0) & members
            own = lambda: expand(np.broadcast_to(members, takes.shape))  # per row: one the atom reads
            if isinstance(expr, Agg):  # count of rows
                counted = takes * members
                if running:
                    before = np.cumsum(counted, axis=1) - counted
                    columns.append(pa.array(expand(before) + np.where(own(), rows - expand(first_row) + 1, 0)))
                else:
                    columns.append(pa.array(per_match(counted.sum(axis=1))))
                continue
            first = isinstance(expr, Nav) and expr.mode is NavMode.FIRST
            if first or not running:  # one row of the whole match
                present = holds.any(axis=1)
                k = holds.argmax(axis=1) if first else width - 1 - holds[:, ::-1].argmax(axis=1)
                pick = per_match(np.where(present, (first_row if first else last_row)[matches, k], -1))
                element = lambda: per_match(elements[k])  # (CLASSIFIER's, when asked)
            else:  # the row itself, or the last row of the latest element before it the atom reads
                latest = np.maximum.accumulate(np.where(holds, np.arange(width), -1), axis=1)
                pick = np.where(own(), rows, expand(np.where(latest >= 0, last_row[matches[:, None], latest], -1)))
                element = lambda: expand(elements[np.maximum(latest, 0)])  # (own: its own element)
            present = pick >= 0
            if isinstance(expr, Classifier):
                columns.append(self.labels.take(_arrow(np.where(present, element(), 0), present)))
                continue
            columns.append(self._row_indexes(present, pick + expr.physical, bounds))
        return rows, columns, [False] * len(rows)

    def _frames(self, owners):
        """(lo, hi) of the frames of the rows ``owners`` (an array): the rows navigation in
        their matches' measures may land on."""
        size = self.size()
        if self.frame.end is None:
            return owners, np.full(len(owners), size)
        return owners, np.minimum(owners + self.frame.end + 1, size)

    def _row_indexes(self, present: np.ndarray, target: np.ndarray, bounds=None) -> pa.Array:
        """The int64 column of row indexes ``target``: NULL where no row is ``present`` or the
        target lies outside the partition (or ``bounds``: (lo, hi) arrays, the frames)."""
        lo, hi = (0, self.size()) if bounds is None else bounds
        valid = present & (target >= lo) & (target < hi)
        return _arrow(target, valid, pa.int64())


def _unmatched_rows(items: list) -> np.ndarray:
    """The rows of ``Unmatched`` ``items``, in order (runs of ``range``s at once)."""
    runs = [item.rows for item in items]
    if not all(type(rows) is range for rows in runs):
        return np.concatenate([item.indexes() for item in items])
    firsts = np.fromiter((rows.start for rows in runs), dtype=np.int64, count=len(runs))
    lengths = np.fromiter(map(len, runs), dtype=np.int64, count=len(runs))
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(firsts - (np.cumsum(lengths) - lengths), lengths)


def _spread(size: int, at: np.ndarray, values: np.ndarray, fill) -> np.ndarray:
    """An array of ``size`` ``fill``s with ``values`` at positions ``at``."""
    out = np.full(size, fill, dtype=values.dtype)
    out[at] = values
    return out


def _appended(values: np.ndarray, valid: np.ndarray, value) -> tuple:
    """(values, valid) with ``value`` after them (None: not valid)."""
    if isinstance(values, pa.Array):  # (an aggregate's Arrow array)
        return pa.concat_arrays([values, pa.array([value], values.type)]), np.append(valid, value is not None)
    if value is None:
        return np.append(values, np.zeros(1, dtype=values.dtype)), np.append(valid, False)
    out = np.empty(len(values) + 1, dtype=object)
    out[:-1], out[-1] = values, value
    return out, np.append(valid, True)


def _arrow(values: np.ndarray, valid: np.ndarray, type_: pa.DataType | None = None) -> pa.Array:
    """``values`` (numbers or booleans) as an Arrow array (of ``type_``, else numpy's), NULL
    where not ``valid``."""
    return pa.array(values, mask=None if valid.all() else ~valid, type=type_)


def _listed(values: np.ndarray, valid: np.ndarray) -> list:
    """``values`` as Python values, None where not ``valid``."""
    if valid.all():
        return values.tolist()
    out = values.astype(object)
    out[~valid] = None
    return out.tolist()
