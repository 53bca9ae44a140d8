"""The aggregates of the measures that numpy computes over all the matches of a flush at once
(``emit.Spans``), exactly as their Spark folds (``udtf.sparksql.aggregates``) compute them row
by row: COUNT, SUM, AVG, MIN and MAX (``Aggregate.vector``) over a column (or a cast of one
that cannot fail) of an integral or floating type (MIN / MAX: dates and timestamps too),
without DISTINCT (but MIN / MAX) or FILTER; COUNT_IF, BOOL_AND and BOOL_OR of a condition
``udtf.match.vector`` evaluates (where it vouches for every row read).

Integral sums are exact in int64: wrapping is two's complement as Spark's without ANSI, and
under ANSI a sum that could leave int64 is left to the row fold (which raises).  Floating
sums, averages and extremes are folded row by row in match order (one numpy step per row
position over all the matches, ``_sequential``): the same operations in the same order as
the Spark fold, NaN above every other double and ties keeping the earlier value.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .expr import Agg, Col, _column_cast, type_of
from .match.vector import Compiler, Unsupported, View, column_array
from .sparksql import aggregates
from .sparksql.aggregates import Fold
from .sparksql.types import INTEGRAL_RANGE, TypeKind, SqlType

LONGEST = 256  # matches longer than this (rows) leave a floating / extreme fold to the row fold
_INTEGRAL = frozenset(INTEGRAL_RANGE)
_FLOATING = frozenset((TypeKind.FLOAT, TypeKind.DOUBLE))
_INSTANTS = frozenset((TypeKind.DATE, TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ))
# the aggregates of one BOOLEAN argument, computed from the rows where it is TRUE / FALSE
_BOOLEAN = {"count_if": "count_if", "bool_and": "every", "bool_or": "some"}


class VectorFold(NamedTuple):
    """``form``: count, add (SUM), mean (AVG), minimum, maximum, or over a BOOLEAN argument
    count_if, every (BOOL_AND) or some (BOOL_OR); ``vars``: the variables whose rows it reads
    (None: all); ``columns``: the columns read (COUNT: those that must not be NULL);
    ``dtype``: the numpy type of the values folded; ``condition``: a BOOLEAN argument compiled
    by ``match.vector`` (``fn(view) -> Vec``) and the types of the columns it reads."""
    form: str
    vars: tuple | None
    columns: tuple
    dtype: type | None
    condition: tuple | None = None

    @staticmethod
    def of(agg: Agg, fold: Fold) -> VectorFold | None:
        """The vectorized form of ``agg`` (whose Spark fold is ``fold``), or None."""
        record = aggregates.lookup(agg.fn)
        if record.name in _BOOLEAN and agg.filter is None and not agg.distinct:
            compiler = Compiler({})
            try:
                if len(agg.args) != 1 or type_of(agg.args[0]) != "boolean":
                    return None
                condition = compiler.compile(agg.args[0], row_only=True)
            except Unsupported:
                return None
            return VectorFold(_BOOLEAN[record.name], agg.vars, (), None, (condition, dict(compiler.columns)))
        form = record.vector
        if form is None or agg.filter is not None or (agg.distinct and form not in ("minimum", "maximum")):
            return None
        readers = [_column_cast(a) for a in agg.args]
        if None in readers:
            return None
        columns = tuple(name for name, _ in readers)
        if form == "count":
            return VectorFold(form, agg.vars, columns, np.int64)
        if len(agg.args) != 1:
            return None
        arg = agg.args[0]
        source = SqlType.parse(arg.type if isinstance(arg, Col) else arg.source).kind
        target = fold.arg_types[0].kind
        extreme = form in ("minimum", "maximum")
        if target in _INTEGRAL and source in _INTEGRAL and form != "mean" and \
                INTEGRAL_RANGE[source][1] <= INTEGRAL_RANGE[target][1]:
            dtype = np.int64
        elif target is TypeKind.DOUBLE and source in _INTEGRAL | _FLOATING or \
                extreme and target is source is TypeKind.FLOAT:
            dtype = np.float64
        elif extreme and target is source and source in _INSTANTS:
            dtype = np.int64
        else:
            return None
        return VectorFold(form, agg.vars, columns, dtype)

    def evaluate(self, s, running: bool, ansi: bool, columns: dict):
        """(values, valid) per matched row (``running``: over the rows of its match up to it) or
        per match, or None where the row fold must decide."""
        hit = s.hit(self.vars)
        for name in self.columns:
            hit = hit & _read(s, name, None, columns)[1]
        if self.condition is not None:
            return self._boolean(s, hit, running, columns)
        seen = _segmented(hit.astype(np.int64), s, running)
        if self.form == "count":
            return seen, np.ones(len(seen), dtype=bool)
        values, _ = _read(s, self.columns[0], self.dtype, columns)
        lengths = np.diff(s.bounds)
        longest = int(lengths.max()) if len(lengths) else 0
        if self.form == "add" and self.dtype is np.int64:
            if ansi and len(values) and float(np.abs(values.astype(np.float64)).max()) * longest >= 2.0 ** 62:
                return None  # (it may overflow: the row fold raises where it does)
            return _segmented(np.where(hit, values, 0), s, running), seen > 0
        if longest > LONGEST:
            return None
        if self.form in ("add", "mean"):  # 0.0 + x1 + x2 ...: adding 0.0 for a row not read keeps the sum
            total = _sequential(np.where(hit, values, 0.0), hit, s, running, _add, 0.0)
            if self.form == "add":
                return total, seen > 0
            return total / np.maximum(seen, 1), seen > 0
        better = _greater if self.form == "maximum" else _less
        if self.dtype is np.int64:
            better = np.greater if self.form == "maximum" else np.less
        step = lambda state, had, x, read: np.where(read & (~had | better(x, state)), x, state)
        return _sequential(values, hit, s, running, step, 0), seen > 0


    def _boolean(self, s, hit: np.ndarray, running: bool, columns: dict):
        """COUNT_IF / BOOL_AND / BOOL_OR of the condition at the rows read, or None where
        ``match.vector`` cannot vouch for it (NULL or NaN in a column, an integer leaving its
        range: the row fold decides, and raises where Spark does)."""
        condition, types = self.condition
        arrays = {}
        try:
            for name, type_ in types.items():
                values, present = _read(s, name, None, columns)
                if not present.all():
                    return None
                arrays[name] = column_array(values, type_)
        except Unsupported:
            return None
        vec = condition(View(np.arange(len(s.rows)), [], [], [], arrays, len(s.rows)))
        if vec.unsure is not None and vec.unsure.any():
            return None
        read = hit if vec.valid is None else hit & vec.valid  # (NULL is not read)
        true = _segmented((read & vec.values).astype(np.int64), s, running)
        if self.form == "count_if":
            return true, np.ones(len(true), dtype=bool)
        seen = _segmented(read.astype(np.int64), s, running)
        return (true == seen if self.form == "every" else true > 0), seen > 0


def _read(s, name: str, dtype, columns: dict):
    """(values as ``dtype``, not NULL) of column ``name`` at the matched rows of ``s`` (0
    where NULL; ``dtype`` None: the Python values)."""
    key = ("column", name)
    if key not in s.memo:
        column = columns[name]
        picked = [column[r] for r in s.rows.tolist()]
        if None in picked:
            present = np.fromiter((v is not None for v in picked), dtype=bool, count=len(picked))
            picked = [0 if v is None else v for v in picked]
        else:
            present = np.ones(len(picked), dtype=bool)
        s.memo[key] = picked, present
    picked, present = s.memo[key]
    if dtype is None:
        return picked, present
    if (key, dtype) not in s.memo:
        s.memo[key, dtype] = np.array(picked, dtype=dtype).reshape(-1)
    return s.memo[key, dtype], present


def _segmented(values: np.ndarray, s, running: bool) -> np.ndarray:
    """Sums of integral ``values`` (int64, wrapping) per match, or up to each row in its match."""
    total = np.append(0, np.cumsum(values))
    if running:
        return total[1:] - total[s.bounds[:-1]][s.owner]
    return total[s.bounds[1:]] - total[s.bounds[:-1]]


def _sequential(values: np.ndarray, read: np.ndarray, s, running: bool, step, start) -> np.ndarray:
    """``state = step(state, had, x, read)`` over the rows of each match in order (``had``: a
    row was read before), from ``start``: the state after each row (``running``) or per match."""
    lengths = np.diff(s.bounds)
    state = np.full(len(lengths), start, dtype=values.dtype)
    had = np.zeros(len(lengths), dtype=bool)
    out = np.empty(len(values), dtype=values.dtype) if running else None
    live = np.flatnonzero(lengths)
    for j in range(int(lengths.max()) if len(lengths) else 0):
        live = live[lengths[live] > j]
        at = s.bounds[live] + j
        state[live] = step(state[live], had[live], values[at], read[at])
        had[live] |= read[at]
        if running:
            out[at] = state[live]
    return out if running else state


def _add(state, had, x, read):
    return state + x


def _greater(x, state):
    """Spark's order of doubles: NaN above every other value (-0.0 = 0.0: a tie)."""
    return (x > state) | (np.isnan(x) & ~np.isnan(state))


def _less(x, state):
    return (x < state) | (np.isnan(state) & ~np.isnan(x))
