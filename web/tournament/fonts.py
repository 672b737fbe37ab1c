"""The CJK TrueType font the printed sheets embed, so that they print the same anywhere.

``./run.sh setup`` installs Debian's ``fonts-wqy-zenhei``; ``GUANDAN_CJK_FONT`` may name
another TrueType file (``.ttf``, or ``.ttc`` with its first face). reportlab embeds only
the glyphs a document uses (a subset), so a sheet stays small.
"""

from __future__ import annotations

from pathlib import Path

from web.settings import BY_NAME, read

FONT_ENV = BY_NAME["CJK_FONT"].variable
CANDIDATES = (
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/truetype/arphic/uming.ttc",
)
FONT_NAME = "GuandanCJK"


class FontMissing(OSError):
    """No CJK TrueType font to embed."""


def font_file() -> Path:
    """The font file to embed: ``$GUANDAN_CJK_FONT``, else the first installed candidate."""
    named = read("CJK_FONT")
    if named:
        if not Path(named).is_file():
            raise FontMissing(f"{FONT_ENV}={named}: no such font file")
        return Path(named)
    for path in CANDIDATES:
        if Path(path).is_file():
            return Path(path)
    raise FontMissing("no CJK TrueType font to embed in the sheet: install fonts-wqy-zenhei "
                      f"(./run.sh setup does) or set {FONT_ENV}")


def register() -> str:
    """Register the font with reportlab (once) and return its name for styles."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFError, TTFont

    if FONT_NAME not in pdfmetrics.getRegisteredFontNames():
        path = font_file()
        try:
            pdfmetrics.registerFont(TTFont(FONT_NAME, str(path), subfontIndex=0))
        except TTFError as exc:
            raise FontMissing(f"{path}: not a usable TrueType font ({exc})") from None
    return FONT_NAME
