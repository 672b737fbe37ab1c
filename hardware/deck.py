"""Deck integrity checks only RFID can make (RULES.md D3): ``deck_anomaly`` observations.

Each one is a table event of the contract (``{"type": "deck_anomaly", "t", "seat", "tags",
"message"}``); the referee raises the D3 flag from it, so a human sees it with the rest.

* a tag played twice in one deal (a swapped-in duplicate, or a card taken back and replayed);
* a tag this table's deck does not hold (another table's deck, or an unregistered card);
* a 109th different card in one deal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hardware.registry import TagRegistry
from referee.cards import DECK_SIZE
from referee.seats import Seat


def anomaly(seat: Seat, message: str, t: float, tags: list[str]) -> dict:
    return {"type": "deck_anomaly", "t": t, "seat": seat, "tags": tags, "message": message, "source": "rfid"}


class DeckChecker:
    """Remembers every tag played this deal; :meth:`start_deal` clears the memory.

    ``others`` are the registries of the hall's other decks, so a stray card can be named
    by the deck it came from.
    """

    def __init__(self, registry: TagRegistry, others: Sequence[TagRegistry] = ()) -> None:
        self.registry = registry
        self.others = others
        self.played: dict[str, tuple[Seat, float]] = {}

    def start_deal(self) -> None:
        self.played.clear()

    def check(self, seat: Seat, tags: Iterable[str], t: float) -> list[dict]:
        """Record a play's tags and return the anomalies they show."""
        found = []
        for tag in tags:
            tag = tag.upper()
            earlier = self.played.get(tag)
            if earlier is not None:
                card = self.registry.lookup(tag) or "an unregistered card"
                found.append(anomaly(
                    seat,
                    f"tag {tag} ({card}) was played twice this deal: by {earlier[0]} at "
                    f"{earlier[1]:.1f} s and by {seat} at {t:.1f} s",
                    t,
                    [tag],
                ))
                continue
            self.played[tag] = (seat, t)
            if tag not in self.registry:
                found.append(anomaly(seat, self._stranger(tag), t, [tag]))
            if len(self.played) == DECK_SIZE + 1:
                found.append(anomaly(
                    seat,
                    f"a 109th card: {len(self.played)} different tags were played this deal, "
                    f"a deck holds {DECK_SIZE}",
                    t,
                    [tag],
                ))
        return found

    def _stranger(self, tag: str) -> str:
        for other in self.others:
            if tag in other:
                return (
                    f"tag {tag} is {other.lookup(tag)} of deck {other.deck!r}, "
                    f"not of this table's deck {self.registry.deck!r}"
                )
        return f"tag {tag} is not in this table's deck {self.registry.deck!r} (another deck, or never enrolled)"
