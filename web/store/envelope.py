"""The checks an event passes once, before any table is read: ``prepare``.

Each event is validated once, by ``referee.events.parse_event``, on the form the store
keeps (``chain.normalize``: within the limits of every door, integral floats as integers),
so that what is judged is what is stored; the store adds only what is its own: the table
id, the id (content-derived when the event has none, ``chain.content_id``) and the size of
the stored text. The typed event travels on with its canonical text (``Item``): the
checks against the table and the referee take the one, the chain and the rows the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee import jsontext
from referee.events import Event, EventError, parse_event
from referee.jsontext import lone_surrogate

from .chain import NotPlainJSON, canonical, canonical_normalized, content_id, normalize
from .outcomes import EventRejected

MAX_ID = 120
"""Longest table id or event id (characters)."""
MAX_EVENT_BYTES = jsontext.DEFAULT_LIMITS.max_bytes
"""Longest stored event text (canonical JSON, UTF-8): the limit of every door."""
MAX_KEPT_BODY = 100_000
MAX_KEPT_REASON = 10_000
"""Characters of a refused event's text and reason kept in ``rejected_events``."""


@dataclass(frozen=True)
class Item:
    """An event that passed the envelope."""

    table_id: str
    event: Event
    """The typed event (its ``table`` and ``id`` are the stored ones)."""
    data: dict
    """The event as stored (what ``body`` is the text of): for ``hooks.TableRules``."""
    body: str
    """The canonical text that is stored and chained."""
    event_id: str


def prepare(raw: object, table_id: str | None = None) -> Item:
    """Check an event once (``parse_event``) plus what the store adds; raise ``EventRejected``."""
    if not isinstance(raw, dict):
        raise EventRejected(table_id, f"an event must be a JSON object, not {type(raw).__name__}")
    tid = raw.get("table", table_id)
    if table_id is not None and tid != table_id:
        raise EventRejected(table_id, f"event names table {tid!r}, not {table_id!r}")
    if not valid_table_id(tid):
        raise EventRejected(None, f"missing or bad 'table': {short(tid)}")
    try:
        stored = normalize({**raw, "table": tid})  # the limits every door applies, before parsing
        if stored.get("id") is None:
            stored["id"] = content_id(canonical_normalized(stored))
        event = parse_event(stored)
        eid = stored["id"]
        if isinstance(eid, bool):
            raise EventError(f"{event.kind}.id: expected a string, got {eid!r}")
        eid = str(eid)
        if len(eid) > MAX_ID or not eid.isprintable():
            raise EventError(f"'id' must be printable and at most {MAX_ID} characters: {short(eid)}")
        body = canonical_normalized(stored)
        if len(body) > MAX_EVENT_BYTES // 4 and len(body.encode()) > MAX_EVENT_BYTES:
            raise EventError(f"{len(body.encode())} bytes as stored (limit {MAX_EVENT_BYTES})")
    except (EventError, NotPlainJSON) as exc:
        raise EventRejected(tid, str(exc)) from None
    except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
        raise EventRejected(tid, f"not representable as JSON: {str(exc)[:120]}") from None
    return Item(tid, event, stored, body, eid)


def valid_table_id(tid: object) -> bool:
    return isinstance(tid, str) and bool(tid.strip()) and len(tid) <= MAX_ID and tid.isprintable()


def short(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def refused_text(event: object) -> str:
    """The text kept of an event refused as sent (before it had a canonical form)."""
    try:
        return canonical(event)
    except (TypeError, ValueError, RecursionError):
        return short(event, 1000)


def rejection_row(tid: str | None, text: str, reason: str, at: float) -> dict:
    """A ``rejected_events`` row: the refused event's ``text`` and why it was refused."""
    keep_tid = isinstance(tid, str) and len(tid) <= MAX_ID and tid.isprintable() and lone_surrogate(tid) is None
    return dict(table_id=tid if keep_tid else None, body=_storable(text[:MAX_KEPT_BODY]),
                reason=_storable(reason[:MAX_KEPT_REASON]), received_at=at)


def _storable(text: str) -> str:
    """``text`` as a database takes it: a lone surrogate (in a refused event) escaped."""
    return text if lone_surrogate(text) is None else text.encode("utf-8", "backslashreplace").decode()
