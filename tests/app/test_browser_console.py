"""The referee console and appeal review in real headless Chromium, in English and Chinese.

One server (gunicorn, as ``guandan-ref serve`` runs it); each test plays ``session_events`` on
tables of its own (E's 5S read with confidence 0.55, S's out-of-turn 7D: P4) and works as a
floor referee does: typing while the floor moves, "read is right" one by one and a table's
all at once, a read struck in error put back, the claim countdown and the filters, and
stepping through a deal on review.
Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import os
import threading

import pytest
from playwright.sync_api import expect

from web.app.accounts import add_user, create_token
from web.store import open_store

from .conftest import PASSWORD, session_events
from .test_browser import browser  # noqa: F401 (a fixture)
from .test_browser import ARTIFACTS, CHROMIUM, log_in, post, send_frame, shot
from .test_cli import serving

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (./run.sh setup)")

TABLES = [f"{name}-{lang}" for name in ("L", "R", "Q", "C", "D", "V", "K") for lang in ("en", "zh")]
WORDS = {
    "en": {"paused_changed": "Live updates paused: an item you are typing in was answered or changed meanwhile.",
           "paused_composing": "Live updates paused while you type with the input method",
           "doubt": "low-confidence read", "read_right": "Read is right", "all_2": "Read is right: all 2",
           "offline": "Live updates paused: the connection to the server was lost.",
           "read_confirmed": "read confirmed", "suspect": "suspected misread", "alternative": "alternative 1",
           "corrected": "corrected", "corrected_by": "corrected by referee",
           "countdown": "claim window: this trick, {n} pass(es) from its end",
           "show_ticks": "show clock ticks", "hide_ticks": "hide clock ticks",
           "original": "evidence sent with the original read", "step": "step {k} of {n}",
           "struck": "read struck: nobody played", "restore": "put the read back"},
    "zh": {"paused_changed": "实时更新已暂停：您正在填写的事项已被处理或已变化。",
           "paused_composing": "正在用输入法输入，实时更新暂停",
           "doubt": "识别存疑", "read_right": "识别无误", "all_2": "识别无误：全部 2 项",
           "offline": "实时更新已暂停：与服务器的连接中断",
           "read_confirmed": "已确认识别无误", "suspect": "疑似误识别", "alternative": "备选识别1",
           "corrected": "已更正", "corrected_by": "已由referee更正", "countdown": "指出时限：本圈内，再有{n}家过牌即结束",
           "show_ticks": "显示计时记录", "hide_ticks": "隐藏计时记录",
           "original": "原识别的证据", "step": "第 {k} / {n} 步",
           "struck": "识别已删除：未出牌", "restore": "恢复此识别"},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("console")
    with open_store(data_dir=str(data)) as store:
        for role in ("chief", "referee"):
            add_user(store, role, role, PASSWORD)
        tokens = {table: create_token(store, table) for table in TABLES}
    with serving(data, env={"GUANDAN_ADMIN_PASSWORD": PASSWORD}) as (port, proc):
        log: list[str] = []  # read as it comes: a full pipe would stall the server's writes
        threading.Thread(target=lambda: log.extend(proc.stdout), daemon=True).start()
        yield f"http://127.0.0.1:{port}", tokens
        (ARTIFACTS / "console-server.log").write_text("".join(log))


def start(server, table: str, evidence: dict | None = None) -> None:
    """``session_events`` played at ``table`` (E's doubtful 5S carrying ``evidence``)."""
    base, tokens = server
    events = session_events(table)
    for event in events:
        event["table"] = table
    if evidence:
        events[3]["evidence"] = evidence
    assert {r["status"] for r in post(base, tokens[table], events, table)} == {"accepted"}


def send(server, table: str, *events: dict) -> None:
    base, tokens = server
    results = post(base, tokens[table], [{**e, "table": table} for e in events], table)
    assert {r["status"] for r in results} == {"accepted"}, results


@pytest.fixture(scope="module")
def logins(server, browser) -> dict[str, dict]:
    """The cookies of each role's login, logged in once (the login limit counts attempts)."""
    out = {}
    for role in ("referee", "chief"):
        context = browser.new_context()
        log_in(context.new_page(), server[0], role)
        out[role] = context.storage_state()
        context.close()
    return out


@pytest.fixture
def referee_page(browser, logins):
    """A new browser (its own cookies) logged in, in a language; closed after the test."""
    contexts = []

    def open_page(base: str, lang: str, role: str = "referee"):
        contexts.append(browser.new_context(viewport={"width": 1280, "height": 800},  # a 10" tablet
                                            storage_state=logins[role]))
        page = contexts[-1].new_page()
        page.goto(base + "/")
        if lang == "zh":
            page.click('button[data-lang="zh"]')
            page.wait_for_selector("text=赛场总览")
        return page

    yield open_page
    for context in contexts:
        context.close()


def item(page, table: str, key: str):
    return page.locator(f'article[data-key="{table}:{key}"]')


def open_console(server, referee_page, lang: str, name: str):
    """``session_events`` at the test's own table, and a referee's console filtered to it."""
    table = f"{name}-{lang}"
    start(server, table)
    page = referee_page(server[0], lang)
    page.goto(f"{server[0]}/flags/?table={table}")
    return page, WORDS[lang], table


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_typing_survives_the_floor_moving_and_the_page_says_when_it_pauses(server, referee_page, lang):
    base, _ = server
    page, words, table = open_console(server, referee_page, lang, "L")
    note = page.locator("#live-note")
    reason = item(page, table, "P4:S:12.0").locator("form.dismiss input[name=reason]")
    reason.click()
    page.keyboard.type("pushed back at on")

    send(server, table, {"type": "play", "t": 21.0, "id": "p6", "seat": "S", "cards": ["JS"], "source": "camera",
                         "confidence": 0.5})
    expect(item(page, table, "low_confidence:S:21.0")).to_contain_text(words["doubt"], timeout=5000)
    expect(reason).to_have_value("pushed back at on")
    expect(reason).to_be_focused()
    expect(note).to_be_hidden()
    page.keyboard.type("ce")  # the caret stayed where it was
    expect(reason).to_have_value("pushed back at once")
    shot(page, f"console-typing-{lang}")

    reason.dispatch_event("compositionstart")  # typing through an input method (拼音)
    send(server, table, {"type": "fault", "t": 22.0, "id": "f1", "source": "camera", "message": "lens covered"})
    expect(note).to_contain_text(words["paused_composing"], timeout=5000)
    assert page.locator('article[data-rule="fault"]').count() == 0
    reason.dispatch_event("compositionend")
    expect(page.locator('article[data-rule="fault"]')).to_have_count(1, timeout=5000)
    expect(note).to_be_hidden()
    expect(reason).to_have_value("pushed back at once")

    chief = referee_page(base, lang, "chief")  # another referee answers the same flag meanwhile
    chief.goto(f"{base}/flags/?table={table}")
    item(chief, table, "P4:S:12.0").locator("form.confirm button").click()
    chief.wait_for_selector(f'article[data-key="{table}:P4:S:12.0"].status-confirmed', state="attached")
    expect(note).to_contain_text(words["paused_changed"], timeout=5000)
    expect(reason).to_have_value("pushed back at once")  # nothing typed is lost
    shot(page, f"console-paused-{lang}")
    reason.fill("")  # the referee lets it go: the page catches up
    expect(page.locator(f'article[data-key="{table}:P4:S:12.0"].status-confirmed')).to_have_count(1, timeout=5000)
    expect(note).to_be_hidden()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_read_is_right_one_click_and_a_tables_reads_together(server, referee_page, lang):
    base, _ = server
    page, words, table = open_console(server, referee_page, lang, "R")
    send(server, table, {"type": "play", "t": 21.0, "id": "p6", "seat": "S", "cards": ["JS"], "source": "camera",
                         "confidence": 0.5})
    group = page.locator(f'.read-group[data-table="{table}"]')
    expect(group.locator("form.confirm-all button")).to_have_text(words["all_2"], timeout=5000)
    shot(page, f"console-reads-{lang}")
    first = item(page, table, "low_confidence:E:9.0")
    first.locator(":scope > .actions form.confirm-read button").click()
    page.wait_for_load_state()
    confirmed = item(page, table, "low_confidence:E:9.0")
    expect(confirmed).to_have_class("flag-item kind-doubt status-read_confirmed review")
    expect(confirmed.locator(".status-label")).to_contain_text(f"{words['read_confirmed']} · referee")
    expect(group.locator("form.confirm-all")).to_have_count(0)  # one read left: its own button does

    send(server, table, {"type": "play", "t": 24.0, "id": "p7", "seat": "E", "cards": ["QS"], "source": "camera",
                         "confidence": 0.45})
    expect(group.locator("form.confirm-all button")).to_have_text(words["all_2"], timeout=5000)  # live
    group.locator("form.confirm-all button").click()
    page.wait_for_load_state()
    for key in ("low_confidence:S:21.0", "low_confidence:E:24.0"):
        expect(item(page, table, key)).to_have_class("flag-item kind-doubt status-read_confirmed review")
    expect(page.locator(".reads-pinned")).to_have_count(0)
    confirms = [e for e in json.loads(page.request.get(f"{base}/api/tables/{table}/events").text())["events"]
                if e["type"] == "confirm_read"]
    assert [e["of"] for e in confirms] == ["p2", "p6", "p7"]
    assert {e["by"] for e in confirms} == {"referee"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_suspected_read_is_answered_with_the_other_reading_in_one_click(server, referee_page, lang):
    base, _ = server
    page, words, table = open_console(server, referee_page, lang, "Q")
    send(server, table, {"type": "play", "t": 21.0, "id": "p6", "seat": "S", "cards": ["8S"], "source": "camera",
                         "confidence": 0.6, "alternatives": [{"cards": ["JS"], "p": 0.3}]})  # 8S cannot beat 9H
    suspect = item(page, table, "suspect_read:S:21.0")
    expect(suspect.locator("header")).to_contain_text(words["suspect"], timeout=5000)
    expect(suspect.locator(".reading")).to_contain_text(words["alternative"])
    shot(page, f"console-suspect-{lang}")
    suspect.locator('form.take-reading:has(input[name=cards][value="JS"]) button').click()
    page.wait_for_load_state()
    expect(item(page, table, "corrected:S:21.0").locator(".status-label")).to_have_text(
        f"{words['corrected']} · referee")
    expect(page.locator(f'article[data-key="{table}:suspect_read:S:21.0"].status-open')).to_have_count(0)
    page.goto(f"{base}/tables/{table}")
    expect(page.locator(".history")).to_contain_text(words["corrected_by"])
    assert page.locator('.history [data-card="JS"]').count() == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_read_struck_in_error_is_put_back_with_one_click(server, referee_page, lang):
    base, _ = server
    page, words, table = open_console(server, referee_page, lang, "K")
    doubt = item(page, table, "low_confidence:E:9.0")
    doubt.locator(":scope > .actions form.correct select[name=kind]").select_option("none")
    doubt.locator(":scope > .actions form.correct button").click()
    page.wait_for_load_state()
    struck = item(page, table, "struck:E:9.0")  # answered: among the closed items, folded
    page.locator("details.closed-flags > summary").click()
    expect(struck.locator("header")).to_contain_text(words["struck"], timeout=5000)
    expect(struck.locator("form.restore button")).to_have_text(words["restore"])
    shot(page, f"console-struck-{lang}")
    struck.locator("form.restore button").click()
    page.wait_for_load_state()
    expect(item(page, table, "struck:E:9.0")).to_have_count(0)
    page.goto(f"{base}/tables/{table}")
    expect(page.locator(".history")).to_contain_text(words["corrected_by"])
    assert page.locator('.history [data-card="5S"]').count() == 1  # E's play stands again


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_claim_countdown_runs_live_under_the_filters(server, referee_page, lang):
    base, _ = server
    words, table = WORDS[lang], f"C-{lang}"
    start(server, table)
    page = referee_page(base, lang)
    page.goto(f"{base}/flags/")
    page.select_option("form.filters select[name=table]", table)
    page.wait_for_url(f"{base}/flags/?table={table}*")
    page.select_option("form.filters select[name=kind]", "flag")
    page.wait_for_url(f"{base}/flags/?table={table}&kind=flag")
    assert set(page.locator("#live article").evaluate_all("a => a.map(x => x.dataset.table)")) == {table}
    countdown = item(page, table, "P4:S:12.0").locator(".countdown")
    expect(countdown).to_have_text(words["countdown"].format(n=3))  # W led 9H: S, E and N may pass
    start(server, f"D-{lang}")  # another table moves: filtered out
    send(server, table, {"type": "pass", "t": 20.0, "id": "x1", "seat": "S"})
    expect(countdown).to_have_text(words["countdown"].format(n=2), timeout=5000)
    assert page.locator('#live article:not([data-table="%s"])' % table).count() == 0
    assert page.locator("#live article.kind-doubt").count() == 0
    shot(page, f"console-countdown-{lang}")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_appeal_review_ticks_jumps_scroll_and_the_original_frame(server, referee_page, lang):
    base, tokens = server
    words, table = WORDS[lang], f"V-{lang}"
    frame = send_frame(base, tokens[table], table)
    start(server, table, {"frames": [frame]})
    ticks = [{"type": "tick", "t": round(18.1 + 0.4 * i, 1), "id": f"tick{i}"} for i in range(45)]
    send(server, table, *ticks)  # before S's clock runs out: quiet ticks
    page = referee_page(base, lang)
    page.goto(f"{base}/flags/?table={table}")
    doubt = item(page, table, "low_confidence:E:9.0")
    doubt.locator(":scope > .actions form.correct input[name=cards]").fill("6S")
    doubt.locator(":scope > .actions form.correct button").click()
    page.wait_for_load_state()

    page.goto(f"{base}/tables/{table}/review?seq=4")  # E's play, corrected to 6S
    evidence = page.locator(".drawing .evidence")
    expect(evidence).to_contain_text(words["original"])
    assert evidence.locator("img.frame").evaluate("img => img.complete && img.naturalWidth") == 320
    shot(page, f"review-corrected-{lang}")
    step_of = page.locator(".step-of")
    expect(step_of).to_have_text(words["step"].format(k=3, n=6))  # the 45 quiet ticks are not steps here
    page.click(".stepper a.jump-flag")
    expect(step_of).to_have_text(words["step"].format(k=4, n=6))  # S's out-of-turn 7D
    assert page.locator(".step-records .rec-flag").count() == 1
    page.click(".stepper a.jump-play")
    expect(step_of).to_have_text(words["step"].format(k=6, n=6))  # W's 9H (N passed)

    page.click(".stepper a.ticks-toggle")
    expect(step_of).to_have_text(words["step"].format(k=6, n=51))
    expect(page.locator(".stepper a.ticks-toggle")).to_have_text(words["hide_ticks"])
    page.goto(f"{base}/tables/{table}/review?deal=1&step=40&ticks=1")
    box, row = page.locator(".steps"), page.locator(".steps tr.current")
    inside = page.evaluate("""([box, row]) => {
        const b = box.getBoundingClientRect(), r = row.getBoundingClientRect();
        return box.scrollTop > 0 && r.top >= b.top && r.bottom <= b.bottom;
    }""", [box.element_handle(), row.element_handle()])
    assert inside  # the step list opened at the step shown
    assert page.evaluate("window.scrollY") == 0  # the page itself did not move
    shot(page, f"review-ticks-{lang}")
    page.click(".stepper a.ticks-toggle")
    expect(page.locator(".stepper a.ticks-toggle")).to_contain_text(words["show_ticks"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_console_says_when_the_stream_is_lost_and_catches_up(tmp_path, browser, lang):
    with open_store(data_dir=str(tmp_path)) as store:
        add_user(store, "referee", "referee", PASSWORD)
        token = create_token(store, "T1")
    with serving(tmp_path, env={"GUANDAN_ADMIN_PASSWORD": PASSWORD}) as (port, _):
        base = f"http://127.0.0.1:{port}"
        assert {r["status"] for r in post(base, token, session_events(), "T1")} == {"accepted"}
        page = browser.new_page()
        log_in(page, base, "referee")
        if lang == "zh":
            page.click('button[data-lang="zh"]')
            page.wait_for_selector("text=赛场总览")
        page.goto(f"{base}/flags/")
        note = page.locator("#live-note")
        expect(note).to_be_hidden()
    expect(note).to_contain_text(WORDS[lang]["offline"], timeout=10000)  # the server went away
    with serving(tmp_path, "--port", str(port), env={"GUANDAN_ADMIN_PASSWORD": PASSWORD}):
        post(base, token, [{"type": "fault", "t": 22.0, "id": "f1", "source": "camera", "message": "lens covered"}],
             "T1")
        expect(note).to_be_hidden(timeout=15000)
        expect(page.locator('article[data-rule="fault"]')).to_have_count(1, timeout=5000)  # what it missed
        page.close()
