"""Outline fonts for procedural index glyphs, installed from Debian at training time.

The six Hershey fonts OpenCV draws are one stroke family; real decks print their
indices in serif, sans, condensed and bold faces. A held-out deck whose "5" or "Q" looks
like no training glyph was the largest source of misreads, so training designs also
draw ranks from the outline fonts of the packages below (free licences, never
committed; rendered through Pillow's FreeType). Without them training still works on
the Hershey designs alone.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import numpy as np

FONT_PACKAGES = (
    "fonts-dejavu-core",
    "fonts-liberation2",
    "fonts-freefont-ttf",
    "fonts-urw-base35",
    "fonts-crosextra-carlito",
    "fonts-crosextra-caladea",
    "fonts-linuxlibertine",
    "fonts-ebgaramond",
    "fonts-roboto-unhinted",
    "fonts-open-sans",
    "fonts-lato",
    "fonts-cantarell",
    "fonts-go",
    "fonts-croscore",
    "fonts-gfs-didot",
    "fonts-adf-accanthis",
)
FONT_DIR = Path("/usr/share/fonts")
GLYPHS = "2345678910JQKA"
_SYMBOL_FAMILIES = ("Symbol", "Dingbat", "D050000L", "StandardSymbols", "Math")


def ensure_font_packages() -> None:
    """Install :data:`FONT_PACKAGES` with apt-get when some are missing and apt-get is there (as root)."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-query") is None:
        return
    status = subprocess.run(["dpkg-query", "-W", "-f", "${Status}\n", *FONT_PACKAGES], capture_output=True, text=True)
    if status.stdout.count("install ok installed") == len(FONT_PACKAGES):
        return
    try:
        subprocess.run(["apt-get", "install", "-y", "-q", *FONT_PACKAGES], check=True, capture_output=True, timeout=900)
    except (subprocess.SubprocessError, OSError):
        pass


def _glyph(font, text: str) -> np.ndarray:
    mask = font.getmask(text)
    return np.asarray(mask, np.uint8).reshape(mask.size[1], mask.size[0])


def _draws_indices(path: Path) -> bool:
    """True when the font has real, distinct glyphs for every rank (no missing-glyph boxes)."""
    from PIL import ImageFont

    try:
        font = ImageFont.truetype(str(path), 40)
        masks = [_glyph(font, c) for c in GLYPHS]
        missing = _glyph(font, "\u0378")  # unassigned code point: the font's missing-glyph box, or nothing
    except OSError:
        return False
    keys = {m.tobytes() + bytes(m.shape) for m in [*masks, missing]}
    return len(keys) == len(masks) + 1 and all(m.size and m.max() > 0 for m in masks)


@lru_cache(maxsize=1)
def index_fonts(folder: Path = FONT_DIR) -> tuple[str, ...]:
    """Font files under ``folder`` that can print indices, sorted (so a seed picks the same font)."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        return ()
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".ttf", ".otf") and not any(s in p.name for s in _SYMBOL_FAMILIES))
    return tuple(str(p) for p in files if _draws_indices(p))


def text_mask(font_file: str, text: str, height: int) -> np.ndarray:
    """A tight anti-aliased mask of ``text`` in ``font_file`` (about ``height`` px tall before resizing)."""
    font = _font(font_file, max(8, height))
    mask = _glyph(font, text)
    ys, xs = np.nonzero(mask > 40)
    return mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


@lru_cache(maxsize=256)
def _font(font_file: str, size: int):
    from PIL import ImageFont

    return ImageFont.truetype(font_file, size)
