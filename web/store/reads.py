"""What the store gives back to read: tables, events, derived records, refused events, the
audit trail. Plain dicts (JSON as stored), for pages, the API and the command line."""

from __future__ import annotations

import json
from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.engine import Connection

from .models import DerivedRecord, RejectedEvent, TableHead
from .queries import EVENTS_AFTER, IN_CHUNK, events_between_query, values_params


def tables(conn: Connection) -> list[dict]:
    rows = conn.execute(select(TableHead).order_by(TableHead.table_id)).all()
    return [dict(table=r.table_id, ruleset=r.ruleset, head_seq=r.head_seq, generation=r.generation) for r in rows]


def events(conn: Connection, table_id: str, after: int = 0) -> list[dict]:
    """Accepted events of a table after ``after`` in order, each with its ``seq``."""
    rows = conn.execute(EVENTS_AFTER, {"table_id": table_id, "after": after}).all()
    return [{"seq": r.seq, **json.loads(r.body)} for r in rows]


def events_between(conn: Connection, ranges: dict[str, tuple[int, int]]) -> dict[str, list[dict]]:
    """``table -> (lo, hi)`` -> ``table -> the events with lo < seq <= hi``, in one query per
    ``IN_CHUNK`` tables rather than one per table."""
    found: dict[str, list[dict]] = {table: [] for table in ranges}
    asked = [(table, lo, hi) for table, (lo, hi) in ranges.items()]
    for start in range(0, len(asked), IN_CHUNK):
        chunk = asked[start:start + IN_CHUNK]
        for r in conn.execute(events_between_query(len(chunk)), values_params(chunk, "tlh")):
            found[r.table_id].append({"seq": r.seq, **json.loads(r.body)})
    return found


def records(conn: Connection, table_id: str | None, types: Iterable[str] | None,
            generation: int | None) -> list[dict]:
    """Derived records (current generation unless named), each with its ``table``."""
    query = (
        select(DerivedRecord.table_id, DerivedRecord.body)
        .join(TableHead, TableHead.table_id == DerivedRecord.table_id)
        .order_by(DerivedRecord.table_id, DerivedRecord.idx)
    )
    if generation is None:
        query = query.where(DerivedRecord.generation == TableHead.generation)
    else:
        query = query.where(DerivedRecord.generation == generation)
    if table_id is not None:
        query = query.where(DerivedRecord.table_id == table_id)
    if types is not None:
        query = query.where(DerivedRecord.type.in_(list(types)))
    return [{**json.loads(r.body), "table": r.table_id} for r in conn.execute(query)]


def refused(conn: Connection, table_id: str | None) -> list[dict]:
    """The refused events kept, oldest first (of one table, or all)."""
    query = select(RejectedEvent).order_by(RejectedEvent.id)
    if table_id is not None:
        query = query.where(RejectedEvent.table_id == table_id)
    return [dict(table=r.table_id, body=r.body, reason=r.reason) for r in conn.execute(query)]


def audit(table_events: list[dict]) -> list[dict]:
    """Corrections and penalties among a table's events, each correction beside the event it replaces."""
    by_id = {str(e["id"]): e for e in table_events if e.get("id") is not None}
    trail = []
    for e in table_events:
        if e["type"] == "correction":
            trail.append({"seq": e["seq"], "type": "correction", "by": e["by"], "t": e["t"],
                          "original": by_id.get(str(e["of"])), "replacement": e["event"]})
        elif e["type"] == "penalty":
            trail.append({"seq": e["seq"], "type": "penalty", "by": e["by"], "t": e["t"],
                          "side": e.get("side"), "level": e.get("level"), "rule": e.get("rule")})
    return trail
