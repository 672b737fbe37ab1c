"""One table's RFID side: debounced reads -> per-seat ``play`` observations + D3 deck anomalies.

A player lays a play in their play area card by card; the seat's new tags form one play once
no new tag has arrived there for ``settle`` seconds. Cards that stay on the antenna from an
earlier play are still present, so they do not count again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hardware.antennas import DEFAULT_ANTENNAS, AntennaMap
from hardware.deck import DeckChecker
from hardware.presence import PresenceTracker
from hardware.reads import TagRead, log
from hardware.registry import TagRegistry
from referee.cards import cards_name, parse_card
from referee.seats import Seat


@dataclass
class _Pending:
    first: float
    last: float
    tags: list[str] = field(default_factory=list)


class RfidTable:
    """Feed it reads (:meth:`read`) and time (:meth:`tick`); it answers with records.

    * :meth:`read` returns the debounced read record ``{seat, tag, card, t, antenna}`` for the
      first read of a presence, else None;
    * :meth:`tick` returns ``play`` observations (``source: "rfid"``) for seats whose play
      has settled, each followed by the ``deck_anomaly`` observations (D3) it showed.
    """

    def __init__(
        self,
        registry: TagRegistry,
        antennas: AntennaMap = DEFAULT_ANTENNAS,
        checker: DeckChecker | None = None,
        quiet: float = 1.0,
        settle: float = 0.5,
    ) -> None:
        self.registry = registry
        self.antennas = antennas
        self.checker = checker if checker is not None else DeckChecker(registry)
        self.presence = PresenceTracker(quiet)
        self.settle = settle
        self._pending: dict[Seat, _Pending] = {}
        self._unmapped: set[int] = set()

    def start_deal(self) -> None:
        self.checker.start_deal()

    def read(self, read: TagRead) -> dict | None:
        arrival = self.presence.feed(read)
        if arrival is None:
            return None
        seat = self.antennas.get(read.antenna)
        if seat is None:
            if read.antenna not in self._unmapped:
                log.warning("antenna %d is not mapped to a seat; its reads are not plays", read.antenna)
                self._unmapped.add(read.antenna)
        else:
            pending = self._pending.setdefault(seat, _Pending(read.t, read.t))
            pending.last = read.t
            pending.tags.append(read.tag)
        return {"seat": seat, "tag": read.tag, "card": self.registry.card(read.tag), "t": read.t,
                "antenna": read.antenna}

    def tick(self, now: float) -> list[dict]:
        self.presence.expire(now)
        records = []
        for seat, pending in sorted(self._pending.items(), key=lambda item: item[1].first):
            if now - pending.last >= self.settle:
                del self._pending[seat]
                records.append(self._play(seat, pending))
                records.extend(self.checker.check(seat, pending.tags, pending.first))
        return records

    def _play(self, seat: Seat, pending: _Pending) -> dict:
        cards = [c for c in map(self.registry.card, pending.tags) if c is not None]
        unknown = [t for t in pending.tags if t not in self.registry]
        evidence: dict = {"tags": pending.tags}
        if unknown:
            evidence["unknown"] = unknown
        return {
            "type": "play",
            "seat": seat,
            "cards": cards_name(map(parse_card, cards)).split(),
            "t": pending.first,
            "source": "rfid",
            "evidence": evidence,
        }
