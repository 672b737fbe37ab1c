"""Configuration from the environment (``GUANDAN_*``): nothing secret lives in the repo.

| variable | meaning | default |
|---|---|---|
| ``GUANDAN_DATA_DIR`` | data directory (SQLite store) | ``./guandan-data`` |
| ``GUANDAN_DB_URL`` | database URL instead (PostgreSQL) | |
| ``GUANDAN_SECRET_KEY`` | the store's key (login cookies use a key made from it) | ``GUANDAN_KEY_FILE`` |
| ``GUANDAN_KEY_FILE`` | a file holding that key (never in the data directory) | ``~/.config/guandan-referee/secret.key`` |
| ``GUANDAN_REDIS_URL`` | Redis for live updates across workers | in-process broker |
| ``GUANDAN_REDIS_NAMESPACE`` | prefix of the Redis channel and keys (halls sharing a Redis) | ``guandan`` |
| ``GUANDAN_BROADCAST_DELAY`` | seconds of table time public views lag behind | ``0`` |
| ``GUANDAN_MAX_BODY`` | largest request body in bytes | ``1048576`` |
| ``GUANDAN_ADMIN_PASSWORD`` | the chief referee's first password (``serve``) | random, printed once |
| ``GUANDAN_PROXIES`` | reverse proxies in front whose ``X-Forwarded-For``/``-Proto`` are trusted | ``0`` |
| ``GUANDAN_PROXY_IPS`` | their addresses, comma-separated (gunicorn trusts their ``X-Forwarded-Proto``; ``serve`` and ``deploy/gunicorn.conf.py``, ``web.app.wsgi.proxy_ips``) | ``127.0.0.1`` |
| ``GUANDAN_SECURE_COOKIES`` | ``1``: login cookies only over HTTPS (``serve --secure-cookies``) | off |
| ``GUANDAN_SIGN_LINK_MINUTES`` | how long a side's sign-off link opens (at most X7's 30 min after the round) | ``30`` |
| ``GUANDAN_TIMEZONE`` | the zone every printed time is in (``web/tournament/clock.py``; checked by ``serve``) | ``Asia/Shanghai`` |
"""

from __future__ import annotations

import os

from web.store import DEFAULT_DATA_DIR

PREFIX = "GUANDAN_"
DEFAULT_MAX_BODY = 1 << 20


def from_env(environ: dict[str, str] | None = None) -> dict:
    """The app configuration the environment names (keys without the prefix)."""
    env = os.environ if environ is None else environ

    def get(name: str, default=None):
        return env.get(PREFIX + name) or default

    try:
        delay = float(get("BROADCAST_DELAY", 0))
        max_body = int(get("MAX_BODY", DEFAULT_MAX_BODY))
        proxies = int(get("PROXIES", 0))
    except ValueError as exc:
        raise ValueError(f"{PREFIX}BROADCAST_DELAY / {PREFIX}MAX_BODY / {PREFIX}PROXIES: not a number ({exc})") from None
    try:
        sign_minutes = float(get("SIGN_LINK_MINUTES", 30))
    except ValueError:
        raise ValueError(f"{PREFIX}SIGN_LINK_MINUTES: a number of minutes, not {get('SIGN_LINK_MINUTES')!r}") from None
    if not 0 < sign_minutes <= 30:
        raise ValueError(f"{PREFIX}SIGN_LINK_MINUTES: between 0 and 30 (X7: a side's window after the round), "
                         f"not {sign_minutes:g}")
    if proxies < 0:
        raise ValueError(f"{PREFIX}PROXIES: the number of proxies in front, not {proxies}")
    return {
        "DATA_DIR": get("DATA_DIR", DEFAULT_DATA_DIR),
        "STORE_URL": get("DB_URL"),
        "GUANDAN_SECRET_KEY": get("SECRET_KEY"),
        "GUANDAN_KEY_FILE": get("KEY_FILE"),
        "REDIS_URL": get("REDIS_URL"),
        "REDIS_NAMESPACE": get("REDIS_NAMESPACE", "guandan"),
        "BROADCAST_DELAY": delay,
        "MAX_CONTENT_LENGTH": max_body,
        "PROXIES": proxies,
        "SECURE_COOKIES": get("SECURE_COOKIES") == "1",
        "SIGN_LINK_MINUTES": sign_minutes,
    }

