"""Every ``GUANDAN_*`` setting in one table (``SETTINGS``): its name, default and meaning, and
which module reads it. Nothing secret lives in the repo; a site sets these in the environment.

Every reader goes through ``read(name)``, when it needs the value (never at import time), so
that a bad value is refused in one wording, naming the variable. This module sits below the
store, the tournament and the app (standard library only: ARCHITECTURE.md), so that each of
them reads its own settings here; the app's ``app.config`` keys are filled by
``web.app.config.from_env``, and ``python -m web.app.config`` prints the table. The
recognizer never imports ``web``: it reads its one setting (``GUANDAN_DATA``) itself, in
``recognizer/decks.py``, and is listed here with it. ``tests/app/test_config.py`` checks the
table against every ``GUANDAN_`` name in the tree and against where each is read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

PREFIX = "GUANDAN_"
APP = "web/app/config.py"
"""The reader of the app's own settings (``from_env``, once per ``create_app``)."""


def _number(what: str, kind: type = float, low: float | None = None, high: float | None = None) -> Callable[[str], Any]:
    """A parser of ``kind`` within ``[low, high]`` (``low`` excluded when ``high`` is given:
    a window of 0 minutes is no window), whose error says what was expected."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise ValueError(f"{what}, not {text!r}") from None
        if low is not None and (value < low if high is None else not low < value <= high):
            bound = f"at least {low:g}" if high is None else f"between {low:g} and {high:g}"
            raise ValueError(f"{bound} ({what}), not {value:g}")
        return value
    return parse


@dataclass(frozen=True)
class Setting:
    name: str
    """Without the ``GUANDAN_`` prefix."""
    default: str | None
    """As the environment would give it; None: unset (the reader decides, ``shown`` says how)."""
    meaning: str
    read_by: str
    """The file that reads it."""
    key: str | None = None
    """The ``app.config`` key ``from_env`` fills, for the app's own settings."""
    parse: Callable[[str], Any] = str
    shown: str = ""
    """The default as the table prints it, where ``default`` alone does not say it."""

    @property
    def variable(self) -> str:
        return PREFIX + self.name


SETTINGS: tuple[Setting, ...] = (
    Setting("DATA_DIR", None, "data directory (SQLite store)", APP, "DATA_DIR", shown="./guandan-data"),
    Setting("DB_URL", None, "database URL instead (PostgreSQL)", APP, "STORE_URL"),
    Setting("SECRET_KEY", None, "the store's key (login cookies use a key made from it)", APP,
            "GUANDAN_SECRET_KEY", shown="GUANDAN_KEY_FILE"),
    Setting("KEY_FILE", None, "a file holding that key (never in the data directory); the command line's "
            "store commands read both in web/store/signing.py", APP, "GUANDAN_KEY_FILE",
            shown="~/.config/guandan-referee/secret.key"),
    Setting("REDIS_URL", None, "Redis for live updates across workers", APP, "REDIS_URL",
            shown="in-process broker"),
    Setting("REDIS_NAMESPACE", "guandan", "prefix of the Redis channel and keys (halls sharing a Redis)", APP,
            "REDIS_NAMESPACE"),
    Setting("BROADCAST_DELAY", "0", "seconds of table time public views lag behind", APP, "BROADCAST_DELAY",
            _number("a number of seconds")),
    Setting("MAX_BODY", str(1 << 20), "largest request body in bytes", APP, "MAX_CONTENT_LENGTH",
            _number("a whole number of bytes", int)),
    Setting("PROXIES", "0", "reverse proxies in front whose X-Forwarded-For/-Proto are trusted", APP, "PROXIES",
            _number("the number of proxies in front", int, low=0)),
    Setting("SECURE_COOKIES", "0", "1: login cookies only over HTTPS (serve --secure-cookies)", APP,
            "SECURE_COOKIES", lambda text: text == "1", shown="off"),
    Setting("SIGN_LINK_MINUTES", "30", "how long a side's sign-off link opens (at most X7's 30 min after the "
            "round)", APP, "SIGN_LINK_MINUTES",
            _number("a number of minutes", low=0, high=30)),
    Setting("ADMIN_PASSWORD", None, "the chief referee's first password (serve)", "web/app/serve_cli.py",
            shown="random, printed once"),
    Setting("PROXY_IPS", "127.0.0.1", "the proxies' addresses, comma-separated, whose X-Forwarded-* gunicorn "
            "trusts (serve and deploy/gunicorn.conf.py)", "web/app/gunicorn_server.py"),
    Setting("BIND", "127.0.0.1:5000", "address a host of a hall listens on", "deploy/gunicorn.conf.py"),
    Setting("WORKERS", "2", "worker processes of a host of a hall", "deploy/gunicorn.conf.py",
            parse=_number("a number of workers", int, 1)),
    Setting("CONNECTIONS", "1000", "most open connections per worker of a host of a hall", "deploy/gunicorn.conf.py",
            parse=_number("a number of connections", int, 1)),
    Setting("TIMEZONE", "Asia/Shanghai", "the zone every printed time is in (checked by serve)",
            "web/tournament/clock.py", parse=str.strip),
    Setting("CJK_FONT", None, "the font file embedded in printed sheets", "web/tournament/fonts.py",
            shown="the first installed candidate"),
    Setting("DATA", None, "the recognizer's data folder (enrolled decks, training sets)", "recognizer/decks.py",
            shown="~/.cache/guandan-referee"),
    Setting("HALL_BIND", None, "the hall's address at the proxy", "deploy/haproxy.cfg", shown="required"),
    Setting("HOST_A", None, "the first host of a hall behind the proxy", "deploy/haproxy.cfg", shown="required"),
    Setting("HOST_B", None, "the second host of a hall behind the proxy", "deploy/haproxy.cfg", shown="required"),
)
BY_NAME = {s.name: s for s in SETTINGS}


def read(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """The setting ``name`` (without the prefix) from ``environ`` (default ``os.environ``),
    parsed; its default when unset, empty or blank. A bad value raises ``ValueError`` naming
    the variable, what it should be and what it was."""
    setting = BY_NAME[name]
    text = (os.environ if environ is None else environ).get(setting.variable)
    if not (text and text.strip()):
        text = setting.default
    if text is None:
        return None
    try:
        return setting.parse(text)
    except ValueError as exc:
        raise ValueError(f"{setting.variable}: {exc}") from None


def table() -> str:
    """``SETTINGS`` as a Markdown table (for the README and ``deploy/README.md``)."""
    rows = [f"| `{s.variable}` | {s.meaning} | {s.shown or s.default or ''} | `{s.read_by}` |" for s in SETTINGS]
    return "\n".join(["| variable | meaning | default | read by |", "|---|---|---|---|", *rows])
