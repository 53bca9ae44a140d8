"""Pattern IR -> data stream transducer (DST): a small prioritized instruction set.

States (plain JSON lists, index = state id)::

    ["split", [t1, t2, ...]]            ordered epsilon transitions (t1 preferred)
    ["split", [t1, t2], exit]           the same for an unbounded loop, naming its exit
    ["consume", [[guard, stop, var, excluded, target], ...]]
                                        ordered transitions reading one row; var -1 = the row
                                        is ignored (relaxed contiguity), otherwise stored in var
    ["bol", target]                     epsilon, only at the partition start      (^)
    ["eol", target]                     epsilon, only at the partition end        ($)
    ["peek", guard, target]             epsilon, only if ``guard`` holds on the next row or
                                        there is no next row of the run (notNext)
    ["expire", target]                  epsilon, only once the run has no next row: the next
                                        row lies beyond WITHIN or the partition ended (a
                                        trailing notFollowedBy)
    ["accept"]

Guards are formulas over the DEFINE conditions: ["true"], ["def", v] (v's condition, the row
tentatively mapped to v), ["until", v] (v's UNTIL condition, the row not mapped),
["not", g], ["and", g...], ["or", g...].  A transition fires when ``guard`` is true and
``stop`` (the enclosing UNTIL conditions, or None) is not.

``sequence`` describes a strict sequence of quantified variables (see ``runs``), or is None.

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

MAX_STATES = 200_000
TRUE = ["true"]


def _and(*guards):
    parts = [g for g in guards if g is not None and g != TRUE]
    return TRUE if not parts else parts[0] if len(parts) == 1 else ["and", *parts]


def _or(*guards):
    parts = [g for g in guards if g is not None]
    return None if not parts else parts[0] if len(parts) == 1 else ["or", *parts]


class _Builder:
    def __init__(self, var_index: dict, untils: set, within: bool):
        self.var_index = var_index
        self.untils = untils  # variables with a DEFINE ... UNTIL condition
        self.within = within
        self.states: list = []
        self.accept = self.new(["accept"])

    def new(self, state) -> int:
        if len(self.states) >= MAX_STATES:
            raise MatchRecognizeError(f"PATTERN is too large (more than {MAX_STATES} automaton states);"
                                      " reduce the bounded quantifiers")
        self.states.append(state)
        return len(self.states) - 1

    # ctx: (excluded, stop, dead)
    def build(self, node, cont: int, ctx) -> int:
        excluded, stop, dead = ctx
        if isinstance(node, Var):
            if dead:
                return self.new(["consume", []])
            var = self.var_index[node.name]
            return self.new(["consume", [[["def", var], stop, var, excluded, cont]]])
        if isinstance(node, Empty):
            return cont
        if isinstance(node, Anchor):
            return self.new(["bol" if node.kind == "^" else "eol", cont])
        if isinstance(node, Alt):
            return self.new(["split", [self.build(o, cont, ctx) for o in node.options]])
        if isinstance(node, Permute):
            orders = itertools.permutations(node.items)
            options = tuple(Seq(items, (STRICT,) * (len(items) - 1), node.pos) for items in orders)
            return self.build(Alt(options, node.pos), cont, ctx)
        if isinstance(node, Exclude):
            return self.build(node.body, cont, (True, stop, dead))
        if isinstance(node, Seq):
            return self._seq(node, cont, ctx)
        if isinstance(node, Repeat):
            return self._repeat(node, cont, ctx)
        if isinstance(node, Neg):
            raise MatchRecognizeError("a negated variable must stand inside a sequence", *node.pos)
        raise MatchRecognizeError(f"unsupported pattern element {type(node).__name__}")

    def _seq(self, node: Seq, cont: int, ctx) -> int:
        # attach each negation to the element after it: X j1 ~N j2 Y  ->  Y entered by j2, guarded by N
        elements = []  # (item, junction_before, negation) ; negation = (var, kind) or None
        pending = None
        for k, item in enumerate(node.items):
            junction = node.junctions[k - 1] if k else STRICT
            if isinstance(item, Neg):
                pending = (self.var_index[item.var.name], junction, item.pos)
                continue
            if pending is not None:
                elements.append((item, junction, pending))
                pending = None
            else:
                elements.append((item, junction, None))
        nxt = cont
        if pending is not None and pending[1] == STRICT:  # trailing notNext
            nxt = self.new(["peek", ["not", ["def", pending[0]]], cont])
        elif pending is not None:  # trailing notFollowedBy: no such row until the window closes
            if cont != self.accept or not self.within:
                raise MatchRecognizeError("'-> ~var' (notFollowedBy) can end only the whole pattern, and "
                                          "only with WITHIN (the match is confirmed when the window "
                                          "closes)", *pending[2])
            nxt = self.new(["split", [self.new(["expire", cont])]])
            wait = self.new(["consume", [[["not", ["def", pending[0]]], ctx[1], -1, False, nxt]]])
            self.states[nxt][1].append(wait)
        for k in range(len(elements) - 1, -1, -1):
            item, junction, negation = elements[k]
            if k == 0:
                nxt = self.build(item, nxt, ctx)
            else:
                nxt = self._enter(item, junction, nxt, ctx, negation)
        return nxt

    def _enter(self, item, junction: str, cont: int, ctx, negation=None) -> int:
        """Entry of ``item`` reached through ``junction`` from the element before it."""
        excluded, stop, dead = ctx
        not_next = negation is not None and negation[1] == STRICT
        not_between = ["not", ["def", negation[0]]] if negation and negation[1] == RELAXED else None
        if junction == STRICT or dead:
            entry = self.build(item, cont, ctx)
        else:
            start = self.build(item, cont, ctx)
            empty = self.build(item, cont, (excluded, stop, True))
            takes = self._first_transitions(start, cont)
            if junction == RELAXED:
                holds = _or(*(t[0] for t in takes))
                ignore = _and(["not", holds] if holds else None, not_between)
            else:
                ignore = _and(not_between)
            wait = self.new(["consume", []])
            self.states[wait][1] = takes + [[ignore, stop, -1, False, wait]]
            entry = wait if self.states[empty] == ["consume", []] else self.new(["split", [wait, empty]])
        if not_next:
            entry = self.new(["peek", ["not", ["def", negation[0]]], entry])
        return entry

    def _first_transitions(self, start: int, stop_at: int) -> list:
        """Consuming transitions reachable from ``start`` by epsilon moves, in priority order."""
        found, seen = [], set()

        def walk(state: int, extra):
            if state in seen or state == stop_at:
                return
            seen.add(state)
            kind = self.states[state][0]
            if kind == "split":
                for target in self.states[state][1]:
                    walk(target, extra)
            elif kind == "consume":
                for guard, stop, var, excluded, target in self.states[state][1]:
                    found.append([_and(extra, guard), stop, var, excluded, target])
            elif kind == "peek":
                walk(self.states[state][2], _and(extra, self.states[state][1]))
            # bol / eol / expire / accept cannot precede a row read after a gap

        walk(start, None)
        return found

    def _repeat(self, node: Repeat, cont: int, ctx) -> int:
        excluded, stop, dead = ctx
        if node.until is not None:
            stop = _or(stop, ["def", self.var_index[node.until]])
        elif isinstance(node.body, Var) and node.body.name in self.untils:
            stop = _or(stop, ["until", self.var_index[node.body.name]])
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

        def choice(take: int, leave: int, loop: int | None = None) -> int:
            if node.possessive:
                source = take if probe is None else probe
                holds = _or(*(t[0] for t in self._first_transitions(source, leave) if t[2] >= 0))
                if holds is not None:
                    leave = self.new(["peek", ["not", holds], leave])
            state = ["split", [take, leave] if node.greedy else [leave, take]]
            if loop is None:
                return self.new(state)
            # a loop state also names its exit: an iteration that matched no row ends the loop
            self.states[loop] = state + [leave]
            return loop

        if node.max is None:
            loop = self.new(["split", []])
            choice(iteration(max(node.min, 1) + 1, loop), cont, loop)
            if node.min == 0:
                return choice(iteration(1, loop), cont)
            nxt = loop
            for k in range(node.min, 0, -1):
                nxt = iteration(k, nxt)
            return nxt
        nxt = cont
        for k in range(node.max, node.min, -1):
            nxt = choice(iteration(k, nxt), cont)
        for k in range(node.min, 0, -1):
            nxt = iteration(k, nxt)
        return nxt


def compile_pattern(node, var_names: list, untils=(), within: bool = False) -> dict:
    """Compile pattern IR into a DST program (JSON-serializable dict).

    ``var_names`` fixes the variable indexes (every variable in the pattern must be listed);
    ``untils`` names the variables that carry a ``DEFINE v AS ... UNTIL ...`` stop condition;
    ``within`` says whether the query has a WITHIN window.
    """
    from .runs import flat_sequence

    index = {name: i for i, name in enumerate(var_names)}
    builder = _Builder(index, set(untils), within)
    start = builder.build(node, builder.accept, (False, None, False))
    sequence = flat_sequence(node, index) if not untils else None
    return {"states": builder.states, "start": start, "vars": list(var_names), "sequence": sequence}
