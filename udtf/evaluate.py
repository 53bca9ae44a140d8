"""Pike-VM evaluation of a DST over the rows of one partition, fed incrementally.

A *thread* is one run of the DST: (state, facts, chain).  ``facts`` are the running folds the
DEFINE conditions read (see ``expr.FactTable``); ``chain`` is the run's captured rows as a
parent-pointer list ``(row, var, excluded, parent)`` shared between forks (SASE's shared
buffer), so forking a run is O(1).  Threads are kept in priority order; epsilon closures are
precomputed per state (the paper's EPSCLS).

Two output policies over the same automaton:

* ``standard`` (SQL:2016): for each candidate start row, the first match in preferment order.
  Threads of one start advance in lockstep; a thread reaching the same state with the same
  facts as a higher-priority one is dropped (thread equivalence), so e.g. ``(A+)+ B`` stays
  linear; an accepting thread cuts every lower-priority one.  The next start follows the
  AFTER MATCH SKIP clause.
* ``flinkcep`` (Fu & Wu, Section 6.2 / Algorithm 2): runs from every start advance together,
  ordered by start then priority; after each row the accepting runs are reported in that
  order and the skip strategy prunes the run list.  Empty matches are never reported and
  equivalent runs are all kept (each is a distinct match).
"""
from __future__ import annotations

import bisect
from typing import NamedTuple

from .errors import MatchRecognizeError
from .expr import FactTable, Scope, compile_expr, facts_of

ACCEPT = -1


class Match(NamedTuple):
    """A match: ``rows`` lists (row, var, excluded) ascending; ``number`` None = unmatched row."""
    number: int | None
    start: int
    end: int  # last row (start - 1 for an empty match)
    rows: tuple


class Rows:
    """The columns of one partition seen so far (appended in place, so closures stay bound)."""

    def __init__(self, masks=(), values=()):
        self.masks = {name: bytearray() for name in masks}
        self.values = {name: [] for name in values}
        self.order: list = []
        self.size = 0

    def append(self, count: int, masks=None, values=None, order=None):
        for name, mask in (masks or {}).items():
            self.masks[name] += bytes(mask) if not hasattr(mask, "tobytes") else mask.tobytes()
        for name, column in (values or {}).items():
            self.values[name].extend(column)
        if order is not None:
            self.order.extend(order)
        self.size += count

    def clear(self):
        """Forget the partition (in place: compiled conditions stay bound to these containers)."""
        for mask in self.masks.values():
            mask.clear()
        for column in self.values.values():
            column.clear()
        self.order.clear()
        self.size = 0


class Options(NamedTuple):
    mode: str = "standard"  # or "flinkcep"
    skip: str = "PAST LAST ROW"  # TO NEXT ROW | TO FIRST | TO LAST | NO SKIP
    skip_vars: tuple = ()  # variable indexes of the SKIP TO target (a subset = several)
    skip_name: str = ""
    skip_at: tuple = (None, None)  # line, column of the SKIP TO target in the user's SQL
    within: object = None  # max distance between first and last row in ``Rows.order`` units
    unmatched: bool = False  # WITH UNMATCHED ROWS
    max_threads: int = 100_000
    lookahead: int = 0  # rows past the current one that DEFINE may read (NEXT of a variable)
    blocks: bool = False  # the caller accepts ``runs.MatchBlock`` items among the matches


class Conditions:
    """DEFINE / UNTIL conditions of each variable: a precomputed mask and/or a state expression.

    ``define`` and ``until`` map a variable index to ``(mask_name | None, expr | None)``; a
    variable without an entry is TRUE.
    """

    def __init__(self, define: dict, until: dict, var_names: list, rows: Rows):
        needed: dict = {}
        for _, expr in list(define.values()) + list(until.values()):
            if expr is not None:
                facts_of(expr, needed)
        self.table = FactTable(list(needed), rows.values)
        self.scope = Scope(self.table, var_names, lambda: rows.size)
        self.rows = rows
        self.define, self.until = define, until

    def literal(self, kind: str, var: int):
        """``fn(row, facts) -> bool`` for ["def", var] or ["until", var]."""
        spec = (self.define if kind == "def" else self.until).get(var)
        if spec is None:
            return None
        mask_name, expr = spec
        mask = self.rows.masks[mask_name] if mask_name is not None else None
        if expr is None:
            return lambda row, facts: mask[row] == 1
        fn = compile_expr(expr, self.scope)
        if kind == "until":
            state = lambda row, facts: fn(row, facts, None) is True
        else:
            fold = self.table.fold
            state = lambda row, facts: fn(row, fold(facts, row, var), None) is True
        if mask is None:
            return state
        return lambda row, facts: mask[row] == 1 and state(row, facts)

    def guard(self, formula):
        """Compile a guard formula; None means always true."""
        kind = formula[0]
        if kind == "true":
            return None
        if kind in ("def", "until"):
            return self.literal(kind, formula[1])
        parts = [self.guard(f) for f in formula[1:]]
        if kind == "not":
            (inner,) = parts
            return (lambda row, facts: False) if inner is None else (
                lambda row, facts: not inner(row, facts))
        always = lambda row, facts: True
        parts = [p or always for p in parts]
        if kind == "and":
            return lambda row, facts: all(p(row, facts) for p in parts)
        return lambda row, facts: any(p(row, facts) for p in parts)


class Matcher:
    """Runs a compiled DST over one partition.  Call ``feed(count)`` after appending ``count``
    rows to ``rows`` (any number of times), then ``finish()``; both return new matches."""

    def __init__(self, program: dict, conditions: Conditions, options: Options = Options()):
        self.options = options
        self.rows = conditions.rows
        self.stateful = bool(conditions.table.facts)
        self.initial_facts = conditions.table.initial
        self.fold = conditions.table.fold
        states = program["states"]
        self.start_state = program["start"]
        self.kind = [s[0] for s in states]
        self.transitions = [self._transitions(s, conditions) if s[0] == "consume" else () for s in states]
        self.holds = [self._hold(s, conditions) for s in states]
        self.closure = [self._closures(states, at_start) for at_start in (False, True)]
        self.flink = options.mode == "flinkcep"
        self.dfa = self.runs = None
        if not self.flink and not self.stateful:
            from .dfa import LazyDFA
            from .runs import RunMatcher

            self.dfa = LazyDFA.build(self, program, conditions)
            sequence = program.get("sequence")
            if sequence and options.within is None and not options.unmatched and \
                    options.skip in ("PAST LAST ROW", "TO NEXT ROW") and \
                    all(conditions.until.get(v) is None for v, *_ in sequence):
                masks = [(conditions.define.get(v) or (None, None))[0] for v, *_ in sequence]
                self.runs = RunMatcher(sequence, masks, options.skip)
        self.reset()

    def reset(self):
        """Start a new partition."""
        self.match_number = 0
        self.finished = False
        self.pos = 0  # next row to read
        # standard mode: the start being tried and its live threads
        self.start = 0
        self.threads: list = []
        self.pending: list = []  # FlinkCEP: accepts of the last row read, reported before the next
        self.best = None
        self.covered = -1  # last row that belongs to a reported match
        if self.dfa is not None:
            self.dfa.reset()

    # ---- compilation of states -------------------------------------------------------
    def _transitions(self, state, conditions: Conditions):
        return tuple((conditions.guard(guard), conditions.guard(stop) if stop else None, var, excluded, target)
                     for guard, stop, var, excluded, target in state[1])

    def _hold(self, state, conditions: Conditions):
        """(kind, guard, target) of a state that waits for the next row, else None."""
        if state[0] == "peek":
            return "peek", conditions.guard(state[1]), state[2]
        if state[0] in ("eol", "expire"):
            return state[0], None, state[1]
        return None

    def _closures(self, states, at_start: bool):
        """For each state, the consume/hold states and ACCEPT reachable by epsilon moves, in
        priority order, each once (the paper's EPSCLS).  In standard semantics a path that
        comes back to an unbounded loop without reading a row (an empty iteration) leaves the
        loop, as in regular expressions (ISO/IEC 19075-5 7.2.8); the paper drops such paths."""
        empty_iteration_exits = self.options.mode != "flinkcep"
        result = []
        for origin in range(len(states)):
            found, seen, path = [], set(), set()

            def walk(s):
                if s in path:
                    state = states[s]
                    if empty_iteration_exits and state[0] == "split" and len(state) > 2:
                        walk(state[2])
                    return
                if s in seen:
                    return
                seen.add(s)
                kind = states[s][0]
                if kind == "split":
                    path.add(s)
                    for t in states[s][1]:
                        walk(t)
                    path.discard(s)
                elif kind == "bol":
                    if at_start:
                        path.add(s)
                        walk(states[s][1])
                        path.discard(s)
                elif kind == "accept":
                    found.append(ACCEPT)
                else:
                    found.append(s)

            walk(origin)
            result.append(tuple(found))
        return result

    # ---- public API --------------------------------------------------------------------
    def feed(self, count: int = 0) -> list:
        """Process the rows appended since the last call.  With a flat sequence the whole
        partition is matched at ``finish`` (a ``runs.MatchBlock`` in the list) unless the data
        needs backtracking."""
        out: list = []
        if self.runs is not None and self.start == 0:
            if not self.finished:
                return out
            block = self.runs.match(self.rows)
            if block is not None:
                self.start = self.rows.size
                if not len(block):
                    return out
                return [block] if self.options.blocks else block.matches()
        if self.flink:
            self._flink_run(out)
        else:
            self._standard_run(out)
        return out

    def finish(self) -> list:
        self.finished = True
        return self.feed()

    # ---- shared stepping ---------------------------------------------------------------
    def _add(self, state, facts, chain, at_start, out, seen, accept):
        """Add the epsilon closure of ``state`` to ``out``; ``accept(facts, chain)`` returns True
        to cut everything of lower priority.  Returns True when cut."""
        for s in self.closure[at_start][state]:
            if s == ACCEPT:
                if accept(facts, chain):
                    return True
                continue
            if seen is not None:
                key = (s, facts)
                if key in seen:
                    continue
                seen.add(key)
            out.append((s, facts, chain))
        return False

    def _step(self, thread, row, out, seen, accept):
        """Advance one thread over ``row`` (holds are resolved first).  Returns True when cut."""
        state, facts, chain = thread
        if self.holds[state] is not None:
            released: list = []
            cut = self._release(state, facts, chain, row, released, lambda f, c: accept(f, c, self._end(c)))
            for t in released:
                if self._step(t, row, out, seen, accept):
                    return True
            return cut
        for target, new_facts, new_chain, _ in self._moves(state, facts, chain, row):
            if self._add(target, new_facts, new_chain, False, out, seen, lambda f, c: accept(f, c, row)):
                return True
        return False

    def _moves(self, state, facts, chain, row):
        """(target, facts, chain, stored) for each transition of ``state`` that reads ``row``,
        in priority order."""
        for guard, stop, var, excluded, target in self.transitions[state]:
            if guard is not None and not guard(row, facts):
                continue
            if stop is not None and stop(row, facts):
                continue
            if var >= 0:
                yield target, self.fold(facts, row, var) if self.stateful else facts, (row, var, excluded, chain), True
            elif chain is not None:  # a run never starts with an ignored row
                yield target, facts, chain, False

    def _close(self, threads, accept, row=None):
        """The runs of ``threads`` have no next row: the partition ended (``row`` None) or
        ``row`` lies beyond their WITHIN window.  Release what waits for that; look for
        acceptance."""
        for state, facts, chain in threads:
            if self.holds[state] is not None and self._release(
                    state, facts, chain, row, [], lambda f, c: accept(f, c, self._end(c)), expired=True):
                return

    def _end(self, chain) -> int:
        """The last row of a standard-mode match (``start - 1`` for an empty one)."""
        return chain[0] if chain is not None else self.start - 1

    def _release(self, state, facts, chain, row, out, accept, expired=False, visited=frozenset()) -> bool:
        """Resolve a thread held before ``row`` is read.  ``row`` None: the partition ended, every
        hold passes; ``expired``: ``row`` lies beyond the run's WITHIN window, so a notNext or a
        trailing notFollowedBy passes but ``$`` does not.  The threads it releases go to ``out`` in
        priority order; ``accept(facts, chain)`` is called as in ``_add``.  True when cut.  A
        hold reached again without reading a row is not resolved twice."""
        if state in visited:
            return False
        kind, guard, target = self.holds[state]
        if row is not None:
            if kind == "eol" or (kind == "expire" and not expired):
                return False
            if kind == "peek" and not expired and guard is not None and not guard(row, facts):
                return False
        position = self.rows.size if row is None else row
        local: list = []
        cut = self._add(target, facts, chain, position == 0, local, None, accept)
        visited = visited | {state}
        for s, f, c in local:
            if self.holds[s] is None:
                out.append((s, f, c))
            elif self._release(s, f, c, row, out, accept, expired, visited):
                return True
        return cut

    def _within(self, start: int, row: int) -> bool:
        within = self.options.within
        if within is None:
            return True
        first, last = self.rows.order[start], self.rows.order[row]
        return first is not None and last is not None and last - first <= within

    def _limit(self) -> int:
        """Rows that may be processed now: DEFINE may look ``lookahead`` rows ahead."""
        return self.rows.size if self.finished else self.rows.size - self.options.lookahead

    def _check_threads(self, threads):
        if len(threads) > self.options.max_threads:
            raise MatchRecognizeError(
                f"more than {self.options.max_threads} simultaneous partial matches in one partition;"
                " the pattern is too ambiguous for this data (tighten DEFINE, add WITHIN, or use a"
                " stricter contiguity)")

    @staticmethod
    def _rows_of(chain) -> tuple:
        rows = []
        while chain is not None:
            rows.append(chain[:3])
            chain = chain[3]
        rows.reverse()
        return tuple(rows)

    # ---- standard semantics ----------------------------------------------------------
    def _standard_run(self, out):
        rows = self.rows
        if self.dfa is not None:
            self.dfa.sync()
        while True:
            if not self.threads and self.best is None:
                # begin a new start row
                if self.start >= rows.size:
                    return
                if self.dfa is not None and self._dfa_attempt(out) is False:
                    return
                self._begin(self.start)
            while self.threads:
                row = self.pos
                if row >= self._limit():
                    if not self.finished:
                        return
                    self._close(self.threads, self._record)
                    self.threads = []
                    break
                if not self._within(self.start, row):
                    self._close(self.threads, self._record, row)
                    self.threads = []
                    break
                nxt, seen = [], set()
                for thread in self.threads:
                    if self._step(thread, row, nxt, seen, self._record):
                        break
                self._check_threads(nxt)
                self.threads = nxt
                self.pos = row + 1
            best, self.best = self.best, None
            if best is None:
                self._decide(out, None, ())
            else:
                self._decide(out, best[0], self._rows_of(best[1]))

    def _begin(self, start: int):
        self.best = None
        self.threads = []
        self.pos = start
        self._add(self.start_state, self.initial_facts, None, start == 0, self.threads, set(),
                  lambda f, c: self._record(f, c, start - 1))

    def _record(self, facts, chain, end) -> bool:
        self.best = (end, chain)
        return True

    def _dfa_attempt(self, out):
        """Decide starts with the DFA, from ``self.start`` on, in one tight loop.  Returns False
        when more rows are needed, None to let the Pike VM decide ``self.start`` (threads wait
        at ``$`` at the partition end)."""
        dfa, symbols, starts = self.dfa, self.dfa.symbols, self.dfa.starts
        limit, size, finished = self._limit(), self.rows.size, self.finished
        unmatched, within = self.options.unmatched, self.options.within is not None
        simple_skip = self.options.skip in ("PAST LAST ROW", "TO NEXT ROW")
        past_last = self.options.skip == "PAST LAST ROW"
        move = dfa.move
        initial, initial0 = dfa.initial[False], dfa.initial[True]
        start = self.start
        k = bisect.bisect_left(starts, start)
        while start < size:
            state, accept_empty = initial0 if start == 0 else initial
            if start > 0 and not accept_empty:
                while k < len(starts) and starts[k] < start:
                    k += 1
                candidate = starts[k] if k < len(starts) else limit
                if candidate > start:
                    if unmatched:
                        out.extend(Match(None, r, r, ()) for r in range(max(start, self.covered + 1),
                                                                         min(candidate, size)))
                    start = candidate
                    if start >= limit:
                        break
            best = (start - 1, None, 0) if accept_empty else None
            trail, row = [], start
            while state is not None:
                if row >= limit:
                    if finished and not state.waits_end:
                        break  # the partition ended: the live threads can never accept
                    self.start = start
                    return None if finished else False
                if within and not self._within(start, row):
                    break
                sym = symbols[row]
                state, accept, parents = state.moves.get(sym) or move(state, sym)
                trail.append(parents)
                if accept is not None:
                    best = (row, accept, len(trail))
                row += 1
            self.start = start
            if best is None:
                if unmatched and start > self.covered:
                    out.append(Match(None, start, start, ()))
                start += 1
                continue
            end, accept, length = best
            rows = []
            if accept is not None:
                origin, var, excluded = accept
                if var >= 0:
                    rows.append((end, var, excluded))
                for j in range(length - 2, -1, -1):
                    origin, var, excluded = trail[j][origin]
                    if var >= 0:
                        rows.append((start + j, var, excluded))
                rows.reverse()
            rows = tuple(rows)
            if not simple_skip:
                self._decide(out, end, rows)
                start = self.start
                continue
            self.match_number += 1
            out.append(Match(self.match_number, start, end, rows))
            if end >= start:
                self.covered = max(self.covered, end)
                start = end + 1 if past_last else start + 1
            else:
                start += 1
        self.start = start
        return False

    def _decide(self, out, end, rows: tuple):
        """Report the match of ``self.start`` (``end`` None: no match) and move to the next start."""
        start = self.start
        if end is None:
            if self.options.unmatched and start > self.covered:
                out.append(Match(None, start, start, ()))
            self.start = start + 1
            return
        self.match_number += 1
        out.append(Match(self.match_number, start, end, rows))
        if end >= start:
            self.covered = max(self.covered, end)
        self.start = self._next_start(start, end, rows)

    def _next_start(self, start: int, end: int, rows: tuple) -> int:
        skip = self.options.skip
        if end < start:  # an empty match: resume at the next row
            return start + 1
        if skip == "PAST LAST ROW":
            return end + 1
        if skip in ("TO NEXT ROW", "NO SKIP"):
            return start + 1
        targets = [r for r, var, _ in rows if var in self.options.skip_vars]
        if not targets:
            raise MatchRecognizeError(
                f"AFTER MATCH SKIP {skip} {self.options.skip_name} failed: pattern variable is not present in match",
                *self.options.skip_at)
        target = targets[0] if skip == "TO FIRST" else targets[-1]
        if target == start:
            raise MatchRecognizeError(
                f"AFTER MATCH SKIP {skip} {self.options.skip_name} failed: cannot skip to first row of match",
                *self.options.skip_at)
        return target

    # ---- FlinkCEP semantics ----------------------------------------------------------
    def _flink_run(self, out):
        """Algorithm 2: all runs advance over each row in order (start, priority); every
        configuration a consumed row leads to is one run.  The runs that accept after row p are
        reported before row p + 1 is read, once runs waiting on that row (notNext, a possessive
        loop, ``$``) know whether they accept at p too, so the order is end row, start row,
        priority."""
        closure, within = self.closure[False], self.options.within is not None
        while self.pos < self._limit():
            row = self.pos
            threads = self._report(*self._flink_release(row), out)
            if within:
                threads = [t for t in threads if self._within(t[0], row)]
            threads += [(row, s, f, c) for s, f, c in self._starting(row)]
            nxt: list = []
            accepts: list = []  # (False, position in nxt, 0, start, end, chain)
            for start, state, facts, chain in threads:
                for target, new_facts, new_chain, stored in self._moves(state, facts, chain, row):
                    for s in closure[target]:
                        if s != ACCEPT:
                            nxt.append((start, s, new_facts, new_chain))
                        elif stored:
                            accepts.append((False, len(nxt), 0, start, row, new_chain))
            self._check_threads(nxt)
            self.threads, self.pending = nxt, accepts
            self.pos = row + 1
        if self.finished:
            self._report(*self._flink_release(None), out)
            self.threads, self.pending = [], []

    def _starting(self, row) -> list:
        """The threads of a run starting at ``row`` (its waits on ``row`` resolved)."""
        threads: list = []
        for s in self.closure[row == 0][self.start_state]:
            if s == ACCEPT:
                continue  # a run stores at least one row
            if self.holds[s] is None:
                threads.append((s, self.initial_facts, None))
            else:
                self._release(s, self.initial_facts, None, row, threads, lambda f, c: False)
        return threads

    def _flink_release(self, row):
        """(runs ready to read ``row``, accepts to report now): held runs are resolved against
        ``row`` (None: the partition end); their accepts join the pending ones in run order."""
        ready: list = []
        accepts = list(self.pending)
        within = self.options.within is not None
        for index, (start, state, facts, chain) in enumerate(self.threads):
            if self.holds[state] is None:
                ready.append((start, state, facts, chain))
                continue
            released: list = []
            found: list = []
            expired = within and row is not None and not self._within(start, row)
            self._release(state, facts, chain, row, released, lambda f, c: found.append(c) or False, expired)
            if found and chain is not None:
                # a window close confirms after the matches the rows before it completed
                accepts.append((self.holds[state][0] == "expire", index, 1, start, chain[0], found[0]))
            ready += [(start, s, f, c) for s, f, c in released]
        accepts.sort(key=lambda a: a[:3])
        return ready, [a[3:] for a in accepts]

    def _report(self, threads, accepts, out) -> list:
        """Report accepting runs in run order and prune the runs by the skip strategy
        (Algorithm 2 step 3; SKIP TO FIRST/LAST as the FlinkCEP documentation defines them)."""
        skip, skip_vars = self.options.skip, self.options.skip_vars
        dead_starts: set = set()
        dead_ranges: list = []
        for start, end, chain in accepts:
            if start in dead_starts or any(lo <= start < hi for lo, hi in dead_ranges):
                continue
            rows = self._rows_of(chain)
            self.match_number += 1
            out.append(Match(self.match_number, rows[0][0], end, rows))
            if skip == "PAST LAST ROW":
                dead_ranges.append((0, end + 1))
            elif skip == "TO NEXT ROW":
                dead_starts.add(start)
            elif skip in ("TO FIRST", "TO LAST"):
                targets = [r for r, var, _ in rows if var in skip_vars]
                if targets:
                    dead_ranges.append((rows[0][0], targets[0] if skip == "TO FIRST" else targets[-1]))
        if not dead_starts and not dead_ranges:
            return threads
        return [t for t in threads
                if t[0] not in dead_starts and not any(lo <= t[0] < hi for lo, hi in dead_ranges)]
