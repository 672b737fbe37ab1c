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
import hmac
import json

from referee.jsontext import DEFAULT_LIMITS, Limits, lone_surrogate

from .signing import mac

GENESIS = "0" * 64
EXACT_INT = 2 ** 53
"""Integral floats below this are written as integers (they are exactly representable)."""
BIG_INT = 10 ** 30
"""Below this no integer can be longer than a number may be (32 characters)."""
UNBOUNDED = Limits(max_bytes=2 ** 62, max_depth=10_000, max_number_chars=10_000)
CONTENT_ID_PREFIX = "c-"

EVENT = b"guandan-event-v2"
HEAD = b"guandan-head-v2"
MANIFEST = b"guandan-manifest-v2"
SEAL = b"guandan-seal-v2"


class NotPlainJSON(ValueError):
    """A value the store will not keep: beyond the limits of every door, or not JSON at all."""


def normalize(value: object, limits: Limits = DEFAULT_LIMITS, depth: int = 0) -> object:
    """``value`` with integral floats as ints (``0.0`` -> ``0``), recursively, checked against
    the limits of ``referee.jsontext`` (nesting depth, length of a number, text that is
    Unicode: no lone surrogate) as it goes."""
    if isinstance(value, str):
        if (found := lone_surrogate(value)) is not None:
            raise NotPlainJSON(f"a lone UTF-16 surrogate ({found}) in a string: not Unicode text")
        return value
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise NotPlainJSON(f"{value} is not a JSON number")
        if value.is_integer() and abs(value) < EXACT_INT:
            return int(value)
        if len(repr(value)) > limits.max_number_chars:
            raise NotPlainJSON(f"a number of {len(repr(value))} characters (limit {limits.max_number_chars})")
        return value
    if isinstance(value, int):
        if abs(value) >= BIG_INT and len(str(value)) > limits.max_number_chars:
            raise NotPlainJSON(f"a number of {len(str(value))} characters (limit {limits.max_number_chars})")
        return value
    if depth >= limits.max_depth:
        raise NotPlainJSON(f"nested deeper than {limits.max_depth} levels")
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise NotPlainJSON("an object key that is not a string")
        if (found := next(filter(None, map(lone_surrogate, value)), None)) is not None:
            raise NotPlainJSON(f"a lone UTF-16 surrogate ({found}) in a key: not Unicode text")
        return {k: normalize(v, limits, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalize(v, limits, depth + 1) for v in value]
    raise NotPlainJSON(f"a {type(value).__name__} is not JSON")


def canonical(obj: object) -> str:
    """The one JSON text of an object that is hashed and stored."""
    return _dumps(normalize(obj, UNBOUNDED))


def canonical_normalized(obj: object) -> str:
    """``canonical`` of a value ``normalize`` already returned."""
    return _dumps(obj)


def _dumps(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def content_id(payload_text: str) -> str:
    """An id for an event sent without one: the hash of its canonical text (table included)."""
    return CONTENT_ID_PREFIX + hashlib.sha256(payload_text.encode()).hexdigest()[:40]


def _num(value: float | None) -> bytes:
    return b"" if value is None else repr(float(value)).encode()


NO_RECORDS = hashlib.sha256(b"").hexdigest()


def records_digest(rows: list[tuple]) -> str:
    """Digest of the derived-record rows stored with one event: (generation, idx, type, deal, body)."""
    if not rows:
        return NO_RECORDS
    digest = hashlib.sha256()
    for row in rows:
        for part in row:
            data = b"" if part is None else str(part).encode()
            digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def event_link(key: bytes, prev: str, table_id: str, seq: int, event_id: str | None, kind: str,
               t: float | None, body: str, recorded_at: float, records: str, snapshot: bool) -> str:
    """The chain link (hex) of one stored event row.

    The fields are joined with NUL, which none of them can hold: ids are printable
    (``Store`` refuses others), the body is JSON (which escapes control characters), the
    rest are numbers, hex digests or known type names.
    """
    message = "\0".join((prev, table_id, str(seq), event_id or "", kind, _num_text(t), body,
                          _num_text(recorded_at), records, "1" if snapshot else "0"))
    return hmac.digest(key, EVENT + b"\0" + message.encode(), "sha256").hex()


def _num_text(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def head_mac(key: bytes, table_id: str, ruleset: str, head_seq: int, head_hash: str,
             generation: int, created_at: float) -> str:
    """MAC of a table's head row (every column but the MAC itself)."""
    return mac(key, HEAD, table_id.encode(), ruleset.encode(), str(head_seq).encode(),
               head_hash.encode(), str(generation).encode(), _num(created_at))


def manifest_mac(key: bytes, name: str, body: str) -> str:
    """MAC of a manifest or seal row (its name and body)."""
    return mac(key, MANIFEST if name == "tables" else SEAL, name.encode(), body.encode())
