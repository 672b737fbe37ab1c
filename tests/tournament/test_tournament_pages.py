"""The dashboard's standings page in a real browser, in English and Chinese: the event's
name, every tie-break column with numbers right-aligned, byes and disputes marked,
pairings with team names and forfeits shown as such, and buttons that download what
they say (the standings or every sheet, as PDF, CSV with a BOM, or .xlsx)."""

from __future__ import annotations

import io
import os
import urllib.request

import pytest
from openpyxl import load_workbook

from tests.app.conftest import PASSWORD
from tests.app.test_browser import CHROMIUM, browser  # noqa: F401 (the module's fixture)
from tests.app.test_cli import serving
from web.app.accounts import add_user
from web.store import open_store
from web.tournament import service, signoff
from web.tournament.tables import TournamentTables

NAMES = {"P1": "南京队", "P2": "苏州队", "P3": "扬州队", "P4": "淮安队", "P5": "无锡队"}
pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (./run.sh setup)")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Round 1 of a five-pair cup: one table played and disputed, one forfeited at the table (K5), one bye."""
    data = tmp_path_factory.mktemp("cup")
    with open_store(data_dir=str(data), table_rules=TournamentTables()) as store:
        add_user(store, "chief", "chief", PASSWORD)
        store.add_official("Chief Wang", "chief")
        service.create(store, "CUP", "春季杯 Spring Cup", rounds=3, seed=4)
        for p, name in NAMES.items():
            service.add_pair(store, "CUP", p, name, f"{p}甲", f"{p}乙")
        played, late, bye = service.pair_round(store, "CUP")
        events = [{"type": "session_start", "teams": {"NS": played.ns, "EW": played.ew}},
                  {"type": "penalty", "side": "EW", "level": "loss", "rule": "X4", "by": "Chief Wang"}]
        store.append_many([{**e, "table": played.table_id, "t": float(i)} for i, e in enumerate(events, 1)])
        signoff.dispute(store, played.table_id, "EW", f"{played.ew}甲", "the loss was not ours")
        events = [{"type": "session_start", "teams": {"NS": late.ns, "EW": late.ew}},
                  {"type": "arrival", "side": "NS", "minutes_late": 12},
                  {"type": "penalty", "side": "NS", "level": "loss", "rule": "K5", "by": "Chief Wang"}]
        store.append_many([{**e, "table": late.table_id, "t": float(i)} for i, e in enumerate(events, 1)])
    with serving(data, env={"GUANDAN_ADMIN_PASSWORD": PASSWORD}) as (port, _):
        yield f"http://127.0.0.1:{port}", (played, late, bye)


def _fetch(url: str) -> tuple[str, str, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.headers["Content-Type"], response.headers["Content-Disposition"], response.read()


def test_the_standings_page_in_english(server, browser):
    base, (played, late, bye) = server
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{base}/events/CUP")
    assert page.inner_text("h1") == "Standings · 春季杯 Spring Cup"
    heads = page.locator("table.standings thead th").all_inner_texts()
    assert heads == ["Rank", "Pair", "Team", "Players", "Match points", "Progressive score (from round 2)",
                     "Rounds won", "Level-difference points", "Upgrades", "Lot", "Notes"]
    numbers = "table.standings tbody td.num, table.pairings td.num"
    assert page.locator(numbers).count() == 5 * 7 + 3 * 2
    # the page redraws itself as the stream opens (live.js): read the styles of the cells it shows then
    page.wait_for_function("""sel => [...document.querySelectorAll(sel)].every(
        c => getComputedStyle(c).textAlign === 'right')""", arg=numbers, timeout=10_000)
    notes = dict(zip(page.locator("table.standings tbody tr td:nth-child(2)").all_inner_texts(),
                     page.locator("table.standings tbody tr td:last-child").all_inner_texts()))
    assert notes[bye.ns].strip() == "bye in round 1"
    assert notes[played.ns].strip() == notes[played.ew].strip() == "round 1 disputed"
    rows = [r.split("\t") for r in page.locator("table.pairings tbody tr").all_inner_texts()]
    by_table = {r[0]: r for r in rows}
    team = {p: f"{p} {name}" for p, name in NAMES.items()}
    assert by_table[str(late.table_no)][1:] == [team[late.ns], team[late.ew], "0 : 17",
                                               f"forfeit by {late.ns} · awaiting signatures"]
    assert by_table[str(bye.table_no)][1:] == [team[bye.ns], "bye", "", "bye"]
    assert by_table[str(played.table_no)][1:] == [team[played.ns], team[played.ew], "18 : 10", "disputed"]
    buttons = {a.inner_text(): a.get_attribute("href") for a in page.locator("nav.downloads a").all()}
    assert list(buttons) == ["Standings (PDF)", "Standings (CSV)", "Standings (Excel)", "All score sheets (PDF)",
                             "All score sheets (CSV)", "All score sheets (Excel)"]
    kind, disposition, body = _fetch(base + buttons["Standings (CSV)"])
    assert kind.startswith("text/csv") and "CUP-standings.csv" in disposition
    assert body.startswith(b"\xef\xbb\xbfrank,pair,name") and "南京队" in body.decode("utf-8-sig")
    kind, disposition, body = _fetch(base + buttons["All score sheets (CSV)"])
    assert "CUP-sheets.csv" in disposition and b"line" in body and "the loss was not ours" in body.decode("utf-8-sig")
    assert _fetch(base + buttons["Standings (PDF)"])[2].startswith(b"%PDF")
    assert _fetch(base + buttons["All score sheets (PDF)"])[2].startswith(b"%PDF")
    book = load_workbook(io.BytesIO(_fetch(base + buttons["All score sheets (Excel)"])[2]))
    assert book.sheetnames == ["R1-T1", "R1-T2", "R1-T3"]
    book = load_workbook(io.BytesIO(_fetch(base + buttons["Standings (Excel)"])[2]))
    assert [r[1] for r in book.active.iter_rows(min_row=3, values_only=True)] == \
        page.locator("table.standings tbody tr td:nth-child(2)").all_inner_texts()


def test_the_standings_page_in_chinese(server, browser):
    base, (played, late, bye) = server
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{base}/events/CUP")
    page.click("button[data-lang=zh]")
    page.wait_for_selector("text=排名 · 春季杯 Spring Cup")
    heads = page.locator("table.standings thead th").all_inner_texts()
    assert heads == ["名次", "编号", "队名", "选手", "积分", "去首累进分", "胜轮", "级差分", "升级数", "抽签", "备注"]
    assert page.locator("nav.downloads a").all_inner_texts()[:3] == ["排名 (PDF)", "排名 (CSV)", "排名 (Excel)"]
    text = page.inner_text("#live")
    assert "第1轮轮空" in text and "第1轮有异议" in text and f"{late.ns}弃权" in text and "轮空" in text
