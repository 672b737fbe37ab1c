"""``guandan-ref serve``, ``user add``, ``token create``: real processes on real ports."""

from __future__ import annotations

import http.client
import io
import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import select

from web.app.accounts import authenticate, token_digest
from web.app.cli import main
from web.app.models import TableToken
from web.store import open_store

from .conftest import session_events

CLI = [str(Path(sys.executable).parent / "guandan-ref")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_token_create_prints_a_token_and_keeps_only_its_hash(tmp_path, capsys):
    assert main(["token", "create", "T7", "--data", str(tmp_path)]) == 0
    token = capsys.readouterr().out.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", token)  # goes after --token as it is (no leading "-")
    with open_store(data_dir=str(tmp_path)) as store, store.engine.connect() as conn:
        rows = conn.execute(select(TableToken)).all()
    assert [(r.table_id, r.token_hash) for r in rows] == [("T7", token_digest(token))]
    assert token.encode() not in (tmp_path / "guandan.sqlite3").read_bytes()


def test_user_add_reads_the_password_and_checks_the_role(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("s3cret-password\n"))
    assert main(["user", "add", "Ref Li", "--role", "referee", "--password-stdin", "--data", str(tmp_path)]) == 0
    with open_store(data_dir=str(tmp_path)) as store:
        assert authenticate(store, "Ref Li", "s3cret-password").role == "referee"
        assert authenticate(store, "Ref Li", "wrong") is None
    monkeypatch.setattr(sys, "stdin", io.StringIO("short\n"))
    assert main(["user", "add", "x", "--role", "viewer", "--password-stdin", "--data", str(tmp_path)]) == 2
    assert "at least 8 characters" in capsys.readouterr().err


def test_several_workers_need_redis(tmp_path, capsys):
    assert main(["serve", "--data", str(tmp_path), "--workers", "2"]) == 2
    assert "--redis" in capsys.readouterr().err


def test_an_unknown_time_zone_is_named_at_start(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GUANDAN_TIMEZONE", "Mars/Olympus")
    assert main(["serve", "--data", str(tmp_path)]) == 2
    assert "GUANDAN_TIMEZONE='Mars/Olympus': not a known time zone" in capsys.readouterr().err


def test_an_unreachable_redis_is_named_at_start(tmp_path, capsys):
    unused = f"redis://127.0.0.1:{free_port()}/0"
    assert main(["serve", "--data", str(tmp_path), "--workers", "2", "--redis", unused]) == 2
    assert f"cannot reach Redis at {unused}" in capsys.readouterr().err


@contextmanager
def serving(data: Path, *extra: str, env: dict | None = None):
    port = free_port()
    proc = subprocess.Popen([*CLI, "serve", "--data", str(data), "--port", str(port), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stdout.read()
                time.sleep(0.1)
        yield port, proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def get(port: int, path: str, headers: dict | None = None) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", path, headers=headers or {})
    return conn.getresponse()


def test_first_start_prints_the_chief_password_once_and_serves_without_a_server_header(tmp_path):
    with serving(tmp_path) as (port, proc):
        response = get(port, "/")
        assert response.status == 200 and response.getheader("Server") is None
        assert "frame-ancestors 'none'" in response.getheader("Content-Security-Policy")
        assert abs(parsedate_to_datetime(response.getheader("Date")).timestamp() - time.time()) < 5
    first = proc.stdout.read()
    assert "chief" in first and "password" in first
    with open_store(data_dir=str(tmp_path)) as store:
        password = first.split("password ", 1)[1].split()[0]
        assert authenticate(store, "chief", password).role == "chief"
    with serving(tmp_path) as (port, proc):
        assert get(port, "/api/tables").status == 200
    assert "password" not in proc.stdout.read()


def test_with_several_workers_a_change_reaches_every_stream_through_redis(tmp_path, capsys):
    assert main(["token", "create", "T1", "--data", str(tmp_path)]) == 0
    token = capsys.readouterr().out.strip()
    env = {"GUANDAN_REDIS_NAMESPACE": f"test-{uuid.uuid4().hex}", "GUANDAN_ADMIN_PASSWORD": "chief-password"}
    with serving(tmp_path, "--workers", "2", "--redis", "redis://127.0.0.1:6379/0", env=env) as (port, _):
        streams = []
        for _ in range(4):  # several streams: the workers share them out
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/api/stream", headers={"Last-Event-ID": json.dumps({"T1": 0})})
            streams.append(conn.getresponse())
        time.sleep(0.5)
        for event in session_events()[:2]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("POST", "/api/tables/T1/events", body=json.dumps(event),
                          headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
            assert json.loads(conn.getresponse().read())["results"][0]["status"] == "accepted"
        for stream in streams:
            seen = ""
            while '"T1":2' not in seen or not seen.endswith("\n\n"):  # up to the end of that event
                seen += stream.readline().decode()
            event = seen[:-2].rsplit("\n\n", 1)[-1]  # the event that carries that id
            assert event.startswith(("event: table", "event: change")) and 'id: {"T1":2}' in event


@pytest.mark.parametrize("argv", [["serve", "--workers", "0"], ["token", "create", " "]])
def test_bad_arguments_are_one_line_errors(tmp_path, capsys, argv):
    assert main([*argv, "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("guandan-ref") and len(err.strip().splitlines()) == 1


FREEZING = """
import gc
from web.app.collector import freeze_survivors

freeze_survivors()
frozen = gc.get_freeze_count()
kept = [[i] for i in range(5000)]  # a hall's live state, growing
gc.collect()  # a full pass: the survivors are frozen, left out of the next ones
after = gc.get_freeze_count()
cycle = {}
cycle["self"] = cycle  # young garbage in a cycle is still collected
del cycle
found = gc.collect()
del kept  # and frozen objects are still freed when unreferenced
print(frozen > 0, after - frozen >= 5000, found >= 1, gc.get_freeze_count() < after)
"""


def test_a_worker_leaves_what_survived_a_full_pass_out_of_the_next(tmp_path):
    """Full passes of the collector held a worker for up to 220 ms (bench/load.py): the
    worker freezes what survives one. In a fresh interpreter: its state stays as it was."""
    done = subprocess.run([sys.executable, "-c", FREEZING], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True"] * 4, done.stderr


FULL_PASSES = """
import collections, gc
from web.app.collector import freeze_survivors

freeze_survivors()
passes = collections.Counter()
gc.callbacks.append(lambda phase, info: phase == "stop" and passes.update([info["generation"]]))
kept = [[i] for i in range(300_000)]  # a hall's live state, growing
print(passes[1], passes[2])
"""


def test_a_worker_runs_a_full_pass_after_every_few_middle_ones(tmp_path):
    """Each full pass walks only what survived since the last one was frozen: with Python's
    default (one full pass per ten middle ones) they held a loaded worker for 20-60 ms."""
    done = subprocess.run([sys.executable, "-c", FULL_PASSES], capture_output=True, text=True, timeout=60)
    middle, full = map(int, done.stdout.split())
    assert full >= 5 and full * 3 >= middle, done.stderr


def test_the_access_log_leaves_out_agent_posts_taken(monkeypatch):
    """400 agent posts a second at 200 tables buried the rest; refused posts stay logged."""
    from gunicorn.glogging import Logger

    from web.app.gunicorn_server import HallLogger

    logged = []
    monkeypatch.setattr(Logger, "access", lambda self, resp, req, environ, took: logged.append(
        (resp.status_code, environ["REQUEST_METHOD"], environ["PATH_INFO"])))
    requests = [(200, "POST", "/api/tables/T1/events"), (200, "POST", "/api/tables/T1/health"),
                (400, "POST", "/api/tables/T1/events"), (401, "POST", "/api/tables/T1/health"),
                (200, "GET", "/api/tables/T1/events"), (200, "POST", "/api/tables/T1/evidence"), (200, "GET", "/")]
    for status, method, path in requests:
        HallLogger.access(object.__new__(HallLogger), SimpleNamespace(status_code=status), None,
                          {"REQUEST_METHOD": method, "PATH_INFO": path}, 0.01)
    assert logged == requests[2:]


def test_answers_share_the_date_of_their_second():
    from web.app.gunicorn_server import _DateOfTheSecond

    made = []

    def http_date(timestamp: float) -> str:
        made.append(timestamp)
        return formatdate(timestamp, usegmt=True)

    date = _DateOfTheSecond(http_date)
    while time.time() % 1 > 0.5:  # the calls below fall within one second
        time.sleep(0.05)
    first, second = date(), date()
    assert first == second == formatdate(int(time.time()), usegmt=True) and len(made) == 1
    assert date(0) == "Thu, 01 Jan 1970 00:00:00 GMT" and len(made) == 2  # a given time: as asked
