"""One test per clause of RULES.md C3-C7, with the edge cases the rule book lists."""

import pytest

from referee.cards import parse_cards, parse_level
from referee.combos import ComboError, CombType, default_reading, parse_comb_type, readings

from .conftest import kinds, strongest


def reading(cards: str, level: str = "2", table: str | None = None, declared: str | None = None):
    lv = parse_level(level)
    on_table = default_reading(parse_cards(table), lv) if table else None
    return default_reading(parse_cards(cards), lv, on_table, CombType(declared) if declared else None)


# C4: the combination table
@pytest.mark.parametrize(
    "cards,expected",
    [
        ("7S", {("single", "7")}),
        ("7S 7D", {("pair", "7")}),
        ("SJ SJ", {("pair", "SJ")}),
        ("BJ BJ", {("pair", "BJ")}),
        ("7S 7D 7C", {("triple", "7")}),
        ("7S 7D 7C 9S 9H", {("full_house", "7")}),
        ("7S 7D 7C SJ SJ", {("full_house", "7")}),
        ("3S 4D 5C 6S 7H", {("straight", "7")}),
        ("3S 3D 4C 4S 5H 5D", {("tube", "5")}),
        ("3S 3D 3C 4S 4H 4D", {("plate", "4")}),
        ("7S 7D 7C 7H", {("bomb", "7")}),
        ("7S 7D 7C 7H 7S 7D 7C 7H", {("bomb", "7")}),
        ("3S 4S 5S 6S 7S", {("straight_flush", "7"), ("straight", "7")}),
        ("SJ SJ BJ BJ", {("four_jokers", "BJ")}),
    ],
)
def test_each_combination_type(cards, expected):
    assert kinds(cards, "9") == expected


@pytest.mark.parametrize(
    "cards",
    [
        "SJ BJ",  # jokers of different size are no pair
        "SJ SJ SJ",  # no joker triple
        "7S 8S",
        "7S 7D 8C",
        "3S 4D 5C 6S",  # straights have exactly 5 cards
        "3S 4D 5C 6S 7H 8D",
        "3S 3D 4C 4S",  # tubes have exactly 3 pairs
        "3S 3D 4C 4S 5H 5D 6C 6S",
        "3S 3D 3C 4S 4H 4D 5S 5H 5D",  # plates have exactly 2 triples
        "7S 7D 7C 9S 9H 9D",  # not consecutive
        "7S 7D 7C 7H 9S",
        "SJ SJ BJ",
        "SJ SJ BJ BJ BJ",
        "7S 7D 7C SJ BJ",  # the pair of a full house must be a pair
    ],
)
def test_non_combinations_are_illegal(cards):
    assert kinds(cards, "9") == set()


# C5: sequences
def test_ace_is_high_or_low_in_sequences():
    assert kinds("AS 2D 3C 4S 5H") == {("straight", "5")}
    assert kinds("TS JD QC KS AH") == {("straight", "A")}
    assert kinds("AS AD 2C 2S 3H 3D") == {("tube", "3")}
    assert kinds("QS QD KC KS AH AD") == {("tube", "A")}
    assert kinds("AS AD AC 2S 2H 2D") == {("plate", "2")}
    assert kinds("KS KD KC AS AH AD") == {("plate", "A")}


@pytest.mark.parametrize("cards", ["KS AD 2C 3S 4H", "QS KD AC 2S 3H", "KS KD AC AS 2H 2D", "AS AD AC 2S 2D KC"])
def test_sequences_never_wrap(cards):
    assert kinds(cards, "9") == set()


def test_level_card_sits_at_its_natural_rank_inside_sequences():
    assert kinds("3S 4D 5C 6S 7D", "7") == {("straight", "7")}
    assert kinds("7S 7D 8C 8S 9D 9C", "8") == {("tube", "9")}


def test_jokers_never_in_sequences():
    assert kinds("SJ 4D 5C 6S 7D") == set()
    assert kinds("SJ 4H 5C 6S 7D", "4") == set()


# C3: wildcards
def test_wildcard_completes_any_combination():
    assert kinds("3S 4D 5H 6S 7D", "5") == {("straight", "7")}  # 5H as itself
    assert kinds("3S 4D 5D 6S 5H", "5") == {("straight", "7"), ("straight", "6")}  # 5H as a 7 or a 2
    assert kinds("9S 5H", "5") == {("pair", "9")}
    assert kinds("9S 9D 9C 5H", "5") == {("bomb", "9")}
    assert kinds("9S 9D 9C 9H 9S 9D 9C 9H 5H 5H", "5") == {("bomb", "9")}  # 10 only with both


def test_wildcard_never_stands_for_a_joker():
    assert kinds("SJ 5H", "5") == set()
    assert kinds("BJ BJ BJ 5H", "5") == set()
    assert kinds("SJ SJ BJ 5H", "5") == set()
    assert kinds("7S 7D 7C SJ 5H", "5") == set()


def test_wildcards_played_alone_are_level_cards():
    assert kinds("5H", "5") == {("single", "5")}
    assert kinds("5H 5H", "5") == {("pair", "5")}
    assert kinds("5H 5S 5H", "5") == {("triple", "5")}


def test_straight_flush_with_wildcard_takes_the_suit():
    found = readings(parse_cards("3S 4S 6S 7S 9H"), parse_level("9"))
    flush = [r for r in found if r.type is CombType.STRAIGHT_FLUSH]
    assert len(flush) == 1 and flush[0].suit == 0 and flush[0].wild_as == (parse_level("5"),)


def test_several_readings_are_all_listed():
    assert kinds("AS AD 2S 2C 2H 2H") == {("tube", "3"), ("plate", "2")}
    assert kinds("3S 4D 5H 5H 7S", "5") == {("straight", "7")}
    assert kinds("7S 7D 7C 5H 5H", "5") == {("bomb", "7"), ("full_house", "7")}
    assert kinds("7S 7D 8C 8S 5H", "5") == {("full_house", "7"), ("full_house", "8")}
    assert kinds("3S 4D 5C 5H 5H", "5") == {("straight", "7"), ("straight", "6"), ("straight", "5")}
    assert kinds("3S 3D 4S 4C 5H 5H", "5") == {("tube", "5"), ("tube", "4"), ("plate", "4")}


# C2 and C6: comparison
@pytest.mark.parametrize(
    "play,table,level,beats",
    [
        ("8S", "7S", "2", True),
        ("7D", "7S", "2", False),  # suits never matter
        ("2S", "AS", "2", True),  # the level card is above A
        ("SJ", "2S", "2", True),
        ("BJ", "SJ", "2", True),
        ("AS AD", "KS KD", "2", True),
        ("8S 8D", "7S 7D 7C", "2", False),  # different types
        ("3S 4D 5C 6S 7H", "AS 2D 3C 4S 5H", "9", True),  # A-low is the lowest straight
        ("TS JD QC KS AH", "9S TD JC QS KH", "9", True),
        ("TS TD TC 3S 3H", "9S 9D 9C AS AH", "2", True),  # full houses by the triple only
        ("3S 3D 3C 3H", "AS KD QC JS TH", "2", True),  # bombs beat every non-bomb
        ("3S 3D 3C 3H 3S", "AS AD AC AH", "2", True),  # 5 beats 4
        ("4S 5S 6S 7S 8S", "AS AD AC AH AS", "2", True),  # straight flush beats 5-bomb
        ("3S 3D 3C 3H 3S 3D", "TS JS QS KS AS", "2", True),  # 6-bomb beats straight flush
        ("3S 3D 3C 3H 3S 3D 3C", "AS AD AC AH AS AD", "2", True),  # more cards wins
        ("SJ SJ BJ BJ", "AS AD AC AH AS AD AC AH 2H 2H", "2", True),
        ("2S 2D 2C 2S", "AS AD AC AH", "2", True),  # level-card bomb above A bomb
        ("AS AD AC AH", "2S 2D 2C 2S", "2", False),
        ("5S 6S 7S 8S 9S", "4S 5S 6S 7S 8S", "2", True),
    ],
)
def test_comparison(play, table, level, beats):
    assert (reading(play, level, table) is not None) is beats


# C7: the reading chosen
def test_undeclared_play_takes_its_strongest_reading():
    assert strongest("AS AD 2S 2C 2H 2H") == ("tube", "3")
    assert strongest("3S 4S 5H 6S 7S", "5") == ("straight_flush", "7")
    assert strongest("7S 7D 7C 5H 5H", "5") == ("bomb", "7")


def test_a_follow_takes_the_strongest_reading_that_beats_the_table():
    # 33 44 + two wildcards: strongest alone is the tube 334455, but over a plate only a plate counts
    assert strongest("3S 3D 4S 4C 5H 5H", "5") == ("tube", "5")
    r = reading("3S 3D 4S 4C 5H 5H", "5", table="2S 2D 2C 3S 3D 3C")
    assert r is not None and r.type is CombType.PLATE and r.rank == parse_level("4")
    assert reading("3S 3D 4S 4C 5H 5H", "5", table="4S 4D 5S 5D 6S 6D") is None


def test_declared_reading_replaces_the_default():
    r = reading("AS AD 2S 2C 2H 2H", declared="plate")
    assert r is not None and r.type is CombType.PLATE
    r = reading("3S 4S 5H 6S 7S", "5", declared="straight")
    assert r is not None and r.type is CombType.STRAIGHT
    assert reading("7S 7D", declared="straight") is None


def test_unknown_declared_type_is_a_clear_error():
    with pytest.raises(ComboError, match="not a combination type: 'flush'"):
        parse_comb_type("flush")


def test_reading_repr_round_trips():
    from referee.combos import Reading  # noqa: F401  (used by eval)

    r = readings(parse_cards("3S 4S 6S 7S 9H"), parse_level("9"))[0]
    assert eval(repr(r)) == r
