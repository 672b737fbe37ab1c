"""Results (成绩) and standings (排名): deal by deal, the 28-point score, sign-off (S3).

Deal and session results come from the table's public state (the same door as every
public page); sign-off, disputes and the corrections audit from the store. Scorers
record a side's signature or dispute; a referee resolves a dispute. Score sheets and
standings download as PDF, CSV (with a BOM) or .xlsx through ``web.tournament.export``.
"""

from __future__ import annotations

import io
import os
import tempfile

from flask import Blueprint, Response, abort, flash, redirect, render_template, url_for
from flask_login import current_user
from flask_wtf import FlaskForm
from wtforms import SelectField, StringField
from wtforms.validators import DataRequired, Length

from web.tournament import board, export, service
from web.tournament import signoff as sign_off

from . import context
from .tablesview import table_ids
from .auth import requires
from .drawing import levels_chart
from .i18n import t
from .public import is_spectator, redact

bp = Blueprint("results", __name__)


class SignForm(FlaskForm):
    side = SelectField(choices=["NS", "EW"])
    by = StringField(validators=[DataRequired(), Length(max=80)])
    note = StringField(validators=[Length(max=500)])


class ResolveForm(FlaskForm):
    note = StringField(validators=[Length(max=500)])


def sessions_of(table: dict) -> list[dict]:
    """The table's sessions: the deals of each, its result (if ended) and chart."""
    out, deals = [], []
    for record in sorted(table["deals"] + table["sessions"], key=lambda r: r["at"]):
        if record["type"] == "deal_end":
            deals.append(record)
            continue
        out.append({"deals": deals, "result": record})
        deals = []
    if deals or (not out and table["state"].get("teams")):  # a round under way
        out.append({"deals": deals, "result": None})
    for number, session in enumerate(out, start=1):
        session["number"] = number
        session["chart"] = levels_chart(session["deals"], t("results.chart", table=table["table"], n=number))
    return out


def table_results(table_id: str) -> dict | None:
    table = context.public(table_id)
    if table is None:
        return None
    store = context.store()
    sessions = sessions_of(table)
    for session in sessions:
        session["signoff"] = (sign_off.status(store, table_id, session["number"]).as_dict()
                              if session["result"] else None)
        session["trail"] = sign_off.trail(store, table_id, session["number"]) if session["result"] else []
    audit = [{**a, "original": _original(a["original"] or {}),
              "replacement": None if a.get("replacement") is None else redact(a["replacement"])}
             if a["type"] == "correction" else a for a in store.audit(table_id)]
    return {"table": table_id, "teams": table["state"].get("teams"), "sessions": sessions, "audit": audit}


def _original(event: dict) -> dict:
    """A corrected event as the page may show it: a spectator sees whose action was corrected,
    not the cards a misread gave it, which were never in play (an official sees them)."""
    shown = redact(event)
    return {k: v for k, v in shown.items() if k != "cards"} if is_spectator() else shown


@bp.get("/results")
def results():
    found = [r for r in (table_results(tid) for tid in table_ids()) if r is not None]
    return render_template("results.html", tables=found, sign=SignForm(formdata=None),
                           resolve=ResolveForm(formdata=None))


@bp.get("/results/<table_id>.<fmt>")
def score_sheet(table_id: str, fmt: str):
    if fmt not in ("csv", "pdf") or table_results(table_id) is None:
        abort(404)
    sheet = export.score_sheet(context.store(), table_id)
    if fmt == "csv":
        out = io.StringIO()
        export.write_sheets_csv([sheet], out)
        return _download(out.getvalue().encode(export.CSV_ENCODING), "text/csv", f"{table_id}.csv")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sheet.pdf")
        export.write_sheets_pdf([sheet], path, title=t("results.sheet"))
        with open(path, "rb") as f:
            return _download(f.read(), "application/pdf", f"{table_id}.pdf")


def _download(data: bytes, mimetype: str, name: str) -> Response:
    response = Response(data, mimetype=mimetype)
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def _signoff(table_id: str, session: int, action: str) -> None:
    store = context.store()
    try:
        if action == "resolve":
            form = ResolveForm()
            if not form.validate_on_submit():
                abort(400)
            sign_off.resolve(store, table_id, current_user.name, form.note.data or "", session)
        else:
            form = SignForm()
            if not form.validate_on_submit() or (action == "dispute" and not (form.note.data or "").strip()):
                abort(400)
            desk = sign_off.Door(official=current_user.name)  # marked as the desk's, with the scorer
            if action == "sign":
                sign_off.sign(store, table_id, form.side.data, form.by.data.strip(), session, door=desk)
            else:
                sign_off.dispute(store, table_id, form.side.data, form.by.data.strip(), form.note.data.strip(),
                                 session, door=desk)
    except sign_off.SignOffError as exc:
        flash(t("action.refused", reason=str(exc)), "error")
        return
    flash(t("action.done", what=t(f"signoff.{action}")), "ok")
    context.broker().publish(table_id)


@bp.post("/results/<table_id>/<int:session>/<action>")
@requires("scorer")
def signoff(table_id: str, session: int, action: str):
    if action not in ("sign", "dispute", "resolve"):
        abort(404)
    if action == "resolve" and not current_user.can("referee"):
        abort(403)
    _signoff(table_id, session, action)
    return redirect(url_for("results.results") + f"#table-{table_id}")


@bp.get("/events")
def events():
    return render_template("events.html", events=service.events(context.store()))


@bp.get("/events/<event_id>")
def standings(event_id: str):
    try:
        page = board.standings_page(context.store(), event_id)
    except service.TournamentError:
        abort(404)
    return render_template("standings.html", **page)


EVENT_FILES = {"csv": "text/csv", "pdf": "application/pdf",
               "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}


@bp.get("/events/<event_id>/<what>.<fmt>")
def event_file(event_id: str, what: str, fmt: str):
    """The standings or every score sheet of the event, as PDF, CSV (with a BOM) or .xlsx."""
    if what not in ("standings", "sheets") or fmt not in EVENT_FILES:
        abort(404)
    store = context.store()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{what}.{fmt}")
        try:
            if what == "standings":
                export.save_standings(service.standings_of(store, event_id, require_all=False),
                                      service.pairs(store, event_id), service.event_info(store, event_id), path)
            else:
                sheets = export.tournament_sheets(store, event_id)
                if not sheets:
                    abort(404)  # nothing drawn yet, so no sheet
                export.save_sheets(sheets, path)
        except service.TournamentError:
            abort(404)
        with open(path, "rb") as f:
            response = Response(f.read(), mimetype=EVENT_FILES[fmt])
    response.headers.set("Content-Disposition", "attachment", filename=f"{event_id}-{what}.{fmt}")
    return response
