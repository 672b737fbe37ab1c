"""Logins (Flask-Login), roles, and the login page (rate-limited with ``limits``).

Roles, most trusted first: ``chief`` (chief referee), ``referee``, ``scorer``,
``viewer``; anyone not logged in is a viewer. ``requires(role)`` guards a view: a
visitor below that role gets 403, whatever they send. Logins and password hashes are in
``web.app.accounts``.
"""

from __future__ import annotations

import logging
import math
import time
from functools import wraps
from urllib.parse import urlsplit

from flask import Blueprint, Flask, abort, current_app, flash, redirect, render_template, request, session, url_for
from flask.sessions import SecureCookieSessionInterface, SessionMixin
from flask_login import AnonymousUserMixin, LoginManager, UserMixin, current_user, login_user, logout_user
from itsdangerous import URLSafeTimedSerializer
from limits import parse
from limits.errors import StorageError
from limits.storage import MemoryStorage, RedisStorage
from limits.strategies import FixedWindowRateLimiter
from werkzeug.exceptions import TooManyRequests
from flask_wtf import FlaskForm
from wtforms import PasswordField, StringField
from wtforms.validators import DataRequired, Length

from web.store import get_store

from . import accounts
from .broker import REDIS_TIMEOUT_S
from .i18n import LANGUAGES, t

bp = Blueprint("auth", __name__)
log = logging.getLogger(__name__)


class Sessions(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions, the signer made once per key instead of on every
    request (making one encodes a test value to learn its kind, for each of hundreds of
    agent posts a second). A table agent's request (a bearer token under ``/api``, no
    session cookie) gets none: an agent never logs in, so opening and saving an empty
    session for each post is work for nothing. What each saves: bench/NOTES.md."""

    _made: tuple[tuple, URLSafeTimedSerializer | None] = ((), None)

    def open_session(self, app: Flask, request) -> SessionMixin | None:
        if request.path.startswith("/api/") and request.headers.get("Authorization", "")[:7].lower() == "bearer " \
                and ("Cookie" not in request.headers  # no parsing an absent header, post after post
                     or self.get_cookie_name(app) not in request.cookies):
            return None  # Flask's null session: read as empty, never saved
        return super().open_session(app, request)

    def get_signing_serializer(self, app: Flask) -> URLSafeTimedSerializer | None:
        keys = (app.secret_key, tuple(app.config.get("SECRET_KEY_FALLBACKS") or ()))
        if self._made[0] != keys:
            self._made = (keys, super().get_signing_serializer(app))
        return self._made[1]


login_manager = LoginManager()
LOGIN_LIMIT = "10 per minute"
RANK = {"viewer": 0, "scorer": 1, "referee": 2, "chief": 3}


class LoginLimit:
    """At most ``LOGIN_LIMIT`` login attempts per visitor address, in fixed windows
    (``limits``). Counted in the hall's Redis, so every worker and host shares the count;
    while Redis is unreachable, in the worker (each counts for itself) rather than refusing
    every login or letting every attempt through. Only the login form is limited: the
    Flask extension this replaces evaluated its (empty) limits on every request (an agent's
    post through the app, 3,000 timed with the store stubbed: 267 -> 209 us)."""

    def __init__(self, redis_url: str | None, namespace: str):
        self._limit = parse(LOGIN_LIMIT)
        self._local = FixedWindowRateLimiter(MemoryStorage())
        self._shared = None if not redis_url else FixedWindowRateLimiter(RedisStorage(
            redis_url, key_prefix=f"{namespace}:limits", wrap_exceptions=True,
            socket_connect_timeout=REDIS_TIMEOUT_S, socket_timeout=REDIS_TIMEOUT_S))

    def hit(self, visitor: str) -> int | None:
        """Count an attempt from ``visitor``: None while within the limit, else the
        seconds until the window that refused it ends."""
        if self._shared is not None:
            try:
                return self._hit(self._shared, visitor)
            except StorageError as exc:
                log.warning("login limit: Redis unreachable (%s); this worker counts alone", exc)
        return self._hit(self._local, visitor)

    def _hit(self, limiter: FixedWindowRateLimiter, visitor: str) -> int | None:
        if limiter.hit(self._limit, "login", visitor):
            return None
        reset = limiter.get_window_stats(self._limit, "login", visitor).reset_time
        return max(1, math.ceil(reset - time.time()))


SESSION_MAX_S = 12 * 3600
"""A login's session ends on the server after this long, whatever the cookie says (a
tournament day); a logout, a new password or role, or ``user disable`` ends it at once."""


class Login(UserMixin):
    """A logged-in official. The id kept in the signed cookie names the login's session
    generation and when it logged in, so that the server can end the session (``_load``)."""

    def __init__(self, name: str, role: str, epoch: int, since: int):
        self.name, self.role = name, role
        self.id = f"{epoch}.{since}.{name}"

    def can(self, role: str) -> bool:
        return RANK[self.role] >= RANK[role]


class Viewer(AnonymousUserMixin):
    name, role = None, "viewer"

    def can(self, role: str) -> bool:
        return role == "viewer"


login_manager.anonymous_user = Viewer


@login_manager.user_loader
def _load(session_id: str) -> Login | None:
    """The login a cookie's session names, if that session still stands: same generation
    (no logout, password, role change or disabling since), not older than ``SESSION_MAX_S``,
    and a login its seal vouches for."""
    epoch, _, rest = session_id.partition(".")
    since, _, name = rest.partition(".")
    if not (epoch.isascii() and epoch.isdigit() and since.isascii() and since.isdigit()):
        return None  # a cookie of before sessions were numbered
    if not 0 <= time.time() - int(since) <= SESSION_MAX_S:
        return None
    found = accounts.user(get_store(current_app), name)
    if found is None or found.disabled or found.session_epoch != int(epoch):
        return None
    return Login(found.name, found.role, found.session_epoch, int(since))


def requires(role: str):
    """Only visitors of ``role`` or above get through; everyone else gets 403."""

    def decorate(view):
        @wraps(view)
        def guarded(*args, **kwargs):
            if not current_user.can(role):
                abort(403)
            return view(*args, **kwargs)

        return guarded

    return decorate


class LoginForm(FlaskForm):
    name = StringField("name", validators=[DataRequired(), Length(max=80)])
    password = PasswordField("password", validators=[DataRequired(), Length(max=200)])


def safe_next(target: str | None) -> str:
    """Only a path on this site (never another host) after logging in."""
    if target and target.startswith("/") and not target.startswith("//") and not urlsplit(target).netloc:
        return target
    return url_for("floor.floor")


@bp.route("/login", methods=["GET", "POST"])
def login():
    if request.method == "POST":
        wait = current_app.extensions["guandan_login_limit"].hit(request.remote_addr or "")
        if wait is not None:
            raise TooManyRequests(t("login.too_many"), retry_after=wait)
    form = LoginForm()
    if not form.validate_on_submit():
        return render_template("login.html", form=form), 400 if request.method == "POST" else 200
    found = accounts.authenticate(get_store(current_app), form.name.data, form.password.data)
    if found is None:
        flash(t("login.failed"), "error")
        return render_template("login.html", form=form), 401
    lang = session.get("lang")
    session.clear()  # a fresh session at login (no fixation); the language stays
    if lang:
        session["lang"] = lang
    login_user(Login(found.name, found.role, found.session_epoch, int(time.time())))
    return redirect(safe_next(request.args.get("next")))


@bp.route("/logout", methods=["POST"])
def logout():
    if current_user.is_authenticated:  # every session of this login ends, not only this cookie
        accounts.end_sessions(get_store(current_app), current_user.name)
    logout_user()
    return redirect(url_for("floor.floor"))


@bp.route("/language/<lang>", methods=["POST"])
def language(lang: str):
    if lang not in LANGUAGES:
        abort(404)
    session["lang"] = lang
    return redirect(safe_next(request.form.get("next")))
