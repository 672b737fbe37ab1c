"""Plain-text columns that line up with Chinese names: CJK characters take two columns."""

from __future__ import annotations

import unicodedata


def width(text: str) -> int:
    """Terminal columns ``text`` takes (East Asian wide and fullwidth characters take two)."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def fit(text: str, columns: int, right: bool = False) -> str:
    """``text`` cut to at most ``columns`` columns (ending in "…" when cut) and padded to them."""
    if width(text) > columns:
        out, used = "", 0
        for c in text:
            if used + width(c) > columns - 1:
                break
            out, used = out + c, used + width(c)
        text = out + "…"
    pad = " " * (columns - width(text))
    return pad + text if right else text + pad


def table(header: list[str], rows: list[list[str]], right: set[int] = frozenset()) -> list[str]:
    """Lines of a table: each column as wide as its widest cell; ``right`` columns right-aligned."""
    cells = [header, *rows]
    widths = [max(width(r[i]) for r in cells) for i in range(len(header))]
    return ["  ".join(fit(r[i], widths[i], i in right) for i in range(len(header))).rstrip() for r in cells]
