"""Procedural card designs drawn with OpenCV (no external art).

A design is a bundle of style choices (Hershey or outline font, index size and margins, suit-shape
proportions, colours, court and joker art). Drawing them from a seed gives an endless
stream of looks for domain randomisation, and fixed seeds give named designs that tests
and the benchmark can hold out. Every card is centrally symmetric like a real deck: the
top-left corner index is repeated, turned half a turn, at the bottom-right.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, replace

import cv2
import numpy as np

from recognizer.training.synth.fonts import text_mask
from referee.cards import BJ, SJ, Card, card_name, is_joker, rank_of, suit_of

Box = tuple[float, float, float, float]

_FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
    cv2.FONT_HERSHEY_PLAIN,
)
_RANK_TEXT = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
# Pip centres (x, y) in card fractions for ranks 2..10; y > 0.5 pips are drawn upside down.
_PIPS = {
    2: [(0.5, 0.2), (0.5, 0.8)],
    3: [(0.5, 0.2), (0.5, 0.5), (0.5, 0.8)],
    4: [(0.3, 0.2), (0.7, 0.2), (0.3, 0.8), (0.7, 0.8)],
    5: [(0.3, 0.2), (0.7, 0.2), (0.5, 0.5), (0.3, 0.8), (0.7, 0.8)],
    6: [(0.3, 0.2), (0.7, 0.2), (0.3, 0.5), (0.7, 0.5), (0.3, 0.8), (0.7, 0.8)],
    7: [(0.3, 0.2), (0.7, 0.2), (0.5, 0.35), (0.3, 0.5), (0.7, 0.5), (0.3, 0.8), (0.7, 0.8)],
    8: [(0.3, 0.2), (0.7, 0.2), (0.5, 0.35), (0.3, 0.5), (0.7, 0.5), (0.5, 0.65), (0.3, 0.8), (0.7, 0.8)],
    9: [(0.3, 0.2), (0.7, 0.2), (0.3, 0.4), (0.7, 0.4), (0.5, 0.5), (0.3, 0.6), (0.7, 0.6), (0.3, 0.8), (0.7, 0.8)],
    10: [(0.3, 0.2), (0.7, 0.2), (0.5, 0.3), (0.3, 0.4), (0.7, 0.4), (0.3, 0.6), (0.7, 0.6), (0.5, 0.7), (0.3, 0.8), (0.7, 0.8)],
}


@dataclass(frozen=True)
class ProceduralDesign:
    """Style parameters of one drawn deck; build random ones with :func:`procedural_design`."""

    name: str
    aspect: float  # width / height
    font: int
    italic: bool
    weight: float  # stroke thickness relative to the index height
    condense: float  # width squeeze of the rank glyphs
    rank_h: float  # rank glyph height / card height
    suit_h: float  # index suit height / card height
    margin_x: float
    margin_y: float
    gap: float  # between rank and suit, / card height
    corner: float  # corner radius / card width
    paper: tuple[int, int, int]
    border: tuple[int, int, int] | None
    red: tuple[int, int, int]
    black: tuple[int, int, int]
    four_colour: bool
    heart_round: float  # suit-shape proportions
    diamond_w: float
    club_r: float
    court_palette: tuple[tuple[int, int, int], ...]
    joker_style: int  # 0: stacked JOKER letters, 1: a star, 2: the word JOKER turned sideways, 3: the word across, 4: a star cut out of a disc, 5: a star in a ring
    ttf: str | None = None  # an outline font file for the glyphs instead of ``font`` (training designs)

    def render(self, card: Card, height_px: int) -> np.ndarray:
        return _render(self, card, height_px)

    def index_box(self, card: Card, height_px: int) -> Box:
        return _index_box(self, card, height_px)


_STAR_JOKERS = {1: "star", 4: "badge", 5: "ring"}
"""The joker styles that print a star emblem, and how (see ``_draw_star``)."""


def procedural_design(seed: int, name: str | None = None, fonts: tuple[str, ...] = ()) -> ProceduralDesign:
    """The design drawn from ``seed``: the same seed always gives the same deck.

    ``fonts`` (outline font files, see :mod:`recognizer.training.synth.fonts`) asks for the wider
    variety of training designs: most then print their glyphs in one of these fonts, and
    a quarter print the joker index as the word JOKER across the corner, and of those
    with a star, a third print it as a badge instead (a star cut out of a disc: decks print an
    emblem in light on dark as often as in dark on light) and a third inside a thin ring
    (an emblem framed, its tips near the frame). These are drawn
    after every other choice, so a seed's design is otherwise the same as without fonts
    (the named and held-out designs never change).
    """
    rng = np.random.default_rng(seed)

    def colour(lo: int, hi: int) -> tuple[int, int, int]:
        return tuple(int(v) for v in rng.integers(lo, hi, 3))

    red = (int(rng.integers(0, 60)), int(rng.integers(0, 50)), int(rng.integers(150, 235)))
    black = (int(rng.integers(0, 45)),) * 3
    design = ProceduralDesign(
        name=name or f"procedural-{seed}",
        aspect=float(rng.uniform(0.64, 0.73)),
        font=int(rng.choice(_FONTS)),
        italic=bool(rng.random() < 0.15),
        weight=float(rng.uniform(0.05, 0.16)),
        condense=float(rng.uniform(0.75, 1.15)),
        rank_h=float(rng.uniform(0.075, 0.15)),
        suit_h=float(rng.uniform(0.055, 0.10)),
        margin_x=float(rng.uniform(0.03, 0.08)),
        margin_y=float(rng.uniform(0.025, 0.06)),
        gap=float(rng.uniform(0.005, 0.02)),
        corner=float(rng.uniform(0.02, 0.12)),
        paper=(int(rng.integers(215, 256)), int(rng.integers(225, 256)), int(rng.integers(230, 256))),
        border=None if rng.random() < 0.5 else colour(60, 200),
        red=red,
        black=black,
        four_colour=bool(rng.random() < 0.12),
        heart_round=float(rng.uniform(0.8, 1.2)),
        diamond_w=float(rng.uniform(0.6, 0.85)),
        club_r=float(rng.uniform(0.24, 0.32)),
        court_palette=tuple(colour(0, 256) for _ in range(4)),
        joker_style=int(rng.integers(0, 3)),
    )
    if fonts:
        ttf = fonts[int(rng.integers(len(fonts)))] if rng.random() < 0.75 else None
        design = replace(design, ttf=ttf, joker_style=3 if rng.random() < 0.25 else design.joker_style)
        if design.joker_style == 1:
            design = replace(design, joker_style=int(rng.choice(tuple(_STAR_JOKERS))))
    return design


PROCEDURAL_DESIGNS: tuple[ProceduralDesign, ...] = tuple(
    procedural_design(seed, f"procedural-{i}") for i, seed in enumerate(range(1000, 1024))
)
"""Named procedural decks: tests and demos use these; training draws fresh random seeds."""
HELD_OUT_PROCEDURAL: tuple[ProceduralDesign, ...] = (
    procedural_design(777_001, "procedural-heldout-a"),
    procedural_design(777_002, "procedural-heldout-b"),
)
"""Never used for training: training seeds are drawn below 2**31 and skip these two."""


def suit_colour(design: ProceduralDesign, card: Card) -> tuple[int, int, int]:
    if card == BJ:
        return design.red
    if card == SJ:
        return design.black
    suit = suit_of(card)
    if design.four_colour:
        return (design.black, design.red, (170, 60, 20), (30, 120, 20))[suit]
    return design.red if suit in (1, 2) else design.black


def suit_polygon(design: ProceduralDesign, suit: int, w: float, h: float) -> list[np.ndarray]:
    """Filled polygons of a suit sign inside a ``w`` x ``h`` box at the origin."""
    t = np.linspace(0, 2 * math.pi, 64)
    if suit in (0, 1):  # spade and heart share the heart curve
        x = 16 * np.sin(t) ** 3
        y = -(13 * np.cos(t) - 5 * design.heart_round * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
        x = (x - x.min()) / (x.max() - x.min())
        y = (y - y.min()) / (y.max() - y.min())
        if suit == 1:
            return [np.stack([x * w, y * h], 1)]
        body = np.stack([x * w, (1 - y) * h * 0.82], 1)
        stem = np.array([[0.5 * w, 0.55 * h], [0.3 * w, h], [0.7 * w, h]])
        return [body, stem]
    if suit == 2:
        half = design.diamond_w * w / 2
        return [np.array([[w / 2, 0], [w / 2 + half, h / 2], [w / 2, h], [w / 2 - half, h / 2]])]
    r = design.club_r
    polys = []
    for cx, cy in ((0.5, r), (r, 0.55), (1 - r, 0.55)):
        polys.append(np.stack([(cx + r * np.cos(t)) * w, (cy + r * np.sin(t)) * h * 0.86], 1))
    polys.append(np.array([[0.5 * w, 0.45 * h], [0.3 * w, h], [0.7 * w, h]]))
    return polys


def _fill(img: np.ndarray, polys: list[np.ndarray], x: float, y: float, colour, flip: bool = False, box_h: float = 0) -> None:
    pts = []
    for p in polys:
        q = p.copy()
        if flip:
            q[:, 1] = box_h - q[:, 1]
            q[:, 0] = q[:, 0].max() + q[:, 0].min() - q[:, 0]
        pts.append(np.round((q + (x, y)) * 16).astype(np.int32))
    cv2.fillPoly(img, pts, colour + (255,), cv2.LINE_AA, shift=4)


def _text_mask(text: str, design: ProceduralDesign, h: int, w: int | None = None) -> np.ndarray:
    """A tight anti-aliased glyph mask of ``text`` resized to height ``h`` (and width ``w``)."""
    if design.ttf is not None:
        glyph = text_mask(design.ttf, text, 96)
    else:
        font = design.font | (cv2.FONT_ITALIC if design.italic else 0)
        scale = 3.0
        thick = max(1, round(design.weight * 90 * scale / 3))
        (tw, th), base = cv2.getTextSize(text, font, scale, thick)
        canvas = np.zeros((th + base + 2 * thick + 8, tw + 2 * thick + 8), np.uint8)
        cv2.putText(canvas, text, (thick + 4, th + thick + 4), font, scale, 255, thick, cv2.LINE_AA)
        ys, xs = np.nonzero(canvas > 40)
        glyph = canvas[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    if w is None:
        w = max(1, round(glyph.shape[1] / glyph.shape[0] * h * design.condense))
    return cv2.resize(glyph, (max(1, w), max(1, h)), interpolation=cv2.INTER_AREA)


def _stamp(img: np.ndarray, mask: np.ndarray, x: int, y: int, colour) -> None:
    h, w = mask.shape
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, img.shape[1]), min(y + h, img.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    a = mask[y0 - y : y1 - y, x0 - x : x1 - x, None].astype(np.float32) / 255
    region = img[y0:y1, x0:x1]
    region[..., :3] = (region[..., :3] * (1 - a) + np.array(colour, np.float32) * a).astype(np.uint8)
    region[..., 3] = np.maximum(region[..., 3], mask[y0 - y : y1 - y, x0 - x : x1 - x])


def _index_layout(design: ProceduralDesign, card: Card, height_px: int) -> list[tuple[str, float, float, float, float]]:
    """The parts of the top-left index as (kind, x, y, w, h) in pixels."""
    H = height_px
    W = design.aspect * H
    x0, y0 = design.margin_x * W, design.margin_y * H
    if is_joker(card):
        letter_h = design.rank_h * H * 0.5
        if design.joker_style in _STAR_JOKERS:
            s = design.rank_h * H * 1.1
            return [(_STAR_JOKERS[design.joker_style], x0, y0, s, s)]
        if design.joker_style == 2:
            return [("word", x0, y0, letter_h * 1.2, letter_h * 5.2)]
        if design.joker_style == 3:
            return [("across", x0, y0, letter_h * 3.6, letter_h * 0.9)]
        return [(f"letter{i}", x0, y0 + i * letter_h * 1.15, letter_h * 0.8, letter_h) for i in range(5)]
    rh = design.rank_h * H
    text = _RANK_TEXT[rank_of(card)]
    glyph_w = rh * design.condense * (1.25 if text == "10" else 0.72)
    sh = design.suit_h * H
    sw = sh * 0.9
    col = max(glyph_w, sw)
    return [
        ("rank", x0 + (col - glyph_w) / 2, y0, glyph_w, rh),
        ("suit", x0 + (col - sw) / 2, y0 + rh + design.gap * H, sw, sh),
    ]


def _index_box(design: ProceduralDesign, card: Card, height_px: int) -> Box:
    parts = _index_layout(design, card, height_px)
    pad = 0.01 * height_px
    return (
        min(p[1] for p in parts) - pad,
        min(p[2] for p in parts) - pad,
        max(p[1] + p[3] for p in parts) + pad,
        max(p[2] + p[4] for p in parts) + pad,
    )


def _draw_index(layer: np.ndarray, design: ProceduralDesign, card: Card, height_px: int) -> None:
    colour = suit_colour(design, card)
    for kind, x, y, w, h in _index_layout(design, card, height_px):
        if kind == "rank":
            _stamp(layer, _text_mask(_RANK_TEXT[rank_of(card)], design, round(h), round(w)), round(x), round(y), colour)
        elif kind == "suit":
            _fill(layer, suit_polygon(design, suit_of(card), w, h), x, y, colour)
        elif kind.startswith("letter"):
            _stamp(layer, _text_mask("JOKER"[int(kind[6:])], design, round(h), round(w)), round(x), round(y), colour)
        elif kind == "across":
            _stamp(layer, _text_mask("JOKER", design, round(h), round(w)), round(x), round(y), colour)
        elif kind == "word":
            word = _text_mask("JOKER", design, round(w), round(h))
            _stamp(layer, cv2.rotate(word, cv2.ROTATE_90_CLOCKWISE), round(x), round(y), colour)
        else:  # a star, a badge (the star cut out of a disc) or a star in a ring
            _draw_star(layer, kind, x, y, w, h, colour, design.paper)


def _draw_star(layer: np.ndarray, kind: str, x: float, y: float, w: float, h: float, colour: tuple[int, int, int], paper: tuple[int, int, int]) -> None:
    """A five-pointed star filling the box; ``badge`` cuts it in paper out of a disc of
    ``colour``, ``ring`` draws it smaller inside a thin circle (its tips just short of the ring)."""

    def polar(radius: np.ndarray | float, angles: np.ndarray) -> np.ndarray:
        return np.stack([(0.5 + radius * np.cos(angles)) * w, (0.5 + radius * np.sin(angles)) * h], 1)

    tips = np.linspace(0, 2 * math.pi, 11)[:-1] - math.pi / 2
    star = polar(np.where(np.arange(10) % 2 == 0, 0.5, 0.22) * {"star": 1.0, "badge": 0.8, "ring": 0.78}[kind], tips)
    around = np.linspace(0, 2 * math.pi, 48)
    if kind in ("badge", "ring"):
        _fill(layer, [polar(0.5, around)], x, y, colour)
    if kind == "ring":
        _fill(layer, [polar(0.44, around)], x, y, paper)
    _fill(layer, [star], x, y, paper if kind == "badge" else colour)


def _draw_centre(img: np.ndarray, design: ProceduralDesign, card: Card, rng: np.random.Generator) -> None:
    H, W = img.shape[:2]
    colour = suit_colour(design, card)
    if is_joker(card):
        cx0, cy0, cx1, cy1 = int(0.22 * W), int(0.2 * H), int(0.78 * W), int(0.8 * H)
        palette = [design.black, (110, 110, 110), (190, 190, 190)] if card == SJ else [design.red, (0, 190, 240), (200, 90, 30), (40, 150, 40)]
        art = np.zeros_like(img)
        for _ in range(14):
            c = palette[int(rng.integers(len(palette)))]
            centre = (int(rng.integers(cx0, cx1)), int(rng.integers(cy0, cy1)))
            axes = (int(rng.integers(3, max(4, W // 6))), int(rng.integers(3, max(4, H // 8))))
            cv2.ellipse(art, centre, axes, float(rng.uniform(0, 180)), 0, 360, c + (255,), -1, cv2.LINE_AA)
        # A printed deck keeps its picture off the corner indices (art drawn over the star
        # of the demo's own deck hid its big jokers from the reader): clear of both, with a margin.
        x0, y0, x1, y1 = _index_box(design, card, H)
        m = 0.03 * H
        clear = np.zeros((H, W, 1), bool)
        clear[max(0, int(y0 - m)) : int(y1 + m) + 1, max(0, int(x0 - m)) : int(x1 + m) + 1] = True
        clear |= clear[::-1, ::-1]
        img[...] = np.where((art[..., 3:] > 0) & ~clear, art, img)
        return
    rank = rank_of(card) + 2
    polys = suit_polygon(design, suit_of(card), 1.0, 1.0)
    if rank <= 10:
        ph = 0.13 * H
        pw = ph * 0.85
        for fx, fy in _PIPS[rank]:
            x, y = 0.18 * W + fx * 0.64 * W - pw / 2 + (0.5 - fx) * 0.02 * W, 0.1 * H + fy * 0.8 * H - ph / 2
            _fill(img, [p * (pw, ph) for p in polys], x, y, colour, flip=fy > 0.5, box_h=ph)
        return
    if rank == 14:  # ace
        s = 0.34 * H
        _fill(img, [p * (s * 0.85, s) for p in polys], (W - s * 0.85) / 2, (H - s) / 2, colour)
        return
    x0, y0, x1, y1 = int(0.2 * W), int(0.15 * H), int(0.8 * W), int(0.85 * H)
    pal = design.court_palette
    cv2.rectangle(img, (x0, y0), (x1, y1), pal[0] + (255,), -1)
    for i in range(10):
        c = pal[1 + i % 3]
        y = int(rng.integers(y0, y1))
        cv2.line(img, (x0, y), (x1, int(rng.integers(y0, y1))), c + (255,), max(1, H // 60), cv2.LINE_AA)
    letter = _text_mask("JQK"[rank - 11], design, int(0.3 * H))
    _stamp(img, letter, (W - letter.shape[1]) // 2, int(0.2 * H), colour)
    _stamp(img, cv2.rotate(letter, cv2.ROTATE_180), (W - letter.shape[1]) // 2, int(0.8 * H) - letter.shape[0], colour)
    cv2.rectangle(img, (x0, y0), (x1, y1), colour + (255,), max(1, H // 100))


def _render(design: ProceduralDesign, card: Card, height_px: int) -> np.ndarray:
    card_name(card)  # raises CardError for a bad code
    if height_px < 16:
        raise ValueError(f"card height {height_px} px is too small to draw (need >= 16)")
    H = int(height_px)
    W = round(design.aspect * H)
    img = np.zeros((H, W, 4), np.uint8)
    radius = max(1, round(design.corner * W))
    shape = np.zeros((H, W), np.uint8)
    cv2.rectangle(shape, (radius, 0), (W - 1 - radius, H - 1), 255, -1)
    cv2.rectangle(shape, (0, radius), (W - 1, H - 1 - radius), 255, -1)
    for cx, cy in ((radius, radius), (W - 1 - radius, radius), (radius, H - 1 - radius), (W - 1 - radius, H - 1 - radius)):
        cv2.circle(shape, (cx, cy), radius, 255, -1, cv2.LINE_AA)
    img[..., :3] = design.paper
    if design.border is not None:
        inset = max(2, round(0.035 * W))
        cv2.rectangle(img, (inset, inset), (W - 1 - inset, H - 1 - inset), design.border + (255,), max(1, H // 150))
    rng = np.random.default_rng(zlib.crc32(f"{design.name}:{card}".encode()))
    _draw_centre(img, design, card, rng)
    layer = np.zeros_like(img)
    _draw_index(layer, design, card, H)
    for piece in (layer, cv2.rotate(layer, cv2.ROTATE_180)):
        a = piece[..., 3:].astype(np.float32) / 255
        img[..., :3] = (img[..., :3] * (1 - a) + piece[..., :3] * a).astype(np.uint8)
    img[..., 3] = shape
    return img
