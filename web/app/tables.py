"""The table view (牌桌详情) and appeal review (申诉复核, X7).

The table view is public: it reads the table only through ``public_table``. Appeal review
is for referees: it steps through a deal event by event, showing the table as it stood
after each step (the same public drawing) and the evidence the agent sent with it.
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request

from . import context
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
    seq = _int_arg("seq", 0)
    if seq:  # straight to the step of one event (the flags console links so)
        index, k = next(((i, at - a + 1) for i, (_, a, b) in enumerate(deals)
                         for at in range(a, b) if timeline.steps[at].seq == seq), (index, k))
    if not 0 <= index < len(deals):
        abort(404)
    number, first, end = deals[index]
    steps = timeline.steps[first:end]
    k = min(max(k, 1), len(steps))
    step = steps[k - 1]
    min_conf = timeline.referee.ruleset.min_confidence
    entries = [action_entry(s, min_conf) for s in steps]
    deal = step.state_view.get("deal") or {}
    round_plays = [e for e, s in zip(entries[:k], steps[:k]) if s.event["type"] in ACTIONS
                   and e["round"] == deal.get("round") and deal.get("phase") == "play"]
    return render_template(
        "review.html", table_id=table_id, deals=deals, deal_index=index + 1, number=number, steps=[
            {"k": i + 1, "entry": e, "event": redact(s.event), "records": s.records, "corrected": s.corrected}
            for i, (e, s) in enumerate(zip(entries, steps))],
        k=k, state=step.state_view, round_plays=round_plays, evidence=evidence_of(step.event))


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
    if not value.isdigit():
        abort(400)
    return int(value)
