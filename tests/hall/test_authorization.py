"""The authorization matrix: every route of the app x every role (anonymous, viewer,
scorer, referee, chief) x table tokens (its own table's, another table's); CSRF on every
state-changing request; security headers and no inline script on every answer; the
login rate limit holding across two workers that share Redis."""

from __future__ import annotations

import hashlib
import itertools
import re

import httpx
import pytest

from tests.app.conftest import PASSWORD, ROLES, csrf_of, hidden_faces, login, make_app, session_events
from web.app.accounts import add_user, create_token
from web.store import get_store
from tests.store.support import temporary_url

RANK = {"anonymous": 0, "viewer": 0, "scorer": 1, "referee": 2, "chief": 3}
NEED = {"public": 0, "scorer": 1, "referee": 2}
JPEG = b"\xff\xd8\xff\xe0" + b"hall" * 8
ADDRESSES = itertools.count(1)

# (method, path, who may: public | scorer | referee | agent). Every rule of the URL map
# is here (checked below), so a new route cannot be added without its line.
ROUTES = [
    ("GET", "/", "public"),
    ("GET", "/rules", "public"),
    ("GET", "/login", "public"),
    ("POST", "/login", "public"),
    ("GET", "/floor/tile/T1", "public"),
    ("GET", "/tables/T1", "public"),
    ("GET", "/tables/T1/live", "public"),
    ("GET", "/tables/T1/review", "referee"),
    ("GET", "/flags/", "referee"),
    ("GET", "/flags/live", "referee"),
    ("POST", "/flags/T1/confirm", "referee"),
    ("POST", "/flags/T1/dismiss", "referee"),
    ("POST", "/flags/T1/confirm_read", "referee"),
    ("POST", "/flags/T1/correct", "referee"),
    ("GET", "/results", "public"),
    ("GET", "/results/T1.csv", "public"),
    ("POST", "/results/T1/1/sign", "scorer"),
    ("POST", "/results/T1/1/resolve", "referee"),
    ("POST", "/tables/T1/sign-links", "scorer"),
    ("GET", "/tables/T1/sign-slip", "scorer"),
    ("GET", "/sign", "public"),
    ("POST", "/sign", "link"),
    ("GET", "/sign/T1/NS/TOKEN", "link"),
    ("POST", "/sign/T1/NS/TOKEN", "link"),
    ("GET", "/events", "public"),
    ("GET", "/events/NOPE", "public"),
    ("GET", "/events/NOPE/standings.csv", "public"),
    ("POST", "/language/zh", "public"),
    ("POST", "/logout", "public"),
    ("GET", "/static/live.js", "public"),
    ("GET", "/api/openapi.json", "public"),
    ("GET", "/api/tables", "public"),
    ("GET", "/api/stream", "public"),
    ("GET", "/api/tables/T1", "public"),
    ("GET", "/api/tables/T1/events", "public"),
    ("GET", "/api/tables/T1/evidence/SHA", "referee"),
    ("POST", "/api/tables/T1/events", "agent"),
    ("POST", "/api/tables/T1/evidence", "agent"),
    ("POST", "/api/tables/T1/health", "agent"),
]
AGENT_BODIES = {"events": ({"json": {"type": "tick", "t": 99.0, "id": "tick-99"}}),
                "evidence": {"data": JPEG, "headers": {"Content-Type": "image/jpeg"}},
                "health": {"json": {"fps": 25.0}}}


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    with temporary_url("sqlite", tmp_path_factory.mktemp("authz")) as url:
        app = make_app(url)
        store = get_store(app)
        keys = {t: create_token(store, t) for t in ("T1", "T2")}
        agent = app.test_client()
        response = agent.post("/api/tables/T1/events", json=session_events(), headers=_bearer(keys["T1"]))
        assert all(r["status"] == "accepted" for r in response.get_json()["results"])
        sha = hashlib.sha256(JPEG).hexdigest()
        assert agent.post("/api/tables/T1/evidence", data=JPEG, headers={
            **_bearer(keys["T1"]), "Content-Type": "image/jpeg"}).status_code == 201
        yield app, keys, sha
        store.close()


def _bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def client_as(app, role: str):
    """A browser of its own (its own address: the login limit has a test of its own)."""
    client = app.test_client()
    n = next(ADDRESSES)
    client.environ_base["REMOTE_ADDR"] = f"10.0.{n // 250}.{n % 250 + 1}"
    if role != "anonymous":
        login(client, role)
    return client


def call(client, method: str, path: str, sha: str, csrf: bool = True, **extra):
    path = path.replace("SHA", sha)
    if path == "/api/stream":  # endless: its status and headers only
        response = client.get(path, buffered=False, **extra)
        response.close()
        return response
    if method == "GET":
        return client.get(path, **extra)
    if "/api/" in path:
        kind = path.rsplit("/", 1)[1]
        return client.post(path, **{**AGENT_BODIES[kind], **extra})
    return client.post(path, data={"csrf_token": csrf_of(client, "/login")} if csrf else {}, **extra)


def test_the_matrix_names_every_route(hall):
    app, _, _ = hall
    urls = app.url_map.bind("localhost")
    covered = {(urls.match(path, method=method)[0], method) for method, path, _ in ROUTES}
    served = {(rule.endpoint, method) for rule in app.url_map.iter_rules()
              for method in rule.methods - {"HEAD", "OPTIONS"}}
    assert served - covered == set(), "routes without a line in the matrix"


@pytest.mark.parametrize("role", ["anonymous", *ROLES])
@pytest.mark.parametrize("method,path,need", ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_each_role_on_each_route(hall, role, method, path, need):
    app, _, sha = hall
    response = call(client_as(app, role), method, path, sha)
    assert response.status_code != 500
    if need == "agent":  # a login is no table token: cookies give no power over the agent door
        assert response.status_code == 401
    elif need == "link":  # a made-up sign-off link or code is refused whoever asks: a login opens none
        assert response.status_code == 403
    elif RANK[role] < NEED[need]:
        assert response.status_code == 403, response.get_data(as_text=True)[:300]
    else:
        assert response.status_code not in (401, 403), response.get_data(as_text=True)[:300]
    if RANK[role] < NEED["referee"] and response.status_code == 200 and path != "/api/stream":
        body = response.get_data(as_text=True)
        if response.mimetype == "application/json" and path != "/api/openapi.json":
            assert '"hands"' not in body and '"evidence"' not in body
            assert not {face for face in hidden_faces() if f'"{face}"' in body}, path


@pytest.mark.parametrize("kind", sorted(AGENT_BODIES))
def test_table_tokens_reach_their_own_table_only(hall, kind):
    app, keys, _ = hall
    client = app.test_client()
    body = AGENT_BODIES[kind]
    mine = client.post(f"/api/tables/T2/{kind}", **{**body, "headers": {**body.get("headers", {}),
                                                                        **_bearer(keys["T2"])}})
    assert mine.status_code in (200, 201), mine.get_data(as_text=True)
    other = client.post(f"/api/tables/T1/{kind}", **{**body, "headers": {**body.get("headers", {}),
                                                                         **_bearer(keys["T2"])}})
    assert other.status_code == 403 and "T2" in other.get_json()["error"]
    unknown = client.post(f"/api/tables/T9/{kind}", **{**body, "headers": {**body.get("headers", {}),
                                                                           **_bearer(keys["T2"])}})
    assert unknown.status_code == 403  # as for a foreign table: a token enumerates no table ids
    assert unknown.get_json()["error"] == other.get_json()["error"].replace("'T1'", "'T9'")
    forged = client.post(f"/api/tables/T1/{kind}", **{**body, "headers": {**body.get("headers", {}),
                                                                          **_bearer(keys["T1"] + "x")}})
    assert forged.status_code == 401


@pytest.mark.parametrize("method,path,need", [r for r in ROUTES if r[0] == "POST" and r[2] != "agent"],
                         ids=[p for m, p, n in ROUTES if m == "POST" and n != "agent"])
def test_every_state_changing_form_needs_its_csrf_token(hall, method, path, need):
    app, _, sha = hall
    client = client_as(app, "chief")  # even the most trusted login
    before = get_store(app).events("T1")
    response = call(client, method, path, sha, csrf=False)
    assert response.status_code == 400 and "CSRF" in response.get_data(as_text=True)
    forged = client.post(path, data={"csrf_token": "forged-" + "x" * 40})
    assert forged.status_code == 400
    assert get_store(app).events("T1") == before


@pytest.mark.parametrize("method,path,need", ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_security_headers_on_every_answer(hall, method, path, need):
    app, keys, sha = hall
    client = client_as(app, "chief")
    extra = {"headers": {**AGENT_BODIES[path.rsplit("/", 1)[1]].get("headers", {}), **_bearer(keys["T1"])}} \
        if need == "agent" else {}
    response = call(client, method, path, sha, **extra)
    csp = dict(part.strip().split(" ", 1) for part in response.headers["Content-Security-Policy"].split(";"))
    assert csp["script-src"] == "'self'" and csp["frame-ancestors"] == "'none'" and csp["object-src"] == "'none'"
    assert "unsafe" not in response.headers["Content-Security-Policy"]
    assert response.headers["X-Frame-Options"] == "DENY" and response.headers["X-Content-Type-Options"] == "nosniff"
    assert "Server" not in response.headers
    if response.mimetype == "text/html":  # the CSP would block them: none may be needed
        html = response.get_data(as_text=True)
        assert not re.search(r"<script(?![^>]*\ssrc=)[^>]*>", html), "an inline script"
        assert not re.search(r"\son[a-z]+\s*=", html), "an inline event handler"
        assert "javascript:" not in html


def test_the_login_limit_holds_across_workers_sharing_redis(serve, tmp_path, private_redis):
    from web.store import open_store
    from tests.store.support import TEST_SECRET

    with open_store(None, str(tmp_path / "data"), TEST_SECRET) as store:
        add_user(store, "referee", "referee", PASSWORD)
    server = serve(str(tmp_path / "data"), workers=2, redis=private_redis.url)
    statuses = []
    for _ in range(12):  # fresh connections: the attempts are spread over both workers
        with httpx.Client(base_url=server.base) as client:
            page = client.get("/login").text
            token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
            statuses.append(client.post("/login", data={"name": "referee", "password": "wrong",
                                                         "csrf_token": token}).status_code)
    assert statuses[:10] == [401] * 10 and statuses[10:] == [429, 429]


def test_a_replaced_token_stops_working_within_the_cache_time(hall, monkeypatch):
    import time

    from web.app import api

    app, _, _ = hall
    monkeypatch.setattr(api, "TOKEN_CACHE_S", 0.3)
    old = create_token(get_store(app), "T3")
    client = app.test_client()
    tick = {"type": "tick", "t": 1.0}
    assert client.post("/api/tables/T3/events", json=tick, headers=_bearer(old)).status_code == 200
    new = create_token(get_store(app), "T3")
    assert client.post("/api/tables/T3/events", json=tick, headers=_bearer(new)).status_code == 200
    time.sleep(0.4)
    assert client.post("/api/tables/T3/events", json=tick, headers=_bearer(old)).status_code == 401


def test_a_worker_reads_every_token_in_one_query_and_a_new_token_works_at_once(hall, monkeypatch):
    from sqlalchemy import event

    from web.app import api

    app, _, _ = hall
    monkeypatch.setattr(api, "TOKEN_CACHE_S", 60.0)
    store = get_store(app)
    keys = {f"Q{i}": create_token(store, f"Q{i}") for i in range(6)}
    app.extensions.pop("guandan_token_owners", None)
    asked = []

    def note(conn, cursor, statement, *args):
        if "app_table_tokens" in statement:
            asked.append(statement)

    event.listen(store.engine, "before_cursor_execute", note)
    try:
        client = app.test_client()
        for _ in range(3):
            for table, key in keys.items():
                response = client.post(f"/api/tables/{table}/events", json={"type": "tick", "t": 1.0},
                                       headers=_bearer(key))
                assert response.status_code == 200, response.get_data(as_text=True)
        assert len(asked) == 1
        late = create_token(store, "Q9")  # made after the worker read the tokens
        assert client.post("/api/tables/Q9/events", json={"type": "tick", "t": 1.0},
                           headers=_bearer(late)).status_code == 200
        assert client.post("/api/tables/Q0/events", json={"type": "tick", "t": 2.0},
                           headers=_bearer(late)).status_code == 403
        assert client.post("/api/tables/Q9/events", json={"type": "tick", "t": 2.0},
                           headers=_bearer("not-a-token")).status_code == 401
    finally:
        event.remove(store.engine, "before_cursor_execute", note)


def test_an_agents_post_opens_no_session_and_a_browsers_keeps_its_own(hall):
    app, keys, _ = hall
    agent = app.test_client()
    response = agent.post("/api/tables/T2/events", json={"type": "tick", "t": 3.0}, headers=_bearer(keys["T2"]))
    assert response.status_code == 200
    assert "Set-Cookie" not in response.headers and "Cookie" not in response.headers.get("Vary", "")
    referee = client_as(app, "referee")  # a logged-in browser: its session is read under /api too
    assert referee.get("/api/tables/T1/evidence/NOPE", headers=_bearer(keys["T1"])).status_code == 404
    assert app.test_client().get("/api/tables/T1/evidence/NOPE", headers=_bearer(keys["T1"])).status_code == 403
