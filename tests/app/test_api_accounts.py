"""Logins and table tokens sealed like the store's rows, and sessions the server can end,
on SQLite and PostgreSQL: a password hash, role or token written into the database without
the key is never trusted and ``verify`` names it; a logout, a new password or role, or
``user disable`` ends every session of that login; sessions end after a day's play anyway;
``--secure-cookies`` keeps the cookie off plain HTTP."""

from __future__ import annotations

import io
import sys
import time

import pytest
from sqlalchemy import create_engine, insert, update
from werkzeug.security import generate_password_hash

from tests.store.support import KINDS, TEST_SECRET, temporary_url
from web.app import auth
from web.app.accounts import add_user, authenticate, create_token, end_sessions, token_digest
from web.app.cli import main
from web.app.models import TableToken, User
from web.store import Store, get_store, open_store
from web.store import seals
from web.store.db import upgrade
from web.store.signing import as_key

from .conftest import PASSWORD, bearer, csrf_of, login, make_app

FORGED = "the intruder's password"


def _intrude(store, *statements) -> None:
    """Write as someone with the database but not the key: SQL, without the store."""
    engine = create_engine(store.url)
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(statement)
    engine.dispose()


def _login(client, name: str, password: str) -> int:
    return client.post("/login", data={"name": name, "password": password,
                                       "csrf_token": csrf_of(client)}).status_code


def test_a_forged_password_hash_or_role_is_never_trusted_and_verify_names_it(any_app):
    store = get_store(any_app)
    assert store.verify().ok
    _intrude(store, update(User).where(User.name == "chief").values(password_hash=generate_password_hash(FORGED)),
             update(User).where(User.name == "viewer").values(role="chief"))
    assert _login(any_app.test_client(), "chief", FORGED) == 401
    assert _login(any_app.test_client(), "chief", PASSWORD) == 401  # its row is no longer the sealed one
    viewer = any_app.test_client()
    assert _login(viewer, "viewer", PASSWORD) == 401
    assert viewer.get("/flags/").status_code == 403
    assert sorted(store.verify().problems) == ["app_users row chief: changed outside the store",
                                               "app_users row viewer: changed outside the store"]


def test_a_session_made_before_a_forged_role_stops_at_once(any_app):
    client = any_app.test_client()
    login(client, "referee")
    assert client.get("/flags/").status_code == 200
    _intrude(get_store(any_app), update(User).where(User.name == "referee").values(role="chief"))
    assert client.get("/flags/").status_code == 403


def test_a_forged_token_row_opens_no_table_and_verify_names_it(any_app):
    store = get_store(any_app)
    create_token(store, "T1")
    _intrude(store, insert(TableToken).values(table_id="EVIL", token_hash=token_digest("evil-token"), created_at=0.0),
             update(TableToken).where(TableToken.table_id == "T1").values(token_hash=token_digest("stolen")))
    client = any_app.test_client()
    for table, token in (("EVIL", "evil-token"), ("T1", "stolen")):
        answer = client.post(f"/api/tables/{table}/events", json={"type": "tick", "t": 1}, headers=bearer(token))
        assert answer.status_code == 401, answer.get_data(as_text=True)
    assert store.tables() == []
    assert sorted(store.verify().problems) == ["app_table_tokens row EVIL: added outside the store",
                                               "app_table_tokens row T1: changed outside the store"]


@pytest.mark.parametrize("how", ["logout", "password", "role", "disable"])
def test_each_way_of_ending_sessions_ends_every_session_of_that_login(any_app, how):
    store = get_store(any_app)
    add_user(store, "Ref Li", "referee", PASSWORD)
    first, second = any_app.test_client(), any_app.test_client()
    for client in (first, second):
        assert _login(client, "Ref Li", PASSWORD) == 302
        assert client.get("/flags/").status_code == 200
    captured = first.get_cookie("session").value
    if how == "logout":
        assert first.post("/logout", data={"csrf_token": csrf_of(first, "/")}).status_code == 302
    elif how == "password":
        add_user(store, "Ref Li", "referee", "a new password")
    elif how == "role":
        add_user(store, "Ref Li", "scorer", PASSWORD)
    else:
        end_sessions(store, "Ref Li", disable=True)
    replay = any_app.test_client()
    replay.set_cookie("session", captured)
    for client in (second, replay):
        assert client.get("/flags/").status_code == 403
    expected = {"logout": 302, "password": 401, "role": 302, "disable": 401}[how]
    assert _login(any_app.test_client(), "Ref Li", PASSWORD) == expected
    assert store.verify().ok


def test_user_disable_on_the_command_line(tmp_path, monkeypatch, capsys):
    data = ["--data", str(tmp_path / "d")]
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{PASSWORD}\n"))
    assert main(["user", "add", "Ref Li", "--role", "referee", "--password-stdin", *data]) == 0
    assert main(["user", "disable", "Ref Li", *data]) == 0
    assert main(["user", "disable", "nobody", *data]) == 2
    assert "no login 'nobody'" in capsys.readouterr().err
    with open_store(data_dir=str(tmp_path / "d")) as store:
        assert authenticate(store, "Ref Li", PASSWORD) is None
        assert store.verify().ok


def test_a_session_ends_on_the_server_after_a_days_play(app, monkeypatch):
    client = app.test_client()
    login(client, "referee")
    assert client.get("/flags/").status_code == 200
    later = time.time() + auth.SESSION_MAX_S + 1
    monkeypatch.setattr(auth.time, "time", lambda: later)
    assert client.get("/flags/").status_code == 403


def test_secure_cookies_never_travel_in_clear(app, tmp_path):
    plain = app.test_client().get("/login")
    assert "Secure" not in plain.headers["Set-Cookie"]
    with temporary_url("sqlite", tmp_path / "secure") as url:
        secure_cookies(make_app(url, SECURE_COOKIES=True))


def secure_cookies(app) -> None:
    client = app.test_client()
    form = client.get("/login", base_url="https://localhost")
    assert "Secure" in form.headers["Set-Cookie"]
    token = form.get_data(as_text=True).split('name="csrf_token" value="')[1].split('"')[0]
    answer = client.post("/login", data={"name": "chief", "password": PASSWORD, "csrf_token": token},
                         base_url="https://localhost", headers={"Referer": "https://localhost/login"})
    assert answer.status_code == 302 and "; Secure" in answer.headers["Set-Cookie"]
    get_store(app).close()


@pytest.mark.parametrize("kind", KINDS)
def test_logins_made_before_the_seals_are_sealed_by_the_upgrade_and_then_held(kind, tmp_path):
    with temporary_url(kind, tmp_path) as url:
        with Store(url, secret_key=TEST_SECRET, migrate=False) as bare:  # as a store of app_0001 was made
            upgrade(bare.engine, "0004")
            upgrade(bare.engine, "app_0001")
            with bare.engine.begin() as conn:
                seals.seal_new(conn, as_key(TEST_SECRET), seals.seal_names(conn))
        with Store(url, secret_key=TEST_SECRET, migrate=False) as old:  # with a login
            with old.engine.begin() as conn:
                conn.execute(insert(User.__table__).values(name="old chief", role="chief", created_at=0.0,
                                                           password_hash=generate_password_hash(PASSWORD)))
        app = make_app(url)  # the upgrade seals the logins as they are
        assert _login(app.test_client(), "old chief", PASSWORD) == 302
        store = get_store(app)
        assert store.verify().ok, store.verify().problems
        _intrude(store, update(User).where(User.name == "old chief").values(role="viewer"))
        assert store.verify().problems == ["app_users row old chief: changed outside the store"]
        store.close()
