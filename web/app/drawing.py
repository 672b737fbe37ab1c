"""The dashboard's own drawings, as inline SVG: playing cards and the levels chart.

Cards are drawn from their RULES.md names (``TH``, ``BJ``): a white card with the rank
and suit in the corner and a large suit in the middle; hearts and diamonds red, jokers
marked JOKER (the big joker red). The wildcard of the deal (the heart level card, C3)
gets a gold frame. No deck art is copied. Styling is by attributes and classes only (the
Content-Security-Policy forbids inline styles).
"""

from __future__ import annotations

from markupsafe import Markup, escape

from .i18n import t
from .messages import card_word

SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
RED_SUITS = ("H", "D")
LEVELS = "23456789TJQKA"


def card_svg(name: str, wildcard: str | None = None, size: str = "md") -> Markup:
    """One card, e.g. ``card_svg("TH")``; ``data-card`` carries its name for scripts and tests."""
    name = str(name)
    label = t("card.label", card=card_word(name)) + (t("card.wildcard_mark") if name == wildcard else "")
    frame = "#c9a227" if name == wildcard else "#333"
    width = "3" if name == wildcard else "1.2"
    if name in ("SJ", "BJ"):
        colour = "#c8102e" if name == "BJ" else "#111"
        body = (f'<text x="7" y="14" font-size="10" font-weight="700" fill="{colour}" writing-mode="tb">JOKER</text>'
                f'<text x="27" y="44" font-size="22" text-anchor="middle" fill="{colour}">★</text>')
    else:
        rank, suit = name[:-1], name[-1]
        colour = "#c8102e" if suit in RED_SUITS else "#111"
        shown = "10" if rank == "T" else rank
        body = (f'<text x="5" y="15" font-size="14" font-weight="700" fill="{colour}">{escape(shown)}</text>'
                f'<text x="5" y="28" font-size="12" fill="{colour}">{SUITS.get(suit, "?")}</text>'
                f'<text x="26" y="48" font-size="24" text-anchor="middle" fill="{colour}">{SUITS.get(suit, "?")}</text>')
    return Markup(
        f'<svg class="card card-{size}" data-card="{escape(name)}" viewBox="0 0 44 62" role="img" '
        f'aria-label="{escape(label)}"><rect x="1" y="1" width="42" height="60" rx="5" fill="#fff" '
        f'stroke="{frame}" stroke-width="{width}"/>{body}</svg>')


def cards_svg(names, wildcard: str | None = None, size: str = "md") -> Markup:
    """A fanned row of cards."""
    return Markup('<span class="cards">') + Markup("").join(card_svg(n, wildcard, size) for n in names) + Markup("</span>")


def level_index(level: str) -> int:
    """Position of a level on the chart's axis (``A+`` is past A)."""
    return len(LEVELS) if level == "A+" else LEVELS.index(level)


def levels_chart(deals: list[dict], title: str) -> Markup:
    """A small line chart of both sides' levels after each deal of a session."""
    width, height, left, top, bottom = 420, 200, 34, 12, 28
    n = max(len(deals), 1)
    step_x = (width - left - 12) / n
    step_y = (height - top - bottom) / len(LEVELS)

    def point(i: int, level: str) -> tuple[float, float]:
        return left + i * step_x, height - bottom - level_index(level) * step_y

    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">']
    for i, level in enumerate(LEVELS + "+"):
        y = height - bottom - i * step_y
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - 12}" y2="{y:.1f}" stroke="#ddd"/>')
        if i % 2 == 0 or level in "A+":
            parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">'
                         f'{escape(t("table.level_passed_a")) if level == "+" else ("10" if level == "T" else level)}</text>')
    for i in range(len(deals) + 1):
        x = left + i * step_x
        parts.append(f'<text x="{x:.1f}" y="{height - 10}" font-size="11" text-anchor="middle">{i}</text>')
    for side, colour in (("NS", "#1f5fbf"), ("EW", "#c8102e")):
        points = [point(0, "2")] + [point(i + 1, d["levels"][side]) for i, d in enumerate(deals)]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2.5"/>')
        for x, y in points:
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>')
        x, y = points[-1]
        parts.append(f'<text x="{min(x + 6, width - 30):.1f}" y="{y - 6:.1f}" font-size="12" fill="{colour}" '
                     f'font-weight="700">{escape(t("side." + side))}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
