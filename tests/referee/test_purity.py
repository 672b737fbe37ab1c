"""The referee package stays pure: no I/O, no clock, no hidden randomness (that it imports
only the standard library is checked with every other room in tests/test_layering.py)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "referee"
FORBIDDEN = {"os", "io", "time", "datetime", "socket", "sqlite3", "pathlib", "uuid", "subprocess",
             "threading", "logging", "shutil", "tempfile", "urllib", "http"}
SEEDED_ONLY = {"random"}  # allowed only where every draw comes from an explicit seed


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_referee_imports_no_io_clock_or_other_packages():
    for path in PACKAGE.rglob("*.py"):
        bad = _imports(path) & FORBIDDEN
        assert not bad, f"{path.name} imports {sorted(bad)}"
        if _imports(path) & SEEDED_ONLY:
            assert path.name == "simulate.py", f"{path.name} uses random outside the seeded simulator"


def test_no_builtin_file_access_or_clock_calls():
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert not calls & {"open", "input", "print"}, f"{path.name} calls {sorted(calls & {'open', 'input', 'print'})}"


def test_each_rule_id_is_raised_in_one_place():
    """Every ``flag(...)`` call names its rule ID as a literal, and no ID is raised twice."""
    raised: dict[str, list[str]] = {}
    for path in (PACKAGE / "phases").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "flag":
                first = node.args[0]
                where = f"{path.name}:{node.lineno}"
                if isinstance(first, ast.Constant):
                    raised.setdefault(first.value, []).append(where)
                else:  # the clock's flags: their rules come from one table, LIMITS in clock.py
                    assert path.name == "clock.py", f"{where}: a flag whose rule is not a literal"
    assert {"P1", "P4", "P5", "R1", "R2", "D3", "T3", "T6", "K5"} <= set(raised)
    assert {rule: places for rule, places in raised.items() if len(places) > 1} == {}
