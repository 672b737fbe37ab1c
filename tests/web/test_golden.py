"""Golden files: the command line's output on the shipped examples, byte for byte.

``tests/golden/cases.json`` lists each command; ``<name>.stdout`` and ``<name>.stderr`` hold
what it printed and ``exit`` its status. A refactor must leave every one unchanged; a
deliberate change of behaviour gets a new case rather than an edited one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from web.app.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
CASES = json.loads((GOLDEN / "cases.json").read_text(encoding="utf-8"))


def run_case(argv: list[str], capsys, monkeypatch) -> tuple[int, str, str]:
    """Run one command from the repository root (the cases use relative paths)."""
    monkeypatch.chdir(ROOT)
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_case_list_is_not_empty():
    assert len(CASES) >= 20 and len({c["name"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_output_is_byte_for_byte_the_golden_file(case, capsys, monkeypatch):
    code, out, err = run_case(case["argv"], capsys, monkeypatch)
    assert code == case["exit"]
    assert out.encode("utf-8") == (GOLDEN / f"{case['name']}.stdout").read_bytes()
    assert err.encode("utf-8") == (GOLDEN / f"{case['name']}.stderr").read_bytes()
