"""The referee console (疑似违规): flags and reads to check, and the referee's answers.

Each flag shows its rule with the rule's text, the seat, the message, the evidence the
agent sent with the event (frames, RFID reads), and its claim window (X5) counted down in
the table's own terms (the passes that can still end the trick). A referee confirms it (a
``penalty`` event whose ``evidence`` names the flag), dismisses it with a reason (a
``dismiss`` event), or corrects a misread play or any event's table time (a
``correction`` event: a tick or a read stamped far ahead would otherwise hold the table's
later events back; the appeal review offers the same for any step). A read in doubt
(``DOUBT_REVIEWS``) is answered "read is right" (a ``confirm_read`` event, one click, or
one per open read of a table at once) or corrected; it never lapses, so it is pinned
above the flags until answered. All of them are appended through the store like any
other event: the table re-derives, and every open page hears of it.

The page lists what needs an answer soonest first: reads in doubt (by table), then flags
by how near their claim window's end is, then the rest; a flag that may only follow from
an earlier open item of its deal (a knock-on) is listed under that item.
"""

from __future__ import annotations

import math
import re
import uuid
from collections import Counter
from datetime import datetime

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from flask_wtf import FlaskForm
from wtforms import SelectField, StringField
from wtforms.validators import DataRequired, Length

from sqlalchemy import select
from referee.cards import CardError, card_name, parse_cards
from referee.events import PENALTY_LEVELS
from referee.verdicts import FlagKey
from web.store import Appended
from web.store.models import TableEvent, TableHead
from web.tournament.clock import zone

from . import context, messages
from .tablesview import table_ids
from .auth import safe_next, requires
from .i18n import t
from .public import DOUBT_REVIEWS, flag_status, redact, review_status
from .rulebook import rule_text
from .tables import evidence_of, step_evidence
from .timeline import Step, Timeline

bp = Blueprint("flags", __name__, url_prefix="/flags")


@bp.app_context_processor
def _words() -> dict:
    """The engine's facts in the reader's words, for every page (``web.app.messages``)."""
    return {"record_message": messages.record_message, "seat_word": messages.seat_word,
            "side_word": messages.side_word, "seats_word": messages.seats_word, "card_word": messages.card_word,
            "combo_word": messages.combo_word, "table_word": messages.table_word,
            "level_word": messages.level_word, "settled_word": messages.settled_word}

SEVERITY_ORDER = {"loss": 0, "foul": 1, "violation": 2, "warning": 3}
KINDS = ("doubt", "flag", "other")
"""What the console can be filtered to: reads in doubt, rule flags, other reviews."""
CAUSE_RULES = frozenset({"P4", "P5"})
"""Flags on a play whose cards may have gone back: the table as judged after it may differ
from the table as it stands."""
KNOCK_ON_RULES = frozenset({"P1", "P4", "P5", "K3", "R1"})
"""Flags judged against the turn, the table's combination or a seat's count: after an open
read in doubt (or a ``CAUSE_RULES`` flag) of the same deal they may only follow from it."""
CLOSED_SHOWN = 50
"""Answered or lapsed items listed when the console shows every table (the latest first): a
day's hall closes thousands, and every live update renders the list again; filtered to one
table, all of that table's are listed."""
MOST_READS = 64
"""Reads one "read is right" click may confirm together (a table's open prompts)."""


class FlagForm(FlaskForm):
    rule = StringField(validators=[DataRequired(), Length(max=8)])
    seat = StringField(validators=[Length(max=1)])
    at = StringField(validators=[DataRequired(), Length(max=32)])


class ConfirmForm(FlagForm):
    level = SelectField(choices=list(PENALTY_LEVELS))


class DismissForm(FlagForm):
    reason = StringField(validators=[DataRequired(), Length(max=500)])


class CorrectForm(FlaskForm):
    """A correction: the event read as another play or a pass, or (``same``) as it stands,
    either way at another table time ``t`` when one is given; or (``none``) struck: nobody
    played there (a correction with no event)."""

    of = StringField(validators=[DataRequired(), Length(max=120)])
    seat = SelectField(choices=["", *"NESW"], default="")
    kind = SelectField(choices=["play", "pass", "same", "none"])
    cards = StringField(validators=[Length(max=200)])
    t = StringField(validators=[Length(max=32)])


AS_IS_DROPPED = ("t", "id", "seq", "table", "source", "confidence", "alternatives", "evidence")
"""Fields an event restated by a referee (a ``same`` correction) does not carry over: its
time and id come from the correction, and the referee, not a reader, now vouches for it."""


class ReadsForm(FlaskForm):
    """Reads confirmed as read: one or more ``of`` fields, each a play's event id (read from
    ``request.form.getlist``; the form itself carries the CSRF token)."""


def _read_of(record: dict, step: Step) -> str | None:
    """The id of the event a review of a read is about: its ``of``, else (a review raised on
    the read itself) the step's event."""
    if record.get("of") is not None:
        return str(record["of"])
    event = step.event
    if event.get("id") is not None and event.get("t") == record.get("at") and event.get("seat") == record.get("seat"):
        return str(event["id"])
    return None


def _trailing_passes(timeline: Timeline) -> int:
    """Passes since the last play of the deal under way: the trick ends when every other
    seat still in has passed (P2, P3)."""
    n = 0
    for step in reversed(timeline.steps):
        kind = step.event["type"]
        if kind == "pass":
            n += 1
        elif kind in ("play", "deal_start"):
            break
    return n


def claim_window(record: dict, state: dict, passes: int) -> dict:
    """Where a flag's claim window (X5) ends, and how near: ``rank`` sorts the nearest first;
    a window of the trick under way says how many passes can still end it (its countdown)."""
    until = record.get("claim_until") or {}
    if until.get("session"):
        return {"scope": "session", "rank": (3, 0)}
    if "round" not in until:
        return {"scope": "deal", "deal": until.get("deal"), "rank": (2, 0)}
    deal = state.get("deal") or {}
    window = {"scope": "trick", "deal": until.get("deal"), "trick": until["round"], "rank": (1, 0)}
    table = deal.get("table") or {}
    if (deal.get("phase") == "play" and deal.get("number") == until.get("deal")
            and deal.get("round") == until["round"] and table):
        out = deal.get("out") or []
        others_in = 4 - len(out) - (0 if table.get("seat") in out else 1)
        window.update(passes=max(others_in - passes, 1), rank=(0, max(others_in - passes, 1)))
    return window


def reading_label(name: str) -> str:
    """A review's reading named as the referee reads it: the read, the table's read, the
    reader's alternative N, two equal cards counted once, a face the seat holds read as one
    it does not, the read without cards its seat does not hold, or a source (camera, RFID).
    The engine names them in English (``referee.doubt.candidates``): each is said again here
    in the reader's language."""
    two = re.fullmatch(r"two (\S+) counted once", name)
    if two:
        return t("flags.two_counted_once", card=messages.card_word(two.group(1)))
    swapped = re.fullmatch(r"(\S+) read as (\S+)", name)
    if swapped:
        return t("flags.swapped", held=messages.card_word(swapped.group(1)), read=messages.card_word(swapped.group(2)))
    unheld = re.fullmatch(r"without (.+), not in (\S+)'s hand", name)
    if unheld:
        return t("flags.without_unheld", cards=messages.cards_word(unheld.group(1).split()),
                 seat=messages.seat_word(unheld.group(2)))
    if name.startswith("alternative "):
        return t("flags.alternative", n=name.removeprefix("alternative "))
    return t({"read": "flags.read", "table": "flags.reading_table"}.get(name, f"source.{name}"), default=name)


def _readings(record: dict, event: dict) -> list[dict]:
    """The readings a review names, each with its label and whether it is another reading
    of this play that a referee may take in one click (a correction to it)."""
    shown = [(name, cards) for name, cards in (record.get("readings") or {}).items()
             if not (name == "read" and event.get("type") == "play")]  # the read is shown as such
    return [{"label": reading_label(name), "cards": cards, "take": name not in ("read", "table")}
            for name, cards in shown]


def _entry(table_id: str, kind: str, record: dict, status: str, closed: dict | None, event: dict,
           where: Step | None, evidence: dict) -> dict:
    """What every console item holds: its record, status and closing, the event it is about
    (as read) with its evidence, and the step ``where`` it is reviewed at; nothing a referee
    may still do with it (``_item`` adds that to the item of a step)."""
    return {
        "readings": _readings(record, event),
        "table": table_id, "kind": kind, "record": record, "status": status, "closed": closed,
        "key": ":".join(str(x) for x in (table_id, record.get("rule") or record.get("reason"),
                                         record.get("seat") or "", record.get("at"))),
        "deal": where.deal if where else None, "seq": where.seq if where else event.get("seq"), "of": None,
        "rule_text": rule_text(record["rule"]) if kind == "flag" else "",
        "evidence": evidence, "event": redact(event), "replacement": None,
        "correctable": False, "retimable": False, "window": None, "knock_on": [], "earlier": [],
    }


def _item(table_id: str, kind: str, record: dict, status: str, step: Step, closed: dict | None) -> dict:
    event = step.corrected["original"] if kind == "doubt" and status == "corrected" else step.event
    return _entry(table_id, kind, record, status, closed, event, step, step_evidence(step)) | {
        "of": _read_of(record, step) if kind == "doubt" else None,
        "replacement": redact(step.event) if step.corrected else None,
        "correctable": step.event.get("id") is not None and step.event["type"] in ("play", "pass", "conflict"),
        "retimable": step.event.get("id") is not None,
        "earlier": [e for e in (record.get("detail") or {}).get("earlier") or () if e.get("of")]
        if kind == "doubt" else [],
    }


def _struck_item(table_id: str, struck: dict, timeline: Timeline) -> dict:
    """A read a referee struck (``Timeline.struck``): no step holds it, as nobody acted there,
    yet it is listed closed, as a corrected read is, with the read as it came and who struck
    it; reviewed at the step before it (the table as it stood where the read was). A struck
    play or pass can be put back (``restorable``): a correction restating it, which
    ``fold_corrections`` puts where the read stood, so a strike in error costs one click."""
    original = struck["original"]
    before = next((s for s in reversed(timeline.steps) if s.seq < original["seq"]), None)
    record = {"reason": "struck", "seat": original.get("seat"), "at": float(original["t"])}
    return _entry(table_id, "doubt", record, "struck", {"by": struck.get("by")}, original, before,
                  evidence_of(original)) | {
        "restorable": original.get("id") is not None and original["type"] in ("play", "pass")}


def items(table_id: str, timeline: Timeline) -> list[dict]:
    """Every flag and review of a table, with its status, rule text, evidence and claim window,
    in the order they were derived; a corrected read is an item too (closed: ``corrected``),
    and so is a struck one (closed: ``struck``), after those of the steps."""
    state = timeline.steps[-1].state_view if timeline.steps else {}
    passes = _trailing_passes(timeline)
    found = []
    for step in timeline.steps:
        if step.corrected and step.event["type"] in ("play", "pass"):
            original = step.corrected["original"]
            found.append(_item(table_id, "doubt", {"reason": "corrected", "seat": original.get("seat"),
                                                   "at": float(original["t"])}, "corrected", step,
                               {"by": step.corrected.get("by")}))
        for record in step.records:
            if record.get("type") == "flag":
                status = flag_status(record, timeline.closed, state)
                found.append(_item(table_id, "flag", record, status, step, timeline.closed.get(FlagKey.of(record))))
                if status == "open":
                    found[-1]["window"] = claim_window(record, state, passes)
            elif record.get("type") == "review":  # something the referee engine will not guess: for a human
                status = review_status(record, step, state, timeline.closed)
                kind = "doubt" if record.get("reason") in DOUBT_REVIEWS else "other"
                found.append(_item(table_id, kind, record, status, step, timeline.closed.get(FlagKey.of(record))
                                   if status == "read_confirmed" else None))
    found += [_struck_item(table_id, struck, timeline) for struck in timeline.struck]
    first: dict[str, dict] = {}  # a key names one item: a record derived again (a re-judged log) is the same
    for item in found:
        first.setdefault(item["key"], item)
    return list(first.values())


def _follows(cause: dict, item: dict) -> bool:
    """Whether ``item`` came after ``cause`` in the same deal (a read in doubt also heads the
    other items of its own play)."""
    a, b = cause["record"], item["record"]
    return cause["deal"] == item["deal"] and (
        a["at"] < b["at"] or (a["at"] == b["at"] and a.get("seat") == b.get("seat") and cause["kind"] == "doubt"))


def group_knock_ons(found: list[dict]) -> list[dict]:
    """The open items of one table that head the list: each knock-on flag (``KNOCK_ON_RULES``)
    that follows an open read in doubt or ``CAUSE_RULES`` flag of its deal is moved into the
    ``knock_on`` list of the first item of that chain."""
    heads, causes = [], []
    for item in found:
        if item["status"] != "open":
            continue
        rule = item["record"].get("rule")
        cause = next((c for c in reversed(causes) if _follows(c, item)), None)
        if cause is not None and item["kind"] == "flag" and rule in KNOCK_ON_RULES:
            root = cause.get("root", cause)
            root["knock_on"].append(item)
            item["root"] = root
        else:
            heads.append(item)
        if item["kind"] == "doubt" or rule in CAUSE_RULES:
            causes.append(item)
    return heads


def _urgency(item: dict) -> tuple:
    window = item["window"] or {"rank": (2, 0)}
    return (window["rank"], SEVERITY_ORDER.get(item["record"].get("severity"), 4), item["table"],
            -float(item["record"].get("at") or 0))


LATEST = select(TableEvent.table_id, TableEvent.t.label("table_t"), TableEvent.recorded_at).join(
    TableHead, (TableHead.table_id == TableEvent.table_id) & (TableHead.head_seq == TableEvent.seq))
"""Each table's latest event: its table time and when the server recorded it."""


def clock_offsets() -> dict[str, float]:
    """Table -> what to add to its table time for the time of day (seconds since the epoch):
    a table's clock counts seconds, so a moment ``t`` was ``t_latest - t`` before the server
    recorded the latest event. One query for every table."""
    with context.store().engine.connect() as conn:
        return {row.table_id: row.recorded_at - row.table_t for row in conn.execute(LATEST) if row.table_t is not None}


def time_of_day(at: float, offset: float | None) -> str:
    """A table time as the time of day in the event's zone (``GUANDAN_TIMEZONE``)."""
    return "" if offset is None else datetime.fromtimestamp(float(at) + offset, zone()).strftime("%H:%M:%S")


def console_view(table: str = "", kind: str = "") -> dict:
    """What the console shows, filtered to one table and/or one kind (``KINDS``); each item
    with the time of day it was raised (``wall``) beside its table time."""
    reads, flags, closed, opened = [], [], [], 0
    offsets = clock_offsets()
    for table_id in [table] if table else table_ids():
        timeline = context.timelines().get(table_id)
        if timeline is None:
            continue
        found = [i for i in items(table_id, timeline) if not kind or i["kind"] == kind]
        for item in found:
            item["wall"] = time_of_day(item["record"].get("at") or 0.0, offsets.get(table_id))
        closed += [i for i in found if i["status"] != "open"]
        opened += sum(1 for i in found if i["status"] == "open")
        heads = group_knock_ons(found)
        doubts = [i for i in heads if i["kind"] == "doubt"]
        if doubts:
            reads.append({"table": table_id, "entries": doubts, "confirmable": [i["of"] for i in doubts if i["of"]]})
        flags += [i for i in heads if i["kind"] != "doubt"]
    flags.sort(key=_urgency)
    closed.sort(key=lambda i: -float(i["record"].get("at") or 0))
    shown = closed if table else closed[:CLOSED_SHOWN]
    return {"reads": reads, "flags": flags, "closed": shown, "closed_n": len(closed),
            "closed_more": len(closed) - len(shown), "open": opened, "filter": {"table": table, "kind": kind}}


def _filters() -> dict:
    table, kind = request.args.get("table", ""), request.args.get("kind", "")
    if kind and kind not in KINDS:
        abort(400, f"kind={kind!r}: expected one of {', '.join(KINDS)}")
    if len(table) > 120:
        abort(400, "table: at most 120 characters")
    return {"table": table, "kind": kind}


@bp.get("/")
@requires("referee")
def console():
    filters = _filters()
    return render_template("flags.html", view=console_view(**filters), tables=table_ids(),
                           kinds=KINDS, back=_here("flags.console", filters),
                           live_url=_here("flags.console_live", filters))


@bp.get("/live")
@requires("referee")
def console_live():
    filters = _filters()
    return render_template("_flags_live.html", view=console_view(**filters),
                           back=_here("flags.console", filters))


def _here(endpoint: str, filters: dict) -> str:
    """The console's page (or its live part) with the filters in use: an answer comes back to them."""
    return url_for(endpoint, **{k: v for k, v in filters.items() if v})


def _flag(table_id: str, form: FlagForm) -> tuple[Timeline, dict]:
    """The flag the form names (404 if the table has none such)."""
    timeline = _timeline(table_id)
    try:
        key = FlagKey(form.rule.data, form.seat.data or None, float(form.at.data))
    except ValueError:
        abort(400)
    for record in timeline.records():
        if record.get("type") == "flag" and FlagKey.of(record) == key:
            return timeline, record
    abort(404)


def _timeline(table_id: str) -> Timeline:
    timeline = context.timelines().get(table_id)
    if timeline is None:
        abort(404)
    return timeline


def _stamp(timeline: Timeline, retimed: tuple[str, float] | None = None) -> float:
    """A console action happens now in table time: at the table's latest event. A correction
    of an event's time (``retimed``: its id and true time) happens at the table's latest time
    once that event is at its true time, so a far-future time no longer holds the table."""
    if retimed is None:
        return max((e["t"] for e in timeline.raw), default=0.0)
    of, t = retimed
    return max([t, *(e["t"] for e in timeline.raw if str(e.get("id")) != of)])


def _submit(table_id: str, events: list[dict], done: str) -> None:
    """Append the console's events through the one door (``context.append``); say what was
    recorded (``done``) or each reason the store refused one."""
    for event in events:
        event.update(table=table_id, id=f"console-{uuid.uuid4().hex}", by=current_user.name, source="manual")
    outcomes = context.append(events)
    refused = [getattr(o, "reason", str(o)) for o in outcomes if not isinstance(o, Appended)]
    if len(refused) < len(outcomes):
        flash(t("action.done", what=done), "ok")
    for reason in dict.fromkeys(refused):
        flash(t("action.refused", reason=reason), "error")


def _back():
    return redirect(safe_next(request.form.get("next") or url_for("flags.console")))


@bp.post("/<table_id>/confirm")
@requires("referee")
def confirm(table_id: str):
    form = ConfirmForm()
    if not form.validate_on_submit():
        abort(400)
    timeline, flag = _flag(table_id, form)
    _submit(table_id, [{"type": "penalty", "t": _stamp(timeline), "side": flag["side"], "seat": flag["seat"],
                        "level": form.level.data, "rule": flag["rule"],
                        "evidence": {"flag": {"rule": flag["rule"], "seat": flag["seat"], "at": flag["at"]}}}],
            t("action.penalty"))
    return _back()


@bp.post("/<table_id>/dismiss")
@requires("referee")
def dismiss(table_id: str):
    form = DismissForm()
    if not form.validate_on_submit():
        abort(400)
    timeline, flag = _flag(table_id, form)
    _submit(table_id, [{"type": "dismiss", "t": _stamp(timeline), "rule": flag["rule"], "seat": flag["seat"],
                        "at": flag["at"], "reason": form.reason.data.strip()}], t("action.dismiss"))
    return _back()


def _confirm_reads(table_id: str, timeline: Timeline, reads: list[str]) -> None:
    stamp = _stamp(timeline)
    _submit(table_id, [{"type": "confirm_read", "t": stamp, "of": of} for of in reads],
            t("action.confirm_read") if len(reads) == 1 else t("flags.reads_confirmed", n=len(reads)))


@bp.post("/<table_id>/confirm_read")
@requires("referee")
def confirm_read(table_id: str):
    """"Read is right": a ``confirm_read`` for each ``of`` (one play, or a table's open reads)."""
    if not ReadsForm().validate_on_submit():
        abort(400)
    reads = list(dict.fromkeys(request.form.getlist("of")))
    if not 0 < len(reads) <= MOST_READS or any(not of or len(of) > 120 for of in reads):
        abort(400, f"of: one to {MOST_READS} event ids of at most 120 characters")
    _confirm_reads(table_id, _timeline(table_id), reads)
    return _back()


def _same_cards(a, b) -> bool:
    try:
        return Counter(map(card_name, parse_cards(a))) == Counter(map(card_name, parse_cards(b)))
    except (CardError, TypeError, AttributeError):
        return False


def unchanged(event: dict, replacement: dict) -> bool:
    """Whether a correction's replacement says what the event already says (the read is right)."""
    if event.get("type") != replacement["type"] or event.get("seat") != replacement["seat"]:
        return False
    return replacement["type"] == "pass" or _same_cards(event.get("cards"), replacement["cards"])


def table_time(text: str | None) -> float | None:
    """The time a correction form gives (blank: none), or ``ValueError`` naming what was wrong."""
    if not (text or "").strip():
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(t("flags.bad_time", value=text))
    return value


@bp.post("/<table_id>/correct")
@requires("referee")
def correct(table_id: str):
    """A correction; the read submitted unchanged (at its own time) is a ``confirm_read`` instead."""
    form = CorrectForm()
    if not form.validate_on_submit() or (form.kind.data not in ("same", "none") and not form.seat.data):
        abort(400)
    timeline = _timeline(table_id)
    if form.kind.data == "none":
        _submit(table_id, [{"type": "correction", "t": _stamp(timeline), "of": form.of.data, "event": None}],
                t("action.correction"))
        return _back()
    read = next((s.event for s in timeline.steps if str(s.event.get("id")) == form.of.data), None)
    try:
        when = table_time(form.t.data)
    except ValueError as exc:
        flash(t("action.refused", reason=str(exc)), "error")
        return _back()
    if read is not None and when == read["t"]:
        when = None  # the time as it stands: not a correction of it
    if form.kind.data == "same":
        if read is None or when is None:
            flash(t("action.refused", reason=t("flags.time_needed")), "error")
            return _back()
        replacement = {k: v for k, v in read.items() if k not in AS_IS_DROPPED} | {"source": "manual"}
    else:
        replacement = {"type": form.kind.data, "seat": form.seat.data, "source": "manual"}
        if form.kind.data == "play":
            replacement["cards"] = form.cards.data.upper().replace(",", " ").split()
    if when is None and read is not None and unchanged(read, replacement):
        _confirm_reads(table_id, timeline, [form.of.data])
        return _back()
    stamp = _stamp(timeline)
    if when is not None:
        replacement["t"] = when
        stamp = _stamp(timeline, (form.of.data, when))
    _submit(table_id, [{"type": "correction", "t": stamp, "of": form.of.data, "event": replacement}],
            t("action.correction"))
    return _back()
