"""How the store turns accepted events into derived records: through the referee engine.

The store only needs four operations of a referee (``feed``, ``records``, ``snapshot``,
``restore``); ``Derivation`` names them so that the store's own mechanics (sequencing,
hashing, concurrency) can be exercised with any object that keeps the same contract.
"""

from __future__ import annotations

from typing import Protocol

DERIVED_TYPES = ("flag", "deal_end", "session_result", "review")
"""Record types stored beside the events; ``error`` rejects, ``rederived`` replaces."""


class Deriver(Protocol):
    def feed(self, event: dict) -> list[dict]: ...

    def records(self) -> list[dict]: ...

    def snapshot(self) -> bytes: ...


class Derivation(Protocol):
    """Makes a fresh deriver for a ruleset, or restores one from a snapshot blob."""

    def new(self, ruleset: str) -> Deriver: ...

    def restore(self, blob: bytes) -> Deriver: ...


class RefereeDeriver:
    """``referee.engine.Referee`` seen through the store's dict contract.

    The engine returns typed verdicts and raises on a rejected event; the store keeps the
    verdicts' JSON records and looks for ``error`` records, so this maps one onto the other.
    ``referee`` is the engine itself (``.referee.state`` is the table's ``SessionState``).
    """

    def __init__(self, referee) -> None:
        self.referee = referee

    @property
    def state(self):
        return self.referee.state

    @property
    def ruleset(self):
        return self.referee.ruleset

    @property
    def log(self):
        return self.referee.log

    def feed(self, event: dict) -> list[dict]:
        from referee.events import EventError
        from referee.verdicts import Rejection

        try:
            return [verdict.to_json() for verdict in self.referee.feed(event)]
        except EventError as exc:
            return [Rejection(str(exc), event=event).to_json()]

    def records(self) -> list[dict]:
        return self.referee.records()

    def snapshot(self) -> bytes:
        return self.referee.snapshot()


class RefereeDerivation:
    """The real thing: ``referee.engine.Referee`` with a ruleset from
    ``referee.rulesets.ruleset_spec``."""

    def new(self, ruleset: str) -> Deriver:
        from referee.engine import Referee
        from referee.rulesets import load_ruleset_spec

        return RefereeDeriver(Referee(load_ruleset_spec(ruleset)))

    def restore(self, blob: bytes) -> Deriver:
        from referee.engine import Referee

        return RefereeDeriver(Referee.restore(blob))
