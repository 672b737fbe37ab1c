"""The referee's state machine: the phases of :mod:`referee.phases` over one table's state.

``Machine.apply(event)`` is the single place where an accepted event changes the state.
Each handler validates first (raising :class:`~referee.phases.base.Rejected`) and mutates
after, so a rejected event never changes anything. Time arrives on the events; nothing
here reads a clock.
"""

from __future__ import annotations

from . import events as ev
from .phases.base import HANDLERS
from .phases.clock import ClockRules
from .phases.deck import DeckRules
from .phases.penalties import PenaltyRules
from .phases.play import PlayRules
from .phases.reporting import ReportingRules
from .phases.results import ResultRules
from .phases.session import SessionRules
from .phases.tribute import TributeRules
from .rulesets import Ruleset
from .state import SessionState
from .verdicts import Verdict


class Machine(SessionRules, DeckRules, TributeRules, PlayRules, ReportingRules, ClockRules, PenaltyRules,
              ResultRules):
    """Session and deal state plus the handlers, by phase, that move it."""

    def __init__(self, ruleset: Ruleset, confirmed: frozenset[str] = frozenset()) -> None:
        self.table_ruleset = ruleset
        self.session: SessionState | None = None
        self.last_t: float | None = None
        self.confirmed = confirmed

    def apply(self, event: ev.Event) -> list[Verdict]:
        """Apply one parsed event: the single place where events change the state."""
        return HANDLERS[type(event)](self, event)
