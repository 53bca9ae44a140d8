"""Matching: choose the fastest matcher that is exact for a program and its conditions.

Tiers, fastest first (each falls back to the next where its assumptions fail):

* ``runs.RunsMatcher``: a flat sequence of quantified variables over masks, standard
  semantics, PAST LAST ROW / TO NEXT ROW, no WITHIN, no unmatched rows: numpy over the whole
  partition (backtracking data falls back to the DFA);
* ``dfa.DfaMatcher``: standard semantics, every condition a mask, no timed-out partial
  matches to report: a lazily built DFA;
* ``lanes.LaneMatcher``: a flat sequence whose conditions read the match state, standard
  semantics, PAST LAST ROW / TO NEXT ROW, no WITHIN, no unmatched rows: numpy over the start
  rows, one row per step (the Pike VM decides what it cannot);
* ``standard.StandardMatcher``: standard semantics on the Pike VM;
* ``window.WindowMatcher``: a window's (R020) one outcome per row, on the Pike VM; where no
  condition navigates back and the frame is each row's rest of the partition, searched from
  the row itself (INITIAL), the tiers above with ``window.RowOutcomes``;
* ``flinkcep.FlinkMatcher``: FlinkCEP semantics on the Pike VM.
"""
from __future__ import annotations

from ..plan import Limits, Semantics, SkipMode
from ..program import Program
from .base import Matcher, Options, forget
from .conditions import Conditions
from .dfa import DfaMatcher, LazyDFA, dfa_masks
from .flinkcep import FlinkMatcher
from .lanes import LONG, LaneMatcher, lane_program
from .runs import MatchBlock, RunMatcher, RunsMatcher, expand
from .standard import StandardMatcher
from .vm import Machine
from .window import RowOutcomes, WindowMatcher, reads_back

__all__ = ["Conditions", "MatchBlock", "Matcher", "Options", "expand", "forget", "matcher"]


def matcher(program: Program, conditions: Conditions, options: Options):
    """The matcher for ``program`` over ``conditions.rows``."""
    frame = options.frame
    if frame is not None and frame.end is None and not frame.seek and not reads_back(conditions):
        # the matches of MATCH_RECOGNIZE, each its start row's; navigation in the whole partition
        conditions.frame[:] = [0, float("inf")]
        return RowOutcomes(matcher(program, conditions, options._replace(frame=None)))
    machine = Machine(program, conditions, options.semantics, options.within)
    if frame is not None:
        return WindowMatcher(machine, conditions, options)
    if options.semantics is Semantics.FLINKCEP:
        return FlinkMatcher(machine, options)
    masks = None if machine.stateful or options.timeouts else dfa_masks(program, conditions)
    sequence = program.sequence
    simple = options.within is None and not options.unmatched and not options.timeouts and \
        options.skip.mode in (SkipMode.PAST_LAST_ROW, SkipMode.TO_NEXT_ROW)
    # (a lane reads at most LONG rows, on which the VM would spend at most LONG x live runs
    # steps: the limits must let the VM go that far, else it decides every start and raises)
    limits = options.limits
    bounded = limits.live_runs >= Limits().live_runs and limits.steps_per_start >= LONG * limits.live_runs
    lanes = lane_program(sequence, conditions) if sequence and simple and bounded and machine.stateful else None
    if lanes is not None:
        return LaneMatcher(machine, options, lanes)
    if masks is None:
        vm = StandardMatcher(machine, options)
    else:
        vm = DfaMatcher(machine, options, LazyDFA(program, conditions, machine.closure, masks))
    if sequence and simple and not machine.stateful and \
            all(item.var not in conditions.until for item in sequence) and \
            all(getattr(conditions.define.get(item.var), "expr", None) is None for item in sequence):
        # (a condition over no match state but CLASSIFIER() or MATCH_NUMBER() has an expression
        # and no mask: the VM evaluates it)
        run_masks = [getattr(conditions.define.get(item.var), "mask", None) for item in sequence]
        return RunsMatcher(RunMatcher(sequence, run_masks, options.skip.mode), vm)
    return vm
