"""Pattern IR -> DST program (``udtf.program``).

Construction follows Appendix A of the DST paper in continuation-passing style (each element
is built in front of the state that follows it).  Preference: a greedy loop tries another
iteration before leaving, a reluctant one the reverse; alternation and PERMUTE left to right;
consuming transitions before ignoring ones.  Relaxed contiguity (``->``, ``->>`` and relaxed
loops) is a wait state holding the next element's first transitions followed by an ignore
transition (``->``: only when none of them holds; ``->>``: always).
"""
from __future__ import annotations

import itertools

from .errors import MatchRecognizeError
from .pattern import (RELAXED, STRICT, Alt, Anchor, Empty, Exclude, Neg, Permute, Repeat,
                      Seq, Var)
from .program import (Def, Kind, Not, Program, SeqItem, State, Transition, Until, all_of,
                      some_of)

MAX_STATES = 200_000
DEAD = State(Kind.CONSUME)  # a state no row leaves


class _Builder:
    def __init__(self, var_index: dict, untils: set, within: bool, pos):
        self.var_index = var_index
        self.untils = untils  # variables with a DEFINE ... UNTIL condition
        self.within = within
        self.at = pos  # where a too large automaton is reported: the innermost quantifier
        self.states: list = []
        self.accept = self.new(State(Kind.ACCEPT))

    def new(self, state: State) -> int:
        if len(self.states) >= MAX_STATES:
            raise MatchRecognizeError(f"PATTERN is too large (more than {MAX_STATES} automaton states);"
                                      " reduce the bounded quantifiers", *self.at)
        self.states.append(state)
        return len(self.states) - 1

    # ctx: (excluded, stop, dead)
    def build(self, node, cont: int, ctx) -> int:
        excluded, stop, dead = ctx
        if isinstance(node, Var):
            if dead:
                return self.new(DEAD)
            var = self.var_index[node.name]
            return self.new(State(Kind.CONSUME, transitions=(Transition(Def(var), stop, var, excluded, cont),)))
        if isinstance(node, Empty):
            return cont
        if isinstance(node, Anchor):
            return self.new(State(Kind.BOL if node.kind == "^" else Kind.EOL, (cont,)))
        if isinstance(node, Alt):
            return self.new(State(Kind.SPLIT, tuple(self.build(o, cont, ctx) for o in node.options)))
        if isinstance(node, Permute):
            orders = itertools.permutations(node.items)
            options = tuple(Seq(items, (STRICT,) * (len(items) - 1), node.pos) for items in orders)
            return self.build(Alt(options, node.pos), cont, ctx)
        if isinstance(node, Exclude):
            return self.build(node.body, cont, (True, stop, dead))
        if isinstance(node, Seq):
            return self._seq(node, cont, ctx)
        if isinstance(node, Repeat):
            outer, self.at = self.at, node.pos
            try:
                return self._repeat(node, cont, ctx)
            finally:
                self.at = outer
        if isinstance(node, Neg):
            raise MatchRecognizeError("a negated variable must stand inside a sequence", *node.pos)
        raise MatchRecognizeError(f"unsupported pattern element {type(node).__name__}", *node.pos)

    def _seq(self, node: Seq, cont: int, ctx) -> int:
        # attach each negation to the element after it: X j1 ~N j2 Y  ->  Y entered by j2, guarded by N
        elements = []  # (item, junction_before, negation) ; negation = (var, junction, pos) or None
        pending = None
        for k, item in enumerate(node.items):
            junction = node.junctions[k - 1] if k else STRICT
            if isinstance(item, Neg):
                pending = (self.var_index[item.var.name], junction, item.pos)
                continue
            elements.append((item, junction, pending))
            pending = None
        nxt = cont
        if pending is not None and pending[1] == STRICT:  # trailing notNext
            nxt = self.new(State(Kind.PEEK, (cont,), guard=Not(Def(pending[0]))))
        elif pending is not None:  # trailing notFollowedBy: no such row until the window closes
            if cont != self.accept or not self.within:
                raise MatchRecognizeError("'-> ~var' (notFollowedBy) can end only the whole pattern, and "
                                          "only with WITHIN (the match is confirmed when the window "
                                          "closes)", *pending[2])
            expire = self.new(State(Kind.EXPIRE, (cont,)))
            nxt = self.new(State(Kind.SPLIT, (expire,)))
            wait = self.new(State(Kind.CONSUME, transitions=(
                Transition(Not(Def(pending[0])), ctx[1], -1, False, nxt),)))
            self.states[nxt] = State(Kind.SPLIT, (expire, wait))
        for k in range(len(elements) - 1, -1, -1):
            item, junction, negation = elements[k]
            if k == 0:
                nxt = self.build(item, nxt, ctx)
            else:
                nxt = self._enter(item, junction, nxt, ctx, negation)
        return nxt

    def _enter(self, item, junction, cont: int, ctx, negation=None, start: int | None = None) -> int:
        """Entry of ``item`` reached through ``junction`` from the element before it; a gap
        leads into ``start`` (``item`` built towards ``cont``) when given, else into a new copy."""
        excluded, stop, dead = ctx
        not_next = negation is not None and negation[1] == STRICT
        not_between = Not(Def(negation[0])) if negation and negation[1] == RELAXED else None
        if junction == STRICT or dead:
            entry = self.build(item, cont, ctx)
        else:
            if start is None:
                start = self.build(item, cont, ctx)
            empty = self.build(item, cont, (excluded, stop, True))
            takes = self._first_transitions(start, cont)
            if junction == RELAXED:
                holds = some_of(*(t.guard for t in takes))
                ignore = all_of(Not(holds) if holds else None, not_between)
            else:
                ignore = all_of(not_between)
            wait = self.new(DEAD)
            self.states[wait] = State(Kind.CONSUME, transitions=(*takes, Transition(ignore, stop, -1, False, wait)))
            entry = wait if self.states[empty] == DEAD else self.new(State(Kind.SPLIT, (wait, empty)))
        if not_next:
            entry = self.new(State(Kind.PEEK, (entry,), guard=Not(Def(negation[0]))))
        return entry

    def _first_transitions(self, start: int, stop_at: int) -> list:
        """Consuming transitions reachable from ``start`` by epsilon moves, in priority order."""
        found, seen = [], set()

        def walk(index: int, extra):
            if index in seen or index == stop_at:
                return
            seen.add(index)
            state = self.states[index]
            if state.kind is Kind.SPLIT:
                for target in state.targets:
                    walk(target, extra)
            elif state.kind is Kind.CONSUME:
                found.extend(t._replace(guard=all_of(extra, t.guard)) for t in state.transitions)
            elif state.kind is Kind.PEEK:
                walk(state.target, all_of(extra, state.guard))
            # bol / eol / expire / accept cannot precede a row read after a gap

        walk(start, None)
        return found

    def _repeat(self, node: Repeat, cont: int, ctx) -> int:
        excluded, stop, dead = ctx
        if node.until is not None:
            stop = some_of(stop, Def(self.var_index[node.until]))
        elif isinstance(node.body, Var) and node.body.name in self.untils:
            stop = some_of(stop, Until(self.var_index[node.body.name]))
        inner = (excluded, stop, dead)

        def iteration(k: int, nxt: int) -> int:
            # the first iteration is entered like the element itself; later ones through the
            # contiguity between iterations
            if k == 1:
                return self.build(node.body, nxt, inner)
            return self._enter(node.body, node.inner, nxt, inner)

        # a possessive loop leaves only when the next row cannot start another iteration; in a
        # copy built for empty paths only, the body's guards come from a live copy (``probe``)
        probe = self.build(node.body, cont, (excluded, stop, False)) if dead and node.possessive else None

        def choice(take: int, leave: int, loop: int | None = None, again: int | None = None) -> int:
            if node.possessive:
                source = take if probe is None else probe
                holds = some_of(*(t.guard for t in self._first_transitions(source, leave) if t.var >= 0))
                if holds is not None:
                    leave = self.new(State(Kind.PEEK, (leave,), guard=Not(holds)))
            targets = (take, leave) if node.greedy else (leave, take)
            # a choice names its exit, and where its iteration's body leads (``again``; a loop's
            # leads back to the loop): an iteration that matched no row ends the quantifier
            if loop is None:
                return self.new(State(Kind.SPLIT, targets, exit=leave, again=again))
            self.states[loop] = State(Kind.SPLIT, targets, exit=leave)
            return loop

        if node.max is None:
            # Appendix A: an individual pattern's first max(n, 1) takes are transitions of
            # their own (q_0 -> q_1 ... -> q_n) and later ones its loop (q_n -> q_n); a group's
            # iterations from the max(n, 1)-th on run through one copy of its body (Q_X x [n]),
            # so an iteration that reads no row leads back to states the run is already in.
            # Minimum 0 is the minimum-1 loop made optional.
            shared = max(node.min, 1) + isinstance(node.body, Var)
            loop = self.new(State(Kind.SPLIT))
            if node.inner == STRICT or shared > 1:
                body = iteration(shared, loop)  # entered as every later iteration is
                choice(body, cont, loop)
                first = loop if shared - 1 >= node.min else body
            else:  # the first iteration is entered without the gap later ones may skip; after
                # its entry it runs through the same states as they do
                body = iteration(1, loop)
                choice(self._enter(node.body, node.inner, loop, inner, start=body), cont, loop)
                return choice(body, cont, again=loop) if node.min == 0 else body
            for k in range(shared - 1, 0, -1):
                taken = iteration(k, first)
                first = choice(taken, cont, again=first) if k - 1 >= node.min else taken
            return first
        nxt = cont
        for k in range(node.max, node.min, -1):
            nxt = choice(iteration(k, nxt), cont, again=nxt)
        for k in range(node.min, 0, -1):
            nxt = iteration(k, nxt)
        return nxt


def flat_sequence(node, var_index: dict) -> tuple | None:
    """The ``SeqItem``s of ``node`` when it is a strict sequence of (quantified) variables
    with minimum >= 1, else None."""
    items = node.items if isinstance(node, Seq) else (node,)
    if isinstance(node, Seq) and any(j != STRICT for j in node.junctions):
        return None
    sequence = []
    for item in items:
        if isinstance(item, Var):
            sequence.append(SeqItem(var_index[item.name], 1, 1, True))
        elif (isinstance(item, Repeat) and isinstance(item.body, Var) and item.min >= 1
              and item.inner == STRICT and item.until is None and not item.possessive):
            sequence.append(SeqItem(var_index[item.body.name], item.min, item.max, item.greedy))
        else:
            return None
    return tuple(sequence)


def compile_pattern(node, var_names, untils=(), within: bool = False) -> Program:
    """Compile pattern IR into a DST ``Program``.

    ``var_names`` fixes the variable indexes (every variable in the pattern must be listed);
    ``untils`` names the variables that carry a ``DEFINE v AS ... UNTIL ...`` stop condition;
    ``within`` says whether the query has a WITHIN window.
    """
    index = {name: i for i, name in enumerate(var_names)}
    builder = _Builder(index, set(untils), within, node.pos)
    start = builder.build(node, builder.accept, (False, None, False))
    sequence = flat_sequence(node, index) if not untils else None
    return Program(tuple(builder.states), start, tuple(var_names), sequence)
