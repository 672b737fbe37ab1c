"""Fixtures: a dashboard on a fresh store (SQLite, and PostgreSQL where the API is tested),
logins of every role, agent tokens for tables T1 and T2, and a short session whose hands
are known."""

from __future__ import annotations

import functools
import re

import pytest

from referee.cards import DOUBLE_DECK, card_name
from web.app import create_app
from sqlalchemy import insert
from werkzeug.security import generate_password_hash

from web.app.accounts import create_token
from web.app.models import User
from web.app.broker import LocalBroker
from web.store import get_store
from tests.store.support import KINDS, TEST_SECRET, temporary_url
from web.store.db import WRITE

PASSWORD = "correct horse battery"
ROLES = ("chief", "referee", "scorer", "viewer")


def dealt_hands() -> dict[str, list[str]]:
    """S and E hold spades, diamonds and a small joker; N and W hearts, clubs and a big joker."""
    cards = sorted(DOUBLE_DECK)
    return {seat: [card_name(c) for c in cards[i::4]] for i, seat in enumerate(("S", "E", "N", "W"))}


def session_events(table: str = "T1") -> list[dict]:
    """Deal 1 under way: a low-confidence read (E), an out-of-turn play (S, P4), a pass."""
    return [
        {"type": "session_start", "t": 0.0, "id": "s", "teams": {"NS": "Nanjing", "EW": "Suzhou"}},
        {"type": "deal_start", "t": 1.0, "id": "d1", "deal": 1, "hands": dealt_hands(), "first_leader": "S"},
        {"type": "play", "t": 5.0, "id": "p1", "seat": "S", "cards": ["3S"], "source": "camera", "confidence": 0.97},
        {"type": "play", "t": 9.0, "id": "p2", "seat": "E", "cards": ["5S"], "source": "camera", "confidence": 0.55},
        {"type": "play", "t": 12.0, "id": "p3", "seat": "S", "cards": ["7D"], "source": "rfid"},
        {"type": "pass", "t": 15.0, "id": "p4", "seat": "N", "source": "camera"},
        {"type": "play", "t": 18.0, "id": "p5", "seat": "W", "cards": ["9H"], "source": "fused", "confidence": 0.91},
    ]


PLAYED = {"3S", "5S", "7D", "9H", "2H"}
"""Faces shown in public by ``session_events`` (2H: the wildcard of level 2)."""


def hidden_faces() -> set[str]:
    """Faces that only ever sat in a hand in ``session_events``: no viewer may see them."""
    return {c for hand in dealt_hands().values() for c in hand} - PLAYED


@functools.cache
def password_hash() -> str:
    """PASSWORD hashed the way ``add_user`` hashes (once per run: a hash takes ~0.4 s)."""
    return generate_password_hash(PASSWORD)


def add_logins(store) -> None:
    """A login per role, each named after its role, all with PASSWORD (as ``add_user`` makes them)."""
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        conn.execute(insert(User), [dict(name=role, role=role, password_hash=password_hash(), created_at=0.0)
                                    for role in ROLES])
    for role in ("chief", "referee"):
        store.add_official(role, role)


def make_app(url: str, **config):
    app = create_app({"STORE_URL": url, "GUANDAN_SECRET_KEY": TEST_SECRET, "TESTING": True,
                      "BROKER": LocalBroker(), "MAX_CONTENT_LENGTH": 256 * 1024, **config})
    add_logins(get_store(app))
    return app


@pytest.fixture
def sqlite_url(tmp_path):
    with temporary_url("sqlite", tmp_path) as url:
        yield url


@pytest.fixture
def app(sqlite_url):
    app = make_app(sqlite_url)
    yield app
    get_store(app).close()


@pytest.fixture(params=KINDS)
def any_app(request, tmp_path):
    """The app on SQLite and on PostgreSQL (the machine's server)."""
    with temporary_url(request.param, tmp_path) as url:
        app = make_app(url)
        yield app
        get_store(app).close()


@pytest.fixture
def tokens_for():
    """Agent tokens for T1 and T2 of an app."""
    return lambda app: {t: create_token(get_store(app), t) for t in ("T1", "T2")}


@pytest.fixture
def tokens(app, tokens_for):
    return tokens_for(app)


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def csrf_of(client, path: str = "/login") -> str:
    html = client.get(path).get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def login(client, role: str) -> None:
    response = client.post("/login", data={"name": role, "password": PASSWORD, "csrf_token": csrf_of(client)})
    assert response.status_code == 302, response.get_data(as_text=True)


@pytest.fixture
def post_events(app, tokens):
    """Posts events to a table through the API as its agent; returns the JSON results."""
    agent = app.test_client()

    def post(events, table: str = "T1") -> list[dict]:
        response = agent.post(f"/api/tables/{table}/events", json=events, headers=bearer(tokens[table]))
        assert response.status_code == 200, response.get_data(as_text=True)
        return response.get_json()["results"]

    return post


@pytest.fixture
def session(post_events):
    results = post_events(session_events())
    assert [r["status"] for r in results] == ["accepted"] * len(results)
    return results


