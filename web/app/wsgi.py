"""The dashboard on gunicorn: gevent workers, each building the app from ``GUANDAN_*``.

A worker serves every open live page's event stream and the agents' posts together. With
threads, each stream would be an OS thread, and each batch would wake hundreds of them
through the one interpreter lock; gevent's green threads make a stream's wake-up a switch,
and the same code (the store's group commit, the live feed) runs unchanged on them. What
each setting here was measured to save: bench/NOTES.md.

``gunicorn 'web.app.wsgi:create()'`` works as well; ``run`` is what ``guandan-ref serve``
calls. The ``Server`` header names no server or version.
"""

from __future__ import annotations

import gc
import re
import time

import gunicorn.http.wsgi
import gunicorn.util
from gunicorn.app.base import BaseApplication
from gunicorn.glogging import Logger

from . import create_app
from .config import read
from .health import PATH as HEALTH_PATH
from .health import HealthCheck


def green() -> None:
    """Patch the standard library for gevent in the process that forks the workers, before
    it opens the store. psycopg chooses how to wait for the server when it is imported: a
    master that imported it unpatched gives its workers a wait that blocks every green thread
    of the worker for each query."""
    import warnings

    from gevent import monkey

    with warnings.catch_warnings():  # ``serve`` has imported ssl with redis, to check Redis is
        warnings.simplefilter("ignore", monkey.MonkeyPatchWarning)  # up; no TLS is served here
        monkey.patch_all()


def create(config: dict | None = None):
    """The app a worker serves: the dashboard (``GUANDAN_*`` settings updated with
    ``config``), with the proxy's health check in front."""
    return HealthCheck(create_app(config))


class _Server(BaseApplication):
    """Gunicorn run from ``serve``: the workers get ``serve``'s options as ``config``, which
    they inherit when forked, rather than through the process's environment."""

    def __init__(self, options: dict, config: dict):
        self.options = options
        self.app_config = config
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        return create(self.app_config)


AGENT_POST = re.compile(r"/api/tables/[^/]+/(events|health)")


class HallLogger(Logger):
    """Gunicorn's logger, less a line for each post of a table agent that was taken: 200
    tables post 400 times a second, which buried the pages and the failures in the access log
    (and cost a share of a worker's core). Refused posts
    are logged as before; so are the proxy's health checks, only when answered 503 (it
    probes every second)."""

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
    second (call before it serves)."""
    gunicorn.http.wsgi.Response = _QuietResponse
    if not isinstance(gunicorn.util.http_date, _DateOfTheSecond):
        gunicorn.util.http_date = _DateOfTheSecond(gunicorn.util.http_date)


OLDEST = 2
"""The collector's oldest generation: a pass of it is a full pass."""
FULL_EVERY = 1
"""The collector's third threshold: middle passes before a full one is due (Python's
default: 10; with 1 a full pass follows about every second middle one). A full pass walks
what survived since the last freeze and holds every post that arrives meanwhile: frequent
passes are short ones."""


def freeze_survivors() -> None:
    """Keep the collector's full passes short: what has survived one is frozen (left out of
    the next ones), from the app as built onwards, and they come often (``FULL_EVERY``), so
    that each walks only what survived since the one before.

    A full pass walks every tracked object, and a hall's live state only grows (each table's
    steps, tiles, streams), so unfrozen passes grow longer while they hold every request of
    the worker: they made most of the slowest posts. Frozen objects are still freed when no
    longer referenced; only cycles among them would stay, and few do (bench/NOTES.md)."""
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_EVERY)
    if _freeze_after_full_pass not in gc.callbacks:
        gc.callbacks.append(_freeze_after_full_pass)


def _freeze_after_full_pass(phase: str, info: dict) -> None:
    if phase == "stop" and info["generation"] == OLDEST:
        gc.freeze()


def worker_ready(worker) -> None:
    """Gunicorn's ``post_worker_init``: say when a worker has built the app and serves (an
    operator sees a restarted worker come back; the outage tests wait for it); from then on
    keep the collector's full passes short (``freeze_survivors``)."""
    freeze_survivors()
    worker.log.info("worker %s ready", worker.pid)


def run(bind: str, workers: int, connections: int, config: dict | None = None) -> None:
    """Serve on gunicorn; each worker builds the app with ``config`` over the environment's settings."""
    patch_responses()
    _Server({"bind": bind, "workers": workers, "worker_connections": connections, "worker_class": "gevent",
             "timeout": 60, "graceful_timeout": 5, "accesslog": "-", "logger_class": HallLogger,
             "forwarded_allow_ips": read("PROXY_IPS"),
             "control_socket_disable": True,  # else one socket in the user's home, shared by every server run
             "post_worker_init": worker_ready}, config or {}).run()
