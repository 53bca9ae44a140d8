"""Second FlinkCEP oracle: the paper's DST built state by state (Appendix A), its runs
enumerated as transition sequences (Section 5), reported as Section 6.2 says.

Independent of ``udtf.compile`` and of ``tests/oracle.py``'s derivation matcher: it builds the
data stream transducer of Fu & Wu's Appendix A for the paper's grammar -- ``spat``, ``lpat``
``B{n,m}`` / ``B{n,}`` with strict, relaxed or any inner contiguity and ``UNTIL``, the
junctions ``.`` ``->`` ``->>`` in front of an individual pattern, groups ``(X){n,m}`` /
``(X){n,}`` (strictly contiguous iterations) with ``UNTIL`` -- and enumerates, for each
substream s[i..j], the runs that read exactly s[i..j], in priority order.

What a run is (the derivation in docs/flinkcep.md, "How many times NO SKIP reports a match"):
a run is its sequence of transitions (Section 5).  Between two rows it moves through epsilon
transitions, and, as the paper's evaluation (Algorithm 2 with ``EPSCLS``) does, the states
those moves reach are the epsilon closure of the last state, each state once: a row is read
from every state of the closure, by every transition of delta that the row enables.  Two runs
are distinct when they read some row by different transitions (another source state, target
or variable), e.g. ``(B+)+`` reads a row either by B's own loop (q1 -> q1) or, after the group
loops back, by B's first take (q0 -> q1).  A run accepts when a final state is in the closure
after its last row (reported once, as the prototype's ``find_accepted``).

Two completions of Appendix A (the paper's text leaves them open), both as the paper ran its
queries on Flink ("{0,inf} is {1,inf}.optional()", Section 8.2):

* a loop with minimum 0, ``B{0,m}`` / ``B{0,}``, is the minimum-1 loop whose entry state is
  also final; rows a relaxed/any junction ignores in front of it lead to a gap state that is
  not (the bounded case of Appendix A's ``q'_{2,0}``);
* a group with minimum 0, ``(X){0,m}`` / ``(X){0,}`` (Appendix A: ``Q_X x [0]`` is empty), is
  the minimum-1 group whose start state is also final.

Exponential; for a handful of rows.  Not covered (NotImplementedError): negation, possessive
and reluctant quantifiers, alternation, anchors, relaxed group iterations, a relaxed junction
into a group.
"""
from __future__ import annotations

from udtf.pattern import ANY, RELAXED, STRICT, Repeat, Seq, Var, parse_pattern


class DST:
    """States are ints.  ``delta[q]``: the transitions that read a row from q, in priority
    order, each ``(guard, target, var)`` (var None: the row is ignored; ``guard(row, mapped)``);
    ``xi[q]``: epsilon targets in priority order; ``final``: the accepting states."""

    def __init__(self):
        self.delta: list = []
        self.xi: list = []
        self.final: set = set()

    def new(self) -> int:
        self.delta.append([])
        self.xi.append([])
        return len(self.delta) - 1

    def closure(self, q) -> list:
        """EPSCLS((q), {}) (Algorithm 1): the states epsilon-reachable from q, q first, each
        once, in priority order."""
        out, queue, seen = [], [q], set()
        while queue:
            head, queue = queue[0], queue[1:]
            out.append(head)
            seen.add(head)
            queue = list(dict.fromkeys([s for s in self.xi[head] if s not in seen] + queue))
        return out


def _any(*guards):
    guards = [g for g in guards if g is not None]
    return (lambda row, mapped: any(g(row, mapped) for g in guards)) if guards else None


class _Builder:
    def __init__(self, conds):
        self.conds, self.dst = conds, DST()

    def cond(self, var):
        return lambda row, mapped: self.conds.holds(var, row, mapped)

    def stop_of(self, node: Repeat):
        """The until condition of a loop (pattern ``UNTIL S`` or ``DEFINE B ... UNTIL``)."""
        if node.until is not None:
            return self.cond(node.until)
        if isinstance(node.body, Var) and node.body.name in self.conds.until:
            fn = self.conds.until[node.body.name]
            return lambda row, mapped: fn(row)
        return None

    def build(self, node, junction, stop):
        """(start, finals) of ``node`` entered through ``junction``; ``stop``: the until
        conditions of the enclosing loops (None: none)."""
        if isinstance(node, Var):
            return self.lpat(node.name, 1, 1, STRICT, junction, stop, None)
        if isinstance(node, Seq):
            start = finals = None
            for k, item in enumerate(node.items):
                s, f = self.build(item, junction if k == 0 else node.junctions[k - 1], stop)
                for q in finals or ():  # Appendix A, patseq theta ipat: xi(q_f1) = (xi_1(q_f1), q_20)
                    self.dst.xi[q].append(s)
                start = s if start is None else start
                finals = f
            return start, finals
        if isinstance(node, Repeat):
            if not node.greedy or node.possessive:
                raise NotImplementedError("reluctant / possessive quantifier")
            if isinstance(node.body, Var):
                return self.lpat(node.body.name, node.min, node.max, node.inner, junction, stop,
                                 self.stop_of(node))
            if junction != STRICT:
                raise NotImplementedError("relaxed junction into a group")
            return self.group(node, _any(stop, self.stop_of(node)))
        raise NotImplementedError(type(node).__name__)

    def lpat(self, var, n, m, inner, junction, outer, own):
        """``var{n,m}`` (m None: unbounded) entered through ``junction``: states q_0 .. q_k
        (k = m, or max(n, 1) when unbounded: q_k loops), gap states after ignored rows; with
        n = 0 the minimum-1 loop with q_0 final.  Every transition inside the loop is guarded
        by the until conditions (``outer``, the loop's ``own``); the junction's ignores at the
        entry only by the enclosing ones."""
        d, holds = self.dst, self.cond(var)
        inside, blocked = _any(outer, own), outer
        take = lambda r, mp: holds(r, mp) and not (inside and inside(r, mp))
        skip = lambda r, mp: not holds(r, mp) and not (inside and inside(r, mp))
        lo = max(n, 1)
        top = m if m is not None else lo
        q = [d.new() for _ in range(top + 1)]
        d.final.update(q[i] for i in range(n, top + 1))
        for i in range(1, top if m is not None else top + 1):
            target = q[min(i + 1, top)]
            if inner == STRICT:
                d.delta[q[i]].append((take, target, var))
                continue
            # between iterations: below the minimum the run waits in q_i, from the minimum on
            # in a gap state (not final: another take must follow)
            gap = q[i] if i < n else d.new()
            for state in dict.fromkeys((q[i], gap)):
                d.delta[state].append((take, target, var))
                if inner == ANY:
                    d.delta[state].append((lambda r, mp: not (inside and inside(r, mp)), gap, None))
                else:
                    d.delta[state].append((skip, gap, None))
        # the entry q_0: the first take, and the junction's ignores (into a gap state when the
        # loop may be skipped: ignoring rows in front of it commits to a take)
        d.delta[q[0]].append((take, q[1], var))
        if junction != STRICT:
            wait = q[0] if n > 0 else d.new()
            if wait != q[0]:
                d.delta[wait].append((take, q[1], var))
            free = lambda r, mp: not (blocked and blocked(r, mp))
            ignore = free if junction == ANY else (lambda r, mp: not holds(r, mp) and free(r, mp))
            for state in dict.fromkeys((q[0], wait)):
                d.delta[state].append((ignore, wait, None))
        return q[0], [s for s in q if s in d.final]

    def group(self, node: Repeat, stop):
        """``(X){n,m}``: states Q_X x [m] plus q_f; ``(X){n,}``: Q_X x [max(n, 1)], the last
        copy looping to its own start (Appendix A); minimum 0: the start is final too."""
        if node.inner != STRICT:
            raise NotImplementedError("relaxed group iterations")
        d, n, m = self.dst, node.min, node.max
        copies = [self.build(node.body, STRICT, stop) for _ in range(m if m is not None else max(n, 1))]
        k = len(copies)
        qf = d.new() if m is not None else None
        for i, (_, finals) in enumerate(copies, 1):
            for q in finals:
                if m is None and i == k:
                    d.xi[q].append(copies[k - 1][0])
                    continue
                if i < k:
                    d.xi[q].append(copies[i][0])
                if m is not None and i >= n:
                    d.xi[q].append(qf)
        finals = [qf] if m is not None else list(copies[-1][1])
        if m is not None:
            d.final.add(qf)
        start = copies[0][0]
        if n == 0:
            d.final.add(start)
            finals = finals + [start]
        return start, finals


def build(pattern, conds) -> tuple:
    """(DST, start state) of ``pattern`` (text or ``udtf.pattern`` IR)."""
    node = parse_pattern(pattern) if isinstance(pattern, str) else pattern
    b = _Builder(conds)
    start, finals = b.build(node, STRICT, None)
    return b.dst, start, set(finals)


def runs_from(dst, start, finals, i, n) -> dict:
    """{j: the accepting runs on rows i..j, in priority order} for j < n, each run a mapping
    ((row, var, False), ...).  One depth-first walk in priority order serves every j."""
    out: dict = {}
    closures: dict = {}

    def step(q, pos, mapped):
        closure = closures.get(q)
        if closure is None:
            closure = closures[q] = dst.closure(q)
        if mapped and mapped[-1][0] == pos - 1 and any(s in finals for s in closure):
            out.setdefault(pos - 1, []).append(mapped)
        if pos == n:
            return
        for s in closure:
            for guard, target, var in dst.delta[s]:
                if not guard(pos, mapped):
                    continue
                if var is None:
                    if mapped:  # a run starts with a stored row
                        step(target, pos + 1, mapped)
                else:
                    step(target, pos + 1, mapped + ((pos, var, False),))

    step(start, i, ())
    return out


def flinkcep(pattern, n, conds, skip="NO SKIP", skip_to=(), distinct=False, error_on_miss=False):
    """Section 6.2 over rows 0..n-1 (TO FIRST / TO LAST as tests/oracle.py reads the docs).
    ``distinct``: a match reported before is dropped (SEMANTICS FLINKCEP DISTINCT);
    ``error_on_miss``: a TO FIRST / TO LAST target absent from a reported match or at its
    first row ends the output with ("error", "absent" / "first")."""
    dst, start, finals = build(pattern, conds)
    by_start = [runs_from(dst, start, finals, i, n) for i in range(n)]
    out = []
    report = lambda m, j: out.append(("match", m[0][0], j, m))
    done, last, dead, seen = set(), -1, [], set()
    for j in range(n):
        for i in range(j + 1):
            if skip == "TO NEXT ROW" and i in done or skip == "PAST LAST ROW" and i <= last:
                continue
            found = by_start[i].get(j)
            if not found:
                continue
            if skip == "TO NEXT ROW":
                report(found[0], j)
                done.add(i)
            elif skip == "PAST LAST ROW":
                report(found[0], j)
                last = j
                break
            else:
                for m in found:
                    if any(lo <= i < hi for lo, hi in dead):
                        break
                    if distinct and m in seen:
                        continue
                    seen.add(m)
                    report(m, j)
                    targets = [r for r, v, _ in m if v in skip_to]
                    if skip in ("TO FIRST", "TO LAST") and error_on_miss:
                        if not targets:
                            return out + [("error", "absent")]
                        if (targets[0] if skip == "TO FIRST" else targets[-1]) == i:
                            return out + [("error", "first")]
                    if skip in ("TO FIRST", "TO LAST") and targets:
                        dead.append((i, targets[0] if skip == "TO FIRST" else targets[-1]))
    return out
