"""What anyone may see of a table: the one door public pages and ``/api`` read tables through.

``public_table`` computes a table's public state from its timeline: the referee's
public view of the state after each step (``referee.view.view_for``, which never holds a
hand), the plays of the deal with their source and confidence, open flags counted by
severity, and results. A
broadcast delay shows the table as it stood that many seconds of table time before its
latest event. ``public_events`` gives the events themselves with hands and evidence
removed. Flag messages and evidence are for referees (``web.app.flags``), never here.

A spectator (no login, or a viewer) gets less (``spectator_view``): what someone behind
the broadcast delay may see at the table: the cards played and left on the table, counts,
levels, results and confirmed rulings; never a flag nobody has confirmed yet, how sure a
camera was of a read, or cards that went back to a hand after a flagged play (for a
misread they were never in play). Each play shows what the referee counted as played
(``counted_plays``): a read's faces only where nobody doubts them.
"""

from __future__ import annotations

from collections import Counter

from referee.cards import CardError, card_name, parse_cards
from referee.verdicts import FlagKey
from referee.view import view_for

from .timeline import ACTIONS, Step, Timeline, Timelines

OFFICIAL_ROLE = "scorer"
"""The least role that sees flags, reviews and the reads' confidence (``spectator_view`` for the rest)."""
READ_MARKS = ("source", "confidence", "low_confidence", "conflict", "confirmed_by", "taken_back")
"""What a play history entry says about the read and the referee's doubts: for officials
only (a spectator's entries hold None)."""

HIDDEN_FIELDS = ("hands", "hand", "evidence")
"""Event fields no viewer ever receives (hands; frames that may show them)."""
SURENESS = ("confidence", "alternatives")
"""Event fields about how sure a reader was: not for spectators."""
OFFICIAL_COUNTS = {"open_flags": {}, "reviews": 0}
"""A table's counts of what officials have to decide, as a spectator receives them: nothing
open, nothing to check (``spectator_view``, ``spectator_tile``)."""
DOUBT_EVENTS = ("conflict", "confirm_read", "dismiss", "take_back")
"""Events a spectator's events leave out, as its play history does: sources that disagreed,
a doubted read confirmed, a flag nobody confirmed dismissed, cards going back to a hand."""
TAKEN_BACK = {"P4", "P5", "D3"}
"""Flags on a play whose cards go back to the hand (out of turn, illegal, a face more often
than two decks hold) once the table shows they did (``went_back``); until then the play
stands (``PlayRules._stand``)."""
FACE_DOWN = "?"
"""A card a spectator sees laid without its face: the read of it is in question (``counted_plays``)."""
DOUBT_REVIEWS = ("suspect_read", "low_confidence", "recognition_conflict")
"""Reviews about what was read: open until a referee confirms the read (``confirm_read``)
or corrects it; the read stands in the record either way, so they never lapse."""
SEVERITIES = ("loss", "foul", "violation", "warning")
"""Most severe first."""


def redact(event: dict, hidden: tuple[str, ...] = HIDDEN_FIELDS) -> dict:
    """An event without what viewers may not see (a correction's replacement too)."""
    out = {k: v for k, v in event.items() if k not in hidden}
    if isinstance(out.get("event"), dict):
        out["event"] = redact(out["event"], hidden)
    return out


def _card_names(value) -> list[str]:
    try:
        return [card_name(c) for c in parse_cards(value)]
    except (CardError, TypeError, AttributeError):
        return []


def action_entry(step: Step, min_confidence: float, closed: dict) -> dict:
    """One line of the play history: who did what, where the read came from, how sure, and
    whether a referee confirmed a doubtful read (found in the timeline's ``closed``)."""
    e = step.event
    entry = {"seq": step.seq, "t": e["t"], "type": e["type"], "seat": e.get("seat"), "round": step.round,
             "source": e.get("source"), "confidence": e.get("confidence")}
    if e["type"] == "play":
        entry["cards"] = _card_names(e.get("cards"))
    elif e["type"] in ("tribute", "return"):
        entry["cards"] = _card_names([e.get("card")])
        entry["to"] = e.get("to")
    elif e["type"] == "report":
        entry["count"] = e.get("count")
    elif e["type"] == "conflict":
        entry["readings"] = {k: _card_names(v) for k, v in (e.get("readings") or {}).items()}
    conf = entry["confidence"]
    confirmed = closed.get(FlagKey(None, entry["seat"], e["t"])) or {}
    if confirmed.get("how") == "read_confirmed":
        entry["confirmed_by"] = confirmed.get("by")
    entry["low_confidence"] = isinstance(conf, (int, float)) and conf < min_confidence and not any(
        r.get("type") == "settled" for r in step.records) and "confirmed_by" not in entry  # nobody is asked
    entry["conflict"] = e["type"] == "conflict"
    entry["flags"] = sorted({r["rule"] for r in step.records
                             if r.get("type") == "flag" and r.get("seat") in (None, entry["seat"])})
    entry["taken_back"] = e["type"] == "play" and bool(TAKEN_BACK.intersection(entry["flags"]))
    if step.corrected:
        entry["corrected_by"] = step.corrected.get("by")
    return entry


def flag_status(record: dict, closed: dict, state: dict) -> str:
    """``open``, ``lapsed`` (its claim window passed, X5) or how it was closed."""
    how = closed.get(FlagKey.of(record))
    if how is not None:
        return how["how"]
    until = record.get("claim_until") or {}
    deal = state.get("deal") or {}
    if state.get("over") or (deal.get("phase") == "over" and deal.get("number") == until.get("deal")):
        return "lapsed"
    number, rnd = deal.get("number"), deal.get("round")
    if number is not None and until.get("deal") is not None:
        if number > until["deal"] or ("round" in until and number == until["deal"] and rnd > until["round"]):
            return "lapsed"
    return "open"


def review_status(record: dict, step: Step, state: dict, closed: dict) -> str:
    """A review of a read (``DOUBT_REVIEWS``) is open until a referee confirmed the read
    (``read_confirmed``, found in ``closed`` as a flag's closing is) or corrected it (a read can
    be corrected later too, S4); any other review (what the engine will not guess) is open
    until the next deal starts."""
    if record.get("reason") in DOUBT_REVIEWS:
        if step.corrected:
            return "corrected"
        how = closed.get(FlagKey.of(record))
        return "open" if how is None else how["how"]
    current = (state.get("deal") or {}).get("number")
    return "open" if record.get("deal", current) == current and not state.get("over") else "lapsed"


def _shown(steps: list[Step], upto: int, delay: float) -> int:
    """How many of the first ``upto`` steps a viewer may see now: with a delay, those
    ``delay`` s of table time older than the latest. The referee refuses time going
    backwards (``referee.engine``), so they are a prefix: found from the end, not by
    reading a whole session."""
    if delay <= 0 or not upto:
        return upto
    cut = steps[upto - 1].event["t"] - delay
    shown = upto
    while shown and steps[shown - 1].event["t"] > cut:
        shown -= 1
    return shown


def _view(timelines: Timelines, table_id: str, delay: float, name: str, build) -> dict | None:
    """``build(timeline, table_id, upto, shown)`` of the first ``upto`` steps, ``shown`` of
    them visible: made once per table change and delay."""
    timeline = timelines.get(table_id)
    if timeline is None:
        return None
    upto = len(timeline.steps)  # another thread may add steps meanwhile
    key = (name, delay, upto)
    cached = timeline.views.get(key)
    if cached is None:
        cached = timeline.views[key] = build(timeline, table_id, upto, _shown(timeline.steps, upto, delay))
    return cached


def public_table(timelines: Timelines, table_id: str, delay: float = 0.0,
                 spectator: bool | None = None) -> dict | None:
    """The public state of a table (None if it has no events): never a hand. ``spectator``
    (by default: whether the request's reader is one, ``is_spectator``) gets ``spectator_view``."""
    if spectator is None:
        spectator = is_spectator()
    return _view(timelines, table_id, delay, "spectator" if spectator else "public",
                 _spectator if spectator else _public)


def is_spectator() -> bool:
    """Whether this request reads as a spectator: nobody logged in, or a viewer. Code outside
    a request (a command, a feed) reads the whole public view and says what it passes on."""
    from flask import has_request_context
    from flask_login import current_user
    return has_request_context() and not current_user.can(OFFICIAL_ROLE)


def public_summary(timelines: Timelines, table_id: str, delay: float = 0.0) -> dict | None:
    """A floor tile's worth of a table's public state (``summary``), without its play
    history: what every open live page receives on every change of every table. It holds
    the open flag counts, for officials; a spectator receives ``spectator_tile`` of it."""
    return _view(timelines, table_id, delay, "summary", lambda *args: summary(_head(*args)))


def _head(timeline: Timeline, table_id: str, upto: int, shown: int) -> dict:
    """What both views tell of the first ``shown`` of ``upto`` steps: state, seq, time and
    the tallies of the records kept aside (``Timeline.noted``), never a walk over every step."""
    steps = timeline.steps
    state = steps[shown - 1].state_view if shown else view_for(None)
    open_flags, reviews, deals, sessions = Counter(), 0, [], []
    for i, record in timeline.noted:
        if i >= shown:
            break
        kind = record["type"]
        if kind == "flag":
            if flag_status(record, timeline.closed, state) == "open":
                open_flags[record["severity"]] += 1
        elif kind == "review":
            reviews += review_status(record, steps[i], state, timeline.closed) == "open"
        else:
            (deals if kind == "deal_end" else sessions).append(record)
    return {
        "table": table_id,
        "ruleset": timeline.ruleset,
        "seq": steps[shown - 1].seq if shown else 0,
        "head_seq": timeline.head_seq,
        "delayed": shown < upto,
        "last_t": steps[shown - 1].event["t"] if shown else None,
        "state": state,
        "open_flags": {s: open_flags[s] for s in SEVERITIES if open_flags[s]},
        "reviews": reviews,
        "deals": deals,
        "sessions": sessions,
    }


def _public(timeline: Timeline, table_id: str, upto: int, shown: int) -> dict:
    head = _head(timeline, table_id, upto, shown)
    steps = timeline.steps[:shown]
    start = next((i for i in range(shown - 1, -1, -1) if steps[i].event["type"] == "deal_start"), shown)
    min_conf = timeline.referee.rules_in_force.min_confidence
    history = []
    for i in range(start, shown):
        if steps[i].event["type"] in ACTIONS:
            entry = action_entry(steps[i], min_conf, timeline.closed)
            entry["taken_back"] = entry["taken_back"] and went_back(steps, i)  # a flagged play may stand
            history.append(entry)
    deal = head["state"].get("deal") or {}
    return {
        **head,
        "history": history,
        "round": [h for h in history if h["round"] == deal.get("round") and deal.get("phase") == "play"],
        "corrections": _corrections_shown(timeline, upto, shown),
    }


def _corrections_shown(timeline: Timeline, upto: int, shown: int) -> int:
    """The referee's corrections among the first ``shown`` of ``upto`` steps: each corrected
    step, and each read struck (a correction too, though no step holds it) no later than
    the last step shown; every strike when the delay holds no step back. A strike of a read
    the delay still hides is not told before that read would be."""
    last_t = timeline.steps[shown - 1].event["t"] if shown else None
    struck = sum(1 for s in timeline.struck
                 if shown == upto or (last_t is not None and s["original"]["t"] <= last_t))
    return sum(1 for s in timeline.steps[:shown] if s.corrected) + struck


def went_back(steps: list[Step], i: int) -> bool:
    """Whether the flagged play of step ``i`` went back to its seat's hand: as the referee
    settles a standing play (``PlayRules._follow_table``), the next action at the table is
    the same seat's, or that of the seat that was due before the play (and not after it),
    or the seat's cards were seen going back (``take_back``). Until then it stands.

    The seat due before it is the one its flag names (a P4's ``detail``), else its own (an
    illegal play is judged when its seat is due): not the turn after the step before, which
    a flagged play going back by this very play had moved on (a chain of flagged plays)."""
    play = steps[i].event
    due_before = next((r["detail"]["turn"] for r in steps[i].records
                       if r.get("type") == "flag" and r.get("rule") in TAKEN_BACK and r.get("seat") == play.get("seat")
                       and "turn" in (r.get("detail") or {})), play.get("seat"))
    due_after = (steps[i].state_view.get("deal") or {}).get("turn")
    for step in steps[i + 1:]:
        kind = step.event["type"]
        if kind == "deal_start":
            return False
        if kind == "take_back":
            if step.event.get("seat") == play.get("seat"):
                return True
        elif kind in ("play", "pass"):
            seat = step.event.get("seat")
            return seat == play.get("seat") or (seat == due_before and seat != due_after)
    return False


def counted_plays(steps: list[Step], closed: dict) -> dict[int, list[str] | None]:
    """Seq -> what the referee counted as played, of each play among ``steps`` (those a
    viewer is shown, from a deal's start or the session's), as a spectator may see it.

    None where it counted nothing: the cards went back to the hand (``went_back``), or the
    seat laid more cards than it held (P5 ``more_than_held``: nothing is laid). Where the
    deal went on with another reading of an impossible read (a ``suspect_read`` taken as
    another), that reading. A read in question that the deal took as read (no reading
    nearby was possible; two reads of which one is wrong; a face more often than two decks
    hold, D3) counts its cards, face down (``FACE_DOWN``). A read the deal's context settled
    (a ``settled`` record) shows the cards it was settled to. A referee's confirmation of the
    read (or of the D3 flag) shows its faces; a correction replaces the read altogether."""
    out: dict[int, list[str] | None] = {}
    for i, step in enumerate(steps):
        event = step.event
        if event["type"] != "play":
            continue
        seat, cards = event.get("seat"), _card_names(event.get("cards"))
        confirmed = (closed.get(FlagKey(None, seat, event["t"])) or {}).get("how") == "read_confirmed"
        flags = [r for r in step.records if r.get("type") == "flag" and r.get("seat") in (None, seat)]
        suspect = next((r for r in step.records if r.get("type") == "review" and r.get("reason") == "suspect_read"
                        and r.get("seat") == seat), None)
        doubt = (suspect or {}).get("detail") or {}
        settled = next((r for r in step.records if r.get("type") == "settled" and r.get("seat") == seat), None)
        if any(f.get("rule") == "P5" and (f.get("detail") or {}).get("what") == "more_than_held" for f in flags):
            out[step.seq] = None
        elif (any(f.get("rule") in TAKEN_BACK for f in flags)  # a play that stood as laid (``_stand``)
              or (doubt.get("what") == "impossible_read" and not doubt.get("taken"))) and went_back(steps, i):
            out[step.seq] = None
        elif settled and not confirmed:
            out[step.seq] = list(settled["cards"])
        elif suspect and not confirmed:
            out[step.seq] = _card_names(doubt["taken"]) if doubt.get("taken") else [FACE_DOWN] * len(cards)
            if doubt.get("what") == "two_reads":  # the table's read it failed to beat is in question too
                _face_down_before(steps, i, doubt.get("from"), closed, out)
        elif any(f.get("rule") == "D3" and (closed.get(FlagKey.of(f)) or {}).get("how") != "confirmed"
                 for f in flags):
            out[step.seq] = [FACE_DOWN] * len(cards)
        else:
            out[step.seq] = cards
    return out


def _face_down_before(steps: list[Step], i: int, seat: str | None, closed: dict, out: dict) -> None:
    """Turn face down the latest play of ``seat`` before step ``i`` in its deal, unless a
    referee confirmed that read."""
    for step in reversed(steps[:i]):
        event = step.event
        if event["type"] == "deal_start":
            return
        if event["type"] == "play" and event.get("seat") == seat:
            if out.get(step.seq) and (closed.get(FlagKey(None, seat, event["t"])) or {}).get("how") != "read_confirmed":
                out[step.seq] = [FACE_DOWN] * len(out[step.seq])
            return


def spectator_view(table: dict, closed: dict, counted: dict[int, list[str] | None]) -> dict:
    """``table`` (a ``_public`` view) as a spectator may see it: no open flag
    counts or reviews, no marks of a read's confidence or source, a play's rule shown only
    once a referee confirmed the flag, each play as the referee counted it (``counted``, by
    seq: the plays that went back to a hand and the laid cards it counted none of left out),
    and no reads the sources disagreed on. A corrected play shows its replacement only
    (what was played), marked corrected: a referee's ruling."""
    history = []
    for entry in table["history"]:
        if entry["type"] == "conflict" or (entry["type"] == "play" and counted.get(entry["seq"]) is None):
            continue
        confirmed = [rule for rule in entry["flags"]
                     if (closed.get(FlagKey(rule, entry["seat"], entry["t"])) or {}).get("how") == "confirmed"]
        shown = {**entry, **dict.fromkeys(READ_MARKS), "flags": confirmed}
        if entry["type"] == "play":
            shown["cards"] = counted[entry["seq"]]
        history.append(shown)
    state = table["state"]
    deal = state.get("deal") or {}
    top = deal.get("table")
    last = next((h for h in reversed(history) if h["type"] == "play"), None)
    if top and last and last["seat"] == top["seat"] and FACE_DOWN in last["cards"]:  # the cards on the table
        state = {**state, "deal": {**deal, "table": {**top, "cards": last["cards"], "reading": "", "combination": None}}}
    return {**table, **OFFICIAL_COUNTS, "state": state, "history": history,
            "round": [h for h in history if h["round"] == deal.get("round") and deal.get("phase") == "play"]}


def _spectator(timeline: Timeline, table_id: str, upto: int, shown: int) -> dict:
    table = _public(timeline, table_id, upto, shown)
    steps = timeline.steps[:shown]
    start = next((i for i in range(shown - 1, -1, -1) if steps[i].event["type"] == "deal_start"), shown)
    return spectator_view(table, timeline.closed, counted_plays(steps[start:], timeline.closed))


def public_events(timelines: Timelines, table_id: str, after: int = 0, delay: float = 0.0,
                  spectator: bool | None = None) -> list[dict] | None:
    """The accepted events of a table after ``after``, redacted, as far as the delay allows.
    A spectator's (as in ``public_table``) hold what its play history shows
    (``_spectator_events``)."""
    timeline = timelines.get(table_id)
    if timeline is None:
        return None
    if not (is_spectator() if spectator is None else spectator):
        events = [e for e in timeline.raw if e["seq"] > after]
        if delay > 0 and timeline.raw:
            cut = timeline.raw[-1]["t"] - delay
            events = [e for e in events if e["t"] <= cut]
        return [redact(e) for e in events]
    shown, counted = _view(timelines, table_id, delay, "counted",
                           lambda tl, _, upto, shown: (shown, counted_plays(tl.steps[:shown], tl.closed)))
    return _spectator_events(timeline, shown, counted, after, delay)


def _spectator_events(timeline: Timeline, shown: int, counted: dict[int, list[str] | None], after: int,
                      delay: float) -> list[dict]:
    """A spectator's events after ``after``: the first ``shown`` steps as the referee judged
    them, a corrected event as its replacement (at the original's seq, with its
    ``corrected_by``), a play with the cards the referee counted (``counted``), none of how
    sure a reader was, no ``DOUBT_EVENTS``, no play it counted nothing of nor a correction
    of one; and the corrections (a referee's rulings: the replacement only) the delay shows.
    Only the events after ``after`` are built: a client polls for the newest."""
    events, uncounted = [], set()
    for step in timeline.steps[:shown]:
        event = step.event
        if event["type"] == "play" and counted.get(step.seq) is None:
            uncounted.add(str(event.get("id")))
        elif step.seq > after and event["type"] not in DOUBT_EVENTS:
            out = redact({**event, "seq": step.seq}, HIDDEN_FIELDS + SURENESS)
            if event["type"] == "play":
                out["cards"] = counted[step.seq]
            if step.corrected:
                out["corrected_by"] = step.corrected.get("by")
            events.append(out)
    cut = timeline.raw[-1]["t"] - delay if delay > 0 and timeline.raw else None
    events += [redact(e, HIDDEN_FIELDS + SURENESS) for e in timeline.raw
               if e["type"] == "correction" and e["seq"] > after and str(e.get("of")) not in uncounted
               and (cut is None or e["t"] <= cut)]
    return sorted(events, key=lambda e: e["seq"])


def summary(table: dict) -> dict:
    """A floor tile's worth of a public table."""
    state, deal = table["state"], table["state"].get("deal") or {}
    return {
        "table": table["table"], "seq": table["seq"], "teams": state.get("teams"),
        "levels": state.get("levels"), "over": state.get("over"), "deal": deal.get("number"),
        "phase": deal.get("phase"), "turn": deal.get("turn"), "counts": deal.get("counts"),
        "level": deal.get("level"), "clocks": deal.get("clocks", []), "last_t": table["last_t"],
        "open_flags": table["open_flags"], "reviews": table["reviews"],
        "result": table["sessions"][-1] if table["sessions"] else None,
    }


def spectator_tile(tile: dict) -> dict:
    """A floor tile (``summary``, as the API adds to it) as a spectator receives it: without
    the open flag counts and reviews. The very same dict when it has none to drop, so that
    the live feed (``web.app.tiles``) builds a second tile only for a table with some."""
    if not tile.get("open_flags") and not tile.get("reviews"):
        return tile
    return {**tile, **OFFICIAL_COUNTS}
