"""The referee of one table: the log of accepted events around the state machine.

``Referee.feed(event) -> verdicts`` (:mod:`referee.verdicts`: flags, deal ends, session
results, rulings, reviews); ``records()`` gives them as the JSON Lines contract of
``guandan-ref replay``. A malformed or impossible event raises :class:`Rejected` (an
``EventError``): it is not accepted and changes nothing. The rules themselves live in
:mod:`referee.phases`, one module per phase, applied by :class:`referee.machine.Machine`;
this module keeps the log, applies corrections and dismissals, and makes snapshots.
"""

from __future__ import annotations

import dataclasses

from . import events as ev
from . import snapshot
from .machine import Machine
from .phases.base import Rejected
from .rulesets import Ruleset, load_ruleset
from .state import SessionState
from .verdicts import Dismissed, Flag, Rederived, Verdict, Withdrawn

__all__ = ["Referee", "Rejected", "replay"]


class Referee:
    """One table's referee: feed it events, read back its verdicts.

    It keeps the accepted events (the log) so that a ``correction`` can replace one and
    re-derive everything after it; ``snapshot()``/``restore()`` make reopening a long
    table cheap. A rejected event raises :class:`referee.events.EventError` (the reason)
    and changes nothing.
    """

    def __init__(self, ruleset: Ruleset | None = None) -> None:
        self.ruleset = ruleset or load_ruleset("competition")
        self._machine = Machine(self.ruleset)
        self._log: list[ev.Event] = []
        self._ids: dict[str, ev.Event] = {}
        self._verdicts: list[Verdict] = []
        self._received: list[ev.Event] = []  # every accepted event as received: what a snapshot holds

    @property
    def state(self) -> SessionState | None:
        return self._machine.session

    @property
    def log(self) -> tuple[ev.Event, ...]:
        return tuple(self._log)

    def verdicts(self) -> list[Verdict]:
        """Everything derived so far, typed."""
        return list(self._verdicts)

    def records(self) -> list[dict]:
        """Everything derived so far as JSON records (the ``replay`` contract)."""
        return [v.to_json() for v in self._verdicts]

    def feed(self, obj: dict | ev.Event) -> list[Verdict]:
        """Validate and apply one event; returns what it derives, or raises ``EventError``."""
        event = obj if isinstance(obj, ev.Event) else ev.parse_event(obj)
        if event.id is not None and event.id in self._ids:
            if self._ids[event.id] == event:
                return []  # a resend of an accepted event
            raise Rejected(f"event id {event.id!r} was already used for another event")
        if self._machine.last_t is not None and event.t < self._machine.last_t:
            raise Rejected(f"time goes backwards: t={event.t:g} after t={self._machine.last_t:g}")
        if isinstance(event, ev.Correction):
            verdicts = self._correct(event)  # keeps its own books
        else:
            verdicts = [self._dismiss(event)] if isinstance(event, ev.Dismiss) else self._machine.apply(event)
            self._accept(event)
            self._verdicts += verdicts
        self._received.append(event)
        return verdicts

    def _accept(self, event: ev.Event) -> None:
        self._log.append(event)
        self._machine.last_t = event.t
        if event.id is not None:
            self._ids[event.id] = event

    def _dismiss(self, event: ev.Dismiss) -> Dismissed:
        """A referee dismisses a standing flag, named by ``(rule, seat, at)``."""
        key = (event.rule, event.seat, event.at)
        if key not in self._standing_flags():
            raise Rejected(f"dismiss: no standing flag {event.rule} of {event.seat or 'nobody'} at t={event.at:g}")
        return Dismissed(event.rule, event.seat, event.at, event.reason, event.by, event.t)

    def _standing_flags(self) -> set[tuple]:
        """The keys of flags raised and neither withdrawn nor dismissed."""
        keys = {v.key for v in self._verdicts if isinstance(v, Flag)}
        return keys - {(v.rule, v.seat, v.at) for v in self._verdicts if isinstance(v, (Withdrawn, Dismissed))}

    def _correct(self, correction: ev.Correction) -> list[Verdict]:
        """A correction is a replay: the log with the replacement in place of the misread event.

        The corrected event and everything after it are judged afresh. What the correction
        returns is how the verdicts moved: a :class:`Withdrawn` for each flag the new replay
        no longer raises, then each verdict it derives that the old one did not, then a
        :class:`Rederived`. Afterwards ``verdicts()`` is the fresh replay's followed by that
        bookkeeping. If the replacement itself is impossible at its place, the correction is
        rejected and nothing changes; a later event that the corrected log makes impossible
        drops out of the log (the store keeps it; the referee no longer counts it).
        """
        if correction.of not in self._ids:
            raise Rejected(f"correction of unknown event id {correction.of!r}")
        original = self._ids[correction.of]
        if isinstance(original, (ev.Correction, ev.Dismiss)):
            raise Rejected(f"event {correction.of!r} is a {original.kind}: correct the table event itself")
        # A correction fixes what was read, not when: the replacement keeps the original's time.
        replacement = dataclasses.replace(correction.event, t=original.t, id=original.id)
        fresh = Referee(self.ruleset)
        for event in self._log:
            if isinstance(event, ev.Correction):
                fresh._accept(event)  # already folded into the log
            elif event.id == correction.of:
                try:
                    fresh.feed(replacement)
                except ev.EventError as exc:
                    raise Rejected(f"correction of {correction.of!r}: the replacement is impossible there: "
                                   f"{exc}") from None
            else:
                try:
                    fresh.feed(event)
                except ev.EventError:
                    pass
        before = [v for v in self._verdicts if not isinstance(v, (Withdrawn, Rederived))]
        withdrawn = [Withdrawn(v.rule, v.seat, v.at, f"not raised once event {correction.of!r} is read as corrected")
                     for v in _missing(before, fresh._verdicts) if isinstance(v, Flag)]
        news = _missing(fresh._verdicts, before)
        done = Rederived(correction.of, correction.by, correction.t)
        self._machine, self._log, self._ids = fresh._machine, fresh._log, fresh._ids
        self._verdicts = fresh._verdicts + withdrawn + [done]
        self._accept(correction)
        return withdrawn + news + [done]

    def snapshot(self) -> bytes:
        """Canonical JSON of the ruleset and the accepted events (:mod:`referee.snapshot`)."""
        return snapshot.dumps(self.ruleset, [event.to_json() for event in self._received])

    @classmethod
    def restore(cls, blob: bytes) -> Referee:
        """The referee a snapshot describes; raises ``SnapshotError`` (a ``ValueError``)."""
        return snapshot.restore(blob, cls)


def _missing(these: list[Verdict], there: list[Verdict]) -> list[Verdict]:
    """The verdicts of ``these`` that ``there`` lacks, counted as a multiset, in order."""
    rest = list(there)
    out = []
    for verdict in these:
        if verdict in rest:
            rest.remove(verdict)
        else:
            out.append(verdict)
    return out


def replay(events, ruleset: Ruleset | None = None) -> list[Verdict]:
    """All verdicts derived from an iterable of events (raises on the first rejected one)."""
    referee = Referee(ruleset)
    out: list[Verdict] = []
    for event in events:
        out += referee.feed(event)
    return out
