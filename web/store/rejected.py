"""Refused events, kept within bounds: each table's latest bodies and a tally of the rest.

A refused event is kept with its reason so that an operator sees what a table's agent
sent wrong. But an agent (broken, or in hostile hands) can send refusals without end, up
to a thousand events of 100 KB a request, and the database would grow with each. So the
store keeps the latest ``KEEP`` bodies of each table (a token posts to its own table only,
so this bounds every token too; events refused before any table was known count under
``""``), and per table a tally: how many events were refused in all, how many of the
oldest had their bodies dropped, and those dropped summed up by reason (numbers and
quoted text taken out, at most ``MAX_REASONS`` kinds, the rest as ``other``).
"""

from __future__ import annotations

import json
import re

from sqlalchemy import delete, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from .models import RejectedEvent, RejectedTally

KEEP = 200
"""Refused bodies kept per table (the latest)."""
MAX_REASONS = 50
"""Kinds of reason a table's tally names; the rest count as ``OTHER``."""
OTHER = "other"
NONE = ""
"""The tally of events refused before any table was known (no table, or a bad one)."""


def kind_of(reason: str) -> str:
    """A reason without what varies from one event to the next (numbers, quoted text)."""
    text = re.sub(r"(?<![A-Za-z])'[^']*'(?![A-Za-z])|\"[^\"]*\"", "'…'", reason)
    return re.sub(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?", "N", text)[:120]


def keep(conn: Connection, rows: list[dict], limit: int = KEEP) -> None:
    """Insert ``rows`` (of ``rejected_events``), count them in their tables' tallies, and
    drop the bodies of each table's oldest beyond ``limit``, summed up in its tally."""
    conn.execute(insert(RejectedEvent), rows)
    tables: dict[str, list[dict]] = {}
    for row in rows:
        tables.setdefault(row["table_id"] or NONE, []).append(row)
    for tid in sorted(tables):  # in one order: two writers never wait on each other's tallies
        _count(conn, tid, len(tables[tid]), min(r["received_at"] for r in tables[tid]),
               max(r["received_at"] for r in tables[tid]))
        tally = conn.execute(select(RejectedTally).where(RejectedTally.table_id == tid)).one()
        excess = tally.rejected - tally.dropped - limit
        if excess <= 0:
            continue
        of_table = RejectedEvent.table_id.is_(None) if tid == NONE else RejectedEvent.table_id == tid
        oldest = conn.execute(select(RejectedEvent.id, RejectedEvent.reason).where(of_table)
                              .order_by(RejectedEvent.id).limit(excess)).all()
        if not oldest:
            continue
        conn.execute(delete(RejectedEvent).where(of_table, RejectedEvent.id <= oldest[-1].id))
        reasons = json.loads(tally.reasons)
        for row in oldest:
            kind = kind_of(row.reason)
            kind = kind if kind in reasons or len(reasons) < MAX_REASONS else OTHER
            reasons[kind] = reasons.get(kind, 0) + 1
        conn.execute(update(RejectedTally).where(RejectedTally.table_id == tid).values(
            dropped=tally.dropped + len(oldest), reasons=json.dumps(reasons, ensure_ascii=False, sort_keys=True)))


def _count(conn: Connection, tid: str, n: int, first: float, last: float) -> None:
    """Add ``n`` refusals to the table's tally, making it if it is the first (one statement,
    so two writers counting a table's first refusals at once both count)."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    stmt = dialect.insert(RejectedTally).values(table_id=tid, rejected=n, dropped=0, first_at=first, last_at=last,
                                                reasons="{}")
    conn.execute(stmt.on_conflict_do_update(index_elements=["table_id"], set_={
        "rejected": RejectedTally.rejected + stmt.excluded.rejected, "last_at": stmt.excluded.last_at}))


def tally(conn: Connection, table_id: str | None) -> dict | None:
    """A table's tally (``None``: the events refused before any table was known), or None
    when nothing was refused there: rejected, kept, dropped, first_at, last_at and the
    dropped events' reasons (kind -> how many)."""
    row = conn.execute(select(RejectedTally).where(RejectedTally.table_id == (table_id or NONE))).first()
    if row is None:
        return None
    return dict(table=table_id, rejected=row.rejected, kept=row.rejected - row.dropped, dropped=row.dropped,
                first_at=row.first_at, last_at=row.last_at, reasons=json.loads(row.reasons))
