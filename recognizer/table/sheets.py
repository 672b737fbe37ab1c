"""Printable sheets (A4, sizes in millimetres): the four corner markers and the tokens.

Each page is a list of shapes in page millimetres, drawn once as vector PDF (reportlab)
and once as a PNG raster; the token artwork is also what the table-video renderer pastes
on its rendered table (:func:`token_image`), so tests see what players will print.
Print at 100 % ("actual size"): the layout's marker size must match the printed one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from .layout import TableLayout
from .markers import PASS_IDS, REPORT_IDS, dictionary

PAGE_MM = (210.0, 297.0)
QUIET_MM = 8.0
"""White margin every marker needs around it to be found."""
TOKEN_MARKER_MM = 40.0
REPORT_CARD_MM = (63.0, 88.0)
PASS_TOKEN_MM = (60.0, 60.0)
_CORNER_NAMES = ("NW", "NE", "SE", "SW")
_RED, _GREY, _BLACK, _WHITE = (200, 30, 30), (120, 120, 120), (0, 0, 0), (255, 255, 255)


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    rgb: tuple[int, int, int]
    filled: bool = True


@dataclass(frozen=True)
class Text:
    x: float
    y: float  # baseline
    size: float  # glyph height, mm
    text: str  # ASCII (the PNG raster has no CJK font)
    zh: str = ""  # appended in the PDF


Shape = Rect | Text


def marker_shapes(marker_id: int, x: float, y: float, size: float) -> list[Shape]:
    """A marker as black cells (top-left at ``x, y``) on its white quiet zone."""
    bits = cv2.aruco.generateImageMarker(dictionary(), marker_id, 6)  # one pixel per cell
    cell = size / 6
    shapes: list[Shape] = [Rect(x - QUIET_MM, y - QUIET_MM, size + 2 * QUIET_MM, size + 2 * QUIET_MM, _WHITE)]
    for r in range(6):
        for c in range(6):
            if bits[r, c] == 0:
                shapes.append(Rect(x + c * cell, y + r * cell, cell, cell, _BLACK))
    return shapes


def corner_shapes(marker_id: int, x: float, y: float, size: float) -> list[Shape]:
    """Corner marker with its cut line, name and orientation note."""
    q = QUIET_MM
    return [
        Rect(x - q, y - q, size + 2 * q, size + 2 * q, _GREY, filled=False),
        *marker_shapes(marker_id, x, y, size),
        Text(x - q, y - q - 2, 4, f"corner {marker_id} {_CORNER_NAMES[marker_id]} - this edge to North"),
        Text(x - q, y + size + q + 6, 3.5, f"{size:g} mm marker (DICT_4X4_50 id {marker_id})"),
    ]


def token_shapes(kind: str, marker_id: int, x: float = 0.0, y: float = 0.0) -> list[Shape]:
    """A report card (card-sized, red frame) or a pass token (square, grey frame)."""
    w, h = REPORT_CARD_MM if kind == "report" else PASS_TOKEN_MM
    colour = _RED if kind == "report" else _GREY
    m = TOKEN_MARKER_MM
    mx, my = x + (w - m) / 2, y + (h - m) / 2 - (6 if kind == "report" else 0)
    shapes: list[Shape] = [Rect(x, y, w, h, colour), Rect(x + 3, y + 3, w - 6, h - 6, _WHITE)]
    shapes += marker_shapes(marker_id, mx, my, m)[1:]
    if kind == "report":
        shapes.append(Text(x + 8, y + h - 8, 6, "REPORT", zh=" 报牌"))
    return shapes


def pages(layout: TableLayout) -> list[list[Shape]]:
    """Page 1: the corner markers at the layout's size; page 2: three report cards
    (ids 10-12) and three pass tokens (ids 20-22)."""
    size = layout.marker_mm
    step = size + 2 * QUIET_MM + 20
    corner_page: list[Shape] = [Text(15, 15, 5, "guandan-referee table markers - print at 100 %")]
    for i in range(4):
        corner_page += corner_shapes(i, 25 + (i % 2) * step, 35 + (i // 2) * (step + 10), size)
    token_page: list[Shape] = [Text(10, 15, 5, "report cards and pass tokens - cut along the frames")]
    rw, rh = REPORT_CARD_MM
    for i, marker_id in enumerate(list(REPORT_IDS)[:3]):
        token_page += token_shapes("report", marker_id, 10 + i * (rw + 3), 25)
    pw, _ = PASS_TOKEN_MM
    for i, marker_id in enumerate(list(PASS_IDS)[:3]):
        token_page += token_shapes("pass", marker_id, 10 + i * (pw + 6), 25 + rh + 15)
    return [corner_page, token_page]


def raster(shapes: list[Shape], size_mm: tuple[float, float], px_per_mm: float) -> np.ndarray:
    """Draw ``shapes`` (origin top-left, mm) as a BGR image."""
    w, h = round(size_mm[0] * px_per_mm), round(size_mm[1] * px_per_mm)
    img = np.full((h, w, 3), 255, np.uint8)
    for s in shapes:
        if isinstance(s, Rect):
            p0 = (round(s.x * px_per_mm), round(s.y * px_per_mm))
            p1 = (round((s.x + s.w) * px_per_mm) - 1, round((s.y + s.h) * px_per_mm) - 1)
            thickness = -1 if s.filled else max(1, round(0.3 * px_per_mm))
            cv2.rectangle(img, p0, p1, s.rgb[::-1], thickness)
        else:
            scale = s.size * px_per_mm / 22.0  # Hershey simplex capitals are ~22 units tall
            org = (round(s.x * px_per_mm), round(s.y * px_per_mm))
            cv2.putText(img, s.text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), max(1, round(scale)), cv2.LINE_AA)
    return img


def token_image(kind: str, marker_id: int, px_per_mm: float) -> np.ndarray:
    """A token as a BGR image at ``px_per_mm`` (for rendered test tables)."""
    size = REPORT_CARD_MM if kind == "report" else PASS_TOKEN_MM
    return raster(token_shapes(kind, marker_id), size, px_per_mm)


def write_pdf(path: Path, all_pages: list[list[Shape]]) -> None:
    from reportlab.lib.units import mm
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    pdf = canvas.Canvas(str(path), pagesize=(PAGE_MM[0] * mm, PAGE_MM[1] * mm), invariant=1)
    for shapes in all_pages:
        for s in shapes:
            if isinstance(s, Rect):
                pdf.setFillColorRGB(*(v / 255 for v in s.rgb))
                pdf.setStrokeColorRGB(*(v / 255 for v in s.rgb))
                y = PAGE_MM[1] - s.y - s.h
                pdf.rect(s.x * mm, y * mm, s.w * mm, s.h * mm, stroke=0 if s.filled else 1, fill=1 if s.filled else 0)
            else:
                pdf.setFillColorRGB(0, 0, 0)
                font_pt = s.size * mm / 0.72  # capital height is ~72 % of the font size
                pdf.setFont("Helvetica", font_pt)
                pdf.drawString(s.x * mm, (PAGE_MM[1] - s.y) * mm, s.text)
                if s.zh:
                    pdf.setFont("STSong-Light", font_pt)
                    pdf.drawString(s.x * mm + pdfmetrics.stringWidth(s.text, "Helvetica", font_pt), (PAGE_MM[1] - s.y) * mm, s.zh)
        pdf.showPage()
    pdf.save()


def write_sheets(out_dir: str | Path, layout: TableLayout | None = None, dpi: int = 300) -> list[Path]:
    """Write ``table-sheets.pdf`` and one PNG per page (``dpi``) into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    all_pages = pages(layout or TableLayout())
    written = [out / "table-sheets.pdf"]
    write_pdf(written[0], all_pages)
    for n, shapes in enumerate(all_pages, 1):
        path = out / f"table-sheets-{n}.png"
        ok, data = cv2.imencode(".png", raster(shapes, PAGE_MM, dpi / 25.4), [cv2.IMWRITE_PNG_COMPRESSION, 9])
        if not ok:
            raise OSError(f"could not encode {path}")
        path.write_bytes(data.tobytes())
        written.append(path)
    return written
