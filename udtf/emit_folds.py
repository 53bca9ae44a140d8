"""The aggregates of the measures that numpy computes over all the matches of a flush at once
(``emit.Spans``), exactly as their Spark folds (``udtf.sparksql.aggregates``) compute them row
by row: COUNT, SUM, AVG, MIN and MAX (``Aggregate.vector``) over a column (or a cast of one
that cannot fail) of an integral or floating type (MIN / MAX: dates and timestamps, and
decimal, boolean, binary and binary-collated string columns ranked as MAX_BY's keys, too), or
over an integral or DOUBLE expression ``udtf.match.vector`` evaluates (where it vouches for
every row); COUNT_IF, BOOL_AND and BOOL_OR of a condition it evaluates; MAX_BY / MIN_BY of a
column (or a cast of one that cannot fail) by an integral, date or timestamp column, or by a
floating, decimal, boolean, binary or (binary-collated) string one ranked first, and
COLLECT_LIST (ARRAY_AGG) of a column (or such a cast): the row each match's (or each row's
RUNNING) value comes from is found with numpy, its value then converted by the fold's own
cast; VAR_SAMP / VAR_POP / STDDEV_SAMP / STDDEV_POP, SKEWNESS and KURTOSIS as for AVG:
Welford's updates folded row by row in match order as ``_sequential`` folds a floating sum,
the result computed as the fold's.

FILTER's condition, where ``match.vector`` evaluates it, drops the rows where it is not TRUE.
DISTINCT (COUNT, SUM, AVG of numbers; COUNT of dates, timestamps, booleans, decimals, binary and
binary-collated strings too) reads a value at its first row in the match only, the values
compared as the fold groups them (NaN one value, -0.0 read as 0.0).

Integral sums are exact in int64: wrapping is two's complement as Spark's without ANSI, and
under ANSI a flush where a match's sum up to a row leaves int64 (``_leaves_int64``, exact) is
left to the row fold (which raises).  Floating
sums and averages are folded row by row in match order (one numpy step per row position over
all the matches, ``_sequential``; a match longer than ``LONGEST`` by one sequential
``np.add.accumulate``): the same operations in the same order as the Spark fold.  SUM / AVG
of DECIMAL values fitting int64 unscaled are exact int64 sums (``_decimal``).
MIN / MAX and MAX_BY / MIN_BY keep one row of those read, the first extreme (MIN / MAX: NaN
above every other double, ties keeping the earlier value) or the latest (MAX_BY / MIN_BY, the
fold replacing its pick on a tie): as the sums where every match is short, and by a
segmented scan of that choice, which is associative, in log2 of the longest match numpy steps
over all the rows (``_scanned``) where one is longer than ``LONGEST``.
"""
from __future__ import annotations

import operator
from decimal import Decimal
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from .expr import Agg, Col, _column_cast, type_of
from .match.vector import NUMERIC, Compiler, Unsupported, Vec, View, column_array
from .sparksql import aggregates, collation
from .sparksql.aggregates import Fold
from .sparksql.types import INTEGRAL_RANGE, TypeKind, SqlType, arrow_type, to_arrow

LONGEST = 256  # past this many rows in a match: moments go to the row fold, extremes to the scan, floating sums
# to np.add.accumulate
_INTEGRAL = frozenset(INTEGRAL_RANGE)
_FLOATING = frozenset((TypeKind.FLOAT, TypeKind.DOUBLE))
_INSTANTS = frozenset((TypeKind.DATE, TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_NTZ))
# MAX_BY / MIN_BY keys ranked by their Python values' own order (Spark's for these types)
_RANKED = frozenset((TypeKind.STRING, TypeKind.BINARY, TypeKind.DECIMAL, TypeKind.BOOLEAN))
# the aggregates of one BOOLEAN argument, computed from the rows where it is TRUE / FALSE
_BOOLEAN = {"count_if": "count_if", "bool_and": "every", "bool_or": "some"}
# the aggregates whose value is one row's, or the rows', value: where each match's comes from
_PICKING = {"max_by": "latest_greatest", "min_by": "latest_least", "collect_list": "collect"}
# the central-moment aggregates: the order of their Welford state
_MOMENTS = {"var_samp": 2, "var_pop": 2, "stddev_samp": 2, "stddev_pop": 2, "skewness": 3, "kurtosis": 4}


class VectorFold(NamedTuple):
    """``form``: count, add (SUM), mean (AVG), minimum, maximum, or over a BOOLEAN argument
    count_if, every (BOOL_AND) or some (BOOL_OR); ``vars``: the variables whose rows it reads
    (None: all); ``columns``: the columns read (COUNT: those that must not be NULL);
    ``dtype``: the numpy type of the values folded; ``argument``: the argument, where it is not
    a column (or a cast of one that cannot fail), compiled by ``match.vector`` (``_compiled``;
    the BOOLEAN forms' always).  The picking forms, latest_greatest (MAX_BY), latest_least
    (MIN_BY) and collect (COLLECT_LIST): ``columns`` (value, ordering) or (value,), ``dtype``
    the ordering's (float64 or object: ranked, ``_ranks``), ``convert`` the value's cast (None:
    none).  Form moments (VAR_* / STDDEV_*, SKEWNESS, KURTOSIS): ``convert`` is the aggregate's
    name.  ``keep``: FILTER's condition compiled (None: none); ``distinct``: each distinct value
    of a match read once, at its first row (COUNT, SUM, AVG)."""
    form: str
    vars: tuple | None
    columns: tuple
    dtype: type | None
    argument: tuple | None = None
    convert: object = None
    keep: tuple | None = None
    distinct: bool = False

    @staticmethod
    def of(agg: Agg, fold: Fold) -> VectorFold | None:
        """The vectorized form of ``agg`` (whose Spark fold is ``fold``), or None."""
        record = aggregates.lookup(agg.fn)
        keep = None if agg.filter is None else _compiled(agg.filter, ("boolean",))
        if agg.filter is not None and keep is None:
            return None
        if agg.distinct and record.distinct is not aggregates.Distinct.SAME and \
                record.vector not in ("count", "add", "mean"):
            return None
        if record.name in _BOOLEAN:
            condition = _compiled(agg.args[0], ("boolean",)) if len(agg.args) == 1 else None
            return None if condition is None else VectorFold(_BOOLEAN[record.name], agg.vars, (), None, condition,
                                                             keep=keep)
        if record.name in _PICKING:
            return VectorFold._picking(_PICKING[record.name], agg, keep)
        form = "moments" if record.name in _MOMENTS else record.vector
        if form is None:
            return None
        distinct = agg.distinct and record.distinct is not aggregates.Distinct.SAME
        readers = [_column_cast(a) for a in agg.args]
        argument = None
        if len(agg.args) == 1 and readers == [None]:  # an expression: ``match.vector`` evaluates it
            argument = _compiled(agg.args[0], NUMERIC)
            if argument is None:
                return None
            readers = []
        elif None in readers or distinct and len(agg.args) != 1:
            return None
        columns = tuple(name for name, _ in readers)
        if form == "count":
            dtype = np.int64
            if distinct and argument is None:  # (the values themselves, grouped as Spark groups them)
                dtype = _distinct_dtype(SqlType.parse(agg.arg_types[0]))
                if dtype is None or readers[0][1] is not None:
                    return None
            return VectorFold(form, agg.vars, columns, dtype, argument, keep=keep, distinct=distinct)
        if len(agg.args) != 1:
            return None
        arg = agg.args[0]
        source = SqlType.parse(type_of(arg) if argument is not None else arg.type if isinstance(arg, Col)
                               else arg.source).kind
        target = fold.arg_types[0].kind
        extreme = form in ("minimum", "maximum")
        if target in _INTEGRAL and source in _INTEGRAL and form != "mean" and \
                INTEGRAL_RANGE[source][1] <= INTEGRAL_RANGE[target][1]:
            dtype = np.int64
        elif target is TypeKind.DOUBLE and source in _INTEGRAL | _FLOATING or \
                extreme and target is source is TypeKind.FLOAT:
            dtype = np.float64
            if form == "moments":
                return VectorFold(form, agg.vars, columns, dtype, argument, record.name, keep, distinct)
        elif extreme and target is source and source in _INSTANTS:
            dtype = np.int64
        elif form in ("add", "mean") and target is source is TypeKind.DECIMAL and argument is None and \
                readers[0][1] is None and SqlType.parse(arg.type) == fold.arg_types[0]:
            return VectorFold(form, agg.vars, columns, Decimal, convert=(fold.arg_types[0], fold.result_type),
                              keep=keep, distinct=distinct)
        elif extreme and target is source and source in _RANKED and argument is None and readers[0][1] is None and \
                (source is not TypeKind.STRING or collation.binary(SqlType.parse(arg.type).collation)):
            dtype = object
        else:
            return None
        return VectorFold(form, agg.vars, columns, dtype, argument, keep=keep, distinct=distinct)

    @staticmethod
    def _picking(form: str, agg: Agg, keep) -> VectorFold | None:
        readers = [_column_cast(a) for a in agg.args]
        if None in readers:
            return None
        (value, convert), *ordering = readers
        if form == "collect":
            return VectorFold(form, agg.vars, (value,), SqlType.parse(agg.type), convert=convert, keep=keep)
        (order, cast), = ordering
        key = SqlType.parse(agg.args[1].type)
        if cast is not None or key.kind is TypeKind.STRING and not collation.binary(key.collation):
            return None
        dtype = np.int64 if key.kind in _INTEGRAL | _INSTANTS else np.float64 if key.kind in _FLOATING else \
            object if key.kind in _RANKED else None
        return None if dtype is None else VectorFold(form, agg.vars, (value, order), dtype, convert=convert,
                                                     keep=keep)

    def evaluate(self, s, running: bool, ansi: bool, columns: dict):
        """(values, valid) per matched row (``running``: over the rows of its match up to it) or
        per match (COLLECT_LIST's: an Arrow list array), or None where the row fold must decide."""
        hit = s.hit(self.vars)
        if self.keep is not None:  # (FILTER: a row is read where it is TRUE)
            keep = _evaluated(s, self.keep, columns)
            if keep is None:
                return None
            hit = hit & keep.values if keep.valid is None else hit & keep.values & keep.valid
        if self.form in _PICKED:
            return self._picked(s, hit, running, columns)
        if self.dtype is Decimal:  # (the rows read alone are converted)
            found = _unscaled(s, self.columns[0], self.convert[0], columns, hit)
            if found is None:
                return None
            values, hit = found
        for name in self.columns if self.dtype is not Decimal else ():
            hit = hit & _read(s, name, None, columns)[1]
        if self.form in _BOOLEAN.values():
            return self._boolean(s, hit, running, columns)
        if self.argument is not None:
            vec = _evaluated(s, self.argument, columns)
            if vec is None:
                return None
            values = vec.values if self.form == "count" else vec.values.astype(self.dtype)
            if vec.valid is not None:  # (NULL is not read)
                hit = hit & vec.valid
        elif self.dtype is object and self.distinct:  # (COUNT DISTINCT: Python values, a NULL's placeholder not read)
            values = object_array(_read(s, self.columns[0], None, columns)[0])
        elif self.dtype is not object and self.dtype is not Decimal and (self.form != "count" or self.distinct):
            values = _read(s, self.columns[0], self.dtype, columns)[0]
        if self.distinct:
            if values.dtype == np.float64:  # (as Spark groups them, and the fold reads them: -0.0 as 0.0)
                values = np.where(values == 0.0, 0.0, values)
            hit = _first_seen(values, hit, s)
        seen = _segmented(hit.astype(np.int64), s, running)
        if self.form == "count":
            return seen, np.ones(len(seen), dtype=bool)
        lengths = np.diff(s.bounds)
        longest = int(lengths.max()) if len(lengths) else 0
        if self.dtype is Decimal:
            return _decimal(self.form, np.where(hit, values, 0), seen, s, running, longest, *self.convert)
        if self.form == "add" and self.dtype is np.int64:
            values = np.where(hit, values, 0)
            if ansi and len(values) and float(np.abs(values.astype(np.float64)).max()) * longest >= 2.0 ** 62 and \
                    _leaves_int64(values, s):
                return None  # (the row fold raises where it does)
            return _segmented(values, s, running), seen > 0
        if self.form in ("minimum", "maximum") and self.dtype is object:  # (ranked: the row of the first extreme)
            order = _ranks(*_read(s, self.columns[0], None, columns))
            better = np.greater if self.form == "maximum" else np.less
            pick = _picks(hit, s, running, lambda later, earlier: better(order[later], order[earlier]))
            return _gathered(columns[self.columns[0]], s, pick, None), seen > 0
        if self.form in ("minimum", "maximum"):  # the first row read holding the extreme
            better = _greater if self.form == "maximum" else _less
            if self.dtype is np.int64:
                better = np.greater if self.form == "maximum" else np.less
            if longest > LONGEST:  # (a scan: log2(longest) steps over all the rows)
                pick = _scanned(hit, s, running, lambda later, earlier: better(values[later], values[earlier]))
                return values[np.maximum(pick, 0)], pick >= 0
            step = lambda state, had, x, read: np.where(read & (~had | better(x, state)), x, state)
            return _sequential(values, hit, s, running, step, 0), seen > 0
        if self.form == "moments":
            if longest > LONGEST:
                return None
            order = _MOMENTS[self.convert]
            with np.errstate(all="ignore"):  # (a row not read computes what is not kept)
                state = _sequential(values, hit, s, running, _welford(order), np.zeros(order + 1))
                return _statistic(self.convert, state, ansi)
        if self.form in ("add", "mean"):  # 0.0 + x1 + x2 ...: adding 0.0 for a row not read keeps the sum
            total = _summed(np.where(hit, values, 0.0), hit, s, running)
            if self.form == "add":
                return total, seen > 0
            return total / np.maximum(seen, 1), seen > 0

    def _picked(self, s, hit: np.ndarray, running: bool, columns: dict):
        """MAX_BY / MIN_BY: the value at the latest row read whose ordering is not NULL and
        the greatest (least) so far (the fold replaces its pick on a tie); COLLECT_LIST: the
        values read that are not NULL, in match order (a tuple per row; per match, FINAL, one
        Arrow list array of them all)."""
        read = hit & _read(s, self.columns[-1], None, columns)[1]  # (a NULL is skipped)
        column, convert = columns[self.columns[0]], self.convert
        if self.form == "collect":
            values = gather(column, s.rows[read])
            if convert is not None:
                values = list(map(convert, values))
            before = np.append(0, np.cumsum(read))
            if not running:  # (each match's values follow the previous match's)
                out = pa.ListArray.from_arrays(pa.array(before[s.bounds], pa.int32()), to_arrow(self.dtype.element, values),
                                               type=arrow_type(self.dtype))
                return out, np.ones(len(out), dtype=bool)
            lo = before[s.bounds[:-1]]
            out = object_array([tuple(values[a:b]) for a, b in zip(lo[s.owner].tolist(), before[1:].tolist())])
            return out, np.ones(len(out), dtype=bool)
        order, present = _read(s, self.columns[1], None if self.dtype is object else self.dtype, columns)
        if self.dtype is not np.int64:  # (ranked: one rank per value, as Spark orders them)
            order = _ranks(order, present)
        better = np.greater_equal if self.form == "latest_greatest" else np.less_equal
        pick = _picks(read, s, running, lambda later, earlier: better(order[later], order[earlier]))
        return _gathered(column, s, pick, convert), _segmented(read.astype(np.int64), s, running) > 0

    def _boolean(self, s, hit: np.ndarray, running: bool, columns: dict):
        """COUNT_IF / BOOL_AND / BOOL_OR of the condition at the rows read, or None where
        ``match.vector`` cannot vouch for it (an integer leaving its
        range: the row fold decides, and raises where Spark does)."""
        vec = _evaluated(s, self.argument, columns)
        if vec is None:
            return None
        read = hit if vec.valid is None else hit & vec.valid  # (NULL is not read)
        true = _segmented((read & vec.values).astype(np.int64), s, running)
        if self.form == "count_if":
            return true, np.ones(len(true), dtype=bool)
        seen = _segmented(read.astype(np.int64), s, running)
        return (true == seen if self.form == "every" else true > 0), seen > 0


_PICKED = frozenset(_PICKING.values())


def object_array(values: list) -> np.ndarray:
    """``values`` as a one-dimensional object array (tuples stay elements)."""
    return np.array(values + [None], dtype=object)[:-1]


def gather(column: list, rows: np.ndarray) -> list:
    """The values of ``column`` (a list) at ``rows``."""
    if len(rows) < 2:
        return [column[r] for r in rows.tolist()]
    return list(operator.itemgetter(*rows.tolist())(column))


def _compiled(expr, types) -> tuple | None:
    """``expr`` (a row expression of one of ``types``) compiled by ``match.vector`` over columns
    that may hold NULLs: (``fn(view) -> Vec``, the types of the columns it reads), or None
    outside it."""
    compiler = Compiler({}, nullable=True)
    try:
        if type_of(expr) not in types:
            return None
        return compiler.compile(expr, row_only=True), dict(compiler.columns)
    except Unsupported:
        return None


def _evaluated(s, compiled: tuple, columns: dict):
    """The ``Vec`` of a ``_compiled`` expression at the matched rows of ``s`` (a NULL in a
    column read is NULL through every function but AND / OR, three-valued there; a NaN compares
    in Spark's order), or None where ``match.vector`` cannot vouch for every row (an integer
    leaving its range: the row fold decides, and raises where Spark does)."""
    fn, types = compiled
    arrays, valid = {}, {}
    try:
        for name, type_ in types.items():
            values, present = _read(s, name, None, columns)  # (0 where NULL)
            if not present.all():
                valid[name] = present
            arrays[name] = column_array(values, type_, nan=True)
    except Unsupported:
        return None
    with np.errstate(all="ignore"):  # (overflow to infinity, inf - inf: IEEE's values, the fold's too)
        vec = fn(View(np.arange(len(s.rows)), [], [], [], arrays, len(s.rows), valid))
    return None if vec.unsure is not None and vec.unsure.any() else vec


def _distinct_dtype(t: SqlType):
    """How COUNT(DISTINCT v) of ``t`` values reads them, or None (then the row fold): int64
    (integral, and dates and timestamps, held as days / microseconds), float64, or object (their
    Python values, equal exactly where Spark's values are: booleans, decimals of one type,
    binary, strings of a binary collation)."""
    if t.kind in _INTEGRAL | _INSTANTS:
        return np.int64
    if t.kind in _FLOATING:
        return np.float64
    if t.kind in _RANKED and (t.kind is not TypeKind.STRING or collation.binary(t.collation)):
        return object
    return None


def _first_seen(values: np.ndarray, read: np.ndarray, s) -> np.ndarray:
    """Per matched row: is it read, its value (numbers: NaN one value, -0.0 = 0.0; or Python
    values of one type) not read before in its match?"""
    at = np.flatnonzero(read)
    rank = _ranks(values[at], np.ones(len(at), dtype=bool))
    owner = s.owner[at]
    order = np.lexsort((at, rank, owner))  # (by match, then value, then row)
    rank, owner = rank[order], owner[order]
    new = np.ones(len(at), dtype=bool)
    new[1:] = (rank[1:] != rank[:-1]) | (owner[1:] != owner[:-1])
    first = np.zeros(len(read), dtype=bool)
    first[at[order[new]]] = True
    return first


def _read(s, name: str, dtype, columns: dict):
    """(values as ``dtype``, not NULL) of column ``name`` at the matched rows of ``s`` (0
    where NULL; ``dtype`` None: the Python values)."""
    key = ("column", name)
    if key not in s.memo:
        column = columns[name]
        picked = gather(column, s.rows)
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


def _unscaled(s, name: str, type_: SqlType, columns: dict, hit: np.ndarray):
    """(values, read) of the DECIMAL column ``name`` (of ``type_``) at the matched rows of
    ``s``: its unscaled int64s where ``hit`` (0 elsewhere), and ``hit`` where it is not NULL;
    None where one does not fit in int64."""
    at = np.flatnonzero(hit)
    if not len(at):
        return np.zeros(len(hit), dtype=np.int64), hit
    array = pa.array(gather(columns[name], s.rows[at]), arrow_type(type_))
    words = np.frombuffer(array.buffers()[1], dtype=np.int64).reshape(-1, 2)[array.offset:array.offset + len(at)]
    low, high = words[:, 0], words[:, 1]  # (little-endian two's complement: high repeats low's sign)
    if array.null_count:
        present = array.is_valid().to_numpy(zero_copy_only=False)
        low, high, hit = np.where(present, low, 0), np.where(present, high, 0), hit.copy()
        hit[at[~present]] = False
    if not (high == low >> 63).all():
        return None
    values = np.zeros(len(hit), dtype=np.int64)
    values[at] = low
    return values, hit


def _decimal(form: str, values: np.ndarray, seen: np.ndarray, s, running: bool, longest: int, arg: SqlType,
             result: SqlType):
    """(values, valid) of SUM / AVG (``form`` add / mean) of DECIMAL values of type ``arg``
    (``values``: unscaled int64s, 0 at a row not read; ``seen``: the rows read) as the fold
    computes them, as an Arrow array of the ``result`` type: the exact sum, and the average,
    that sum divided by the count rounded half away from zero to the result's scale (the
    fold's 38-digit quotient rounds first, at a digit that cannot change this rounding for a
    count below 10**14); None where a sum could leave 2**62 (the row fold decides).  Every
    result fits its type: a sum of fewer than 10**10 values below 10**p has p + 10 digits,
    an average is at most the largest value, and a result of 38 digits holds any int64
    (Spark's NULL or ANSI error for a result out of range needs values past int64)."""
    if len(values) and float(np.abs(values.astype(np.float64)).max()) * longest >= 2.0 ** 62:
        return None
    total = _segmented(values, s, running)
    if form == "mean":
        shift, count = 10 ** (result.scale - arg.scale), np.maximum(seen, 1)
        whole, part = np.divmod(np.abs(total), count)
        if len(whole) and int(whole.max()) >= (1 << 62) // shift:
            return None
        quotient, rest = np.divmod(part * shift, count)
        quotient += whole * shift + (2 * rest >= count)
        total = np.where(total < 0, -quotient, quotient)
    words = np.stack([total, total >> 63], axis=1)
    out = pa.Array.from_buffers(arrow_type(result), len(total), [None, pa.py_buffer(words.tobytes())])
    return out, seen > 0


def _ranks(keys, present: np.ndarray) -> np.ndarray:
    """The rank of each of ``keys`` (doubles, or Python values of one type) among them, equal
    keys one rank: NaN above every other double, -0.0 = 0.0 (Spark's order, ``compare``); a
    key not ``present`` (NULL) ranks as the first present one."""
    if not isinstance(keys, np.ndarray):  # (the placeholder of a NULL must compare with the values)
        keys = object_array(keys)
        if not present.all() and present.any():
            keys[~present] = keys[int(present.argmax())]
    return np.unique(keys, return_inverse=True)[1].reshape(-1) if len(keys) else np.zeros(0, dtype=np.int64)


def _leaves_int64(values: np.ndarray, s) -> bool:
    """Does a sum of int64 ``values`` over the rows of a match up to one of them leave int64?
    Exact: the values' high and low 32-bit halves summed apart (no int64 sum of either
    overflows below 2**31 rows), then carried."""
    high, low = values >> 32, values & 0xFFFFFFFF
    starts = s.bounds[:-1][s.owner]
    high_sums, low_sums = (np.cumsum(half) - np.append(0, np.cumsum(half))[starts] for half in (high, low))
    carried = high_sums + (low_sums >> 32)
    return bool(((carried < -(1 << 31)) | (carried >= 1 << 31)).any())


def _segmented(values: np.ndarray, s, running: bool) -> np.ndarray:
    """Sums of integral ``values`` (int64, wrapping) per match, or up to each row in its match."""
    total = np.append(0, np.cumsum(values))
    if running:
        return total[1:] - total[s.bounds[:-1]][s.owner]
    return total[s.bounds[1:]] - total[s.bounds[:-1]]


def _summed(values: np.ndarray, read: np.ndarray, s, running: bool) -> np.ndarray:
    """The sums 0.0 + x1 + x2 ... of doubles ``values`` per match (``running``: after each of
    its rows), added in row order as the fold adds them: a numpy step per row position over
    the matches of up to ``LONGEST`` rows (``_sequential``), one ``np.add.accumulate`` per
    longer match (which adds in order, where ``np.sum`` adds pairwise)."""
    lengths = np.diff(s.bounds)
    long = lengths > LONGEST
    with np.errstate(all="ignore"):  # (overflowing to infinity, inf - inf: the fold's values too)
        total = _sequential(values, read, s, running, _add, 0.0, np.where(long, 0, lengths))
        for k in np.flatnonzero(long).tolist():
            lo, hi = int(s.bounds[k]), int(s.bounds[k + 1])
            sums = np.add.accumulate(np.concatenate(([0.0], values[lo:hi])))
            if running:
                total[lo:hi] = sums[1:]
            else:
                total[k] = sums[-1]
    return total


def _sequential(values: np.ndarray, read: np.ndarray, s, running: bool, step, start, lengths=None) -> np.ndarray:
    """``state = step(state, had, x, read)`` over the rows of each match in order (``had``: a
    row was read before), from ``start``: the state after each row (``running``) or per match;
    over the first ``lengths`` rows of each match (None: all; a row past them stays unset)."""
    lengths = np.diff(s.bounds) if lengths is None else lengths
    state = np.empty((len(lengths), *np.shape(start)), dtype=values.dtype)  # (a state may be a row of values)
    state[...] = start
    had = np.zeros(len(lengths), dtype=bool)
    out = np.empty((len(values), *np.shape(start)), dtype=values.dtype) if running else None
    live = np.flatnonzero(lengths)
    for j in range(int(lengths.max()) if len(lengths) else 0):
        live = live[lengths[live] > j]
        at = s.bounds[live] + j
        state[live] = step(state[live], had[live], values[at], read[at])
        had[live] |= read[at]
        if running:
            out[at] = state[live]
    return out if running else state


def _scanned(read: np.ndarray, s, running: bool, wins) -> np.ndarray:
    """The matched row (index, -1: none) a picking fold holds after the rows of each match
    (``running``: after each row), the fold keeping the row read first unless a later one
    ``wins(later, earlier)`` (index arrays): an inclusive scan, segmented by match, of that
    choice, which is associative (Hillis-Steele: log2 of the longest match numpy steps over
    all the rows), so it holds the row the fold holds, row by row.  (``_sequential`` takes
    fewer steps where every match is short.)"""
    n = len(read)  # (> LONGEST: a match is that long)
    pick = np.where(read, np.arange(n), -1)
    lengths = np.diff(s.bounds)
    reach = np.arange(n) - s.bounds[:-1][s.owner]  # rows of its match before each row
    span = 1
    while span < int(lengths.max()):
        later, earlier = pick[span:], pick[:-span]
        keep = (reach[span:] >= span) & (earlier >= 0) & \
            ((later < 0) | ~wins(np.maximum(later, 0), np.maximum(earlier, 0)))
        pick[span:] = np.where(keep, earlier, later)  # (from the previous step's picks)
        span *= 2
    if running:
        return pick
    return np.where(lengths > 0, pick[np.maximum(s.bounds[1:] - 1, 0)], -1)


def _picks(read: np.ndarray, s, running: bool, wins) -> np.ndarray:
    """The matched row a picking fold holds (see ``_scanned``; 0 where none): by
    ``_sequential`` where every match is short, else by ``_scanned``."""
    if len(s.rows) and int(np.diff(s.bounds).max()) > LONGEST:
        return np.maximum(_scanned(read, s, running, wins), 0)
    step = lambda state, had, x, read: np.where(read & (~had | wins(x, state)), x, state)
    return _sequential(np.arange(len(s.rows)), read, s, running, step, 0)


def _gathered(column: list, s, pick: np.ndarray, convert) -> np.ndarray:
    """The values of ``column`` at the matched rows ``pick`` (converted by ``convert``, None:
    as they are), as an object array (None for each pick where ``s`` has no matched row)."""
    values = gather(column, s.rows[pick]) if len(s.rows) else []
    if convert is not None:
        values = list(map(convert, values))
    return object_array(values + [None] * (len(pick) - len(values)))


def _welford(order: int):
    """One row of Spark's CentralMomentAgg (``aggregates._moments``) on (n, avg, m2[, m3[, m4]])
    states, its operations in the fold's order."""
    def step(state, had, x, read):
        n, avg, m2, *higher = state.T
        n = n + 1.0
        delta = x - avg
        delta_n = delta / n
        new_m2 = m2 + delta * (delta - delta_n)
        updated = [n, avg + delta_n, new_m2]
        if order >= 3:
            m3, *m4 = higher
            delta2, delta_n2 = delta * delta, delta_n * delta_n
            new_m3 = m3 - 3.0 * delta_n * new_m2 + delta * (delta2 - delta_n2)
            updated.append(new_m3)
            if order >= 4:
                updated.append(m4[0] - 4.0 * delta_n * new_m3 - 6.0 * delta_n2 * new_m2 +
                               delta * (delta * delta2 - delta_n * delta_n2))
        return np.where(read[:, None], np.stack(updated, axis=1), state)
    return step


def _statistic(name: str, state: np.ndarray, ansi: bool):
    """(values, valid) of the central-moment aggregate ``name`` of Welford ``state``s, as the
    fold's result (``aggregates._variance``, ``_skewness``, ``_kurtosis``) computes them; None
    where one of them divides by zero under ANSI (the row fold raises DIVIDE_BY_ZERO)."""
    n, m2 = state[:, 0], state[:, 2]
    if name in ("skewness", "kurtosis"):
        m4 = state[:, 4] if name == "kurtosis" else None
        top, bottom = (np.sqrt(n) * state[:, 3], np.sqrt(m2 * m2 * m2)) if m4 is None else (n * m4, m2 * m2)
        valid = (n > 0.0) & (m2 != 0.0)
        zero = valid & (bottom == 0.0)  # (m2's square or cube underflows)
        if ansi and zero.any():
            return None
        values = top / bottom
        return (values if m4 is None else values - 3.0), valid & ~zero
    sample = name.endswith("_samp")
    values = m2 / (n - 1.0) if sample else m2 / n
    return (np.sqrt(values) if name.startswith("stddev") else values), n > (1.0 if sample else 0.0)


def _add(state, had, x, read):
    return state + x


def _greater(x, state):
    """Spark's order of doubles: NaN above every other value (-0.0 = 0.0: a tie)."""
    return (x > state) | (np.isnan(x) & ~np.isnan(state))


def _less(x, state):
    return (x < state) | (np.isnan(state) & ~np.isnan(x))
