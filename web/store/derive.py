"""How the store turns accepted events into derived records: through the referee engine.

The store needs four operations of a referee, all typed: ``feed`` takes the event
``referee.events.parse_event`` made and returns verdicts (anything with ``to_json``), or
raises ``EventError`` with the reason when the event is refused; ``records`` gives every
verdict so far as JSON; ``snapshot``/``restore`` save and reload one. ``Derivation`` names
them so that the store's own mechanics (sequencing, hashing, concurrency) can be exercised
with any object that keeps the same contract. ``referee.engine.Referee`` keeps it as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from referee.events import Event, EventError

from .outcomes import EventRejected

DERIVED_TYPES = ("flag", "deal_end", "session_result", "review")
"""Record types stored beside the events; ``rederived`` replaces the table's records."""
REDERIVED = "rederived"


class Verdict(Protocol):
    def to_json(self) -> dict: ...


class Deriver(Protocol):
    def feed(self, event: Event) -> Sequence[Verdict]:
        """The verdicts ``event`` derives; raises ``EventError`` (and changes nothing) when
        the event is refused."""

    def records(self) -> list[dict]: ...

    def snapshot(self) -> bytes: ...


class Derivation(Protocol):
    """Makes a fresh deriver for a ruleset, or restores one from a snapshot blob."""

    def new(self, ruleset: str) -> Deriver: ...

    def restore(self, blob: bytes) -> Deriver: ...


def judge(deriver: Deriver, table_id: str, event: Event) -> list[dict]:
    """The JSON records ``deriver`` derives from ``event``; its refusal is ``EventRejected``."""
    try:
        return [verdict.to_json() for verdict in deriver.feed(event)]
    except EventError as exc:
        raise EventRejected(table_id, exc.reason) from None


class RefereeDerivation:
    """The real thing: ``referee.engine.Referee`` with a ruleset from
    ``referee.rulesets.ruleset_spec``."""

    def new(self, ruleset: str) -> Deriver:
        from referee.engine import Referee
        from referee.rulesets import load_ruleset_spec

        return Referee(load_ruleset_spec(ruleset))

    def restore(self, blob: bytes) -> Deriver:
        from referee.engine import Referee

        return Referee.restore(blob)
