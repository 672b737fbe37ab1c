"""Everything of ours that knows gunicorn, in one module, for the one version the project pins
(``SUPPORTED``, the same text as pyproject.toml's dependency).

Beyond its documented settings, the dashboard leans on gunicorn's internals, each of which an
upgrade may change without notice; ``tests/app/test_gunicorn_server.py`` exercises every one
on the installed gunicorn, so an upgrade fails there first:

- ``gunicorn.http.wsgi.Response`` is looked up by name for each request
  (``gunicorn.http.wsgi.create``), and its ``default_headers`` call
  ``gunicorn.util.http_date()``: ``patch_responses`` replaces both, for answers without a
  ``Server`` header and a ``Date`` made once a second;
- ``Logger.access(resp, req, environ, request_time)`` with ``resp.status_code``:
  ``HallLogger`` leaves out the lines nobody reads;
- ``environ["gunicorn.socket"]`` is the connection's socket, and a response without a length
  to an HTTP/1.1 client is sent in chunks framed as ``chunk`` frames them: the live feed
  writes its batches to held streams itself (``web/app/feed.py``), between gunicorn's writes;
- ``post_worker_init`` is called with the worker (its ``log`` and ``pid``) once it has loaded
  the app; ``BaseApplication`` runs gunicorn from ``serve`` (``run``).

``serve`` and ``deploy/gunicorn.conf.py`` run with the same settings (``server_settings``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import gunicorn.http.wsgi
import gunicorn.util
from gunicorn.app.base import BaseApplication
from gunicorn.glogging import Logger

from web.settings import read

from .collector import freeze_survivors
from .health import PATH as HEALTH_PATH

SUPPORTED = "gunicorn>=27.0,<27.1"
"""The gunicorn the internals above were checked on; pyproject.toml pins the same."""


def server_settings(bind: str, workers: int, connections: int) -> dict[str, Any]:
    """Gunicorn's settings for the dashboard: ``workers`` gevent workers, each holding up to
    ``connections`` open connections (every open live page holds one for its event stream, a
    green thread, cheap to wake: size ``connections`` x ``workers`` for the viewers one host is
    to carry, plus the agents), behind the proxies ``GUANDAN_PROXY_IPS`` names."""
    return {
        "bind": bind, "workers": workers, "worker_connections": connections, "worker_class": "gevent",
        "timeout": 60, "graceful_timeout": 5, "keepalive": 5,
        "accesslog": "-", "logger_class": HallLogger,  # no line per agent post taken
        # The proxy in front is the only client allowed to name the visitor's address (the
        # login rate limit counts per visitor) or that the visitor came over HTTPS.
        "forwarded_allow_ips": read("PROXY_IPS"),
        # else one control socket in the user's home, shared by every server the user runs
        # (two hosts tried on one machine stepped on each other's)
        "control_socket_disable": True,
        "post_worker_init": worker_ready,
    }


def worker_ready(worker) -> None:
    """Gunicorn's ``post_worker_init``: the worker's answers patched (``patch_responses``), its
    collector's full passes kept short from the app as built (``freeze_survivors``), and a
    line saying it serves (an operator sees a restarted worker come back; the outage tests
    wait for it)."""
    patch_responses()
    freeze_survivors()
    worker.log.info("worker %s ready", worker.pid)


class _Server(BaseApplication):
    """Gunicorn run from ``serve``: each worker serves what ``load`` builds, with what it
    inherits when forked (``serve``'s options), not through the process's environment."""

    def __init__(self, settings: dict[str, Any], load: Callable[[], Any]):
        self.settings = settings
        self.load_app = load
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.settings.items():
            self.cfg.set(key, value)

    def load(self):
        return self.load_app()


def run(settings: dict[str, Any], load: Callable[[], Any]) -> None:
    """Serve with ``settings`` (``server_settings``) the WSGI app each worker builds with ``load``."""
    _Server(settings, load).run()


AGENT_POST = re.compile(r"/api/tables/[^/]+/(events|health)")


class HallLogger(Logger):
    """Gunicorn's logger, less a line for each post of a table agent that was taken: 200
    tables post 400 times a second, which buried the pages and the failures in the access log
    (and cost a share of a worker's core). Refused posts are logged as before; so are the
    proxy's health checks, only when answered 503 (it probes every second)."""

    def access(self, resp, req, environ, request_time) -> None:
        path = environ.get("PATH_INFO", "")
        if resp.status_code == 200 and (path == HEALTH_PATH or environ.get("REQUEST_METHOD") == "POST"
                                        and AGENT_POST.fullmatch(path)):
            return
        super().access(resp, req, environ, request_time)


class _QuietResponse(gunicorn.http.wsgi.Response):
    def default_headers(self) -> list[str]:
        return [h for h in super().default_headers() if not h.lower().startswith("server:")]


class _DateOfTheSecond:
    """``gunicorn.util.http_date`` made once a second rather than for every answer (an HTTP
    date counts whole seconds): formatting it for each of 400 agent posts a second shows in a
    worker's profile."""

    def __init__(self, http_date):
        self._http_date = http_date
        self._made: tuple[int, str] = (-1, "")

    def __call__(self, timestamp: float | None = None) -> str:
        if timestamp is not None:
            return self._http_date(timestamp)
        second = int(time.time())
        if self._made[0] != second:
            self._made = (second, self._http_date(second))
        return self._made[1]


def patch_responses() -> None:
    """Gunicorn's answers carry no ``Server`` header, and their ``Date`` is made once a
    second (in the process that serves, before it does)."""
    gunicorn.http.wsgi.Response = _QuietResponse
    if not isinstance(gunicorn.util.http_date, _DateOfTheSecond):
        gunicorn.util.http_date = _DateOfTheSecond(gunicorn.util.http_date)


def connection_socket(environ: dict):
    """The request's connection (gunicorn's socket), or None under another server."""
    return environ.get("gunicorn.socket")


def chunk(data: bytes) -> bytes:
    """``data`` as one HTTP/1.1 chunk, as gunicorn frames what a streamed response yields."""
    return b"%X\r\n%s\r\n" % (len(data), data)
