"""Pages and roles through the Flask test client: who may do what, and what each page shows."""

from __future__ import annotations

import json
import re

import pytest
from itsdangerous import BadSignature

from web.app.i18n import catalogue
from web.store import get_store
from web.tournament import signoff

from .conftest import PASSWORD, csrf_of, hidden_faces, login, make_app, session_events

FLAG = {"rule": "P4", "seat": "S", "at": "12.0"}
"""The out-of-turn flag ``session_events`` raises."""


def client_as(app, role: str | None):
    client = app.test_client()
    if role:
        login(client, role)
    return client


def referee_actions(client) -> dict[str, tuple[str, dict]]:
    token = csrf_of(client, "/")
    return {
        "confirm": ("/flags/T1/confirm", {**FLAG, "level": "violation", "csrf_token": token}),
        "dismiss": ("/flags/T1/dismiss", {**FLAG, "reason": "cards were pushed back at once", "csrf_token": token}),
        "correct": ("/flags/T1/correct", {"of": "p2", "seat": "E", "kind": "play", "cards": "6S", "csrf_token": token}),
    }


@pytest.mark.parametrize("role", [None, "viewer", "scorer"])
@pytest.mark.parametrize("action", ["confirm", "dismiss", "correct"])
def test_below_referee_every_referee_action_is_403(app, session, role, action):
    client = client_as(app, role)
    path, form = referee_actions(client)[action]
    assert client.post(path, data=form).status_code == 403
    assert len(get_store(app).events("T1")) == len(session_events())
    assert client.get("/flags/").status_code == 403
    assert client.get("/tables/T1/review").status_code == 403


@pytest.mark.parametrize("role", [None, "viewer"])
def test_viewers_cannot_sign_or_resolve(app, session, role):
    client = client_as(app, role)
    token = csrf_of(client, "/")
    for action in ("sign", "dispute", "resolve"):
        assert client.post(f"/results/T1/1/{action}", data={"side": "NS", "by": "x", "note": "n",
                                                             "csrf_token": token}).status_code == 403


def test_a_state_changing_request_without_csrf_token_is_refused(app, session):
    client = client_as(app, "referee")
    path, form = referee_actions(client)["confirm"]
    form.pop("csrf_token")
    assert client.post(path, data=form).status_code == 400
    assert len(get_store(app).events("T1")) == len(session_events())


def test_confirming_a_flag_appends_a_penalty_and_closes_it(app, session):
    client = client_as(app, "referee")
    path, form = referee_actions(client)["confirm"]
    assert client.post(path, data=form).status_code == 302
    penalty = get_store(app).events("T1")[-1]
    assert penalty["type"] == "penalty" and penalty["by"] == "referee" and penalty["level"] == "violation"
    assert penalty["evidence"] == {"flag": {"rule": "P4", "seat": "S", "at": 12.0}}
    table = client.get("/api/tables/T1").get_json()
    assert table["open_flags"] == {} and table["state"]["penalties"]["NS"]["violation"] == 1
    console = client.get("/flags/").get_data(as_text=True)
    assert re.search(r'<article class="flag-item kind-flag status-confirmed [^>]* data-table="T1" data-rule="P4"',
                     console)
    assert "1 open" in console  # the low-confidence read is still to check


def test_a_referee_cannot_give_a_foul_but_the_chief_can(app, session):
    referee = client_as(app, "referee")
    path, form = referee_actions(referee)["confirm"]
    page = referee.post(path, data={**form, "level": "foul"}, follow_redirects=True).get_data(as_text=True)
    assert "Refused" in page and "only the chief referee" in page
    chief = client_as(app, "chief")
    path, form = referee_actions(chief)["confirm"]
    chief.post(path, data={**form, "level": "foul"})
    deals = chief.get("/api/tables/T1").get_json()["deals"]
    assert [d["deal"] for d in deals] == [1]  # a foul ends the deal (X3): a result appears
    assert "Deal" in chief.get("/results").get_data(as_text=True)


def test_correcting_a_misread_play_rederives_the_table(app, session):
    client = client_as(app, "referee")
    before = client.get("/api/tables/T1").get_json()
    assert before["reviews"] == 1  # E's 5S was read with confidence 0.55
    path, form = referee_actions(client)["correct"]
    assert client.post(path, data=form).status_code == 302
    after = client.get("/api/tables/T1").get_json()
    played = [h["cards"] for h in after["history"] if h["type"] == "play"]
    assert played[1] == ["6S"] and after["history"][1]["corrected_by"] == "referee"
    assert after["history"][1]["source"] == "manual"
    audit = client.get("/results").get_data(as_text=True)
    assert "5S" in audit and "6S" in audit  # the audit trail keeps both reads


def test_an_impossible_correction_is_refused_with_the_reason(app, session):
    client = client_as(app, "referee")
    path, form = referee_actions(client)["correct"]
    page = client.post(path, data={**form, "of": "nope"}, follow_redirects=True).get_data(as_text=True)
    assert "Refused" in page and "no event with that id" in page
    assert get_store(app).events("T1")[-1]["id"] == "p5"


def test_dismissing_a_flag_keeps_the_reason(app, session):
    client = client_as(app, "referee")
    path, form = referee_actions(client)["dismiss"]
    page = client.post(path, data=form, follow_redirects=True).get_data(as_text=True)
    assert "Refused" not in page
    assert client.get("/api/tables/T1").get_json()["open_flags"] == {}
    assert "cards were pushed back at once" in client.get("/flags/").get_data(as_text=True)


def test_appeal_review_steps_through_a_deal(app, session):
    client = client_as(app, "referee")
    page = client.get("/tables/T1/review?deal=1&step=2").get_data(as_text=True)
    assert "step 2 of 6" in page
    counts = re.findall(r'class="n">(\d+)<', page)
    assert sorted(map(int, counts)) == [26, 27, 27, 27]  # after S's 3S
    last = client.get("/tables/T1/review?deal=1&step=6").get_data(as_text=True)
    assert sorted(map(int, re.findall(r'class="n">(\d+)<', last))) == [26, 26, 26, 27]
    assert 'href="/rules#rule-P4"' in client.get("/tables/T1/review?deal=1&step=4").get_data(as_text=True)
    assert client.get("/tables/T1/review?deal=9").status_code == 404


def test_scorers_record_sign_off_and_referees_resolve_disputes(app, session):
    chief = client_as(app, "chief")
    path, form = referee_actions(chief)["confirm"]
    chief.post(path, data={**form, "level": "loss"})  # ends the round: a result to sign
    scorer = client_as(app, "scorer")
    token = csrf_of(scorer, "/")
    scorer.post("/results/T1/1/sign", data={"side": "NS", "by": "Li Lei", "csrf_token": token})
    assert signoff.status(get_store(app), "T1").signed == {"NS": "Li Lei"}
    scorer.post("/results/T1/1/dispute", data={"side": "EW", "by": "Han Mei", "note": "deal 1 order",
                                                "csrf_token": token})
    assert signoff.status(get_store(app), "T1").state == "disputed"
    assert scorer.post("/results/T1/1/resolve", data={"note": "x", "csrf_token": token}).status_code == 403
    referee = client_as(app, "referee")
    referee.post("/results/T1/1/resolve", data={"note": "order confirmed", "csrf_token": csrf_of(referee, "/")})
    assert signoff.status(get_store(app), "T1").state == "pending"
    sheet = referee.get("/results/T1.csv")
    assert sheet.status_code == 200 and sheet.mimetype == "text/csv" and b"score_ns" in sheet.data
    assert referee.get("/results/T1.pdf").data.startswith(b"%PDF")


def test_standings_and_pairings_of_an_event(app):
    from web.tournament import service

    store = get_store(app)
    service.create(store, "E1", "Spring Cup", rounds=2)
    for pair, name in (("P1", "Nanjing"), ("P2", "Suzhou")):
        service.add_pair(store, "E1", pair, name, f"{name} A", f"{name} B")
    (match,) = service.pair_round(store, "E1")
    client = client_as(app, None)
    page = client.get("/events/E1").get_data(as_text=True)
    assert "Nanjing" in page and match.table_id in page
    store.append({"type": "session_start", "table": match.table_id, "t": 0.0,
                  "teams": {"NS": match.ns, "EW": match.ew}})
    store.append({"type": "penalty", "table": match.table_id, "t": 1.0, "side": "EW", "level": "loss",
                  "rule": "K5", "by": "chief"})
    rows = re.findall(r'<tr><td class="num">(\d+)</td><td>(P\d)', client.get("/events/E1").get_data(as_text=True))
    assert rows == [("1", match.ns), ("2", match.ew)]
    results = client.get("/results").get_data(as_text=True)
    section = results[results.index(f'id="table-{match.table_id}"'):]
    assert "No deal was played: the round ended by forfeit." in section and "No deal finished yet" not in section
    assert "chart-box" not in section  # no levels chart of a round never played
    assert client.get("/events/E1/standings.csv").data.startswith(b"\xef\xbb\xbf")
    assert client.get("/events/E1/sheets.xlsx").data.startswith(b"PK")
    for missing in ("/events/NOPE", "/events/NOPE/standings.pdf", "/events/E1/pairs.csv", "/events/E1/sheets.ods"):
        assert client.get(missing).status_code == 404, missing


def test_login_failures_and_rate_limit(app):
    client = app.test_client()
    token = csrf_of(client)
    for _ in range(10):
        assert client.post("/login", data={"name": "chief", "password": "wrong", "csrf_token": token}).status_code == 401
    refused = client.post("/login", data={"name": "chief", "password": PASSWORD, "csrf_token": token})
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60  # until the minute's window ends
    assert "Too many login attempts" in refused.get_data(as_text=True)


@pytest.mark.parametrize("proxies", [0, 1])
def test_the_login_limit_counts_forwarded_addresses_only_behind_a_proxy(sqlite_url, proxies):
    """Behind ``GUANDAN_PROXIES`` proxies each client is limited by its own (forwarded)
    address; without, a forged ``X-Forwarded-For`` does not get around the limit."""
    app = make_app(sqlite_url, PROXIES=proxies)
    try:
        client = app.test_client()
        token = csrf_of(client)

        def attempt(address: str) -> int:
            return client.post("/login", data={"name": "chief", "password": "wrong", "csrf_token": token},
                               headers={"X-Forwarded-For": address}).status_code

        assert [attempt("203.0.113.7") for _ in range(11)] == [401] * 10 + [429]
        assert attempt("203.0.113.8") == (401 if proxies else 429)
    finally:
        get_store(app).close()


def test_login_sets_a_protected_cookie_and_security_headers(app):
    client = app.test_client()
    response = client.post("/login", data={"name": "referee", "password": PASSWORD, "csrf_token": csrf_of(client)})
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    page = client.get("/")
    csp = page.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "Server" not in page.headers and page.headers["X-Content-Type-Options"] == "nosniff"
    assert "<script>" not in page.get_data(as_text=True) and " style=" not in page.get_data(as_text=True)


def test_a_login_only_redirects_within_the_site(app):
    client = app.test_client()
    response = client.post("/login?next=https://evil.example/x",
                           data={"name": "referee", "password": PASSWORD, "csrf_token": csrf_of(client)})
    assert response.headers["Location"] == "/"


def test_switching_to_chinese(app, session):
    client = app.test_client()
    client.post("/language/zh", data={"csrf_token": csrf_of(client, "/"), "next": "/tables/T1"})
    page = client.get("/tables/T1").get_data(as_text=True)
    assert "赛场总览" in page and "余牌" in page and "出牌记录" in page and 'lang="zh-CN"' in page


def test_every_label_has_english_and_chinese():
    for key, entry in catalogue().items():
        assert entry.get("en") and entry.get("zh"), key


def test_floor_tiles_show_flags_turn_and_health(app, session, tokens):
    client = client_as(app, "referee")  # officials see the flags (a spectator does not: test_spectator)
    counts = {"plays": 40, "misread": 1, "caught": 1, "uncaught": 0, "deals": 2, "deals_right": 1}
    client.post("/api/tables/T1/health", json={"fps": 15, "camera": "ok", "calibration": "lost",
                                               "perception": counts},
                headers={"Authorization": f"Bearer {tokens['T1']}"})
    page = client.get("/").get_data(as_text=True)
    tile = page[page.index('id="tile-T1"'):page.index('id="tile-T2"')]
    assert "flagged" in tile and "1 violation" in tile and "South to play" in tile
    assert "calibration lost" in tile and 'class="bad"' in tile
    assert ("reads against the simulation: 40 plays, 1 misread (1 caught by the referee, 0 unnoticed); "
            "deal results equal to the truth: 1/2") in tile  # what the demo reports
    client.post("/language/zh", data={"csrf_token": csrf_of(client, "/"), "next": "/"})
    page = client.get("/").get_data(as_text=True)
    assert "识别与模拟对照：出牌 40 次，识别错误 1 次（裁判发现 1 次，未发现 0 次）；牌局结果与真实一致：1/2 副" in page
    assert "校准 丢失" in page  # the device's own words, in the visitor's language too
    client.post("/api/tables/T1/health", json={"fps": 15, "camera": "fault: frozen", "calibration": "reseated"},
                headers={"Authorization": f"Bearer {tokens['T1']}"})
    tile = client.get("/floor/tile/T1").get_data(as_text=True)
    assert "摄像头 故障：画面冻结" in tile and "校准 reseated" in tile  # a word without a label: as it came
    assert tile.strip().startswith('<a id="tile-T1"')


def viewer_responses(client) -> dict[str, str]:
    paths = ["/", "/floor/tile/T1", "/tables/T1", "/tables/T1/live", "/results", "/results/T1.csv",
             "/api/tables", "/api/tables/T1", "/api/tables/T1/events"]
    bodies = {p: client.get(p).get_data(as_text=True) for p in paths}
    stream = client.get("/api/stream", buffered=False)
    chunks = iter(stream.response)
    bodies["/api/stream"] = next(chunks).decode() + next(chunks).decode()  # retry; then every tile at once
    stream.close()
    return bodies


@pytest.mark.parametrize("role", [None, "viewer"])
def test_no_hand_card_ever_reaches_a_viewer(app, session, role):
    client = client_as(app, role)
    for path, body in viewer_responses(client).items():
        assert '"hands"' not in body and '"hand"' not in body, path
        leaked = {face for face in hidden_faces()
                  if re.search(rf'(?<![A-Za-z0-9]){face}(?![A-Za-z0-9])', body)}
        assert not leaked, (path, sorted(leaked))
    played = json.dumps(client.get("/api/tables/T1").get_json())
    assert '"3S"' in played and '"9H"' in played  # the check would see a card if one were there


GET_ROUTES = {
    "/": None, "/rules": None, "/login": None, "/floor/tile/T1": None, "/tables/T1": None,
    "/tables/T1/live": None, "/tables/T1/review": "referee", "/flags/": "referee", "/flags/live": "referee",
    "/results": None, "/results/T1.csv": None, "/results/T1.pdf": None, "/events": None, "/sign": None,
    "/api/tables": None, "/api/tables/T1": None, "/api/tables/T1/events": None, "/api/openapi.json": None,
}
"""Every page a browser GETs (the API's agent routes and the stream are tested on their own),
and the least role that may see it."""
RANK = {None: 0, "viewer": 0, "scorer": 1, "referee": 2, "chief": 3}


def test_the_route_table_names_every_page(app):
    rules = {r.rule for r in app.url_map.iter_rules() if "GET" in r.methods and r.endpoint != "static"}
    covered = {re.sub(r"T1|\.csv$|\.pdf$", "", p) for p in GET_ROUTES}
    untested = {r for r in rules if re.sub(r"<[^>]+>|\.<fmt>", "", r) not in covered}
    assert untested <= {"/api/tables/<table_id>/evidence/<sha>", "/api/stream", "/events/<event_id>",
                        "/events/<event_id>/<what>.<fmt>", "/sign/<table_id>/<side>/<token>",
                        "/tables/<table_id>/sign-slip"}  # tested with their own data (here, test_browser_signlinks)


@pytest.mark.parametrize("role", [None, "viewer", "scorer", "referee", "chief"])
def test_every_page_for_every_role(app, session, role):
    client = client_as(app, role)
    for path, least in GET_ROUTES.items():
        status = client.get(path).status_code
        expected = 200 if RANK[role] >= RANK[least] else 403
        assert status == expected, (path, role, status)


def test_logging_out_ends_the_referee_session(app, session):
    client = client_as(app, "referee")
    assert client.get("/flags/").status_code == 200
    assert client.post("/logout", data={"csrf_token": csrf_of(client, "/")}).status_code == 302
    assert client.get("/flags/").status_code == 403


def test_the_felt_names_who_leads_only_when_the_table_is_empty(app, session):
    client = app.test_client()
    felt = client.get("/tables/T1/live").get_data(as_text=True).split('class="felt"', 1)[1].split("</section>")[0]
    assert "single 9" in felt and "to lead" not in felt
    referee = client_as(app, "referee")
    empty = referee.get("/tables/T1/review?deal=1&step=1").get_data(as_text=True).split('class="felt"', 1)[1]
    assert "South to lead" in empty.split("</section>")[0]


def test_the_session_signer_is_made_once_per_key(app):
    """Made on every request it cost 2% of a worker under load; a new key makes a new one."""
    sessions = app.session_interface
    first = sessions.get_signing_serializer(app)
    assert sessions.get_signing_serializer(app) is first
    cookie = first.dumps({"lang": "zh"})
    app.secret_key = "another key"
    second = sessions.get_signing_serializer(app)
    assert second is not first and second.loads(second.dumps({"a": 1})) == {"a": 1}
    with pytest.raises(BadSignature):
        second.loads(cookie)  # signed with the old key
