"""Sign-off links (S3 at the table): each side of a finished round signs on its own phone.

When a drawn table's round ends, a scorer issues one short-lived link per side (shown as a
QR code) with a 6-digit code for those who type. Opened without a login, it shows the
table's result; a captain signs as one of the pair's registered players, or disputes with
a reason. Why so: a side's signature should come from the side, not from whoever holds
the scorer's login, and nothing is easier at a table than scanning a code.

A link opens for its own table and side only, works once (a sign or a dispute spends it),
and expires: ``ttl_s`` after issue (default 30 min), and never past X7's 30 minutes after
the round (seed 000 第五章 一), the last window in which a side acts on its own result.
Issuing again replaces the side's earlier links. Only digests are kept (SHA-256 of the
random token; a keyed digest of the code, which is too short to hash bare), in sealed
rows; a link row the seal does not vouch for (written without the key) never opens.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection, Row

from referee.seats import SIDES
from web.store import Store
from web.store.db import WRITE
from web.store.models import Match, Pair, SignLink, SignOff, SignOffDoor, TableHead

from . import signoff
from .clock import clock_time
from .signoff import APPEAL_S, Door, SignOffError, SignOffStatus

TTL_S = 30 * 60.0
"""How long a link opens by default: the whole of X7's window after the round."""
CODE_KEY = b"sign-off codes"
CODE_DIGITS = 6
DONE = {"sign": "signed", "dispute": "disputed"}


class LinkRefused(SignOffError):
    """A sign-off link or code that does not open (unknown, another table or side, spent,
    replaced, expired), or an action it refuses: the reason in words, and its ``kind`` (a
    word the dashboard says in the reader's language)."""

    def __init__(self, message: str, kind: str = "other"):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Issued:
    """A new link as handed out once: the token and code are kept nowhere else."""

    side: str
    token: str
    code: str
    expires_at: float


@dataclass(frozen=True)
class Link:
    """An open link: which result and side it signs, and who may sign for that side."""

    id: int
    table_id: str
    session: int
    side: str
    expires_at: float
    pair: str
    pair_name: str
    players: tuple[str, str]


def check_ttl(ttl_s: float) -> float:
    """A link's lifetime, refused by name outside (0, X7's 30 minutes]."""
    if not 0 < ttl_s <= APPEAL_S:
        raise ValueError(f"a sign-off link's lifetime is between 1 s and {APPEAL_S / 60:g} min "
                         f"(X7: the side's window after the round), not {ttl_s / 60:g} min")
    return ttl_s


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def code_digest(store: Store, table_id: str, code: str) -> str:
    """A code's digest, keyed (a million codes are hashed in a blink) and per table."""
    return hmac.new(store.derived_key(CODE_KEY), f"{table_id}\n{code}".encode(), hashlib.sha256).hexdigest()


def issue(store: Store, table_id: str, by: str, ttl_s: float = TTL_S) -> list[Issued]:
    """New links for the sides of the table's last result that have not signed yet; the
    sides' earlier links are replaced. Refused for a table outside an event (no pair list
    to sign from), without a result, with a result disputed or final, or past X7."""
    check_ttl(ttl_s)
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        _lock_table(conn, table_id)
        for side in SIDES:  # a table outside an event has no pair list to sign from
            pair_of(conn, table_id, side)
        session = len(signoff.session_results(conn, table_id))
        if not session:
            raise LinkRefused(f"table {table_id}: no result yet; its links come when the round ends", "no_result")
        status = signoff.status_on(conn, table_id, session)
        if status.state != "pending":
            raise LinkRefused(f"table {table_id}: the result is {status.state}; "
                              + ("a referee resolves the dispute first" if status.state == "disputed"
                                 else "both sides signed"), "state")
        now = store.clock()
        ended = signoff.round_ended_at(conn, table_id, session)
        expires = min(now + ttl_s, ended + APPEAL_S)
        if expires <= now:
            raise LinkRefused(f"table {table_id}: the round ended at {clock_time(ended)}; X7's "
                              f"{APPEAL_S / 60:g} minutes are past, so the sides sign at the desk", "late")
        conn.execute(update(SignLink).where(SignLink.table_id == table_id, SignLink.ended.is_(None))
                     .values(ended="replaced", ended_at=now))
        issued, codes = [], set()
        for side in (s for s in SIDES if s not in status.signed):
            token = secrets.token_urlsafe(24)
            code = next(c for c in iter(lambda: f"{secrets.randbelow(10 ** CODE_DIGITS):0{CODE_DIGITS}d}", None)
                        if c not in codes)
            codes.add(code)
            conn.execute(insert(SignLink).values(
                table_id=table_id, session=session, side=side, token_hash=token_digest(token),
                code_hash=code_digest(store, table_id, code), issued_by=by, issued_at=now, expires_at=expires))
            issued.append(Issued(side, token, code, expires))
        return issued


def _lock_table(conn: Connection, table_id: str) -> None:
    """Lock the table's head row first, as every sign-off does (``signoff.act_on``): issuing
    and spending links then take turns with each other and with signatures, never deadlock."""
    conn.execute(select(TableHead.table_id).where(TableHead.table_id == table_id).with_for_update()).first()


def pair_of(conn: Connection, table_id: str, side: str) -> Row:
    """The row of the pair that plays ``side`` at a drawn table (its players are who may sign)."""
    match = conn.execute(select(Match).where(Match.table_id == table_id)).first()
    if match is None:
        raise LinkRefused(f"table {table_id} is not drawn in an event: there is no pair list to sign "
                          "from, so its sides sign at the desk", "no_pairs")
    pair_id = match.ns_pair if side == "NS" else match.ew_pair
    pair = conn.execute(select(Pair).where(Pair.tournament_id == match.tournament_id,
                                           Pair.pair_id == pair_id)).first()
    if pair is None:
        raise LinkRefused(f"table {table_id}: {side} has no pair (a bye) to sign", "no_pairs")
    return pair


def players(store: Store, table_id: str) -> dict[str, Row] | None:
    """The pair of each side of a drawn table (who may sign for it), or None outside an event."""
    with store.engine.connect() as conn:
        try:
            return {side: pair_of(conn, table_id, side) for side in SIDES}
        except LinkRefused:
            return None


def by_token(store: Store, table_id: str, side: str, token: str) -> Link:
    """The open link ``token`` names, for ``table_id`` and ``side`` only (else refused, why)."""
    with store.engine.connect() as conn:
        return _open(store, conn, table_id, side, lambda r: hmac.compare_digest(r["token_hash"], token_digest(token)))


def by_code(store: Store, table_id: str, code: str) -> Link:
    """The open link of ``table_id`` whose 6-digit code is ``code`` (else refused, why)."""
    code = code.strip()
    if not (len(code) == CODE_DIGITS and code.isascii() and code.isdigit()):
        raise LinkRefused(f"a sign-off code is {CODE_DIGITS} digits, not {code[:20]!r}", "code_format")
    digest = code_digest(store, table_id, code)
    with store.engine.connect() as conn:
        return _open(store, conn, table_id, None, lambda r: hmac.compare_digest(r["code_hash"], digest)
                     and r["table_id"] == table_id and r["ended"] is None)


def _open(store: Store, conn: Connection, table_id: str, side: str | None, match, lock: bool = False) -> Link:
    """The link row ``match`` picks among the sealed ones, checked: its table, its side,
    not spent, replaced or expired."""
    row = next((r for r in store.sealed_rows("sign_links", conn).values() if match(r)), None)
    if row is None:
        raise LinkRefused("this sign-off link or code is not known here (mistyped, or not issued by this desk)",
                          "unknown")
    if lock:  # two phones of one side: the second waits, then finds the link spent
        conn.execute(select(SignLink.id).where(SignLink.id == row["id"]).with_for_update()).first()
        row = {**row, **conn.execute(select(SignLink.ended, SignLink.ended_at)
                                     .where(SignLink.id == row["id"])).mappings().one()}
    if row["table_id"] != table_id:
        raise LinkRefused(f"this sign-off link is for table {row['table_id']}, not table {table_id}",
                          "other_table")
    if side is not None and row["side"] != side:
        raise LinkRefused(f"this sign-off link is for {row['side']}, not {side}: each side signs with its own",
                          "other_side")
    if row["ended"] == "used":
        raise LinkRefused(f"this sign-off link was used at {clock_time(row['ended_at'])} ({_use(conn, row['id'])}); "
                          "it works once", "used")
    if row["ended"] == "replaced":
        raise LinkRefused(f"a newer link replaced this one at {clock_time(row['ended_at'])}; use the newest",
                          "replaced")
    if store.clock() > row["expires_at"]:
        raise LinkRefused(f"this sign-off link expired at {clock_time(row['expires_at'])}; "
                          "the scorer issues a new one, or the side signs at the desk", "expired")
    pair = pair_of(conn, table_id, row["side"])
    return Link(row["id"], row["table_id"], row["session"], row["side"], row["expires_at"], pair.pair_id,
                pair.name, (pair.player1, pair.player2))


def _use(conn: Connection, link_id: int) -> str:
    """What spent a link: "signed by A1" or "disputed by A2"."""
    act = conn.execute(select(SignOff.action, SignOff.by).join(SignOffDoor, SignOffDoor.signoff_id == SignOff.id)
                       .where(SignOffDoor.link_id == link_id)).first()
    return f"{DONE.get(act.action, act.action)} by {act.by}" if act else "no action kept"


def redeem(store: Store, link: Link, action: str, by: str, note: str = "") -> SignOffStatus:
    """Sign or dispute through ``link`` as ``by`` (one of the side's players), and spend it,
    in one transaction: a refused action (not a player, a dispute without a reason, a
    result already disputed) leaves the link open."""
    if action not in ("sign", "dispute"):
        raise LinkRefused(f"a sign-off link signs or disputes, not {action!r}", "other")
    if by not in link.players:
        raise LinkRefused(f"{action}: {by!r} is not a player of pair {link.pair} ({' / '.join(link.players)})",
                          "not_player")
    if action == "dispute" and not note.strip():
        raise LinkRefused("dispute: the reason is needed", "no_reason")
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        _lock_table(conn, link.table_id)
        _open(store, conn, link.table_id, link.side, lambda r: r["id"] == link.id, lock=True)
        status = signoff.act_on(conn, store, action, link.table_id, link.session, link.side, by,
                                note.strip() if action == "dispute" else None, door=Door("link", link_id=link.id))
        conn.execute(update(SignLink).where(SignLink.id == link.id).values(ended="used", ended_at=store.clock()))
        return status


def links(store: Store, table_id: str) -> list[dict]:
    """The table's links, newest first, as the desk sees them: side, session, issued
    (by, at), expires, and how each ended (``used``, ``replaced``, ``expired``) or ``open``."""
    now = store.clock()
    with store.engine.connect() as conn:
        rows = conn.execute(select(SignLink).where(SignLink.table_id == table_id)
                            .order_by(SignLink.id.desc())).mappings().all()
    return [{"side": r["side"], "session": r["session"], "issued_by": r["issued_by"],
             "issued_at": clock_time(r["issued_at"]), "expires_at": clock_time(r["expires_at"]),
             "state": r["ended"] or ("expired" if now > r["expires_at"] else "open")} for r in rows]
