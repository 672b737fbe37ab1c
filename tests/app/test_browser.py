"""The dashboard in real headless Chromium (Debian's, driven by Playwright).

One server (gunicorn, as ``guandan-ref serve`` runs it) on a store holding a live table
(T3) and the shipped example session (T1, finished). A referee watches T3 update while
another client posts events, confirms a flag, corrects a misread play, sees the result
appear, and switches to Chinese. Screenshots of each page go to ``test-artifacts/``.
"""

from __future__ import annotations

import io
import json
import os
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from web.app.accounts import add_user, create_token
from web.store import open_store

from .conftest import PASSWORD, session_events
from .test_cli import serving

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (./run.sh setup)")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("dashboard")
    with open_store(data_dir=str(data)) as store:
        for role in ("chief", "referee"):
            add_user(store, role, role, PASSWORD)
        token = create_token(store, "T3")
        floor_token = create_token(store, "T4")
        example = [json.loads(line) for line in EXAMPLE.read_text().splitlines() if line.strip()]
        store.append_many(example)  # its own table, T1, as ./run.sh serve shows it
    with serving(data, env={"GUANDAN_ADMIN_PASSWORD": PASSWORD}) as (port, _):
        base = f"http://127.0.0.1:{port}"
        frame = send_frame(base, token)
        events = session_events()
        events[3]["evidence"] = {"frames": [frame], "tags": ["low_confidence"]}  # E's doubtful 5S
        events[4]["evidence"] = {"reads": [{"tag": "04A1B2", "card": "7D", "antenna": "S"}]}
        post(base, token, events)
        yield base, token, floor_token


def send_frame(base: str, token: str, table: str = "T3") -> str:
    """A JPEG evidence frame (a drawn play area) sent as the table agent does; its SHA-256."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (320, 200), (31, 107, 69))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((130, 50, 190, 140), radius=6, fill="white", outline="black")
    draw.text((138, 58), "5", fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG")
    request = urllib.request.Request(f"{base}/api/tables/{table}/evidence", data=buffer.getvalue(),
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "image/jpeg"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())["id"]


def post(base: str, token: str, events: list[dict], table: str = "T3", what: str = "events") -> list[dict]:
    request = urllib.request.Request(f"{base}/api/tables/{table}/{what}", data=json.dumps(events).encode(),
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read()).get("results")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield chromium
        chromium.close()


def shot(page, name: str, full_page: bool = True) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)


def log_in(page, base: str, role: str) -> None:
    page.goto(f"{base}/login")
    page.fill("input[name=name]", role)
    page.fill("input[name=password]", PASSWORD)
    page.click("form.login button[type=submit]")
    page.wait_for_url(f"{base}/")


def test_a_referee_watches_rules_and_corrects_live(server, browser):
    base, token, _ = server
    wall = browser.new_page(viewport={"width": 1920, "height": 1080})
    log_in(wall, base, "referee")  # the referees' wall: a spectator sees no flag nobody confirmed
    assert wall.locator("#tile-T3.flagged").count() == 1  # the open P4 flag stands out
    shot(wall, "floor")

    page = browser.new_page(viewport={"width": 1280, "height": 800})  # a 10" tablet
    log_in(page, base, "chief")
    page.goto(f"{base}/tables/T3")
    assert page.locator('[data-card="JS"]').count() == 0
    post(base, token, [{"type": "play", "t": 21.0, "id": "p6", "seat": "S", "cards": ["JS"], "source": "camera",
                        "confidence": 0.93}])
    page.wait_for_selector('.felt [data-card="JS"]', timeout=5000)  # live, without reload
    wall.wait_for_selector('#tile-T3 .count.turn:has-text("East")', timeout=5000)
    shot(page, "table")

    results = browser.new_page(viewport={"width": 1280, "height": 800})
    results.goto(f"{base}/results#table-T3")
    assert "No deal finished yet" in results.inner_text("#table-T3")

    page.goto(f"{base}/flags/")
    flag = page.locator('article.flag-item.status-open[data-rule="P4"]')
    assert "out of turn" in flag.inner_text() and "violation" in flag.inner_text().lower()
    assert flag.locator(".rule-text").inner_text().startswith("P4")
    assert "04A1B2" in flag.locator(".reads").inner_text()  # the RFID reads behind the play
    frame = page.locator('article.flag-item[data-rule="low_confidence"] img.frame')
    assert frame.evaluate("img => img.complete && img.naturalWidth") == 320  # served to a referee
    shot(page, "flags")
    flag.locator("form.confirm select").select_option("foul")  # chief referee: a foul ends the deal (X3)
    flag.locator("form.confirm button").click()
    page.wait_for_selector('article.flag-item.status-confirmed[data-rule="P4"]', state="attached")
    expect(results.locator("#table-T3 .deals")).to_contain_text("›", timeout=5000)  # no eval: the CSP forbids it

    review = page.locator('article.flag-item[data-rule="low_confidence"]')
    review.locator("input[name=cards]").fill("6S")
    review.locator("form.correct button").click()
    page.wait_for_url(f"{base}/flags/")
    page.goto(f"{base}/tables/T3")
    assert "corrected by chief" in page.inner_text(".history")
    assert page.locator('.history [data-card="6S"]').count() == 1

    page.goto(f"{base}/tables/T3/review?deal=1&step=4")
    assert "step 4 of" in page.inner_text(".stepper")
    shot(page, "appeal-review")

    page.goto(f"{base}/results")
    shot(page, "results")
    page.goto(f"{base}/tables/T1")
    assert "24 : 4" in page.inner_text(".facts")
    shot(page, "table-finished")
    shot(page, "readme-table", full_page=False)  # the shipped example, as ./run.sh serve shows it

    page.click('button[data-lang="zh"]')
    page.wait_for_selector("text=赛场总览")
    assert "余牌" in page.inner_text("main")
    shot(page, "table-zh")
    page.goto(base + "/")
    shot(page, "floor-zh")


SAME_TILE = """table => fetch("/floor/tile/" + table).then(r => r.text()).then(html => {
    const holder = document.createElement("div");
    holder.innerHTML = html.trim();
    function canonical(tile) {
        const copy = tile.cloneNode(true);
        copy.querySelectorAll(".clock").forEach(c => { c.textContent = ""; });  // counted down live
        const number = name => name === "data-limit" || name === "data-elapsed";
        const tree = [copy, ...copy.querySelectorAll("*")].map(el => [el.tagName, ...Array.from(el.attributes)
            .map(a => a.name + "=" + (number(a.name) ? parseFloat(a.value) : a.value)).sort()].join(" "));
        return {tree: tree, text: copy.textContent.replace(/\\s+/g, " ").trim()};
    }
    return [canonical(document.getElementById("tile-" + table)), canonical(holder.firstElementChild)];
})"""
"""The live tile (drawn by live.js from the stream) and the server's tile (``_tile.html``),
as element tree and text: one view, drawn in two places, must not drift apart."""


def test_the_floor_draws_changes_from_the_stream_as_the_server_draws_tiles(server, browser):
    base, _, token = server
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    log_in(page, base, "referee")  # officials see the flags on the floor (a spectator does not)
    assert page.get_attribute("#tile-T4", "data-seq") == "0"  # an agent token, no event yet: waiting
    post(base, token, {"fps": 12.5, "camera": "ok", "calibration": "lost", "outbox": 3,
                       "perception": {"plays": 9, "misread": 1, "caught": 1, "uncaught": 0, "deals": 1,
                                      "deals_right": 0}}, "T4", "health")
    events = session_events("T4")
    for event in events:
        event["table"] = "T4"
    post(base, token, events[:5], "T4")
    page.wait_for_selector('#tile-T4[data-seq="5"] .count.turn', timeout=5000)
    live, served = page.evaluate(SAME_TILE, "T4")
    assert live == served
    assert "flagged" in page.get_attribute("#tile-T4", "class")  # S played out of turn (P4)
    assert "12 fps" in live["text"] and "calibration lost" in live["text"]  # 12.5: halves to even, as "%.0f"
    shot(page, "floor-live")

    page.click('button[data-lang="zh"]')
    page.wait_for_selector("text=赛场总览")
    post(base, token, events[5:6], "T4")  # the page showed seq 5: this tile comes whole
    page.wait_for_selector('#tile-T4[data-seq="6"]', timeout=5000)
    post(base, token, events[6:], "T4")  # and this one as a change from it
    page.wait_for_selector('#tile-T4[data-seq="7"]', timeout=5000)
    live, served = page.evaluate(SAME_TILE, "T4")
    assert live == served and "轮到" in live["text"] and "校准 丢失" in live["text"]
    shot(page, "floor-live-zh")
    tile_fetches = [url for url in requests if "/floor/tile/" in url]
    assert len(tile_fetches) == 2  # the two comparisons above; the stream's changes fetched nothing
