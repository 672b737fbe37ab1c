"""The server's table API as the agent uses it (``requests``): events, evidence, health.

Two kinds of failure, kept apart because the agent reacts to them differently:
:class:`ServerUnavailable` (no connection, a timeout, a 5xx or 503: keep the events and
try again later) and :class:`ServerRefused` (a bad token, an unknown table, a body the
server will never take: trying again cannot help, the operator must act).
"""

from __future__ import annotations

from typing import Any

import requests


class ServerUnavailable(Exception):
    """The server cannot be reached or cannot store now; ``retry_after`` in seconds if it said."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ServerRefused(ValueError):
    """The server refused the request for good (401, 403, 404, 400, 413)."""


class Poster:
    """Posts to ``<server>/api/tables/<table>/...`` with the table's bearer token."""

    def __init__(self, server: str, table: str, token: str, timeout: float = 5.0) -> None:
        self.base = f"{server.rstrip('/')}/api/tables/{table}"
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def events(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Post a batch; the server's per-event results, in the order sent."""
        body = self._post("/events", json=events).json()
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list) or len(results) != len(events):
            raise ServerUnavailable(f"the server answered {len(events)} events with {body!r}")
        return results

    def evidence(self, jpeg: bytes) -> str:
        """Upload one JPEG; the server's id for it (its sha256)."""
        return str(self._post("/evidence", data=jpeg, headers={"Content-Type": "image/jpeg"}).json()["id"])

    def health(self, status: dict[str, Any]) -> None:
        self._post("/health", json=status)

    def _post(self, path: str, **kwargs: Any) -> requests.Response:
        url = self.base + path
        try:
            response = self.session.post(url, timeout=self.timeout, **kwargs)
        except requests.RequestException as exc:
            raise ServerUnavailable(f"{url}: {type(exc).__name__}") from None
        if response.status_code == 503 or response.status_code >= 500:
            retry = response.headers.get("Retry-After", "")
            raise ServerUnavailable(
                f"{url}: HTTP {response.status_code}", float(retry) if retry.replace(".", "", 1).isdigit() else None
            )
        if response.status_code >= 400:
            raise ServerRefused(f"{url}: HTTP {response.status_code} {response.text.strip()[:200]}")
        return response
