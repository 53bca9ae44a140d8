"""Matching: choose the fastest matcher that is exact for a program and its conditions.

FlinkCEP semantics run on ``flinkcep.FlinkMatcher``, a window's (R020) one outcome per row on
``window.WindowMatcher`` (both on the Pike VM).  Standard semantics run on
``standard.StandardMatcher``: the Pike VM, asked for a start row only when each of its tiers
(``standard.Tier``, picked by ``tiers``, fastest first) passed it on:

* ``runs.RunsTier``: a flat sequence of quantified variables over masks, PAST LAST ROW / TO
  NEXT ROW, no WITHIN, no unmatched rows: numpy over the whole partition (data needing
  backtracking passes the partition on);
* ``dfa.DfaTier``: every condition a mask, no timed-out partial matches to report: a lazily
  built DFA (a start waiting on ``$`` at the partition end passes);
* ``lanes.LaneTier``: a flat sequence whose conditions read the match state, PAST LAST ROW /
  TO NEXT ROW, no WITHIN, no unmatched rows: numpy over the start rows, one row per step (a
  start whose lane branched or cannot be vouched for passes).

Where no condition navigates back and a window's frame is each row's rest of the partition,
searched from the row itself (INITIAL), the window runs on the matchers above with
``window.RowOutcomes``.
"""
from __future__ import annotations

from ..plan import Limits, Semantics, SkipMode
from ..program import Program
from .base import Matcher, Options, forget
from .conditions import Conditions
from .dfa import DfaTier, LazyDFA, dfa_masks
from .flinkcep import FlinkMatcher
from .lanes import LONG, LaneTier, lane_program
from .never import fold_never
from .runs import MatchBlock, RunLengthMatcher, RunsTier, expand, shifted
from .standard import StandardMatcher, Tier
from .vm import Machine
from .window import RowOutcomes, WindowMatcher, reads_back

__all__ = ["Conditions", "MatchBlock", "Matcher", "Options", "expand", "forget", "matcher", "shifted"]


def matcher(program: Program, conditions: Conditions, options: Options):
    """The matcher for ``program`` over ``conditions.rows`` (the variables whose DEFINE never
    holds dropped first: ``never``)."""
    program, conditions = fold_never(program, conditions)
    frame = options.frame
    if frame is not None and frame.end is None and not frame.seek and not reads_back(conditions):
        # the matches of MATCH_RECOGNIZE, each its start row's; navigation in the whole partition
        conditions.frame[:] = [0, float("inf")]
        return RowOutcomes(matcher(program, conditions, options._replace(frame=None)))
    machine = Machine(program, conditions, options.semantics, options.within, options.span)
    if frame is not None:
        return WindowMatcher(machine, conditions, options)
    if options.semantics is Semantics.FLINKCEP:
        return FlinkMatcher(machine, options)
    return StandardMatcher(machine, options, tiers(program, conditions, options, machine))


def tiers(program: Program, conditions: Conditions, options: Options, machine: Machine) -> tuple[Tier, ...]:
    """The tiers that decide start rows before the Pike VM, fastest first: each where it is
    exact for the program, its conditions and the options."""
    sequence = program.sequence
    simple = bool(sequence) and options.within is None and options.span is None and not options.unmatched and \
        not options.timeouts and options.skip.mode in (SkipMode.PAST_LAST_ROW, SkipMode.TO_NEXT_ROW)
    if machine.stateful:
        # (a lane reads at most LONG rows, on which the VM would spend at most LONG x live runs
        # steps: the limits must let the VM go that far, else it decides every start and raises)
        limits = options.limits
        bounded = limits.live_runs >= Limits().live_runs and limits.steps_per_start >= LONG * limits.live_runs
        lanes = lane_program(sequence, conditions) if simple and bounded else None
        return () if lanes is None else (LaneTier(lanes, sequence, machine.rows, options),)
    masks = None if options.timeouts else dfa_masks(program, conditions)
    picked = () if masks is None else (DfaTier(LazyDFA(program, conditions, machine.closure, masks)),)
    if simple and all(item.var not in conditions.until for item in sequence) and \
            all(getattr(conditions.define.get(item.var), "expr", None) is None for item in sequence):
        # (a condition over no match state but CLASSIFIER() or MATCH_NUMBER() has an expression
        # and no mask: the VM evaluates it)
        run_masks = [getattr(conditions.define.get(item.var), "mask", None) for item in sequence]
        picked = (RunsTier(RunLengthMatcher(sequence, run_masks, options.skip.mode)), *picked)
    return picked
