"""At the table, in real headless Chromium: a scorer issues a finished table's sign-off
links (QR codes on the table page and the slip), a captain signs on a 360x800 phone and
the other side disputes by typed code; the results page names each door. Every public
page (floor, a table, results, standings, the sign page) at 360x800 and on a screen, in
English and Chinese: nothing wider than the viewport, no two texts on top of each other.
Screenshots go to ``test-artifacts/``."""

from __future__ import annotations

import os
import re

import pytest

from tests.app.conftest import PASSWORD, session_events
from tests.app.test_browser import CHROMIUM, browser, log_in, shot  # noqa: F401 (the module's fixture)
from tests.app.test_cli import serving
from web.app.accounts import add_user
from web.store import open_store
from web.tournament import service
from web.tournament.tables import TournamentTables

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (./run.sh setup)")
PHONE = {"width": 360, "height": 800}
SCREEN = {"width": 1366, "height": 768}
NAMES = {"P1": "南京队", "P2": "苏州队", "P3": "扬州队", "P4": "淮安队"}


@pytest.fixture(scope="module")
def cup(tmp_path_factory):
    """Round 1 of a four-pair cup, both tables ended by a loss (X4), and a table mid-deal."""
    data = tmp_path_factory.mktemp("signcup")
    with open_store(data_dir=str(data), table_rules=TournamentTables()) as store:
        add_user(store, "scorer", "scorer", PASSWORD)
        store.add_official("Chief Wang", "chief")
        service.create(store, "CUP", "春季杯 Spring Cup", rounds=3, seed=4)
        for p, name in NAMES.items():
            service.add_pair(store, "CUP", p, name, f"{p}甲", f"{p}乙")
        drawn = service.pair_round(store, "CUP")
        for m in drawn:
            events = [{"type": "session_start", "teams": {"NS": m.ns, "EW": m.ew}},
                      {"type": "penalty", "side": "EW", "level": "loss", "rule": "X4", "by": "Chief Wang"}]
            store.append_many([{**e, "table": m.table_id, "t": float(i)} for i, e in enumerate(events, 1)])
        store.append_many([{**e, "table": "LIVE"} for e in session_events()])  # a deal under way, flagged
    with serving(data, env={"GUANDAN_ADMIN_PASSWORD": PASSWORD}) as (port, _):
        yield f"http://127.0.0.1:{port}", drawn


LAYOUT = """() => {
  const vw = document.documentElement.clientWidth;
  const scrolls = el => { for (let e = el; e && e !== document.body; e = e.parentElement) {
      const o = getComputedStyle(e).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') return true; }
    return false; };
  const boxes = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode, el = node.parentElement;
    if (!node.textContent.trim() || !el.offsetParent || el.closest('svg, option, select, details:not([open]) > :not(summary)')) continue;
    const range = document.createRange(); range.selectNodeContents(node);
    for (const r of range.getClientRects()) if (r.width > 1 && r.height > 1)
      boxes.push({r, el, text: node.textContent.trim().slice(0, 30), clipped: scrolls(el)});
  }
  const wide = boxes.filter(b => !b.clipped && (b.r.right > vw + 1 || b.r.left < -1)).map(b => b.text);
  const over = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i].r, b = boxes[j].r;
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left), h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 2 && h > 2) over.push(boxes[i].text + ' / ' + boxes[j].text);
  }
  return {page: document.documentElement.scrollWidth - vw, wide, over: over.slice(0, 5), texts: boxes.length};
}"""


def check_layout(page, name: str, screenshot: bool = True) -> None:
    """Nothing runs past the viewport (the page never scrolls sideways; a wide table scrolls
    in its own box) and no two pieces of text overlap; a screenshot for the eye."""
    found = page.evaluate(LAYOUT)
    assert found["texts"] > 3, name
    assert found["page"] <= 0 and not found["wide"], f"{name}: wider than the viewport: {found}"
    assert not found["over"], f"{name}: texts overlap: {found['over']}"
    if screenshot:
        shot(page, name)


def set_language(page, lang: str) -> None:
    page.click(f"button.lang[data-lang={lang}]")
    page.wait_for_load_state()


def test_a_captain_signs_on_a_phone_and_the_other_side_disputes_by_code(cup, browser):
    base, (m, o) = cup
    desk = browser.new_page(viewport=SCREEN)
    log_in(desk, base, "scorer")
    desk.goto(f"{base}/tables/{m.table_id}")
    desk.click("#sign-links button[type=submit]")
    desk.wait_for_url(re.compile(r".*/sign-slip$"))
    assert desk.locator(".sign-slip svg.qr").count() == 2  # one per side, on the printable slip
    links = {s.get_attribute("data-side"): (s.locator("a.qr-link").get_attribute("href"),
                                            s.locator(".code").get_attribute("data-code"))
             for s in desk.locator(".sign-slip").all()}
    desk.goto(f"{base}/tables/{m.table_id}")
    assert desk.locator("#sign-links svg.qr").count() == 2  # and on the table page
    shot(desk, "sign-table-scorer")

    phone = browser.new_page(viewport=PHONE, locale="zh-CN", extra_http_headers={"Accept-Language": "zh-CN,zh"})
    phone.goto(links["NS"][0])
    assert phone.inner_text("h1") == f"{m.table_id}号桌 · 南北方"  # the reader's language, untold
    result = phone.inner_text(".sign-result")
    assert "18 : 10" in result and "X4" in result and "Chief Wang" in result  # the score and the ruling
    check_layout(phone, "sign-phone-zh")
    phone.check(f"input[name=by][value='{m.ns}乙']")
    phone.click("button[value=sign]")
    assert f"{m.ns}乙已代表南北方签字" in phone.inner_text(".msg-ok")
    check_layout(phone, "sign-phone-done-zh")
    phone.goto(links["NS"][0])  # once: the spent link refuses, saying when and who
    assert "此链接已使用" in phone.inner_text(".msg-error") and f"signed by {m.ns}乙" in phone.inner_text(".msg-error")
    wrong = links["EW"][0].replace(f"/{m.table_id}/EW/", f"/{m.table_id}/NS/")
    phone.goto(wrong)
    assert "此链接属于另一方" in phone.inner_text(".msg-error")

    typed = browser.new_page(viewport=PHONE)
    typed.goto(f"{base}/sign")
    typed.fill("input[name=table]", m.table_id)
    typed.fill("input[name=code]", links["EW"][1])
    typed.click("form.sign-code button[type=submit]")
    typed.click(".sign-dispute summary")
    typed.fill("textarea[name=note]", "deal 1 was not a loss")
    typed.click("button[value=dispute]")
    assert "disputed the result for East–West" in typed.inner_text(".msg-ok")

    desk.goto(f"{base}/results#table-{m.table_id}")
    section = desk.locator(f"#table-{m.table_id}")
    rows = section.locator("details.signoff-trail tbody tr").all_text_contents()  # the live page may redraw it
    assert len(rows) == 2 and all("phone link" in r for r in rows) and all(re.search(r"#\d+ [0-9a-f]{12}", r)
                                                                           for r in rows)

    form = desk.locator(f"#table-{o.table_id} form[action$='/sign']")  # the desk signs from the pair list
    assert form.locator("select[name=by] option").all_inner_texts()[1:] == [
        f"{o.ns}甲", f"{o.ns}乙", f"{o.ew}甲", f"{o.ew}乙"]
    form.locator("select[name=side]").select_option("EW")
    form.locator("select[name=by]").select_option(f"{o.ew}甲")
    form.locator("button").click()
    assert desk.locator(f"#table-{o.table_id} .signoff .door-desk").inner_text() == "desk scorer"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_public_page_fits_a_phone_and_a_screen(cup, browser, lang):
    base, drawn = cup
    for name, viewport in (("phone", PHONE), ("screen", SCREEN)):
        page = browser.new_page(viewport=viewport)
        page.goto(base + "/")
        set_language(page, lang)
        for path, what in (("/", "floor"), (f"/tables/{drawn[1].table_id}", "table"), ("/tables/LIVE", "table-live"),
                           ("/results", "results"), ("/events/CUP", "standings"), ("/sign", "sign-code")):
            page.goto(base + path)
            check_layout(page, f"{what}-{name}-{lang}", screenshot=viewport is PHONE)  # the phone's for the eye
        assert page.locator("#sign-links, svg.qr").count() == 0  # a spectator never sees a side's link
        assert page.goto(f"{base}/tables/{drawn[1].table_id}/sign-slip").status == 403
        page.close()
