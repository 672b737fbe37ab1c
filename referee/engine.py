"""The referee of one table: the log of accepted events around the state machine.

``Referee.feed(event) -> verdicts`` (:mod:`referee.verdicts`: flags, deal ends, session
results, rulings, reviews); ``records()`` gives them as the JSON Lines contract of
``guandan-ref replay``. A malformed or impossible event raises :class:`Rejected` (an
``EventError``): it is not accepted and changes nothing. The rules themselves live in
:mod:`referee.phases`, one module per phase, applied by :class:`referee.machine.Machine`;
this module keeps the log, applies corrections and dismissals, and makes snapshots.
``fold_corrections`` is the one statement of where a correction and a confirmation act in
a table's log, for anyone who shows the log step by step as the referee judged it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from . import events as ev
from . import snapshot
from .machine import Machine
from .phases.base import Rejected
from .rulesets import Ruleset, load_ruleset
from .state import SessionState
from .verdicts import Confirmed, Dismissed, Flag, FlagKey, Rederived, Verdict, Withdrawn

__all__ = ["Folded", "Referee", "Rejected", "fold_corrections", "replay"]

Observer = Callable[[int, ev.Event, list[Verdict]], None]
"""Told of each event a referee accepts: how many it has accepted (this one included), the
event and its verdicts (``Referee.follow``)."""


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
        self._struck: frozenset[str] = frozenset()
        """Ids of logged events a correction struck (nobody acted there): kept in the log at
        their place, so a later correction can put an event back there, but never judged."""
        self._verdicts: list[Verdict] = []
        self._received: list[ev.Event] = []  # every accepted event as received: what a snapshot holds
        self._observers: list[Observer] = []

    @property
    def state(self) -> SessionState | None:
        return self._machine.session

    @property
    def rules_in_force(self) -> Ruleset:
        """The session's ruleset (a session may name another than the table's), else the table's."""
        return self._machine.ruleset

    @property
    def log(self) -> tuple[ev.Event, ...]:
        """The accepted events as judged (each correction's replacement in place), a struck
        one included at its place."""
        return tuple(self._log)

    @property
    def accepted(self) -> int:
        """How many events this referee accepted (a store numbers them so: seq 1, 2, ...)."""
        return len(self._received)

    def follow(self, observer: Observer) -> None:
        """Tell ``observer`` of every event accepted from now on, after judging it: a screen
        that shows each step keeps what the one live referee of a table derived instead of
        judging the table a second time. It runs in the feeding thread, so it stays short."""
        self._observers.append(observer)

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
        if (self._machine.last_t is not None and event.t < self._machine.last_t
                and not isinstance(event, ev.Correction)):  # judged against the corrected log's time
            raise Rejected(f"time goes backwards: t={event.t:g} after t={self._machine.last_t:g}")
        if isinstance(event, ev.Correction):
            verdicts = self._correct(event)  # keeps its own books
        elif isinstance(event, ev.ConfirmRead):
            verdicts = self._confirm(event)  # keeps its own books
        else:
            verdicts = [self._dismiss(event)] if isinstance(event, ev.Dismiss) else self._machine.apply(event)
            self._accept(event)
            self._verdicts += verdicts
        self._received.append(event)
        for observer in self._observers:
            observer(len(self._received), event, verdicts)
        return verdicts

    def _accept(self, event: ev.Event) -> None:
        self._log.append(event)
        self._machine.last_t = event.t
        if event.id is not None:
            self._ids[event.id] = event

    def _dismiss(self, event: ev.Dismiss) -> Dismissed:
        """A referee dismisses a standing flag, named by ``(rule, seat, at)``."""
        if FlagKey(event.rule, event.seat, event.at) not in self._standing_flags():
            raise Rejected(f"dismiss: no standing flag {event.rule} of {event.seat or 'nobody'} at t={event.at:g}")
        return Dismissed(event.rule, event.seat, event.at, event.reason, event.by, event.t)

    def _standing_flags(self) -> set[FlagKey]:
        """The keys of flags raised and neither withdrawn nor dismissed."""
        keys = {v.key for v in self._verdicts if isinstance(v, Flag)}
        return keys - {v.key for v in self._verdicts if isinstance(v, (Withdrawn, Dismissed))}

    def _correct(self, correction: ev.Correction) -> list[Verdict]:
        """A correction is a replay: the log with the replacement in place of the misread event.

        The corrected event and everything after it are judged afresh. What the correction
        returns is how the verdicts moved: a :class:`Withdrawn` for each flag the new replay
        no longer raises, then each verdict it derives that the old one did not, then a
        :class:`Rederived`. Afterwards ``verdicts()`` is the fresh replay's followed by that
        bookkeeping (less the withdrawal of a flag the fresh replay raises again in other
        words: its key stands). If the replacement itself is impossible at its place, the correction is
        rejected and nothing changes; a later event that the corrected log makes impossible
        drops out of the log (the store keeps it; the referee no longer counts it).
        """
        original = self._read_event(correction.of, "correction")
        done = Rederived(correction.of, correction.by, correction.t)
        if correction.event is None:
            if not isinstance(original, (ev.Play, ev.Pass)):
                raise Rejected(f"correction of {correction.of!r}: only a play or a pass can be struck "
                               f"(nobody acted there), not a {original.kind}")
            if correction.of in self._struck:
                raise Rejected(f"correction of {correction.of!r}: that event is struck already")
            return self._rejudge(correction, correction.of, None, self._machine.confirmed, done)
        t = correction.replacement_t(original.t)
        if t != original.t:
            self._check_between_neighbours(correction, original, t)
        replacement = dataclasses.replace(correction.event, t=t, id=original.id)
        return self._rejudge(correction, correction.of, replacement, self._machine.confirmed, done)

    def _check_between_neighbours(self, correction: ev.Correction, original: ev.Event, t: float) -> None:
        """A corrected time stays between the events logged around the original: the log keeps
        its order, so only a time (a far-future tick, say) changes, never what came first."""
        at = next(i for i, event in enumerate(self._log) if event is original)
        low = self._log[at - 1].t if at > 0 else None
        high = self._log[at + 1].t if at + 1 < len(self._log) else None
        if (low is not None and t < low) or (high is not None and t > high):
            bound = (f"t>={low:g}" if high is None else f"t<={high:g}" if low is None
                     else f"{low:g}<=t<={high:g}")
            raise Rejected(f"correction of {correction.of!r}: t={t:g} is outside its neighbours' times, {bound} "
                           "(the events logged before and after it)")

    def _confirm(self, confirm: ev.ConfirmRead) -> list[Verdict]:
        """"Read is right": the camera read ``of`` is taken as read from now on. Its review
        closes; where the deal had gone on with another reading (a ``suspect_read``), it is
        judged afresh with the read, like a correction, and a breach the read shows is flagged."""
        original = self._read_event(confirm.of, "confirm_read")
        if not isinstance(original, ev.Play) or original.source != "camera":
            raise Rejected(f"confirm_read: event {confirm.of!r} is not a camera read of a play")
        if confirm.of in self._struck:
            raise Rejected(f"confirm_read: the read of {confirm.of!r} was struck (nobody played there); "
                           "correct it to put a play back")
        if confirm.of in self._machine.confirmed:
            raise Rejected(f"confirm_read: the read of {confirm.of!r} is already confirmed")
        done = Confirmed(confirm.of, original.seat, original.t, confirm.by, confirm.t)
        return self._rejudge(confirm, confirm.of, original, self._machine.confirmed | {confirm.of}, done)

    def _read_event(self, of: str, kind: str) -> ev.Event:
        if of not in self._ids:
            raise Rejected(f"{kind} of unknown event id {of!r}")
        original = self._ids[of]
        if isinstance(original, (ev.Correction, ev.Dismiss, ev.ConfirmRead)):
            raise Rejected(f"event {of!r} is a {original.kind}: name the table event itself")
        return original

    def _rejudge(self, cause: ev.Event, of: str, replacement: ev.Event | None, confirmed: frozenset[str],
                 done: Verdict) -> list[Verdict]:
        """Judge the log afresh with ``replacement`` in place of the event ``of`` (``None``:
        without it, struck) and ``confirmed`` reads taken as read; returns the withdrawn
        flags, the new verdicts and ``done``, and makes the fresh judgement this referee's."""
        fresh = Referee(self.ruleset)
        fresh._machine.confirmed = confirmed
        fresh._struck = self._struck - {of} | ({of} if replacement is None else frozenset())
        for event in self._log:
            if isinstance(event, (ev.Correction, ev.ConfirmRead)) or (event.id in fresh._struck):
                fresh._accept(event)  # already folded into the log, or struck from it
            elif event.id == of:
                try:
                    fresh.feed(replacement)
                except ev.EventError as exc:
                    raise Rejected(f"{cause.kind} of {of!r}: the replacement is impossible there: "
                                   f"{exc}") from None
            else:
                try:
                    fresh.feed(event)
                except ev.EventError:
                    pass
        before = [v for v in self._verdicts if not isinstance(v, (Withdrawn, Rederived, Confirmed))]
        how = "read as confirmed" if isinstance(done, Confirmed) else "read as corrected" if replacement is not None else "struck"
        withdrawn = [Withdrawn(v.rule, v.seat, v.at, f"not raised once event {of!r} is {how}")
                     for v in _missing(before, fresh._verdicts) if isinstance(v, Flag)]
        news = _missing(fresh._verdicts, before)
        if fresh._machine.last_t is not None and cause.t < fresh._machine.last_t:
            raise Rejected(f"time goes backwards: t={cause.t:g} after t={fresh._machine.last_t:g} "
                           f"(the {cause.kind}'s log's last time)")
        raised = {v.key for v in fresh._verdicts if isinstance(v, Flag)}
        self._machine, self._log, self._ids, self._struck = fresh._machine, fresh._log, fresh._ids, fresh._struck
        self._verdicts = fresh._verdicts + [w for w in withdrawn if w.key not in raised] + [done]
        self._accept(cause)
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


@dataclasses.dataclass(frozen=True)
class Folded:
    """A table's log as the referee judges it (``fold_corrections``)."""

    judged: tuple[tuple[dict, dict | None], ...]
    """Each event to judge, in order, with, for a corrected one, ``{"by", "seq", "original"}``."""
    struck: tuple[dict, ...]
    """``{"by", "seq", "original"}`` of each event struck (nobody acted there), in log order:
    judged nowhere, yet a referee's ruling that whoever shows the log still has to show."""


def fold_corrections(raw: list[dict]) -> Folded:
    """A table's accepted events (JSON, each with its ``seq``) as the referee judges them:
    each correction's replacement where the corrected event stood, and each ``confirm_read``
    just after the read it confirms.

    The replacement keeps the original's id, and its time unless it names its own
    (``Correction.replacement_t``, as ``Referee`` re-judges it); the correction itself is
    not a step. A confirmation is a step, dated like its read (times never go backwards), so
    that the steps after a read a referee confirmed show the deal judged with that read, as
    the referee re-judged it, while the step of the read still holds the review the
    confirmation closes. A struck event (a correction with no event) is no step at all: it
    is set apart (``Folded.struck``), with the read as it came and who struck it.
    Fed in this order, a fresh ``Referee`` ends where the live one does.
    """
    out: list[list] = []
    where: dict[str, int] = {}
    confirms: dict[int, list[dict]] = {}
    struck: set[int] = set()
    for event in raw:
        if event["type"] == "confirm_read" and str(event.get("of")) in where:
            confirms.setdefault(where[str(event["of"])], []).append(event)
            continue
        if event["type"] != "correction":
            if event.get("id") is not None:
                where[str(event["id"])] = len(out)
            out.append([event, None])
            continue
        at = where.get(str(event.get("of")))
        if at is None:
            continue
        standing, earlier = out[at]
        original = (earlier or {}).get("original", standing)
        corrected = {"by": event.get("by"), "seq": event["seq"], "original": original}
        if event.get("event") is None:  # struck: nobody acted there
            out[at] = [standing, corrected]
            struck.add(at)
            continue
        struck.discard(at)
        retimed = ev.parse_event(event).replacement_t(standing["t"])
        replacement = {**event["event"], "t": retimed, "id": original.get("id"),
                       "table": original.get("table"), "seq": original["seq"]}
        replacement.setdefault("source", "manual")
        out[at] = [replacement, corrected]
    folded: list[tuple[dict, dict | None]] = []
    for at, (event, corrected) in enumerate(out):
        if at in struck:
            continue
        folded.append((event, corrected))
        folded += [({**confirm, "t": event["t"]}, None) for confirm in confirms.get(at, ())]
    return Folded(tuple(folded), tuple(out[at][1] for at in sorted(struck)))


def replay(events, ruleset: Ruleset | None = None) -> list[Verdict]:
    """All verdicts derived from an iterable of events (raises on the first rejected one)."""
    referee = Referee(ruleset)
    out: list[Verdict] = []
    for event in events:
        out += referee.feed(event)
    return out
