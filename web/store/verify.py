"""Verification: everything the store keeps is checked against the key, finding by finding.

``verify`` never stops at the first problem and never crashes on a damaged database: each
part (SQLite's own integrity check, the manifest, each table's chain, head, derived
records and snapshots, each sealed table) is read on its own, and a part that cannot be
read is itself a finding. Each finding names the table and, where there is one, the
sequence number.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from referee import jsontext
from referee.events import EventError, parse_event

from . import anchors, seals
from .chain import GENESIS, canonical, event_link, head_mac, records_digest
from .derive import DERIVED_TYPES, Derivation
from .models import DerivedRecord, Snapshot, TableEvent, TableHead
from .signing import same, snapshot_is_authentic

SNAPSHOT_LIMITS = jsontext.Limits(max_bytes=64 * 1024 * 1024, max_depth=64, max_number_chars=32)
"""What a snapshot blob must fit to be handed to the referee (plain JSON data)."""
MAX_FINDINGS_PER_TABLE = 20
"""Past this, a table's further findings are counted, not listed (a wholesale rewrite
would otherwise print one line per event)."""


@dataclass(frozen=True)
class Finding:
    table: str | None
    seq: int | None
    message: str

    def __str__(self) -> str:
        where = f"table {self.table}: " if self.table is not None else ""
        at = f"seq {self.seq}: " if self.seq is not None else ""
        return f"{where}{at}{self.message}"


@dataclass
class VerifyReport:
    tables: int = 0
    events: int = 0
    findings: list[Finding] = field(default_factory=list)
    anchor: str = ""
    """What the database was checked against for a rollback, and how many tables it covered."""
    unanchored: list[str] = field(default_factory=list)
    """Tables the anchor does not name (made since it was written, or it is missing): their
    rollback could not be checked."""

    @property
    def problems(self) -> list[str]:
        return [str(f) for f in self.findings]

    @property
    def ok(self) -> bool:
        return not self.findings


def plain(blob: object) -> bool:
    """True if a snapshot blob is plain JSON data within ``SNAPSHOT_LIMITS`` (never a pickle)."""
    if not isinstance(blob, bytes | bytearray):
        return False
    try:
        return isinstance(jsontext.loads(bytes(blob), SNAPSHOT_LIMITS), dict | list)
    except jsontext.JSONTextError:
        return False


def verify(engine: Engine, key: bytes, derivation: Derivation, rederive: bool = False,
           anchor: Path | None = None) -> VerifyReport:
    """Check the whole store, and against the anchor file ``anchor`` (``anchors``) if given;
    see the module docstring."""
    report = VerifyReport()
    if engine.dialect.name == "sqlite":
        _guarded(report, None, "the database file", lambda: _integrity(engine, report))
    heads: list = []
    with engine.connect() as conn:
        _guarded(report, None, "the table heads", lambda: heads.extend(
            conn.execute(select(TableHead).order_by(TableHead.table_id)).all()))
        _guarded(report, None, "the table manifest", lambda: report.findings.extend(
            Finding(t, None, m) for t, m in seals.check_manifest(conn, key, {h.table_id for h in heads})))
        for head in heads:
            report.tables += 1
            _guarded(report, head.table_id, "its events",
                     lambda head=head: _table(conn, key, head, report, derivation if rederive else None))
        for table in seals.SEALED:
            _guarded(report, None, table, lambda table=table: report.findings.extend(
                Finding(None, None, m) for m in seals.check_rows(conn, key, table)))
        if anchor is not None:
            _guarded(report, None, "the anchor", lambda: _anchored(conn, key, anchor, heads, report))
        else:
            report.anchor = "no anchor: the key was handed over with no folder beside it to keep one"
            report.unanchored = [h.table_id for h in heads]
    return report


def _anchored(conn: Connection, key: bytes, path: Path, heads: list, report: VerifyReport) -> None:
    """The database against its anchor: findings, and which tables could be checked."""
    try:
        anchor = anchors.read(path, key)
    except anchors.AnchorError as exc:
        report.findings.append(Finding(None, None, str(exc)))
        report.anchor, report.unanchored = f"{path} unusable: no table checked for a rollback", [
            h.table_id for h in heads]
        return
    if anchor is None:
        report.anchor = f"no anchor at {path}: no table checked for a rollback"
        report.unanchored = [h.table_id for h in heads]
        return
    found, report.unanchored = anchors.check(conn, anchor, path.name)
    report.findings.extend(Finding(t, s, m) for t, s, m in found)
    checked = len(heads) - len(report.unanchored)
    report.anchor = (f"anchor {path} of {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(anchor.at))}: "
                     f"{checked} of {len(heads)} table(s) checked for a rollback")


def _guarded(report: VerifyReport, table: str | None, what: str, check) -> None:
    """Run one check; a database error becomes a finding instead of a crash."""
    try:
        check()
    except (SQLAlchemyError, ValueError, KeyError, TypeError) as exc:
        detail = getattr(exc, "orig", None) or exc
        report.findings.append(Finding(table, None, f"cannot read {what}: {str(detail).splitlines()[0]}"))


def _integrity(engine: Engine, report: VerifyReport) -> None:
    with engine.connect() as conn:
        lines = [r[0] for r in conn.exec_driver_sql("PRAGMA integrity_check(100)")]
    if lines != ["ok"]:
        report.findings.extend(Finding(None, None, f"database file damaged: {line}") for line in lines)


class _TableFindings:
    """Collects one table's findings, listing at most ``MAX_FINDINGS_PER_TABLE``."""

    def __init__(self, report: VerifyReport, table: str):
        self.report, self.table, self.count = report, table, 0

    def add(self, seq: int | None, message: str) -> None:
        self.count += 1
        if self.count <= MAX_FINDINGS_PER_TABLE:
            self.report.findings.append(Finding(self.table, seq, message))

    def close(self) -> None:
        if self.count > MAX_FINDINGS_PER_TABLE:
            self.report.findings.append(Finding(
                self.table, None, f"... and {self.count - MAX_FINDINGS_PER_TABLE} further findings"))


def _table(conn: Connection, key: bytes, head, report: VerifyReport, derivation: Derivation | None) -> None:
    tid = head.table_id
    found = _TableFindings(report, tid)
    if not same(head.mac, head_mac(key, tid, head.ruleset, head.head_seq, head.head_hash, head.generation,
                                   head.created_at)):
        found.add(None, "head row is not signed by this store's key (ruleset, head or generation edited)")
    records: dict[int, list[tuple]] = defaultdict(list)
    for r in conn.execute(select(DerivedRecord).where(DerivedRecord.table_id == tid)
                          .order_by(DerivedRecord.source_seq, DerivedRecord.generation, DerivedRecord.idx)):
        records[r.source_seq].append((r.generation, r.idx, r.type, r.deal, r.body))
    snaps = {s.seq: s for s in conn.execute(select(Snapshot).where(Snapshot.table_id == tid))}
    links: dict[int, str] = {}
    deriver = derivation.new(head.ruleset) if derivation is not None else None
    prev, expected = GENESIS, 1
    for row in conn.execute(select(TableEvent).where(TableEvent.table_id == tid).order_by(TableEvent.seq)):
        row = row._mapping
        report.events += 1
        if row['seq'] != expected:
            found.add(expected, f"missing (next stored is seq {row['seq']})")
        if row['prev_hash'] != prev:
            found.add(row['seq'], "link to the previous event is broken (events removed or reordered)")
        digest = records_digest(records.pop(row['seq'], []))
        args = (key, row['prev_hash'], tid, row['seq'], row['event_id'], row['type'], row['t'], row['body'], row['recorded_at'], digest)
        if event_link(*args, row['seq'] in snaps) != row['hash']:
            if event_link(*args, row['seq'] not in snaps) == row['hash']:
                found.add(row['seq'], "its snapshot was removed" if row['seq'] not in snaps
                          else "a snapshot was added outside the store")
            else:
                found.add(row['seq'], "event row or its derived records do not match the chain (edited)")
        links[row['seq']] = row['hash']
        prev, expected = row['hash'], row['seq'] + 1
        if deriver is not None:
            try:
                deriver.feed(parse_event(json.loads(row['body'])))
            except EventError:
                pass  # it derives nothing: the comparison of the records names what differs
    if (head.head_seq, head.head_hash) != (expected - 1, prev):
        found.add(head.head_seq, f"head names seq {head.head_seq} but the chain ends at seq {expected - 1} "
                                 "(tail removed, or head moved)")
    for seq in sorted(records):
        found.add(seq, "derived records stored for an event that is not in the chain")
    for seq, snap in sorted(snaps.items()):
        if not snapshot_is_authentic(key, snap.mac, tid, snap.seq, snap.event_hash, snap.blob):
            found.add(seq, "snapshot is not signed by this store's key (forged or another key)")
        elif links.get(seq) != snap.event_hash:
            found.add(seq, "snapshot is pinned to another chain than the stored one")
        elif not plain(snap.blob):
            found.add(seq, "snapshot is not plain JSON data (never loaded; forged with the key?)")
    if deriver is not None:
        _compare_rederived(conn, head, deriver, found)
    found.close()


def _compare_rederived(conn: Connection, head, deriver, found: _TableFindings) -> None:
    stored = [json.loads(b) for b in conn.execute(
        select(DerivedRecord.body).where(DerivedRecord.table_id == head.table_id,
                                         DerivedRecord.generation == head.generation)
        .order_by(DerivedRecord.idx)).scalars()]
    fresh = [r for r in deriver.records() if r.get("type") in DERIVED_TYPES]
    if [canonical(r) for r in fresh] != [canonical(r) for r in stored]:
        first = next((i for i, (a, b) in enumerate(zip(fresh, stored)) if canonical(a) != canonical(b)),
                     min(len(fresh), len(stored)))
        found.add(None, f"derived record {first} differs from a fresh replay of the events")
