"""The streaming tier: ``sql_ext.stream`` on Spark Structured Streaming.

Deterministic scripted sources (tests/stream_support.py) feed micro-batches; every query ends
with a row at ``END_TS`` whose watermark ends the stream.  Checked: the union of the stream's
output equals ``spark.sql`` of the same SQL over the same rows (both semantics, PREV, WITHIN,
ALL ROWS PER MATCH), a restart from the checkpoint gives exactly the rows of an uninterrupted
run, late rows are counted and never change a match, an idle key's WITHIN window is closed by
its timer, and what cannot stream is refused with a positioned error.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import random
import shutil
import tempfile

import pytest

import sql_ext
from stream_support import END_TS, arriving, micros, run_to_end, run_until, scripted, write_script
from udtf.errors import MatchRecognizeError

pytestmark = pytest.mark.slow

SCHEMA = "k string, ts timestamp, x bigint, seq bigint"
T0 = micros(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
SECOND = 1_000_000
# drops the end-of-stream row after the watermark saw it (a filter on the event time column is
# not pushed below withWatermark)
KEEP = "ts < TIMESTAMP '9000-01-01'"


@pytest.fixture(scope="module")
def ss(spark):
    sql_ext.enable(spark)
    return spark


@pytest.fixture()
def workdir():
    path = tempfile.mkdtemp(prefix="sparkcep-stream-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def events(seed: int, keys=("a", "b", "c"), per_key: int = 40) -> list:
    """Rows (k, ts, x, seq): per key one row a second, x random in 0..9."""
    rng = random.Random(seed)
    rows, seq = [], 0
    for k in keys:
        for i in range(per_key):
            seq += 1
            rows.append([k, T0 + i * SECOND, rng.randint(0, 9), seq])
    return rows


def chunked(rows: list, seed: int, batches: int, jitter: int) -> list:
    """``rows`` in arrival order (event time plus up to ``jitter`` seconds) cut into
    ``batches`` micro-batches, then the end-of-stream row."""
    rng = random.Random(seed)
    arrival = sorted(rows, key=lambda r: r[1] + rng.randrange(jitter * SECOND))
    cuts = sorted(rng.sample(range(1, len(arrival)), batches - 1))
    out = [arrival[a:b] for a, b in zip([0] + cuts, cuts + [len(arrival)])]
    return out + [[["~end", micros(END_TS), 0, 0]]]


def batch_rows(ss, sql: str, rows: list) -> list:
    ss.createDataFrame([(k, dt.datetime.fromtimestamp(t / SECOND, dt.timezone.utc), x, s) for k, t, x, s in rows],
                       SCHEMA).createOrReplaceTempView("events_at_rest")
    return ordered(tuple(r) for r in ss.sql(sql.format(src="events_at_rest")).collect())


def ordered(rows) -> list:
    """``rows`` in one order for stream and batch rows alike (a late row's STRUCT beside NULLs
    does not compare with ``<``)."""
    return sorted(rows, key=repr)


def stream_rows(ss, sql: str, script: str, checkpoint: str, delay: str = "5 seconds", late_rows=None):
    scripted(ss, script, "ts", delay).where(KEEP).createOrReplaceTempView("events_live")
    got, progress = run_to_end(sql_ext.stream(ss, sql.format(src="events_live"), late_rows=late_rows), checkpoint)
    return ordered(r for _, r in got), progress


QUERIES = {
    "standard_prev": """
        SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
          MEASURES FIRST(A.seq) AS s, LAST(B.seq) AS e, COUNT(B.*) AS ups, MATCH_NUMBER() AS mn
          PATTERN (A B+) DEFINE A AS x < 5, B AS x > PREV(x)) AS m""",
    "flinkcep_within_negation": """
        SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
          MEASURES A.seq AS a, LAST(B.seq) AS b, MATCH_NUMBER() AS mn
          AFTER MATCH SKIP TO NEXT ROW SEMANTICS FLINKCEP
          PATTERN (A -> B -> ~C) WITHIN INTERVAL '4' SECOND
          DEFINE A AS x = 0, B AS x > 7, C AS x = 1) AS m""",
    "standard_skip_to_last_next": """
        SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
          MEASURES FIRST(A.seq) AS s, LAST(C.seq) AS e, NEXT(C.x) AS after_c, SUM(B.x) AS total
          AFTER MATCH SKIP TO LAST B
          PATTERN (A B+? C) WITHIN INTERVAL '6' SECOND
          DEFINE A AS x < 4, B AS x >= 2, C AS x > 6 AND SUM(B.x) > 5) AS m""",
    "flinkcep_all_rows_no_skip": """
        SELECT k, seq, cls, mn FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
          MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS mn
          ALL ROWS PER MATCH AFTER MATCH NO SKIP SEMANTICS FLINKCEP
          PATTERN (A -> B->{{1,3}} C) WITHIN INTERVAL '5' SECOND
          DEFINE A AS x < 2, B AS x BETWEEN 3 AND 6, C AS x > 7) AS m""",
    "all_rows_unmatched_within": """
        SELECT k, seq, cls, mn FROM {src} MATCH_RECOGNIZE (ORDER BY ts, seq
          MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS mn
          ALL ROWS PER MATCH WITH UNMATCHED ROWS
          PATTERN (A B* C) WITHIN INTERVAL '3' SECOND
          DEFINE A AS x < 3, B AS x >= 3 AND x < 8, C AS x >= 8) AS m""",
    # statements with LAYERs (docs/hierarchies.md): the layer stack in the streaming operator
    "layers_mixed": """
        SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
          LAYER up AS (
            MEASURES MAX(x) AS peak, COUNT(*) AS n
            PATTERN (U{{2,}}) WITHIN INTERVAL '4' SECOND DEFINE U AS x >= 5)
          MEASURES EVENT_START(S) AS s_start, S.peak AS peak, D.seq AS d, MATCH_START() AS ms,
                   MATCH_END() AS me, MATCH_NUMBER() AS mn
          PATTERN (S R*? D) WITHIN INTERVAL '8' SECOND
          DEFINE S FROM up AS S.peak >= 8, D AS x < 2) AS m""",
    "layers_three_flinkcep": """
        SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
          LAYER pair AS (
            MEASURES MATCH_NUMBER() AS pair_no, SUM(x) AS total
            AFTER MATCH SKIP TO NEXT ROW
            PATTERN (H H) DEFINE H AS x >= 4),
          LAYER rise AS (
            MEASURES COUNT(*) AS pairs, MAX(P.total) AS best
            AFTER MATCH SKIP PAST LAST ROW SEMANTICS FLINKCEP
            PATTERN (P -> Q) DEFINE P FROM pair, Q FROM pair AS Q.total > P.total)
          MEASURES FIRST(E.best) AS best, COUNT(L.*) AS lows, MATCH_START() AS ms, MATCH_END() AS me,
                   MATCH_NUMBER() AS mn
          PATTERN (E L+) WITHIN INTERVAL '10' SECOND
          DEFINE E FROM rise, L AS x < 3) AS m""",
    "period_rows": """
        SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
          PERIOD (CASE WHEN x % 4 = 0 THEN ts - INTERVAL '3' SECOND WHEN x % 4 = 1 THEN ts - INTERVAL '1' SECOND ELSE ts END, ts)
          MEASURES EVENT_START(B) AS b_start, MATCH_START() AS ms, MATCH_END() AS me, MATCH_NUMBER() AS mn
          PATTERN (A B+) WITHIN INTERVAL '5' SECOND
          DEFINE A AS x < 4, B AS x >= 4) AS m""",
    "period_under_a_layer": """
        SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
          PERIOD (CASE WHEN x % 3 = 0 THEN ts - INTERVAL '2' SECOND ELSE ts END, ts)
          LAYER hot AS (
            MEASURES COUNT(*) AS n
            PATTERN (H+) WITHIN INTERVAL '4' SECOND DEFINE H AS x >= 6)
          MEASURES EVENT_START(S) AS s_start, COUNT(C.*) AS cools, MATCH_START() AS ms, MATCH_END() AS me
          PATTERN (S C{{2}}) WITHIN INTERVAL '9' SECOND
          DEFINE S FROM hot AS S.n >= 2, C AS x <= 4) AS m""",
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_stream_equals_batch(ss, workdir, name):
    sql = QUERIES[name]
    rows = events(7)
    script = write_script(f"{workdir}/script.json", SCHEMA, chunked(rows, seed=len(name), batches=4, jitter=4))
    got, _ = stream_rows(ss, sql, script, f"{workdir}/cp")
    expected = batch_rows(ss, sql, rows)
    assert expected, "a query that matches nothing checks little"
    assert got == expected


def test_restart_from_checkpoint_is_exact(ss, workdir):
    """Stop after the micro-batches of the first three source batches, restart from the
    checkpoint into the same file sink once the rest has arrived: the rows equal an
    uninterrupted run's and the batch query's (the stop is deterministic: the source holds
    only those batches when the first run ends)."""
    sql = QUERIES["standard_prev"]
    rows = events(11)
    batches = chunked(rows, seed=3, batches=6, jitter=4)
    script = write_script(f"{workdir}/script.json", SCHEMA, batches)
    scripted(ss, script, "ts", "5 seconds").where(KEEP).createOrReplaceTempView("events_live")
    df = sql_ext.stream(ss, sql.format(src="events_live"))

    def run(out, checkpoint):
        writer = df.writeStream.format("parquet").option("checkpointLocation", checkpoint).outputMode("append")
        writer.trigger(availableNow=True).start(out).awaitTermination()

    run(f"{workdir}/once", f"{workdir}/cp_once")
    write_script(script, SCHEMA, batches[:3])
    run(f"{workdir}/twice", f"{workdir}/cp_twice")
    first = ss.read.parquet(f"{workdir}/twice").count()
    write_script(script, SCHEMA, batches)
    run(f"{workdir}/twice", f"{workdir}/cp_twice")
    once = ordered(tuple(r) for r in ss.read.parquet(f"{workdir}/once").collect())
    twice = ordered(tuple(r) for r in ss.read.parquet(f"{workdir}/twice").collect())
    assert 0 < first < len(twice)
    assert twice == once == batch_rows(ss, sql, rows)


KILLED_RUN = """
import sys
sys.path[:0] = {paths!r}
import sql_ext
from sql_examples.local_spark import get_spark
from stream_support import scripted
spark = sql_ext.enable(get_spark(app_name="sparkcep-killed"))
for key, value in {confs!r}.items():  # the restarting session's: the checkpoint's fingerprint holds them
    spark.conf.set(key, value)
scripted(spark, {script!r}, "ts", "5 seconds").where({keep!r}).createOrReplaceTempView("events_live")
sql_ext.stream(spark, {sql!r}).writeStream.format("parquet").option("checkpointLocation", {checkpoint!r}) \
    .outputMode("append").start({out!r}).awaitTermination()
"""


# the settings docs/streaming.md recommends ('Settings'), on local[2]
RECOMMENDED = {"spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
               "spark.sql.shuffle.partitions": "2"}


@pytest.mark.parametrize("settings", [{}, RECOMMENDED], ids=["defaults", "recommended"])
def test_sigkill_mid_micro_batch_restarts_exactly_once(ss, workdir, confs, settings):
    """A query whose driver (Python and JVM) is killed with SIGKILL while a micro-batch past
    the first is in flight - its offsets logged, its commit not - and restarted on the
    checkpoint into the same file sink writes exactly the batch query's rows: none lost, none
    twice; with Spark's default state store settings and with the recommended ones (RocksDB
    changelog checkpointing: the state restored from a snapshot and the changelogs after it)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    sql = QUERIES["standard_prev"]
    rows = events(17)
    script = write_script(f"{workdir}/script.json", SCHEMA, chunked(rows, seed=4, batches=6, jitter=4))
    checkpoint, out = f"{workdir}/cp", f"{workdir}/out"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    confs(ss, settings)
    session = {key: ss.conf.get(key) for key in ("spark.sql.ansi.enabled", "spark.sql.session.timeZone",
                                                 "spark.sql.shuffle.partitions")}
    code = KILLED_RUN.format(paths=[root, os.path.join(root, "tests")], script=script, keep=KEEP,
                             confs={**session, **settings},
                             sql=sql.format(src="events_live"), checkpoint=checkpoint, out=out)
    killed = subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def logged(name):
        path = os.path.join(checkpoint, name)
        return {int(n) for n in os.listdir(path) if n.isdigit()} if os.path.isdir(path) else set()

    in_flight, deadline = None, time.time() + 300
    try:
        while in_flight is None and time.time() < deadline and killed.poll() is None:
            flying = logged("offsets") - logged("commits")
            if flying and min(flying) >= 2:
                in_flight = min(flying)
            time.sleep(0.02)
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
    assert in_flight is not None, "no micro-batch was caught in flight"
    assert in_flight not in logged("commits")
    scripted(ss, script, "ts", "5 seconds").where(KEEP).createOrReplaceTempView("events_live")
    sql_ext.stream(ss, sql.format(src="events_live")).writeStream.format("parquet") \
        .option("checkpointLocation", checkpoint).outputMode("append").trigger(availableNow=True) \
        .start(out).awaitTermination()
    got = ordered(tuple(r) for r in ss.read.parquet(out).collect())
    assert got == batch_rows(ss, sql, rows)


def test_late_rows_change_nothing_and_come_out_when_asked(ss, workdir):
    """A row at or behind the watermark its partition's rows were matched up to is late: the
    matches are those of the rows that were not late, and with ``late_rows`` the late row comes
    out once, on a row of its own (FlinkCEP's ``sideOutputLateData``)."""
    sql = QUERIES["standard_prev"]
    rows = events(5, keys=("a",), per_key=20)
    late = ["a", T0 + 2 * SECOND, 0, 999]  # behind the watermark of batch 1 (13 s): late in batch 2
    batches = [rows[:15], rows[15:], [late], [["~end", micros(END_TS), 0, 0]]]
    script = write_script(f"{workdir}/script.json", SCHEMA, batches)
    expected = batch_rows(ss, sql, rows)
    assert expected != batch_rows(ss, sql, rows + [late]), "a late row that changes no match checks little"
    got, _ = stream_rows(ss, sql, script, f"{workdir}/cp", delay="1 second")
    assert got == expected
    got, _ = stream_rows(ss, sql, script, f"{workdir}/cp_late", delay="1 second", late_rows="late")
    assert ordered(r[:-1] for r in got if r[-1] is None) == expected
    assert [tuple(r[-1]) for r in got if r[-1] is not None] == [
        ("a", dt.datetime.fromtimestamp(late[1] / SECOND, dt.timezone.utc).replace(tzinfo=None), 0, 999)]


def test_a_row_without_event_time_is_late(ss, workdir):
    """Spark's watermark passes a row whose event time is NULL on to the operator (it moves no
    watermark, and no filter of Spark's drops it).  No watermark places it: a batch ORDER BY
    sorts it before every row of its key, where the stream has already read rows.  So it is
    late, whenever it arrives: the matches are the batch query's over the rows with an event
    time, and with ``late_rows`` the row comes out once, on a row of its own.  (It was released
    at once, in arrival order: here read between the rows at 4 s and 5 s, it began a match
    (99, 5) that neither the batch query over all rows nor over the timed ones has.)"""
    sql = """
        SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
          MEASURES A.seq AS a, B.seq AS b PATTERN (A B) DEFINE A AS x = 0, B AS x = 1) AS m"""
    rows = [["a", T0 + (i + 1) * SECOND, x, i + 1] for i, x in enumerate([2, 0, 1, 2, 1, 0, 1, 2, 2, 0])]
    untimed = ["a", None, 0, 99]
    batches = [rows[:5], rows[5:], [untimed], [["~end", micros(END_TS), 0, 0]]]
    script = write_script(f"{workdir}/script.json", SCHEMA, batches)
    expected = batch_rows(ss, sql, rows)
    assert expected == [("a", 2, 3), ("a", 6, 7)]
    ss.sql("SELECT * FROM events_at_rest UNION ALL SELECT 'a', NULL, 0, 99").createOrReplaceTempView("events_all")
    assert ordered(tuple(r) for r in ss.sql(sql.format(src="events_all")).collect()) == expected  # (NULL first)
    scripted(ss, script, "ts", "1 second").where(f"ts IS NULL OR {KEEP}").createOrReplaceTempView("events_live")
    got, _ = run_to_end(sql_ext.stream(ss, sql.format(src="events_live"), late_rows="late"), f"{workdir}/cp")
    got = [r for _, r in got]
    assert ordered(tuple(r[:-1]) for r in got if r[-1] is None) == expected
    assert [tuple(r[-1]) for r in got if r[-1] is not None] == [("a", None, 0, 99)]


EVOLVING = """
    SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
      MEASURES FIRST(A.seq) AS s, LAST(B.seq) AS e, MATCH_NUMBER() AS mn{more}
      PATTERN (A B+) WITHIN INTERVAL '8' SECOND DEFINE A AS x < {limit}, B AS x > PREV(x)) AS m"""


def test_a_changed_query_continues_exactly_or_stops(ss, workdir):
    """The checkpoint holds a fingerprint of what its state depends on.  Restarted with an
    added measure, the query continues exactly: its rows are the batch query's rows that the
    first run did not emit.  Restarted with a changed DEFINE, it stops with an error naming the
    change and what to do - never with rows of neither query."""
    rows = events(13)
    batches = chunked(rows, seed=5, batches=6, jitter=3)
    script = write_script(f"{workdir}/script.json", SCHEMA, batches[:3])
    scripted(ss, script, "ts", "2 seconds").where(KEEP).createOrReplaceTempView("events_live")
    first_sql, more_sql = EVOLVING.format(src="{src}", more="", limit=5), \
        EVOLVING.format(src="{src}", more=", COUNT(B.*) AS ups", limit=5)
    first, _ = run_to_end(sql_ext.stream(ss, first_sql.format(src="events_live")), f"{workdir}/cp")
    write_script(script, SCHEMA, batches)
    changed = EVOLVING.format(src="events_live", more="", limit=4)
    with pytest.raises(Exception, match="DEFINE changed") as info:
        run_to_end(sql_ext.stream(ss, changed), f"{workdir}/cp")
    assert "new checkpoint location" in str(info.value)
    second, _ = run_to_end(sql_ext.stream(ss, more_sql.format(src="events_live")), f"{workdir}/cp")
    expected = batch_rows(ss, more_sql, rows)
    emitted = {r for _, r in first}
    assert first and second and len(first) + len(second) == len(expected)
    assert ordered(r for _, r in second) == [r for r in expected if r[:-1] not in emitted]


SIZE_OF_NULL = """
    SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
      MEASURES FIRST(A.seq) AS s, LAST(B.seq) AS e, MATCH_NUMBER() AS mn
      PATTERN (A B+) DEFINE A AS {a}, B AS x > PREV(x)) AS m"""
SIZED, UNSIZED = "size(IF(x < 5, NULL, array(x))) IS NULL OR x = 7", "x < 5 OR x = 7"


def test_a_restart_under_another_size_of_null_stops_where_size_is_read(ss, workdir, confs):
    """Without ANSI, spark.sql.legacy.sizeOfNull makes size(NULL) -1 (else NULL), which decides
    the matches of a statement calling size: a checkpoint written under one setting, restarted
    under the other, stops naming it (its held rows and resume points were computed under the
    first), either way; back under the first it continues exactly.  A statement that calls no
    size continues exactly under the other setting."""
    rows = events(13, per_key=20)
    every = chunked(rows, seed=5, batches=3, jitter=3)  # (the rows in three micro-batches, the end of the stream)
    first = every[:2]
    legacy, modern = {"spark.sql.legacy.sizeOfNull": "true"}, {"spark.sql.legacy.sizeOfNull": "false"}
    confs(ss, {"spark.sql.ansi.enabled": "false", **legacy})
    sized, unsized = SIZE_OF_NULL.format(src="{src}", a=SIZED), SIZE_OF_NULL.format(src="{src}", a=UNSIZED)
    expected = {"true": batch_rows(ss, sized, rows), "unsized": batch_rows(ss, unsized, rows)}
    confs(ss, modern)
    expected["false"] = batch_rows(ss, sized, rows)
    assert expected["true"] != expected["false"], "a setting that changes no match checks little"

    def run(sql, checkpoint, setting, batches):
        script = write_script(f"{checkpoint}.json", SCHEMA, batches)
        scripted(ss, script, "ts", "2 seconds").where(KEEP).createOrReplaceTempView("events_live")
        confs(ss, setting)
        got, _ = run_to_end(sql_ext.stream(ss, sql.format(src="events_live")), checkpoint)
        return [r for _, r in got]

    def refused(sql, checkpoint, setting):
        with pytest.raises(Exception, match="spark.sql.legacy.sizeOfNull changed") as info:
            run(sql, checkpoint, setting, every)
        assert "new checkpoint location" in str(info.value)

    done = run(sized, f"{workdir}/true", legacy, first)
    refused(sized, f"{workdir}/true", modern)
    more = run(sized, f"{workdir}/true", legacy, every)
    assert done and ordered(done + more) == expected["true"]
    run(sized, f"{workdir}/false", modern, first)
    refused(sized, f"{workdir}/false", legacy)
    done = run(unsized, f"{workdir}/unsized", modern, first)
    more = run(unsized, f"{workdir}/unsized", legacy, every)
    assert done and ordered(done + more) == expected["unsized"]


def test_a_hierarchy_restarts_exactly_and_a_changed_layer_stops(ss, workdir):
    """A statement with LAYERs: restarted from its checkpoint once the rest of the rows arrived,
    it emits exactly the batch query's rows the first run did not (each layer's runs and events
    are the replayed rows since the key's quiet point); restarted with a changed LAYER, it stops
    naming the change."""
    sql = QUERIES["layers_mixed"]
    rows = events(17)
    batches = chunked(rows, seed=9, batches=6, jitter=3)
    script = write_script(f"{workdir}/script.json", SCHEMA, batches[:3])
    scripted(ss, script, "ts", "3 seconds").where(KEEP).createOrReplaceTempView("events_live")
    first, _ = run_to_end(sql_ext.stream(ss, sql.format(src="events_live")), f"{workdir}/cp")
    write_script(script, SCHEMA, batches)
    changed = sql.replace("DEFINE U AS x >= 5", "DEFINE U AS x >= 6")
    assert changed != sql
    with pytest.raises(Exception, match="LAYER, PERIOD, WITHIN changed") as info:
        run_to_end(sql_ext.stream(ss, changed.format(src="events_live")), f"{workdir}/cp")
    assert "new checkpoint location" in str(info.value)
    second, _ = run_to_end(sql_ext.stream(ss, sql.format(src="events_live")), f"{workdir}/cp")
    expected = batch_rows(ss, sql, rows)
    assert first and second
    assert ordered([r for _, r in first] + [r for _, r in second]) == expected


def test_late_rows_of_a_hierarchy_come_out_once_across_a_restart(ss, workdir):
    """A statement with LAYERs and ``late_rows``: a row behind the watermark (and one without
    event time) comes out once, on a row of its own, in the micro-batch that received it; the
    matches are the batch query's over the other rows.  Restarted from its checkpoint after the
    late rows' micro-batch, the query emits exactly the rows the first run did not."""
    sql = QUERIES["layers_mixed"]
    rows = sorted(events(17, keys=("a", "b"), per_key=30), key=lambda r: (r[1], r[0]))  # (watermark: 11 s, 18 s)
    late = [["a", T0 + 5 * SECOND, 9, 901], ["b", T0 + 6 * SECOND, 9, 902], ["a", None, 9, 903]]
    batches = [rows[:25], rows[25:40], late, rows[40:], [["~end", micros(END_TS), 0, 0]]]
    expected = batch_rows(ss, sql, rows)
    assert expected != batch_rows(ss, sql, rows + late[:2]), "late rows that change no match check little"
    script = write_script(f"{workdir}/script.json", SCHEMA, batches[:3])
    scripted(ss, script, "ts", "1 second").where(f"ts IS NULL OR {KEEP}").createOrReplaceTempView("events_live")
    stream = lambda: sql_ext.stream(ss, sql.format(src="events_live"), late_rows="late")
    first, _ = run_to_end(stream(), f"{workdir}/cp")
    write_script(script, SCHEMA, batches)
    second, _ = run_to_end(stream(), f"{workdir}/cp")
    got = [r for _, r in first + second]
    assert first and second
    assert ordered(tuple(r[:-1]) for r in got if r[-1] is None) == expected
    stamp = lambda t: None if t is None else dt.datetime.fromtimestamp(t / SECOND, dt.timezone.utc).replace(tzinfo=None)
    assert ordered(tuple(r[-1]) for r in got if r[-1] is not None) == ordered(
        (k, stamp(t), x, seq) for k, t, x, seq in late)
    assert sorted(r[-1][3] for _, r in first if r[-1] is not None) == [901, 902, 903]  # (in the first run)


def _version_2_processor():
    """A processor writing state as sparkcep's versions 1 and 2 did: one ValueState
    ``match_recognize`` per PARTITION BY key of a ``transformWithStateInPandas`` operator, of
    their fields (version, meta, kept, buffer, timer).  Made here: pickled by value."""
    from pyspark.sql.streaming import StatefulProcessor
    from pyspark.sql.types import StructType

    schema = StructType.fromDDL("version INT, meta STRING, kept BINARY, buffer BINARY, timer LONG")

    class Version2(StatefulProcessor):
        def init(self, handle):
            self.state = handle.getValueState("match_recognize", schema)

        def handleInputRows(self, key, rows, timerValues):
            for _ in rows:
                pass
            self.state.update((2, "[0, 0, null, []]", b"", b"", -1))
            return iter([])

        def close(self):
            pass

    return Version2()


def test_a_version_2_checkpoint_is_refused(ss, workdir, confs):
    """A checkpoint written by sparkcep before the shards (state versions 1 and 2: one state per
    key in a ``transformWithStateInPandas`` operator; here keyed by an INT column, the key type
    version 3's shards had too) is refused when the query restarts on it: by Spark, before any
    row is read, naming the two operators; given the checkpoint (``checkpoint=``), by
    ``stream()`` itself, saying what to do.  A new checkpoint location is no checkpoint yet."""
    from sql_ext.spark.streaming import ROCKSDB

    confs(ss, {"spark.sql.streaming.stateStore.providerClass": ROCKSDB})
    sql = QUERIES["standard_prev"]
    batches = chunked(events(3), seed=1, batches=3, jitter=2)
    script = write_script(f"{workdir}/script.json", SCHEMA, batches[:2])
    live = scripted(ss, script, "ts", "5 seconds").where(KEEP)
    old = live.selectExpr("CAST(seq AS INT) AS k", "ts").groupBy("k") \
        .transformWithStateInPandas(_version_2_processor(), "k STRING", "Append", "EventTime")
    run_to_end(old, f"{workdir}/cp")
    write_script(script, SCHEMA, batches)
    live.createOrReplaceTempView("events_live")
    with pytest.raises(Exception, match="STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA") as info:
        run_to_end(sql_ext.stream(ss, sql.format(src="events_live")), f"{workdir}/cp")
    assert "transformWithStateInPandasExec" in str(info.value)
    assert "transformWithStateInPySparkExec" in str(info.value)
    with pytest.raises(MatchRecognizeError) as info:
        sql_ext.stream(ss, sql.format(src="events_live"), checkpoint=f"{workdir}/cp")
    assert info.value.message == (
        f"the checkpoint {workdir}/cp holds MATCH_RECOGNIZE streaming state of version 1 or 2 (one state per "
        "PARTITION BY key, in a transformWithStateInPandas operator), written by a sparkcep before the shards; this "
        "one cannot continue it: finish that query with the sparkcep that wrote it, then start this one with a new "
        "checkpoint location (docs/streaming.md, 'Restart and exactly once')")
    assert sql_ext.stream(ss, sql.format(src="events_live"), checkpoint=f"{workdir}/new").isStreaming


def _version_3_processor():
    """A processor writing state as sparkcep's version 3 did: one ValueState ``match_recognize``
    per shard of a ``transformWithState`` operator keyed by the INT shard number.  Made here:
    pickled by value."""
    from pyspark.sql.streaming import StatefulProcessor
    from pyspark.sql.types import StructType

    from udtf.transport import STATE_FIELDS

    schema = StructType.fromJson({"type": "struct", "fields": [
        {"name": name, "type": kind, "nullable": True, "metadata": {}} for name, kind in STATE_FIELDS]})

    class Version3(StatefulProcessor):
        def init(self, handle):
            self.state = handle.getValueState("match_recognize", schema)

        def handleInputRows(self, key, rows, timerValues):
            for _ in rows:
                pass
            self.state.update((3, "[]", 0, b"", -1))
            return iter([])

        def close(self):
            pass

    return Version3()


def test_a_version_3_checkpoint_is_refused(ss, workdir, confs):
    """A checkpoint written by sparkcep's version 3 (INT shard numbers 0..n-1, another shard per
    key) is refused when the query restarts on it - by Spark, before any row is read: the
    operator's key is a BIGINT now (docs/streaming.md, 'Restart and exactly once')."""
    from sql_ext.spark.streaming import ROCKSDB

    confs(ss, {"spark.sql.streaming.stateStore.providerClass": ROCKSDB})
    sql = QUERIES["standard_prev"]
    batches = chunked(events(3), seed=1, batches=3, jitter=2)
    script = write_script(f"{workdir}/script.json", SCHEMA, batches[:2])
    live = scripted(ss, script, "ts", "5 seconds").where(KEEP)
    shards = int(ss.conf.get("spark.sql.shuffle.partitions"))
    old = live.selectExpr(f"CAST(pmod(hash(k), {shards}) AS INT) AS shard", "ts") \
        .groupBy("shard").transformWithState(_version_3_processor(), "rows BINARY", "Append", "EventTime")
    run_to_end(old, f"{workdir}/cp")
    write_script(script, SCHEMA, batches)
    live.createOrReplaceTempView("events_live")
    with pytest.raises(Exception, match="STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"):
        run_to_end(sql_ext.stream(ss, sql.format(src="events_live")), f"{workdir}/cp")


STATE_V3 = os.path.join(os.path.dirname(__file__), "data", "state_v3")  # README.md there: how it was written


def _state_v3(workdir: str) -> tuple:
    """The version-3 fixture's checkpoint copied to ``workdir``/cp; (every input batch, the rows
    its run emitted before it stopped)."""
    shutil.copytree(os.path.join(STATE_V3, "checkpoint"), f"{workdir}/cp")
    metadata = f"{workdir}/cp/state/0/_metadata/v2/0"  # names its schema file by an absolute path
    with open(metadata) as f:
        text = f.read()
    with open(metadata, "w") as f:
        f.write(text.replace("file:/tmp/sv3/checkpoint/", f"file:{workdir}/cp/"))
    os.remove(f"{workdir}/cp/state/0/_metadata/v2/.0.crc")  # (its checksum, of the text before)
    with open(os.path.join(STATE_V3, "script.json")) as f:
        batches = json.load(f)["batches"]
    with open(os.path.join(STATE_V3, "before.json")) as f:
        before = [(batch, tuple(row)) for batch, row in json.load(f)]
    return batches, before


def test_a_version_3_checkpoint_restores_exactly(ss, workdir):
    """A checkpoint sparkcep's state version 3 wrote (tests/data/state_v3: stopped after 3 of 6
    micro-batches with open runs, pending rows and timers) continues with this version: the
    rows emitted before the stop and after the restart are exactly the batch query's over every
    row; without ``checkpoint=`` Spark refuses the checkpoint's INT key."""
    sql = QUERIES["flinkcep_within_negation"]
    batches, before = _state_v3(workdir)
    script = write_script(f"{workdir}/script.json", SCHEMA, batches)
    scripted(ss, script, "ts", "3 seconds").where(KEEP).createOrReplaceTempView("events_live")
    with pytest.raises(Exception, match="STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"):
        run_to_end(sql_ext.stream(ss, sql.format(src="events_live")), f"{workdir}/cp")
    after, _ = run_to_end(sql_ext.stream(ss, sql.format(src="events_live"), checkpoint=f"{workdir}/cp"),
                          f"{workdir}/cp")
    assert before and after and min(b for b, _ in after) > max(b for b, _ in before)
    rows = [row for batch in batches for row in batch if row[0] != "~end"]
    assert ordered(row for _, row in before + after) == batch_rows(ss, sql, rows)
    from udtf.stream import PENDING, POS
    from udtf.transport import from_ipc

    stopped = ss.read.format("statestore").option("stateVarName", "match_recognize") \
        .option("batchId", max(b for b, _ in before)).load(f"{workdir}/cp").collect()  # as the fixture holds it
    held = [from_ipc(r.value.held).column(POS).to_pylist() for r in stopped]
    assert {r.value.version for r in stopped} == {3} and all(r.value.timer > 0 for r in stopped)
    assert all(PENDING in pos and any(0 < p < PENDING for p in pos) for pos in held)  # pending, kept for runs


def test_idle_key_window_closed_by_timer(ss, workdir):
    """``A -> ~B WITHIN 5 s`` of key z is confirmed when the watermark passes its window, in a
    micro-batch where z receives no row (key y only moves the watermark)."""
    sql = """
        SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
          MEASURES A.seq AS a SEMANTICS FLINKCEP PATTERN (A -> ~B) WITHIN INTERVAL '5' SECOND
          DEFINE A AS x = 1, B AS x = 2) AS m"""
    batches = [[["z", T0, 1, 1], ["y", T0, 0, 2]], [["y", T0 + 3 * SECOND, 0, 3]],
               [["y", T0 + 8 * SECOND, 0, 4]], [["y", T0 + 12 * SECOND, 0, 5]]]
    script = write_script(f"{workdir}/script.json", SCHEMA, batches)
    scripted(ss, script, "ts", "1 second").createOrReplaceTempView("events_live")
    got, progress = run_to_end(sql_ext.stream(ss, sql.format(src="events_live")), f"{workdir}/cp")
    # batch 3 runs with the watermark at 7 s (8 s less the delay): past z's window (0..5 s)
    assert got == [(3, ("z", 1))]


def test_idle_key_layer_window_closed_by_timer(ss, workdir):
    """A statement with LAYERs: key z's greedy loop ``A{2,}`` of a layer, cut by the layer's
    WITHIN 5 s, becomes the event the top matches when the watermark passes its window, in a
    micro-batch where z receives no row (key y only moves the watermark)."""
    sql = """
        SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
          LAYER ones AS (MEASURES COUNT(*) AS n PATTERN (A{{2,}}) WITHIN INTERVAL '5' SECOND DEFINE A AS x = 1)
          MEASURES O.n AS n PATTERN (O) DEFINE O FROM ones) AS m"""
    batches = [[["z", T0, 1, 1], ["z", T0 + SECOND, 1, 2], ["y", T0, 0, 3]], [["y", T0 + 3 * SECOND, 0, 4]],
               [["y", T0 + 8 * SECOND, 0, 5]], [["y", T0 + 12 * SECOND, 0, 6]]]
    script = write_script(f"{workdir}/script.json", SCHEMA, batches)
    scripted(ss, script, "ts", "1 second").createOrReplaceTempView("events_live")
    got, progress = run_to_end(sql_ext.stream(ss, sql.format(src="events_live")), f"{workdir}/cp")
    # batch 3 runs with the watermark at 7 s: past the window of z's loop (0..5 s)
    assert got == [(3, ("z", 2))]


PROCESSING_TIME = """
    SELECT k, a, b, timed_out FROM arrivals MATCH_RECOGNIZE (PARTITION BY k ORDER BY arrival, seq
      MEASURES A.seq AS a, B.seq AS b SEMANTICS FLINKCEP
      PATTERN (A -> B) WITHIN INTERVAL '2' SECOND WITH TIMEOUT ROWS
      DEFINE A AS x = 1, B AS x = 2) AS m"""


def test_processing_time_within_times_out_idle_keys_exactly_once(ss, workdir):
    """``processing_time=True`` (FlinkCEP's ``inProcessingTime``): WITHIN is measured on the
    arrival time (``current_timestamp()``, the micro-batch's timestamp).  p's A and B arrive
    together: a match.  q's A waits alone; the wall clock closes its 2 s window in a micro-batch
    without input rows (the processing-time timer), a timeout row.  The query stops and
    restarts on its checkpoint; q's B, arriving after the close, matches nothing, r's A and B
    match, and nothing before the restart comes out again."""
    schema = "k string, x bigint, seq bigint"
    script = write_script(f"{workdir}/script.json", schema, [[["p", 1, 1], ["p", 2, 2], ["q", 1, 3]]])
    arriving(ss, script).createOrReplaceTempView("arrivals")
    query = sql_ext.stream(ss, PROCESSING_TIME, processing_time=True)
    first, _ = run_until(query, f"{workdir}/cp", lambda got: any(r[0] == "q" for _, r in got))
    assert sorted(r for _, r in first) == [("p", 1, 2, False), ("q", 3, None, True)]
    timeout_batch = next(batch for batch, r in first if r[0] == "q")
    assert timeout_batch > 0  # the script's one batch of rows is micro-batch 0
    write_script(script, schema, [[["p", 1, 1], ["p", 2, 2], ["q", 1, 3]], [["q", 2, 4], ["r", 1, 5], ["r", 2, 6]]])
    second, _ = run_until(query, f"{workdir}/cp", lambda got: any(r[0] == "r" for _, r in got))
    assert [r for _, r in second] == [("r", 5, 6, False)], (timeout_batch, second)
    assert min(batch for batch, _ in second) > timeout_batch


PROCESSING_TIME_LAYERS = """
    SELECT k, n, first_seq, s = e AS one_arrival FROM arrivals MATCH_RECOGNIZE (PARTITION BY k ORDER BY arrival, seq
      LAYER ones AS (MEASURES COUNT(*) AS n, FIRST(A.seq) AS first_seq
                     PATTERN (A{2,}) WITHIN INTERVAL '2' SECOND DEFINE A AS x = 1)
      MEASURES O.n AS n, O.first_seq AS first_seq, MATCH_START() AS s, MATCH_END() AS e
      PATTERN (O) DEFINE O FROM ones) AS m"""


def test_processing_time_layers_close_windows_by_the_clock_exactly_once(ss, workdir):
    """LAYERs in processing time: a layer's WITHIN is measured on the arrival time, as the
    statement's is.  p's loop ``A{2,}`` is cut by a row arriving with it: its event, matched at
    once.  q's loop waits with no row to cut it; the wall clock closes the layer's 2 s window in
    a micro-batch without input rows (the processing-time timer) and the event is matched.  The
    interval functions read the arrival (a micro-batch's rows arrive together).  The query
    stops and restarts on its checkpoint: q's next loop is closed by the clock again, and
    nothing before the restart comes out twice."""
    schema = "k string, x bigint, seq bigint"
    first_rows = [["p", 1, 1], ["p", 1, 2], ["p", 0, 3], ["q", 1, 4], ["q", 1, 5]]
    script = write_script(f"{workdir}/script.json", schema, [first_rows])
    arriving(ss, script).createOrReplaceTempView("arrivals")
    query = sql_ext.stream(ss, PROCESSING_TIME_LAYERS, processing_time=True)
    first, _ = run_until(query, f"{workdir}/cp", lambda got: any(r[0] == "q" for _, r in got))
    assert sorted(r for _, r in first) == [("p", 2, 1, True), ("q", 2, 4, True)]
    assert [batch for batch, r in first if r[0] == "p"] == [0]  # (the script's one batch of rows)
    assert next(batch for batch, r in first if r[0] == "q") > 0
    write_script(script, schema, [first_rows, [["q", 1, 6], ["q", 1, 7]]])
    second, _ = run_until(query, f"{workdir}/cp", lambda got: any(r[0] == "q" for _, r in got))
    assert [r for _, r in second] == [("q", 2, 6, True)]
    assert min(batch for batch, _ in second) > max(batch for batch, _ in first)


def test_processing_time_interval_functions_read_the_arrival(ss, workdir):
    """Without LAYERs too, in processing time an item's interval is its arrival:
    MATCH_START() and MATCH_END() are the first and last member's arrival time."""
    sql = """
        SELECT k, s = first_arrival AND e = last_arrival AS arrivals FROM arrivals MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY arrival, seq
          MEASURES MATCH_START() AS s, MATCH_END() AS e, A.arrival AS first_arrival, B.arrival AS last_arrival
          PATTERN (A B) DEFINE A AS x = 1, B AS x = 2) AS m"""
    script = write_script(f"{workdir}/script.json", "k string, x bigint, seq bigint", [[["p", 1, 1], ["p", 2, 2]]])
    arriving(ss, script).createOrReplaceTempView("arrivals")
    got, _ = run_until(sql_ext.stream(ss, sql, processing_time=True), f"{workdir}/cp", lambda got: got)
    assert [r for _, r in got] == [("p", True)]


def test_processing_time_orders_by_arrival_first(ss, workdir):
    """The first ORDER BY key is the arrival time: a TIMESTAMP, ascending - refused at it
    otherwise."""
    script = write_script(f"{workdir}/script.json", "k string, x bigint, seq bigint", [[["a", 1, 1]]])
    arriving(ss, script).createOrReplaceTempView("arrivals")
    for order in ("seq", "arrival DESC"):
        sql = f"SELECT * FROM arrivals MATCH_RECOGNIZE (ORDER BY {order} MEASURES A.x AS v PATTERN (A) DEFINE A AS x > 0)"
        with pytest.raises(MatchRecognizeError, match="processing time orders by arrival time first") as info:
            sql_ext.stream(ss, sql, processing_time=True)
        assert (info.value.line, info.value.column) == (1, sql.index(order) + 1)


SHORT_LIVED = """
    SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, seq
      MEASURES A.seq AS a SEMANTICS FLINKCEP PATTERN (A -> ~B) WITHIN INTERVAL '3' SECOND
      DEFINE A AS x = 0, B AS x = 4) AS m"""


def test_state_of_short_lived_keys_is_bounded(ss, workdir):
    """60 keys living 2 s each (a new one every second): after each micro-batch the state holds
    only keys whose WITHIN window (3 s from their first row) the batch's watermark has not
    passed - never all the keys seen - and after the end-of-stream watermark nothing (0 state
    rows); the rows are the batch query's.  Each shard's state is in a state partition of its own,
    so each task of the operator steps one shard."""
    import pyarrow.compute as pc

    from udtf.stream import POS
    from udtf.transport import from_ipc

    rows = [[f"o{i:02d}", T0 + i * SECOND + j * SECOND // 2, 0 if j == 0 else 1 + (i + j) % 3, 5 * i + j]
            for i in range(60) for j in range(5)]
    rows.sort(key=lambda r: (r[1], r[3]))
    batches = [rows[b:b + 30] for b in range(0, len(rows), 30)] + [[["~end", micros(END_TS), 0, 0]]]
    script = write_script(f"{workdir}/script.json", SCHEMA, batches)
    checkpoint = f"{workdir}/cp"
    got, progress = stream_rows(ss, SHORT_LIVED, script, checkpoint, delay="1 second")
    assert got == batch_rows(ss, SHORT_LIVED, rows) and len(got) == 60
    first = {f"o{i:02d}": T0 + i * SECOND for i in range(60)}
    held_counts, partitions = [], set()
    for p in progress:
        state = ss.read.format("statestore").option("stateVarName", "match_recognize") \
            .option("batchId", p["batchId"]).load(checkpoint).collect()
        assert len({r.partition_id for r in state}) == len(state)
        partitions |= {r.partition_id for r in state}
        held = [k for r in state for k, pos in zip(*(from_ipc(r.value.held).column(c).to_pylist() for c in ("k", POS)))
                if pos == 0]
        watermark = micros(dt.datetime.fromisoformat(p["eventTime"]["watermark"].replace("Z", "+00:00")))
        assert all(first[k] + 3 * SECOND > watermark for k in held), (p["batchId"], watermark, held)
        assert p["stateOperators"][0]["numRowsTotal"] == len(state)
        held_counts.append(len(held))
    assert 0 < max(held_counts) <= 60 // 4, held_counts
    assert partitions == set(range(int(ss.conf.get("spark.sql.shuffle.partitions"))))
    assert held_counts[-1] == 0 and progress[-1]["stateOperators"][0]["numRowsTotal"] == 0


TYPED = """seq AS id, k, ts,
  named_struct('big', 9007199254740993L + seq, 'at', ts + INTERVAL 1 HOUR, 'd', CAST(seq / 7 AS DECIMAL(38, 18)),
               'tags', array('a', CAST(seq AS STRING))) AS st,
  array(ts, NULL) AS tss, map('k', seq, 'n', NULL) AS m, parse_json('{"a": ' || seq || ', "b": [1.5, "x"]}') AS v,
  CAST(seq * 1.1 AS DECIMAL(38, 18)) AS dec, CAST(ts AS TIMESTAMP_NTZ) AS ntz, CAST(ts AS DATE) AS day,
  encode(CAST(seq AS STRING), 'utf-8') AS bin, CASE WHEN seq % 3 = 0 THEN double('NaN') ELSE seq / 3 END AS dbl,
  CAST(seq AS FLOAT) AS flt, seq % 2 = 0 AS flag, (9007199254740993L + seq) % 5 <> 0 AS five, CAST(seq AS TINYINT) AS tiny,
  INTERVAL '1 02:03:04.5' DAY TO SECOND * seq AS dti"""
TYPED_QUERY = """
    SELECT * FROM {src} MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, id
      MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS mn, FIRST(A.st) AS first_st, LAST(B.m) AS last_m,
               LAST(B.v) AS last_v, SUM(B.dec) AS total
      ALL ROWS PER MATCH PATTERN (A B+) DEFINE A AS flag, B AS NOT flag AND five) AS mr"""


def _comparable(value):
    """``value`` with what ``==`` cannot compare made comparable (VARIANT, maps, NaN)."""
    from pyspark.sql.types import Row, VariantVal

    if isinstance(value, VariantVal):
        return ("variant", bytes(value.value), bytes(value.metadata))
    if isinstance(value, Row):
        return tuple(_comparable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _comparable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_comparable(v) for v in value)
    if isinstance(value, float) and value != value:
        return "NaN"
    return value


def test_every_type_streams_exactly(ss, workdir, confs):
    """Nested STRUCT / ARRAY / MAP / VARIANT values, BIGINT past 2^53, DECIMAL(38, 18),
    TIMESTAMP (top level and nested) in a session zone that is not UTC, TIMESTAMP_NTZ, DATE,
    BINARY, NaN, intervals: the stream's rows equal the batch query's, value for value."""
    confs(ss, {"spark.sql.session.timeZone": "America/Los_Angeles"})
    rows = [[str(id % 3), T0 + id * SECOND, 0, id] for id in range(40)]
    batches = chunked(rows, seed=2, batches=4, jitter=2)
    script = write_script(f"{workdir}/script.json", SCHEMA, batches)
    typed = TYPED
    scripted(ss, script, "ts", "3 seconds").where(KEEP).selectExpr(*_split(typed)) \
        .createOrReplaceTempView("typed_live")
    got, _ = run_to_end(sql_ext.stream(ss, TYPED_QUERY.format(src="typed_live")), f"{workdir}/cp")
    at_rest = ss.createDataFrame([(k, dt.datetime.fromtimestamp(t / SECOND, dt.timezone.utc), x, s)
                                  for k, t, x, s in rows], SCHEMA)
    at_rest.selectExpr(*_split(typed)).createOrReplaceTempView("typed_at_rest")
    expected = sorted(map(_comparable, ss.sql(TYPED_QUERY.format(src="typed_at_rest")).collect()), key=repr)
    assert len(expected) > 10
    assert sorted((_comparable(r) for _, r in got), key=repr) == expected


def _split(select_list: str) -> list:
    """The expressions of a SELECT list (commas inside parentheses do not split)."""
    parts, depth, current = [], 0, ""
    for ch in select_list:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    return parts + [current.strip()]


REFUSED = [  # (SQL over events_live, message, the construct at the error's line:column)
    ("SELECT * FROM events_live MATCH_RECOGNIZE (ORDER BY seq MEASURES A.x AS v PATTERN (A) DEFINE A AS x > 0)",
     "watermark column", "seq"),
    ("SELECT * FROM events_live MATCH_RECOGNIZE (ORDER BY ts DESC MEASURES A.x AS v PATTERN (A) DEFINE A AS x > 0)",
     "ascending", "ts DESC"),
    ("SELECT * FROM events_live MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x AS v PATTERN (A $) DEFINE A AS x > 0)",
     r"anchor \$", "$"),
    ("SELECT * FROM events_live MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x AS v PATTERN (A B+ C) DEFINE A AS x > 0, "
     "C AS x = 0)", "greedy unbounded loop over B", "B+"),
    ("SELECT * FROM events_live MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x AS v PATTERN (A B) DEFINE A AS x > 0) m "
     "JOIN events_live MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x AS w PATTERN (A) DEFINE A AS x > 0) n ON v = w",
     "exactly one MATCH_RECOGNIZE", "MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x AS w"),
    ("SELECT x, count(*) OVER w FROM events_live WINDOW w AS (ORDER BY ts ROWS BETWEEN CURRENT ROW AND 5 FOLLOWING "
     "PATTERN (A) DEFINE A AS x > 0)", "window with pattern recognition cannot run on a stream", "ROWS BETWEEN"),
]


@pytest.mark.parametrize("sql, message, culprit", REFUSED, ids=["order", "desc", "anchor", "loop", "two", "window"])
def test_what_cannot_stream_is_refused(ss, workdir, sql, message, culprit):
    """At analysis, before the query starts, at the user's line:column."""
    script = write_script(f"{workdir}/script.json", SCHEMA, [[["a", T0, 1, 1]]])
    scripted(ss, script, "ts", "1 second").createOrReplaceTempView("events_live")
    with pytest.raises(MatchRecognizeError, match=message) as info:
        sql_ext.stream(ss, sql)
    assert (info.value.line, info.value.column) == (1, sql.rindex(culprit) + 1)


def test_what_could_stream_is_not_refused(ss, workdir):
    """The refusals' near misses stream: the loop is reluctant, or bounded by WITHIN."""
    script = write_script(f"{workdir}/script.json", SCHEMA, [[["a", T0, 1, 1]]])
    scripted(ss, script, "ts", "1 second").createOrReplaceTempView("events_live")
    for tail in ("PATTERN (A B+? C)", "PATTERN (A B+ C) WITHIN INTERVAL '1' MINUTE"):
        sql_ext.stream(ss, "SELECT * FROM events_live MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x AS v "
                           f"{tail} DEFINE A AS x > 0, C AS x = 0)")


def test_batch_input_is_refused(ss):
    ss.createDataFrame([("a", 1)], "k string, x int").createOrReplaceTempView("at_rest")
    sql = "SELECT * FROM at_rest MATCH_RECOGNIZE (ORDER BY x MEASURES A.x AS v PATTERN (A) DEFINE A AS x > 0)"
    with pytest.raises(MatchRecognizeError, match="not a streaming relation") as info:
        sql_ext.stream(ss, sql)
    assert (info.value.line, info.value.column) == (1, sql.index("at_rest") + 1)


def test_spark_sql_over_a_stream_points_to_stream(ss):
    """``spark.sql`` is the batch entry point: over a streaming view it refuses the statement at
    the clause's input and names ``sql_ext.stream`` (Spark would fail only when the result is
    read, with "must be executed with writeStream.start()")."""
    ss.readStream.format("rate").load().withWatermark("timestamp", "1 second").createOrReplaceTempView("rate_live")
    sql = "SELECT * FROM rate_live MATCH_RECOGNIZE (ORDER BY timestamp MEASURES A.value AS v PATTERN (A)\n" \
          "  DEFINE A AS value > 0) AS m"
    with pytest.raises(MatchRecognizeError, match=r"sql_ext\.stream\(spark, sql\)") as info:
        ss.sql(sql)
    assert (info.value.line, info.value.column) == (1, sql.index("rate_live") + 1)
    window = "SELECT value, m OVER w AS m FROM rate_live\nWINDOW w AS (ORDER BY timestamp MEASURES A.value AS m\n" \
             "  ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING PATTERN (A) DEFINE A AS value > 0)"
    with pytest.raises(MatchRecognizeError, match="a window with pattern recognition is a streaming relation: such a window cannot run on a stream") as info:
        ss.sql(window)
    assert (info.value.line, info.value.column) == (2, len("WINDOW ") + 1)  # at the window


def test_example_streams_like_batch(ss, workdir):
    """sql_examples/streaming.py (``make demo``), smaller: Delta in, Delta out, equal to batch."""
    from pathlib import Path

    from sql_examples.streaming import demo_streaming

    report = demo_streaming(ss, Path(workdir) / "example", cards=6, per_card=120)
    assert report["alerts"] > 0 and report["micro_batches"] >= 5
    assert report["equal"]
