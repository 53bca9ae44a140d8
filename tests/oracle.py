"""Brute-force reference semantics for the pattern-matching engine (test oracle).

Written from the definitions, not from ``udtf.compile``'s automaton: a backtracking matcher
over the pattern IR (``udtf.pattern`` nodes) that yields derivations in preference order,
plus the outer loops that turn derivations into reported matches.  Exponential time; meant
for inputs of a handful of rows.

Rows are numbered 0..n-1.  A *mapping* is a tuple of ``(row, variable, excluded)`` in row
order.  Conditions are Python callables (see ``Conditions``), so running aggregates are
expressible: a DEFINE condition sees the rows mapped so far *including* the current one.

Results use one shape for both semantics::

    ("match", start, end, rows)      rows = ((row, var, excluded), ...); end = start - 1 when empty
    ("unmatched", row)               WITH UNMATCHED ROWS
    ("error", kind)                  a standard AFTER MATCH SKIP runtime error (kind "absent"/"first")

Standard mode (SQL:2016 R010)
-----------------------------
For each start row the match is the *first* derivation a backtracking regex engine finds:
concatenation left to right, alternation left to right, PERMUTE = the alternation of all
permutations in lexicographic order, greedy quantifiers try one more iteration before
leaving and reluctant ones the reverse.  An iteration that matches the empty sequence when
the quantifier already has its minimum stops the quantifier (ISO/IEC 19075-5 7.2.8, as
Perl/Python/.NET regexes do): the derivation continues after the quantifier right there,
at that place in the preference order.  Below the minimum an empty iteration counts.

Possessive quantifiers (``A*+``, FlinkCEP ``greedy()``, both modes): the quantifier may be
left only when it cannot iterate again or the next row of the partition (whatever the window)
cannot start another iteration: no first variable of the body holds on it, or there is none.
Anchors inside the body are not looked through (an anchored body cannot "start" on a row).
This also applies to the exit after an empty iteration: when it is blocked that derivation
dies (our decision; the engine's, and FlinkCEP has no loops with optional bodies).

FlinkCEP mode (Fu & Wu, *Formal Semantics of Apache Flink CEP*)
-----------------------------------------------------------------
For every substream s[i..j] every run of the paper's DST is enumerated as an assignment of
each row in i..j to a pattern variable ("take") or to nothing ("ignore"); the first and the
last row are taken.  Runs of one substream come out in the paper's run priority (the
lexicographic order of transitions, a consuming/ignoring transition before an epsilon one),
which for these patterns is the depth-first order below:

* a loop (``B{n,m}``, ``B+`` ...) tries to read the next row inside the loop -- take it, or,
  with relaxed/any inner contiguity, ignore it between iterations -- before leaving; rows
  ignored inside a loop must be followed by another iteration;
* a relaxed junction ``X -> Y`` ignores exactly the rows on which no first row of Y can be
  taken (skip till next match), a non-deterministic one ``X ->> Y`` may ignore any row
  (taking first); ignoring rows in front of an optional Y commits to a non-empty Y;
* every transition inside an ``UNTIL`` loop (takes and the ignores between iterations)
  requires the until condition to be false; the ignores of the junction in front of the
  loop do not;
* group iterations are strictly contiguous (the paper's grammar; ``(X)->{n,m}`` /
  ``(X)->>{n,m}`` get the same gap rule as a relaxed/any loop: our extension);
* a run is its sequence of transitions, the epsilon moves between two rows going through
  the epsilon closure, each state once (Algorithm 2, ``EPSCLS``; docs/flinkcep.md, "How many
  times NO SKIP reports a match"): a take is the transition of Appendix A that reads it,
  q_(k-1) -> q_k of its loop (an unbounded loop's states are q_0 .. q_max(n,1), the last one
  looping; a minimum-0 loop is the minimum-1 loop made optional), inside the iteration
  counters of the enclosing groups (``(X){n,}``: Q_X x [max(n, 1)], the last copy going back
  to its own start).  Derivations with the same transitions are one run: e.g.
  ``((B{0,3}){0,})`` reads a B row once, not once more after an empty iteration, while
  ``(B{0,3}){1,3}`` reads it in iteration 1, 2 or 3 -- three runs, and ``(B+)+`` reads a
  second B row by B's loop or, after the group loops back, by B's first take -- two runs;
  tests/paper_dst.py builds the DST itself and enumerates its runs;
* negation (our syntax, not in the paper): in ``X j1 ~N j2 Y`` the junction into Y is j2;
  with j1 strict (notNext) the row right after X must not satisfy N, with j1 ``->``
  (notFollowedBy) none of the rows ignored in front of Y may satisfy N (the row Y takes may).

Appendix A's case list for "junction in front of a loop" is garbled (case labels repeat,
some transitions are missing); it is read as: ``->`` adds ignore-if-not-B at the loop's
entry, ``->>`` adds take-or-ignore on B and ignore otherwise; for ``patseq (->>) B{0,inf}``
with a strict loop the missing ``q0 --not B--> q0'`` transition is assumed (without it
``->>`` could skip b rows but not others).

Minimum-0 loops follow the paper's Section 4 definition, which Flink 2.3 also implements: the
junction governs the gap before the first iteration, the inner contiguity the gaps between
iterations (``paper_min0=False``, the default).  Appendix A's construction differs
(``paper_min0=True``): in it an unbounded loop with
minimum 0, ``B{0,inf}``, has a single state q0 that is the entry, the loop and the final
state, plus a gap state q0'.  The junction in front and the inner contiguity therefore both
apply before the first iteration *and* between iterations: at q0 the contiguity is the
weaker of the two, at q0' it is the inner one (or the junction's when the loop is strict),
e.g. ``A B->*`` may ignore rows between A and the first B, and ``A -> B*`` may ignore rows
between B iterations.

Output (Section 6.2): NO SKIP = every run, ordered by end row j, then start row i, then
priority; TO NEXT ROW = per start row only its first reported run; PAST LAST ROW = at each
j the first start i after the last reported end with a run, its best run; TO FIRST/LAST v
(FlinkCEP docs) = NO SKIP order, but after reporting a match the runs starting in
[match start, first/last row of v) are discarded (nothing when v is absent).

Restrictions (NotImplementedError): reluctant quantifiers, alternation, PERMUTE,
exclusion and anchors in FlinkCEP mode (not in the paper's grammar); relaxed group loops
whose body can start empty; UNTIL on a minimum-0 loop behind a non-strict junction (the
appendix is ambiguous there); a negation must be followed by a non-optional element.
"""
from __future__ import annotations

from itertools import permutations

from udtf.pattern import (ANY, RELAXED, STRICT, Alt, Anchor, Empty, Exclude, Neg, Permute, Repeat,
                          Seq, Var, parse_pattern)

NOTHING = iter(())
_ADMIT_ALL = lambda mapped: True  # noqa: E731 - no window over the mapping


class Conditions:
    """DEFINE conditions: ``define[var](row, mapped) -> bool`` where ``mapped`` is the mapping
    so far with ``(row, var, excluded)`` of the current row appended; an undefined variable is
    TRUE.  ``until[var](row) -> bool`` is ``DEFINE var AS ... UNTIL cond``."""

    def __init__(self, define=None, until=None):
        self.define = dict(define or {})
        self.until = dict(until or {})

    def holds(self, var, row, mapped, excluded=False):
        fn = self.define.get(var)
        if fn is None:
            return True
        # the FlinkCEP oracle's mappings carry the automaton state of each take as a 4th item
        return bool(fn(row, tuple(m[:3] for m in mapped) + ((row, var, excluded),)))

    @classmethod
    def from_masks(cls, masks, until_masks=None):
        """Conditions that read only the row: ``masks[var][row]``."""
        return cls({v: (lambda row, mapped, m=m: bool(m[row])) for v, m in masks.items()},
                   {v: (lambda row, m=m: bool(m[row])) for v, m in (until_masks or {}).items()})


def _parse(pattern):
    return parse_pattern(pattern) if isinstance(pattern, str) else pattern


# ==========================================================================================
# Standard semantics
# ==========================================================================================

class _Std:
    def __init__(self, n, conds, window, admits=None):
        self.n, self.conds, self.window = n, conds, window  # window(row) -> row may be mapped
        self.admits = admits or _ADMIT_ALL  # admits(mapping with the candidate row) -> it may be

    def match(self, node, pos, mapped, excluded, cont):
        """Yield from ``cont(pos', mapped')`` for every derivation of ``node`` at ``pos``, in
        preference order."""
        if isinstance(node, Var):
            if pos < self.n and self.window(pos) and self.conds.holds(node.name, pos, mapped, excluded):
                taken = mapped + ((pos, node.name, excluded),)
                if self.admits(taken):
                    yield from cont(pos + 1, taken)
        elif isinstance(node, Empty):
            yield from cont(pos, mapped)
        elif isinstance(node, Anchor):
            if (node.kind == "^" and pos == 0) or (node.kind == "$" and pos == self.n):
                yield from cont(pos, mapped)
        elif isinstance(node, Seq):
            if any(j != STRICT for j in node.junctions) or any(isinstance(i, Neg) for i in node.items):
                raise NotImplementedError("standard oracle: only strict concatenation")
            yield from self.sequence(node.items, pos, mapped, excluded, cont)
        elif isinstance(node, Alt):
            for option in node.options:
                yield from self.match(option, pos, mapped, excluded, cont)
        elif isinstance(node, Permute):
            for order in permutations(range(len(node.items))):  # lexicographic
                yield from self.sequence([node.items[k] for k in order], pos, mapped, excluded, cont)
        elif isinstance(node, Exclude):
            yield from self.match(node.body, pos, mapped, True, cont)
        elif isinstance(node, Repeat):
            if node.inner != STRICT or node.until is not None:
                raise NotImplementedError("standard oracle: FlinkCEP loop options")
            yield from self.repeat(node, 0, pos, mapped, excluded, cont)
        else:
            raise NotImplementedError(type(node).__name__)

    def blocks_leaving(self, node, pos, mapped, excluded):
        """Possessive: the next row can start another iteration, so the loop cannot be left."""
        return node.possessive and pos < self.n and any(
            self.conds.holds(v, pos, mapped, excluded) for v in _first_std(node.body)[0])

    def sequence(self, items, pos, mapped, excluded, cont):
        if not items:
            yield from cont(pos, mapped)
            return
        rest = items[1:]
        yield from self.match(items[0], pos, mapped, excluded,
                              lambda p, m: self.sequence(rest, p, m, excluded, cont))

    def repeat(self, node, done, pos, mapped, excluded, cont):
        """``done`` iterations matched so far, the last one ending at ``pos``."""

        def after_iteration(p, m):
            if p == pos and done + 1 >= node.min:
                # empty iteration at/above the minimum: the quantifier stops (a possessive one
                # only if it may be left here; it cannot iterate again either)
                at_max = node.max is not None and done + 1 >= node.max
                return cont(p, m) if at_max or not self.blocks_leaving(node, p, m, excluded) else NOTHING
            return self.repeat(node, done + 1, p, m, excluded, cont)

        may_iterate = node.max is None or done < node.max
        may_leave = done >= node.min and not (may_iterate and self.blocks_leaving(node, pos, mapped, excluded))
        if node.greedy:
            if may_iterate:
                yield from self.match(node.body, pos, mapped, excluded, after_iteration)
            if may_leave:
                yield from cont(pos, mapped)
        else:
            if may_leave:
                yield from cont(pos, mapped)
            if may_iterate:
                yield from self.match(node.body, pos, mapped, excluded, after_iteration)


def _first_std(node):
    """(variables that can take the first row of ``node``, whether ``node`` can be passed
    without reading a row and without an anchor)."""
    if isinstance(node, Var):
        return {node.name}, False
    if isinstance(node, Empty):
        return set(), True
    if isinstance(node, Anchor):
        return set(), False
    if isinstance(node, (Seq, Permute)):
        first, passes = set(), True
        for item in node.items:
            f, p = _first_std(item)
            if isinstance(node, Permute) or passes:
                first |= f
            passes = passes and p
        return first, passes
    if isinstance(node, Alt):
        parts = [_first_std(o) for o in node.options]
        return set().union(*(f for f, _ in parts)), any(p for _, p in parts)
    if isinstance(node, Repeat):
        if node.max == 0:
            return set(), True  # {0}: never reads a row
        f, p = _first_std(node.body)
        return f, p or node.min == 0
    if isinstance(node, Exclude):
        return _first_std(node.body)
    raise NotImplementedError(type(node).__name__)


def standard(pattern, n, conds, skip="PAST LAST ROW", skip_to=(), unmatched=False, within=None,
             order=None, admits=None):
    """SQL:2016 MATCH_RECOGNIZE over rows 0..n-1 (one partition).  ``admits(mapping)``: a
    window over the whole mapping (tests/hierarchy_oracle.py's interval spans), checked at
    each take with the taken row appended, like ``within`` (not by possessive look-ahead)."""
    node = _parse(pattern)
    out = []
    start, covered = 0, -1
    while start < n:
        if within is None:
            window = lambda row: True
        else:
            window = lambda row, s=start: (order[row] is not None and order[s] is not None
                                           and order[row] - order[s] <= within)
        matcher = _Std(n, conds, window, admits)
        best = next(matcher.match(node, start, (), False, lambda p, m: iter([(p, m)])), None)
        if best is None:
            if unmatched and start > covered:
                out.append(("unmatched", start))
            start += 1
            continue
        end, rows = best[0] - 1, best[1]
        out.append(("match", start, end, rows))
        if end >= start:
            covered = max(covered, end)
        if end < start:  # after an empty match the search resumes at the next row (Trino)
            start += 1
        elif skip == "PAST LAST ROW":
            start = end + 1
        elif skip == "TO NEXT ROW":
            start += 1
        elif skip in ("TO FIRST", "TO LAST"):
            target = _skip_target(rows, start, skip, skip_to)
            if isinstance(target, tuple):
                out.append(target)
                return out
            start = target
        else:
            raise ValueError(skip)
    return out


def _skip_target(rows, start, skip, skip_to):
    """The row AFTER MATCH SKIP TO FIRST / LAST resumes at, or the standard's error."""
    targets = [r for r, v, _ in rows if v in skip_to]
    if not targets:
        return "error", "absent"
    target = targets[0] if skip == "TO FIRST" else targets[-1]
    return ("error", "first") if target == start else target


def window_standard(pattern, n, conds, frame_end=None, seek=False, skip="PAST LAST ROW", skip_to=()):
    """Row pattern recognition in a window (SQL:2016 R020) over rows 0..n-1, as Trino's
    ``PatternRecognitionPartition``: every row r gets ``("match", r, start, end, rows)`` or
    ``("unmatched", r)``.  A row skipped by an earlier match is unmatched; otherwise its match
    is sought within its frame r .. r + ``frame_end`` (None: the partition's end) from r, and
    with ``seek`` from each later row of the frame until one matches."""
    node = _parse(pattern)
    out, skipped = [], -1
    for r in range(n):
        if r <= skipped:
            out.append(("unmatched", r))
            continue
        hi = n if frame_end is None else min(n, r + frame_end + 1)
        matcher = _Std(n, conds, lambda row, hi=hi: row < hi)
        for start in range(r, hi if seek else r + 1):
            best = next(matcher.match(node, start, (), False, lambda p, m: iter([(p, m)])), None)
            if best is not None:
                break
        if best is None:
            out.append(("unmatched", r))
            skipped = r
            continue
        end, rows = best[0] - 1, best[1]
        out.append(("match", r, start, end, rows))
        if end < start or skip == "TO NEXT ROW":
            skipped = r
        elif skip == "PAST LAST ROW":
            skipped = end
        else:
            target = _skip_target(rows, start, skip, skip_to)
            if isinstance(target, tuple):
                out.append(target)
                return out
            skipped = target - 1
    return out


# ==========================================================================================
# FlinkCEP semantics
# ==========================================================================================

_STRENGTH = {STRICT: 0, RELAXED: 1, ANY: 2}


def nullable(node) -> bool:
    if isinstance(node, Var):
        return False
    if isinstance(node, Repeat):
        return node.min == 0 or nullable(node.body)
    if isinstance(node, Seq):
        return all(nullable(i) for i in node.items if not isinstance(i, Neg))
    raise NotImplementedError(f"FlinkCEP oracle: {type(node).__name__}")


def first_vars(node) -> list:
    """Variables that can take the first row of ``node``."""
    if isinstance(node, Var):
        return [node.name]
    if isinstance(node, Repeat):
        return first_vars(node.body) if node.max != 0 else []
    if isinstance(node, Seq):
        out = []
        for item in node.items:
            if isinstance(item, Neg):
                continue
            out += first_vars(item)
            if not nullable(item):
                break
        return out
    raise NotImplementedError(f"FlinkCEP oracle: {type(node).__name__}")


class _Flink:
    """Runs over the substream rows i..j (``self.end`` = j + 1) of a partition of ``n`` rows."""

    def __init__(self, n, end, conds, paper_min0, admits=None):
        self.n, self.end, self.conds, self.paper_min0 = n, end, conds, paper_min0
        self.admits = admits or _ADMIT_ALL

    # ---- helpers --------------------------------------------------------------------------
    def blocked(self, stops, row, mapped) -> bool:
        return any(stop(row, mapped) for stop in stops)

    def until_of(self, node: Repeat):
        """The stop condition of a loop: ``B+ UNTIL C`` (C's DEFINE) or ``DEFINE B ... UNTIL``."""
        if node.until is not None:
            if node.max is not None:
                raise NotImplementedError("UNTIL on a bounded loop")
            return [lambda row, mapped, c=node.until: self.conds.holds(c, row, mapped)]
        if isinstance(node.body, Var) and node.body.name in self.conds.until:
            fn = self.conds.until[node.body.name]
            return [lambda row, mapped: fn(row)]
        return []

    def may_leave(self, node: Repeat, done, row, mapped) -> bool:
        """A possessive loop (``greedy()``) is left only when the next row of the partition
        cannot start another iteration."""
        if not node.possessive or (node.max is not None and done >= node.max):
            return True
        return row >= self.n or not any(self.conds.holds(v, row, mapped) for v in first_vars(node.body))

    def take(self, var, row, mapped, stops, state):
        """Mapping after taking ``row`` into ``var`` (reaching automaton ``state``), or None
        when the transition is disabled."""
        if row >= self.end or self.blocked(stops, row, mapped) or not self.conds.holds(var, row, mapped):
            return None
        taken = mapped + ((row, var, False, state),)
        return taken if self.admits(tuple(m[:3] for m in taken)) else None

    def may_ignore(self, row, mapped, stops) -> bool:
        # a run starts with a take; the last row of the substream must be taken too, which the
        # final check enforces
        return row < self.end and bool(mapped) and not self.blocked(stops, row, mapped)

    # ---- elements -------------------------------------------------------------------------
    def element(self, node, pos, mapped, stops, cont, path):
        """``node`` entered strictly at ``pos`` (its first transition reads row ``pos``); use
        ``enter``, which also handles the paper's minimum-0 loops.  ``path``: the iteration
        counters of the enclosing loops (part of the automaton state of every take)."""
        if isinstance(node, Var):
            m = self.take(node.name, pos, mapped, stops, (id(node), path))
            if m is not None:
                yield from cont(pos + 1, m)
        elif isinstance(node, Seq):
            yield from self.sequence(node, pos, mapped, stops, cont, path)
        elif isinstance(node, Repeat):
            if not node.greedy:
                raise NotImplementedError("reluctant quantifier in FlinkCEP mode")
            if isinstance(node.body, Var):
                yield from self.loop(node, pos, mapped, stops, cont, path)
            else:
                yield from self.group(node, pos, mapped, stops, cont, path)
        else:
            raise NotImplementedError(f"FlinkCEP oracle: {type(node).__name__}")

    def enter(self, node, junction, pos, mapped, stops, cont, path, not_next=None, not_between=None):
        """``node`` reached through ``junction`` from the element before it.  ``stops`` are the
        enclosing until conditions (the junction's own ignores are outside ``node``)."""
        if not_next is not None:
            # notNext: the row right after the previous element must not satisfy the negation
            if pos < self.n and self.conds.holds(not_next, pos, mapped):
                return
        if (self.paper_min0 and isinstance(node, Repeat) and isinstance(node.body, Var)
                and node.min == 0 and node.max is None):
            if not_between is not None and junction != STRICT:
                raise NotImplementedError("notFollowedBy in front of a minimum-0 loop")
            yield from self.min0_loop(node, junction, pos, mapped, stops, cont, path)
            return
        if junction == STRICT:
            yield from self.element(node, pos, mapped, stops, cont, path)
            return
        if isinstance(node, Repeat) and not isinstance(node.body, Var) and nullable(_first_item(node.body)):
            raise NotImplementedError("non-strict junction into a group that can start empty")
        yield from self.wait(node, junction, pos, mapped, stops, cont, path, not_between, first=True)

    def wait(self, node, junction, pos, mapped, stops, cont, path, not_between, first):
        """Skip-till-next (RELAXED) / skip-till-any (ANY) in front of ``node``."""
        if pos < self.end:
            can = any(self.conds.holds(v, pos, mapped) for v in first_vars(node))
            if can:  # derivations of node whose first transition takes row pos
                yield from self.element(node, pos, mapped, stops,
                                        lambda p, m: cont(p, m) if p > pos else NOTHING, path)
            if (junction == ANY or not can) and self.may_ignore(pos, mapped, stops) and (
                    not_between is None or not self.conds.holds(not_between, pos, mapped)):
                yield from self.wait(node, junction, pos + 1, mapped, stops, cont, path, not_between, False)
        if first and nullable(node):  # epsilon past an optional node: no rows ignored for it
            yield from self.element(node, pos, mapped, stops, lambda p, m: cont(p, m) if p == pos else NOTHING,
                                    path)

    def sequence(self, node: Seq, pos, mapped, stops, cont, path):
        # attach each negation to the element after it: X j1 ~N j2 Y
        elements, pending = [], None
        for k, item in enumerate(node.items):
            junction = node.junctions[k - 1] if k else STRICT
            if isinstance(item, Neg):
                pending = (item.var.name, junction)
                continue
            elements.append((item, junction, pending))
            pending = None
        if pending is not None:
            raise NotImplementedError("trailing negation")

        def step(k, p, m):
            if k == len(elements):
                return cont(p, m)
            item, junction, negation = elements[k]
            nxt = lambda p2, m2: step(k + 1, p2, m2)
            if negation is not None and nullable(item):
                raise NotImplementedError("negation in front of an optional element")
            not_next = negation[0] if negation and negation[1] == STRICT else None
            not_between = negation[0] if negation and negation[1] == RELAXED else None
            return self.enter(item, junction, p, m, stops, nxt, path, not_next, not_between)

        yield from step(0, pos, mapped)

    def loop(self, node: Repeat, pos, mapped, stops, cont, path):
        """``B{n,m}`` entered strictly at pos: the first iteration takes row pos or the loop is
        skipped (minimum 0).  Inner contiguity governs the rows between iterations."""
        var, stops = node.body.name, stops + self.until_of(node)

        top = node.max if node.max is not None else max(node.min, 1)

        def reached(done):  # the transition q_(done-1) -> q_done (q_top loops when unbounded)
            return (id(node), path, min(done - 1, top), min(done, top))

        def state(done, p, m, gap):
            # gap: rows were ignored since the last take (the paper's q'_i): no exit
            if node.max is None or done < node.max:
                if done == 0:
                    m2 = self.take(var, p, m, stops, reached(1))
                    if m2 is not None:
                        yield from state(1, p + 1, m2, False)
                else:
                    holds = p < self.end and self.conds.holds(var, p, m)
                    m2 = self.take(var, p, m, stops, reached(done + 1))
                    if m2 is not None:
                        yield from state(done + 1, p + 1, m2, False)
                    if (node.inner == ANY or (node.inner == RELAXED and not holds)) and \
                            self.may_ignore(p, m, stops):
                        yield from state(done, p + 1, m, True)
            if not gap and done >= node.min and self.may_leave(node, done, p, m):
                yield from cont(p, m)

        yield from state(0, pos, mapped, False)

    def min0_loop(self, node: Repeat, junction, pos, mapped, stops, cont, path):
        """Appendix A's ``B{0,inf}`` after junction theta: states q0 (final) and q0' (gap)."""
        var = node.body.name
        own = self.until_of(node)
        if own and junction != STRICT:
            raise NotImplementedError("UNTIL on a minimum-0 loop behind a non-strict junction")
        stops = stops + own
        inner = node.inner
        at_q0 = max(junction, inner, key=_STRENGTH.get)
        at_gap = inner if inner != STRICT else junction

        def read(p, m, kind):
            holds = p < self.end and self.conds.holds(var, p, m)
            m2 = self.take(var, p, m, stops, (id(node), path))
            if m2 is not None:
                yield from q0(p + 1, m2)
            if (kind == ANY or (kind == RELAXED and not holds)) and self.may_ignore(p, m, stops):
                yield from gap(p + 1, m)

        def q0(p, m):
            yield from read(p, m, at_q0)
            if self.may_leave(node, 0, p, m):
                yield from cont(p, m)  # epsilon: leave the loop

        def gap(p, m):
            yield from read(p, m, at_gap)

        yield from q0(pos, mapped)

    def group(self, node: Repeat, pos, mapped, stops, cont, path):
        """``(X){n,m}``: iterations strictly contiguous (or relaxed/any: extension).

        Appendix A's states are the body's, paired with the iteration number, which an
        unbounded loop caps at max(n, 1): ``(X){n,inf}`` has states Q_X x [n], and the loop
        goes from a final state (q, n) back to (q_X0, n).  So, run by run (a run being its
        takes with the states they reach): an iteration that reads no row once the count is
        capped ends in the state it started from, from which the run may only leave; below the
        cap it moves on to the next counter, which is a run of its own.  Minimum 0 (left open by the paper): the
        group may also be passed without an iteration."""
        if node.inner != STRICT and nullable(_first_item(node.body)):
            raise NotImplementedError("relaxed group loop whose body can start empty")
        stops = stops + self.until_of(node)
        cap = node.max if node.max is not None else max(node.min, 1)

        def iteration(done, p, m):
            if node.max is None or done < node.max:
                inner = path + (min(done + 1, cap),)

                def nxt(p2, m2):
                    if p2 == p and node.max is None and done + 1 >= cap:
                        # an empty iteration at the cap ends in the state it started from: the
                        # run may leave from there, but another iteration would repeat this one
                        return cont(p2, m2) if done + 1 >= node.min and self.may_leave(node, done + 1, p2, m2) \
                            else NOTHING
                    return iteration(done + 1, p2, m2)

                yield from self.enter(node.body, STRICT if done == 0 else node.inner, p, m, stops, nxt, inner)
            if done >= node.min and self.may_leave(node, done, p, m):
                yield from cont(p, m)

        yield from iteration(0, pos, mapped)


def _first_item(node):
    if isinstance(node, Seq):
        return node.items[0]
    return node


def flink_runs(pattern, n, conds, i, j, paper_min0=False, admits=None):
    """Accepting runs on the substream rows i..j, in priority order (mappings)."""
    node = _parse(pattern)
    ctx = _Flink(n, j + 1, conds, paper_min0, admits)

    def final(p, m):
        if p == j + 1 and m and m[0][0] == i and m[-1][0] == j:
            yield m

    runs = dict.fromkeys(ctx.enter(node, STRICT, i, (), [], final, ()))  # one per run, in priority order
    return [tuple(m[:3] for m in run) for run in runs]


def flinkcep(pattern, n, conds, skip="NO SKIP", skip_to=(), within=None, order=None, paper_min0=False,
             distinct=False, error_on_miss=False, admits=None):
    """FlinkCEP query result (Section 6.2) over rows 0..n-1.  ``distinct`` (SEMANTICS FLINKCEP
    DISTINCT): a match reported before is not reported again (SKIP TO NEXT ROW and PAST LAST
    ROW never report one twice); ``admits``: as ``standard``'s, checked at each take;
    ``error_on_miss`` (SKIP TO ...
    ERROR ON MISS): a target absent from the match or at its first row ends the result with
    the standard's ("error", kind)."""
    node = _parse(pattern)
    out = []
    seen = set()

    def runs(i, j):
        if within is not None:
            if order[i] is None or order[j] is None or order[j] - order[i] > within:
                return []
        return flink_runs(node, n, conds, i, j, paper_min0, admits)

    def report(m, j):
        out.append(("match", m[0][0], j, m))
        seen.add(m)

    if skip == "NO SKIP":
        for j in range(n):
            for i in range(j + 1):
                for m in runs(i, j):
                    if m not in seen or not distinct:
                        report(m, j)
    elif skip == "TO NEXT ROW":
        done = set()
        for j in range(n):
            for i in range(j + 1):
                if i in done:
                    continue
                found = runs(i, j)
                if found:
                    report(found[0], j)
                    done.add(i)
    elif skip == "PAST LAST ROW":
        last = -1
        for j in range(n):
            for i in range(last + 1, j + 1):
                found = runs(i, j)
                if found:
                    report(found[0], j)
                    last = j
                    break
    elif skip in ("TO FIRST", "TO LAST"):
        dead = []  # [lo, hi) ranges of discarded start rows
        for j in range(n):
            for i in range(j + 1):
                for m in runs(i, j):
                    if any(lo <= i < hi for lo, hi in dead):
                        break
                    if m in seen and distinct:
                        continue
                    report(m, j)
                    targets = [r for r, v, _ in m if v in skip_to]
                    if error_on_miss and not targets:
                        return out + [("error", "absent")]
                    if targets:
                        target = targets[0] if skip == "TO FIRST" else targets[-1]
                        if error_on_miss and target == i:
                            return out + [("error", "first")]
                        dead.append((i, target))
    else:
        raise ValueError(skip)
    return out
