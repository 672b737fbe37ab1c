"""The sample deployment (deploy/gunicorn.conf.py) starts as documented: it migrates an
empty PostgreSQL database once in the master, serves on several workers through Redis
and names no server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from tests.store.support import TEST_SECRET

from .conftest import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = str(Path(sys.executable).parent / "gunicorn")


def test_the_sample_gunicorn_config_serves_a_migrated_hall(pg_url, private_redis, tmp_path):
    port = free_port()
    env = {**os.environ, "GUANDAN_DB_URL": pg_url, "GUANDAN_REDIS_URL": private_redis.url,
           "GUANDAN_SECRET_KEY": TEST_SECRET, "GUANDAN_BIND": f"127.0.0.1:{port}", "GUANDAN_WORKERS": "2",
           "GUANDAN_CONNECTIONS": "50"}
    with (tmp_path / "gunicorn.log").open("w") as log:
        proc = subprocess.Popen([GUNICORN, "-c", str(ROOT / "deploy" / "gunicorn.conf.py"), "web.app.wsgi:create()"],
                                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for_port(port, 30, lambda: proc.poll() is None)
        response = httpx.get(f"http://127.0.0.1:{port}/api/tables", timeout=10)
        assert response.status_code == 200 and response.json() == {"tables": []}
        assert "server" not in response.headers
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    assert "database at" in (tmp_path / "gunicorn.log").read_text()
    with create_engine(pg_url).connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 2  # store and app
