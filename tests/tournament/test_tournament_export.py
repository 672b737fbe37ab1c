"""Score sheets a director signs (PDF with an embedded CJK font, checked by rendering it),
standings as PDF, CSV and aligned text."""

from __future__ import annotations

import shutil
import subprocess

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from web.tournament import export, fonts, service, signoff
from web.tournament.text import fit, width

pytestmark = pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="poppler-utils (./run.sh setup installs it)")

DPI = 144
PLAYERS = {"P1": ("张伟", "李娜"), "P2": ("王芳", "刘洋"), "P3": ("陈静", "杨磊"), "P4": ("赵敏", "黄涛")}


@pytest.fixture
def cup(store, desk):
    """Round 1 of a four-pair cup: table 1 played, a warning given and both sides signed;
    table 2 forfeited by its EW pair."""
    service.create(store, "CUP", "六摩尔杯掼蛋友谊赛", rounds=2, seed=5)
    for pair, (a, b) in PLAYERS.items():
        service.add_pair(store, "CUP", pair, f"{a}{b}队", a, b)
    played, forfeited = service.pair_round(store, "CUP", by_rating=True)
    desk.play(played, ns_plays=3, ew_plays=1)
    store.append({"type": "penalty", "table": played.table_id, "t": 100.0, "side": "EW", "level": "warning",
                  "rule": "K4", "by": "Ref Li"})
    signoff.sign(store, played.table_id, "NS", PLAYERS[played.ns][0])
    signoff.sign(store, played.table_id, "EW", PLAYERS[played.ew][1])
    service.record_forfeit(store, "CUP", 1, forfeited.ew, by="Chief Wang", reason="迟到超过十分钟 (K5)")
    return store, played, forfeited


def _pdf_text(path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True,
                          text=True).stdout


def _render(path, page: int = 1) -> np.ndarray:
    out = path.with_suffix("")
    subprocess.run(["pdftoppm", "-r", str(DPI), "-f", str(page), "-l", str(page), "-gray", "-png",
                    str(path), str(out)], check=True)
    (png,) = out.parent.glob(f"{out.name}-*{page}.png")
    return cv2.imread(str(png), cv2.IMREAD_GRAYSCALE)


def _drawn(page: np.ndarray, text: str, points: float) -> float:
    """How well ``text``, rendered here with the same font at the sheet's size, matches
    somewhere on the page (1.0: pixel for pixel). Boxes (tofu) in its place score low."""
    size = round(points * DPI / 72)
    font = ImageFont.truetype(str(fonts.font_file()), size, index=0)
    left, top, right, bottom = font.getbbox(text)
    image = Image.new("L", (right - left + 4, bottom - top + 4), 255)
    ImageDraw.Draw(image).text((2 - left, 2 - top), text, font=font, fill=0)
    template = np.asarray(image)
    return float(cv2.matchTemplate(page, template, cv2.TM_CCOEFF_NORMED).max())


def test_the_sheet_embeds_a_subset_cjk_font_and_draws_the_chinese_names(cup, tmp_path):
    store, played, _ = cup
    path = tmp_path / "sheet.pdf"
    export.write_sheets_pdf(export.tournament_sheets(store, "CUP", 1), str(path))
    listing = subprocess.run(["pdffonts", str(path)], check=True, capture_output=True, text=True).stdout
    rows = [line.split() for line in listing.splitlines()[2:]]
    assert rows and all(r[-5:-3] == ["yes", "yes"] for r in rows), listing  # every font embedded, subset
    page = _render(path)
    for name in (*PLAYERS[played.ns], *PLAYERS[played.ew]):
        assert _drawn(page, name, 9) > 0.8, name


def test_without_cjk_glyphs_the_same_check_sees_tofu(cup, tmp_path, monkeypatch):
    """The check above can fail: a sheet set in a font without Chinese glyphs draws boxes."""
    store, played, _ = cup
    monkeypatch.setenv(fonts.FONT_ENV, "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    monkeypatch.setattr(fonts, "FONT_NAME", "LatinOnly")
    if not fonts.font_file().is_file():
        pytest.skip("DejaVu Sans is not installed")
    path = tmp_path / "tofu.pdf"
    export.write_sheets_pdf(export.tournament_sheets(store, "CUP", 1), str(path))
    page = _render(path)
    monkeypatch.delenv(fonts.FONT_ENV)
    assert _drawn(page, PLAYERS[played.ns][0], 9) < 0.6


def test_the_sheet_says_what_a_director_signs(cup, tmp_path):
    store, played, forfeited = cup
    path = tmp_path / "sheet.pdf"
    export.write_sheets_pdf(export.tournament_sheets(store, "CUP", 1), str(path))
    first, second = _pdf_text(path).split("\f")[:2]
    for label in ("掼蛋记分表", "Guandan score sheet", "六摩尔杯掼蛋友谊赛 (CUP)", "第1轮 Round 1",
                  f"{played.table_no}号桌 Table {played.table_no}", "南北方 NS", "东西方 EW",
                  "上游 1st", "下游 4th", "升级 Upgrade", "结束原因 Round ended",
                  "成绩 Result (28-point)", "南北方 NS 16 : 12 东西方 EW", "签字确认 Sign-off (S3)", "已确认 final",
                  "警告 warning", "K4", "Ref Li", "南北方队长签字 NS captain", "东西方队长签字 EW captain",
                  "裁判员签字 Referee", f"{PLAYERS[played.ns][0]} / {PLAYERS[played.ns][1]}",
                  f"{PLAYERS[played.ew][0]}{PLAYERS[played.ew][1]}队"):
        assert label in first, label
    for label in ("弃权 Forfeit", f"{forfeited.ew} (X4)", "南北方 NS 17 : 0 东西方 EW", "Chief Wang",
                  "迟到超过十分钟 (K5)"):
        assert label in second, label
    assert "level_ns" not in first  # headers are labels, not field names


@pytest.mark.parametrize("reason, shown", [("passed_a", "过A Passed A"), ("deals", "副数已满 Deal limit reached (W1)"),
                                           ("time", "时间到 Time is up (W1)")])
def test_the_sheet_says_why_the_round_ended(reason, shown):
    result = {"levels": {"NS": "A+", "EW": "9"}, "level_difference": 6, "score": {"NS": 20, "EW": 8},
              "winner": "NS", "reason": reason}
    sheet = export.ScoreSheet("T1", export.Team("P1"), export.Team("P2"), result=result,
                              signoff={"state": "pending", "signed": {}})
    lines = dict(export._result_lines(sheet))
    assert lines["结束原因 Round ended"] == shown and lines["签字确认 Sign-off (S3)"] == "待签字 pending"


def test_the_standings_pdf_draws_the_chinese_names(cup, tmp_path):
    store, _, _ = cup
    rows = service.standings_of(store, "CUP")
    pairs = service.pairs(store, "CUP")
    path = tmp_path / "standings.pdf"
    export.write_standings_pdf(rows, pairs, "competition", str(path), "after round 1")
    assert path.read_bytes().startswith(b"%PDF")
    text = _pdf_text(path)
    assert "排名 Standings" in text and "积分 MP" in text and "张伟李娜队" in text
    assert _drawn(_render(path), "张伟李娜队", 9) > 0.8


def test_plain_text_standings_line_up_with_chinese_names(cup):
    store, _, _ = cup
    lines = export.standings_text(service.standings_of(store, "CUP"), service.pairs(store, "CUP"), "competition")
    header = lines[0]
    lot = width(header[:header.index("抽签 Lot") + len("抽签 Lot")])
    assert {width(line) for line in lines} == {lot, width(header)}  # lots right-aligned, then the notes
    assert len({len(line) for line in lines}) > 1  # which counting characters would not give
    mp = width(header[:header.index("积分 MP") + len("积分 MP")])
    for line in lines[1:]:  # match points end under the end of their heading
        cut = next(i for i in range(len(line) + 1) if width(line[:i]) == mp)
        assert line[:cut].rstrip()[-1].isdigit() and line[cut] == " "


def test_width_counts_wide_characters_twice():
    assert width("张伟 P1") == 7 and width("Ａ") == 2
    assert fit("江苏淮安队", 6) == "江苏… " and width(fit("江苏淮安队", 6)) == 6
    assert fit("P1", 4, right=True) == "  P1"
