"""``GET /healthz``, the proxy's health check: 200 only while this worker reaches its
database and (when configured) Redis, 503 naming what it cannot reach, and back to 200 by
itself once it can, on the machine's real PostgreSQL and a Redis of the test's own."""

from __future__ import annotations

import os
import uuid
from types import SimpleNamespace

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from werkzeug.test import Client

from web.app.health import HealthCheck
from web.store import get_store
from tests.app.conftest import make_app
from tests.store.support import DEFAULT_PG_URL, PG_URL_ENV, temporary_url

from .conftest import PrivateRedis


@pytest.fixture
def sqlite_url(tmp_path):
    with temporary_url("sqlite", tmp_path) as url:
        yield url


def probe(app) -> tuple[int, dict]:
    response = Client(app).get("/healthz")
    return response.status_code, response.get_json()


def test_a_reachable_store_is_healthy_and_the_check_stands_in_front_of_the_app(sqlite_url):
    flask_app = make_app(sqlite_url)
    app = HealthCheck(flask_app)
    try:
        client = Client(app)
        response = client.get("/healthz")
        assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"
        assert response.get_json() == {"status": "ok", "database": "ok", "redis": "not configured"}
        head = client.head("/healthz")
        assert head.status_code == 200 and head.get_data() == b""
        assert client.post("/healthz").status_code == 405
        assert client.get("/api/tables").get_json() == {"tables": []}  # everything else: the app's
    finally:
        get_store(flask_app).close()


@pytest.fixture
def database():
    """A PostgreSQL database of the test's own (not a schema: connections to it can be
    refused), dropped afterwards."""
    base = make_url(os.environ.get(PG_URL_ENV, DEFAULT_PG_URL))
    name = f"health_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin, name, base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"),
                         {"n": name})
            conn.execute(text(f'DROP DATABASE "{name}"'))
        admin.dispose()


def test_503_while_the_database_refuses_connections_then_200(database, private_redis):
    admin, name, url = database
    flask_app = make_app(url, BROKER=None, REDIS_URL=private_redis.url,
                         REDIS_NAMESPACE=f"health-{uuid.uuid4().hex[:8]}")
    app = HealthCheck(flask_app)
    try:
        assert probe(app) == (200, {"status": "ok", "database": "ok", "redis": "ok"})
        with admin.connect() as conn:  # the database goes away for this worker: its pool's
            conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))  # connections
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n "
                              "AND pid <> pg_backend_pid()"), {"n": name})  # cut, no new one
        response = Client(app).get("/healthz")
        assert response.status_code == 503 and response.headers["Retry-After"]
        assert response.get_json() == {"status": "unavailable", "database": "unreachable", "redis": "ok"}
        assert name not in response.get_data(as_text=True)  # the driver's message stays in the log
        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
        assert probe(app) == (200, {"status": "ok", "database": "ok", "redis": "ok"})
    finally:
        get_store(flask_app).close()


def test_503_while_redis_is_down_then_200(sqlite_url):
    redis = PrivateRedis().start()
    flask_app = make_app(sqlite_url, BROKER=None, REDIS_URL=redis.url,
                         REDIS_NAMESPACE=f"health-{uuid.uuid4().hex[:8]}")
    app = HealthCheck(flask_app)
    try:
        assert probe(app) == (200, {"status": "ok", "database": "ok", "redis": "ok"})
        redis.stop()
        assert probe(app) == (503, {"status": "unavailable", "database": "ok", "redis": "unreachable"})
        redis.start()  # on the same port
        assert probe(app) == (200, {"status": "ok", "database": "ok", "redis": "ok"})
    finally:
        redis.stop()
        get_store(flask_app).close()


def test_the_access_log_leaves_out_healthy_probes_only(monkeypatch):
    """A proxy probes every second on every host; a 503 is worth a line."""
    from gunicorn.glogging import Logger

    from web.app.gunicorn_server import HallLogger

    logged = []
    monkeypatch.setattr(Logger, "access", lambda self, resp, req, environ, took: logged.append(
        (resp.status_code, environ["REQUEST_METHOD"], environ["PATH_INFO"])))
    requests = [(200, "GET", "/healthz"), (200, "HEAD", "/healthz"), (503, "GET", "/healthz"),
                (405, "POST", "/healthz"), (200, "GET", "/healthz/x")]
    for status, method, path in requests:
        HallLogger.access(object.__new__(HallLogger), SimpleNamespace(status_code=status), None,
                          {"REQUEST_METHOD": method, "PATH_INFO": path}, 0.01)
    assert logged == requests[2:]
