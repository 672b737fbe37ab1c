"""Debounce, presence, play grouping and the D3 deck checks, with time passed in."""

import pytest

from hardware.antennas import DEFAULT_ANTENNAS, load_antenna_map
from hardware.deck import DeckChecker
from hardware.presence import PresenceTracker
from hardware.reads import TagRead
from hardware.registry import TagRegistry
from hardware.simulator import demo_registry
from referee.cards import parse_card

REG = demo_registry("rdm6300", seed=3, deck="T01")


def tag(card: str, copy: int = 1, registry: TagRegistry = REG) -> str:
    return registry.tags_of(parse_card(card))[copy - 1]


def test_a_tag_repeating_on_the_antenna_is_one_read():
    presence = PresenceTracker(quiet=1.0)
    reads = [TagRead("AA00000001", 0, t / 10) for t in range(30)]  # 3 s of repeats
    assert [r.t for r in reads if presence.feed(r)] == [0.0]
    assert presence.present(0) == {"AA00000001"}
    assert presence.expire(3.9) == [(0, "AA00000001")]
    assert presence.feed(TagRead("AA00000001", 0, 4.0)) is not None  # put down again
    assert presence.feed(TagRead("AA00000001", 1, 4.0)) is not None  # another antenna


def test_quiet_period_must_be_positive():
    with pytest.raises(ValueError, match="quiet period"):
        PresenceTracker(0)


def lay(table, card, antenna, t, copy=1):
    return table.read(TagRead(tag(card, copy), antenna, t))


def test_a_seat_play_settles_into_one_observation():
    from hardware.table import RfidTable

    table = RfidTable(REG, settle=0.5)
    records = [lay(table, c, 2, 10.0 + i * 0.1) for i, c in enumerate(["7D", "7H", "7S"])]
    assert records[1] == {"seat": "N", "tag": tag("7H"), "card": "7H", "t": 10.1, "antenna": 2}
    assert lay(table, "7H", 2, 10.25) is None  # repeat while lying there
    lay(table, "7D", 2, 10.25)
    lay(table, "7S", 2, 10.25)
    assert table.tick(10.6) == []  # 7S arrived 0.4 s ago
    (play,) = table.tick(10.7)
    assert play == {
        "type": "play", "seat": "N", "cards": ["7S", "7H", "7D"], "t": 10.0, "source": "rfid",
        "evidence": {"tags": [tag("7D"), tag("7H"), tag("7S")]},
    }
    # the next play of N while the 7s still lie there: only the new cards
    for t in (10.9, 11.2, 11.5, 11.8):
        for c in ("7D", "7H", "7S"):
            lay(table, c, 2, t)
    lay(table, "BJ", 2, 11.3)
    (play,) = table.tick(12.0)
    assert play["cards"] == ["BJ"] and play["t"] == 11.3


def test_unmapped_antenna_reads_but_never_plays():
    from hardware.table import RfidTable

    table = RfidTable(REG, antennas={0: "S"})
    assert lay(table, "2C", 5, 1.0)["seat"] is None
    assert table.tick(5.0) == []


def test_deck_flags_duplicate_stranger_and_109th_card():
    from hardware.table import RfidTable

    other = demo_registry("rdm6300", seed=4, deck="T02")
    table = RfidTable(REG, checker=DeckChecker(REG, others=[other]), quiet=0.2, settle=0.1)
    lay(table, "9C", 0, 1.0)
    assert [r["type"] for r in table.tick(1.2)] == ["play"]
    lay(table, "9C", 1, 5.0)  # the same physical 9C shows up at E
    play, flag = table.tick(5.2)
    assert play["cards"] == ["9C"]
    assert flag == {
        "type": "deck_anomaly", "seat": "E", "source": "rfid",
        "message": f"tag {tag('9C')} (9C copy 1) was played twice this deal: by S at 1.0 s and by E at 5.0 s",
        "t": 5.0, "tags": [tag("9C")],
    }
    stray = tag("QD", 2, other)
    table.read(TagRead(stray, 3, 6.0))
    play, flag = table.tick(6.2)
    assert play["cards"] == [] and play["evidence"]["unknown"] == [stray]
    assert flag["seat"] == "W" and "QD copy 2 of deck 'T02'" in flag["message"]
    table.start_deal()
    lay(table, "9C", 0, 9.0)
    assert [r["type"] for r in table.tick(9.2)] == ["play"]  # a new deal: no flag


def test_the_109th_different_card_is_flagged():
    checker = DeckChecker(REG)
    flags = checker.check("S", REG.to_json()["tags"], 1.0)
    assert flags == []
    (stranger, extra) = checker.check("E", ["FFFFFFFFFF"], 2.0)
    assert "not in this table's deck 'T01'" in stranger["message"]
    assert "a 109th card" in extra["message"] and extra["seat"] == "E"


def test_antenna_map_file(tmp_path):
    path = tmp_path / "antennas.toml"
    path.write_text('[antennas]\n0 = "W"\n1 = "n"\n')
    assert load_antenna_map(path) == {0: "W", 1: "N"}
    assert DEFAULT_ANTENNAS == {0: "S", 1: "E", 2: "N", 3: "W"}
    for text, message in (
        ('[antennas]\n0 = "X"\n', "antenna 0: not a seat: 'X'"),
        ('[antennas]\nleft = "S"\n', "antenna 'left' is not an index"),
        ("[antennas\n", "not valid TOML"),
        ("", "expected an \\[antennas\\] table"),
    ):
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            load_antenna_map(path)
