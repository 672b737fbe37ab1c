"""Sign-off of a session result (S3): both sides confirm; a dispute reopens it.

Every sign-off action (sign, dispute, resolve) is kept in order; the status is the replay
of those actions against the *current* result. A signature names the digest of the
result it confirmed, so a correction that changes the result voids it. A side signs a
result once: a second signature, even by the partner, is refused with who signed when,
since a changed signer means the side no longer stands by the first signature, which is
a dispute for a referee to resolve (after which both sides sign again).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from referee.seats import SIDES
from web.store import Store
from web.store.db import WRITE
from web.store.models import DerivedRecord, Match, Official, Pair, SignOff, TableHead


class SignOffError(ValueError):
    """A sign-off action that does not fit the result's state."""


def result_digest(result: dict) -> str:
    """Digest of a session result as stored (canonical JSON)."""
    return hashlib.sha256(json.dumps(result, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def wall_time(at: float) -> str:
    """A sign-off time as people read it on a sheet or in an error (UTC)."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


@dataclass
class SignOffStatus:
    state: str = "pending"
    """``pending`` (awaiting signatures), ``final`` (both sides signed), ``disputed``."""
    signed: dict[str, str] = field(default_factory=dict)
    """side -> who signed the current result."""
    signed_at: dict[str, float] = field(default_factory=dict)
    """side -> when (wall time, seconds since the epoch)."""
    dispute: str | None = None

    def as_dict(self) -> dict:
        return {"state": self.state, "signed": dict(self.signed), "dispute": self.dispute,
                "signed_at": {side: wall_time(at) for side, at in self.signed_at.items()}}


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
            status.signed.setdefault(act["side"], act["by"])
            status.signed_at.setdefault(act["side"], act["at"])
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


def sign(store: Store, table_id: str, side: str, by: str, session: int = 1) -> SignOffStatus:
    """``by`` confirms the current result of ``session`` for ``side`` (S3)."""
    return _act(store, "sign", table_id, session, side, by, None)


def dispute(store: Store, table_id: str, side: str, by: str, note: str, session: int = 1) -> SignOffStatus:
    """A side disputes the result: signatures are void until a referee resolves it."""
    return _act(store, "dispute", table_id, session, side, by, note)


def resolve(store: Store, table_id: str, by: str, note: str = "", session: int = 1) -> SignOffStatus:
    """An official closes a dispute (after any correction); both sides sign again."""
    return _act(store, "resolve", table_id, session, None, by, note)


def _act(store: Store, action: str, tid: str, session: int, side: str | None, by: str,
         note: str | None) -> SignOffStatus:
    """Check and keep one action; the table's head row is locked so that two sign-offs
    of one table are taken one after the other, each seeing the other."""
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        conn.execute(select(TableHead.table_id).where(TableHead.table_id == tid).with_for_update()).first()
        digest = result_digest(session_result(conn, tid, session))
        actions = actions_on(conn, tid, session)
        check_action(action, side, replay(actions, digest))
        _check_signer(conn, tid, action, side, by)
        row = dict(table_id=tid, session=session, action=action, side=side, by=by,
                   result_digest=digest, note=note, at=store.clock())
        conn.execute(insert(SignOff).values(**row))
        return replay([*actions, row], digest)


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
    rows = conn.execute(
        select(SignOff).where(SignOff.table_id == tid, SignOff.session == session).order_by(SignOff.id)
    ).all()
    return [dict(action=r.action, side=r.side, by=r.by, result_digest=r.result_digest, note=r.note, at=r.at)
            for r in rows]


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
