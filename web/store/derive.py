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


class RefereeDerivation:
    """The real thing: ``referee.engine.Referee`` with a ruleset from ``referee.rulesets``."""

    def new(self, ruleset: str) -> Deriver:
        from referee.engine import Referee
        from referee.rulesets import load_ruleset

        return Referee(load_ruleset(ruleset))

    def restore(self, blob: bytes) -> Deriver:
        from referee.engine import Referee

        return Referee.restore(blob)
