"""Outline-font training designs: more glyph looks, the same seeds, inked index boxes."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from recognizer.training.synth import HELD_OUT_PROCEDURAL, card_image, procedural_design
from recognizer.training.synth.fonts import GLYPHS, index_fonts, text_mask
from referee.cards import BJ, SJ, parse_card

FONTS = index_fonts()
needs_fonts = pytest.mark.skipif(not FONTS, reason="Pillow or outline fonts missing (pip install pillow; apt-get install the FONT_PACKAGES)")


@needs_fonts
def test_every_listed_font_draws_each_rank_as_its_own_glyph():
    for font in FONTS[:: max(1, len(FONTS) // 12)]:
        masks = [text_mask(font, g, 64) for g in GLYPHS]
        assert all(m.shape[0] >= 20 and m.max() > 200 for m in masks), font
        assert len({m.tobytes() + bytes(m.shape) for m in masks}) == len(GLYPHS), font


def test_unreadable_font_files_are_skipped(tmp_path):
    (tmp_path / "broken.ttf").write_bytes(b"not a font")
    assert index_fonts(tmp_path) == ()


@needs_fonts
def test_fonts_change_only_the_glyphs_and_joker_index_of_a_seed():
    for seed in range(40):
        plain, fancy = procedural_design(seed), procedural_design(seed, fonts=FONTS)
        assert dataclasses.replace(fancy, ttf=None, joker_style=plain.joker_style) == plain
    styles = [procedural_design(seed, fonts=FONTS) for seed in range(200)]
    assert 0.6 < np.mean([d.ttf is not None for d in styles]) < 0.9
    assert any(d.joker_style == 3 for d in styles)
    assert all(Path(d.ttf).exists() for d in styles if d.ttf)


def test_named_designs_never_use_outline_fonts():
    assert all(d.ttf is None for d in HELD_OUT_PROCEDURAL)


@needs_fonts
@pytest.mark.parametrize("name", ["TD", "QS", "5H", "SJ", "BJ"])
def test_outline_font_index_box_holds_ink(name):
    card = parse_card(name)
    checked = 0
    for seed in range(60):
        design = procedural_design(seed, fonts=FONTS)
        if design.ttf is None or (card in (SJ, BJ) and design.joker_style != 3):
            continue
        img = card_image(card, design, 240)
        x0, y0, x1, y1 = (int(round(v)) for v in design.index_box(card, 240))
        patch = img[y0:y1, x0:x1, :3].astype(int)
        inked = np.abs(patch - np.array(design.paper)).sum(-1) > 120
        assert inked.mean() > 0.08, f"{name} in {design.name} ({design.ttf}): index box holds no ink"
        assert x1 - x0 > y1 - y0 if card in (SJ, BJ) else y1 - y0 > x1 - x0  # the word across is wide
        checked += 1
    assert checked >= 3


def _joker_index_ink(design):
    """For the big joker of ``design`` (drawn once, 400 px high): whether its index is inked
    at the points ``points_at(cx, cy, w, h)`` gives, from the index's centre and inner size."""
    img = card_image(BJ, design, 400)
    x0, y0, x1, y1 = design.index_box(BJ, 400)
    pad = 0.01 * 400
    centre_and_size = ((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0 - 2 * pad, y1 - y0 - 2 * pad)
    return lambda points_at: [int(np.abs(img[round(y), round(x), :3].astype(int) - np.array(design.paper)).sum()) > 120 for x, y in points_at(*centre_and_size)]


def _circle(f, angles):
    return lambda cx, cy, w, h: [(cx + f * w * np.cos(a), cy + f * h * np.sin(a)) for a in angles]


@needs_fonts
def test_star_jokers_come_plain_as_a_badge_or_in_a_ring():
    """Decks print the joker's star emblem in dark on light (style 1), in light cut out of a
    dark disc (style 4) or framed by a thin ring (style 5): the centre of the index is inked
    but for the badge; the rim all round is inked for the badge and the ring, not for the plain
    star; between the ring's star and its rim lies paper."""
    styles = {}
    for seed in range(300):
        design = procedural_design(seed, fonts=FONTS)
        styles.setdefault(design.joker_style, design)
    assert {1, 4, 5} <= set(styles)
    rim = _circle(0.47, np.linspace(0, 2 * np.pi, 8, endpoint=False))
    ink = {style: _joker_index_ink(styles[style]) for style in (1, 4, 5)}
    for style, centre_inked, rim_inked in ((1, True, False), (4, False, True), (5, True, True)):
        assert ink[style](_circle(0, [0])) == [centre_inked], f"style {style}"
        assert (sum(ink[style](rim)) >= 6) == rim_inked, f"style {style}"
    valleys = _circle(0.41, np.linspace(0, 2 * np.pi, 5, endpoint=False) - np.pi / 2 + np.pi / 5)
    assert sum(ink[5](valleys)) <= 1, "the ring's star touches its ring"
