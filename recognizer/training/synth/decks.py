"""Real deck designs from Debian and npm packages, rendered at training time (never committed).

``prepare_decks()`` installs the Debian packages when it may (root with apt-get) and
fetches the npm one with ``npm pack``, cuts every card out of the SVG sprite sheets (or
renders the one-per-card SVGs) with ``rsvg-convert`` into a cache directory, and
finds each deck's corner-index box from its ink. Only decks whose indices are the
standard A K Q J 10 9 … 2 at the top-left corner are used (see :data:`DECKS`); decks
without jokers borrow procedural ones. :data:`HELD_OUT` decks are for evaluation only.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import tarfile
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from recognizer.training.synth.designs import Box, procedural_design
from referee.cards import BJ, FACES, Card, card_name, is_joker, rank_of, suit_of

APT_PACKAGES = ("gnome-cards-data", "kdegames-card-data-kf5", "librsvg2-bin")
GNOME_DIR = Path("/usr/share/aisleriot/cards")
KDE_DIR = Path("/usr/share/carddecks")
RENDER_H = 320


@dataclass(frozen=True)
class DeckSource:
    """One packaged deck: where it is, its id scheme, licence, and whether indices are standard."""

    name: str
    package: str
    file: str
    licence: str
    standard: bool
    note: str = ""


_G, _K = "gnome-cards-data", "kdegames-card-data-kf5"
_N = "npm:@heruka_urgyen/react-playing-cards@0.5.0"  # Adrian Kennard's CC0 cards, one SVG per card
DECKS: tuple[DeckSource, ...] = (
    DeckSource("anglo", _G, "anglo.svgz", "GPL-3+", True),
    DeckSource("anglo_bitmap", _G, "anglo_bitmap.svgz", "GPL-3+", True),
    DeckSource("anglo_modern", _G, "anglo_modern.svgz", "GPL-3+", True),
    DeckSource("anglo_modern_4_color", _G, "anglo_modern_4_color.svgz", "GPL-3+", True, "four-colour suits"),
    DeckSource("anglo_poker", _G, "anglo_poker.svgz", "GPL-3+", True),
    DeckSource("bellot", _G, "bellot.svgz", "GPL-3+", True),
    DeckSource("gnomangelo", _G, "gnomangelo.svgz", "GPL-3+", True),
    DeckSource("gnomangelo_bitmap", _G, "gnomangelo_bitmap.svgz", "GPL-3+", True),
    DeckSource("guyenne-classic", _G, "guyenne-classic.svgz", "GPL-3+", False, "rank index at the top-right"),
    DeckSource("neoclassical", _G, "neoclassical.svgz", "GPL-3+", True),
    DeckSource("neoclassical_4_color", _G, "neoclassical_4_color.svgz", "GPL-3+", True, "four-colour suits"),
    DeckSource("orell", _G, "orell.svgz", "GPL-3+", True),
    DeckSource("ornamental", _G, "ornamental.svgz", "GPL-3+", True),
    DeckSource("paris", _G, "paris.svgz", "GPL-3+", True),
    DeckSource("plastic", _G, "plastic.svgz", "GPL-3+", False, "some card sprites do not render on their own"),
    DeckSource("simplistic", _G, "simplistic.svgz", "GPL-3+", True),
    DeckSource("tango", _G, "tango.svgz", "GPL-3+", False, "suit sign in the other top corner, not under the rank"),
    DeckSource("tigullio", _G, "tigullio.svgz", "GPL-3+", True),
    DeckSource("nicu-white", _K, "svg-nicu-white/white.svgz", "GPL-2+", True),
    DeckSource("nicu-ornamental", _K, "svg-nicu-ornamental/ornamental.svgz", "GPL-2+", True),
    DeckSource("penguins", _K, "svg-penguins/penguins.svgz", "GPL-3+", True, "no jokers"),
    DeckSource("kde-standard", _K, "svg-standard/standard.svgz", "GPL-2+", True, "no jokers"),
    DeckSource("tigullio-international", _K, "svg-tigullio-international/tigullio-international.svgz", "LGPL-2+", True, "no jokers"),
    DeckSource("jolly-royal", _K, "svg-jolly-royal/jolly-royal.svgz", "GPL-2+", True, "no jokers"),
    DeckSource("kennard", _N, "src/images/2color", "CC0-1.0 (package code MIT)", True, "joker has no index: procedural jokers"),
    DeckSource("kennard-4-color", _N, "src/images/4color", "CC0-1.0 (package code MIT)", True, "four-colour suits; procedural jokers"),
    # Not used: non-standard indices or layouts.
    DeckSource("ancient_french", _G, "ancient_french.svgz", "GPL-3+", False, "French courts R D V"),
    DeckSource("atlasnye", _G, "atlasnye.svgz", "GPL-3+", False, "Russian courts К Д В"),
    DeckSource("berlin", _G, "berlin.svgz", "GPL-3+", False, "German courts K D B"),
    DeckSource("lattmann", _G, "lattmann.svgz", "GPL-3+", False, "German courts K D B"),
    DeckSource("rheinland", _G, "rheinland.svgz", "GPL-3+", False, "German courts K D B"),
    DeckSource("slavic_costumes", _G, "slavic_costumes.svgz", "GPL-3+", False, "Russian courts, T for ace"),
    DeckSource("swiss-xvii", _G, "swiss-xvii.svgz", "GPL-3+", False, "no standard index"),
    DeckSource("tarocco", _G, "tarocco.svgz", "GPL-3+", False, "Italian courts R D F"),
    DeckSource("dondorf", _G, "dondorf.svgz", "GPL-3+", False, "indices in all four corners"),
    DeckSource("tango_nuevo", _G, "tango_nuevo.svgz", "GPL-3+", False, "index laid out sideways"),
    DeckSource("oxygen", _K, "svg-oxygen/oxygen.svgz", "GPL-2+", False, "index at the top-right"),
    DeckSource("xskat-german", _K, "svg-xskat-german/german.svgz", "GPL-2+", False, "German suits"),
    DeckSource("kennard-big-index", _N, "src/images/2color-bf", "CC0-1.0 (package code MIT)", False, "suit sign below the index-box heuristic's reach"),
    DeckSource("kennard-big-index-4-color", _N, "src/images/4color-bf", "CC0-1.0 (package code MIT)", False, "suit sign below the index-box heuristic's reach"),
)
HELD_OUT = ("bellot", "tigullio", "tigullio-international")
"""Evaluation-only decks (the two tigullio decks are one family, so both stay out)."""

_GNOME_RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king", "1")
_SUITS = ("spade", "heart", "diamond", "club")


def _element_id(src: DeckSource, card: Card) -> str:
    if src.package == _G:
        if is_joker(card):
            return "joker_red" if card == BJ else "joker_black"
        return f"{_SUITS[suit_of(card)]}_{_GNOME_RANKS[rank_of(card)]}"
    if is_joker(card):
        return "red_joker" if card == BJ else "black_joker"
    return f"{_GNOME_RANKS[rank_of(card)]}_{_SUITS[suit_of(card)]}"


def _svg_path(src: DeckSource) -> Path:
    return (GNOME_DIR if src.package == _G else KDE_DIR) / src.file


def _npm_package(cache: Path, spec: str, fetch: bool) -> Path | None:
    """The unpacked npm package ``spec`` (fetched once with ``npm pack`` when ``fetch``), or None."""
    folder = cache / "npm" / spec.replace("/", "_").replace("@", "")
    if (folder / "package").exists():
        return folder / "package"
    if not fetch or shutil.which("npm") is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    try:
        out = subprocess.run(["npm", "pack", spec, "--pack-destination", str(folder)], check=True, capture_output=True, text=True, timeout=300)
    except (subprocess.SubprocessError, OSError):
        return None
    tmp = folder / f"unpack-{os.getpid()}"
    with tarfile.open(folder / out.stdout.strip().splitlines()[-1]) as tar:
        tar.extractall(tmp, filter="data")
    if not (folder / "package").exists():  # else another process unpacked it meanwhile
        os.replace(tmp / "package", folder / "package")
    shutil.rmtree(tmp, ignore_errors=True)
    return folder / "package"


def _npm_faces(cache: Path, src: DeckSource, fetch: bool) -> dict[Card, np.ndarray]:
    """The 52 faces of an npm deck with one SVG per card (``KD.svg``, ``TS.svg``...)."""
    package = _npm_package(cache, src.package.removeprefix("npm:"), fetch)
    if package is None:
        return {}
    images = {}
    for card in FACES[:52]:
        img = _render_element(package / src.file / f"{card_name(card)}.svg", None)
        if img is not None:
            images[card] = img
    return images


def _sheet_faces(src: DeckSource, scratch: Path) -> dict[Card, np.ndarray]:
    """Every face of a Debian deck, cut from its sprite sheet (decompressed to ``scratch``)."""
    svg = _svg_path(src)
    if not svg.exists():
        return {}
    scratch.write_bytes(gzip.decompress(svg.read_bytes()) if svg.suffix == ".svgz" else svg.read_bytes())
    images = {}
    for card in FACES:
        img = _render_element(scratch, _element_id(src, card))
        if img is not None:
            images[card] = img
    scratch.unlink()
    return images


def ensure_packages() -> bool:
    """Install the deck packages with apt-get when missing and allowed; True if usable."""
    if shutil.which("rsvg-convert") and GNOME_DIR.exists() and KDE_DIR.exists():
        return True
    if shutil.which("apt-get") is None:
        return False
    try:
        subprocess.run(["apt-get", "install", "-y", "-q", *APT_PACKAGES], check=True, capture_output=True, timeout=900)
    except (subprocess.SubprocessError, OSError):
        return False
    return bool(shutil.which("rsvg-convert")) and GNOME_DIR.exists()


def _render_element(svg: Path, element: str | None) -> np.ndarray | None:
    """One element of an SVG (or the whole file), cropped to its opaque pixels."""
    pick = ["-i", element] if element else []
    out = subprocess.run(["rsvg-convert", *pick, "-z", "1", str(svg)], capture_output=True, timeout=120).stdout
    if not out:
        return None
    img = cv2.imdecode(np.frombuffer(out, np.uint8), cv2.IMREAD_UNCHANGED)
    if img is None or img.ndim != 3 or img.shape[2] != 4:
        return None
    ys, xs = np.nonzero(img[..., 3] > 8)
    if len(xs) == 0:
        return None
    return img[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def _ink_boxes(img: np.ndarray, region: tuple[float, float, float, float]) -> list[tuple[int, int, int, int]]:
    """Boxes of dark or saturated blobs inside ``region`` (fractions of the card)."""
    H, W = img.shape[:2]
    hsv = cv2.cvtColor(img[..., :3], cv2.COLOR_BGR2HSV)
    ink = ((hsv[..., 2] < 150) | ((hsv[..., 1] > 90) & (hsv[..., 2] > 60))) & (img[..., 3] > 200)
    rx0, ry0, rx1, ry1 = int(region[0] * W), int(region[1] * H), int(region[2] * W), int(region[3] * H)
    mask = np.zeros((H, W), np.uint8)
    mask[ry0:ry1, rx0:rx1] = ink[ry0:ry1, rx0:rx1]
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    # Glyphs are small and clear of the card's outline; frames and borders are neither.
    return [
        tuple(int(v) for v in stats[i, :4])
        for i in range(1, n)
        if stats[i, 4] >= 4 and stats[i, 2] < 0.2 * W and stats[i, 3] < 0.25 * H and stats[i, 0] > 0.012 * W and stats[i, 1] > 0.008 * H
    ]


def _union(boxes: list[tuple[int, int, int, int]]) -> tuple[float, float, float, float] | None:
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[0] + b[2] for b in boxes), max(b[1] + b[3] for b in boxes))


def find_index_boxes(images: dict[Card, np.ndarray]) -> dict[Card, Box]:
    """Each card's top-left index box in fractions, from the ink near the corner.

    The deck's box comes from the 2s and 3s (their pips sit mid-card, far from the
    index); every other card takes the ink blobs that touch that box, so a wide "10"
    is covered and court art beside the index is not.
    """
    firsts = []
    for card, img in images.items():
        if not is_joker(card) and rank_of(card) <= 1:
            blobs = [b for b in _ink_boxes(img, (0.0, 0.0, 0.3, 0.36)) if b[0] < 0.2 * img.shape[1] and b[1] < 0.2 * img.shape[0]]
            u = _union(blobs)
            if u:
                H, W = img.shape[:2]
                firsts.append((u[0] / W, u[1] / H, u[2] / W, u[3] / H))
    if len(firsts) < 4:
        return {}
    deck = tuple(float(v) for v in np.median(np.array(firsts), 0))
    out: dict[Card, Box] = {}
    for card, img in images.items():
        H, W = img.shape[:2]
        if is_joker(card):
            blobs = [b for b in _ink_boxes(img, (0.0, 0.0, 0.3, 0.55)) if b[0] < 0.15 * W and b[1] < 0.15 * H and b[2] < 0.25 * W]
            u = _union(blobs)
            if u is None or (u[3] - u[1]) < 0.05 * H:
                continue
            out[card] = (u[0] / W, u[1] / H, u[2] / W, u[3] / H)
            continue
        dx0, dy0, dx1, dy1 = deck[0] * W, deck[1] * H, deck[2] * W, deck[3] * H
        blobs = [b for b in _ink_boxes(img, (0.0, 0.0, 0.35, 0.4)) if b[0] < dx1 and b[0] + b[2] > dx0 and b[1] < dy1 and b[1] + b[3] > dy0]
        # Never smaller than the deck's box: a glyph touching court art merges into it and is lost.
        u = _union(blobs + [(int(dx0), int(dy0), int(dx1 - dx0), int(dy1 - dy0))])
        bw, bh = dx1 - dx0, dy1 - dy0
        u = (max(u[0], dx0 - 0.5 * bw), max(u[1], dy0 - 0.2 * bh), min(u[2], dx1 + 0.7 * bw), min(u[3], dy1 + 0.2 * bh))
        out[card] = (u[0] / W, u[1] / H, u[2] / W, u[3] / H)
    return out


@dataclass(frozen=True)
class RealDeck:
    """A cached real deck: face images at ``RENDER_H`` and index boxes (card fractions)."""

    name: str
    aspect: float
    folder: str
    boxes: tuple[tuple[Card, Box], ...]

    def _stand_in(self, card: Card) -> bool:
        return card not in dict(self.boxes)

    def render(self, card: Card, height_px: int) -> np.ndarray:
        if self._stand_in(card):  # a joker this deck lacks
            return procedural_design(hash_name(self.name)).render(card, height_px)
        img = _load(self.folder, card)
        w = max(1, round(self.aspect * height_px))
        return cv2.resize(img, (w, height_px), interpolation=cv2.INTER_AREA)

    def index_box(self, card: Card, height_px: int) -> Box:
        if self._stand_in(card):
            return procedural_design(hash_name(self.name)).index_box(card, height_px)
        x0, y0, x1, y1 = dict(self.boxes)[card]
        w = round(self.aspect * height_px)
        return (x0 * w, y0 * height_px, x1 * w, y1 * height_px)


def hash_name(name: str) -> int:
    """A stable seed for the procedural jokers a deck borrows."""
    return zlib.crc32(name.encode())


@lru_cache(maxsize=4096)
def _load(folder: str, card: Card) -> np.ndarray:
    img = cv2.imread(str(Path(folder) / f"{card}.png"), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise FileNotFoundError(f"deck cache is missing {folder}/{card}.png: rerun prepare_decks()")
    return img


def _write_atomic(path: Path, data: dict) -> None:
    """Write ``deck.json`` whole, after the deck's images: its presence means they are all there
    (each image, like this file, is renamed into place, so a concurrent reader never sees half a file)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def prepare_decks(cache: Path, names: tuple[str, ...] | None = None, install: bool = True) -> list[RealDeck]:
    """Render (once) and load the standard decks; an empty list when the packages are absent.

    ``install``: try apt-get and npm for missing packages (training does; the benchmark does not).
    """
    if not (ensure_packages() if install else (shutil.which("rsvg-convert") and GNOME_DIR.exists() and KDE_DIR.exists())):
        return []
    decks = []
    for src in tqdm([d for d in DECKS if d.standard and (names is None or d.name in names)], desc="prepare decks", unit="deck"):
        folder = cache / "decks" / src.name
        meta = folder / "deck.json"
        if not meta.exists():
            folder.mkdir(parents=True, exist_ok=True)
            if src.package.startswith("npm:"):
                faces = _npm_faces(cache, src, fetch=install)
            else:  # two training stages may prepare one cache at once: a scratch file each
                faces = _sheet_faces(src, folder / f"sheet-{os.getpid()}.svg")
            if not faces:
                continue
            images = {card: cv2.resize(img, (round(img.shape[1] * RENDER_H / img.shape[0]), RENDER_H), interpolation=cv2.INTER_AREA) for card, img in faces.items()}
            if any(c not in images for c in FACES[:52]):
                _write_atomic(meta, {"usable": False})
                continue
            boxes = find_index_boxes(images)
            aspect = float(np.median([img.shape[1] / img.shape[0] for img in images.values()]))
            for card, img in images.items():
                if card in boxes:
                    tmp = folder / f"{card}.{os.getpid()}.png"
                    cv2.imwrite(str(tmp), cv2.resize(img, (round(aspect * RENDER_H), RENDER_H)))
                    os.replace(tmp, folder / f"{card}.png")
            _write_atomic(meta, {"usable": len(boxes) >= 52, "aspect": aspect, "boxes": {str(c): b for c, b in boxes.items()}})
        info = json.loads(meta.read_text())
        if info.get("usable"):
            boxes = tuple(sorted((int(c), tuple(b)) for c, b in info["boxes"].items()))
            decks.append(RealDeck(src.name, info["aspect"], str(folder), boxes))
    return decks


def training_design_sampler(decks: list[RealDeck], real_share: float = 0.5, fonts: tuple[str, ...] = ()):
    """A function ``rng -> design``: a training real deck or a fresh procedural design
    (printed in one of ``fonts`` when given, see :func:`procedural_design`)."""
    train = [d for d in decks if d.name not in HELD_OUT]

    def sample(rng: np.random.Generator):
        if train and rng.random() < real_share:
            return train[int(rng.integers(len(train)))]
        seed = int(rng.integers(0, 2**31 - 1))
        return procedural_design(seed, fonts=fonts)

    return sample


