"""The phases' inner API is declared in one place: whatever a phase reaches on ``self``
that it does not define itself is declared on ``Phase`` (referee/phases/base.py), so a
reader finds every call one phase makes on another there, with its contract."""

import ast
import inspect
from pathlib import Path

from referee.machine import Machine
from referee.phases.base import Phase

PHASES = Path(__file__).resolve().parents[2] / "referee" / "phases"


def _classes() -> dict[str, ast.ClassDef]:
    out = {}
    for path in sorted(PHASES.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                out[node.name] = node
    return out


def _own(cls: ast.ClassDef) -> set[str]:
    """What a class body defines: its methods and annotated attributes."""
    names = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    return names | {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}


def _reached(cls: ast.ClassDef) -> set[str]:
    return {n.attr for n in ast.walk(cls)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"}


def test_every_name_a_phase_reaches_on_another_is_declared_on_phase():
    classes = _classes()
    declared = _own(classes["Phase"])
    undeclared = {f"{name}.{attr}" for name, cls in classes.items() if name != "Phase"
                  for attr in _reached(cls) - _own(cls) - declared}
    assert not undeclared, f"declare these on Phase with their contract: {sorted(undeclared)}"


def test_the_inner_api_is_abstract_on_phase_and_each_method_has_its_contract():
    inner = Phase.__abstractmethods__
    assert {"_clock_flags", "_begin_play_after_tribute", "_check_deal_end", "_end_waits",
            "_end_as_the_table_shows", "apply"} <= inner
    for name in inner:
        assert inspect.getdoc(getattr(Phase, name)), f"Phase.{name} says nothing of its contract"
        assert getattr(Machine, name) is not getattr(Phase, name), f"no phase implements Phase.{name}"
    assert not Machine.__abstractmethods__
