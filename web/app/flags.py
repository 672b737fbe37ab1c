"""The referee console (疑似违规): flags and reads to check, and the referee's three answers.

Each flag shows its rule with the rule's text, the seat, the message, the evidence the
agent sent with the event (frames, RFID reads), and its claim window (X5). A referee
confirms it (a ``penalty`` event whose ``evidence`` names the flag), dismisses it with a reason (a
``dismiss`` event), or corrects a misread play (a ``correction`` event). All three are
appended through the store like any other event: the table re-derives, and every open
page hears of it.
"""

from __future__ import annotations

import uuid

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from flask_wtf import FlaskForm
from wtforms import SelectField, StringField
from wtforms.validators import DataRequired, Length

from referee.events import PENALTY_LEVELS
from web.store import Appended

from . import context
from .api import table_ids
from .auth import safe_next, requires
from .i18n import t
from .public import flag_status, redact, review_status
from .rulebook import rule_text
from .tables import evidence_of
from .timeline import Timeline, flag_key

bp = Blueprint("flags", __name__, url_prefix="/flags")

SEVERITY_ORDER = {"loss": 0, "foul": 1, "violation": 2, "warning": 3}


class FlagForm(FlaskForm):
    rule = StringField(validators=[DataRequired(), Length(max=8)])
    seat = StringField(validators=[Length(max=1)])
    at = StringField(validators=[DataRequired(), Length(max=32)])


class ConfirmForm(FlagForm):
    level = SelectField(choices=list(PENALTY_LEVELS))


class DismissForm(FlagForm):
    reason = StringField(validators=[DataRequired(), Length(max=500)])


class CorrectForm(FlaskForm):
    of = StringField(validators=[DataRequired(), Length(max=120)])
    seat = SelectField(choices=list("NESW"))
    kind = SelectField(choices=["play", "pass"])
    cards = StringField(validators=[Length(max=200)])


def items(table_id: str, timeline: Timeline) -> list[dict]:
    """Every flag and read-review of a table, with its status, rule text and evidence."""
    state = timeline.steps[-1].state_view if timeline.steps else {}
    found = []
    for step in timeline.steps:
        for record in step.records:
            kind = record.get("type")
            if kind == "flag":
                status = flag_status(record, timeline.closed, state)
            elif kind == "review":  # something the referee engine will not guess: for a human
                status = review_status(record, step, state)
            else:
                continue
            event = step.event
            found.append({
                "table": table_id, "kind": kind, "record": record, "status": status,
                "closed": timeline.closed.get(flag_key(record)) if kind == "flag" else None,
                "rule_text": rule_text(record["rule"]) if kind == "flag" else "",
                "evidence": evidence_of(event), "event": redact(event), "seq": step.seq,
                "correctable": event.get("id") is not None and event["type"] in ("play", "pass", "conflict"),
            })
    return found


def _all_items() -> list[dict]:
    found = []
    for table_id in table_ids():
        timeline = context.timelines().get(table_id)
        if timeline is not None:
            found += items(table_id, timeline)
    found.sort(key=lambda i: (i["status"] != "open", SEVERITY_ORDER.get(i["record"].get("severity"), 4),
                              -float(i["record"].get("at") or 0)))
    return found


def _forms() -> dict:
    return {"confirm": ConfirmForm(formdata=None), "dismiss": DismissForm(formdata=None),
            "correct": CorrectForm(formdata=None)}


@bp.get("/")
@requires("referee")
def console():
    return render_template("flags.html", items=_all_items(), forms=_forms())


@bp.get("/live")
@requires("referee")
def console_live():
    return render_template("_flags_live.html", items=_all_items(), forms=_forms())


def _flag(table_id: str, form: FlagForm) -> tuple[Timeline, dict]:
    """The flag the form names (404 if the table has none such)."""
    timeline = context.timelines().get(table_id)
    if timeline is None:
        abort(404)
    try:
        key = (form.rule.data, form.seat.data or None, float(form.at.data))
    except ValueError:
        abort(400)
    for record in timeline.records():
        if record.get("type") == "flag" and flag_key(record) == key:
            return timeline, record
    abort(404)


def _stamp(timeline: Timeline) -> float:
    """A console action happens now in table time: at the table's latest event."""
    return max((e["t"] for e in timeline.raw), default=0.0)


def _submit(table_id: str, event: dict) -> None:
    event.update(table=table_id, id=f"console-{uuid.uuid4().hex}", by=current_user.name, source="manual")
    (outcome,) = context.append([event])
    if isinstance(outcome, Appended):
        flash(t("action.done", what=t(f"action.{event['type']}")), "ok")
    else:
        flash(t("action.refused", reason=getattr(outcome, "reason", str(outcome))), "error")


def _back():
    return redirect(safe_next(request.form.get("next") or url_for("flags.console")))


@bp.post("/<table_id>/confirm")
@requires("referee")
def confirm(table_id: str):
    form = ConfirmForm()
    if not form.validate_on_submit():
        abort(400)
    timeline, flag = _flag(table_id, form)
    _submit(table_id, {"type": "penalty", "t": _stamp(timeline), "side": flag["side"], "seat": flag["seat"],
                       "level": form.level.data, "rule": flag["rule"],
                       "evidence": {"flag": {"rule": flag["rule"], "seat": flag["seat"], "at": flag["at"]}}})
    return _back()


@bp.post("/<table_id>/dismiss")
@requires("referee")
def dismiss(table_id: str):
    form = DismissForm()
    if not form.validate_on_submit():
        abort(400)
    timeline, flag = _flag(table_id, form)
    _submit(table_id, {"type": "dismiss", "t": _stamp(timeline), "rule": flag["rule"], "seat": flag["seat"],
                       "at": flag["at"], "reason": form.reason.data.strip()})
    return _back()


@bp.post("/<table_id>/correct")
@requires("referee")
def correct(table_id: str):
    form = CorrectForm()
    if not form.validate_on_submit():
        abort(400)
    timeline = context.timelines().get(table_id)
    if timeline is None:
        abort(404)
    replacement = {"type": form.kind.data, "seat": form.seat.data, "source": "manual"}
    if form.kind.data == "play":
        replacement["cards"] = form.cards.data.upper().replace(",", " ").split()
    _submit(table_id, {"type": "correction", "t": _stamp(timeline), "of": form.of.data, "event": replacement})
    return _back()
