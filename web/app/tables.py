"""The table view (牌桌详情) and appeal review (申诉复核, X7).

The table view is public: it reads the table only through ``public_table``. Appeal review
is for referees: it steps through a deal event by event, showing the table as it stood
after each step (the same public drawing) and the evidence the agent sent with it.
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request

from . import context
from .api import whole_number
from .auth import requires
from .public import action_entry, redact
from .timeline import ACTIONS

bp = Blueprint("tables", __name__, url_prefix="/tables")


def _public_or_404(table_id: str) -> dict:
    table = context.public(table_id)
    if table is None:
        abort(404)
    return table


@bp.get("/<table_id>")
def table(table_id: str):
    return render_template("table.html", table=_public_or_404(table_id))


@bp.get("/<table_id>/live")
def table_live(table_id: str):
    """The table view's changing part, swapped in by the page when the table moves."""
    return render_template("_table_live.html", table=_public_or_404(table_id))


def _deals(timeline) -> list[tuple[int, int, int]]:
    """Each deal as ``(number, first step index, end index)`` in the table's timeline."""
    starts = [i for i, s in enumerate(timeline.steps) if s.event["type"] == "deal_start"]
    ends = starts[1:] + [len(timeline.steps)]
    return [(timeline.steps[a].deal, a, b) for a, b in zip(starts, ends)]


STEP_RECORDS = ("flag", "review", "deal_end", "ruling", "dismissed", "withdrawn", "session_result",
                "confirmed", "settled")
"""The records appeal review shows under a step; a clock tick that derived none of them is
hidden unless asked for (a live table sends one a second)."""


def _quiet_tick(step) -> bool:
    return step.event["type"] == "tick" and not any(r.get("type") in STEP_RECORDS for r in step.records)


def _jump(timeline, after: int, wanted) -> int | None:
    """The seq of the first step after index ``after`` of the timeline that is ``wanted``."""
    return next((s.seq for s in timeline.steps[after + 1:] if wanted(s)), None)


def _read_notes(steps) -> dict[tuple, list[dict]]:
    """How context settled a read (``settled`` records), by the ``(seat, at)`` of the play they
    are about, wherever they were derived (who confirmed a read is in its ``action_entry``)."""
    notes: dict[tuple, list[dict]] = {}
    for step in steps:
        for r in step.records:
            if r.get("type") == "settled":
                notes.setdefault((r.get("seat"), r.get("at")), []).append(r)
    return notes


@bp.get("/<table_id>/review")
@requires("referee")
def review(table_id: str):
    timeline = context.timelines().get(table_id)
    if timeline is None:
        abort(404)
    deals = _deals(timeline)
    if not deals:
        abort(404)
    index, k = _int_arg("deal", len(deals)) - 1, _int_arg("step", 1)
    ticks = request.args.get("ticks") == "1"
    seq = _int_arg("seq", 0)
    if seq:  # straight to the step of one event (the flags console and the jumps link so)
        at = next((i for i, s in enumerate(timeline.steps) if s.seq == seq), None)
        if at is not None:
            index = next(i for i, (_, a, b) in enumerate(deals) if a <= at < b) if at >= deals[0][1] else 0
            ticks = ticks or _quiet_tick(timeline.steps[at])
            first = deals[index][1]
            k = sum(1 for s in timeline.steps[first:at + 1] if ticks or not _quiet_tick(s))
    if not 0 <= index < len(deals):
        abort(404)
    number, first, end = deals[index]
    shown = [i for i in range(first, end) if ticks or not _quiet_tick(timeline.steps[i])]
    steps = [timeline.steps[i] for i in shown]
    k = min(max(k, 1), len(steps))
    step, here = steps[k - 1], shown[k - 1]
    min_conf = timeline.referee.rules_in_force.min_confidence
    entries = [action_entry(s, min_conf, timeline.closed) for s in steps]
    notes = _read_notes(timeline.steps[first:end])
    deal = step.state_view.get("deal") or {}
    round_plays = [e for e, s in zip(entries[:k], steps[:k]) if s.event["type"] in ACTIONS
                   and e["round"] == deal.get("round") and deal.get("phase") == "play"]
    return render_template(
        "review.html", table_id=table_id, deals=deals, deal_index=index + 1, number=number, steps=[
            {"k": i + 1, "entry": e, "event": redact(s.event), "records": s.records, "corrected": s.corrected,
             "notes": notes.get((s.event.get("seat"), s.event["t"]), []) if s.event["type"] in ACTIONS else []}
            for i, (e, s) in enumerate(zip(entries, steps))],
        k=k, state=step.state_view, round_plays=round_plays, evidence=step_evidence(step), ticks=ticks,
        hidden_ticks=sum(1 for s in timeline.steps[first:end] if _quiet_tick(s)), step_seq=step.seq,
        untick_seq=next(s.seq for s in reversed(timeline.steps[first:here + 1]) if not _quiet_tick(s)),
        next_play=_jump(timeline, here, lambda s: s.event["type"] == "play"),
        next_flag=_jump(timeline, here, lambda s: any(r.get("type") in ("flag", "review") for r in s.records)))


def step_evidence(step) -> dict:
    """The evidence of a step's event; for a corrected event, the evidence the agent sent
    with the original read (the replacement is typed by a referee and carries none)."""
    evidence = evidence_of(step.event)
    if step.corrected and not evidence["frames"] and not evidence["other"]:
        return {**evidence_of(step.corrected["original"]), "original": True}
    return evidence


def evidence_of(event: dict) -> dict:
    """Frames (by SHA-256) and any other evidence (RFID reads, tags) of an event."""
    evidence = event.get("evidence")
    if not isinstance(evidence, dict):
        return {"frames": [], "other": evidence}
    frames = [f for f in evidence.get("frames", []) if isinstance(f, str)]
    other = {k: v for k, v in evidence.items() if k != "frames"}
    return {"frames": frames, "other": other or None}


def _int_arg(name: str, default: int) -> int:
    value = request.args.get(name)
    if value is None:
        return default
    if (number := whole_number(value)) is None:
        abort(400)
    return number
