"""Papers a director files without edits: disputes and resolutions, lateness in minutes,
forfeit lines, the seeds' level notation, the event's time zone, byes with a sheet,
numbers right-aligned (PDFs rendered by poppler and compared with their text); CSV with a
BOM, names, rulings and disputes; .xlsx of the standings and the sheets."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess

import pytest
from openpyxl import load_workbook

from web.tournament import export, service, signoff

pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils (./run.sh setup installs it)")


def _text(path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True,
                          text=True).stdout


def _words(path) -> list[tuple[float, float, float, str]]:
    """Every word of page 1 as (xMin, xMax, yMin, text), as poppler lays the page out."""
    html = subprocess.run(["pdftotext", "-bbox", "-f", "1", "-l", "1", str(path), "-"], check=True,
                          capture_output=True, text=True).stdout
    return [(float(a), float(b), float(y), w) for a, y, b, w in
            re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)</word>', html)]


def _session(store, m, *events):
    store.append_many([{**e, "table": m.table_id, "t": float(i)} for i, e in enumerate(
        [{"type": "session_start", "teams": {"NS": m.ns, "EW": m.ew}}, *events], 1)])


@pytest.fixture
def liumoer_cup(real_store, liumoer):
    """Round 1 of a six-pair 六摩尔 cup: table 1 EW 7 min late (K5 foul), table 2 EW 12 min late
    (the table's K5 forfeit, then disputed and resolved), table 3 forfeited by the chief."""
    store = real_store
    service.create(store, "LM", "六摩尔杯", ruleset=liumoer, rounds=4, seed=2)
    for p in "ABCDEF":
        service.add_pair(store, "LM", p, f"{p}队", f"{p}甲", f"{p}乙")
    t1, t2, t3 = service.pair_round(store, "LM")
    _session(store, t1, {"type": "arrival", "side": "EW", "minutes_late": 7},
             {"type": "penalty", "side": "EW", "level": "foul", "rule": "K5", "by": "Chief Wang"})
    _session(store, t2, {"type": "arrival", "side": "EW", "minutes_late": 12},
             {"type": "penalty", "side": "EW", "level": "loss", "rule": "K5", "by": "Chief Wang"})
    signoff.dispute(store, t2.table_id, "EW", f"{t2.ew}甲", "we were at the wrong table")
    signoff.resolve(store, t2.table_id, "Ref Li", "the late arrival stands")
    service.record_forfeit(store, "LM", 1, t3.ns, by="Chief Wang", reason="absent")
    return store, (t1, t2, t3)


def test_the_sheets_say_lateness_disputes_resolutions_and_forfeit_levels_in_words(liumoer_cup, tmp_path):
    store, (t1, t2, t3) = liumoer_cup
    path = tmp_path / "r1.pdf"
    export.save_sheets(export.tournament_sheets(store, "LM", 1), str(path))
    first, second, third = (re.sub(r"\s+", " ", page) for page in _text(path).split("\f")[:3])
    assert "迟到 7 分钟 7 minutes late" in first and "table time" not in first
    assert "迟到 12 分钟 12 minutes late" in second
    assert "弃权 Forfeit (K5, X4)" in second and "南北方 NS A : 6 东西方 EW" in second
    assert "异议与裁定 Disputes and resolutions" in second
    assert re.search(rf"东西方 EW {t2.ew}甲, 2\d\d\d-\d\d-\d\d \d\d:\d\d:\d\d Asia/Shanghai, "
                     r"S4 scoring error \(before both sides signed\): we were at the wrong table", second), second
    assert "已裁定 resolved by Ref Li" in second and "the late arrival stands" in second
    assert "1 异议已裁定 dispute(s) resolved" in second
    assert "UTC" not in first + second + third
    assert "弃权 Forfeit" in third and "南北方 NS 6 : A 东西方 EW" in third  # NS forfeited: scored A:6 for EW
    assert "南北方 NS 6 : 22 东西方 EW" in third and "弃权 forfeit" in third and "Asia/Shanghai" in third


def test_levels_print_as_the_seeds_write_them(tmp_path):
    result = {"levels": {"NS": "A+", "EW": "T"}, "level_difference": 3, "score": {"NS": 17, "EW": 11},
              "winner": "NS", "reason": "passed_a"}
    deals = [{"deal": 1, "order": ["N", "E", "S", "W"], "upgrade": {"NS": 2}, "levels": {"NS": "T", "EW": "2"}}]
    sheet = export.ScoreSheet("T1", export.Team("P1"), export.Team("P2"), deals=deals, result=result,
                              signoff={"state": "pending", "signed": {}})
    path = tmp_path / "levels.pdf"
    export.write_sheets_pdf([sheet], str(path))
    text = re.sub(r"\s+", " ", _text(path))
    assert "南北方 NS 过A : 10 东西方 EW" in text and "A+" not in text and " T " not in text
    assert [r["level_ns"] for r in sheet.rows()] == ["10", "过A"]


@pytest.fixture
def five(store, desk):
    """Round 1 of five pairs (one bye), played and signed; then table 1 disputed."""
    service.create(store, "FIVE", "五队赛", rounds=3, seed=4)
    for p in ("P1", "P2", "P3", "P4", "P5"):
        service.add_pair(store, "FIVE", p, f"{p}队", f"{p}1", f"{p}2")
    drawn = service.pair_round(store, "FIVE")
    desk.play_round(drawn)
    played = next(m for m in drawn if m.ew is not None)
    signoff.dispute(store, played.table_id, "EW", f"{played.ew}1", "deal 1 order")
    bye = next(m for m in drawn if m.ew is None)
    return store, played, bye


def test_a_bye_has_its_sheet_and_is_marked_in_the_standings(five, tmp_path):
    store, played, bye = five
    sheets = export.tournament_sheets(store, "FIVE", 1)
    assert [s.table for s in sheets][-1] == bye.table_id
    path = tmp_path / "sheets.pdf"
    export.save_sheets(sheets, str(path))
    last = re.sub(r"\s+", " ", _text(path).split("\f")[len(sheets) - 1])
    assert "轮空 bye: 计为弃权胜 counts as a forfeit win (X4)" in last and f"{bye.ns} {bye.ns}队 17" in last
    rows = {r.pair: r for r in service.standings_of(store, "FIVE")}
    assert export.standing_notes(rows[bye.ns]) == "轮空 bye R1"
    assert export.standing_notes(rows[played.ew]) == "有异议 disputed R1"


def test_csv_has_a_bom_names_rulings_and_disputes(five, tmp_path):
    store, played, _ = five
    store.append({"type": "penalty", "table": played.table_id, "t": 50.0, "side": "NS", "level": "warning",
                  "rule": "K4", "by": "Ref Li"})
    path = tmp_path / "sheets.csv"
    export.save_sheets(export.tournament_sheets(store, "FIVE", 1), str(path))
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.decode("utf-8-sig").encode("utf-8") != data
    rows = [r for r in csv.DictReader(io.StringIO(data.decode("utf-8-sig"))) if r["table"] == played.table_id]
    assert {(r["ns_name"], r["ew_name"]) for r in rows} == {(f"{played.ns}队", f"{played.ew}队")}
    lines = {r["line"]: r["note"] for r in rows}
    assert lines["ruling"] == "警告 warning; 南北方 NS; K4; Ref Li; 第1副 deal 1"
    assert lines["dispute"].startswith(f"东西方 EW {played.ew}1, ") and "deal 1 order" in lines["dispute"]
    assert lines["dispute"].endswith("未裁定 not yet resolved")
    standings = tmp_path / "standings.csv"
    export.save_standings(service.standings_of(store, "FIVE"), service.pairs(store, "FIVE"),
                          service.event_info(store, "FIVE"), str(standings))
    assert standings.read_bytes().startswith(b"\xef\xbb\xbf")
    table = list(csv.DictReader(standings.open(encoding="utf-8-sig")))
    assert {r["notes"] for r in table} == {"", "轮空 bye R1", "有异议 disputed R1"}


def test_xlsx_of_the_standings_and_the_sheets(five, tmp_path):
    store, played, bye = five
    rows = service.standings_of(store, "FIVE")
    path = tmp_path / "standings.xlsx"
    export.save_standings(rows, service.pairs(store, "FIVE"), service.event_info(store, "FIVE"), str(path))
    ws = load_workbook(path).active
    values = list(ws.iter_rows(values_only=True))
    assert values[0][0].startswith("五队赛 (FIVE) · 第1轮后 after round 1")
    assert values[1][:5] == ("名次 Rank", "编号 Pair", "队名 Team", "选手 Players", "积分 MP")
    assert [v[0] for v in values[2:]] == list(range(1, 6)) and all(isinstance(v[4], int) for v in values[2:])
    assert [v[1] for v in values[2:]] == [r.pair for r in rows]
    sheets = tmp_path / "sheets.xlsx"
    export.save_sheets(export.tournament_sheets(store, "FIVE"), str(sheets))
    book = load_workbook(sheets)
    assert book.sheetnames == ["R1-T1", "R1-T2", "R1-T3"]
    table = list(book[f"R1-T{played.table_no}"].iter_rows(values_only=True))
    assert table[0][:6] == ("table", "round", "ns", "ns_name", "ew", "ew_name")
    assert [r[6] for r in table[1:]] == ["result", "dispute"]
    with pytest.raises(ValueError, match=r"name a .pdf, .csv or .xlsx file"):
        export.save_sheets([], str(tmp_path / "sheets.ods"))


def test_numbers_in_the_standings_pdf_are_right_aligned(five, tmp_path):
    store, _, _ = five
    path = tmp_path / "standings.pdf"
    export.save_standings(service.standings_of(store, "FIVE"), service.pairs(store, "FIVE"),
                          service.event_info(store, "FIVE"), str(path))
    words = _words(path)
    (head,) = [w for w in words if w[3] == "LD"]  # 级差分 LD pts: its last word ends at the cell's right
    (pts,) = [w for w in words if w[3] == "pts" and abs(w[2] - head[2]) < 1]
    column = [w for w in words if w[2] > head[2] + 5 and w[3].isdigit() and head[0] - 5 < w[0] < pts[1]]
    assert len(column) == 5
    assert all(abs(w[1] - pts[1]) < 0.5 for w in column), (pts, column)  # every number ends where the label does
