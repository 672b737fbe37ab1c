from referee.cards import parse_cards, parse_level
from referee.combos import CombType, default_reading
from referee.plays import legal_plays


def plays(hand: str, level: str = "2", table: str | None = None):
    lv = parse_level(level)
    on_table = default_reading(parse_cards(table), lv) if table else None
    return legal_plays(parse_cards(hand), lv, on_table)


def test_only_plays_that_beat_the_table_are_listed():
    found = {(p.reading.type, p.reading.rank) for p in plays("3S 7D 7C 9S 9H KD", table="8S 8D")}
    assert found == {(CombType.PAIR, parse_level("9"))}


def test_bombs_beat_any_non_bomb_and_only_stronger_bombs_beat_bombs():
    hand = "4S 4D 4C 4H 9S"
    assert {p.reading.type for p in plays(hand, table="AS AD")} == {CombType.BOMB}
    assert not plays(hand, table="5S 5D 5C 5H")
    assert plays(hand, table="3S 3D 3C 3H")


def test_lead_includes_every_type_the_hand_can_form():
    found = {p.reading.type for p in plays("3S 3D 3C 4S 4D 4C 5S 5D 6S 7D SJ SJ BJ BJ")}
    assert found == {
        CombType.SINGLE, CombType.PAIR, CombType.TRIPLE, CombType.FULL_HOUSE,
        CombType.STRAIGHT, CombType.TUBE, CombType.PLATE, CombType.FOUR_JOKERS,
    }


def test_wildcard_plays_are_distinct_from_natural_ones():
    pairs = {p.cards for p in plays("7S 7D 5H", level="5", table="6S 6D")}
    assert pairs == {tuple(sorted(parse_cards("7S 7D"))), tuple(sorted(parse_cards("7S 5H")))}


def test_membership_and_truthiness():
    view = plays("8S 8D 9C", table="7S 7D")
    assert tuple(parse_cards("8S 8D")) in view
    assert tuple(parse_cards("8S 9C")) not in view
    assert tuple(parse_cards("8S 8S")) not in view  # only one 8S in hand
    assert not plays("3S 4D", table="BJ")
