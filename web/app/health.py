"""``GET /healthz``: whether this worker can serve the hall, for the proxy in front.

A proxy that probes a page touching neither the database nor Redis keeps a host whose
database is gone "up", and sends it half the hall's posts and pages. This answers 200
only when the worker reaches its database (one ``SELECT 1`` on the store's pool) and, when
Redis is configured, Redis (one ``PING``); else 503 naming what is unreachable. A proxy
probes it every second on every host, so it is answered in front of the Flask app (no
session, login or page machinery: two round trips), and a 200 is not logged
(``gunicorn_server.HallLogger``).

The reason given names the service, not the driver's message (which can carry a host's
address to any visitor); the worker logs the message once each time the answer changes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable

from sqlalchemy.exc import SQLAlchemyError

from web.store import get_store

from .broker import _client

log = logging.getLogger(__name__)

PATH = "/healthz"
RETRY_AFTER_S = "2"


class HealthCheck:
    """The WSGI app ``flask_app`` with ``GET``/``HEAD`` of ``PATH`` answered before it."""

    def __init__(self, flask_app):
        self.app = flask_app
        self._redis_url = flask_app.config.get("REDIS_URL")
        self._redis = None
        """The probe's Redis client, made on first use (in the worker, after gunicorn forked)."""
        self._last: dict[str, str] | None = None

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != PATH:
            return self.app(environ, start_response)
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD"), ("Content-Length", "0")])
            return [b""]
        status = self.check()
        ok = "unreachable" not in status.values()
        body = json.dumps({"status": "ok" if ok else "unavailable", **status}).encode()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                   ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")]
        start_response("200 OK" if ok else "503 Service Unavailable",
                       headers if ok else [*headers, ("Retry-After", RETRY_AFTER_S)])
        return [b"" if environ["REQUEST_METHOD"] == "HEAD" else body]

    def check(self) -> dict[str, str]:
        """``{"database": ..., "redis": ...}``, each ``ok``, ``unreachable`` or (Redis) ``not configured``."""
        problems = {"database": self._database(), "redis": self._ping() if self._redis_url else None}
        status = {name: "unreachable" if problem else "ok" for name, problem in problems.items()}
        if not self._redis_url:
            status["redis"] = "not configured"
        if status != self._last:
            failing = {name: problem for name, problem in problems.items() if problem}
            (log.warning if failing else log.info)("health: %s", failing or "everything reachable")
            self._last = status
        return status

    def _database(self) -> str | None:
        """Why the store's database cannot be reached, or None."""
        try:
            with get_store(self.app).engine.connect() as conn:
                conn.exec_driver_sql("SELECT 1")
        except SQLAlchemyError as exc:
            return str(getattr(exc, "orig", None) or exc).strip().split("\n")[0] or type(exc).__name__
        return None

    def _ping(self) -> str | None:
        """Why Redis cannot be reached, or None."""
        import redis

        if self._redis is None:
            self._redis = _client(self._redis_url, retries=0)
        try:
            self._redis.ping()
        except redis.RedisError as exc:
            return str(exc) or type(exc).__name__
        return None
