"""Sign-off of a session result (S3): both sides confirm; a dispute reopens it.

Every sign-off action (sign, dispute, resolve) is kept in order; the status is the replay
of those actions against the *current* result. A signature names the digest of the
result it confirmed, so a correction that changes the result voids it. A side signs a
result once: a second signature, even by the partner, is refused with who signed when,
since a changed signer means the side no longer stands by the first signature, which is
a dispute for a referee to resolve (after which both sides sign again).

A side disputes within the windows of seed 000 (第三章 十, 第五章 一; RULES S4, X7): a
scoring error while the players are still at the table (before both sides signed), an
entry error within 10 minutes after the round, an appeal within 30 minutes after the
round. The round ends when the table's result is stored. Later, only the chief referee
may reopen a result ("later corrections need the chief referee"), with a reason.

Every action is kept with its door (``Door``): a side's own phone link (``signlinks``) or
a scorer at the desk, named, and the table's chain head at that moment, so that the sheet
and the audit say who signed how, and against which recorded play.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from referee.seats import SIDES
from web.store import Store
from web.store.db import WRITE
from web.store.models import DerivedRecord, Match, Official, Pair, SignOff, SignOffDoor, TableEvent, TableHead

from .clock import clock_time
from .clock import wall_time as wall_time

APPEAL_S = 30 * 60.0
"""X7: a written appeal within 30 minutes after the round."""


class SignOffError(ValueError):
    """A sign-off action that does not fit the result's state."""


@dataclass(frozen=True)
class Door:
    """How a sign-off action reached the store: ``link`` (the side's phone link, ``link_id``)
    or ``desk`` (a scorer's form or the command line; ``official``: the scorer, if known)."""

    kind: str = "desk"
    official: str | None = None
    link_id: int | None = None


DESK = Door()
DOORS = {"link": "手机链接 phone link", "desk": "记分台 desk"}
"""How the printed sheet names each door (both languages, as the rest of the sheet)."""


def result_digest(result: dict) -> str:
    """Digest of a session result as stored (canonical JSON)."""
    return hashlib.sha256(json.dumps(result, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@dataclass
class SignOffStatus:
    state: str = "pending"
    """``pending`` (awaiting signatures), ``final`` (both sides signed), ``disputed``."""
    signed: dict[str, str] = field(default_factory=dict)
    """side -> who signed the current result."""
    signed_at: dict[str, float] = field(default_factory=dict)
    """side -> when (wall time, seconds since the epoch)."""
    dispute: str | None = None
    doors: dict[str, dict] = field(default_factory=dict)
    """side -> the door of its signature: door, official, head_seq, head_hash."""

    def as_dict(self) -> dict:
        return {"state": self.state, "signed": dict(self.signed), "dispute": self.dispute,
                "signed_at": {side: wall_time(at) for side, at in self.signed_at.items()},
                "doors": {side: dict(door) for side, door in self.doors.items()}}


def door_of(act: dict) -> dict:
    """The door fields of an action (none for an action kept before doors were)."""
    return {k: act.get(k) for k in ("door", "official", "head_seq", "head_hash")}


def door_text(door: dict | None) -> str:
    """A door as the printed sheet says it: which door, the scorer at the desk, the chain head."""
    if not door or not door.get("door"):
        return ""
    who = f" ({door['official']})" if door.get("official") else ""
    return f"{DOORS.get(door['door'], door['door'])}{who}; 链 chain #{door['head_seq']} {door['head_hash'][:12]}"


def replay(actions: list[dict], digest: str) -> SignOffStatus:
    """Status after ``actions`` (dicts with action/side/by/result_digest/note/at), in order."""
    status = SignOffStatus()
    for act in actions:
        kind = act["action"]
        if kind == "dispute":
            status = SignOffStatus(state="disputed", dispute=f"{act['side']} ({act['by']}): {act.get('note') or ''}".strip())
        elif kind == "resolve":
            status = SignOffStatus()
        elif kind == "sign" and status.state != "disputed" and act["result_digest"] == digest:
            if act["side"] not in status.signed:
                status.signed[act["side"]] = act["by"]
                status.signed_at[act["side"]] = act["at"]
                status.doors[act["side"]] = door_of(act)
    if status.state != "disputed" and set(status.signed) == set(SIDES):
        status.state = "final"
    return status


def check_action(action: str, side: str | None, status: SignOffStatus) -> None:
    """Raise ``SignOffError`` if ``action`` by ``side`` is not allowed in ``status``."""
    if action in ("sign", "dispute") and side not in SIDES:
        raise SignOffError(f"{action}: side must be NS or EW, not {side!r}")
    if action in ("sign", "dispute") and status.state == "disputed":
        raise SignOffError(f"{action}: the result is disputed ({status.dispute}); a referee must resolve it first")
    if action == "sign" and side in status.signed:
        raise SignOffError(
            f"sign: {side} already signed this result: {status.signed[side]} at "
            f"{wall_time(status.signed_at[side])}; a side signs once (to change it: dispute, then a referee resolves)")
    if action == "resolve" and status.state != "disputed":
        raise SignOffError("resolve: the result is not disputed")


# ---------------------------------------------------------------------- on the store


def status(store: Store, table_id: str, session: int = 1) -> SignOffStatus:
    """The sign-off status of the ``session``-th result (1-based) of a table."""
    with store.engine.connect() as conn:
        return status_on(conn, table_id, session)


def sessions(store: Store, table_id: str) -> int:
    """How many session results the table has (the last is the one that counts)."""
    with store.engine.connect() as conn:
        return len(session_results(conn, table_id))


def sign(store: Store, table_id: str, side: str, by: str, session: int = 1, door: Door = DESK) -> SignOffStatus:
    """``by`` confirms the current result of ``session`` for ``side`` (S3)."""
    return _act(store, "sign", table_id, session, side, by, None, door=door)


def dispute(store: Store, table_id: str, side: str, by: str, note: str, session: int = 1, *,
            override_by: str | None = None, reason: str | None = None, door: Door = DESK) -> SignOffStatus:
    """A side disputes the result within a window (S4, X7): signatures are void until a
    referee resolves it. Past every window only the chief referee (``override_by``, with a
    ``reason``) may reopen it; who and why are kept with the dispute's note."""
    if override_by is not None:
        if reason is None or not reason.strip():
            raise SignOffError("dispute past the windows: the chief referee's reason is needed (--reason)")
        note = f"{note} ({REOPENED}: {override_by}: {reason.strip()})"
    return _act(store, "dispute", table_id, session, side, by, note, override_by=override_by, door=door)


def resolve(store: Store, table_id: str, by: str, note: str = "", session: int = 1) -> SignOffStatus:
    """An official closes a dispute (after any correction); both sides sign again."""
    return _act(store, "resolve", table_id, session, None, by, note, door=Door(official=by))


def _act(store: Store, action: str, tid: str, session: int, side: str | None, by: str,
         note: str | None, override_by: str | None = None, door: Door = DESK) -> SignOffStatus:
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        return act_on(conn, store, action, tid, session, side, by, note, override_by, door)


def act_on(conn: Connection, store: Store, action: str, tid: str, session: int, side: str | None, by: str,
           note: str | None, override_by: str | None = None, door: Door = DESK) -> SignOffStatus:
    """Check and keep one action inside the caller's transaction (a phone link is spent in
    the same one); the table's head row is locked so that two sign-offs of one table are
    taken one after the other, each seeing the other, and its head is the action's."""
    head = conn.execute(select(TableHead.head_seq, TableHead.head_hash)
                        .where(TableHead.table_id == tid).with_for_update()).first()
    if head is None:
        raise SignOffError(f"no table {tid!r}")
    digest = result_digest(session_result(conn, tid, session))
    actions = actions_on(conn, tid, session)
    status = replay(actions, digest)
    check_action(action, side, status)
    _check_signer(conn, tid, action, side, by)
    now = store.clock()
    if action == "dispute":
        ended = round_ended_at(conn, tid, session)
        stage = stage_ended_at(conn, tid)
        if override_by is not None:
            _check_chief(conn, override_by, status.state, ended, now, store.windows.entry_s, stage)
        else:
            check_window(status.state, ended, now, store.windows.entry_s, stage)
    row = dict(table_id=tid, session=session, action=action, side=side, by=by,
               result_digest=digest, note=note, at=now)
    kept = conn.execute(insert(SignOff).values(**row)).inserted_primary_key[0]
    doors = dict(door=door.kind, official=door.official, head_seq=head.head_seq, head_hash=head.head_hash)
    conn.execute(insert(SignOffDoor).values(signoff_id=kept, link_id=door.link_id, **doors))
    return replay([*actions, {**row, **doors}], digest)


REOPENED = "reopened past the windows by the chief referee"


PUBLISHED_S = 20 * 60
"""S4: a published-result error is corrected within 20 minutes after the stage (seed 000)."""


def dispute_window(state: str, ended_at: float, at: float, entry_s: float,
                   stage_at: float | None = None) -> str | None:
    """The window (S4, X7) a dispute at wall time ``at`` falls in, or None past them all.

    ``state`` is the result's sign-off state before the dispute: until both sides signed
    the players are still at the table (a scoring error, S4). ``stage_at``: when the stage
    (the event's round) this result belongs to ended, its results published, if it has.
    """
    if state != "final":
        return "S4 scoring error (before both sides signed)"
    late = at - ended_at
    if late <= entry_s:
        return f"S4 entry error (within {entry_s / 60:g} min after the round)"
    if late <= APPEAL_S:
        return f"X7 appeal (within {APPEAL_S / 60:g} min after the round)"
    if stage_at is not None and at - stage_at <= PUBLISHED_S:
        return f"S4 published-result error (within {PUBLISHED_S / 60:g} min after the stage)"
    return None


def check_window(state: str, ended_at: float, at: float, entry_s: float, stage_at: float | None = None) -> None:
    """Raise ``SignOffError``, naming every window and when it closed, past them all."""
    if dispute_window(state, ended_at, at, entry_s, stage_at) is not None:
        return
    published = "the stage's results are not all in yet" if stage_at is None else \
        f"until {clock_time(stage_at + PUBLISHED_S)}"
    raise SignOffError(
        f"dispute: every window is past: the round ended at {wall_time(ended_at)}; "
        f"S4 scoring error: only before both sides signed (they have); "
        f"S4 entry error: within {entry_s / 60:g} min after the round (until {clock_time(ended_at + entry_s)}); "
        f"X7 appeal: within {APPEAL_S / 60:g} min after the round (until {clock_time(ended_at + APPEAL_S)}); "
        f"S4 published-result error: within {PUBLISHED_S / 60:g} min after the stage ({published}); "
        "later corrections need the chief referee (--override-by CHIEF --reason TEXT)")


def _check_chief(conn: Connection, chief: str, state: str, ended: float, at: float, entry_s: float,
                 stage_at: float | None = None) -> None:
    """The chief referee reopens a result only once the windows are past (S4 4)."""
    if conn.execute(select(Official.role).where(Official.name == chief)).scalar_one_or_none() != "chief":
        raise SignOffError(f"dispute past the windows: {chief!r} is not the chief referee; only the chief referee may")
    window = dispute_window(state, ended, at, entry_s, stage_at)
    if window is not None:
        raise SignOffError(f"dispute: still within the {window} window; the side disputes without the chief referee")


def round_ended_at(conn: Connection, tid: str, session: int) -> float:
    """When the round ended: the wall time the event that ended the ``session`` was stored."""
    seqs = conn.execute(
        select(DerivedRecord.source_seq).join(TableHead, TableHead.table_id == DerivedRecord.table_id)
        .where(DerivedRecord.table_id == tid, DerivedRecord.type == "session_result",
               DerivedRecord.generation == TableHead.generation)
        .order_by(DerivedRecord.idx)).scalars().all()
    if not 1 <= session <= len(seqs):
        raise SignOffError(f"table {tid}: no session result #{session} recorded")
    return float(conn.execute(select(TableEvent.recorded_at).where(
        TableEvent.table_id == tid, TableEvent.seq == seqs[session - 1])).scalar_one())


def stage_ended_at(conn: Connection, tid: str) -> float | None:
    """When the stage the table plays in (its event's round) ended: the last of the round's
    played tables to record its result, once every one has; ``None`` for a table outside an
    event or a stage still playing. A forfeited table or a bye records nothing to wait for."""
    match = conn.execute(select(Match.tournament_id, Match.round).where(Match.table_id == tid)).first()
    if match is None:
        return None
    tables = conn.execute(select(Match.table_id).where(
        Match.tournament_id == match.tournament_id, Match.round == match.round,
        Match.ew_pair.is_not(None), Match.forfeit.is_(None))).scalars().all()
    ends = []
    for table in tables:
        results = len(session_results(conn, table))
        if not results:
            return None
        ends.append(round_ended_at(conn, table, results))
    return max(ends, default=None)


def history(store: Store, tid: str, session: int) -> list[dict]:
    """The disputes of a result, in order, each with its window and its resolution (if any):
    side, by, at, note, window, resolved_by, resolved_at, resolution. The sign-off is
    replayed up to each dispute, so that its window is the one it was raised in."""
    entry_s = store.windows.entry_s
    with store.engine.connect() as conn:
        actions = actions_on(conn, tid, session)
        if not actions:
            return []
        ended = round_ended_at(conn, tid, session)
        stage = stage_ended_at(conn, tid)
        digest = result_digest(session_result(conn, tid, session))
    out: list[dict] = []
    for i, act in enumerate(actions):
        if act["action"] == "dispute":
            window = dispute_window(replay(actions[:i], digest).state, ended, act["at"], entry_s, stage)
            out.append(dict(side=act["side"], by=act["by"], at=act["at"], note=act.get("note") or "",
                            window=window or "S4: later correction (chief referee)",
                            resolved_by=None, resolved_at=None, resolution=None))
        elif act["action"] == "resolve" and out:
            out[-1].update(resolved_by=act["by"], resolved_at=act["at"], resolution=act.get("note") or "")
    return out


def _check_signer(conn: Connection, tid: str, action: str, side: str | None, by: str) -> None:
    """A resolution is an official's; at a tournament table a side signs through its players."""
    if action == "resolve":
        if conn.execute(select(Official.role).where(Official.name == by)).scalar_one_or_none() is None:
            raise SignOffError(f"resolve by {by!r}: not a registered official")
        return
    match = conn.execute(select(Match).where(Match.table_id == tid)).first()
    if match is None:
        return
    pair_id = match.ns_pair if side == "NS" else match.ew_pair
    pair = conn.execute(select(Pair).where(
        Pair.tournament_id == match.tournament_id, Pair.pair_id == pair_id)).first()
    if pair is None or by not in (pair.player1, pair.player2):
        raise SignOffError(f"{action} for {side} by {by!r}: not a player of pair {pair_id}")


def actions_on(conn: Connection, tid: str, session: int) -> list[dict]:
    """The actions on a result, in order, each with its door (``door_of``)."""
    rows = conn.execute(
        select(SignOff.action, SignOff.side, SignOff.by, SignOff.result_digest, SignOff.note, SignOff.at,
               SignOffDoor.door, SignOffDoor.official, SignOffDoor.head_seq, SignOffDoor.head_hash)
        .outerjoin(SignOffDoor, SignOffDoor.signoff_id == SignOff.id)
        .where(SignOff.table_id == tid, SignOff.session == session).order_by(SignOff.id)
    ).mappings().all()
    return [dict(r) for r in rows]


def trail(store: Store, tid: str, session: int) -> list[dict]:
    """Every sign-off action on a result, in order, with its door and wall time: the audit."""
    with store.engine.connect() as conn:
        return [{**act, "when": wall_time(act["at"])} for act in actions_on(conn, tid, session)]


def status_on(conn: Connection, tid: str, session: int) -> SignOffStatus:
    """``status`` inside a caller's transaction."""
    return replay(actions_on(conn, tid, session), result_digest(session_result(conn, tid, session)))


def session_results(conn: Connection, tid: str) -> list[dict]:
    """The table's session results of its current generation, in order."""
    bodies = conn.execute(
        select(DerivedRecord.body).join(TableHead, TableHead.table_id == DerivedRecord.table_id)
        .where(DerivedRecord.table_id == tid, DerivedRecord.type == "session_result",
               DerivedRecord.generation == TableHead.generation)
        .order_by(DerivedRecord.idx)
    ).scalars()
    return [json.loads(b) for b in bodies]


def session_result(conn: Connection, tid: str, session: int) -> dict:
    results = session_results(conn, tid)
    if not 1 <= session <= len(results):
        raise SignOffError(f"table {tid}: no session result #{session} recorded")
    return results[session - 1]
