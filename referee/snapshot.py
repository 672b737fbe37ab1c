"""Snapshots of a referee as plain data: canonical JSON, a schema version, validated on restore.

A table's state is the replay of its accepted events (DESIGN.md), so a snapshot holds
exactly that: the ruleset the referee was made with and every event it accepted, in the
order received (corrections and dismissals included), each as its ``to_json()``. Restoring
parses every event through the one parser and feeds it to a fresh referee, so a snapshot
can at worst be refused (:class:`SnapshotError`, a ``ValueError``) — it can never run code
nor build a state that the events themselves would not. The bytes are canonical (sorted
keys, no spaces), so equal states give equal snapshots.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Protocol, TypeVar

from .events import EventError
from .jsontext import JSONTextError, Limits, loads
from .rulesets import Ruleset, RulesetError, ruleset_from_mapping


class Fed(Protocol):
    """What a snapshot restores into: anything made from a ruleset that is fed events (the
    referee), so this module needs nothing of the engine, which imports it."""

    def feed(self, obj: dict, /) -> object: ...


R = TypeVar("R", bound=Fed)

SCHEMA = "guandan-referee-snapshot/1"
LIMITS = Limits(max_bytes=256 * 1024 * 1024, max_depth=16, max_number_chars=32)
"""A snapshot holds a whole table's events: larger than one event, as shallow."""


class SnapshotError(ValueError):
    """A snapshot that is not one this referee wrote: the caller replays the events instead."""


def dumps(ruleset: Ruleset, events: list[dict]) -> bytes:
    """The canonical JSON bytes of a referee made with ``ruleset`` that accepted ``events``."""
    data = {"schema": SCHEMA, "ruleset": dataclasses.asdict(ruleset), "events": events}
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def restore(blob: bytes, make: Callable[[Ruleset], R]) -> R:
    """Rebuild the referee a snapshot describes (``make`` is the referee class)."""
    if not isinstance(blob, (bytes, bytearray)):
        raise SnapshotError(f"a snapshot is bytes, not {type(blob).__name__}")
    try:
        data = loads(bytes(blob), LIMITS)
    except JSONTextError as exc:
        raise SnapshotError(f"snapshot: {exc}") from None
    if not isinstance(data, dict) or set(data) != {"schema", "ruleset", "events"}:
        raise SnapshotError("snapshot: expected an object with schema, ruleset and events")
    if data["schema"] != SCHEMA:
        raise SnapshotError(f"snapshot: schema {data['schema']!r}, this referee reads {SCHEMA!r}")
    rules, events = data["ruleset"], data["events"]
    if not isinstance(rules, dict) or not isinstance(rules.get("name"), str) or not isinstance(events, list):
        raise SnapshotError("snapshot: ruleset must be an object with a name, events a list")
    try:
        rules = dict(rules)
        ruleset = ruleset_from_mapping(rules, name=rules.pop("name"))
    except RulesetError as exc:
        raise SnapshotError(f"snapshot ruleset: {exc}") from None
    referee = make(ruleset)
    for number, event in enumerate(events, 1):
        try:
            referee.feed(event)
        except EventError as exc:
            raise SnapshotError(f"snapshot event {number}: {exc}") from None
    return referee
