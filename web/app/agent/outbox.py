"""The agent's on-disk outbox (SQLite): an event leaves it only once the server answered.

Every event the agent makes is written here first, in order, with a commit that reaches
the disk (``synchronous=FULL``) before the agent goes on; the sender posts the oldest
events and deletes them only when the server acknowledged them (stored, or a duplicate of
one stored earlier). A network or server outage, or a killed agent, leaves them here to be
sent on the next try or the next start, in the same order and under the same ids, so a
resend is a duplicate on the server, never a second copy.

Evidence JPEGs wait here too until they are uploaded. Event ids are ``<run>-<n>``: ``run``
is chosen once when the outbox file is created and ``n`` counts on across restarts, so a
new outbox never reuses an id the server already holds.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
from pathlib import Path
from typing import Any

from referee.jsontext import loads

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS evidence (sha TEXT PRIMARY KEY, jpeg BLOB NOT NULL);
"""


class OutboxError(ValueError):
    """An event the outbox cannot keep (no id, or not JSON)."""


class Outbox:
    """Events waiting for the server, oldest first; safe to share between two threads."""

    def __init__(self, path: str | Path, run: str | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('run', ?)", (run or secrets.token_hex(4),))
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('next', '1')")
            self.run = self._db.execute("SELECT value FROM meta WHERE key = 'run'").fetchone()[0]

    def new_id(self) -> str:
        """The next event id of this outbox (never reused, also after a restart)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                (n,) = self._db.execute("SELECT value FROM meta WHERE key = 'next'").fetchone()
                self._db.execute("UPDATE meta SET value = ? WHERE key = 'next'", (str(int(n) + 1),))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return f"{self.run}-{n}"

    def put(self, event: dict[str, Any]) -> None:
        """Keep ``event`` (which carries its ``id``) until acknowledged; a second put of the
        same id keeps the first."""
        eid = event.get("id")
        if not isinstance(eid, str) or not eid:
            raise OutboxError(f"an outbox event needs a string 'id': {event!r}")
        try:
            body = json.dumps(event, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise OutboxError(f"event {eid} is not JSON: {exc}") from None
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO events (id, body) VALUES (?, ?)", (eid, body))

    def pending(self, limit: int = 100) -> list[dict[str, Any]]:
        """The oldest ``limit`` events not yet acknowledged, in the order they were put."""
        with self._lock:
            rows = self._db.execute("SELECT body FROM events ORDER BY seq LIMIT ?", (limit,)).fetchall()
        return [loads(body) for (body,) in rows]

    def ack(self, ids: list[str]) -> None:
        """The server holds these events: forget them."""
        with self._lock:
            self._db.executemany("DELETE FROM events WHERE id = ?", [(i,) for i in ids])

    def depth(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM events").fetchone()[0]

    def put_evidence(self, jpeg: bytes) -> str:
        """Keep a JPEG until it is uploaded; returns its sha256 (hex), the id events cite."""
        sha = hashlib.sha256(jpeg).hexdigest()
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO evidence VALUES (?, ?)", (sha, jpeg))
        return sha

    def evidence(self, sha: str) -> bytes | None:
        """The JPEG ``sha`` if it still waits for its upload (``None``: uploaded or unknown)."""
        with self._lock:
            row = self._db.execute("SELECT jpeg FROM evidence WHERE sha = ?", (sha,)).fetchone()
        return row[0] if row else None

    def evidence_uploaded(self, sha: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM evidence WHERE sha = ?", (sha,))

    def close(self) -> None:
        with self._lock:
            self._db.close()
