"""The application layer: the one place that names every package.

The command line (:mod:`web.app.cli`) and the web dashboard live here; nothing below this
layer imports it. ``create_app(config)`` builds the Flask app: the store from
``web.store.init_app``, a broker for live updates, logins, CSRF on every form, security
headers, and one blueprint per area (floor, tables, flags, results, api, auth).
"""

from __future__ import annotations

CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


def create_app(config: dict | None = None):
    """The dashboard (a ``Flask`` app), configured from ``GUANDAN_*`` variables updated with
    ``config``. Flask and the store are imported here, not with the package, so that the
    command line (``web.app.cli``) starts without them."""
    from flask import Flask, jsonify, render_template, request
    from flask_login import current_user
    from flask_wtf.csrf import CSRFProtect, generate_csrf
    from werkzeug.exceptions import HTTPException
    from werkzeug.middleware.proxy_fix import ProxyFix

    from web.store import init_app
    from web.store.signing import COOKIES
    from web.tournament.tables import TournamentTables

    from . import api, auth, floor, flags, results, signlinks, tables
    from .broker import make_broker
    from .config import from_env
    from .drawing import card_svg, cards_svg
    from .i18n import language, t
    from .timeline import Timelines

    app = Flask(__name__)
    app.config.update(from_env())
    app.config.update(config or {})
    store = init_app(app, table_rules=TournamentTables())
    store.check_writable()  # a store signed with another key: one line, and no server on it
    if not app.config.get("SECRET_KEY"):  # cookies: a key of their own, made from the store's
        app.config["SECRET_KEY"] = store.derived_key(COOKIES)
    app.config.update(
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        REMEMBER_COOKIE_HTTPONLY=True,
        REMEMBER_COOKIE_SAMESITE="Lax",
        WTF_CSRF_TIME_LIMIT=None,  # a referee's console stays open all day
    )
    if app.config.get("SECURE_COOKIES"):  # behind TLS: a cookie never travels in clear
        app.config.update(SESSION_COOKIE_SECURE=True, REMEMBER_COOKIE_SECURE=True)
    if app.config.get("PROXIES"):  # behind a proxy: the client's own address (the login limit
        # counts per address) and scheme are what the proxy forwards; never trusted without one
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=app.config["PROXIES"], x_proto=app.config["PROXIES"])
    app.extensions["guandan_broker"] = app.config.get("BROKER") or make_broker(
        app.config.get("REDIS_URL"), app.config.get("REDIS_NAMESPACE") or "guandan")
    app.extensions["guandan_timelines"] = Timelines(store)
    _live(app)
    csrf = CSRFProtect(app)
    app.session_interface = auth.Sessions()
    auth.login_manager.init_app(app)
    auth.login_manager.login_view = "auth.login"
    app.extensions["guandan_login_limit"] = auth.LoginLimit(app.config.get("REDIS_URL"),
                                                            app.config.get("REDIS_NAMESPACE") or "guandan")
    for module in (auth, floor, tables, flags, results, signlinks, api):
        app.register_blueprint(module.bp)
    csrf.exempt(api.bp)  # agents authenticate with bearer tokens, not cookies

    @app.context_processor
    def _template_globals() -> dict:
        return {"t": t, "lang": language(), "user": current_user, "csrf_token": generate_csrf,
                "card_svg": card_svg, "cards_svg": cards_svg}

    @app.after_request
    def _headers(response):
        response.headers.update(SECURITY_HEADERS)
        response.headers.pop("Server", None)
        if request.path.startswith("/api/") and "Cache-Control" not in response.headers:
            response.headers["Cache-Control"] = "no-store"
        return response

    @app.errorhandler(HTTPException)
    def _error(exc: HTTPException):
        """JSON under ``/api``, a page in the visitor's language elsewhere; the error's own
        headers kept (``Retry-After`` of a refused login, ``Allow`` of a wrong method)."""
        status = exc.code or 500
        message = {403: t("error.forbidden"), 404: t("error.missing")}.get(status, exc.description)
        headers = [(k, v) for k, v in exc.get_headers() if k.lower() != "content-type"]
        if request.path.startswith("/api/"):
            return jsonify(error=exc.description if status not in (403, 404) else message), status, headers
        return render_template("error.html", status=status, message=message), status, headers

    return app


def _live(app) -> None:
    """The worker's floor tiles and live feed, built with the app so that nothing below the
    pages needs to know where a tile comes from (``tablesview``). The feed's thread starts
    with the first open stream and runs inside the app's context."""
    from .feed import Feed
    from .tablesview import lagging, tile
    from .tiles import Tiles

    broker = app.extensions["guandan_broker"]
    tiles = app.extensions["guandan_tiles"] = Tiles(tile)
    delayed = float(app.config.get("BROADCAST_DELAY") or 0) > 0

    def run(loop) -> None:
        with app.app_context():
            loop()

    app.extensions["guandan_feed"] = Feed(broker, tiles, broker.health, lagging if delayed else None, run,
                                          reading=app.extensions["guandan_timelines"].reading)
