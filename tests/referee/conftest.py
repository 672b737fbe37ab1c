"""Helpers to write plays in RULES.md notation."""

from __future__ import annotations

from referee.cards import parse_cards, parse_level, rank_name
from referee.combos import readings


def kinds(cards: str, level: str = "2") -> set[tuple[str, str]]:
    """The (type, key rank) pairs of every reading of ``cards``."""
    return {(r.type.value, rank_name(r.rank)) for r in readings(parse_cards(cards), parse_level(level))}


def strongest(cards: str, level: str = "2") -> tuple[str, str] | None:
    found = readings(parse_cards(cards), parse_level(level))
    return (found[0].type.value, rank_name(found[0].rank)) if found else None
