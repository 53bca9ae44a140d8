"""Render the compiled automaton (DST) of each MATCH_RECOGNIZE: text, Graphviz or Mermaid.

What is shown is the program of the engine plan that runs (the rewrite's own lowering).
Edges are numbered by priority within their source state (1 = preferred); a consuming edge
is labelled with its guard and what the row becomes (``-> V`` stored in V, ``ignore`` skipped
by relaxed contiguity), epsilon edges with ``ε``.
"""
from __future__ import annotations

from udtf.program import Def, Kind, Program, fold_guard

from .catalog import Catalog
from .analyze import variable_name
from .parse import position, to_spark_sql
from .rewrite import rewrite_sql


def automata(sql: str, catalog: Catalog) -> list:
    """(clause, engine plan) for every MATCH_RECOGNIZE in ``sql``, innermost first."""
    return [(clause, lowered.plan) for clause, lowered in rewrite_sql(sql, catalog)[1]]


def guard_text(guard, names) -> str:
    return fold_guard(guard, true="TRUE",
                      literal=lambda lit: names[lit.var] if isinstance(lit, Def) else f"UNTIL({names[lit.var]})",
                      not_=lambda x: f"NOT {x}", all_=lambda xs: "(" + " AND ".join(xs) + ")",
                      some=lambda xs: "(" + " OR ".join(xs) + ")")


def edges(program: Program):
    """(source, target, priority, label) for every transition."""
    names = program.vars
    for source, state in enumerate(program.states):
        if state.kind is Kind.SPLIT:
            for k, target in enumerate(state.targets, 1):
                yield source, target, k, "ε"
        elif state.kind is Kind.CONSUME:
            for k, t in enumerate(state.transitions, 1):
                label = guard_text(t.guard, names)
                if t.stop is not None:
                    label += f" unless {guard_text(t.stop, names)}"
                if t.var < 0:
                    label += " / ignore"
                elif t.guard != Def(t.var):
                    label += f" / {names[t.var]}"
                if t.excluded:
                    label += " (excluded)"
                yield source, t.target, k, label
        elif state.kind in (Kind.BOL, Kind.EOL):
            yield source, state.target, 1, "ε at partition " + ("start" if state.kind is Kind.BOL else "end")
        elif state.kind is Kind.PEEK:
            yield source, state.target, 1, f"ε if next row: {guard_text(state.guard, names)}"
        elif state.kind is Kind.EXPIRE:
            yield source, state.target, 1, "ε when the WITHIN window closes"


def text(clause, plan) -> str:
    program = plan.program
    line, column = position(clause) or (None, None)
    lines = [f"MATCH_RECOGNIZE at line {line}:{column}  semantics {plan.semantics.name}"
             + (" DISTINCT" if plan.distinct else "") + ", "
             f"AFTER MATCH {'NO SKIP' if plan.skip.mode.value == 'NO SKIP' else 'SKIP ' + plan.skip.mode.value}"
             + (f" {plan.skip.name}" if plan.skip.name else "") + (" ERROR ON MISS" if plan.skip.error_on_miss else ""),
             f"PATTERN ({clause.pattern.text})"]
    if plan.chunk is not None:
        chunk = plan.chunk
        lines.append(f"in chunks of {chunk.rows} attempt rows matched in parallel (spark.sparkcep.chunkRows), "
                     f"each reading {chunk.behind} rows before and {chunk.ahead} after")
    defines = {variable_name(d.variable): d for d in clause.definitions}
    for name in program.vars:
        d = defines.get(name)
        cond = to_spark_sql(d.condition.copy()) if d is not None else "TRUE"
        if d is not None and d.until is not None:
            cond += f" UNTIL {to_spark_sql(d.until.copy())}"
        lines.append(f"  {name}: {cond}")
    lines.append(f"start q{program.start}, accept q{program.accept}")
    for source, target, k, label in edges(program):
        lines.append(f"  q{source} --{k}: {label}--> q{target}")
    return "\n".join(lines)


def graphviz(plan) -> str:
    program = plan.program
    out = ["digraph dst {", "  rankdir=LR;", '  node [shape=circle];',
           f'  start [shape=point]; start -> q{program.start};', f"  q{program.accept} [shape=doublecircle];"]
    for source, target, k, label in edges(program):
        out.append(f'  q{source} -> q{target} [label="{k}: {_escape(label)}"];')
    out.append("}")
    return "\n".join(out)


def mermaid(plan) -> str:
    program = plan.program
    out = ["flowchart LR", f"  start(( )) --> q{program.start}", f"  q{program.accept}(((accept)))"]
    for source, target, k, label in edges(program):
        out.append(f'  q{source} -- "{k}: {_escape(label)}" --> q{target}')
    return "\n".join(out)


def _escape(label: str) -> str:
    return label.replace("\\", "\\\\").replace('"', "'")
