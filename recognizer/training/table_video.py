"""Rendered whole-table clips with ground truth, for testing the table pipeline.

A :class:`Script` says what happens at the table (cards laid, areas cleared, cards turned
face down, hands hovering or straightening cards, tokens put down, lighting changes,
flicker, a camera bump); :class:`TableRenderer` draws it as camera frames — a textured
table with the corner markers, card faces from the project's card renderer
(:func:`recognizer.training.synth.card_image`), the printed tokens of :mod:`recognizer.table.sheets`, hands, a
perspective camera — and records per frame which face-up cards each area shows
unoccluded. :meth:`Script.expected` gives the observations the script should produce.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from recognizer.training.synth import PROCEDURAL_DESIGNS, Design, card_image
from referee.cards import card_name

from recognizer.table.layout import Area, TableLayout
from recognizer.table.markers import PASS_IDS, REPORT_IDS, marker_image
from recognizer.table.sheets import QUIET_MM, token_image

CARD_MM = (63.0, 88.0)
CARD_STEP_MM = 22.0
"""Overlap of laid cards: each card's corner index stays visible."""
REACH_S = 0.4
"""A hand takes this long to reach an area from the table edge, and to go back."""
TOKEN_KINDS = ("pass", "report")


@dataclass(frozen=True)
class Act:
    """A hand visits ``seat``'s area: it arrives at ``t``, stays ``dwell`` s, leaves.

    ``kind``: ``lay`` (whatever lay there goes, ``cards`` are laid), ``clear``,
    ``face_down``, ``straighten`` (one card nudged), ``hover`` (nothing changes),
    ``pass``/``report`` (that token is put down; tokens go with ``clear``/``face_down``).
    """

    t: float
    seat: str
    kind: str
    cards: tuple[int, ...] = ()
    dwell: float = 0.3


@dataclass(frozen=True)
class Bump:
    """The camera is knocked at ``t``: shifted ``shift_px`` and turned ``turn_deg`` over 0.2 s."""

    t: float
    shift_px: tuple[float, float] = (25.0, -15.0)
    turn_deg: float = 1.5


@dataclass(frozen=True)
class Script:
    duration: float
    acts: tuple[Act, ...]
    light: tuple[tuple[float, float], ...] = ((0.0, 1.0),)
    """(t, gain) keyframes, linearly interpolated."""
    flickers: tuple[float, ...] = ()
    bumps: tuple[Bump, ...] = ()

    def expected(self) -> list[dict]:
        """The observations this script should give, in time order: ``t`` is when the hand
        made the change (an observation comes once the hand has gone and the area is still)."""
        found: list[dict] = [{"type": "calibration", "status": "ok", "t": 0.0}]
        for act in self.acts:
            if act.kind == "lay":
                found.append({"type": "play", "seat": act.seat, "cards": [card_name(c) for c in sorted(act.cards)], "t": act.t})
            elif act.kind in TOKEN_KINDS:
                found.append({"type": act.kind, "seat": act.seat, "t": act.t})
        found += [{"type": "calibration", "status": "recalibrated", "t": b.t} for b in self.bumps]
        return sorted(found, key=lambda e: e["t"])


def demo_script() -> Script:
    """Twenty-four seconds of one round with every nuisance the segmentation must ignore."""
    from referee.cards import parse_cards

    return Script(
        duration=24.5,
        acts=(
            Act(1.0, "S", "lay", tuple(parse_cards("3S 3H"))),
            Act(2.5, "E", "lay", tuple(parse_cards("5D 5C"))),
            Act(4.2, "E", "hover", dwell=0.2),
            Act(5.5, "N", "pass"),
            Act(7.0, "W", "lay", tuple(parse_cards("9S 9S"))),
            Act(10.5, "S", "straighten"),
            Act(12.0, "S", "lay", tuple(parse_cards("7H 8H 9C TH JD"))),
            Act(14.0, "S", "report"),
            Act(17.0, "E", "hover", dwell=1.5),
            Act(19.5, "S", "face_down"),
            Act(19.5, "E", "face_down"),
            Act(19.5, "N", "face_down"),
            Act(19.5, "W", "face_down"),
            Act(21.5, "N", "lay", tuple(parse_cards("BJ BJ SJ SJ"))),
            Act(23.0, "W", "clear"),
        ),
        light=((0.0, 1.0), (8.0, 1.0), (9.0, 0.7), (18.0, 0.7), (18.5, 0.9)),
        flickers=(9.6,),
        bumps=(Bump(15.5),),
    )


@dataclass(frozen=True)
class Placed:
    """A card or token lying in an area: centre ``(u, v)`` in the seat's upright area mm."""

    item: int  # a card, or a token's marker id
    u: float
    v: float
    turn_deg: float
    face_up: bool = True
    token: str | None = None


@dataclass(frozen=True)
class RenderedFrame:
    index: int
    t: float
    image: np.ndarray
    visible: dict[str, tuple[int, ...]]
    """Per seat: the face-up cards no hand covers, sorted."""


@dataclass
class _Hand:
    seat: str
    at: tuple[float, float]  # palm centre, table mm


class TableRenderer:
    """Draws a :class:`Script` frame by frame (deterministic for a given ``seed``)."""

    def __init__(
        self,
        script: Script,
        layout: TableLayout | None = None,
        size: tuple[int, int] = (1920, 1080),
        fps: float = 15.0,
        design: Design | None = None,
        table_px_per_mm: float | None = None,
        seed: int = 0,
    ) -> None:
        self.script = script
        self.layout = layout or TableLayout()
        self.size = size
        self.fps = fps
        self.design = design or PROCEDURAL_DESIGNS[0]
        self.seed = seed
        w, h = size
        # The table fills ~90 % of the frame height, seen a little from the South.
        self.ppm = table_px_per_mm or 1.3 * h / 1080
        tw, th = self.layout.width_mm, self.layout.height_mm
        top, bottom = 0.04 * h, 0.96 * h
        half_bottom = 0.5 * (bottom - top) * tw / th * 1.02
        half_top = half_bottom * 0.86
        cx = w / 2
        dst = np.float32([(cx - half_top, top), (cx + half_top, top), (cx + half_bottom, bottom), (cx - half_bottom, bottom)])
        src = np.float32([(0, 0), (tw, 0), (tw, th), (0, th)])
        self.camera = cv2.getPerspectiveTransform(src, dst)
        """Table mm -> frame pixels before any bump."""
        rng = np.random.default_rng(seed)
        self._felt = self._draw_felt(rng)
        self._floor = self._draw_floor(rng)
        self._noise = [rng.integers(0, 7, (h, w, 3), dtype=np.uint8) for _ in range(3)]
        self._states = self._replay()
        self._cache: tuple[int, np.ndarray] | None = None

    # -- the script as states -------------------------------------------------------
    def _replay(self) -> list[tuple[float, dict[str, tuple[Placed, ...]]]]:
        """The table's contents after each act, as (time of change, contents)."""
        contents: dict[str, tuple[Placed, ...]] = {a.seat: () for a in self.layout.areas}
        states = [(-math.inf, dict(contents))]
        for n, act in enumerate(sorted(self.script.acts, key=lambda a: a.t)):
            rng = np.random.default_rng((self.seed, n))
            area = self.layout.area(act.seat)
            here = contents[act.seat]
            cards = tuple(p for p in here if p.token is None)
            tokens = tuple(p for p in here if p.token is not None)
            if act.kind == "lay":
                here = self._lay(area, act.cards, rng) + tokens
            elif act.kind == "clear":
                here = ()
            elif act.kind == "face_down":
                here = tuple(replace(p, face_up=False) for p in cards)
            elif act.kind == "straighten" and cards:
                i = int(rng.integers(len(cards)))
                nudged = replace(cards[i], u=cards[i].u + 4.0, turn_deg=cards[i].turn_deg - 3.0)
                here = cards[:i] + (nudged,) + cards[i + 1 :] + tokens
            elif act.kind in TOKEN_KINDS:
                ids = REPORT_IDS if act.kind == "report" else PASS_IDS
                w, h = area.size_mm()
                u = w - 45.0 - 70.0 * len(tokens)  # beside the tokens already there
                here = here + (Placed(ids[0], u, h / 2, float(rng.uniform(-8, 8)), token=act.kind),)
            elif act.kind != "hover":
                raise ValueError(f"unknown act kind {act.kind!r} at t={act.t}")
            contents[act.seat] = here
            states.append((act.t, dict(contents)))
        return states

    def _lay(self, area: Area, cards: tuple[int, ...], rng: np.random.Generator) -> tuple[Placed, ...]:
        w, h = area.size_mm()
        n = len(cards)
        span = CARD_MM[0] + (n - 1) * CARD_STEP_MM
        u0 = (w - span) / 2 + CARD_MM[0] / 2 - 20.0 + float(rng.uniform(-8, 8))
        v = h / 2 + float(rng.uniform(-6, 6))
        turn = float(rng.uniform(-4, 4))
        return tuple(Placed(c, u0 + i * CARD_STEP_MM, v, turn) for i, c in enumerate(sorted(cards)))

    def _contents_at(self, t: float) -> tuple[int, dict[str, tuple[Placed, ...]]]:
        version = max(i for i, (start, _) in enumerate(self._states) if start <= t)
        return version, self._states[version][1]

    def _hands_at(self, t: float) -> list[_Hand]:
        hands = []
        for act in self.script.acts:
            start, end = act.t - REACH_S, act.t + act.dwell + REACH_S
            if not start <= t < end:
                continue
            area = self.layout.area(act.seat)
            x0, y0, x1, y1 = area.rect
            centre = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
            edge = self._edge_point(act.seat, centre)
            if t < act.t:
                f = (t - start) / REACH_S
            elif t < act.t + act.dwell:
                f = 1.0
            else:
                f = (end - t) / REACH_S
            hands.append(_Hand(act.seat, tuple(edge + (centre - edge) * f)))
        return hands

    def _edge_point(self, seat: str, centre: np.ndarray) -> np.ndarray:
        w, h = self.layout.width_mm, self.layout.height_mm
        return {
            "S": np.array([centre[0], h + 150]),
            "N": np.array([centre[0], -150]),
            "E": np.array([w + 150, centre[1]]),
            "W": np.array([-150, centre[1]]),
        }[seat]

    # -- drawing ----------------------------------------------------------------------
    def _draw_felt(self, rng: np.random.Generator) -> np.ndarray:
        tw, th = self.layout.width_mm, self.layout.height_mm
        w, h = round(tw * self.ppm), round(th * self.ppm)
        grain = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 2.0)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        shade = 1.0 - 0.15 * (((xx - w / 2) / w) ** 2 + ((yy - h / 2) / h) ** 2)
        base = np.array([70, 110, 40], np.float32)  # green baize, BGR
        felt = (base[None, None, :] + 10 * grain[..., None]) * shade[..., None]
        felt = np.clip(felt, 0, 255).astype(np.uint8)
        for marker_id in range(4):
            corners = self.layout.marker_corners(marker_id)
            x, y = corners[0]
            size = self.layout.marker_mm
            q0 = round((x - QUIET_MM) * self.ppm), round((y - QUIET_MM) * self.ppm)
            q1 = round((x + size + QUIET_MM) * self.ppm), round((y + size + QUIET_MM) * self.ppm)
            cv2.rectangle(felt, q0, q1, (235, 235, 235), -1)
            px = round(size * self.ppm)
            m = cv2.cvtColor(marker_image(marker_id, px), cv2.COLOR_GRAY2BGR)
            mx, my = round(x * self.ppm), round(y * self.ppm)
            felt[my : my + px, mx : mx + px] = np.minimum(m, 235)
        return felt

    def _draw_floor(self, rng: np.random.Generator) -> np.ndarray:
        w, h = self.size
        noise = cv2.GaussianBlur(rng.normal(0, 1, (h // 4, w // 4)).astype(np.float32), (0, 0), 3.0)
        floor = np.clip(60 + 25 * cv2.resize(noise, (w, h)), 0, 255).astype(np.uint8)
        return cv2.merge([floor, (floor * 0.9).astype(np.uint8), (floor * 0.8).astype(np.uint8)])

    def _table(self, t: float) -> np.ndarray:
        version, contents = self._contents_at(t)
        if self._cache is None or self._cache[0] != version:
            table = self._felt.copy()
            for seat, items in contents.items():
                for placed in items:
                    self._paste(table, self.layout.area(seat), placed)
            self._cache = (version, table)
        return self._cache[1]

    def _paste(self, table: np.ndarray, area: Area, placed: Placed) -> None:
        ppm = self.ppm
        if placed.token is not None:
            bgr = token_image(placed.token, placed.item, ppm)
            rgba = cv2.cvtColor(bgr, cv2.COLOR_BGR2BGRA)
        elif placed.face_up:
            rgba = card_image(placed.item, self.design, round(CARD_MM[1] * ppm))
        else:
            rgba = _card_back(round(CARD_MM[0] * ppm), round(CARD_MM[1] * ppm))
        h, w = rgba.shape[:2]
        # item pixels -> area mm (seat-upright) -> table mm -> table pixels
        k = ppm
        rot = cv2.getRotationMatrix2D((w / 2, h / 2), placed.turn_deg, 1.0 / k)
        rot[:, 2] += (placed.u - w / 2, placed.v - h / 2)
        corners = area.corners()
        aw, ah = area.size_mm()
        to_table = cv2.getAffineTransform(np.float32([(0, 0), (aw, 0), (0, ah)]), corners[[0, 1, 3]])
        m = np.diag([k, k, 1.0]) @ np.vstack([to_table, (0, 0, 1)]) @ np.vstack([rot, (0, 0, 1)])
        quad = cv2.transform(np.float32([[(0, 0), (w, 0), (w, h), (0, h)]]), m[:2])[0]
        x0, y0 = np.floor(quad.min(axis=0)).astype(int)
        x1, y1 = np.ceil(quad.max(axis=0)).astype(int)
        x0, y0 = max(x0, 0), max(y0, 0)
        x1, y1 = min(x1, table.shape[1]), min(y1, table.shape[0])
        m[0, 2] -= x0
        m[1, 2] -= y0
        patch = cv2.warpAffine(rgba, m[:2], (x1 - x0, y1 - y0), flags=cv2.INTER_AREA, borderValue=(0, 0, 0, 0))
        alpha = patch[..., 3:4].astype(np.float32) / 255.0
        roi = table[y0:y1, x0:x1]
        roi[:] = (patch[..., :3] * alpha + roi * (1 - alpha)).astype(np.uint8)

    def _camera_at(self, t: float) -> np.ndarray:
        w, h = self.size
        total = np.eye(3)
        for bump in self.script.bumps:
            f = min(max((t - bump.t) / 0.2, 0.0), 1.0)
            if f == 0:
                continue
            move = cv2.getRotationMatrix2D((w / 2, h / 2), bump.turn_deg * f, 1.0)
            move[:, 2] += np.array(bump.shift_px) * f
            total = np.vstack([move, (0, 0, 1)]) @ total
        return total @ self.camera

    def _gain_at(self, t: float) -> float:
        times, gains = zip(*self.script.light)
        gain = float(np.interp(t, times, gains))
        if any(abs(t - f) < 0.5 / self.fps for f in self.script.flickers):
            gain *= 1.4
        return gain

    def _hand_polygons(self, hand: _Hand) -> list[np.ndarray]:
        """Palm and arm, in table mm."""
        cx, cy = hand.at
        edge = self._edge_point(hand.seat, np.array(hand.at))
        direction = edge - np.array(hand.at)
        length = np.linalg.norm(direction)
        angle = math.degrees(math.atan2(direction[1], direction[0]))
        palm = cv2.ellipse2Poly((round(cx), round(cy)), (60, 45), round(angle), 0, 360, 10).astype(np.float32)
        normal = np.array([-direction[1], direction[0]]) / max(length, 1e-6) * 40
        start = np.array(hand.at) + direction / max(length, 1e-6) * 40
        arm = np.float32([start + normal, start - normal, edge - normal * 1.3, edge + normal * 1.3])
        return [palm, arm]

    def frames(self) -> Iterator[RenderedFrame]:
        w, h = self.size
        count = int(self.script.duration * self.fps)
        scale_up = np.diag([1 / self.ppm, 1 / self.ppm, 1.0])
        for index in range(count):
            t = index / self.fps
            camera = self._camera_at(t)
            frame = self._floor.copy()
            cv2.warpPerspective(
                self._table(t), camera @ scale_up, (w, h), dst=frame,
                flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT,
            )
            hands = self._hands_at(t)
            covers = []
            for hand in hands:
                for poly in self._hand_polygons(hand):
                    covers.append(poly)
                    pix = cv2.perspectiveTransform(poly.reshape(-1, 1, 2).astype(np.float64), camera)
                    cv2.fillPoly(frame, [np.round(pix).astype(np.int32)], (120, 150, 205), cv2.LINE_AA)
            frame = cv2.convertScaleAbs(frame, alpha=self._gain_at(t))
            frame = cv2.subtract(cv2.add(frame, self._noise[index % 3]), self._noise[(index + 1) % 3])
            yield RenderedFrame(index, t, frame, self._visible(t, covers))

    def _visible(self, t: float, covers: list[np.ndarray]) -> dict[str, tuple[int, ...]]:
        _, contents = self._contents_at(t)
        seen: dict[str, tuple[int, ...]] = {}
        for area in self.layout.areas:
            corners = area.corners()
            aw, ah = area.size_mm()
            to_table = cv2.getAffineTransform(np.float32([(0, 0), (aw, 0), (0, ah)]), corners[[0, 1, 3]])
            cards = []
            for p in contents[area.seat]:
                if p.token is not None or not p.face_up:
                    continue
                # The corner index (top-left of the upright card) is what must show.
                index_at = np.array([p.u - CARD_MM[0] / 2 + 6, p.v - CARD_MM[1] / 2 + 10, 1.0])
                point = tuple(float(c) for c in to_table @ index_at)
                if all(cv2.pointPolygonTest(poly, point, False) < 0 for poly in covers):
                    cards.append(p.item)
            seen[area.seat] = tuple(sorted(cards))
        return seen


def _card_back(w: int, h: int) -> np.ndarray:
    """A plain card back (no face to read), BGRA."""
    back = np.zeros((h, w, 4), np.uint8)
    radius = max(2, w // 12)
    cv2.rectangle(back, (0, 0), (w - 1, h - 1), (245, 245, 245, 255), -1)
    inner = back[radius : h - radius, radius : w - radius]
    inner[:] = (140, 40, 30, 255)
    inner[::4, :, :3] = (170, 80, 60)
    return back


@dataclass(frozen=True)
class TruthReading:
    cards: list[int]
    detections: list = field(default_factory=list)
    confidence: float = 1.0
    uncertain: bool = False
    alternatives: list = field(default_factory=list)


class TruthReaders:
    """Card readers that answer with the renderer's ground truth for the current frame.

    They test segmentation logic (when areas are read, what counts as a play) apart from
    card reading: set :attr:`frame` before each frame is processed and pass
    :meth:`by_seat` to :class:`~.watcher.TableWatcher`.
    """

    def __init__(self, seats: tuple[str, ...] = ("S", "E", "N", "W")) -> None:
        self.frame: RenderedFrame | None = None
        self.seats = seats

    def by_seat(self) -> dict[str, "_TruthReader"]:
        return {seat: _TruthReader(self, seat) for seat in self.seats}


@dataclass(frozen=True)
class _TruthReader:
    source: TruthReaders
    seat: str

    def read(self, image_bgr: np.ndarray) -> TruthReading:
        if self.source.frame is None:
            raise RuntimeError("TruthReaders.frame is not set")
        return TruthReading(list(self.source.frame.visible[self.seat]))
