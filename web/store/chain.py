"""What the store's key signs, and the one canonical text of an event.

Each table is a chain: the link of event ``seq`` is a keyed MAC over the previous link
and every stored column of the event row (id, type, ``t``, body, when it was recorded),
the derived records stored with it and whether a snapshot was taken after it. The table's
head row carries a MAC over its ruleset, last sequence number, last link and generation
(a tail cut with the head moved back is caught), and a signed manifest lists the tables
(a deleted table is named). Without the key, a rewritten history cannot be re-sealed.

Canonical form: events are stored as sorted, compact JSON with every integral float
written as an integer, so that a resend differing only in number formatting (``0`` vs
``0.0``) is byte-for-byte the same event; an event without an ``id`` gets one derived from
that form (table, ``t``, type and payload), which makes re-importing a file a no-op.
"""

from __future__ import annotations

import hashlib
import json

from .signing import mac

GENESIS = "0" * 64
EXACT_INT = 2 ** 53
"""Integral floats below this are written as integers (they are exactly representable)."""
CONTENT_ID_PREFIX = "c-"

EVENT = b"guandan-event-v2"
HEAD = b"guandan-head-v2"
MANIFEST = b"guandan-manifest-v2"
SEAL = b"guandan-seal-v2"


def normalize(value: object) -> object:
    """``value`` with integral floats as ints (``0.0`` -> ``0``), recursively."""
    if isinstance(value, float) and value.is_integer() and abs(value) < EXACT_INT:
        return int(value)
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalize(v) for v in value]
    return value


def canonical(obj: object) -> str:
    """The one JSON text of an object that is hashed and stored."""
    return json.dumps(normalize(obj), sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False)


def content_id(event: dict) -> str:
    """An id for an event sent without one: the hash of its canonical form (table included)."""
    payload = {k: v for k, v in event.items() if k != "id"}
    return CONTENT_ID_PREFIX + hashlib.sha256(canonical(payload).encode()).hexdigest()[:40]


def _num(value: float | None) -> bytes:
    return b"" if value is None else repr(float(value)).encode()


def records_digest(rows: list[tuple]) -> str:
    """Digest of the derived-record rows stored with one event: (generation, idx, type, deal, body)."""
    return hashlib.sha256(canonical([list(r) for r in rows]).encode()).hexdigest()


def event_link(key: bytes, prev: str, table_id: str, seq: int, event_id: str | None, kind: str,
               t: float | None, body: str, recorded_at: float, records: str, snapshot: bool) -> str:
    """The chain link (hex) of one stored event row."""
    return mac(key, EVENT, prev.encode(), table_id.encode(), str(seq).encode(),
               (event_id or "").encode(), kind.encode(), _num(t), body.encode(), _num(recorded_at),
               records.encode(), b"1" if snapshot else b"0")


def head_mac(key: bytes, table_id: str, ruleset: str, head_seq: int, head_hash: str,
             generation: int, created_at: float) -> str:
    """MAC of a table's head row (every column but the MAC itself)."""
    return mac(key, HEAD, table_id.encode(), ruleset.encode(), str(head_seq).encode(),
               head_hash.encode(), str(generation).encode(), _num(created_at))


def manifest_mac(key: bytes, name: str, body: str) -> str:
    """MAC of a manifest or seal row (its name and body)."""
    return mac(key, MANIFEST if name == "tables" else SEAL, name.encode(), body.encode())
