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
"""
from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from .expr import Agg, Classifier, Fact, FactTable, MatchNumber, Nav, NavMode, facts_of, fold_of, position_fact
from .match import MatchBlock
from .plan import RowsMode
from .rows import Match, MatchKind, Unmatched


def _vectorizable(expr) -> bool:
    if isinstance(expr, Nav):
        return expr.column is None and not expr.logical
    if isinstance(expr, Agg):
        return expr.fn == "count" and not expr.args and expr.filter is None
    if isinstance(expr, Classifier):
        return expr.mode is NavMode.LAST and not expr.logical and not expr.physical
    return isinstance(expr, MatchNumber)


class Arrays(NamedTuple):
    """Matches as arrays: ``starts`` / ``numbers`` per match, ``rows`` / ``variables`` /
    ``owner`` (index of its match) per matched row, in match order."""
    starts: list
    numbers: list
    rows: np.ndarray
    variables: np.ndarray
    owner: np.ndarray


class OutputRow(NamedTuple):
    source: int  # partition row that the non-measure columns come from
    atoms: tuple
    timed_out: bool = False  # it stands for a timed-out partial match


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
        needed: dict = {}
        for atom in atoms:
            facts_of(atom.expr, needed)
        self.table = FactTable(list(needed), values, var_names, ansi, zone)
        self.size = size
        self.var_names = var_names
        self.names = np.array(var_names, dtype=object)  # (CLASSIFIER's values)
        self.running = [(k, self._atom(a.expr)) for k, a in enumerate(atoms) if not a.final]
        self.final = [(k, self._atom(a.expr)) for k, a in enumerate(atoms) if a.final]
        self.width = len(atoms)
        self.one_row = rows_mode in (RowsMode.ONE, RowsMode.WINDOW)
        self.frame = frame  # a window's (``udtf.plan.Frame``): navigation lands in a row's frame
        self.bounds = (0, 0)  # the rows navigation may land on, for the match being evaluated
        self.omit_empty = rows_mode is RowsMode.ALL_OMIT
        self.atoms = [atom.expr for atom in atoms]
        self.vectorized = all(_vectorizable(expr) for expr in self.atoms)
        self.finals = [a.final for a in atoms]

    def emit(self, matches: list) -> Emitted:
        """The output rows of ``matches`` (``Match`` tuples, ``MatchBlock``s, a window's
        ``Unmatched`` rows); chunks are python lists or numpy arrays, or for navigations
        possibly Arrow int64 arrays of row indexes."""
        sources: list = []
        columns: list = [[] for _ in range(self.width)]
        flags: list = []
        plain: list = []
        for item in matches + [None]:
            if isinstance(item, Match):
                plain.append(item)
                continue
            parts = []
            if plain:
                parts.append(self._emit_plain(plain))
                plain = []
            if isinstance(item, MatchBlock):
                parts.append(self._emit_block(item) if self.vectorized else self._emit_plain(item.matches()))
            elif isinstance(item, Unmatched):  # a window's rows without a match: NULL atoms
                count = len(item.rows)
                parts.append((item.rows, [[None] * count] * self.width, [False] * count))
            for more_sources, more_columns, more_flags in parts:
                sources.append(more_sources)
                flags.append(more_flags)
                for column, more in zip(columns, more_columns):
                    column.append(more)
        return Emitted(sources, columns, flags)

    def _emit_plain(self, matches: list):
        if self.vectorized and all(m.kind is MatchKind.MATCH for m in matches) and \
                (self.one_row or all(m.rows and not any(r[2] for r in m.rows) for m in matches)):
            count = len(matches)
            flat = list(itertools.chain.from_iterable(m.rows for m in matches))
            lengths = np.fromiter((len(m.rows) for m in matches), dtype=np.int64, count=count)
            return self._emit_arrays(Arrays(
                [m.source for m in matches], [m.number for m in matches],
                np.fromiter((r[0] for r in flat), dtype=np.int64, count=len(flat)),
                np.fromiter((r[1] for r in flat), dtype=np.int64, count=len(flat)),
                np.repeat(np.arange(count), lengths)))
        rows = [r for match in matches for r in self.rows(match)]
        return ([r.source for r in rows], [[r.atoms[k] for r in rows] for k in range(self.width)],
                [r.timed_out for r in rows])

    def _emit_arrays(self, m: Arrays):
        """Navigations, counts of rows, CLASSIFIER and MATCH_NUMBER computed with numpy over all
        matches at once: one row per match (RUNNING = FINAL there), or one row per matched row
        (no excluded rows, no empty matches) with RUNNING values up to that row."""
        count, matched = len(m.starts), len(m.rows)
        # one padding entry so that "no row" (-1 -> 0) can be gathered and then masked
        rows, variables, owner = np.append(m.rows, 0), np.append(m.variables, 0), m.owner
        numbers = np.asarray(m.numbers, dtype=np.int64)
        first_of = np.searchsorted(owner, np.arange(count))  # index of each match's first row
        bounds = self._frames(np.asarray(m.starts, dtype=np.int64)) if self.frame is not None else None
        columns = []
        for expr, final in zip(self.atoms, self.finals):
            running = not self.one_row and not final
            if isinstance(expr, MatchNumber):
                columns.append(numbers.tolist() if self.one_row else numbers[owner].tolist())
                continue
            vs = expr.vars
            hit = np.isin(variables[:-1], vs) if vs is not None else np.ones(matched, dtype=bool)
            if isinstance(expr, Agg):  # count of rows
                if running:
                    counts = np.cumsum(hit)
                    columns.append((counts - np.append(0, counts)[first_of][owner]).tolist())
                else:
                    total = np.bincount(owner[hit], minlength=count)
                    columns.append(total.tolist() if self.one_row else total[owner].tolist())
                continue
            first = isinstance(expr, Nav) and expr.mode is NavMode.FIRST
            if running and not first:  # the last hit at or before each row of its match
                position = np.arange(matched)
                latest = np.maximum.accumulate(np.where(hit, position, first_of[owner] - 1))
                pick = np.where(latest >= first_of[owner], latest, -1)
            else:
                hits = np.flatnonzero(hit)
                pick = np.full(count, -1, dtype=np.int64)
                if len(hits):
                    if first:
                        owners, where = np.unique(owner[hits], return_index=True)
                    else:
                        owners, where = np.unique(owner[hits][::-1], return_index=True)
                        where = len(hits) - 1 - where
                    pick[owners] = hits[where]
                if not self.one_row:
                    pick = pick[owner]
            present = pick >= 0
            if isinstance(expr, Classifier):
                columns.append(np.where(present, self.names[variables[np.maximum(pick, 0)]], None).tolist())
                continue
            columns.append(self._row_indexes(present, rows[np.maximum(pick, 0)] + expr.physical, bounds))
        return (m.starts if self.one_row else m.rows), columns, [False] * (count if self.one_row else matched)

    def _emit_block(self, block: MatchBlock):
        """A flat sequence's matches from the rows of each element, as ``_emit_arrays`` computes
        them: a value fixed for a match or a (match, element) is repeated over its rows (ONE ROW
        PER MATCH: one per match), and under ALL ROWS a row of an element a RUNNING atom reads is
        its own LAST."""
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
                columns.append(per_match(block.numbers).tolist())
                continue
            members = np.ones(width, dtype=bool) if expr.vars is None else np.isin(elements, expr.vars)
            holds = (takes > 0) & members
            own = lambda: expand(np.broadcast_to(members, takes.shape))  # per row: one the atom reads
            if isinstance(expr, Agg):  # count of rows
                counted = takes * members
                if running:
                    before = np.cumsum(counted, axis=1) - counted
                    columns.append((expand(before) + np.where(own(), rows - expand(first_row) + 1, 0)).tolist())
                else:
                    columns.append(per_match(counted.sum(axis=1)).tolist())
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
                columns.append(np.where(present, self.names[element()], None).tolist())
                continue
            columns.append(self._row_indexes(present, pick + expr.physical, bounds))
        return rows, columns, [False] * len(rows)

    def _frames(self, owners):
        """(lo, hi) of the frames of the rows ``owners`` (a number or an array): the rows
        navigation in their matches' measures may land on."""
        size = self.size()
        if self.frame.end is None:
            return owners, size
        return owners, np.minimum(owners + self.frame.end + 1, size)

    def _row_indexes(self, present: np.ndarray, target: np.ndarray, bounds=None) -> pa.Array:
        """The int64 column of row indexes ``target``: NULL where no row is ``present`` or the
        target lies outside the partition (or ``bounds``: (lo, hi) arrays, the frames)."""
        lo, hi = (0, self.size()) if bounds is None else bounds
        valid = present & (target >= lo) & (target < hi)
        return pa.array(target, mask=~valid, type=pa.int64())

    # ---- row by row ----------------------------------------------------------------------
    def _atom(self, expr):
        """``fn(row, running, final, number, labels) -> value``: ``running`` / ``final`` are the
        facts up to the output row / of the whole match; ``labels``: row -> variable."""
        index, names = self.table.index, self.var_names
        if isinstance(expr, MatchNumber):
            return lambda row, running, final, number, labels: number
        if isinstance(expr, Agg):
            slot = index[Fact("agg", expr.vars, expr)]
            result = fold_of(expr, self.table.ansi, self.table.zone).result
            return lambda row, running, final, number, labels: result(running[slot])
        slot = index[position_fact(expr.mode, expr.vars, expr.logical)]
        pick = expr.logical if expr.mode is NavMode.FIRST else -1 - expr.logical
        logical, physical = expr.logical, expr.physical
        whole = expr.mode is NavMode.FIRST  # FIRST counts over the whole match (Trino)

        def target(running, final):
            found = (final if whole else running)[slot]
            if logical:
                if len(found) <= logical:
                    return None
                found = found[pick]
            if found is None:
                return None
            row = found[0] + physical
            lo, hi = self.bounds
            return row if lo <= row < hi else None

        if isinstance(expr, Classifier):
            def label(row, running, final, number, labels):
                found = labels.get(target(running, final))
                return None if found is None else names[found]

            return label
        return lambda row, running, final, number, labels: target(running, final)

    def rows(self, match: Match) -> list:
        if match.kind is MatchKind.UNMATCHED:
            return [OutputRow(match.start, (None,) * self.width)]
        rows = self._rows(match)
        return [row._replace(timed_out=True) for row in rows] if match.kind is MatchKind.TIMED_OUT else rows

    def _rows(self, match: Match) -> list:
        table, number = self.table, match.number
        self.bounds = (0, self.size()) if self.frame is None else tuple(map(int, self._frames(match.source)))
        table.match_number = number
        facts, fold = table.initial, table.fold
        if not match.rows:
            if self.omit_empty:
                return []
            values = [None] * self.width
            for k, fn in self.running + self.final:
                atom = self.atoms[k]
                if isinstance(atom, (MatchNumber, Agg)):
                    values[k] = fn(match.start, facts, facts, number, {})
            return [OutputRow(match.source, tuple(values))]
        labels = {row: var for row, var, _ in match.rows}
        if self.one_row:
            for row, var, _ in match.rows:
                facts = fold(facts, row, var)
            last = match.rows[-1][0]
            return [OutputRow(match.source, self._evaluate(last, facts, facts, number, labels,
                                                          self.running + self.final))]
        states = []
        for row, var, excluded in match.rows:
            facts = fold(facts, row, var)
            if not excluded:
                states.append((row, facts))
        last = match.rows[-1][0]
        final = [(k, fn(last, facts, facts, number, labels)) for k, fn in self.final]
        out = []
        for row, row_facts in states:
            values = [None] * self.width
            for k, fn in self.running:
                values[k] = fn(row, row_facts, facts, number, labels)
            for k, value in final:
                values[k] = value
            out.append(OutputRow(row, tuple(values)))
        return out

    def _evaluate(self, row, running, final, number, labels, fns) -> tuple:
        values = [None] * self.width
        for k, fn in fns:
            values[k] = fn(row, running, final, number, labels)
        return tuple(values)
