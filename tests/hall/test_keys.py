"""The issue's reproduction, on real servers with the default key setup (no
``GUANDAN_SECRET_KEY``: the per-user key file): ``token create``, ``serve``, three events
posted, stop, ``verify`` says OK, on SQLite and PostgreSQL; a second ``serve`` with another
key refuses to start on one line. The server leaves nothing in the user's home (gunicorn's
control socket is off)."""

from __future__ import annotations

import os
import subprocess

import httpx
import pytest

from .conftest import CLI, Server


def guandan(*args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "GUANDAN_SECRET_KEY"} | env
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=environ, timeout=120)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_store_written_by_the_server_verifies_under_the_default_key(kind, tmp_path, request):
    where = ["--data", str(tmp_path / "D")] if kind == "sqlite" else ["--db", request.getfixturevalue("pg_url")]
    made = guandan("token", "create", "K1", *where)
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip().splitlines()[-1]
    server = Server(where[1], tmp_path)
    del server.env["GUANDAN_SECRET_KEY"]  # the per-user key in the test's own config home
    server.env["HOME"] = str(tmp_path / "home")
    server.env.pop("XDG_RUNTIME_DIR", None)
    server.start()
    try:
        for t in (1, 2, 3):
            response = httpx.post(f"{server.base}/api/tables/K1/events", json={"type": "tick", "t": t},
                                  headers={"Authorization": f"Bearer {token}"}, timeout=10)
            assert response.json()["results"] == [{"status": "accepted", "seq": t}]
    finally:
        server.stop()
    assert not (tmp_path / "home").exists()  # no gunicorn control socket in the user's home
    checked = guandan("verify", *where)
    assert checked.returncode == 0 and checked.stdout.startswith("OK: 1 table(s), 3 event(s)"), checked.stdout
    refused = guandan("serve", *where, "--port", "1", GUANDAN_SECRET_KEY="another key")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "signed with another key than $GUANDAN_SECRET_KEY" in refused.stderr
