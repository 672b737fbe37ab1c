"""Tag registry limits, file round trip, and guided enrolment (directly and over a pty)."""

import io
import json
import threading

import pytest

from hardware.enroll import enroll
from hardware.serial_frames import em4100_frame
from hardware.reads import TagRead
from hardware.registry import RegistryError, TagRegistry, enrolment_order
from hardware.simulator import PtyPort, demo_registry
from referee.cards import DOUBLE_DECK, parse_card
from web.app.cli import main

SEVEN_H = parse_card("7H")


def test_registry_enforces_the_deck():
    registry = TagRegistry("T01")
    assert str(registry.add("04a1b2c3", SEVEN_H)) == "7H copy 1"
    assert str(registry.add("04A1B2C4", SEVEN_H)) == "7H copy 2"
    with pytest.raises(RegistryError, match="tag 04A1B2C3 is already enrolled as 7H copy 1"):
        registry.add("04A1B2C3", parse_card("8H"))
    with pytest.raises(RegistryError, match="7H is already enrolled twice \\(tags 04A1B2C3, 04A1B2C4\\)"):
        registry.add("04A1B2C5", SEVEN_H)
    with pytest.raises(RegistryError, match="not a tag id: 'xyz'"):
        registry.add("xyz", SEVEN_H)
    with pytest.raises(RegistryError, match="copy must be 1 or 2"):
        registry.add("04A1B2C6", parse_card("8H"), 3)
    assert registry.card("04a1b2c4") == "7H" and registry.card("FFFFFFFF") is None
    assert len(registry.missing()) == 106


def test_enrolment_order_is_the_double_deck():
    order = list(enrolment_order())
    assert sorted(p.face for p in order) == sorted(DOUBLE_DECK)
    assert len(set(order)) == 108 and str(order[0]) == "2S copy 1" and str(order[-1]) == "BJ copy 2"


def test_save_and_load_round_trip(tmp_path):
    registry = demo_registry("chafon", seed=1, deck="T07")
    registry.save(tmp_path / "deck.json")
    loaded = TagRegistry.load(tmp_path / "deck.json")
    assert loaded.to_json() == registry.to_json() and loaded.deck == "T07" and len(loaded) == 108


@pytest.mark.parametrize("content, message", [
    ("{", "not valid JSON"),
    ('{"tags": []}', "expected"),
    ('{"tags": {"04A1B2C3": {"card": "1X", "copy": 1}}}', "tag '04A1B2C3': not a card: '1X'"),
    ('{"tags": {"04A1B2C3": {"card": "7H", "copy": 1}, "04A1B2C4": {"card": "7H", "copy": 1}}}',
     "7H copy 1 is already enrolled as tag 04A1B2C3"),
])
def test_bad_registry_files_are_named(tmp_path, content, message):
    path = tmp_path / "deck.json"
    path.write_text(content)
    with pytest.raises(RegistryError, match=f"{path}.*{message}"):
        TagRegistry.load(path)


def test_enroll_rejects_a_tag_seen_twice_and_asks_again():
    registry, saves, out = TagRegistry(), [], io.StringIO()
    arrivals = [TagRead(f"AB{i:08X}", 0, float(i)) for i in range(3)]
    arrivals.insert(2, TagRead("AB00000000", 0, 1.5))  # the 2S again instead of the 2H
    done = enroll(registry, arrivals, lambda: saves.append(len(registry)), out)
    assert done == 3 and saves == [1, 2, 3]
    assert [registry.card(f"AB{i:08X}") for i in range(3)] == ["2S", "2H", "2D"]
    text = out.getvalue()
    assert "present 2S copy 1" in text and "present 2D copy 1" in text
    assert "rejected: tag AB00000000 is already enrolled as 2S copy 1" in text
    assert "reader stopped; 3 of 108 cards enrolled" in text
    assert "3/108" in text  # the progress bar


def test_enroll_command_over_a_pty(tmp_path, capsys):
    """The whole deck through the real CLI, a pseudo-terminal and the RDM6300 parser."""
    deck = demo_registry("rdm6300", seed=11)
    tags = [deck.tags_of(p.face)[p.copy - 1] for p in enrolment_order()]
    port = PtyPort(tmp_path / "ttyRFID")
    out = tmp_path / "deck.json"

    def operator():
        assert port.wait_for_listener(20)
        port.write(b"".join(em4100_frame(t) for t in tags[:10]))
        threading.Event().wait(0.3)  # the 10th card is gone; the 4th is presented again
        port.write(em4100_frame(tags[3]))
        threading.Event().wait(0.3)
        for i in range(10, 108, 20):
            port.write(b"".join(em4100_frame(t) for t in tags[i : i + 20]))
            threading.Event().wait(0.05)

    thread = threading.Thread(target=operator, daemon=True)
    thread.start()
    try:
        code = main(["rfid", "enroll", "--port", port.path, "--protocol", "rdm6300",
                     "--registry", str(out), "--deck", "demo", "--quiet", "0.1"])
    finally:
        thread.join(5)
        port.close()
    assert code == 0
    printed = capsys.readouterr().out
    assert f"rejected: tag {tags[3]} is already enrolled as 2C copy 1" in printed
    assert f"{out}: 108 cards enrolled" in printed
    assert json.loads(out.read_text()) == deck.to_json()
    # a third 7H cannot be enrolled, and nothing waits for a reader to say so
    assert main(["rfid", "enroll", "--port", "/nonexistent", "--protocol", "rdm6300",
                 "--registry", str(out), "--card", "7H"]) == 2
    assert "7H is already enrolled twice" in capsys.readouterr().err
