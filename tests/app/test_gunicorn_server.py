"""What the dashboard relies on of gunicorn (web/app/gunicorn_server.py), on the gunicorn
installed: it is the version pyproject.toml pins and the module was checked on, and every
internal the module uses still works as the module expects, so that an upgrade fails here
first (rather than as a missing header, a mangled live stream or a silent access log)."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
import tomllib
from datetime import timedelta
from email.utils import formatdate
from importlib.metadata import version
from pathlib import Path

import gunicorn.http.wsgi
import gunicorn.util
import pytest
from gunicorn.config import Config
from gunicorn.http import RequestParser
from gunicorn.workers.ggevent import GeventWorker
from packaging.requirements import Requirement

from web.app import gunicorn_server
from web.app.feed import frame
from web.app.gunicorn_server import (SUPPORTED, HallLogger, _QuietResponse, _Server, chunk, connection_socket,
                                     patch_responses, server_settings, worker_ready)

ROOT = Path(__file__).resolve().parents[2]
PEER = ("127.0.0.1", 50000)


def test_the_installed_gunicorn_is_the_one_pinned_and_checked():
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pinned = [Requirement(d) for d in dependencies if Requirement(d).name == "gunicorn"]
    assert [str(r) for r in pinned] == [str(Requirement(SUPPORTED))], "pyproject.toml and gunicorn_server.SUPPORTED differ"
    assert pinned[0].specifier.contains(version("gunicorn")), (
        f"gunicorn {version('gunicorn')} is installed; gunicorn_server.py was checked on {SUPPORTED}")


def test_serve_and_the_deploy_file_settings_are_gunicorn_settings():
    settings = server_settings("127.0.0.1:5001", 3, 7)
    server = _Server(settings, lambda: "the app")
    assert set(settings) <= set(server.cfg.settings), "a setting this gunicorn does not know"
    cfg = server.cfg
    assert (cfg.bind, cfg.workers, cfg.worker_connections, cfg.worker_class_str) == (["127.0.0.1:5001"], 3, 7, "gevent")
    assert cfg.control_socket_disable and cfg.logger_class is HallLogger and cfg.post_worker_init is worker_ready
    assert cfg.forwarded_allow_ips == ["127.0.0.1"]  # GUANDAN_PROXY_IPS's default
    assert server.wsgi() == "the app"


@pytest.fixture
def restored(monkeypatch):
    """Gunicorn's own response class and date restored after the test."""
    monkeypatch.setattr(gunicorn.http.wsgi, "Response", gunicorn.http.wsgi.Response)
    monkeypatch.setattr(gunicorn.util, "http_date", gunicorn.util.http_date)


@pytest.fixture
def patched(restored):
    patch_responses()


def a_request(path: str):
    """A request parsed by gunicorn from a real socket: (the server's end, the client's end,
    the response and environ gunicorn makes for it)."""
    server_end, client_end = socket.socketpair()
    client_end.sendall(f"GET {path} HTTP/1.1\r\nHost: hall\r\n\r\n".encode())
    cfg = Config()
    request = next(RequestParser(cfg, server_end, PEER))
    response, environ = gunicorn.http.wsgi.create(request, server_end, PEER, ("127.0.0.1", 5000), cfg)
    return server_end, client_end, request, response, environ


def test_a_stream_is_answered_quietly_dated_and_chunked_as_the_feed_writes(patched):
    """The response class is looked up per request; its headers take the date of the second
    and no Server; ``environ["gunicorn.socket"]`` is the connection, and the feed's chunks
    (written to it between gunicorn's own) frame as gunicorn's do."""
    while time.time() % 1 > 0.5:  # the answer below falls within one second
        time.sleep(0.05)
    server_end, client_end, _, response, environ = a_request("/api/stream")
    assert type(response) is _QuietResponse and connection_socket(environ) is server_end
    response.start_response("200 OK", [("Content-Type", "text/event-stream")])
    response.write(b"retry: 1000\n\n")
    connection_socket(environ).sendall(frame(b"event: table\ndata: {}\n\n", '{"T1":1}'))
    response.write(b": keep-alive\n\n")
    response.close()
    server_end.close()
    answer = b"".join(iter(lambda: client_end.recv(65536), b""))
    head, body = answer.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    assert "Transfer-Encoding: chunked" in lines and not [h for h in lines if h.lower().startswith("server:")]
    assert f"Date: {formatdate(int(time.time()), usegmt=True)}" in lines
    assert body == chunk(b"retry: 1000\n\n") + frame(b"event: table\ndata: {}\n\n", '{"T1":1}') \
        + chunk(b": keep-alive\n\n") + b"0\r\n\r\n"


def test_the_access_log_takes_gunicorn_s_own_request_and_answer(capsys):
    cfg = Config()
    cfg.set("accesslog", "-")
    log = HallLogger(cfg)
    for path, status in (("/api/stream", "200 OK"), ("/healthz", "200 OK"), ("/healthz", "503 Service Unavailable")):
        _, _, request, response, environ = a_request(path)
        response.start_response(status, [("Content-Length", "0")])
        environ["PATH_INFO"] = path  # as gunicorn's worker sets it from the request
        log.access(response, request, environ, timedelta(milliseconds=3))
    logged = capsys.readouterr().out.splitlines()
    assert [(line.split('"')[1], line.split('"')[2].split()[0]) for line in logged] == [
        ("GET /api/stream HTTP/1.1", "200"), ("GET /healthz HTTP/1.1", "503")]


def test_a_worker_patches_its_answers_and_says_it_is_ready(restored, monkeypatch, capsys):
    """``post_worker_init`` gets gunicorn's worker: its ``log`` and ``pid``."""
    frozen = []
    monkeypatch.setattr(gunicorn_server, "freeze_survivors", lambda: frozen.append(True))
    cfg = Config()
    worker = GeventWorker(1, os.getpid(), [], None, 30, cfg, HallLogger(cfg))
    worker.pid = 4242  # as the arbiter sets it in the forked worker
    worker_ready(worker)
    assert gunicorn.http.wsgi.Response is _QuietResponse and frozen == [True]
    assert "worker 4242 ready" in capsys.readouterr().err


SERVE = """
import sys
from web.app.gunicorn_server import chunk, connection_socket, run, server_settings

def app(environ, start_response):
    if environ["PATH_INFO"] == "/stream":
        start_response("200 OK", [("Content-Type", "text/event-stream")])
        def body():
            yield b"first\\n"
            connection_socket(environ).sendall(chunk(b"written by the feed\\n"))
            yield b"last\\n"
        return body()
    start_response("200 OK", [("Content-Length", "2")])
    return [b"ok"]

run(server_settings(sys.argv[1], 1, 10), lambda: app)
"""


def test_gunicorn_serves_with_these_settings_on_a_gevent_worker(tmp_path):
    """The whole: gunicorn, run as ``serve`` runs it, patches and announces its worker, leaves
    the proxy's healthy probes out of the log and carries the feed's writes in its stream."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = (tmp_path / "server.log").open("w+")
    proc = subprocess.Popen([sys.executable, "-c", SERVE, f"127.0.0.1:{port}"], cwd=ROOT, stdout=out, stderr=out,
                            env={**os.environ, "HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(tmp_path)})
    try:
        deadline = time.monotonic() + 30
        while " ready" not in (tmp_path / "server.log").read_text():
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.1)
        answers = {}
        for path in ("/stream", "/healthz"):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", path)
            response = conn.getresponse()
            answers[path] = (response.getheader("Server"), response.getheader("Date") is not None,
                             response.getheader("Transfer-Encoding"), response.read())
            conn.close()
        control = [p.name for p in tmp_path.rglob("*") if p.name.endswith(".ctl")]  # removed when it stops
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert answers == {"/stream": (None, True, "chunked", b"first\nwritten by the feed\nlast\n"),
                       "/healthz": (None, True, None, b"ok")}
    log = (tmp_path / "server.log").read_text()
    assert '"GET /stream HTTP/1.1" 200' in log and "GET /healthz" not in log
    assert control == [], "a control socket in the user's home"
