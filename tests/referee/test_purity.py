"""The referee package stays pure: no I/O, no clock, no hidden randomness, nothing of ours."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "referee"
FORBIDDEN = {"os", "io", "time", "datetime", "socket", "sqlite3", "pathlib", "uuid", "subprocess",
             "threading", "logging", "shutil", "tempfile", "urllib", "http", "requests",
             "web", "recognizer", "hardware"}
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
    for path in PACKAGE.glob("*.py"):
        bad = _imports(path) & FORBIDDEN
        assert not bad, f"{path.name} imports {sorted(bad)}"
        if _imports(path) & SEEDED_ONLY:
            assert path.name == "simulate.py", f"{path.name} uses random outside the seeded simulator"


def test_no_builtin_file_access_or_clock_calls():
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert not calls & {"open", "input", "print"}, f"{path.name} calls {sorted(calls & {'open', 'input', 'print'})}"
