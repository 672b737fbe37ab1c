"""Fusion of camera and RFID observations into table events, never guessing.

Both sources describe a play the same way (``{"type": "play", "seat", "cards", "t",
"source", "evidence"}``). Within ``window`` seconds, a camera play and an RFID play of the
same seat are the same physical play:

* they agree (same multiset of faces) -> one ``play`` event (``source: "fused"``) with the
  evidence of both;
* they disagree -> a ``conflict`` event (``source: "fused"``) with both readings, for a
  human to decide (the referee engine shows it as a review item);
* only one source saw it (the window ran out) -> that source's ``play`` event.

Events leave in time order: a resolved event waits while an earlier play is still waiting
for its partner. Other observation types (``pass``, ``report``...) pass through.
"""

from __future__ import annotations

from collections import Counter

from referee.seats import SEATS

SOURCES = ("camera", "rfid")


class ObservationError(ValueError):
    """An observation that is not a well-formed play/event from a known source."""


def _event(obs: dict) -> dict:
    """The table event of a single observation: its fields, evidence keyed by source."""
    event = {k: v for k, v in obs.items() if k != "evidence"}
    event["evidence"] = {obs["source"]: obs.get("evidence")}
    return event


def _same_cards(a: dict, b: dict) -> bool:
    """Same faces; a tag the table's registry does not know (``evidence.unknown``: a card of
    another deck, caught as a deck anomaly) is a card RFID saw but cannot name, so the
    other source may name it."""
    faces = {o["source"]: Counter(c.upper() for c in o["cards"]) for o in (a, b)}
    rfid = next((o for o in (a, b) if o["source"] == "rfid"), None)
    evidence = rfid.get("evidence") if rfid is not None else None
    unknown = len(evidence.get("unknown", ())) if isinstance(evidence, dict) else 0
    if not unknown:
        return faces[a["source"]] == faces[b["source"]]
    camera = faces["camera"]
    return faces["rfid"] <= camera and camera.total() - faces["rfid"].total() == unknown


def _merge(first: dict, second: dict) -> dict:
    by_source = {first["source"]: first, second["source"]: second}
    evidence = {s: by_source[s].get("evidence") for s in SOURCES}
    t = min(first["t"], second["t"])
    if _same_cards(first, second):
        # the camera names every card (RFID may hold unknown tags): its fields win
        ordered = sorted((first, second), key=lambda o: o["source"] == "camera")
        event = {k: v for o in ordered for k, v in o.items() if k not in ("source", "evidence")}
        event.update(t=t, source="fused", evidence=evidence)
        return event
    return {
        "type": "conflict",
        "seat": first["seat"],
        "t": t,
        "source": "fused",
        "readings": {s: list(by_source[s]["cards"]) for s in SOURCES},
        "evidence": evidence,
    }


def _validate(obs: object, sources: tuple[str, ...]) -> dict:
    if not isinstance(obs, dict):
        raise ObservationError(f"observation must be an object, got {obs!r}")
    if obs.get("source") not in sources:
        raise ObservationError(f"observation source must be one of {', '.join(sources)}: {obs!r}")
    t = obs.get("t")
    if not isinstance(t, (int, float)) or isinstance(t, bool):
        raise ObservationError(f"observation needs a numeric time 't': {obs!r}")
    if obs.get("type") == "play":
        cards = obs.get("cards")
        if obs.get("seat") not in SEATS or not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
            raise ObservationError(f"play observation needs a seat (N/E/S/W) and a list of cards: {obs!r}")
    return obs


class Fuser:
    """Pairs plays of the same seat from different sources within ``window`` seconds.

    Call :meth:`add` for every observation and :meth:`flush` with the current time now and
    then (a lone observation is only released once its window has passed). With a single
    configured source there is nothing to wait for and every play passes straight through.
    """

    def __init__(self, window: float = 1.5, sources: tuple[str, ...] = SOURCES) -> None:
        unknown = set(sources) - set(SOURCES)
        if unknown or not sources:
            raise ValueError(f"sources must be among {SOURCES}, got {sources!r}")
        self.window = window
        self.sources = tuple(sources)
        self._pending: list[dict] = []
        self._resolved: list[dict] = []

    def add(self, obs: dict) -> list[dict]:
        """Take one observation; returns the events that can leave now (time order)."""
        obs = _validate(obs, self.sources)
        if obs["type"] != "play" or len(self.sources) == 1:
            self._resolved.append(_event(obs))
        else:
            partner = next(
                (
                    p for p in self._pending
                    if p["seat"] == obs["seat"] and p["source"] != obs["source"]
                    and abs(p["t"] - obs["t"]) <= self.window
                ),
                None,
            )
            if partner is None:
                self._pending.append(obs)
            else:
                self._pending.remove(partner)
                self._resolved.append(_merge(partner, obs))
        return self.flush(obs["t"])

    def flush(self, now: float) -> list[dict]:
        """Release lone plays older than the window, then every event not behind a waiting one."""
        for obs in [p for p in self._pending if now - p["t"] > self.window]:
            self._pending.remove(obs)
            self._resolved.append(_event(obs))
        horizon = min((p["t"] for p in self._pending), default=float("inf"))
        ready = sorted((e for e in self._resolved if e["t"] < horizon), key=lambda e: e["t"])
        self._resolved = [e for e in self._resolved if e["t"] >= horizon]
        return ready
