"""Differential fuzz of the streaming path against batch (tests/stream_fuzz_support.py).

* Engine level, no Spark: the engine's random plans (tests/test_stream_engine.py's ``Case``:
  both semantics, WITHIN, UNTIL, PREV across steps, anchors, every skip and rows-per-match
  mode) through ``ShardStepper`` under ``stream_fuzz_support.Arrival`` - micro-batches of 0-60
  rows, empty ones, 1-3 shards, late rows, a fresh stepper (a restart) before a random share of
  the steps - against ``PartitionRunner`` over the rows not set aside as late.
* Statement level, through Spark: bench/shapes.py's random shapes (with WITHIN, FlinkCEP
  semantics, ties in the event time, NULLs, three keys) planned as a stream and as a batch
  statement: the stepper against the batch engine under several arrivals, and the rewritten
  streaming statement over the stepper's output against ``spark.sql``.
* Both also over the inputs a stream must place as batch does (``odd_rows``, ``odd_values``):
  NULL event times (late, whenever they arrive: the batch runs over the timed rows), ties cut
  by micro-batches, NULL, NaN and 0.0 / -0.0 keys, NaN and NULL in DEFINE and MEASURES columns,
  a DOUBLE tie-breaker descending.  (LAYERs: tests/test_stream_layers.py, NULL ends.)
"""
from __future__ import annotations

import math
import random
import re

import pytest
from pyspark.errors import ArithmeticException

from stream_fuzz_support import (ODD_SCHEMA, REFUSALS, SCHEMA, SECOND, Arrival, Planned, batch_engine, engine_case, load_rows,
                                 odd_values, rows_for, shape_sql, statement_rows, stream_engine)
from test_stream_engine import Case, _table
from udtf import expr as ir
from udtf.errors import MatchRecognizeError
from udtf.plan import Output, OutputKind, Semantics
from udtf.stream import ShardStepper, arrow_schema, lookback, reads_across_gaps
from udtf.transport import dump_state, load_state

import pyarrow as pa
import pyarrow.compute as pc


class EngineCase:
    """A ``test_stream_engine.Case`` as ``stream_fuzz_support.Planned`` (no Spark); for two seeds
    in three without its measures MATCH_NUMBER and PREV (so that a key's state goes once it is
    decided, unless its DEFINE reads PREV or the pattern ``^``), and for odd seeds with key "b"
    ending halfway (its shard, when it has one of its own, empties before the stream ends)."""

    def __init__(self, case: Case, odd: bool = False):
        self.case = case
        spec, plan = case.spec(), case.plan
        if case.seed % 3:
            carry = [o for o in plan.output if o.kind is OutputKind.CARRY]
            last = Output(OutputKind.TAKE, column="seq", atom=2)
            outputs = (*carry, last, Output(OutputKind.VALUE, atom=0), Output(OutputKind.TAKE, column="seq", atom=1),
                       last, last)
            plan = plan._replace(atoms=plan.atoms[1:4], output=outputs)
            context = lookback(plan)
            spec = spec._replace(plan=plan.to_json(), context=context, fingerprint=spec.fingerprint._replace(
                context=context, tail=reads_across_gaps(plan, context)))
        self.spec, self.plan = spec, plan
        self.input_schema, self.output_schema = arrow_schema(spec.inputs), arrow_schema(spec.outputs)
        rows = case.rows
        if case.seed % 2:
            rows = [r for r in rows if r["k"] == "a" or r["seq"] <= len(rows) * 3 // 4]
        if odd:
            rows = odd_rows(rows, case.seed)
        self.input = _table(self.input_schema, rows)

    def stepper(self) -> ShardStepper:
        return ShardStepper(self.spec, self.input_schema, self.output_schema)


def odd_rows(rows: list, seed: int) -> list:
    """``rows`` with the inputs a stream must place as batch does: a NULL event time now and
    then (``ts`` and the WITHIN key ``t``), event times tied with the row before (ties that
    micro-batches cut), key "b" NULL on a share of seeds."""
    r = random.Random(f"odd:{seed}")
    out, before = [], {}
    null_key = r.random() < 0.3
    for row in rows:
        row = dict(row)
        if null_key and row["k"] == "b":
            row["k"] = None
        if r.random() < 0.06:
            row["ts"] = row["t"] = None
        elif row["k"] in before and r.random() < 0.2:
            row["ts"] = row["t"] = before[row["k"]]  # (a tie with the key's row before)
        if row["ts"] is not None:
            before[row["k"]] = row["ts"]
        out.append(row)
    return out


def _check_engine(seeds, semantics, anchored=False, odd=False):
    for seed in seeds:
        case = EngineCase(Case(seed, semantics, anchored), odd)
        try:  # (over the rows with an event time: the others are late)
            batch_engine(case, case.input.filter(pc.is_valid(case.input.column("ts"))))
        except MatchRecognizeError as e:  # a runtime error (AFTER MATCH SKIP): the stream fails alike (with
            # another key's error, if one steps first)
            with pytest.raises(MatchRecognizeError, match=re.escape(e.message.split(" failed")[0])):
                engine_case(case, seed)
            continue
        for arrival in range(3):
            try:
                got, expected, _ = engine_case(case, seed * 7 + arrival, late=0.1 if arrival == 2 else 0.0)
            except MatchRecognizeError as e:  # (without its late rows, the input may fail as above)
                assert arrival == 2 and e.message.startswith("AFTER MATCH SKIP"), case.case.describe()
                continue
            assert got == expected, f"{case.case.describe()} arrival {arrival}"


@pytest.mark.parametrize("semantics", [Semantics.STANDARD, Semantics.FLINKCEP])
def test_engine_plans_stream_like_batch(semantics):
    """80 plans per semantics, 3 arrivals each (one with late rows)."""
    _check_engine(range(1000, 1080), semantics)


def test_anchored_plans_stream_like_batch():
    _check_engine(range(2000, 2040), Semantics.STANDARD, anchored=True)


@pytest.mark.parametrize("semantics", [Semantics.STANDARD, Semantics.FLINKCEP])
def test_engine_plans_with_null_times_and_ties_stream_like_batch(semantics):
    """20 plans per semantics over ``odd_rows``: a row without event time is late (set aside,
    as a row behind the watermark is), whenever it arrives."""
    _check_engine(range(4000, 4020), semantics, odd=True)


@pytest.mark.slow
@pytest.mark.parametrize("semantics", [Semantics.STANDARD, Semantics.FLINKCEP])
def test_engine_plans_stream_like_batch_wide(semantics):
    _check_engine(range(3000, 3500), semantics)
    _check_engine(range(5000, 5100), semantics, odd=True)


def _raises_too(spark, sql: str, error) -> None:
    """The stream refuses ``sql``, or its input (which Spark computes over the batch statement's
    rows and the late ones) raises ``error``'s condition."""
    try:
        Planned(spark, sql)
    except MatchRecognizeError as e:
        assert any(m in e.message for m in REFUSALS), e.message
    except ArithmeticException as e:
        assert e.getCondition() == error.getCondition()
    else:
        pytest.fail(f"the stream's input does not raise {error.getCondition()}")


def _check_shapes(spark, indexes, arrivals, odd=False):
    """``odd``: over ``odd_values`` (the batch statement over the rows with an event time: the
    others are late)."""
    import sql_ext

    sql_ext.enable(spark)
    checked = 0
    for index in indexes:
        rows = rows_for(index, keys=3, per_key=30)
        if odd:
            rows = odd_values(rows, index)
            load_rows(spark, "fuzz_timed", [r for r in rows if r["ts"] is not None], ODD_SCHEMA)
        load_rows(spark, "fuzz_src", rows, ODD_SCHEMA if odd else SCHEMA)
        sql, describe = shape_sql(1, index, "fuzz_src")
        if odd and index % 2:  # (ties broken by a DOUBLE key, descending: NaN first, NULL last)
            sql, describe = sql.replace("ORDER BY ts, seq", "ORDER BY ts, price DESC, seq"), describe + ", by price DESC"
        batch_sql = sql.replace("fuzz_src", "fuzz_timed") if odd else sql
        try:
            spark.sql(batch_sql).collect()
        except MatchRecognizeError:
            continue  # (a shape batch refuses: the stream refuses it too, at analysis)
        except ArithmeticException as e:  # Spark's own error over the odd values (ANSI: NaN cast to INT)
            _raises_too(spark, sql, e)
            continue
        try:
            planned = Planned(spark, sql)
        except MatchRecognizeError as e:
            assert any(m in e.message for m in REFUSALS), f"{describe}: {e.message}"
            continue
        for arrival in range(arrivals):
            got, expected, _ = engine_case(planned, index * 100 + arrival, late=0.1 if arrival % 3 == 2 else 0.0)
            assert got == expected, f"{describe}, arrival {arrival}\n{sql}"
        table = planned.input
        times = table.column(planned.spec.order[0].column).cast(pa.int64()).to_pylist()
        output, _ = stream_engine(planned, table, Arrival(index, table.num_rows, times, 3 * SECOND, 0.0))
        got, expected = statement_rows(spark, planned, output, batch_sql)
        assert got == expected, f"{describe}\n{sql}"
        checked += 1
    assert checked >= len(indexes) // 2, "most shapes should be checked, not skipped"


def test_shapes_stream_like_batch(spark):
    _check_shapes(spark, range(0, 6), arrivals=3)


def test_shapes_over_nan_null_and_untimed_rows_stream_like_batch(spark):
    """Shapes over DOUBLE keys (0.0 and -0.0 one partition, NaN, NULL), NaN and NULL in the
    DEFINE and MEASURES columns, NULL event times and ties."""
    _check_shapes(spark, range(7, 8), arrivals=2, odd=True)


@pytest.mark.slow
def test_shapes_stream_like_batch_wide(spark):
    _check_shapes(spark, range(12, 72), arrivals=4)
    _check_shapes(spark, range(72, 78), arrivals=2, odd=True)


TYPED = ("sym, ts, seq, price, x, CAST(price AS DECIMAL(20, 4)) / 3 AS d, "
         "named_struct('big', 9007199254740993L + seq, 'at', ts + INTERVAL 1 HOUR, 'p', price) AS st, "
         "array(x, price, NULL) AS arr, map('p', price, 'x', x) AS mp")
TYPED_MEASURES = "FIRST(st) AS t_st, LAST(arr) AS t_arr, LAST(mp) AS t_mp, SUM(d) AS t_d, LAST(ts) AS t_ts, "


@pytest.mark.slow
def test_shapes_on_a_live_stream(spark, tmp_path, confs):
    """A few random shapes (with DECIMAL, nested STRUCT / ARRAY / MAP and TIMESTAMP measures,
    session zone America/Los_Angeles) through ``sql_ext.stream`` on a scripted source with a
    watermark, against ``spark.sql`` over the same rows."""
    import sql_ext
    from stream_support import END_TS, micros, run_to_end, scripted, write_script
    from test_streaming import KEEP, _comparable, _split


    sql_ext.enable(spark)
    confs(spark, {"spark.sql.session.timeZone": "America/Los_Angeles"})
    done = 0
    for index in (0, 3, 5, 8, 14, 21):
        rows = rows_for(index, keys=3, per_key=16)
        load_rows(spark, "typed_src", rows)
        spark.sql(f"SELECT {TYPED} FROM typed_src").createOrReplaceTempView("typed_rest")
        sql, describe = shape_sql(1, index, "__src__")
        sql = sql.replace("  MEASURES ", "  MEASURES " + TYPED_MEASURES, 1)
        try:
            expected = sorted(map(_comparable, spark.sql(sql.replace("__src__", "typed_rest")).collect()), key=repr)
        except MatchRecognizeError:
            continue
        r = __import__("random").Random(index)
        arrival = sorted(rows, key=lambda row: row["ts"] + r.randrange(3 * SECOND))
        cuts = sorted(r.sample(range(1, len(arrival)), 3))
        batches = [[[row[c] for c in ("sym", "ts", "seq", "price", "x")] for row in arrival[a:b]]
                   for a, b in zip([0] + cuts, cuts + [len(arrival)])]
        batches.append([[-1, micros(END_TS), 0, 0, 0]])
        script = write_script(f"{tmp_path}/{index}/script.json", SCHEMA, batches)
        scripted(spark, script, "ts", "4 seconds").where(KEEP).selectExpr(*_split(TYPED)) \
            .createOrReplaceTempView("typed_live")
        try:
            frame = sql_ext.stream(spark, sql.replace("__src__", "typed_live"))
        except MatchRecognizeError as e:
            assert any(m in e.message for m in REFUSALS), f"{describe}: {e.message}"
            continue
        got, _ = run_to_end(frame, f"{tmp_path}/{index}/cp")
        assert sorted((_comparable(row) for _, row in got), key=repr) == expected, f"{describe}\n{sql}"
        done += 1
    assert done >= 3


def test_a_late_row_of_a_key_whose_state_went_is_late():
    """Found by this fuzz's arrival model (keys ending at different times, late rows): ``A B``
    (A AS m_A, B AS m_B, ONE ROW PER MATCH) over key a's rows A at 1 s, B at 3 s matches (1, 3)
    once the watermark passes 3 s, and the key's state goes - its shard's with it.  A row A at
    2 s arriving with the watermark at 10 s was taken for a new key's first row (a shard without
    state had no watermark to be late against) and matched with the next row, B at 11 s: (2, 4)
    - a match neither the batch query over all rows ((2, 3)) nor over the rows the stream keeps
    ((1, 3)) has.  Now the emptied shard keeps its watermark until the stream ends, and the row is
    late."""
    from udtf.stream import END_OF_STREAM, Column, OrderKey

    stepper = _a_then_b((Column("k", '"string"'), Column("seq", '"long"'), Column("ts", '"timestamp"'),
                         Column("m_A", '"boolean"'), Column("m_B", '"boolean"')),
                        (OrderKey("ts", False, True), OrderKey("seq", False, True)))
    t0 = 1_700_000_000 * SECOND

    def rows(*values):
        return pa.table({"k": ["a"] * len(values), "seq": [v[0] for v in values],
                         "ts": pa.array([t0 + v[1] * SECOND for v in values], pa.timestamp("us", "UTC")),
                         "m_A": [v[2] == "A" for v in values], "m_B": [v[2] == "B" for v in values]})

    out = []
    shard = None
    ten = (t0 + 10 * SECOND) // 1000  # the watermark at 10 s (ms)
    for new, watermark in ((rows((1, 1, "A"), (3, 3, "B")), 0), (None, ten), (rows((2, 2, "A"), (4, 11, "B")), ten),
                           (None, END_OF_STREAM // 1000)):
        done = stepper.step(shard, new, watermark)
        shard = None if done.shard is None else stepper.restore(load_state(dump_state(stepper.stored(done.shard))))
        out += [] if done.output is None else done.output.to_pylist()
        if new is not None and new.column("seq")[0].as_py() == 2:
            assert done.late is not None and done.late.column("seq").to_pylist() == [2]
    assert out == [{"k": "a", "first": 1, "last": 3}]
    assert shard is None  # (nothing left once the stream ended)


def test_pending_rows_sort_nan_as_spark_does():
    """Found reading the sort this fuzz's ``price DESC`` tie-breaker goes through: rows of one
    event time wait in the shard sorted by the further ORDER BY keys, and Spark puts NaN above
    every number (first when descending), where Arrow puts it last either way.  ``ORDER BY ts,
    p DESC, seq`` over two rows at 1 s, p 1.0 (A), p NaN (B) and p NULL (B, last): the batch
    query reads B, A, B and ``A B`` matches (1, 3); the stream read A, B, B and matched (1, 2)."""
    from udtf.stream import END_OF_STREAM, Column, OrderKey

    stepper = _a_then_b((Column("k", '"string"'), Column("seq", '"long"'), Column("ts", '"timestamp"'),
                         Column("p", '"double"'), Column("m_A", '"boolean"'), Column("m_B", '"boolean"')),
                        (OrderKey("ts", False, True), OrderKey("p", True, False), OrderKey("seq", False, True)))
    t = 1_700_000_000 * SECOND
    rows = pa.table({"k": ["a", "a", "a"], "seq": [1, 2, 3], "ts": pa.array([t, t, t], pa.timestamp("us", "UTC")),
                     "p": [1.0, math.nan, None], "m_A": [True, False, False], "m_B": [False, True, True]})
    first = stepper.step(None, rows, 0)
    assert first.output is None
    done = stepper.step(first.shard, None, END_OF_STREAM // 1000)
    # Spark's order: NaN (seq 2), 1.0 (seq 1), NULL (seq 3, NULLS LAST): A B matches (1, 3) only
    assert done.output.to_pylist() == [{"k": "a", "first": 1, "last": 3}]


def _a_then_b(inputs: tuple, order: tuple) -> ShardStepper:
    """A shard stepper of ``PATTERN (A B)`` (ONE ROW PER MATCH, PAST LAST ROW; A and B the
    masks ``m_A`` / ``m_B``) partitioned by ``k``, emitting ``k`` and the first and last ``seq``."""
    from udtf.compile import compile_pattern
    from udtf.pattern import parse_pattern
    from udtf.plan import Atom, Condition, EnginePlan, Limits, RowsMode, Skip, SkipMode
    from udtf.stream import Column, Fingerprint, StreamSpec

    plan = EnginePlan(
        program=compile_pattern(parse_pattern("A B"), ["A", "B"], untils=set(), within=False),
        semantics=Semantics.STANDARD, skip=Skip(SkipMode("PAST LAST ROW"), (), None), rows=RowsMode.ONE,
        define=(Condition(0, "m_A", None), Condition(1, "m_B", None)), until=(), partition=("k",),
        masks=("m_A", "m_B"), derived=(), values=(), order_key=None, within=None, lookahead=0,
        atoms=(Atom(ir.Nav(None, None, None, ir.NavMode.FIRST), False), Atom(ir.Nav(None, None, None, ir.NavMode.LAST), False)),
        output=(Output(OutputKind.CARRY, column="k"), Output(OutputKind.TAKE, column="seq", atom=0),
                Output(OutputKind.TAKE, column="seq", atom=1)), limits=Limits(), ansi=True)
    outputs = (Column("k", '"string"'), Column("first", '"long"'), Column("last", '"long"'))
    spec = StreamSpec(plan.to_json(), inputs, outputs, order, 0, Fingerprint((), 0, reads_across_gaps(plan, 0)))
    return ShardStepper(spec, arrow_schema(inputs), arrow_schema(outputs))
