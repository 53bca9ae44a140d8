"""Matches -> output rows with their measure *atoms*.

The planner reduces every MEASURES expression to atoms the engine must compute (navigations,
aggregates, CLASSIFIER, MATCH_NUMBER, each RUNNING or FINAL) and leaves the arithmetic that
combines them to Spark.  A navigation atom is emitted as the *row index* it lands on, so its
value is later taken from the original Arrow column with its exact type.

Row shapes: ONE ROW PER MATCH gives one row per match (RUNNING = FINAL there); ALL ROWS PER
MATCH gives one row per matched row that is not excluded, an empty match (unless omitted)
gives one row at its start row, and an unmatched row gives one row with NULL atoms.
"""
from __future__ import annotations

from typing import NamedTuple

from .evaluate import Match
from .expr import FactTable, Scope, compile_expr, facts_of


class OutputRow(NamedTuple):
    source: int  # partition row that the non-measure columns come from
    atoms: tuple


class Emitter:
    """``atoms``: list of (expr, final) where expr is a ``udtf.expr`` node (``navrow`` for
    navigations); ``rows_mode``: "ONE" | "ALL SHOW" | "ALL OMIT" | "ALL WITH UNMATCHED"."""

    def __init__(self, atoms, rows_mode: str, var_names, values: dict, size):
        needed: dict = {}
        for expr, _ in atoms:
            facts_of(expr, needed)
        self.table = FactTable(list(needed), values)
        scope = Scope(self.table, var_names, size)
        self.running = [(k, compile_expr(e, scope)) for k, (e, final) in enumerate(atoms) if not final]
        self.final = [(k, compile_expr(e, scope)) for k, (e, final) in enumerate(atoms) if final]
        self.width = len(atoms)
        self.one_row = rows_mode == "ONE"
        self.omit_empty = rows_mode == "ALL OMIT"

    def rows(self, match: Match) -> list:
        if match.number is None:
            return [OutputRow(match.start, (None,) * self.width)]
        facts, number, fold = self.table.initial, match.number, self.table.fold
        if not match.rows:
            if self.omit_empty:
                return []
            return [OutputRow(match.start, self._evaluate(match.start, facts, number, self.running + self.final))]
        if self.one_row:
            for row, var, _ in match.rows:
                facts = fold(facts, row, var)
            last = match.rows[-1][0]
            return [OutputRow(match.start, self._evaluate(last, facts, number, self.running + self.final))]
        states = []
        for row, var, excluded in match.rows:
            facts = fold(facts, row, var)
            if not excluded:
                states.append((row, facts))
        last = match.rows[-1][0]
        final = [(k, fn(last, facts, number)) for k, fn in self.final]
        out = []
        for row, row_facts in states:
            values = [None] * self.width
            for k, fn in self.running:
                values[k] = fn(row, row_facts, number)
            for k, value in final:
                values[k] = value
            out.append(OutputRow(row, tuple(values)))
        return out

    def _evaluate(self, row, facts, number, fns) -> tuple:
        values = [None] * self.width
        for k, fn in fns:
            values[k] = fn(row, facts, number)
        return tuple(values)
