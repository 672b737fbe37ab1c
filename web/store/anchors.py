"""Anchors: what the store held, kept beside the key, so that a rolled-back database is caught.

The chain, heads, manifest and seals prove that each row was written with the key, not
that the database is the newest one: an older copy of the whole file (or one table's rows
and head copied back from it) is signed just as well. So the store also keeps, outside
the database, beside the key (``signing.Key.home``/``anchors``, one file per store), a
signed record of the newest state it has seen: each table's head (seq, link, generation)
and the last id of the append-only sealed tables (sign-offs, tournament rulings). It
only ever moves forward: each write merges with the file (the higher seq of each table
wins) under a file lock, so the workers and commands that share a store share one anchor.

A store writes its anchor at most once a second while it appends (``EVERY_S``), once more
a second after the last append of a burst, and when it closes; ``verify`` checks the database against it and says which tables it could check.
A database behind its anchor (a head older than the anchored one, an anchored table or
sign-off gone, another history at an anchored seq) is a finding.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine, func, select
from sqlalchemy.engine import Connection, make_url

from .chain import canonical
from .models import SignOff, TableEvent, TableHead, TournamentRuling
from .signing import Key, mac, same

log = logging.getLogger(__name__)

ANCHOR = b"guandan-anchor-v1"
EVERY_S = 1.0
"""Longest a running store leaves its anchor behind what it appended (and closing writes it)."""
APPEND_ONLY = {m.__tablename__: m for m in (SignOff, TournamentRuling)}
"""Sealed tables whose rows are only ever added (numbered): their last id is anchored."""


class AnchorError(ValueError):
    """An anchor file that cannot be read or is not signed with this key."""


def store_name(url: str) -> str:
    """What names a store in its anchor: the SQLite file's full path, or the server URL
    (without its password) with the schema it names."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return f"sqlite:{Path(parsed.database or '').resolve()}"
    return parsed.render_as_string(hide_password=True)


def anchor_path(key: Key, url: str) -> Path | None:
    """The anchor file of the store at ``url``, beside ``key`` (None: a key with no folder)."""
    if getattr(key, "home", None) is None:
        return None
    digest = hashlib.sha256(store_name(url).encode()).hexdigest()[:24]
    return Path(key.home) / "anchors" / f"{digest}.json"


@dataclass
class Anchor:
    store: str
    at: float
    tables: dict[str, list] = field(default_factory=dict)
    """Table id -> [seq, link, generation] of its newest head seen."""
    rows: dict[str, int] = field(default_factory=dict)
    """Append-only sealed table -> its last id seen."""

    def body(self) -> str:
        return canonical({"store": self.store, "at": self.at, "tables": self.tables, "rows": self.rows})

    def merged(self, other: Anchor) -> Anchor:
        """The newer of each entry of ``self`` and ``other`` (an anchor never moves back)."""
        tables = dict(other.tables)
        for tid, entry in self.tables.items():
            if tid not in tables or entry[0] > tables[tid][0]:
                tables[tid] = entry
        rows = {name: max(self.rows.get(name, 0), other.rows.get(name, 0)) for name in {*self.rows, *other.rows}}
        return Anchor(self.store, max(self.at, other.at), tables, rows)


def read(path: Path, key: bytes) -> Anchor | None:
    """The anchor in ``path`` (None when there is none); ``AnchorError`` if it is not one
    this key signed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise AnchorError(f"anchor {path} cannot be read: {exc}") from None
    try:
        anchor = Anchor(data["store"], float(data["at"]), dict(data["tables"]), dict(data["rows"]))
    except (KeyError, TypeError, ValueError):
        raise AnchorError(f"anchor {path} is not an anchor file") from None
    if not same(data.get("mac"), mac(key, ANCHOR, anchor.body().encode())):
        raise AnchorError(f"anchor {path} is not signed by this store's key (edited, or another key's)")
    return anchor


def observe(conn: Connection, store: str, at: float) -> Anchor:
    """What the database holds now, as an anchor."""
    tables = {r.table_id: [r.head_seq, r.head_hash, r.generation] for r in conn.execute(
        select(TableHead.table_id, TableHead.head_seq, TableHead.head_hash, TableHead.generation))}
    rows = {name: conn.execute(select(func.max(model.id))).scalar_one() or 0 for name, model in APPEND_ONLY.items()}
    return Anchor(store, at, tables, rows)


class Anchors:
    """A store's anchor file: ``note`` after each write (written at most every ``EVERY_S``),
    ``write`` when the store closes."""

    def __init__(self, engine: Engine, key: Key, url: str, clock=time.monotonic):
        self.engine, self.key, self.clock = engine, key, clock
        self.store = store_name(url)
        self.path = anchor_path(key, url)
        self._due = 0.0
        self._pending = False
        self._failed = False
        self._timer: threading.Timer | None = None
        self._lock = threading.RLock()
        """Guards the bookkeeping above: the store's thread notes while a timer's thread writes."""

    def retire(self) -> None:
        """Set aside the anchor of a store that was at this path before (a new store was
        just made here): kept, renamed with the time, never checked against the new one."""
        if self.path is None:
            return
        try:
            self.path.rename(self.path.with_name(f"{self.path.stem}.before-{int(time.time())}.json"))
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("cannot set aside the old anchor %s: %s", self.path, exc)
            return
        log.warning("a new store at %s: the anchor of the store that was there before is kept aside",
                    self.store)

    def mark(self) -> None:
        """Something was committed that the next anchor must hold (a sign-off, a ruling)."""
        with self._lock:
            self._pending = True

    def note(self) -> None:
        """The store wrote: anchor it now if the last anchor is ``EVERY_S`` old, else once it
        is (a timer: the last writes of a burst are anchored though nothing follows them)."""
        with self._lock:
            self._pending = True
            if self.clock() >= self._due:
                self.write()
            elif self._timer is None and self.path is not None:
                self._timer = threading.Timer(max(0.0, self._due - self.clock()), self.write)
                self._timer.daemon = True
                self._timer.start()

    def write(self) -> None:
        """Merge what the database holds into the anchor file (locked, replaced whole)."""
        with self._lock:
            timer, self._timer = self._timer, None
            if timer is not None and timer is not threading.current_thread():
                timer.cancel()
            if not self._pending or self.path is None:
                return
            self._pending, self._due = False, self.clock() + EVERY_S
        try:
            with self.engine.connect() as conn:
                now = observe(conn, self.store, time.time())
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with open(self.path.with_suffix(".lock"), "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    kept = read(self.path, self.key)
                except AnchorError as exc:
                    log.warning("%s; writing a new one", exc)
                    kept = None
                anchor = now if kept is None else now.merged(kept)
                body = anchor.body()
                text = json.dumps({**json.loads(body), "mac": mac(self.key, ANCHOR, body.encode())},
                                  sort_keys=True, separators=(",", ":"))
                fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".anchor-")
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(text)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, self.path)
            self._failed = False
        except OSError as exc:  # the anchor is a second witness: never a reason to lose a write
            if not self._failed:
                log.warning("cannot write the store's anchor %s: %s", self.path, exc)
            self._failed = True


def check(conn: Connection, anchor: Anchor, name: str) -> tuple[list[tuple[str | None, int | None, str]],
                                                                 list[str]]:
    """Findings (table, seq, message) of the database against ``anchor``, and the tables
    the database holds that the anchor does not name (not checked)."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(anchor.at))
    heads = {r.table_id: r for r in conn.execute(select(TableHead.table_id, TableHead.head_seq))}
    findings: list[tuple[str | None, int | None, str]] = []
    for tid, (seq, link, _generation) in sorted(anchor.tables.items()):
        head = heads.get(tid)
        if head is None:
            findings.append((tid, None, f"rolled back: the anchor of {when} ({name}) saw it at seq {seq}; "
                                        "the database does not hold it"))
        elif head.head_seq < seq:
            findings.append((tid, None, f"rolled back: the database ends at seq {head.head_seq}, the anchor of "
                                        f"{when} ({name}) saw seq {seq} (an older copy of the database?)"))
        elif conn.execute(select(TableEvent.hash).where(TableEvent.table_id == tid, TableEvent.seq == seq)
                          ).scalar_one_or_none() not in (link, None):  # a missing row: the chain names it
            findings.append((tid, seq, f"not the history the anchor of {when} ({name}) saw (replaced)"))
    for table, last in sorted(anchor.rows.items()):
        held = conn.execute(select(func.max(APPEND_ONLY[table].id))).scalar_one() or 0
        if held < last:
            findings.append((None, None, f"{table}: rolled back: the last row is id {held}, the anchor of {when} "
                                         f"({name}) saw id {last}"))
    return findings, sorted(set(heads) - set(anchor.tables))
