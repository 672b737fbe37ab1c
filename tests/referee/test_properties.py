"""Hypothesis properties of classification, comparison and legal-play enumeration."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.cards import ACE, DOUBLE_DECK, HEARTS, make_card, wildcard
from referee.combos import CombType, default_reading, readings
from referee.plays import legal_plays

levels = st.integers(min_value=0, max_value=ACE)
deck_draw = st.lists(st.sampled_from(DOUBLE_DECK), min_size=1, max_size=10)


def _physical(cards: list[int]) -> bool:
    """At most two copies of each face (two decks)."""
    return all(cards.count(c) <= 2 for c in set(cards))


@given(deck_draw, levels, st.randoms(use_true_random=False))
def test_readings_do_not_depend_on_card_order(cards, level, rnd):
    shuffled = list(cards)
    rnd.shuffle(shuffled)
    assert readings(cards, level) == readings(shuffled, level)


@given(deck_draw, levels)
def test_every_reading_accounts_for_every_card(cards, level):
    wilds = cards.count(wildcard(level))
    found = readings(cards, level)
    assert found or len(cards) > 1, "one card always reads as a single"
    for r in found:
        assert r.size == len(cards)
        assert len(r.wild_as) == wilds
        assert all(rank <= ACE for rank in r.wild_as), "a wildcard never stands for a joker"


@given(st.lists(deck_draw, min_size=3, max_size=3), levels)
def test_comparison_is_a_strict_order_within_a_type(plays, level):
    found = [r for p in plays for r in readings(p, level)]
    for a in found:
        assert not a.beats(a)
        for b in found:
            if a.beats(b):
                assert not b.beats(a)
                for c in found:
                    if b.beats(c):
                        assert a.beats(c)
            if a.type is b.type and not a.is_bomb and a.strength != b.strength:
                assert a.beats(b) or b.beats(a)


@given(st.integers(0, ACE), st.integers(4, 8), levels, st.integers(0, 3))
def test_adding_a_wildcard_never_removes_a_natural_bomb_reading(rank, size, level, first_suit):
    suits = [s for s in range(4) for _ in range(2) if not (rank == level and s == HEARTS)]
    if size > len(suits):
        return
    bomb = [make_card(rank, s) for s in (suits[first_suit:] + suits[:first_suit])[:size]]
    before = {(r.type, r.rank) for r in readings(bomb, level)}
    after = {(r.type, r.rank) for r in readings(bomb + [wildcard(level)], level)}
    assert (CombType.BOMB, rank) in before and (CombType.BOMB, rank) in after


hands = st.lists(st.sampled_from(DOUBLE_DECK), min_size=1, max_size=27).filter(_physical)


@settings(max_examples=60, deadline=None)
@given(hands, levels, deck_draw.filter(_physical))
def test_every_enumerated_play_is_legal_held_and_beats_the_table(hand, level, table_cards):
    table = default_reading(table_cards, level)
    enumerated = 0
    for play in legal_plays(hand, level, table):
        enumerated += 1
        assert all(play.cards.count(c) <= hand.count(c) for c in set(play.cards))
        kinds = {(r.type, r.rank) for r in readings(play.cards, level)}
        assert (play.reading.type, play.reading.rank) in kinds
        assert table is None or play.reading.beats(table)
        assert play.cards in legal_plays(hand, level, table)
    assert enumerated or table is not None, "a leader always has a legal lead"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(DOUBLE_DECK), min_size=4, max_size=11).filter(_physical), levels)
def test_enumeration_finds_every_reading_of_every_sub_multiset(hand, level):
    """Brute force over all sub-multisets of a small hand: nothing legal is missed."""
    brute = set()
    for n in range(1, min(len(hand), 10) + 1):
        for subset in combinations(hand, n):
            for r in readings(subset, level):
                brute.add((r.type, r.rank, r.suit))
    enumerated = {(p.reading.type, p.reading.rank, p.reading.suit) for p in legal_plays(hand, level)}
    assert enumerated == brute

