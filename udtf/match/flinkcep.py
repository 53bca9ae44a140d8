"""FlinkCEP semantics (Fu & Wu, Section 6.2 / Algorithm 2) on the Pike VM.

Runs from every start advance together, ordered by start then priority; after each row the
accepting runs are reported in that order and the skip strategy prunes the run list.  Empty
matches are never reported.  A run is its sequence of transitions, the epsilon moves between
two rows going through the precomputed closure (each state once, as ``EPSCLS``): every move of
every closure state is a run of its own, so a match that several runs produce is reported
once per run (docs/flinkcep.md, "How many times NO SKIP reports a match").

Where the output cannot tell two such runs apart, they are one (``merge``): two runs in the
same state with the same captures have the same future and the same output, and the skip
strategy (SKIP TO NEXT ROW, SKIP PAST LAST ROW, SKIP TO FIRST / LAST with ERROR ON MISS) drops
the second when it reports the first, as DISTINCT does.  Captures are then interned per row
(one chain object per distinct capture list), so the same captures are the same object.  A
program where no two runs can come to that (``Machine.forks``) skips the bookkeeping.
"""
from __future__ import annotations

from ..plan import SkipMode
from ..program import ACCEPT, Kind
from ..rows import Match
from .base import Matcher, Options, ascending_keys, skip_target
from .vm import KEEP, Machine, shifted


class FlinkMatcher(Matcher):
    def __init__(self, machine: Machine, options: Options):
        self.machine = machine
        skip = options.skip
        self.merge = machine.forks and (
            options.distinct or skip.mode in (SkipMode.PAST_LAST_ROW, SkipMode.TO_NEXT_ROW) or
            skip.mode in (SkipMode.TO_FIRST, SkipMode.TO_LAST) and skip.error_on_miss)
        super().__init__(machine.rows, options)

    def reset(self):
        super().reset()
        self.threads: list = []  # (start, state, facts, chain) in run order
        self.pending: list = []  # accepts of the last row read, reported before the next
        self.quiet = (0, 0)  # (row, match number) when last no run was live nor pending
        # DISTINCT: id -> chain of the matches reported that a held run may still report again
        self.reported: dict = {}
        # a stream's replay of rows whose matches an earlier step reported (``udtf.stream``):
        # matches are numbered and applied (skip, DISTINCT), not built
        self.replaying = False

    def low_water(self) -> int:
        return min(min((t[0] for t in self.threads), default=self.pos),
                   min((a[3] for a in self.pending), default=self.pos))

    def rebase(self, shift: int):
        table, memo = self.machine.table, {}
        self.pos -= shift
        self.quiet = (self.quiet[0] - shift, self.quiet[1])
        self.threads = [(start - shift, s, table.shifted(f, shift), shifted(c, shift, memo))
                        for start, s, f, c in self.threads]
        self.pending = [(flag, index, order, start - shift, end - shift, shifted(c, shift, memo))
                        for flag, index, order, start, end, c in self.pending]
        self.reported = {id(c): c for c in (shifted(c, shift, memo) for c in self.reported.values())}

    def _run(self, out):
        """Algorithm 2: all runs advance over each row in order (start, priority); every
        configuration a consumed row leads to is one run.  The runs that accept after row p are
        reported before row p + 1 is read, once runs waiting on that row (notNext, a possessive
        loop, ``$``) know whether they accept at p too, so the order is end row, start row,
        priority.  Each run follows its state's plan for the row's class (``Machine.plan``):
        a run that only ignores the row is carried over as it is."""
        machine, limit = self.machine, self.limit()
        if self.pos < limit:
            self._advance(self.pos, limit, machine.classes(self.pos, limit), out)
        if self.finished:  # the partition end closes every window
            self._expire(self._report(*self._release(None), out), lambda start: True, out)
            self.threads, self.pending = [], []
        elif self.horizon is not None:
            self._flush(out)

    def _advance(self, first: int, limit: int, classes: list, out):
        """Read rows ``first`` to ``limit`` - 1 (of classes ``classes``)."""
        machine, options = self.machine, self.options
        timeouts = options.timeouts
        by_class, plans_for = machine.plans, machine.plans_for
        order, window = self.rows.order, options.within
        live_runs, match_rows = options.limits.live_runs, options.limits.match_rows
        merge, distinct = self.merge, options.distinct
        fresh = [s for s in machine.closure[False][machine.start_state] if s != ACCEPT]
        initial, waiting, origin = machine.initial_facts, machine.waiting, -self.rows.dropped
        # over ascending WITHIN keys the runs a row ends are the oldest ones (a prefix)
        ascending = window is not None and ascending_keys(order, min((t[0] for t in self.threads), default=first), limit)
        for row, cls in zip(range(first, limit), classes):
            if waiting:
                threads = self._report(*self._release(row), out)
            elif self.pending:  # in run order already: no run waits
                threads = self._report(self.threads, [a[3:] for a in self.pending], out)
            else:
                threads = self.threads
            if window is None:
                pass
            elif ascending:
                last = order[row]
                if threads and last - order[threads[0][0]] > window:
                    oldest = 1
                    while oldest < len(threads) and last - order[threads[oldest][0]] > window:
                        oldest += 1
                    if timeouts:
                        out += machine.timed_out(threads[:oldest])
                    threads = threads[oldest:]
            else:
                threads = self._expire(threads, lambda start: not machine.within(start, row), out)
            if not threads:
                self.quiet = (row, self.match_number)
            plans = by_class.get(cls) or plans_for(cls)
            if row == origin or waiting:
                threads += [(row, s, f, c) for s, f, c in self._starting(row)]
            else:
                for s in fresh:  # a run that cannot read its first row is not started
                    plan = plans[s]
                    if plan is not KEEP and plan[1]:
                        threads.append((row, s, initial, None))
            nxt: list = []
            accepts: list = []  # (False, index, 0, start, end, chain), see ``_release``
            # merge: the (state, chain) of the runs kept, and this row's chains by (var,
            # excluded, parent): captures are interned, so a run's identity is (state, id(chain))
            # (its start is its chain's first row, its facts a function of the chain)
            seen = set() if merge else None
            links = {} if merge else None
            if threads and row - threads[0][0] >= match_rows:  # in run order: the first is the oldest
                self.check_span(threads[0][0], row)
            for thread in threads:
                start, state, facts, chain = thread
                plan = plans[state]
                if plan is KEEP:
                    if chain is not None:  # a run never starts with an ignored row
                        if seen is not None:
                            if (state, id(chain)) in seen:
                                continue
                            seen.add((state, id(chain)))
                        nxt.append(thread)
                    continue
                tested, moves = plan
                memo = {} if tested else None
                for test, var, excluded, target, closure, fold in moves:
                    if test is not None and not test(row, facts, memo):
                        continue
                    if var < 0:
                        if chain is not None:
                            for s in closure:
                                if s != ACCEPT:
                                    if seen is not None:
                                        if (s, id(chain)) in seen:
                                            continue
                                        seen.add((s, id(chain)))
                                    nxt.append(thread if s == state else (start, s, facts, chain))
                        continue
                    if fold is None:
                        new_facts = facts
                    elif memo is not None and var in memo:
                        new_facts = memo[var]
                    else:
                        new_facts = fold(facts, row)
                        if new_facts is None:  # (a probe: the condition failed)
                            continue
                    if links is None:
                        new_chain = (row, var, excluded, chain)
                    else:
                        new_chain = links.setdefault((var, excluded, id(chain)), (row, var, excluded, chain))
                    for s in closure:
                        if seen is not None:
                            if (s, id(new_chain)) in seen:
                                continue
                            seen.add((s, id(new_chain)))
                        if s != ACCEPT:
                            nxt.append((start, s, new_facts, new_chain))
                        else:
                            accepts.append((False, len(nxt), 0, start, row, new_chain))
            if len(nxt) > live_runs:
                self._check_runs(nxt, row)
            self.threads, self.pending = nxt, accepts
            self.pos = row + 1
            if distinct and self.reported:
                self._forget_reported()

    def _flush(self, out):
        """Streaming: report now what the next row would report, when it cannot change that:
        no run waits on that row within its WITHIN window (see ``Matcher.closed``).  Runs whose
        window closed end, as that row would end them."""
        machine = self.machine
        if self.pos < self.rows.size or any(
                machine.holds[t[1]] is not None and not self.closed(t[0]) for t in self.threads):
            return
        ready, accepts = self._release(self.rows.size, expired=self.closed)
        self.threads = self._expire(self._report(ready, accepts, out), self.closed, out)
        self.pending = []
        if not self.threads:
            self.quiet = (self.pos, self.match_number)

    def _expire(self, threads, expired, out) -> list:
        """The runs of ``threads`` whose window is still open (``expired(start)`` False); with
        ``timeouts``, the others are reported as timed-out partial matches (after the matches
        their window close confirmed, as Flink's ``advanceTime`` does)."""
        live = [t for t in threads if not expired(t[0])]
        if self.options.timeouts and len(live) < len(threads):
            out += self.machine.timed_out([t for t in threads if expired(t[0])])
        return live

    def _starting(self, row) -> list:
        """The threads of a run starting at ``row`` (its waits on ``row`` resolved)."""
        machine = self.machine
        threads: list = []
        for s in machine.closure[row + self.rows.dropped == 0][machine.start_state]:
            if s == ACCEPT:
                continue  # a run stores at least one row
            if machine.holds[s] is None:
                threads.append((s, machine.initial_facts, None))
            else:
                machine.release(s, machine.initial_facts, None, row, threads, lambda f, c: False)
        return threads

    def _release(self, row, expired=None):
        """(runs ready to read ``row``, accepts to report now): held runs are resolved against
        ``row`` (None: the partition end); their accepts join the pending ones in run order.
        ``expired(start)``: is ``row`` beyond the window of a run from ``start`` (default: by
        the WITHIN key of ``row``)."""
        machine = self.machine
        ready: list = []
        accepts = list(self.pending)
        within = self.options.within is not None
        if expired is None:
            expired = lambda start: within and row is not None and not machine.within(start, row)
        for index, (start, state, facts, chain) in enumerate(self.threads):
            if machine.holds[state] is None:
                ready.append((start, state, facts, chain))
                continue
            released: list = []
            found: list = []
            machine.release(state, facts, chain, row, released, lambda f, c: found.append(c) or False,
                            expired(start))
            if found and chain is not None:
                # a window close confirms after the matches the rows before it completed
                accepts.append((machine.holds[state][0] is Kind.EXPIRE, index, 1, start, chain[0], found[0]))
            ready += [(start, s, f, c) for s, f, c in released]
        accepts.sort(key=lambda a: a[:3])
        return ready, [a[3:] for a in accepts]

    def _check_runs(self, threads, row: int):
        """``_check_threads``; where every run is reported, the runs of one match may be what grows."""
        self._check_threads(threads, row, "" if self.merge else
                            "; every run of a match is reported, SEMANTICS FLINKCEP DISTINCT reports each distinct "
                            "match once and keeps one run per state and rows captured")

    def _forget_reported(self):
        """DISTINCT: forget the reported matches no run can report again -- a run reports a match
        ending before the row it reads only while held (confirmed at a later row)."""
        holds = self.machine.holds
        low = min((t[3][0] for t in self.threads if holds[t[1]] is not None and t[3] is not None),
                  default=self.pos)
        self.reported = {k: c for k, c in self.reported.items() if c[0] >= low}

    def _report(self, threads, accepts, out) -> list:
        """Report accepting runs in run order and prune the runs by the skip strategy
        (Algorithm 2 step 3; SKIP TO FIRST/LAST as the FlinkCEP documentation defines them).
        DISTINCT: a match reported before is not reported again (its skip was applied then)."""
        skip = self.options.skip
        reported = self.reported if self.options.distinct else None
        dead_starts: set = set()
        dead_ranges: list = []
        for start, end, chain in accepts:
            if (dead_starts or dead_ranges) and (
                    start in dead_starts or any(lo <= start < hi for lo, hi in dead_ranges)):
                continue
            if reported is not None:
                if id(chain) in reported:
                    continue
                reported[id(chain)] = chain
            self.match_number += 1
            if self.replaying and skip.mode not in (SkipMode.TO_FIRST, SkipMode.TO_LAST):
                rows = None
            else:
                rows = self.machine.rows_of(chain)
                if not self.replaying:
                    out.append(Match(self.match_number, rows[0][0], end, rows))
            if skip.mode is SkipMode.PAST_LAST_ROW:
                dead_ranges.append((0, end + 1))
            elif skip.mode is SkipMode.TO_NEXT_ROW:
                dead_starts.add(start)
            elif skip.mode in (SkipMode.TO_FIRST, SkipMode.TO_LAST):
                target = skip_target(skip, rows, skip.error_on_miss)
                if target is not None:
                    dead_ranges.append((rows[0][0], target))
        if not dead_starts and not dead_ranges:
            return threads
        return [t for t in threads
                if t[0] not in dead_starts and not any(lo <= t[0] < hi for lo, hi in dead_ranges)]
