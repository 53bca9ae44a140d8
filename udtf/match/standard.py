"""Standard semantics (SQL:2016) on the Pike VM: for each candidate start row, the first
match in preferment order.

Threads of one start advance in lockstep, in priority order; a thread reaching the same state
with the same facts as a higher-priority one is dropped (thread equivalence), so e.g.
``(A+)+ B`` stays linear; an accepting thread cuts every lower-priority one.  The next start
follows the AFTER MATCH SKIP clause.

Faster tiers (``Tier``: ``match.runs``, ``match.dfa``, ``match.lanes``) decide the start rows
they can before the VM is asked; ``match.matcher`` picks them.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from enum import Enum

from ..errors import LimitExceeded, MatchRecognizeError
from ..plan import LIMIT_CONFS
from ..rows import Match, unmatched
from ..program import ACCEPT
from .base import Matcher, Options, next_start
from .vm import DEAD, KEEP, Machine, shifted


class Verdict(Enum):
    """Where a tier's ``Tier.decide`` leaves the matcher's ``start``."""
    WAIT = "wait"  # undecided until more rows arrive (or the partition is done)
    PASS = "pass"  # the next tier decides it (after the last one, the Pike VM)


class Tier(ABC):
    """A way to decide start rows faster than the Pike VM, exact where it applies.  ``decide``
    decides the start rows from ``matcher.start`` on that it can, reporting them as the VM
    would (``StandardMatcher.decide``, or by advancing ``start``, ``match_number`` and
    ``covered`` itself), and says what becomes of the first it cannot decide."""

    def reset(self):
        """A new partition begins."""

    def rebase(self, shift: int):
        """The first ``shift`` rows were dropped."""

    @abstractmethod
    def decide(self, matcher: "StandardMatcher", out: list) -> Verdict:
        """Decide start rows from ``matcher.start`` on, appending their matches to ``out``."""


class StandardMatcher(Matcher):
    framed = False  # do ``limit()`` and ``_bound()`` change with the start (``match.window``)?

    def __init__(self, machine: Machine, options: Options, tiers: tuple = ()):
        self.machine = machine
        self.tiers = tiers  # tried in order before the VM decides a start
        # per ``at_start`` (the partition's first row or not): the threads of a start row before
        # it reads its row, and whether the empty match is accepted (``_closure_of_start``)
        self.entry = tuple(self._closure_of_start(at_start) for at_start in (False, True))
        # no run and no empty match can begin past the partition's first row (a pattern
        # anchored with ``^``): every later start is decided unmatched without being tried
        self.anchored = self.entry[False] == ((), False)
        # can a pair of rows rule out a start (``_skip_dead``)?  Not where the start state's
        # closure accepts or holds a run (``Machine.dead`` is then false for every pair)
        entry = machine.closure[False][machine.start_state]
        self.dies = ACCEPT not in entry and all(machine.holds[s] is None for s in entry)
        super().__init__(machine.rows, options)
        # can ``_first_rows`` decide starts (with no tier to ask)?  Not in a window's frame, under
        # WITHIN, with the empty match accepted, or where the first row alone breaks a limit.
        # (``_run`` asks it after two starts whose runs ended on their own row: where the next
        # start's runs live on, it only adds its setup)
        limits = options.limits
        self.quick = not (self.framed or options.within is not None or options.span is not None or self.entry[False][1]) and \
            limits.match_rows > 0 and len(self.entry[False][0]) <= limits.steps_per_start

    def reset(self):
        super().reset()
        self.start = 0  # the start row being tried
        self.threads: list = []  # its live threads
        self.best = None  # (end, chain) of its preferred accepting thread so far
        self.covered = -1  # last row that belongs to a reported match
        self.deadline = None  # per state, once the partition is complete (Machine.deadlines)
        self.viable_before = 0  # ... and the least of them + 1: a run at a row before it is viable
        self.expired = None  # timeouts: the timed-out partial match of the start row, if any
        self.classes: list = []  # the class of each row held (``Machine.classes``)
        for tier in self.tiers:
            tier.reset()

    def resume(self, start: int, matches: int):
        """Take over a partition at start row ``start`` after ``matches`` matches."""
        self.start, self.pos, self.match_number = start, start, matches
        self.covered = start - 1

    def chain(self, start: int) -> tuple:
        """(matches, error): the chain of attempts from row ``start`` over the rows held, taken
        as all the partition has (``udtf.chunks``: a chunk's rows, ``rows.dropped`` before them),
        and the error an attempt raised (None: none; its row is then ``self.start``) with the
        matches found before it.  After an error the chain is run again on the Pike VM alone,
        which tries one start at a time (a tier decides many at once: its error's start row is
        not ``self.start``)."""
        tiers = self.tiers
        try:
            for attempt in (tiers, ()):  # all tiers, then the Pike VM alone
                self.tiers = attempt
                self.reset()
                self.resume(start, 0)
                self.finished = True
                out: list = []
                try:
                    self.feed_into(out)
                except MatchRecognizeError as e:
                    error = e
                    continue
                return out, None
            return out, error
        finally:
            self.tiers = tiers

    def low_water(self) -> int:
        return self.start

    def rebase(self, shift: int):
        self.start -= shift
        self.pos -= shift
        self.covered -= shift
        del self.classes[:shift]
        table, memo = self.machine.table, {}
        self.threads = [(s, table.shifted(f, shift), shifted(c, shift, memo)) for s, f, c in self.threads]
        if self.best is not None:
            self.best = (self.best[0] - shift, shifted(self.best[1], shift, memo))
        for tier in self.tiers:
            tier.rebase(shift)

    # ---- one start after the other -----------------------------------------------------
    def _run(self, out):
        rows, machine, options = self.rows, self.machine, self.options
        classes = self.classes
        window, live_runs = options.within is not None or options.span is not None, options.limits.live_runs
        steps_limit, match_rows = options.limits.steps_per_start, options.limits.match_rows
        viable = self.finished and not options.timeouts  # ``_viable`` cuts runs
        deadline, safe = (self.deadlines(), self.viable_before) if viable else (None, 0)
        limit, bound = self.limit(), self._bound()  # (rows and ``finished`` are fixed in a call)
        step = self._step
        quick = self.quick and not self.tiers
        ended = 0  # how many starts in a row ended on their own row (from two on, ``_first_rows`` decides on)
        while True:
            if not self.threads and self.best is None:
                if self.start >= rows.size:
                    return
                if self.anchored and self.start + rows.dropped > 0:
                    self.decide_unmatched(out, rows.size)  # no row past the first can begin a run
                    return
                if self.tiers and any(tier.decide(self, out) is Verdict.WAIT for tier in self.tiers):
                    return
                if not (ended > 1 and quick and self._first_rows(out, min(limit, rows.size))):
                    if self.start >= rows.size:
                        return
                    if self.dies:
                        self._skip_dead(out)
                    self._begin(self.start)
            self._classified()  # (once a faster tier left a start to the VM)
            if self.framed:
                limit, bound = self.limit(), self._bound()
            # (the live threads, the row and the steps spent are locals while the start is
            # stepped, written back where the loop leaves it: a row then costs no attribute stores)
            threads, row, steps, plans_of = self.threads, self.pos, self.steps, machine.plans
            while threads:
                if bound is not None and row >= bound:  # the rows this start may read end here
                    self._close(threads)
                    break
                if row >= limit:
                    if not self.finished:
                        self.pos = row
                        if not self.closed(self.start):
                            self.threads, self.steps = threads, steps
                            return
                        self._close(threads, row)  # as a row beyond the window would
                        break
                    self._close(threads)
                    break
                if window and not machine.within(self.start, row):
                    self._close(threads, row)
                    break
                if row - self.start >= match_rows:
                    self.check_span(self.start, row)
                steps += len(threads)
                if steps > steps_limit:
                    raise LimitExceeded(f"more than {steps_limit} run steps from start "
                                        f"row {self.start + self.rows.dropped + 1}",
                                        LIMIT_CONFS["steps_per_start"], row)
                nxt, seen, cls = [], set(), classes[row]
                plans = plans_of.get(cls) or machine.plans_for(cls)
                for thread in threads:
                    if plans[thread[0]] is not DEAD and step(thread, row, plans, nxt, seen):
                        break
                if len(nxt) > live_runs:
                    self._check_threads(nxt, row)
                row += 1
                threads = nxt if not viable or row < safe else [t for t in nxt if deadline[t[0]] >= row]
            self.threads, self.pos, self.steps = [], row, steps
            best, self.best = self.best, None
            ended = ended + 1 if best is None and self.pos <= self.start + 1 else 0
            if best is None:
                if self.expired is not None:
                    out.append(self.expired)
                    self.expired = None
                self.decide(out, None, ())
            else:
                self.decide(out, best[0], machine.rows_of(best[1]))

    def _bound(self) -> int | None:
        """The row before which the current start's runs end as at the partition's end (a
        window's frame, ``match.window``); None: the partition's end."""
        return None

    def _first_rows(self, out, stop: int) -> bool:
        """Decide, unmatched, the starts from ``self.start`` on (before ``stop``, past the
        partition's first row) whose runs all end on their own row, each stepped there as
        ``_begin`` and the first pass of ``_run``'s row loop would (``_skip_dead``'s pairs
        first); True when a start's runs live on: it is begun, its runs past its first row."""
        machine, rows, start = self.machine, self.rows, self.start
        if start + rows.dropped == 0:
            return False
        entry, classes, plans_of, size = self.entry[False][0], self._classified(), machine.plans, rows.size
        dead = machine.dead if self.dies and not self.options.timeouts else None
        viable = self.finished and not self.options.timeouts
        deadline = self.deadlines() if viable else None
        safe = self.viable_before if viable else size
        machine.table.match_number = self.match_number + 1  # MATCH_NUMBER() in DEFINE
        first = start
        try:
            while start < stop:
                if dead is not None and start + 1 < size and dead(classes[start], classes[start + 1]):
                    start += 1
                    continue
                self.start = start  # (an accepting run's end reads it)
                runs = entry if start < safe else [t for t in entry if deadline[t[0]] >= start]
                cls = classes[start]
                plans = plans_of.get(cls) or machine.plans_for(cls)
                nxt, seen = [], set()
                for thread in runs:
                    if plans[thread[0]] is not DEAD and self._step(thread, start, plans, nxt, seen):
                        break
                if nxt or self.best is not None:
                    self.steps, self.pos = len(runs), start + 1
                    if len(nxt) > self.options.limits.live_runs:
                        self._check_threads(nxt, start)
                    self.threads = self._viable(nxt, start + 1) if viable else nxt
                    return True
                start += 1
            return False
        finally:
            if start > first:  # (also before an error: the starts decided before its start)
                self.start = first
                self.decide_unmatched(out, start)

    def _classified(self) -> list:
        """``self.classes``, extended (in place) to every row held."""
        classes, size = self.classes, self.rows.size
        if len(classes) < size:
            classes += self.machine.classes(len(classes), size)
        return classes

    def _skip_dead(self, out):
        """Decide, unmatched, the run of starts from ``self.start`` on that the classes of their
        row and the next rule out (``Machine.dead``; not with ``timeouts``, where a run the next
        row lies beyond the window of times out instead)."""
        size, start = self.rows.size, self.start
        if self.options.timeouts or start + self.rows.dropped == 0 or start + 1 >= size:
            return
        classes, dead = self._classified(), self.machine.dead
        stop = start
        while stop + 1 < size and dead(classes[stop], classes[stop + 1]):
            stop += 1
        if stop > start:
            self.decide_unmatched(out, stop)

    def decide_unmatched(self, out, stop: int):
        """Decide the starts from ``self.start`` to ``stop`` - 1 without a match, as
        ``decide(out, None, ())`` would one after the other (``match.window`` decides only
        the first: there a start without a match moves the owner's search)."""
        if self.options.unmatched:
            unmatched(out, max(self.start, self.covered + 1), stop)
        self.start = stop

    def _begin(self, start: int):
        self.steps = 0  # run steps spent on this start row
        self.machine.table.match_number = self.match_number + 1  # MATCH_NUMBER() in DEFINE
        threads, empty = self.entry[start + self.rows.dropped == 0]
        self.best = (start - 1, None) if empty else None
        self.pos = start
        self.threads = self._viable(threads, start)

    def _closure_of_start(self, at_start: bool) -> tuple:
        """The epsilon closure of the start state with the initial facts: the same for every
        start row but the partition's first (``Machine.add`` reads no condition, and a run has
        no row yet), so ``_begin`` takes it from ``entry``."""
        machine, threads = self.machine, []
        empty = machine.add(machine.start_state, machine.initial_facts, None, at_start, threads, set(),
                            lambda facts, chain: True)
        return tuple(threads), empty

    def deadlines(self) -> list:
        """``Machine.deadlines`` of the complete partition, computed once."""
        if self.deadline is None:
            self.deadline = self.machine.deadlines()
            self.viable_before = min(self.deadline, default=-1) + 1
        return self.deadline

    def _viable(self, threads, pos):
        """``threads`` without those that can no longer accept from row ``pos`` on (known once
        the partition is complete; with ``timeouts`` they are kept: the partition end times
        them out)."""
        if not self.finished or self.options.timeouts:
            return threads
        deadline = self.deadlines()
        if pos < self.viable_before:
            return threads
        return [t for t in threads if deadline[t[0]] >= pos]

    def _record(self, chain, end) -> bool:
        self.best = (end, chain)
        return True

    def _end(self, chain) -> int:
        """The last row of a match (``start - 1`` for an empty one)."""
        return chain[0] if chain is not None else self.start - 1

    # (``FlinkMatcher._advance`` walks a plan's moves as ``_step`` does, but keeps every run
    # with its start, merges runs by their interned captures and collects every accept where
    # this cuts at the first; one loop for both would hand each new thread to a callback or
    # take the moves from a generator: in a timeit of just that inner loop (2026-11-27), 1.9x
    # and 1.3x its time per thread produced, in the loop where matching spends its time)
    def _step(self, thread, row, plans, out, seen) -> bool:
        """Advance one thread over ``row`` (holds are resolved first) by its state's plan for
        the row's class (``plans``, see ``Machine.plans_for``); ``seen``: the (state, facts) of the threads in ``out``
        (an equivalent thread of lower priority is dropped).  True when a thread accepts: it
        cuts every thread of lower priority."""
        machine = self.machine
        state, facts, chain = thread
        if machine.holds[state] is not None:
            released: list = []
            cut = machine.release(state, facts, chain, row, released, lambda f, c: self._record(c, self._end(c)))
            for t in released:
                if self._step(t, row, plans, out, seen):
                    return True
            return cut
        plan = plans[state]
        if plan is KEEP:
            if chain is not None and (state, facts) not in seen:  # a run never starts with an ignored row
                seen.add((state, facts))
                out.append(thread)
            return False
        tested, moves = plan
        memo = {} if tested else None
        for test, var, excluded, target, closure, fold in moves:
            if test is not None and not test(row, facts, memo):
                continue
            if var >= 0:
                if fold is None:
                    new_facts = facts
                elif memo is not None and var in memo:
                    new_facts = memo[var]
                else:
                    new_facts = fold(facts, row)
                    if new_facts is None:  # (a probe: the condition failed)
                        continue
                new_chain = (row, var, excluded, chain)
            elif chain is None:
                continue
            else:
                new_facts, new_chain = facts, chain
            for s in closure:
                if s == ACCEPT:
                    self.best = (row, new_chain)
                    return True
                key = (s, new_facts)
                if key not in seen:
                    seen.add(key)
                    out.append((s, new_facts, new_chain))
        return False

    def _close(self, threads, row=None):
        """The runs of ``threads`` have no next row: the partition ended (``row`` None) or
        ``row`` lies beyond their WITHIN window.  Release what waits for that; look for
        acceptance.  With ``timeouts`` and no match, the most preferred run that could still
        store a row is the start row's timed-out partial match (``expired``)."""
        machine = self.machine
        self.threads = []
        for state, facts, chain in threads:
            if machine.holds[state] is not None and machine.release(
                    state, facts, chain, row, [], lambda f, c: self._record(c, self._end(c)), expired=True):
                return
        if self.options.timeouts and self.best is None:
            preferred = next((t for t in threads if t[2] is not None and machine.growing[t[0]]), None)
            if preferred is not None:
                self.expired = machine.timed_out([preferred])[0]

    # ---- reporting -------------------------------------------------------------------------
    def decide(self, out, end, rows: tuple):
        """Report the match of ``self.start`` (``end`` None: no match) and move to the next start."""
        start = self.start
        if end is None:
            if self.options.unmatched and start > self.covered:
                unmatched(out, start, start + 1)
            self.start = start + 1
            return
        self.match_number += 1
        out.append(Match(self.match_number, start, end, rows))
        if end >= start:
            self.covered = max(self.covered, end)
        self.start = self._next_start(start, end, rows)

    def _next_start(self, start: int, end: int, rows: tuple) -> int:
        return next_start(self.options.skip, start, end, rows)

