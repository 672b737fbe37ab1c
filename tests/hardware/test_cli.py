"""End to end: `rfid simulate` on a pty, `rfid listen` on its path, both as real processes."""

import json
import subprocess
import sys

import pytest

from hardware.registry import TagRegistry
from hardware.simulator import SCRIPT

CLI = [sys.executable, "-m", "web.app.cli", "rfid"]


def run_pair(tmp_path, protocol, listen_args):
    registry = tmp_path / "deck.json"
    sim = subprocess.Popen(
        CLI + ["simulate", "--protocol", protocol, "--registry", str(registry), "--link", str(tmp_path / "tty"),
               "--gap", "0.8", "--hold", "0.6", "--wait", "30"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        path = sim.stdout.readline().strip()
        listen = subprocess.run(
            CLI + ["listen", "--port", path, "--protocol", protocol, "--registry", str(registry)] + listen_args,
            capture_output=True, text=True, timeout=60,
        )
    finally:
        sim.wait(30)
    assert listen.returncode == 0, listen.stderr
    return [json.loads(line) for line in listen.stdout.splitlines()], TagRegistry.load(registry), listen.stderr


def test_listen_json_prints_one_object_per_debounced_read(tmp_path):
    records, registry, stderr = run_pair(tmp_path, "jsonl", ["--json", "--count", "6"])
    expected = [(seat, card) for seat, cards in SCRIPT for card in cards.split()][:6]
    assert [(r["seat"], r["card"]) for r in records] == expected
    assert all(registry.card(r["tag"]) == r["card"] for r in records)
    assert [r["t"] for r in records] == sorted(r["t"] for r in records)
    assert "reads=" in stderr


@pytest.mark.parametrize("protocol", ["chafon288", "id12la"])
def test_listen_plays_follow_the_script(tmp_path, protocol):
    multi = protocol == "chafon288"
    script = [(s, c.split()) for s, c in SCRIPT if multi or s == "S"]
    records, _, _ = run_pair(tmp_path, protocol, ["--plays", "--settle", "0.3", "--count", str(len(script)), "--duration", "30"])
    assert [(r["type"], r["seat"], sorted(r["cards"])) for r in records] == [
        ("play", seat, sorted(cards)) for seat, cards in script
    ]
