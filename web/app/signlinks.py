"""Sign-off at the table (S3): a side's captain signs or disputes on a phone.

A scorer issues the links of a finished drawn table from its page (``web.tournament.
signlinks``): one per side, shown as QR codes on the table page and on a printable slip,
each with a 6-digit code. The link's page needs no login: it shows the table's result
(deal by deal, levels, the 28-point score, rulings) in the reader's language and lets a
captain sign as one of the pair's registered players, or dispute with a reason.

The tokens exist only in the issuing scorer's session (the store keeps their digests),
so the codes on the table page and slip are the scorer's to show, for as long as the
links open. Typed codes are limited per visitor address like login attempts.
"""

from __future__ import annotations

import segno
from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, session, url_for
from flask_login import current_user
from markupsafe import Markup
from werkzeug.exceptions import TooManyRequests

from web.tournament import signlinks
from web.tournament.clock import clock_time
from web.tournament.signlinks import LinkRefused
from web.tournament.signoff import SignOffError

from . import context
from .auth import LoginLimit, requires
from .i18n import LANGUAGES, t
from .results import table_results

bp = Blueprint("signlinks", __name__)
ISSUED = "sign_links"
"""The session key under which a scorer's issued links (token, code) wait to be shown."""
CODE_LIMIT = "guandan_sign_code_limit"


@bp.record_once
def _limit(state) -> None:
    app = state.app
    app.extensions[CODE_LIMIT] = LoginLimit(app.config.get("REDIS_URL"),
                                            f"{app.config.get('REDIS_NAMESPACE') or 'guandan'}:sign-codes")


@bp.before_app_request
def _reader_language() -> None:
    """A phone opening a link has chosen no language here yet: its browser's is taken."""
    if request.blueprint == bp.name and "lang" not in session:
        session["lang"] = request.accept_languages.best_match(LANGUAGES) or LANGUAGES[0]


@bp.post("/tables/<table_id>/sign-links")
@requires("scorer")
def issue(table_id: str):
    store = context.store()
    try:
        issued = signlinks.issue(store, table_id, current_user.name, current_app.config["SIGN_LINK_MINUTES"] * 60)
    except SignOffError as exc:
        flash(t("action.refused", reason=str(exc)), "error")
        return redirect(url_for("tables.table", table_id=table_id))
    kept = {tid: links for tid, links in session.get(ISSUED, {}).items()
            if tid != table_id and any(link["expires_at"] > store.clock() for link in links)}
    kept[table_id] = [{"side": i.side, "token": i.token, "code": i.code, "expires_at": i.expires_at} for i in issued]
    session[ISSUED] = kept
    return redirect(url_for("signlinks.slip", table_id=table_id))


def panel(table_id: str) -> dict | None:
    """What a scorer sees of a table's links on its page: whether links can be issued, the
    links' states, and the QR codes of the links this scorer issued that still open."""
    if not current_user.can("scorer"):
        return None
    store = context.store()
    if signlinks.players(store, table_id) is None:
        return None
    return {"links": signlinks.links(store, table_id), "open": open_links(table_id)}


def open_links(table_id: str) -> list[dict]:
    """The links this scorer issued for the table that still open, each with its QR code."""
    store = context.store()
    out = []
    for link in session.get(ISSUED, {}).get(table_id, []):
        try:
            signlinks.by_token(store, table_id, link["side"], link["token"])
        except LinkRefused:
            continue
        url = url_for("signlinks.page", table_id=table_id, side=link["side"], token=link["token"], _external=True)
        out.append({**link, "url": url, "qr": qr_svg(url), "until": clock_time(link["expires_at"])})
    return out


def qr_svg(url: str) -> Markup:
    """The link as an inline SVG QR code (no image request, so the page's CSP holds)."""
    return Markup(segno.make(url, error="m").svg_inline(scale=1, border=2, svgclass="qr", omitsize=True))


@bp.get("/tables/<table_id>/sign-slip")
@requires("scorer")
def slip(table_id: str):
    if signlinks.players(context.store(), table_id) is None:
        abort(404)
    return render_template("signslip.html", table_id=table_id, links=open_links(table_id),
                           players=signlinks.players(context.store(), table_id))


@bp.route("/sign/<table_id>/<side>/<token>", methods=["GET", "POST"])
def page(table_id: str, side: str, token: str):
    """A side's link: the result, and the sign and dispute forms (no login)."""
    try:
        link = signlinks.by_token(context.store(), table_id, side, token)
    except LinkRefused as exc:
        return _refused(exc)
    return _act(link, url_for("signlinks.page", table_id=table_id, side=side, token=token), {})


@bp.route("/sign", methods=["GET", "POST"])
def code():
    """The typed door: the table and the 6-digit code open the same page as the link."""
    if request.method == "GET":
        return render_template("sign.html", mode="code")
    table_id, typed = (request.form.get("table") or "").strip(), request.form.get("code") or ""
    wait = current_app.extensions[CODE_LIMIT].hit(request.remote_addr or "")  # every typed code counts
    if wait is not None:
        raise TooManyRequests(t("login.too_many"), retry_after=wait)
    try:
        link = signlinks.by_code(context.store(), table_id, typed)
    except LinkRefused as exc:
        return render_template("sign.html", mode="code", refused=_reason(exc), table=table_id), 403
    return _act(link, url_for("signlinks.code"), {"table": table_id, "code": typed.strip()})


def _act(link, action_url: str, hidden: dict):
    """The link's page; on a POST with an action, that action through the link first."""
    store = context.store()
    if request.method == "POST" and "action" in request.form:
        action, by = request.form.get("action", ""), request.form.get("by", "")
        try:
            status = signlinks.redeem(store, link, action, by, request.form.get("note", ""))
        except SignOffError as exc:  # the link's own refusals, and the sign-off's (signed at the desk meanwhile)
            flash(_reason(exc), "error")
        else:
            context.broker().publish(link.table_id)
            return render_template("sign.html", mode="done", link=link, action=action, by=by,
                                   status=status.as_dict(), result=_session(link))
    return render_template("sign.html", mode="sign", link=link, result=_session(link), action_url=action_url,
                           hidden=hidden, until=clock_time(link.expires_at))


def _session(link) -> dict | None:
    """The linked session of the table as the results page has it (deals, result, audit)."""
    found = table_results(link.table_id)
    if found is None:
        return None
    session_ = next((s for s in found["sessions"] if s["number"] == link.session), None)
    return {"teams": found["teams"], "session": session_, "audit": found["audit"]}


def _reason(exc: SignOffError) -> str:
    """A refusal in the reader's language, the store's words after it (times, names)."""
    kind = exc.kind if isinstance(exc, LinkRefused) else "state"
    return f"{t('sign.refused.' + kind, default=t('sign.refused.other'))} ({exc})"


def _refused(exc: LinkRefused):
    return render_template("sign.html", mode="refused", refused=_reason(exc)), 403


def side_players(table_id: str) -> dict[str, tuple[str, str]] | None:
    """Each side's registered players at a drawn table (the desk signs only as one of them)."""
    found = signlinks.players(context.store(), table_id)
    return None if found is None else {side: (p.player1, p.player2) for side, p in found.items()}


@bp.app_context_processor
def _globals() -> dict:
    return {"sign_panel": panel, "side_players": side_players}
