"""The server signs the store with the key the command line resolves (never its cookie
key), on SQLite and PostgreSQL; cookies get a key made from it; another key is refused."""

from __future__ import annotations

import pytest

from tests.store.support import KINDS, temporary_url
from web.app import create_app
from web.app.accounts import create_token
from web.app.broker import LocalBroker
from web.store import WrongKey, get_store, open_store
from web.store.signing import COOKIES, derived_key, resolve_key

from .conftest import bearer


def _app(url: str, **config):
    return create_app({"STORE_URL": url, "TESTING": True, "BROKER": LocalBroker(), **config})


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cookie_key", [None, "a cookie key configured apart"])
def test_a_store_the_server_wrote_verifies_with_the_key_of_the_command_line(kind, cookie_key, tmp_path):
    with temporary_url(kind, tmp_path) as url:
        with open_store(url) as cli:  # guandan-ref token create, with the per-user key
            token = create_token(cli, "K1")
        app = _app(url, **({"SECRET_KEY": cookie_key} if cookie_key else {}))
        client = app.test_client()
        for t in (1, 2, 3):
            response = client.post("/api/tables/K1/events", json={"type": "tick", "t": t}, headers=bearer(token))
            assert response.get_json()["results"][0]["status"] == "accepted"
        key = resolve_key()
        assert app.secret_key == (cookie_key or derived_key(key, COOKIES)) and app.secret_key != key
        get_store(app).close()
        with open_store(url) as cli:  # guandan-ref verify
            report = cli.verify(rederive=True)
        assert report.ok and report.events == 3, report.problems


@pytest.mark.parametrize("kind", KINDS)
def test_a_server_on_a_store_of_another_key_does_not_start(kind, tmp_path):
    with temporary_url(kind, tmp_path) as url:
        open_store(url, secret="the key it was made with").close()
        with pytest.raises(WrongKey, match="signed with another key than GUANDAN_SECRET_KEY"):
            _app(url, GUANDAN_SECRET_KEY="another key")
