"""Tag registry: which physical card (face + deck copy 1|2) each tag is glued to.

The rules only see faces, but one tag per physical card tells the two copies of a face
apart, which is what makes "the same card played twice" detectable. Saved as JSON::

    {"deck": "T01", "tags": {"13005D1DA5": {"card": "7H", "copy": 1}, ...}}
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from referee.cards import COPIES, FACES, Card, CardError, card_name, parse_card

COPY_NUMBERS = tuple(range(1, COPIES + 1))
"""How the copies of a face are numbered (copy 1 of the first deck, copy 2 of the second)."""
_TAG = re.compile(r"[0-9A-F]{8,64}")


class RegistryError(ValueError):
    """An enrolment the deck cannot hold (tag seen twice, a third copy) or a bad file."""


@dataclass(frozen=True)
class Physical:
    """One physical card: its face and which of the two copies it is."""

    face: Card
    copy: int

    def __str__(self) -> str:
        return f"{card_name(self.face)} copy {self.copy}"


def parse_tag(tag: str) -> str:
    key = tag.strip().upper() if isinstance(tag, str) else ""
    if not _TAG.fullmatch(key):
        raise RegistryError(f"not a tag id: {tag!r} (expected 8 to 64 hex digits)")
    return key


def enrolment_order() -> Iterator[Physical]:
    """Copy 1 of every face, then copy 2: one physical deck after the other."""
    for copy in COPY_NUMBERS:
        for face in FACES:
            yield Physical(face, copy)


class TagRegistry:
    """tag -> :class:`Physical`, with the deck's limits enforced on every :meth:`add`."""

    def __init__(self, deck: str = "deck") -> None:
        self.deck = deck
        self._by_tag: dict[str, Physical] = {}
        self._by_card: dict[Physical, str] = {}

    def __len__(self) -> int:
        return len(self._by_tag)

    def __contains__(self, tag: str) -> bool:
        return tag.upper() in self._by_tag

    def lookup(self, tag: str) -> Physical | None:
        return self._by_tag.get(tag.upper())

    def card(self, tag: str) -> str | None:
        """The face in RULES.md notation, or None for a tag this deck does not hold."""
        found = self.lookup(tag)
        return card_name(found.face) if found else None

    def tags_of(self, face: Card) -> list[str]:
        return [self._by_card[p] for p in (Physical(face, c) for c in COPY_NUMBERS) if p in self._by_card]

    def next_copy(self, face: Card) -> Physical:
        """The first copy of ``face`` not yet enrolled; a third one is an error."""
        free = [Physical(face, c) for c in COPY_NUMBERS if Physical(face, c) not in self._by_card]
        if not free:
            name = card_name(face)
            raise RegistryError(
                f"{name} is already enrolled twice (tags {', '.join(self.tags_of(face))}); a deck holds "
                f"each face twice, so a third {name} cannot be enrolled"
            )
        return free[0]

    def add(self, tag: str, face: Card, copy: int | None = None) -> Physical:
        """Enrol ``tag`` as ``face`` (copy: the given one, else the first free)."""
        key = parse_tag(tag)
        if key in self._by_tag:
            raise RegistryError(f"tag {key} is already enrolled as {self._by_tag[key]}; present another card")
        physical = self.next_copy(face) if copy is None else Physical(face, copy)
        if copy not in (None, *COPY_NUMBERS):
            raise RegistryError(f"copy must be 1 or 2, got {copy!r}")
        if physical in self._by_card:
            raise RegistryError(f"{physical} is already enrolled as tag {self._by_card[physical]}")
        self._by_tag[key] = physical
        self._by_card[physical] = key
        return physical

    def missing(self) -> list[Physical]:
        """Cards still to enrol, in :func:`enrolment_order`."""
        return [p for p in enrolment_order() if p not in self._by_card]

    def to_json(self) -> dict:
        return {
            "deck": self.deck,
            "tags": {t: {"card": card_name(p.face), "copy": p.copy} for t, p in self._by_tag.items()},
        }

    @classmethod
    def from_json(cls, data: object, where: str = "registry") -> TagRegistry:
        if not isinstance(data, dict) or not isinstance(data.get("tags"), dict):
            raise RegistryError(f"{where}: expected {{\"deck\": ..., \"tags\": {{tag: {{card, copy}}}}}}")
        registry = cls(str(data.get("deck", "deck")))
        for tag, entry in data["tags"].items():
            try:
                registry.add(tag, parse_card(entry["card"]), entry["copy"])
            except (RegistryError, CardError, KeyError, TypeError) as exc:
                raise RegistryError(f"{where}: tag {tag!r}: {exc}") from None
        return registry

    @classmethod
    def load(cls, path: str | Path) -> TagRegistry:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise RegistryError(f"{path}: not valid JSON: {exc}") from None
        return cls.from_json(data, str(path))

    def save(self, path: str | Path) -> None:
        """Write atomically (a crash mid-enrolment keeps the previous file whole)."""
        path = Path(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
