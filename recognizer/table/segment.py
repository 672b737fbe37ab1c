"""Play segmentation: per-area readings over time -> ``play``/``pass``/``report``.

Pure logic, no pixels: each frame an area is either *in flux* (its pixels moving: a hand,
cards being laid) or *still* with a reading (the multiset of cards the reader sees, and
the tokens whose markers lie in the area). A state counts once it has stayed the same for
``stable_s`` seconds of frame time; only then is it compared with the area's last stable
state. That alone rules out a hand passing over, flicker and single-frame misreads.

What a new stable card multiset ``S`` means, given the last stable one ``L`` and the last
play ``P`` that lay in the area:

* ``S == L``: nothing happened (a card was straightened, a hand came and went);
* ``S`` empty: the area was cleared, its cards turned face down (end of a round), or a
  hand covers them all — no play; if cards show again within ``hidden_s`` they are
  judged against ``P`` as before (a resting hand lifted), later the area has forgotten
  ``P`` (a new round: whatever shows is a new play). The moment it forgets a ``P`` it
  reports it as ``cleared``: whether the cards were taken back into the hand or swept at
  the end of a trick, only the whole table can tell (:class:`~.watcher.TableWatcher`);
* ``S`` inside ``P``: part of the last play is hidden or being swept away — no play;
* ``S`` as many cards as ``L``, and either reading among the reader's alternatives of the
  other: the same cards read anew (a hand laying a token over them moved the area, and it
  was read again) — no play. A misread corrected so is no second play by the seat, which
  the referee would flag out of turn; the play stays as first read, with its doubt;
* ``S`` strictly contains a non-empty ``P``: cards were laid beside the last play — a
  play of the added cards ``S - P``;
* otherwise: a play of ``S``.

Each token kind (``report``, ``pass``) that appears in a stable state and was not in the
previous one is one observation. The first stable state of an area is what lay there
when watching began: it is the past, not a play.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from recognizer.alternatives import Readings, played_alternatives
from referee.cards import card_name


@dataclass(frozen=True)
class AreaState:
    """What a still area shows: cards as a sorted tuple (a multiset), token kinds."""

    cards: tuple[int, ...]
    tokens: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Observation:
    """A ``play``/``pass``/``report``/``cleared`` seen in ``seat``'s area, dated by the first frame
    (``t``, ``frame``) of the stable state that shows it."""

    type: str
    seat: str
    t: float
    frame: int
    cards: tuple[int, ...] = ()
    confidence: float = 1.0
    uncertain: bool = False
    """The reader marked some reading of the play uncertain (below its calibrated threshold)."""
    alternatives: Readings | None = None
    """Other readings of the played cards the reader found plausible (:mod:`recognizer.alternatives`);
    ``None`` when the reader gave none at all (an empty tuple: it found none likely)."""
    min_cards: int | None = None
    """The fewest cards the play's paper can be (:mod:`.outline`), given only when that is
    more than the cards read: the reader missed an index (two equal cards one over the other)."""

    def to_json(self, crop: str | None = None) -> dict[str, Any]:
        event: dict[str, Any] = {"type": self.type, "seat": self.seat}
        if self.type == "play":
            event["cards"] = [card_name(c) for c in self.cards]
        event.update(
            t=round(self.t, 3),
            source="camera",
            confidence=round(self.confidence, 3),
            evidence={"frame": self.frame, "crop": crop},
        )
        if self.uncertain:
            event["uncertain"] = True
        if self.alternatives is not None:
            event["alternatives"] = [{"cards": [card_name(c) for c in cards], "p": p} for cards, p in self.alternatives]
        if self.min_cards is not None:
            event["min_cards"] = self.min_cards
        return event


class AreaSegmenter:
    """The segmentation state machine of one seat's play area."""

    def __init__(self, seat: str, stable_s: float = 0.6, hidden_s: float = 3.0) -> None:
        if stable_s < 0 or hidden_s < 0:
            raise ValueError(f"stable and hidden times must be >= 0 s, got {stable_s!r}, {hidden_s!r}")
        self.seat = seat
        self.stable_s = stable_s
        self.hidden_s = hidden_s
        self._emptied_at: float | None = None
        self._candidate: AreaState | None = None
        self._since: tuple[float, int] = (0.0, 0)
        self._confidence = 1.0
        self._uncertain = False
        self._alternatives: Readings | None = None
        self._at_least = 0
        self._committed = False
        self._last: AreaState | None = None
        self._last_alternatives: Readings | None = None
        self._last_play: tuple[int, ...] = ()

    @property
    def candidate_start(self) -> tuple[float, int] | None:
        """(t, frame) where the current candidate state began, if there is one."""
        return self._since if self._candidate is not None else None

    def feed(
        self, t: float, frame: int, state: AreaState | None, confidence: float = 1.0, uncertain: bool = False,
        since: tuple[float, int] | None = None, alternatives: Readings | None = None, at_least: int = 0,
    ) -> list[Observation]:
        """One frame: ``state`` is what the still area shows, ``None`` while in flux;
        ``confidence``, ``uncertain`` and ``alternatives`` are the reader's for it (a play
        carries the lowest confidence and that read's alternatives, and is uncertain if any
        reading was, while it stood still); ``at_least``, the fewest cards the area's paper
        can be (the fewest while it stood still). ``since``:
        the (time, frame) an earlier frame first showed ``state`` (the watcher decides what
        an area shows over several frames), else this frame."""
        if state is None:
            self._candidate = None
            return []
        if state != self._candidate:
            start = since if since is not None else (t, frame)
            self._candidate, self._since, self._confidence, self._uncertain = state, start, confidence, uncertain
            self._alternatives, self._at_least = alternatives, at_least
            self._committed = False
        else:
            if confidence < self._confidence:
                self._confidence, self._alternatives = confidence, alternatives
            self._uncertain = self._uncertain or uncertain
            self._at_least = min(self._at_least, at_least)
        if self._committed:
            return self._forgotten(t, frame)
        if t - self._since[0] < self.stable_s - 1e-6:  # frame times are sums of floats
            return []
        self._committed = True
        return self._commit(state)

    def _forgotten(self, t: float, frame: int) -> list[Observation]:
        """``cleared`` once the area has shown no cards for ``hidden_s`` after a play: the
        last play's cards are gone, not hidden under a resting hand."""
        if (not self._last_play or self._emptied_at is None or self._last is None or self._last.cards
                or t - self._emptied_at < self.hidden_s - 1e-6):
            return []
        self._last_play = ()
        return [Observation("cleared", self.seat, t, frame)]

    def _commit(self, state: AreaState) -> list[Observation]:
        last, self._last = self._last, state
        last_alternatives, self._last_alternatives = self._last_alternatives, self._alternatives
        if last is None:
            self._last_play = state.cards
            return []
        t, frame = self._since
        found: list[Observation] = []
        if state.cards != last.cards and _read_anew(last.cards, last_alternatives, state.cards, self._alternatives):
            if self._last_play == last.cards:
                self._last_play = state.cards
        elif state.cards != last.cards:
            before = self._last_play
            played = self._played(state.cards, t)
            if played:
                shown_before = before if played != state.cards else ()
                others = None if self._alternatives is None else played_alternatives(self._alternatives, shown_before)
                at_least = self._at_least - len(shown_before)
                found.append(Observation("play", self.seat, t, frame, played, self._confidence, self._uncertain,
                                         others, at_least if at_least > len(played) else None))
        for kind in sorted(state.tokens - last.tokens):
            found.append(Observation(kind, self.seat, t, frame))
        return found

    def _played(self, cards: tuple[int, ...], t: float) -> tuple[int, ...]:
        if not cards:
            self._emptied_at = t
            return ()
        if self._emptied_at is not None and t - self._emptied_at >= self.hidden_s:
            self._last_play = ()
        self._emptied_at = None
        seen, last_play = Counter(cards), Counter(self._last_play)
        if seen <= last_play:
            return ()
        self._last_play = cards
        if last_play and last_play < seen:
            return tuple(sorted((seen - last_play).elements()))
        return cards


def _read_anew(before: tuple[int, ...], before_others: Readings | None, now: tuple[int, ...], now_others: Readings | None) -> bool:
    """Whether cards ``now`` shown where ``before`` lay are the same cards read again: as many
    of them, and either reading one the reader gave as an alternative of the other."""
    if not before or len(before) != len(now):
        return False
    return any(c == now for c, _ in before_others or ()) or any(c == before for c, _ in now_others or ())
