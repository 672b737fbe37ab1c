"""Card faces from photographs of a real deck: a design the renderers draw like any other.

A folder holds one straightened photo of each face, the face filling the frame, named by
the face or ending in it (``7H.jpg``, ``TS.png``, ``bidly_card_QD.jpg``). A deck is often
photographed without its jokers: those not there are drawn from a packaged design
(:data:`JOKER_DESIGN`) and named as borrowed, so whoever uses the deck can say so. The
enrolment of a deck (:mod:`recognizer.training.enroll`) and the simulated tables of the
demo and the benchmarks (``--deck-photos DIR``) read the folder the same way.

A photo at the table's scale is sharper and more evenly lit than a table camera sees a card
(and a borrowed joker is a crisp render): :class:`PhotoDeck` draws every face through
:func:`camera_look`, a soft light gradient, a slight colour cast and a blur of about a pixel
at the size drawn, each drawn from the face's own seeded generator so a deck looks the
same on every frame and every run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

import cv2
import numpy as np

from recognizer.training.synth.decks import RENDER_H, find_index_boxes
from recognizer.training.synth.designs import Box
from referee.cards import BJ, FACES, SJ, Card, CardError, card_name, parse_card

FACE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
JOKER_DESIGN = "procedural-0"
"""The packaged design whose jokers stand in for a deck photographed without its own."""
CORNER_RADIUS = 0.045
"""The rounded corner of a photographed face, as a share of its height (a photo's corners are background)."""
NOTICE_NAMES = re.compile(r"^(licen[cs]e|copying|notice)", re.IGNORECASE)
LIGHT_SPREAD = (0.05, 0.25)
"""How much darker one edge of a face is than the other (a lamp to one side of the table)."""
CAST = 0.04
"""Largest change of one colour channel's gain (white balance)."""
BLUR_PX = (0.4, 0.9)
"""Gaussian blur sigma, pixels at the size drawn: a table camera's focus and motion."""


class FacesError(ValueError):
    """A folder of faces that cannot be used: says which files or faces are wrong."""


def face_of(stem: str) -> Card | None:
    """The face a file is named for: the whole stem or its last part after ``_``, ``-`` or a space."""
    for token in (stem, re.split(r"[_\- ]", stem)[-1]):
        try:
            return parse_card(token)
        except CardError:
            continue
    return None


def read_faces(folder: Path) -> tuple[dict[Card, np.ndarray], list[Card]]:
    """The 54 face images of ``folder`` (BGR) and which jokers were not there but borrowed
    from :data:`JOKER_DESIGN`; any other face missing is an error naming it."""
    from recognizer.images import ImageError, load_image

    folder = Path(folder)
    if not folder.is_dir():
        raise FacesError(f"no such folder of faces: {folder}")
    faces: dict[Card, np.ndarray] = {}
    unknown = []
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in FACE_SUFFIXES:
            continue
        card = face_of(path.stem)
        if card is None:
            unknown.append(path.name)
            continue
        if card in faces:
            raise FacesError(f"two images of {card_name(card)} in {folder}")
        try:
            faces[card] = load_image(path)
        except ImageError as exc:
            raise FacesError(str(exc)) from None
    missing = [card_name(c) for c in FACES if c not in faces and c not in (SJ, BJ)]
    if missing:
        extra = f"; names not understood: {', '.join(unknown)}" if unknown else ""
        raise FacesError(f"faces missing in {folder}: {', '.join(missing)} (one image per face, named like 7H.png, "
                         f"TS.png or ending in the face, deck_TS.jpg; SJ.png, BJ.png optional){extra}")
    borrowed = [c for c in (SJ, BJ) if c not in faces]
    faces.update(faces_of_design(joker_design(), borrowed))
    return faces, borrowed


def joker_design():
    from recognizer.training.synth import PROCEDURAL_DESIGNS

    return next(d for d in PROCEDURAL_DESIGNS if d.name == JOKER_DESIGN)


def faces_of_design(design, cards: Iterable[Card] = FACES) -> dict[Card, np.ndarray]:
    """A rendered design's faces (all 54 by default) as straightened photos of them would show: on white."""
    out = {}
    for card in cards:
        face = design.render(card, RENDER_H).astype(np.float32)
        a = face[..., 3:] / 255.0
        out[card] = (face[..., :3] * a + 255 * (1 - a)).astype(np.uint8)
    return out


def card_shaped(face_bgr: np.ndarray) -> np.ndarray:
    """A face as the renderers composite it: BGRA, alpha cut to a rounded card."""
    h, w = face_bgr.shape[:2]
    alpha = np.zeros((h, w), np.uint8)
    r = max(1, round(CORNER_RADIUS * h))
    cv2.rectangle(alpha, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(alpha, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(alpha, (cx, cy), r, 255, -1)
    return np.dstack([face_bgr, alpha])


def licence_notices(folder: Path) -> tuple[Path, ...]:
    """Licence files beside the photographs: in ``folder`` or its parent, named LICENSE,
    LICENCE, COPYING or NOTICE (any suffix), or inside a ``LICENSES`` folder there."""
    found = []
    for place in (folder, folder.parent):
        for path in sorted(place.iterdir()) if place.is_dir() else ():
            if path.is_file() and NOTICE_NAMES.match(path.name):
                found.append(path)
            elif path.is_dir() and path.name.upper() in ("LICENSES", "LICENCES"):
                found += sorted(p for p in path.iterdir() if p.is_file())
    return tuple(found)


def camera_look(face_bgra: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``face_bgra`` lit and blurred as a table camera shows a card (the alpha untouched)."""
    h, w = face_bgra.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    angle = rng.uniform(0, 2 * np.pi)
    along = ((xx - w / 2) * np.cos(angle) + (yy - h / 2) * np.sin(angle)) / max(w, h)  # -0.5 .. 0.5 or so
    light = 1.0 - rng.uniform(*LIGHT_SPREAD) * (0.5 + along)
    colour = face_bgra[..., :3].astype(np.float32) * light[..., None] * rng.uniform(1 - CAST, 1 + CAST, 3)
    colour = cv2.GaussianBlur(np.clip(colour, 0, 255).astype(np.uint8), (0, 0), rng.uniform(*BLUR_PX))
    return np.dstack([colour, face_bgra[..., 3]])


class PhotoDeck:
    """A deck drawn from photographs of its faces (:func:`read_faces`), for the table renderer
    and the scene renderer: faces at their photographed aspect, rounded, lit and blurred
    (:func:`camera_look`); index boxes from each face's ink near the top-left corner
    (:func:`~recognizer.training.synth.decks.find_index_boxes`)."""

    def __init__(self, name: str, faces: dict[Card, np.ndarray], borrowed: Iterable[Card] = (),
                 folder: Path | None = None, seed: int = 0) -> None:
        self.name = name
        self.folder = folder
        self.notices = licence_notices(folder) if folder is not None else ()
        self.borrowed = tuple(borrowed)
        self.seed = seed
        own = [img for card, img in faces.items() if card not in self.borrowed]
        self.aspect = float(np.median([img.shape[1] / img.shape[0] for img in own]))
        size = (round(self.aspect * RENDER_H), RENDER_H)
        self._faces = {card: card_shaped(cv2.resize(img, size, interpolation=cv2.INTER_AREA)) for card, img in faces.items()}

    @classmethod
    def from_folder(cls, folder: Path, seed: int = 0) -> PhotoDeck:
        folder = Path(folder)
        faces, borrowed = read_faces(folder)
        return cls(f"photos:{folder.name}", faces, borrowed, folder, seed)

    def render(self, card: Card, height_px: int) -> np.ndarray:
        face = cv2.resize(self._faces[card], (max(1, round(self.aspect * height_px)), height_px),
                          interpolation=cv2.INTER_AREA)
        return camera_look(face, np.random.default_rng((self.seed, card)))

    @cached_property
    def _boxes(self) -> dict[Card, Box]:
        """Each face's index box in card fractions, found when first asked for: the table
        renderer never asks, so a deck whose ink hides its index (a frame touching it) still
        draws; the jokers borrowed take their design's boxes."""
        found = find_index_boxes({c: f for c, f in self._faces.items() if c not in self.borrowed})
        plain = [box for card, box in found.items() if card not in (SJ, BJ)]
        if len(plain) < 26:
            raise FacesError(f"the corner index was found on only {len(plain)} of 52 faces of {self.name}: are the "
                             f"photos upright, straightened and filling the frame?")
        typical = tuple(float(v) for v in np.median(np.array(plain), 0))
        boxes: dict[Card, Box] = {card: found.get(card, typical) for card in self._faces}
        design = joker_design()
        for card in self.borrowed:
            x0, y0, x1, y1 = design.index_box(card, RENDER_H)
            dw = design.aspect * RENDER_H
            boxes[card] = (x0 / dw, y0 / RENDER_H, x1 / dw, y1 / RENDER_H)
        return boxes

    def index_box(self, card: Card, height_px: int) -> Box:
        x0, y0, x1, y1 = self._boxes[card]
        w = round(self.aspect * height_px)
        return (x0 * w, y0 * height_px, x1 * w, y1 * height_px)

    def describe(self) -> str:
        """One line for a person: where the faces come from, what was borrowed, the licence."""
        own = len(self._faces) - len(self.borrowed)
        line = f"cards drawn from {own} photographed faces in {self.folder or self.name}"
        if self.borrowed:
            line += f" ({' and '.join(card_name(c) for c in self.borrowed)} from the packaged design {JOKER_DESIGN!r})"
        if self.notices:
            return f"{line}; licence: {', '.join(str(p) for p in self.notices)}"
        return f"{line}; no licence notice found beside them (keep the photos' licence with them)"
