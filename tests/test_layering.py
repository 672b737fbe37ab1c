"""The rooms of ARCHITECTURE.md hold: each package imports only the rooms it may, and no module
imports itself back through another (every import counts: module level, inside a function or
for type checking only)."""

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("referee", "recognizer", "hardware", "web")

MAY_IMPORT = {  # ARCHITECTURE.md, "The rooms"
    "referee": set(),
    "recognizer": {"referee"},
    "recognizer.training": {"referee", "recognizer"},
    "hardware": {"referee"},
    "web.settings": set(),
    "web.store": {"referee", "web.settings"},
    "web.tournament": {"referee", "web.store", "web.settings"},
    "web.app": {"referee", "recognizer", "recognizer.training", "hardware", "web.store", "web.tournament",
                "web.settings"},
}
ONLY_WHEN_RUN = {("recognizer", "recognizer.training")}
"""Allowed inside a function only: the recognizer's training commands load the training side
when they run; the reader at a table never does."""

@dataclass(frozen=True)
class Import:
    where: str  # path:line
    source: str  # the importing module
    target: str  # the module imported (one of ours)
    in_function: bool


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def room(module: str) -> str:
    """The room of one of our modules; the command-line modules at ``web/``'s top belong to the
    application layer, which is the only thing that imports them."""
    parts = module.split(".")
    if parts[:2] == ["recognizer", "training"]:
        return "recognizer.training"
    if parts[0] == "web":
        return ".".join(parts[:2]) if len(parts) > 1 and parts[1] in {"store", "tournament", "app", "settings"} else "web.app"
    return parts[0]


def _imports(module: str, path: Path) -> list[tuple[int, str, bool]]:
    """(line, module name as written or resolved, inside a function) for every import."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                out.extend((child.lineno, alias.name, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - child.level + 1] if child.level else []
                named = ".".join(base + ([child.module] if child.module else []))
                for alias in child.names:  # ``from . import x``: x is a module or a name of the package
                    full = f"{named}.{alias.name}"
                    out.append((child.lineno, full if full in MODULES else named, in_function))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return out


def _our_imports(modules: dict[str, Path] = MODULES) -> list[Import]:
    found = []
    for module, path in modules.items():
        for line, name, in_function in _imports(module, path):
            if name.split(".")[0] in PACKAGES:
                target = next((m for m in (name, name.rpartition(".")[0]) if m in MODULES), name)
                shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
                found.append(Import(f"{shown}:{line}", module, target, in_function))
    return found


def _wrong(imports: list[Import]) -> list[str]:
    wrong = []
    for imp in imports:
        mine, theirs = room(imp.source), room(imp.target)
        if mine == theirs or theirs in MAY_IMPORT[mine]:
            continue
        if (mine, theirs) in ONLY_WHEN_RUN and imp.in_function:
            continue
        wrong.append(f"{imp.where}: {imp.source} ({mine}) imports {imp.target} ({theirs}); "
                     f"{mine} may import {sorted(MAY_IMPORT[mine]) or 'nothing of ours'}")
    return wrong


def test_each_room_imports_only_the_rooms_it_may():
    wrong = _wrong(_our_imports())
    assert not wrong, "\n".join(wrong)


def test_the_referee_imports_only_the_standard_library():
    wrong = [f"{path.relative_to(ROOT)}:{line}: {module} imports {name}"
             for module, path in MODULES.items() if room(module) == "referee"
             for line, name, _ in _imports(module, path)
             if name.split(".")[0] not in sys.stdlib_module_names | {"referee"}]
    assert not wrong, "\n".join(wrong)


def test_no_import_circles():
    graph = nx.DiGraph()
    for imp in _our_imports():
        if imp.target != imp.source:
            graph.add_edge(imp.source, imp.target, where=imp.where)
    circles = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not circles, "\n".join(
        "import circle: " + "; ".join(f"{graph.edges[a, b]['where']} {a} -> {b}"
                                      for a, b in graph.subgraph(c).edges) for c in circles)


def test_the_layering_check_names_a_wrong_import(tmp_path):
    """A relative import inside a function counts: a store module reaching into the app is
    named with its line; the recognizer's training side is refused at module level."""
    probe = tmp_path / "probe.py"
    probe.write_text("import json\n\n\ndef f():\n    from ..app import context\n", encoding="utf-8")
    assert _wrong(_our_imports({"web.store.probe": probe})) == [
        "probe.py:5: web.store.probe (web.store) imports web.app.context (web.app); web.store may import ['referee', 'web.settings']"]
    probe.write_text("from .training import train\n", encoding="utf-8")
    assert _wrong(_our_imports({"recognizer.probe": probe})) == [
        "probe.py:1: recognizer.probe (recognizer) imports recognizer.training.train (recognizer.training); "
        "recognizer may import ['referee']"]
