"""Where things are on a table, in millimetres seen from above (South at the bottom).

Table coordinates: origin at the North-West corner, ``x`` towards East, ``y`` towards
South. The corner markers sit upright (their printed top towards North) at the four
corners; each seat's play area is an axis-aligned rectangle near the centre, in front of
that seat. The default layout is a 90 x 90 cm table; other tables describe themselves in
a TOML file (see :func:`load_layout` and ``layout.example.toml`` next to this module).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from referee.seats import SEATS, SeatError, parse_seat

from .markers import CORNER_IDS

# Quarter turns that bring each seat's view upright: South reads the table as drawn,
# East sits at the right edge facing West, and so on round the table.
_QUARTER_TURNS = {"S": 0, "E": 1, "N": 2, "W": 3}


class LayoutError(ValueError):
    """A table layout that cannot be used: names the file or key that is wrong."""


@dataclass(frozen=True)
class Area:
    """One seat's play area: ``rect = (x0, y0, x1, y1)`` in table millimetres."""

    seat: str
    rect: tuple[float, float, float, float]

    def contains(self, point: np.ndarray | tuple[float, float]) -> bool:
        x0, y0, x1, y1 = self.rect
        return x0 <= point[0] <= x1 and y0 <= point[1] <= y1

    def corners(self) -> np.ndarray:
        """The rectangle's corners as the seat sees them upright: top-left, top-right,
        bottom-right, bottom-left, shape ``(4, 2)``. A crop warped to these corners shows
        the cards the way the player who laid them reads them."""
        x0, y0, x1, y1 = self.rect
        drawn = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        k = _QUARTER_TURNS[self.seat]
        return np.array(drawn[-k:] + drawn[:-k] if k else drawn, np.float32)

    def size_mm(self) -> tuple[float, float]:
        """(width, depth) as the seat sees the area."""
        x0, y0, x1, y1 = self.rect
        w, h = x1 - x0, y1 - y0
        return (h, w) if _QUARTER_TURNS[self.seat] % 2 else (w, h)


@dataclass(frozen=True)
class TableLayout:
    width_mm: float = 900.0
    height_mm: float = 900.0
    marker_mm: float = 60.0
    marker_inset_mm: float = 10.0
    areas: tuple[Area, ...] = field(
        default_factory=lambda: (
            Area("S", (300.0, 600.0, 600.0, 730.0)),
            Area("E", (600.0, 300.0, 730.0, 600.0)),
            Area("N", (300.0, 170.0, 600.0, 300.0)),
            Area("W", (170.0, 300.0, 300.0, 600.0)),
        )
    )
    read_px_per_mm: float = 2.0
    """Resolution of the area crops handed to the card reader."""

    def __post_init__(self) -> None:
        for name in ("width_mm", "height_mm", "marker_mm", "read_px_per_mm"):
            if not getattr(self, name) > 0:
                raise LayoutError(f"{name} must be positive, got {getattr(self, name)!r}")
        if not 0 <= self.marker_inset_mm or 2 * (self.marker_inset_mm + self.marker_mm) > min(
            self.width_mm, self.height_mm
        ):
            raise LayoutError(
                f"corner markers ({self.marker_mm} mm, inset {self.marker_inset_mm} mm) "
                f"do not fit a {self.width_mm} x {self.height_mm} mm table"
            )
        seats = [a.seat for a in self.areas]
        if sorted(seats) != sorted(SEATS):
            raise LayoutError(f"need exactly one play area per seat N, E, S, W; got {seats}")
        for a in self.areas:
            x0, y0, x1, y1 = a.rect
            if not (0 <= x0 < x1 <= self.width_mm and 0 <= y0 < y1 <= self.height_mm):
                raise LayoutError(f"play area {a.seat} {list(a.rect)} is empty or off the table")
        for i, a in enumerate(self.areas):
            for b in self.areas[i + 1 :]:
                if _overlap(a.rect, b.rect):
                    raise LayoutError(f"play areas {a.seat} and {b.seat} overlap")

    def area(self, seat: str) -> Area:
        return next(a for a in self.areas if a.seat == seat)

    def area_at(self, point: np.ndarray | tuple[float, float]) -> Area | None:
        return next((a for a in self.areas if a.contains(point)), None)

    def marker_corners(self, marker_id: int) -> np.ndarray:
        """Where corner marker ``marker_id``'s four corners lie in table millimetres."""
        if marker_id not in CORNER_IDS:
            raise ValueError(f"marker {marker_id} is not a corner marker {CORNER_IDS}")
        s, m = self.marker_mm, self.marker_inset_mm
        x = m if marker_id in (0, 3) else self.width_mm - m - s
        y = m if marker_id in (0, 1) else self.height_mm - m - s
        return np.array([(x, y), (x + s, y), (x + s, y + s), (x, y + s)], np.float32)


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def load_layout(path: str | Path | None) -> TableLayout:
    """The layout described by a TOML file, or the default 90 x 90 cm one for ``None``.

    Keys (all optional, millimetres): ``[table] width_mm height_mm``,
    ``[markers] size_mm inset_mm``, ``[areas] S = [x0, y0, x1, y1]`` ... (all four seats
    when given), ``[reader] px_per_mm``.
    """
    if path is None:
        return TableLayout()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise LayoutError(f"cannot read table layout {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LayoutError(f"table layout {path} is not valid TOML: {exc}") from None
    try:
        return _layout_from(data)
    except LayoutError as exc:
        raise LayoutError(f"table layout {path}: {exc}") from None


def _layout_from(data: dict) -> TableLayout:
    known = {"table", "markers", "areas", "reader"}
    if unknown := set(data) - known:
        raise LayoutError(f"unknown sections {sorted(unknown)} (expected {sorted(known)})")
    table, markers, reader = data.get("table", {}), data.get("markers", {}), data.get("reader", {})
    kwargs: dict = {}
    for section, key, name in (
        (table, "width_mm", "width_mm"),
        (table, "height_mm", "height_mm"),
        (markers, "size_mm", "marker_mm"),
        (markers, "inset_mm", "marker_inset_mm"),
        (reader, "px_per_mm", "read_px_per_mm"),
    ):
        if key in section:
            kwargs[name] = _number(section[key], key)
    if "areas" in data:
        areas = []
        for seat, rect in data["areas"].items():
            try:
                seat = parse_seat(seat)
            except SeatError as exc:
                raise LayoutError(f"[areas]: {exc}") from None
            if not isinstance(rect, list) or len(rect) != 4:
                raise LayoutError(f"[areas] {seat} must be [x0, y0, x1, y1], got {rect!r}")
            areas.append(Area(seat, tuple(_number(v, f"areas.{seat}") for v in rect)))
        kwargs["areas"] = tuple(areas)
    return TableLayout(**kwargs)


def _number(value: object, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LayoutError(f"{key} must be a number, got {value!r}")
    return float(value)
