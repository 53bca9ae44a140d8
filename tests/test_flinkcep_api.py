"""Every FlinkCEP Pattern API call in SQL, against Flink 2.3 (docs/flinkcep.md, "Mapping").

Each case names the API calls it exercises, builds them as a tests/flink spec that real Flink
runs (CepDriver, one JVM for every case), and gives their SQL form from the docs' table, which
runs through ``spark.sql`` over the spec's events (``id, name, price, ts, type``, ordered by
``ts, id`` as Flink reads events of one timestamp in arrival order).  The matches must be
Flink's (with NO SKIP per completing event as sets, Flink's order among them being its
queue's; otherwise in order, or Flink's emitted then held matches, tests/flink/README.md), or,
where the case pins a difference, each side's stated answer.

``test_every_api_call_is_covered`` lists the public methods of Flink's Pattern, GroupPattern,
AfterMatchSkipStrategy (and its SkipToFirst / SkipToLast strategies), CEP and PatternStream
(``javap``) and requires each to be exercised by a case or listed in ``NOT_IN_SQL`` with what
stands for it.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import NamedTuple

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "flink"))

import flinkcep  # noqa: E402
import flink_spec_engine as fse  # noqa: E402
from flinkcep import elem, group, spec  # noqa: E402

import sql_ext  # noqa: E402

pytestmark = [pytest.mark.flink, pytest.mark.slow,
              pytest.mark.skipif(not flinkcep.available(), reason=flinkcep.unavailable_reason() or "")]

a, b, c, d, x, s_ = 1, 2, 3, 4, 5, 6
PREV = "PREVIOUS_AND_CURRENT"


def ev(*rows) -> list:
    """Events from (name[, ts ms[, price[, type]]]) or a bare name (ts = position s); ids 1..n."""
    out = []
    for i, r in enumerate(rows):
        r = (r,) if isinstance(r, int) else r
        e = {"id": i + 1, "name": r[0], "price": r[2] if len(r) > 2 else 0, "ts": r[1] if len(r) > 1 else i * 1000}
        if len(r) > 3:
            e["type"] = r[3]
        out.append(e)
    return out


A, B, C = (elem("a", {"name_eq": a}), elem("b", {"name_eq": b}), elem("c", {"name_eq": c}))


def _with(el, **kw):
    return {**el, **kw}


class Case(NamedTuple):
    """``calls``: the API calls shown (``Class.method(parameter types)``, javap's simple names);
    ``body``: the SQL form from AFTER MATCH to DEFINE; ``flink`` / ``ours``: stated answers of a
    pinned difference (compact ``a:1;b:2``), else None (the two must agree); ``error``: the
    failure both raise (ours, Flink's)."""
    calls: tuple
    spec: dict
    body: str
    order: str = "ts, id"
    engine: str = "nfa"
    flink: list | None = None
    ours: list | None = None
    error: tuple | None = None


def sk(skip):
    return {"skip": skip}


NO_SKIP = "AFTER MATCH NO SKIP SEMANTICS FLINKCEP"
GAP = "ts - LAST(ts, 1) < INTERVAL '1.5' SECOND"  # the row before B's row less than 1.5 s before it


def windowed(call, quant, loop, events, junction="next", condition=GAP, **pinned) -> Case:
    """``a`` then loop ``b`` (``quant`` with a 1.5 s window between takes), ``A B<loop>`` in SQL
    with ``condition`` in B's DEFINE."""
    sep = " -> " if junction == "followedBy" else " "
    return Case((call,), spec([A, _with(B, junction=junction, quant={**quant, "window_ms": 1500})], events),
                f"{NO_SKIP} PATTERN (A{sep}B{loop}) DEFINE A AS name = 1, B AS name = 2 AND {condition}", **pinned)

CASES = {
    # -- sequences: begin, conditions, contiguity, negation ----------------------------------------
    "next": Case(("Pattern.begin(String)", "Pattern.where(IterativeCondition)", "Pattern.next(String)"),
                 spec([A, B], ev(a, b, a, x, b)),
                 f"{NO_SKIP} PATTERN (A B) DEFINE A AS name = 1, B AS name = 2"),
    "followedBy": Case(("Pattern.followedBy(String)",), spec([A, _with(B, junction="followedBy")], ev(a, x, b, b)),
                       f"{NO_SKIP} PATTERN (A -> B) DEFINE A AS name = 1, B AS name = 2"),
    "followedByAny": Case(("Pattern.followedByAny(String)",),
                          spec([A, _with(B, junction="followedByAny")], ev(a, x, b, b)),
                          f"{NO_SKIP} PATTERN (A ->> B) DEFINE A AS name = 1, B AS name = 2"),
    "notNext": Case(("Pattern.notNext(String)",),
                    spec([A, _with(B, junction="notNext"), _with(C, junction="followedBy")], ev(a, b, c, a, d, c)),
                    f"{NO_SKIP} PATTERN (A ~B -> C) DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "notFollowedBy": Case(("Pattern.notFollowedBy(String)",),
                          spec([A, _with(B, junction="notFollowedBy"), _with(C, junction="followedBy")],
                               ev(a, d, b, c, a, d, c)),
                          f"{NO_SKIP} PATTERN (A -> ~B -> C) DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "where_where": Case(("Pattern.where(IterativeCondition)",),
                        spec([_with(A, conditions=[["where", {"cmp": ["price", "<", 5]}]])],
                             ev((a, 0, 1), (a, 1000, 7), (b, 2000, 1), (a, 3000, 4))),
                        f"{NO_SKIP} PATTERN (A) DEFINE A AS name = 1 AND price < 5"),
    "or": Case(("Pattern.or(IterativeCondition)",),
               spec([_with(A, conditions=[["or", {"name_eq": b}], ["where", {"cmp": ["price", "<", 5]}]])],
                    ev((a, 0, 1), (b, 1000, 7), (c, 2000, 1), (b, 3000, 2))),
               f"{NO_SKIP} PATTERN (A) DEFINE A AS (name = 1 OR name = 2) AND price < 5"),
    "subtype": Case(("Pattern.subtype(Class)",),
                    spec([A, _with(B, junction="followedBy", subtype=True)],
                         ev((a, 0), (b, 1000), (b, 2000, 0, "sub"), (a, 3000, 0, "sub"), (b, 4000, 0, "sub"))),
                    f"{NO_SKIP} PATTERN (A -> B) DEFINE A AS name = 1, B AS name = 2 AND type = 'sub'"),
    # -- loops ----------------------------------------------------------------------------------
    "until": Case(("Pattern.until(IterativeCondition)", "Pattern.oneOrMore()"),
                  spec([_with(A, quant={"oneOrMore": True}, until={"name_eq": b})], ev(a, c, a, b, a)),
                  f"{NO_SKIP} PATTERN (A->+) DEFINE A AS name = 1 UNTIL name = 2"),
    "oneOrMore": Case(("Pattern.oneOrMore()",),
                      spec([A, _with(B, junction="followedByAny", quant={"oneOrMore": True}),
                            _with(C, junction="followedBy")], ev(a, b, d, b, d, b, c)),
                      f"{NO_SKIP} PATTERN (A ->> B->+ -> C) DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "consecutive": Case(("Pattern.consecutive()",),
                        spec([A, _with(B, junction="followedByAny", quant={"oneOrMore": True}, inner="consecutive"),
                              _with(C, junction="followedBy")], ev(a, b, d, b, b, c)),
                        f"{NO_SKIP} PATTERN (A ->> B+ -> C) DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "allowCombinations": Case(("Pattern.allowCombinations()",),
                              spec([A, _with(B, junction="followedByAny", quant={"oneOrMore": True},
                                             inner="allowCombinations"), _with(C, junction="followedBy")],
                                   ev(a, b, d, b, d, b, c)),
                              f"{NO_SKIP} PATTERN (A ->> B->>+ -> C) DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "times": Case(("Pattern.times(int)",),
                  spec([A, _with(B, junction="followedBy", quant={"times": 2}), _with(C, junction="followedBy")],
                       ev(a, b, x, b, b, c)),
                  f"{NO_SKIP} PATTERN (A -> B->{{2}} -> C) DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "times_range": Case(("Pattern.times(int, int)",),
                        spec([A, _with(B, junction="followedBy", quant={"times": [2, 3]}),
                              _with(C, junction="followedBy")], ev(a, b, x, b, b, c)),
                        f"{NO_SKIP} PATTERN (A -> B->{{2,3}} -> C) DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "timesOrMore": Case(("Pattern.timesOrMore(int)",),
                        spec([A, _with(B, junction="followedBy", quant={"timesOrMore": 2}),
                              _with(C, junction="followedBy")], ev(a, b, x, b, b, c)),
                        f"{NO_SKIP} PATTERN (A -> B->{{2,}} -> C) DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "optional": Case(("Pattern.optional()",), spec([A, _with(B, optional=True), C], ev(a, c, a, b, c)),
                     f"{NO_SKIP} PATTERN (A B? C) DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "oneOrMore_optional": Case(("Pattern.optional()",),
                               spec([A, _with(B, quant={"oneOrMore": True}, optional=True), C], ev(a, c, a, b, x, b, c)),
                               f"{NO_SKIP} PATTERN (A B->* C) DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "times_optional": Case(("Pattern.optional()",),
                           spec([A, _with(B, quant={"times": [2, 3]}, optional=True), _with(C, junction="followedBy")],
                                ev(a, b, c, a, b, b, c, a, c)),
                           f"{NO_SKIP} PATTERN (A (B->{{2,3}})? -> C) DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "greedy": Case(("Pattern.greedy()",),
                   spec([elem("x", {"or": [{"name_eq": a}, {"name_eq": b}, {"name_eq": c}]}),
                         elem("y", {"or": [{"name_eq": b}, {"name_eq": c}]}),
                         elem("c", {"name_eq": c}, quant={"oneOrMore": True}, inner="consecutive", greedy=True),
                         elem("d", {"name_eq": d})], ev(a, b, c, c, c, d)),
                   f"{NO_SKIP} PATTERN (X Y C++ D) DEFINE X AS name IN (1, 2, 3), Y AS name IN (2, 3), C AS name = 3, "
                   "D AS name = 4"),
    # -- time -----------------------------------------------------------------------------------
    # Flink keeps a match when last - first < within; WITHIN is inclusive: 4.999 s on milliseconds
    "within": Case(("Pattern.within(Duration)",),
                   spec([A, _with(B, junction="followedByAny")], ev((a, 0), (b, 4999), (b, 5000)), within_ms=5000),
                   f"{NO_SKIP} PATTERN (A ->> B) WITHIN INTERVAL '4.999' SECOND DEFINE A AS name = 1, B AS name = 2"),
    "within_first_and_last": Case(("Pattern.within(Duration, WithinType)",),
                                  {**spec([A, _with(B, junction="followedByAny")], ev((a, 0), (b, 4999), (b, 5000)),
                                          within_ms=5000), "within_type": "FIRST_AND_LAST"},
                                  f"{NO_SKIP} PATTERN (A ->> B) WITHIN INTERVAL '4.999' SECOND "
                                  "DEFINE A AS name = 1, B AS name = 2"),
    # within(t, PREVIOUS_AND_CURRENT) on b: b's row less than t after the row before it
    "within_previous_and_current": Case(
        ("Pattern.within(Duration, WithinType)",),
        spec([A, _with(B, junction="followedBy", within_ms=1500, within_type=PREV), _with(C, junction="followedBy")],
             ev((a, 0), (b, 2500), (a, 3000), (b, 4000), (c, 9000))),
        f"{NO_SKIP} PATTERN (A -> B -> C) DEFINE A AS name = 1, B AS name = 2 AND {GAP}, C AS name = 3"),
    # ... Flink 2.3 ignores it on a loop: b2 comes 2 s after a1
    "within_previous_and_current_loop": Case(
        ("Pattern.within(Duration, WithinType)",),
        spec([A, _with(B, quant={"oneOrMore": True}, within_ms=1500, within_type=PREV)], ev((a, 0), (b, 2000), (b, 2500))),
        f"{NO_SKIP} PATTERN (A B->+) DEFINE A AS name = 1, B AS name = 2 AND {GAP}",
        flink=["a:1;b:2", "a:1;b:2,3"], ours=[]),
    # ... and a run waiting for an optional b is dropped when the window passes, also where it
    # would skip b: a1 c2 is no match in Flink 2.3 (the SQL form constrains b's rows only)
    "within_previous_and_current_optional": Case(
        ("Pattern.within(Duration, WithinType)",),
        spec([A, _with(B, junction="followedBy", optional=True, within_ms=1500, within_type=PREV),
              _with(C, junction="followedBy")], ev((a, 0), (c, 2000))),
        f"{NO_SKIP} PATTERN (A -> B? -> C) DEFINE A AS name = 1, B AS name = 2 AND {GAP}, C AS name = 3",
        flink=[], ours=["a:1;c:2"]),
    # loops with a window between takes: each B row less than 1.5 s after the row before it
    # (a row beyond the window ends the run: every later row lies further from the last one taken)
    "oneOrMore_window": windowed("Pattern.oneOrMore(Duration)", {"oneOrMore": True}, "->+",
                                 ev((a, 0), (x, 1000), (a, 2000), (b, 2500), (b, 3000), (x, 3500), (b, 4400)),
                                 junction="followedBy"),
    "times_window": windowed("Pattern.times(int, Duration)", {"times": 3}, "->{3}",
                             ev((a, 0), (b, 1000), (b, 3000), (a, 3500), (b, 4000), (b, 5000), (b, 5500))),
    "times_range_window": windowed("Pattern.times(int, int, Duration)", {"times": [2, 4]}, "->{2,4}",
                                   ev((a, 0), (b, 1000), (b, 2000), (b, 4000), (b, 4500))),
    "timesOrMore_window": windowed("Pattern.timesOrMore(int, Duration)", {"timesOrMore": 2}, "->{2,}",
                                   ev((a, 0), (b, 1000), (b, 3000), (a, 3500), (b, 4000), (b, 5000), (b, 5500))),
    # ... Flink 2.3 checks the window for the takes up to the minimum (timesOrMore, oneOrMore) or
    # below the maximum (times) only: here B's second row, 2 s after the first, is taken; Flink's
    # own rule in SQL is the gap condition for those takes only, COUNT(B.*) > k OR ...
    "oneOrMore_window_later_take": windowed("Pattern.oneOrMore(Duration)", {"oneOrMore": True}, "->+",
                                            ev((a, 0), (b, 1000), (b, 3000), (b, 3500)),
                                            flink=["a:1;b:2", "a:1;b:2,3", "a:1;b:2,3,4"], ours=["a:1;b:2"]),
    "oneOrMore_window_flinks_rule": windowed("Pattern.oneOrMore(Duration)", {"oneOrMore": True}, "->+",
                                             ev((a, 0), (b, 1000), (b, 3000), (b, 3500), (a, 4000), (b, 6000)),
                                             condition=f"(COUNT(B.*) > 1 OR {GAP})"),
    "times_window_flinks_rule": windowed("Pattern.times(int, Duration)", {"times": 3}, "->{3}",
                                         ev((a, 0), (b, 1000), (b, 2000), (b, 4000), (a, 5000), (b, 6000), (b, 8000),
                                            (b, 8200)),
                                         condition=f"(COUNT(B.*) > 2 OR {GAP})"),
    # -- groups ---------------------------------------------------------------------------------
    "group_begin": Case(("Pattern.begin(Pattern)",),
                        {**spec([_with(group([A, B], quant={"oneOrMore": True}), until={"name_eq": s_})],
                                ev(a, b, x, a, b, s_, a, b))},
                        f"{NO_SKIP} PATTERN ((A B)->+ UNTIL S) DEFINE A AS name = 1, B AS name = 2, S AS name = 6"),
    "group_next": Case(("Pattern.next(Pattern)",),
                       spec([elem("x", {"name_eq": x}), group([A, B], quant={"times": 2}, inner="consecutive")],
                            ev(x, a, b, a, b, x, a, b, x, a, b)),
                       f"{NO_SKIP} PATTERN (X (A B){{2}}) DEFINE X AS name = 5, A AS name = 1, B AS name = 2"),
    "group_followedBy": Case(("Pattern.followedBy(Pattern)",),
                             spec([elem("x", {"name_eq": x}), _with(group([A, B]), junction="followedBy")],
                                  ev(x, c, a, b, a, b)),
                             f"{NO_SKIP} PATTERN (X -> (A B)) DEFINE X AS name = 5, A AS name = 1, B AS name = 2"),
    "group_followedByAny": Case(("Pattern.followedByAny(Pattern)",),
                                spec([elem("x", {"name_eq": x}), _with(group([A, B]), junction="followedByAny")],
                                     ev(x, c, a, b, a, b)),
                                f"{NO_SKIP} PATTERN (X ->> (A B)) DEFINE X AS name = 5, A AS name = 1, B AS name = 2"),
    "group_begin_skip": Case(("Pattern.begin(Pattern, AfterMatchSkipStrategy)",),
                             {**spec([group([A, B], quant={"oneOrMore": True}, inner="consecutive")], ev(a, b, a, b, a, b)),
                              **sk("SKIP_PAST_LAST_EVENT")},
                             "AFTER MATCH SKIP PAST LAST ROW SEMANTICS FLINKCEP PATTERN ((A B)+) "
                             "DEFINE A AS name = 1, B AS name = 2"),
    # -- after match skip strategies (FlinkCEP documentation: b+ c over b1 b2 b3 c; a b+) --------
    "noSkip": Case(("Pattern.begin(String, AfterMatchSkipStrategy)", "AfterMatchSkipStrategy.noSkip()"),
                   {**spec([_with(B, quant={"oneOrMore": True}), C], ev(b, b, b, c)), **sk("NO_SKIP")},
                   f"{NO_SKIP} PATTERN (B->+ C) DEFINE B AS name = 2, C AS name = 3"),
    "skipToNext": Case(("AfterMatchSkipStrategy.skipToNext()",),
                       {**spec([A, _with(B, quant={"oneOrMore": True})], ev(a, b, b, b)), **sk("SKIP_TO_NEXT")},
                       "AFTER MATCH SKIP TO NEXT ROW SEMANTICS FLINKCEP PATTERN (A B->+) "
                       "DEFINE A AS name = 1, B AS name = 2"),
    "skipPastLastEvent": Case(("AfterMatchSkipStrategy.skipPastLastEvent()",),
                              {**spec([_with(B, quant={"oneOrMore": True}), C], ev(b, b, b, c)),
                               **sk("SKIP_PAST_LAST_EVENT")},
                              "AFTER MATCH SKIP PAST LAST ROW SEMANTICS FLINKCEP PATTERN (B->+ C) "
                              "DEFINE B AS name = 2, C AS name = 3"),
    "skipToFirst": Case(("AfterMatchSkipStrategy.skipToFirst(String)",),
                        {**spec([elem("x", {"or": [{"name_eq": a}, {"name_eq": b}, {"name_eq": c}]}),
                                 elem("y", {"or": [{"name_eq": b}, {"name_eq": c}]}),
                                 elem("c", {"name_eq": c}, quant={"oneOrMore": True}, inner="consecutive", greedy=True),
                                 elem("d", {"name_eq": d})], ev(a, b, c, c, c, d)), **sk("SKIP_TO_FIRST:c")},
                        "AFTER MATCH SKIP TO FIRST C SEMANTICS FLINKCEP PATTERN (X Y C++ D) "
                        "DEFINE X AS name IN (1, 2, 3), Y AS name IN (2, 3), C AS name = 3, D AS name = 4"),
    "skipToLast": Case(("AfterMatchSkipStrategy.skipToLast(String)",),
                       {**spec([A, _with(B, quant={"oneOrMore": True}, inner="consecutive"), C],
                               ev(a, b, b, c, a, b, c)), **sk("SKIP_TO_LAST:b")},
                       "AFTER MATCH SKIP TO LAST B SEMANTICS FLINKCEP PATTERN (A B+ C) "
                       "DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    "throwExceptionOnMiss_absent": Case(
        ("SkipToLastStrategy.throwExceptionOnMiss()",),
        {**spec([A, _with(B, optional=True), C], ev(a, c, a, b, c)), **sk("SKIP_TO_LAST:b"), "skip_throw": True},
        "AFTER MATCH SKIP TO LAST B ERROR ON MISS SEMANTICS FLINKCEP PATTERN (A B? C) "
        "DEFINE A AS name = 1, B AS name = 2, C AS name = 3",
        error=("AFTER MATCH SKIP TO LAST B failed: pattern variable is not present in match",
               "Could not skip to b. No such element in the found match")),
    "throwExceptionOnMiss_first": Case(
        ("SkipToFirstStrategy.throwExceptionOnMiss()",),
        {**spec([_with(B, quant={"oneOrMore": True}), C], ev(b, b, c)), **sk("SKIP_TO_FIRST:b"), "skip_throw": True},
        "AFTER MATCH SKIP TO FIRST B ERROR ON MISS SEMANTICS FLINKCEP PATTERN (B->+ C) "
        "DEFINE B AS name = 2, C AS name = 3",
        error=("AFTER MATCH SKIP TO FIRST B failed: cannot skip to first row of match",
               "Could not skip to first element of a match.")),
    "throwExceptionOnMiss_found": Case(
        ("SkipToLastStrategy.throwExceptionOnMiss()",),
        {**spec([A, _with(B, quant={"oneOrMore": True}, inner="consecutive"), C], ev(a, b, b, c, a, b, c)),
         **sk("SKIP_TO_LAST:b"), "skip_throw": True},
        "AFTER MATCH SKIP TO LAST B ERROR ON MISS SEMANTICS FLINKCEP PATTERN (A B+ C) "
        "DEFINE A AS name = 1, B AS name = 2, C AS name = 3"),
    # -- the pattern stream ---------------------------------------------------------------------
    # events of one timestamp in the comparator's order (a real job: CepOperator sorts them)
    "comparator": Case(("CEP.pattern(DataStream, Pattern, EventComparator)",),
                       {**spec([_with(A, junction="next"), B], ev((b, 0, 2), (a, 0, 1), (c, 1000, 0))),
                        "comparator": "price"},
                       f"{NO_SKIP} PATTERN (A B) DEFINE A AS name = 1, B AS name = 2",
                       order="ts, price", engine="job"),
    "event_time": Case(("CEP.pattern(DataStream, Pattern)", "PatternStream.inEventTime()",
                        "PatternStream.process(PatternProcessFunction)"),
                       spec([A, _with(B, junction="followedBy")], ev((b, 0), (a, 1000), (x, 2000), (b, 3000))),
                       f"{NO_SKIP} PATTERN (A -> B) DEFINE A AS name = 1, B AS name = 2", engine="job"),
}

# methods with no SQL form, or whose SQL form is not a pattern (what stands for them)
NOT_IN_SQL = {
    "Pattern.getPrevious()": "an accessor", "Pattern.getTimes()": "an accessor", "Pattern.getName()": "an accessor",
    "Pattern.getWindowSize()": "an accessor", "Pattern.getWindowSize(WithinType)": "an accessor",
    "Pattern.getQuantifier()": "an accessor", "Pattern.getCondition()": "an accessor",
    "Pattern.getUntilCondition()": "an accessor", "Pattern.getAfterMatchSkipStrategy()": "an accessor",
    "Pattern.toString()": "an accessor", "GroupPattern.getRawPattern()": "an accessor",
    "GroupPattern.where(IterativeCondition)": "Flink refuses it (a group has no condition); in SQL a group is no "
                                              "variable and has no DEFINE",
    "GroupPattern.or(IterativeCondition)": "Flink refuses it; a group has no DEFINE",
    "GroupPattern.subtype(Class)": "Flink refuses it; a group has no DEFINE",
    "AfterMatchSkipStrategy.isSkipStrategy()": "an accessor", "AfterMatchSkipStrategy.getPatternName()": "an accessor",
    "AfterMatchSkipStrategy.prune(Collection, Collection, SharedBufferAccessor)": "the NFA's internal call",
    "SkipToFirstStrategy.toString()": "an accessor", "SkipToFirstStrategy.hashCode()": "an accessor",
    "SkipToFirstStrategy.equals(Object)": "an accessor", "SkipToFirstStrategy.getPatternName()": "an accessor",
    "SkipToFirstStrategy.isSkipStrategy()": "an accessor", "SkipToLastStrategy.toString()": "an accessor",
    "SkipToLastStrategy.hashCode()": "an accessor", "SkipToLastStrategy.equals(Object)": "an accessor",
    "SkipToLastStrategy.getPatternName()": "an accessor", "SkipToLastStrategy.isSkipStrategy()": "an accessor",
    "CEP.CEP()": "the class's constructor",
    "PatternStream.inProcessingTime()": "no SQL form: the rows are ordered by a column (ORDER BY), not by arrival",
    "PatternStream.sideOutputLateData(OutputTag)": "no SQL form: a streaming query drops rows behind the watermark "
                                                   "and counts them (docs/streaming.md, Late rows)",
    "PatternStream.process(PatternProcessFunction, TypeInformation)": "MEASURES, ONE ROW / ALL ROWS PER MATCH",
    "PatternStream.select(PatternSelectFunction)": "MEASURES, ONE ROW PER MATCH",
    "PatternStream.select(PatternSelectFunction, TypeInformation)": "MEASURES, ONE ROW PER MATCH",
    "PatternStream.select(OutputTag, PatternTimeoutFunction, PatternSelectFunction)": "WITH TIMEOUT ROWS",
    "PatternStream.select(OutputTag, PatternTimeoutFunction, TypeInformation, PatternSelectFunction)":
        "WITH TIMEOUT ROWS",
    "PatternStream.flatSelect(PatternFlatSelectFunction)": "MEASURES, ALL ROWS PER MATCH",
    "PatternStream.flatSelect(PatternFlatSelectFunction, TypeInformation)": "MEASURES, ALL ROWS PER MATCH",
    "PatternStream.flatSelect(OutputTag, PatternFlatTimeoutFunction, PatternFlatSelectFunction)": "WITH TIMEOUT ROWS",
    "PatternStream.flatSelect(OutputTag, PatternFlatTimeoutFunction, TypeInformation, PatternFlatSelectFunction)":
        "WITH TIMEOUT ROWS",
}

CLASSES = ("org.apache.flink.cep.pattern.Pattern", "org.apache.flink.cep.pattern.GroupPattern",
           "org.apache.flink.cep.nfa.aftermatch.AfterMatchSkipStrategy",
           "org.apache.flink.cep.nfa.aftermatch.SkipToFirstStrategy",
           "org.apache.flink.cep.nfa.aftermatch.SkipToLastStrategy", "org.apache.flink.cep.CEP",
           "org.apache.flink.cep.PatternStream")


def public_methods() -> set:
    """``Class.method(parameter types)`` of every public method and constructor of CLASSES (javap)."""
    jar = next(flinkcep.lib_dir().glob("flink-cep-*.jar"))
    out = subprocess.run([flinkcep._tool("javap"), "-public", "-cp", str(jar), *CLASSES], capture_output=True,
                         text=True, check=True).stdout
    methods, owner = set(), None
    for line in out.splitlines():
        head = re.match(r"public (?:abstract |final )*class ([\w.]+)", line)
        if head:
            owner = head.group(1).rsplit(".", 1)[1]
            continue
        m = re.match(r"\s+public .*?(\w+)\(([^)]*)\)", line)
        if m:
            params = [re.sub(r"<.*>", "", p).strip().rsplit(".", 1)[-1] for p in _split(m.group(2))]
            methods.add(f"{owner}.{m.group(1)}({', '.join(params)})")
    return methods


def _split(params: str) -> list:
    """Parameter types separated by top-level commas (generic arguments have their own)."""
    out, depth, cur = [], 0, ""
    for ch in params:
        depth += (ch == "<") - (ch == ">")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [p for p in out + [cur] if p.strip()]


def test_every_api_call_is_covered():
    covered = {call for case in CASES.values() for call in case.calls}
    methods = public_methods()
    assert not covered - methods, f"cases name calls Flink does not have: {sorted(covered - methods)}"
    missing = methods - covered - set(NOT_IN_SQL)
    assert not missing, f"Flink API calls with no case and no NOT_IN_SQL entry: {sorted(missing)}"
    assert not set(NOT_IN_SQL) - methods


# ---- running both sides ---------------------------------------------------------------------

def sql_of(k: int, case: Case) -> str:
    rows = ", ".join(f"({e['id']}, {e['name']}, {e.get('price', 0)}, {e['ts']}, '{e.get('type', 'event')}')"
                     for e in case.spec["events"])
    return (f"SELECT {k} AS q, m, cls, id FROM (SELECT id, name, price, timestamp_millis(ts) AS ts, type "
            f"FROM VALUES {rows} AS v(id, name, price, ts, type)) "
            f"MATCH_RECOGNIZE (ORDER BY {case.order} MEASURES MATCH_NUMBER() AS m, CLASSIFIER() AS cls "
            f"ALL ROWS PER MATCH {case.body}) AS r")


@pytest.fixture(scope="module")
def flink_results():
    out = {}
    for engine in ("nfa", "job"):
        names = [n for n, c in CASES.items() if c.engine == engine]
        kwargs = {"full": True} if engine == "nfa" else {}
        for name, r in zip(names, flinkcep.run_many([CASES[n].spec for n in names], engine=engine, **kwargs)):
            out[name] = r if isinstance(r, Exception) or engine == "nfa" else {"matches": r}
    return out


@pytest.fixture(scope="module")
def sql_results(spark):
    """Our matches per case: [((id, VAR), ...)] in MATCH_NUMBER order, or the error raised."""
    sql_ext.enable(spark)
    names = [n for n, c in CASES.items() if c.error is None]
    statement = "\nUNION ALL\n".join(sql_of(k, CASES[n]) for k, n in enumerate(names))
    found: dict = {}
    for row in spark.sql(statement).collect():
        found.setdefault(row["q"], {}).setdefault(row["m"], []).append((row["id"], row["cls"]))
    out = {n: [tuple(sorted(found.get(k, {})[m])) for m in sorted(found.get(k, {}))] for k, n in enumerate(names)}
    for name, case in CASES.items():
        if case.error is not None:
            with pytest.raises(Exception) as info:
                spark.sql(sql_of(0, case)).collect()
            out[name] = info.value
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_api_call_in_sql_agrees_with_flink(name, flink_results, sql_results):
    case, theirs, ours = CASES[name], flink_results[name], sql_results[name]
    if case.error is not None:
        assert isinstance(theirs, flinkcep.FlinkCepError) and case.error[1] in str(theirs), theirs
        assert case.error[0] in str(ours), ours
        return
    assert not isinstance(theirs, Exception), theirs
    flink = [fse.from_flink(m) for m in theirs["matches"]]
    if case.flink is not None:
        assert (fse.compact(flink), fse.compact(ours)) == (case.flink, case.ours)
        return
    assert flink, "the case shows no match"
    assert fse.compare(case.spec, ours, theirs) != "differ", (fse.compact(flink), fse.compact(ours))
