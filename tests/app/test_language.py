"""Every word in the reader's language and in the sport's own terms.

The engine's flags and reviews are worded from their facts (``web.app.messages``); every
page of the dashboard, drawn in real Chromium in Chinese and in English (screenshots in
``test-artifacts/language/``), shows no Latin word outside an allow-list (card codes,
rule IDs, table ids, the names people gave) in Chinese, and no internal name in English.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from referee.simulate import simulate_session
from web.app import messages
from web.app.i18n import catalogue
from web.app.rulebook import rules
from web.store import get_store
from web.tournament import service

from .conftest import bearer, csrf_of, login, make_app, session_events

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "language"
CHROMIUM = "/usr/bin/chromium"
EXAMPLE = ROOT / "examples" / "session.jsonl"

WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'+]*")
ALLOWED = re.compile(r"(?:[2-9TJQKA]|10)[SHDC]|[SB]J|[A-Z]\d+|[A-Z]|CSV|PDF|Excel|English")
"""Latin a Chinese page may show: card codes, rule/table/pair ids, a rank letter, file
formats, and the other language's own name on its switch."""
NAMES = {"Nanjing", "Suzhou", "Pair", "chief", "referee", "Chief", "Wang", "Spring", "Cup", "CUP"}
"""Names people gave (teams, logins, the event): shown as given."""
CJK = "\u4e00-\u9fff"


def leftovers_zh(text: str) -> list[str]:
    """What of ``text`` is not Chinese where it should be: Latin words outside the allow-list,
    half-width colons after Chinese, tables named 'T1号桌', unformatted placeholders."""
    words = [w for w in WORD.findall(text) if not ALLOWED.fullmatch(w) and w not in NAMES]
    return words + re.findall(rf"[{CJK}]:", text) + re.findall(r"[A-Za-z]\d*号桌", text) + re.findall(r"\{\w+\}", text)


def leftovers_en(text: str) -> list[str]:
    """Internal names and broken plurals in English: ``full_house``, ``1 cards``, placeholders.
    (Chinese may stand in English text: the sport's own terms in the rule book, team names.)"""
    return [w for w in WORD.findall(text) if "_" in w] + re.findall(r"\b1 cards\b", text) + re.findall(r"\{\w+\}", text)


# ---- the catalogue -------------------------------------------------------------------------

def test_every_label_is_in_both_languages_with_the_same_fields():
    """The same fields, but for an agent's own English words (``text``), which Chinese leaves out."""
    for key, entry in catalogue().items():
        assert entry.get("en") and entry.get("zh"), key
        en, zh = (set(re.findall(r"\{(\w*)\}", entry[lang])) for lang in ("en", "zh"))
        assert zh <= en and en - zh <= {"text"}, key


def test_every_message_the_engine_can_raise_has_words():
    """Each ``"what"`` a flag or review detail names in the engine's source has a message."""
    whats = set()
    for path in (ROOT / "referee").rglob("*.py"):
        whats |= set(re.findall(r'"what": "(\w+)"', path.read_text(encoding="utf-8")))
    assert len(whats) >= 25
    assert {w for w in whats if f"msg.{w}" not in catalogue()} == set()
    tribute = (ROOT / "referee" / "phases" / "tribute.py").read_text(encoding="utf-8")
    problems = set(re.findall(r'\(\s*"(\w+)", \{', tribute))  # what is wrong with a tribute or return (T6)
    assert len(problems) >= 10
    keys = {f"problem.{p}" for p in problems - {"not_low"}} | {"problem.not_low_holds", "problem.not_low_unknown"}
    assert keys - set(catalogue()) == set()


def _words(app, lang: str, record: dict) -> str:
    with app.test_request_context():
        from flask import session
        session["lang"] = lang
        return messages.record_message(record)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from tests.store.support import temporary_url
    with temporary_url("sqlite", tmp_path_factory.mktemp("language")) as url:
        app = make_app(url)
        yield app
        get_store(app).close()


@pytest.mark.parametrize("seed", [3, 11, 27])
def test_simulated_sessions_with_breaches_read_in_chinese_and_plain_english(app, seed):
    records = [r for r in simulate_session(seed, breaches=0.08).records if r["type"] in ("flag", "review")]
    assert records
    for record in records:
        assert record.get("detail", {}).get("what"), record
        zh, en = _words(app, "zh", record), _words(app, "en", record)
        assert not leftovers_zh(zh), (zh, record)
        assert not leftovers_en(en), (en, record)


def test_messages_in_the_sports_own_words(app):
    out = {"type": "flag", "rule": "P4", "seat": "E", "side": "EW", "message": "E passed out of turn (W due)",
           "detail": {"what": "passed_out_of_turn", "turn": "W"}}
    assert _words(app, "zh", out) == "东越序过牌（应由西出牌）"
    assert _words(app, "en", out) == "East passed out of turn (West was due)"
    beat = {"type": "flag", "rule": "P5", "seat": "S", "detail": {
        "what": "does_not_beat", "cards": ["3S", "3H", "3D", "4S", "4H"], "table": ["QS", "QH", "QD", "TS", "TC"],
        "reading": {"type": "full_house", "rank": "Q", "size": 5}}}
    assert _words(app, "zh", beat) == "南出牌♠3 ♥3 ♦3 ♠4 ♥4，管不住桌面的♠Q ♥Q ♦Q ♠10 ♣10（三带对（Q））"
    assert _words(app, "en", beat).endswith("(full house Q)")
    bomb = {"type": "combo", "rank": "6", "size": 4}
    with app.test_request_context():
        from flask import session
        session["lang"] = "zh"
        assert messages.combo_word({**bomb, "type": "bomb"}) == "4炸（6）"
        assert messages.combo_word({"type": "four_jokers", "rank": "BJ", "size": 4}) == "天王炸"
        assert messages.table_word("T3") == "3号桌" and messages.card_word("BJ") == "大王"
        assert messages.seats_word(["E", "W"]) == "东、西" and messages.side_word("NS") == "南北方"
        settled = {"type": "settled", "settled_by": ["8H: two decks hold two of each"], "confidence": 0.9}
        assert messages.settled_word(settled) == "本副已知情况排除了1种其他读法"
    late = {"type": "flag", "rule": "K5", "severity": "foul", "side": "NS", "detail": {"what": "late", "minutes": 7,
                                                                                       "house": True}}
    assert _words(app, "zh", late) == "南北方迟到7分钟：第1副判对方胜并升3级"


def test_a_record_without_facts_keeps_its_words(app):
    """A record derived before the engine kept its facts is shown as it was written."""
    old = {"type": "flag", "rule": "P1", "seat": "S", "message": "S must lead a combination and cannot pass"}
    assert _words(app, "zh", old) == old["message"]


def test_the_rule_book_has_every_rule_in_both_languages():
    en, zh = rules("en"), rules("zh")
    assert set(en) == set(zh) and len(en) >= 40
    assert "trick (一圈)" in en["P2"] and "一圈牌结束" in zh["P2"]
    for rule, text in zh.items():
        shown = re.sub(r"<code>.*?</code>", " ", text)  # notation: card codes, seats, sequences
        assert not leftovers_zh(re.sub(r"<[^>]+>", " ", shown)), rule


# ---- every page, in a real browser ---------------------------------------------------------

HOST = "http://hall.test"


@pytest.fixture(scope="module")
def hall(app):
    """A live table (T1: flags, a read in doubt, a dismissal, a ruling, a correction), the
    shipped example session finished on T2, and a tournament with its first round drawn."""
    from web.app.accounts import create_token
    store = get_store(app)
    agent = app.test_client()
    for table, events in (("T1", session_events() + [
            {"type": "pass", "t": 20.0, "id": "p6", "seat": "W", "source": "camera"},
            {"type": "report", "t": 21.0, "id": "r1", "seat": "N", "count": 9, "source": "camera"},
            {"type": "tick", "t": 60.0}]),
            ("T2", [{**json.loads(line), "table": "T2"} for line in EXAMPLE.read_text().splitlines() if line.strip()])):
        response = agent.post(f"/api/tables/{table}/events", json=events,
                              headers=bearer(create_token(store, table)))
        assert response.status_code == 200
    service.create(store, "CUP", "Spring Cup", rounds=3, seed=4)
    for pair in ("P1", "P2", "P3", "P4"):
        service.add_pair(store, "CUP", pair, f"Nanjing {pair}", "Chief", "Wang")
    service.pair_round(store, "CUP")
    client = app.test_client()
    login(client, "chief")
    csrf = csrf_of(client, "/flags/")
    for action, data in (("dismiss", {"rule": "R1", "seat": "N", "at": "21.0", "reason": "Wang"}),
                         ("confirm", {"rule": "P4", "seat": "S", "at": "12.0", "level": "violation"})):
        assert client.post(f"/flags/T1/{action}", data={**data, "csrf_token": csrf}).status_code == 302
    return client


def pages(client) -> list[tuple[str, str]]:
    """(name, path) of every page: each kind of page, and the appeal review at the steps of T1
    that derived a record and at the end of T2's session."""
    found = [("floor", "/"), ("rules", "/rules"), ("table", "/tables/T1"), ("table-live", "/tables/T1/live"),
             ("table-over", "/tables/T2"), ("tile", "/floor/tile/T1"), ("flags", "/flags/"),
             ("flags-live", "/flags/live"), ("results", "/results"), ("events", "/events"),
             ("standings", "/events/CUP"), ("missing", "/tables/nowhere"), ("review", "/tables/T1/review")]
    from web.app import context
    with client.application.test_request_context():
        steps = context.timelines().get("T1").steps
    seqs = {s.seq for s in steps if any(r.get("type") not in ("settled",) for r in s.records)}
    found += [(f"review-T1-{seq}", f"/tables/T1/review?seq={seq}") for seq in sorted(seqs)[:8]]
    found += [("review-T2-end", "/tables/T2/review?step=999")]
    listed = {path.split("?")[0] for _, path in found}
    for path in page_routes(client.application):  # any other page: a new one is checked too
        if path is not None and path not in listed and path != "/login":
            found.append((path.strip("/").replace("/", "-"), path))
    return found


ARGUMENTS = {"table_id": "T1", "event_id": "CUP"}


def page_routes(app) -> list[str | None]:
    """The path of every page the dashboard serves (downloads, the API and static files
    aside), with its table or event filled in; None for one that needs anything else."""
    out = []
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods or rule.rule.startswith(("/api", "/static")) or "<fmt>" in rule.rule:
            continue
        out.append(None if set(rule.arguments) - set(ARGUMENTS) else
                   re.sub(r"<(?:\w+:)?(\w+)>", lambda m: ARGUMENTS[m.group(1)], rule.rule))
    return out


def test_the_pages_cover_every_page_of_the_dashboard(app, hall):
    """Every page is drawn below, but one reached only through a one-time link (``token``)."""
    unreachable = [rule.rule for rule in app.url_map.iter_rules() if "GET" in rule.methods
                   and not rule.rule.startswith(("/api", "/static")) and "<fmt>" not in rule.rule
                   and set(rule.arguments) - set(ARGUMENTS) - {"token", "side"}]
    assert unreachable == []
    shown = {path.split("?")[0] for _, path in pages(hall)} | {"/login"}
    assert {p for p in page_routes(app) if p} <= shown


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip("needs Debian's chromium (./run.sh setup)")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield browser
        browser.close()


def open_through(page, client) -> None:
    """The page's requests answered by the app's test client (logged in as ``client`` is);
    the live stream refused (it never ends)."""
    def answer(route):
        path = route.request.url.removeprefix(HOST)
        if path.startswith("/api/stream"):
            return route.abort()
        response = client.get(path)
        route.fulfill(status=response.status_code, body=response.get_data(),
                      headers={"Content-Type": response.headers.get("Content-Type", "text/html")})
    page.route(f"{HOST}/**", answer)


SHOWN_TEXT = """() => {
  const parts = [document.title, document.body.innerText];
  document.querySelectorAll("[placeholder], [title], [alt], [aria-label], option").forEach(el => {
    for (const name of ["placeholder", "title", "alt", "aria-label"]) if (el.getAttribute(name)) parts.push(el.getAttribute(name));
    if (el.tagName === "OPTION") parts.push(el.textContent);
  });
  return parts.join("\\n");
}"""


def shown_text(page) -> str:
    """What a reader sees (and what a screen reader reads): card codes in <code> and the faces
    printed on card pictures ("JOKER") aside; a card's name for a screen reader counts."""
    page.evaluate("() => document.querySelectorAll('code, svg.card text').forEach(el => el.remove())")
    return page.evaluate(SHOWN_TEXT)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_page_in_a_browser_shows_only_the_readers_language(app, hall, browser, lang):
    hall.post(f"/language/{lang}", data={"csrf_token": csrf_of(hall, "/")})
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_through(page, hall)
    visitor = browser.new_page(viewport={"width": 1280, "height": 900})
    anonymous = app.test_client()
    anonymous.post(f"/language/{lang}", data={"csrf_token": csrf_of(anonymous, "/")})
    open_through(visitor, anonymous)
    check = leftovers_zh if lang == "zh" else leftovers_en
    found = {}
    for who, name, path in [("chief", n, p) for n, p in pages(hall)] + [("visitor", "login", "/login"),
                                                                        ("visitor", "table-public", "/tables/T1")]:
        shown = page if who == "chief" else visitor
        shown.goto(HOST + path)
        shown.screenshot(path=str(ARTIFACTS / f"{lang}-{name}.png"), full_page=True)
        bad = check(shown_text(shown))
        if bad:
            found[name] = sorted(set(bad))
    page.close()
    visitor.close()
    assert found == {}, json.dumps(found, ensure_ascii=False, indent=0)


def test_a_flag_shows_the_time_of_day_in_the_events_zone_beside_table_time(app, monkeypatch):
    """The server recorded the table's latest event (t = 60) at 2026-05-01 12:00:00 UTC; a flag
    raised at table time 12 was 48 s earlier: 19:59:12 in Shanghai, 13:59:12 in Berlin."""
    from datetime import datetime, timezone

    store = get_store(app)
    noon = datetime(2026, 5, 1, 12, tzinfo=timezone.utc).timestamp()
    monkeypatch.setattr(store, "clock", lambda: noon)
    events = session_events()[:5] + [{"type": "tick", "t": 60.0}]  # S's out-of-turn 7D at t = 12
    store.append_many([{**event, "table": "T7"} for event in events])
    client = app.test_client()
    login(client, "referee")
    for zone, shown in (("Asia/Shanghai", "19:59:12"), ("Europe/Berlin", "13:59:12")):
        monkeypatch.setenv("GUANDAN_TIMEZONE", zone)
        page = client.get("/flags/?table=T7").get_data(as_text=True)
        assert f"<time>{shown}</time> · table time 12.0 s" in page, zone
