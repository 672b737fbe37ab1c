"""The per-frame pipeline of a table camera: frame -> observations (JSON-ready dicts).

markers -> calibration -> coarse per-area views -> change detection -> card reader (only
for areas whose pixels changed since they were last read, and only once they are still;
tokens painted out of the crop first, :mod:`.tokens`) -> :class:`~.segment.AreaSegmenter`.
The card reader and the frames come in from outside, so the same pipeline runs on a
camera, a video file or a rendered clip with a reader that knows the ground truth.

An area that has just settled is read on its next frames until two reads agree and none
disagreed (else up to ``votes`` reads); once it has been still for ``stable_s``, what most
of those reads saw is what the area shows. One frame's noise can make the reader drop or
invent a card (two overlapping jokers read as one on one frame in three, say); a majority
of frames does not, and the play is dated by the first frame that read it so. Once
decided, the area is not read again until its pixels change, so a still area never
changes its reading on its own.

An area whose last play's cards leave it for good is reported as ``take_back`` only while
that play is still the last thing seen on the whole table: cards that go with nobody
acting after them went back to the hand (a flagged play withdrawn); cards swept after
the others passed or played are the end of a trick, which says nothing.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from recognizer.alternatives import Readings, area_alternatives

from .calibration import Calibrator
from .layout import TableLayout
from .markers import Marker, MarkerDetector, token_kind
from .outline import cards_at_least
from .rectify import AreaViews
from .segment import AreaSegmenter, AreaState
from .tokens import mask_tokens


class AreaReading(Protocol):
    cards: list[int]
    confidence: float
    uncertain: bool
    alternatives: list[tuple[tuple[int, float], ...]]


class AreaReader(Protocol):
    """Anything that reads the cards in one play-area crop (BGR)."""

    def read(self, image_bgr: np.ndarray) -> AreaReading: ...


def default_reader(deck: str | None = None, data: str | None = None) -> AreaReader:
    """The trained card reader (ONNX models), with a clear error while it is not there;
    with ``deck``, the classifier adapted to that enrolled deck (under ``data``)."""
    try:
        from recognizer.decks import deck_classifier
        from recognizer.reader import CardReader
    except ModuleNotFoundError as exc:
        if exc.name not in ("recognizer.reader", "onnxruntime"):
            raise
        raise ValueError(f"the card reader is not available ({exc.name} is missing)") from None
    return CardReader(classifier=deck_classifier(data, deck) if deck else None)


@dataclass(frozen=True)
class WatchSettings:
    stable_s: float = 0.35
    """How long an area must stay still before what it shows counts: longer than a hand
    rests while laying cards (the simulated hand, 0.3 s), so cards half covered by a still
    hand are not taken for the play."""
    votes: int = 5
    """The most reads of a settled area; their majority is what it shows."""
    hidden_s: float = 3.0
    """An area empty for less than this had its cards hidden, not cleared."""
    small_scale: float = 0.25
    """Downscale of the grey frame the coarse area views are warped from."""
    motion_px_per_mm: float = 0.25
    level_diff: int = 20
    """Grey-level difference (after brightness normalisation) that counts as changed."""
    motion_fraction: float = 0.01
    """Fraction of an area's pixels that must differ from the previous frame: in flux."""
    change_fraction: float = 0.01
    """Fraction that must differ from the view last read: read the area again."""


def changed_fraction(a: np.ndarray, b: np.ndarray, level: int) -> float:
    """Share of pixels that differ by more than ``level`` once both views are scaled to the
    same mean brightness (a cloud or a lamp changes the gain, not the cards)."""
    fa, fb = a.astype(np.float32), b.astype(np.float32)
    fb *= (fa.mean() + 1.0) / (fb.mean() + 1.0)
    return float(np.count_nonzero(np.abs(fa - fb) > level)) / a.size


def area_tokens(markers: list[Marker], homography: np.ndarray, layout: TableLayout) -> dict[str, frozenset[str]]:
    """Token kinds per seat, from the token markers whose centre lies in that seat's area."""
    pairs = [(kind, m) for m in markers if (kind := token_kind(m.id))]
    if not pairs:
        return {}
    centres = np.array([m.center for _, m in pairs], np.float32).reshape(-1, 1, 2)
    found: dict[str, set[str]] = {}
    for (kind, _), point in zip(pairs, cv2.perspectiveTransform(centres, homography).reshape(-1, 2)):
        if (area := layout.area_at(point)) is not None:
            found.setdefault(area.seat, set()).add(kind)
    return {seat: frozenset(kinds) for seat, kinds in found.items()}


Reading = tuple[tuple[int, ...], float, bool, Readings | None, int]
"""(cards as a sorted tuple, confidence, uncertain, other readings, the fewest cards its
paper can be: :func:`~.outline.cards_at_least`) of one read of an area."""


@dataclass
class _Vote:
    """The reads of an area since it settled: what most of them saw wins."""

    t: float
    reads: list[tuple[float, int, Reading, np.ndarray | None]] = field(default_factory=list)
    """(frame time, frame index, reading, crop or None) of each read, in order."""
    counts: Counter = field(default_factory=Counter)
    leader: tuple[int, ...] | None = None

    def add(self, t: float, index: int, reading: Reading, crop: np.ndarray | None) -> None:
        self.reads.append((t, index, reading, crop))
        cards = reading[0]
        self.counts[cards] += 1
        if self.leader is None or self.counts[cards] > self.counts[self.leader]:  # a tie keeps the first
            self.leader = cards

    @property
    def unanimous(self) -> bool:
        """Two reads or more, all alike: no further read can change the outcome by a majority."""
        return len(self.reads) >= 2 and len(self.counts) == 1

    def decided(self, t: float, settings: WatchSettings) -> tuple[float, int, Reading, np.ndarray | None] | None:
        """Once the area has been still for ``stable_s`` and two reads agree (or the reads are
        used up): the winning reading, dated by the first frame that read it, with the lowest
        confidence and the fewest cards by the paper any of its reads had; else ``None``."""
        if t - self.t < settings.stable_s - 1e-6:  # frame times are sums of floats
            return None
        if self.counts[self.leader] < 2 and len(self.reads) < settings.votes:
            return None
        agreeing = [r for r in self.reads if r[2][0] == self.leader]
        t0, index, _, crop = agreeing[0]
        weakest = min(agreeing, key=lambda r: r[2][1])[2]
        uncertain = any(r[2][2] for r in agreeing)
        at_least = min(r[2][4] for r in agreeing)
        return t0, index, (self.leader, weakest[1], uncertain, weakest[3], at_least), crop


class _Area:
    """What the watcher remembers about one area between frames."""

    def __init__(self, seat: str, settings: WatchSettings) -> None:
        self.segmenter = AreaSegmenter(seat, settings.stable_s, settings.hidden_s)
        self.previous: np.ndarray | None = None
        self.read_view: np.ndarray | None = None
        self.was_moving = False
        self.reading: Reading = ((), 1.0, False, None, 0)
        self.vote: _Vote | None = None
        self.since: tuple[float, int] | None = None
        """When the reading just decided first showed (the date of what it makes)."""
        self.crops: dict[int, np.ndarray] = {}


class TableWatcher:
    """Feed frames with :meth:`process`; get observations as dicts shaped like table events.

    ``reader`` is one reader for every area, or a mapping seat -> reader. ``crops_dir``:
    where to save the area crop that evidences each observation (``None``: no crops).
    """

    def __init__(
        self,
        reader: AreaReader | Mapping[str, AreaReader],
        layout: TableLayout | None = None,
        settings: WatchSettings | None = None,
        crops_dir: str | Path | None = None,
        detector: MarkerDetector | None = None,
        calibrator: Calibrator | None = None,
    ) -> None:
        self.layout = layout or TableLayout()
        self.settings = settings or WatchSettings()
        seats = [a.seat for a in self.layout.areas]
        self.readers = dict(reader) if isinstance(reader, Mapping) else {s: reader for s in seats}
        self.crops_dir = Path(crops_dir) if crops_dir is not None else None
        self.detector = detector or MarkerDetector()
        self.calibrator = calibrator or Calibrator(self.layout)
        self.areas = {s: _Area(s, self.settings) for s in seats}
        self.reads = 0
        self._views: AreaViews | None = None
        self._dt = 0.0
        self._last_t: float | None = None
        self._last_seen: tuple[str, str] | None = None
        """(type, seat) of the last observation made: a ``cleared`` area is a take-back only
        right after its own play."""

    @property
    def delay_s(self) -> float:
        """How long after its date an observation may still complete: the stable time in
        whole frames, or the reads of a vote with no early majority, at the frame interval."""
        s, dt = self.settings, self._dt
        frames = math.ceil(s.stable_s / dt - 1e-6) if dt > 0 else 0
        return max(s.stable_s, frames * dt, (s.votes - 1) * dt)

    def process(self, frame: np.ndarray, t: float, index: int) -> list[dict[str, Any]]:
        """One BGR frame at frame time ``t`` (seconds) -> the observations it completes."""
        if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            raise ValueError(f"frame {index}: expected a BGR image (H x W x 3 uint8), got {getattr(frame, 'shape', frame)!r}")
        if self._last_t is not None and t > self._last_t:
            self._dt = t - self._last_t
        self._last_t = t
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        markers = self.detector.detect(gray)
        events: list[dict[str, Any]] = []
        status = self.calibrator.update(markers, t)
        if status is not None:
            events.append({"type": "calibration", "status": status, "t": round(t, 3)})
            self._views = None
            for area in self.areas.values():
                area.previous = area.read_view = area.vote = None
        if not self.calibrator.valid:
            return events
        s = self.settings
        if self._views is None:
            self._views = AreaViews(self.layout, self.calibrator.homography, s.small_scale, s.motion_px_per_mm)
        small = cv2.resize(gray, None, fx=s.small_scale, fy=s.small_scale, interpolation=cv2.INTER_AREA)
        tokens = area_tokens(markers, self.calibrator.homography, self.layout)
        for seat, area in self.areas.items():
            state = self._still_state(seat, area, self._views.small(seat, small), frame, t, index)
            if state is not None:
                state = AreaState(state, tokens.get(seat, frozenset()))
            since, area.since = area.since, None
            for obs in area.segmenter.feed(t, index, state, area.reading[1], area.reading[2], since=since,
                                           alternatives=area.reading[3], at_least=area.reading[4]):
                if obs.type == "cleared":
                    if self._last_seen != ("play", seat):
                        continue
                    obs = replace(obs, type="take_back")
                self._last_seen = (obs.type, seat)
                events.append(obs.to_json(self._save_crop(area, obs.frame, seat, obs.type)))
            self._forget_crops(area)
        return events

    def _still_state(self, seat: str, area: _Area, view: np.ndarray, frame: np.ndarray, t: float,
                     index: int) -> tuple[int, ...] | None:
        """The cards the area shows; ``None`` while it is moving or its reads are still being
        voted on. Read again only if its pixels changed."""
        s = self.settings
        moving = area.previous is not None and changed_fraction(view, area.previous, s.level_diff) > s.motion_fraction
        area.previous = view
        # Cards only change under a hand: once an area settles after moving it is read
        # again even if the coarse view looks the same (7H for 7D is a few pixels).
        settled, area.was_moving = area.was_moving and not moving, moving
        if moving:
            area.vote = None
            return None
        if settled or area.read_view is None or changed_fraction(view, area.read_view, s.level_diff) > s.change_fraction:
            area.vote = _Vote(t)
        vote = area.vote
        if vote is None:
            return area.reading[0]
        if len(vote.reads) < s.votes and not vote.unanimous:
            crop = self._views.crop(seat, frame)
            cards_only = mask_tokens(crop, self.detector)
            reading = self.readers[seat].read(cards_only)
            self.reads += 1
            area.read_view = view
            cards = tuple(sorted(reading.cards))
            others = area_alternatives(cards, reading.alternatives, float(reading.confidence)) \
                if reading.alternatives else None
            at_least = cards_at_least(cards_only, self.layout.read_px_per_mm)
            vote.add(t, index, (cards, float(reading.confidence), bool(reading.uncertain), others, at_least),
                     crop if self.crops_dir is not None else None)
        decided = vote.decided(t, s)
        if decided is None:
            return None
        area.vote = None
        t0, first, area.reading, crop = decided
        area.since = (t0, first)
        if crop is not None:
            area.crops[first] = crop
        return area.reading[0]

    def _save_crop(self, area: _Area, frame: int, seat: str, kind: str) -> str | None:
        """The area crop of ``frame`` in a file of its own for one observation of ``kind``: a
        play and a token laid together are two observations dated by one frame, and the agent
        takes each file away as it keeps it (one file for both left the second without)."""
        crop = area.crops.get(frame)
        if self.crops_dir is None or crop is None:
            return None
        self.crops_dir.mkdir(parents=True, exist_ok=True)
        path = self.crops_dir / f"{frame:06d}_{seat}_{kind}.png"
        cv2.imwrite(str(path), crop)
        return str(path)

    def _forget_crops(self, area: _Area) -> None:
        """Keep only the crop the current candidate state started from."""
        start = area.segmenter.candidate_start
        keep = start[1] if start else None
        for frame in [f for f in area.crops if f != keep]:
            del area.crops[frame]
