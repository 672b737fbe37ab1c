"""Rendered play-area scenes with exact labels of every visible corner index.

A scene is what the table camera shows of one play area after rectification: 1-10 cards
in a row sorted by rank (RULES.md P6), overlapping so each card's index shows (or, for
training only, a hand of 6-16 fanned), on cloth or wood, with the nuisances of a real hall
(perspective, blur, noise, JPEG, glare, shadows, hands, face-down cards, distractors). Everything is drawn from one seeded
generator, so ``render_scene(seed)`` is reproducible; which design each scene uses is
the caller's choice (held-out designs never reach training).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from recognizer.training.synth import Design, card_image
from recognizer.training.synth.designs import procedural_design
from referee.cards import DOUBLE_DECK, HEARTS, Card, make_card, rank_of

MIN_VISIBLE = 0.75
"""An index counts as shown when at least this share of it is uncovered."""


@dataclass(frozen=True)
class IndexLabel:
    """One visible corner index: its face, pixel box and whether it is upside down."""

    card: Card
    box: tuple[float, float, float, float]
    inverted: bool
    card_id: int  # which physical card of the scene it belongs to


@dataclass(frozen=True)
class Scene:
    image: np.ndarray  # BGR
    cards: tuple[Card, ...]  # the multiset laid face up, sorted
    labels: tuple[IndexLabel, ...]
    design: str
    hidden: tuple[IndexLabel, ...] = ()
    """Corner indices of laid cards that do not count as shown (covered, or cut by the image
    edge): neither a card to read nor a clean negative for training."""


def random_hand(rng: np.random.Generator, n: int) -> list[Card]:
    """``n`` cards as players lay them: often same ranks, runs, duplicates and wildcards."""
    style = rng.random()
    deck = list(DOUBLE_DECK)
    if style < 0.3:  # same rank (pairs, trips, bombs), both decks
        rank = int(rng.integers(0, 13))
        pool = [c for c in deck if rank_of(c) == rank] + [c for c in deck if rank_of(c) >= 13]
        cards = [pool[i] for i in rng.choice(len(pool), min(n, len(pool)), replace=False)]
    elif style < 0.55:  # a run
        start = int(rng.integers(0, max(1, 13 - n)))
        cards = [make_card((start + i) % 13, int(rng.integers(0, 4))) for i in range(n)]
    else:
        cards = [deck[i] for i in rng.choice(len(deck), n, replace=False)]
    if rng.random() < 0.3:  # a heart wildcard or two in the play
        level = int(rng.integers(0, 13))
        for i in rng.choice(len(cards), min(len(cards), int(rng.integers(1, 3))), replace=False):
            cards[i] = make_card(level, HEARTS)
    return sorted(cards)


def _background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    base = rng.integers(0, 256, 3).astype(np.float32)
    kind = rng.integers(0, 4)
    if kind == 0:  # felt / cloth: fine noise and a weave
        noise = rng.normal(0, rng.uniform(3, 18), (h, w, 1))
        yy, xx = np.mgrid[0:h, 0:w]
        period = rng.uniform(2, 6)
        weave = (np.sin(xx / period) * np.sin(yy / period))[..., None] * rng.uniform(0, 12)
        img = base + noise + weave
    elif kind == 1:  # wood grain
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        angle = rng.uniform(0, math.pi)
        u = xx * math.cos(angle) + yy * math.sin(angle)
        v = -xx * math.sin(angle) + yy * math.cos(angle)
        grain = np.sin(u / rng.uniform(3, 12) + 3 * np.sin(v / rng.uniform(30, 120)))
        wood = np.array([rng.uniform(20, 90), rng.uniform(60, 140), rng.uniform(110, 210)], np.float32)
        img = wood + grain[..., None] * rng.uniform(10, 35) + rng.normal(0, 4, (h, w, 1))
    elif kind == 2:  # blotchy low-frequency texture
        small = rng.normal(0, 1, (max(2, h // 32), max(2, w // 32), 3)).astype(np.float32)
        img = base + cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC) * rng.uniform(5, 40)
    else:  # plain, with a gradient
        g = np.linspace(rng.uniform(-30, 0), rng.uniform(0, 30), w, dtype=np.float32)[None, :, None]
        img = base + g + rng.normal(0, 3, (h, w, 1))
    return np.clip(img, 0, 255).astype(np.uint8)


def _distractors(img: np.ndarray, rng: np.random.Generator) -> None:
    h, w = img.shape[:2]
    for _ in range(int(rng.integers(0, 5))):
        colour = tuple(int(v) for v in rng.integers(0, 256, 3))
        kind = rng.integers(0, 4)
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        s = int(rng.integers(5, max(6, h // 4)))
        if kind == 0:
            cv2.circle(img, (x, y), s, colour, -1, cv2.LINE_AA)
        elif kind == 1:
            cv2.rectangle(img, (x, y), (x + s, y + int(s * rng.uniform(0.3, 2))), colour, -1)
        elif kind == 2:
            cv2.line(img, (x, y), (int(rng.integers(0, w)), int(rng.integers(0, h))), colour, int(rng.integers(1, 6)), cv2.LINE_AA)
        else:
            text = "".join(chr(c) for c in rng.integers(65, 91, int(rng.integers(1, 5))))
            cv2.putText(img, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, rng.uniform(0.4, 1.5), colour, 2, cv2.LINE_AA)


def _card_back(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    img = np.zeros((h, w, 4), np.uint8)
    colour = tuple(int(v) for v in rng.integers(0, 200, 3))
    img[..., :3] = (240, 240, 240)
    m = max(2, w // 14)
    cv2.rectangle(img, (m, m), (w - m, h - m), colour + (255,), -1)
    step = max(3, w // int(rng.integers(6, 14)))
    for k in range(-h, w, step):
        cv2.line(img, (k, 0), (k + h, h), (255, 255, 255, 255), 1, cv2.LINE_AA)
    img[..., 3] = 255
    return img


def _paste(canvas: np.ndarray, owner: np.ndarray, rgba: np.ndarray, M: np.ndarray, ident: int) -> None:
    h, w = canvas.shape[:2]
    warped = cv2.warpAffine(rgba, M, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    a = warped[..., 3:].astype(np.float32) / 255
    canvas[:] = (canvas * (1 - a) + warped[..., :3] * a).astype(np.uint8)
    owner[warped[..., 3] > 127] = ident


def _hand(canvas: np.ndarray, owner: np.ndarray, rng: np.random.Generator) -> None:
    """A skin-coloured palm and fingers reaching in from an edge."""
    h, w = canvas.shape[:2]
    skin = (int(rng.integers(60, 180)), int(rng.integers(100, 200)), int(rng.integers(150, 240)))
    mask = np.zeros((h, w), np.uint8)
    side = rng.integers(0, 4)
    cx, cy = [(int(rng.integers(0, w)), 0), (int(rng.integers(0, w)), h), (0, int(rng.integers(0, h))), (w, int(rng.integers(0, h)))][side]
    r = int(h * rng.uniform(0.15, 0.35))
    cv2.ellipse(mask, (cx, cy), (r, int(r * 1.2)), float(rng.uniform(0, 180)), 0, 360, 255, -1)
    ang = math.atan2(h / 2 - cy, w / 2 - cx)
    for k in range(int(rng.integers(1, 5))):
        a = ang + (k - 1.5) * 0.25
        x1, y1 = int(cx + math.cos(a) * r * 2.0), int(cy + math.sin(a) * r * 2.0)
        cv2.line(mask, (cx, cy), (x1, y1), 255, max(3, r // 3), cv2.LINE_AA)
    a = (mask.astype(np.float32) / 255)[..., None]
    shade = np.clip(np.array(skin, np.float32) + rng.normal(0, 6, (h, w, 1)), 0, 255)
    canvas[:] = (canvas * (1 - a) + shade * a).astype(np.uint8)
    owner[mask > 127] = -2


def _photometric(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape[:2]
    out = img.astype(np.float32)
    if rng.random() < 0.5:  # shadow: a dark half-plane with a soft edge
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        a = rng.uniform(0, 2 * math.pi)
        d = (xx - rng.uniform(0, w)) * math.cos(a) + (yy - rng.uniform(0, h)) * math.sin(a)
        out *= (1 - rng.uniform(0.15, 0.5) * 0.5 * (1 + np.tanh(d / rng.uniform(6, 80))))[..., None]
    if rng.random() < 0.35:  # glare spot
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        s = rng.uniform(0.05, 0.3) * w
        g = np.exp(-((xx - rng.uniform(0, w)) ** 2 + (yy - rng.uniform(0, h)) ** 2) / (2 * s * s))
        out += g[..., None] * rng.uniform(40, 140)
    out = out * rng.uniform(0.6, 1.3) + rng.uniform(-35, 35)  # exposure
    out *= rng.uniform(0.85, 1.15, 3)  # white balance
    out = np.clip(out, 0, 255).astype(np.uint8)
    k = rng.random()
    if k < 0.25:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.5, 1.6))
    elif k < 0.4:  # motion blur
        n = int(rng.integers(3, 8))
        kernel = np.zeros((n, n), np.float32)
        kernel[n // 2, :] = 1 / n
        rot = cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), float(rng.uniform(0, 180)), 1)
        out = cv2.filter2D(out, -1, cv2.warpAffine(kernel, rot, (n, n)))
    if rng.random() < 0.6:
        out = np.clip(out + rng.normal(0, rng.uniform(2, 10), out.shape), 0, 255).astype(np.uint8)
    if rng.random() < 0.7:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 95))])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


Pose = Callable[[int], tuple[float, float, float]]
"""Card ``i``'s centre (x, y) and turn (degrees, clockwise on the image), drawn as the card is laid."""


def _row_layout(rng: np.random.Generator, w: int, h: int, n: int, aspect: float) -> tuple[int, float, float, Pose, range]:
    """A row of ``n`` cards sorted as laid, overlapping so each index shows: the card height
    and width, the row's angle, each card's pose and the order they are laid in."""
    # Card size: the row must fit the canvas width.
    step_frac = rng.uniform(0.22, 0.55) if n > 1 else 0.0
    if rng.random() < 0.15:
        step_frac = rng.uniform(0.6, 1.15)  # spread out, little or no overlap
    card_h_max = min(h * 0.8, w * 0.9 / aspect / (1 + step_frac * (n - 1)))
    card_h = int(max(40, card_h_max * rng.uniform(0.7, 1.0)))
    card_w = card_h * aspect
    row_angle = rng.normal(0, 8) if rng.random() < 0.8 else rng.uniform(-30, 30)
    if rng.random() < 0.08:
        row_angle += 180  # seen from the far side: cards are symmetric, indices swap corners
    fan = rng.uniform(2, 7) if rng.random() < 0.2 else 0.0
    step = step_frac * card_w
    total_w = card_w + step * (n - 1)
    cx0 = w / 2 + rng.uniform(-1, 1) * max(0, (w - total_w * 1.0) / 2 - 5)
    cy0 = h / 2 + rng.uniform(-1, 1) * max(0, (h - card_h * 1.1) / 2 - 5)
    reverse_stack = rng.random() < 0.2  # later cards slid under earlier ones
    order = range(n - 1, -1, -1) if reverse_stack else range(n)
    theta = math.radians(row_angle)

    def pose(i: int) -> tuple[float, float, float]:
        off = (i - (n - 1) / 2) * step
        ang = row_angle + fan * (i - (n - 1) / 2) + rng.normal(0, 1.5)
        cx = cx0 + off * math.cos(theta) + rng.normal(0, 0.02 * card_h)
        cy = cy0 + off * math.sin(theta) + rng.normal(0, 0.02 * card_h) + fan * 0.02 * card_h * abs(i - (n - 1) / 2) ** 2
        return cx, cy, ang

    return card_h, card_w, row_angle, pose, order


def _fan_layout(rng: np.random.Generator, w: int, h: int, n: int, aspect: float) -> tuple[int, float, float, Pose, range]:
    """A hand held or laid as a fan: each card turned about a pivot below the hand, a few
    degrees from the last, so that only a sliver with its index shows (the upper-left
    corner, the next card on top), the indices 0.15-0.4 of a card's width apart. Why:
    photographs of whole deals show hands of 13 cards fanned so, each card at its own angle,
    and the detector, trained on rows of at most 10 cards at one angle (one in five slightly
    fanned), found no box on most of the indices it missed there. Returns what
    :func:`_row_layout` does, with the fan's middle angle for the row's."""
    radius = rng.uniform(0.25, 1.2)  # pivot to a card's centre, in card heights
    spacing = rng.uniform(0.15, 0.4) * aspect  # between neighbouring indices, in card heights
    step = spacing / (radius + 0.45)  # radians between cards: the index is about 0.45 above the centre
    middle = rng.normal(0, 12) if rng.random() < 0.8 else rng.uniform(-40, 40)
    if rng.random() < 0.08:
        middle += 180
    turns = [math.radians(middle) + (i - (n - 1) / 2) * step for i in range(n)]
    half = np.array([[-aspect / 2, -0.5], [aspect / 2, -0.5], [aspect / 2, 0.5], [-aspect / 2, 0.5]])
    corners = np.concatenate([
        half @ np.array([[math.cos(t), math.sin(t)], [-math.sin(t), math.cos(t)]]) + (radius * math.sin(t), -radius * math.cos(t)) for t in turns
    ])  # in card heights, the pivot at the origin
    lo, hi = corners.min(0), corners.max(0)
    span = hi - lo
    card_h = int(max(40, min(w * 0.95 / span[0], h * 0.95 / span[1]) * rng.uniform(0.6, 1.0)))
    px = (w - span[0] * card_h) / 2 * (1 + rng.uniform(-1, 1)) - lo[0] * card_h
    py = (h - span[1] * card_h) / 2 * (1 + rng.uniform(-1, 1)) - lo[1] * card_h

    def pose(i: int) -> tuple[float, float, float]:
        t = turns[i] + math.radians(rng.normal(0, 1.0))
        return (px + card_h * radius * math.sin(t) + rng.normal(0, 0.01 * card_h),
                py - card_h * radius * math.cos(t) + rng.normal(0, 0.01 * card_h), math.degrees(t))

    return card_h, card_h * aspect, middle, pose, range(n)


def render_scene(
    seed: int,
    design: Design | Callable[[np.random.Generator], Design] | None = None,
    size: tuple[int, int] | None = None,
    cards: Sequence[Card] | None = None,
    fanned: bool = False,
) -> Scene:
    """One labelled play-area image from ``seed``.

    ``design`` is a fixed design, a function drawing one from the scene's generator, or
    ``None`` for a fresh random procedural design; ``size`` is (width, height). ``fanned``
    lays a held hand instead of a row (:func:`_fan_layout`).
    """
    rng = np.random.default_rng(seed)
    if design is None:
        deck = procedural_design(int(rng.integers(0, 2**31 - 1)))
    elif callable(design) and not hasattr(design, "render"):
        deck = design(rng)
    else:
        deck = design
    w, h = size or (int(rng.integers(360, 720)), int(rng.integers(200, 400)))
    n = len(cards) if cards is not None else int(rng.integers(6, 17)) if fanned else int(min(10, 1 + rng.geometric(0.22)))
    faces = list(cards) if cards is not None else random_hand(rng, n)
    n = len(faces)  # a hand of one rank holds at most its eight cards and the jokers
    if cards is None and rng.random() < 0.1:
        rng.shuffle(faces)  # a careless row, out of rank order
    canvas = _background(rng, h, w)
    _distractors(canvas, rng)
    owner = np.full((h, w), -1, np.int32)

    layout = _fan_layout if fanned else _row_layout
    card_h, card_w, row_angle, pose, order = layout(rng, w, h, n, deck.aspect)

    if rng.random() < 0.2:  # face-down cards lying about (a stack, someone's hand)
        for _ in range(int(rng.integers(1, 3))):
            back = _card_back(rng, card_h, int(card_w))
            M = cv2.getRotationMatrix2D((card_w / 2, card_h / 2), float(rng.uniform(0, 360)), 1.0)
            M[:, 2] += (rng.uniform(-card_w, w), rng.uniform(-card_h, h))
            _paste(canvas, owner, back, M, -3)

    placed: list[tuple[int, np.ndarray, Card]] = []
    for i in order:
        face = faces[i]
        img = deck.render(face, card_h)
        cx, cy, ang = pose(i)
        M = cv2.getRotationMatrix2D((img.shape[1] / 2, img.shape[0] / 2), -ang, 1.0)
        M[:, 2] += (cx - img.shape[1] / 2, cy - img.shape[0] / 2)
        _paste(canvas, owner, img, M, i)
        placed.append((i, M, face))

    if rng.random() < 0.25:
        _hand(canvas, owner, rng)

    labels, hidden = [], []
    upside = math.cos(math.radians(row_angle)) < 0
    for i, M, face in placed:
        x0, y0, x1, y1 = deck.index_box(face, card_h)
        ch, cw = card_h, round(card_w)
        for inverted, quad in ((False, [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]), (True, [(cw - x, ch - y) for x, y in [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]])):
            pts = np.array(quad, np.float32) @ M[:, :2].T + M[:, 2]
            bx0, by0 = pts.min(0)
            bx1, by1 = pts.max(0)
            box = (float(bx0), float(by0), float(bx1), float(by1))
            if bx0 < 0 or by0 < 0 or bx1 > w or by1 > h:
                hidden.append(IndexLabel(face, box, inverted != upside, i))
                continue
            mask = np.zeros((int(by1 - by0) + 3, int(bx1 - bx0) + 3), np.uint8)
            cv2.fillPoly(mask, [np.round(pts - (int(bx0), int(by0))).astype(np.int32)], 1)
            region = owner[int(by0) : int(by0) + mask.shape[0], int(bx0) : int(bx0) + mask.shape[1]]
            m = mask[: region.shape[0], : region.shape[1]].astype(bool)
            shown = m.sum() > 0 and (region[m] == i).mean() >= MIN_VISIBLE
            (labels if shown else hidden).append(IndexLabel(face, box, inverted != upside, i))

    image = canvas
    if rng.random() < 0.6:  # camera perspective left after rectification
        j = 0.06 * min(w, h)
        src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        dst = (src + rng.uniform(-j, j, (4, 2))).astype(np.float32)
        P = cv2.getPerspectiveTransform(src, dst)
        image = cv2.warpPerspective(canvas, P, (w, h), borderMode=cv2.BORDER_REFLECT)

        def warp(lab: IndexLabel) -> IndexLabel:
            x0, y0, x1, y1 = lab.box
            pts = cv2.perspectiveTransform(np.float32([[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]]), P)[0]
            (bx0, by0), (bx1, by1) = pts.min(0), pts.max(0)
            return IndexLabel(lab.card, (float(bx0), float(by0), float(bx1), float(by1)), lab.inverted, lab.card_id)

        moved = [warp(lab) for lab in labels]
        labels = [lab for lab in moved if lab.box[0] >= 0 and lab.box[1] >= 0 and lab.box[2] <= w and lab.box[3] <= h]
        hidden = [warp(lab) for lab in hidden] + [lab for lab in moved if lab not in labels]
    image = _photometric(image, rng)
    return Scene(image, tuple(faces), tuple(labels), deck.name, tuple(hidden))


def tossed_scene(seed: int, design: Design, cards: Sequence[Card], angles: Sequence[float] | None = None,
                 height: int | None = None) -> tuple[np.ndarray, list[Card]]:
    """``cards`` side by side, apart, each turned about its centre by its own angle
    (degrees, counter-clockwise; ``None``: drawn between -60 and 60), on a background of
    ``seed``, as cards tossed onto a table lie; returns the image and the cards, sorted.

    Why beside :func:`render_scene`: a row's cards share one angle, which the reader's
    views find; tossed and fanned cards each lie at their own, and the reader must read an
    index lying up to 45 degrees off both of its views (``bench/recognizer.py --tossed``)."""
    rng = np.random.default_rng(seed)
    height = height or int(rng.integers(120, 190))
    angles = list(angles) if angles is not None else [float(a) for a in rng.uniform(-60, 60, len(cards))]
    pitch = int(1.25 * height)
    w, h = pitch * len(cards), int(1.5 * height)
    canvas = _background(rng, h, w)
    owner = np.full((h, w), -1, np.int32)
    for k, (card, angle) in enumerate(zip(cards, angles)):
        face = card_image(card, design, height)
        fh, fw = face.shape[:2]
        m = cv2.getRotationMatrix2D((fw / 2, fh / 2), angle, 1.0)
        m[:, 2] += ((k + 0.5) * pitch - fw / 2 + rng.normal(0, 0.03 * height), (h - fh) / 2 + rng.normal(0, 0.03 * height))
        _paste(canvas, owner, face, m, k)
    return _photometric(canvas, rng), sorted(cards)
