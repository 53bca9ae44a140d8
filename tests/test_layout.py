"""The package layout (pure Python): imports go one way, counting imports inside functions.

``udtf`` (the engine) imports nothing of ``sql_ext``; ``sql_ext.compiler`` imports nothing of
the Spark edge (``sql_ext.spark``) nor pyspark; no module of either package reaches itself
through its imports."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("udtf", "sql_ext")


def modules() -> dict:
    """Dotted name -> the dotted names it imports (every import statement, at any depth)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            base = name.split(".") if is_package else name.split(".")[:-1]
            imports = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    imports.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    origin = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else [])) \
                        if node.level else node.module
                    imports.add(origin)
                    imports.update(f"{origin}.{alias.name}" for alias in node.names)
            found[name] = imports
    return found


def test_the_engine_and_the_compiler_import_one_way():
    found = modules()
    wrong = sorted((name, target) for name, targets in found.items() for target in targets
                   if (name.startswith("udtf") and target.startswith("sql_ext"))
                   or (name.startswith("sql_ext.compiler") and (target.startswith("sql_ext.spark")
                                                                or target.split(".")[0] == "pyspark")))
    assert not wrong, wrong


def test_no_import_cycle():
    found = modules()
    graph = {name: {t for t in targets if t in found and t != name} for name, targets in found.items()}
    # a package's __init__ re-exporting its modules is not a cycle of those modules
    graph = {name: {t for t in targets if not name.startswith(t + ".")} for name, targets in graph.items()}
    state, cycles = {}, []

    def visit(name, path):
        state[name] = "open"
        for target in sorted(graph[name]):
            if state.get(target) == "open":
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, cycles[:5]
