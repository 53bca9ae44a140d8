"""Render the compiled automaton (DST) of each MATCH_RECOGNIZE: text, Graphviz or Mermaid.

Edges are numbered by priority within their source state (1 = preferred); a consuming edge
is labelled with its guard and what the row becomes (``-> V`` stored in V, ``ignore`` skipped
by relaxed contiguity), epsilon edges with ``ε``.
"""
from __future__ import annotations

from udtf.compile import compile_pattern
from udtf.pattern import parse_pattern, variables

from .analyze import variable_name
from .parse import find_match_recognize, parse, position, to_spark_sql


def automata(sql: str) -> list:
    """(clause, program) for every MATCH_RECOGNIZE in ``sql``, innermost first."""
    result = []
    for tree in parse(sql):
        for clause in find_match_recognize(tree):
            node = parse_pattern(clause.pattern.code, clause.pattern.origin)
            untils = {variable_name(d.variable) for d in clause.definitions if d.until is not None}
            result.append((clause, compile_pattern(node, variables(node), untils, clause.within is not None)))
    return result


def guard_text(formula, names) -> str:
    kind = formula[0]
    if kind == "true":
        return "TRUE"
    if kind == "def":
        return names[formula[1]]
    if kind == "until":
        return f"UNTIL({names[formula[1]]})"
    if kind == "not":
        return f"NOT {guard_text(formula[1], names)}"
    joiner = " AND " if kind == "and" else " OR "
    return "(" + joiner.join(guard_text(f, names) for f in formula[1:]) + ")"


def edges(program: dict):
    """(source, target, priority, label) for every transition."""
    names = program["vars"]
    for source, state in enumerate(program["states"]):
        kind = state[0]
        if kind == "split":
            for k, target in enumerate(state[1], 1):
                yield source, target, k, "ε"
        elif kind == "consume":
            for k, (guard, stop, var, excluded, target) in enumerate(state[1], 1):
                label = guard_text(guard, names)
                if stop is not None:
                    label += f" unless {guard_text(stop, names)}"
                if var < 0:
                    label += " / ignore"
                elif guard != ["def", var]:
                    label += f" / {names[var]}"
                if excluded:
                    label += " (excluded)"
                yield source, target, k, label
        elif kind in ("bol", "eol"):
            yield source, state[1], 1, "ε at partition " + ("start" if kind == "bol" else "end")
        elif kind == "peek":
            yield source, state[2], 1, f"ε if next row: {guard_text(state[1], names)}"
        elif kind == "expire":
            yield source, state[1], 1, "ε when the WITHIN window closes"


def text(clause, program) -> str:
    line, column = position(clause) or (None, None)
    lines = [f"MATCH_RECOGNIZE at line {line}:{column}  semantics {clause.semantics}, "
             f"AFTER MATCH {'NO SKIP' if clause.skip_kind == 'NO SKIP' else 'SKIP ' + clause.skip_kind}",
             f"PATTERN ({clause.pattern.text})"]
    defines = {variable_name(d.variable): d for d in clause.definitions}
    for name in program["vars"]:
        d = defines.get(name)
        cond = to_spark_sql(d.condition.copy()) if d is not None else "TRUE"
        if d is not None and d.until is not None:
            cond += f" UNTIL {to_spark_sql(d.until.copy())}"
        lines.append(f"  {name}: {cond}")
    lines.append(f"start q{program['start']}, accept q{program['states'].index(['accept'])}")
    for source, target, k, label in edges(program):
        lines.append(f"  q{source} --{k}: {label}--> q{target}")
    return "\n".join(lines)


def graphviz(program) -> str:
    out = ["digraph dst {", "  rankdir=LR;", '  node [shape=circle];',
           f'  start [shape=point]; start -> q{program["start"]};']
    accept = program["states"].index(["accept"])
    out.append(f"  q{accept} [shape=doublecircle];")
    for source, target, k, label in edges(program):
        out.append(f'  q{source} -> q{target} [label="{k}: {_escape(label)}"];')
    out.append("}")
    return "\n".join(out)


def mermaid(program) -> str:
    out = ["flowchart LR", f"  start(( )) --> q{program['start']}"]
    accept = program["states"].index(["accept"])
    out.append(f"  q{accept}(((accept)))")
    for source, target, k, label in edges(program):
        out.append(f'  q{source} -- "{k}: {_escape(label)}" --> q{target}')
    return "\n".join(out)


def _escape(label: str) -> str:
    return label.replace("\\", "\\\\").replace('"', "'")
