"""Tamper evidence, snapshots and schema migrations."""

from __future__ import annotations

import json
import logging
import sqlite3

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, delete, insert, select, update

from tests.store.conftest import TableActions
from tests.store.support import TEST_SECRET
from web.store import Store
from web.store.chain import GENESIS, event_link, records_digest
from web.store.db import current_revisions, head_revisions
from web.store.models import Base, DerivedRecord, Official, SignOff, Snapshot, TableEvent, TableHead, Tournament
from web.store.signing import as_key, snapshot_mac
from web.tournament import signoff


def test_untouched_store_verifies(store, table):
    table.session(3, 3)
    signoff.sign(store, "T1", "NS", "Ann")
    report = store.verify(rederive=True)
    assert report.ok, report.problems
    assert (report.tables, report.events) == (1, 9)


def _tamper(store, *stmts):
    """Write to the database as an intruder would: with SQL, without the store or its key."""
    engine = create_engine(store.url)
    with engine.begin() as conn:
        for stmt in stmts:
            conn.execute(stmt)
    engine.dispose()


def _row(store, seq, table="T1"):
    with store.engine.connect() as conn:
        return conn.execute(select(TableEvent).where(TableEvent.table_id == table, TableEvent.seq == seq)
                            ).one()._mapping


def test_history_rewritten_with_a_recomputed_chain_is_caught(store, table):
    """The teams swapped, every link and the head recomputed as the old unkeyed chain did
    (or with any key the intruder has): no link passes under the store's key."""
    table.session(3, 1)
    rows = [_row(store, seq) for seq in range(1, 8)]
    forged_key = b"the intruder's guess"
    prev, stmts = GENESIS, []
    for row in rows:
        body = row["body"].replace('{"EW":"B","NS":"A"}', '{"EW":"A","NS":"B"}')
        link = event_link(forged_key, prev, "T1", row["seq"], row["event_id"], row["type"], row["t"], body,
                          row["recorded_at"], records_digest([]), False)
        stmts.append(update(TableEvent).where(TableEvent.table_id == "T1", TableEvent.seq == row["seq"])
                     .values(body=body, prev_hash=prev, hash=link))
        prev = link
    stmts.append(update(TableHead).values(head_hash=prev))
    _tamper(store, *stmts)
    for rederive in (False, True):
        problems = store.verify(rederive=rederive).problems
        assert "table T1: head row is not signed by this store's key (ruleset, head or generation edited)" in problems
        assert "table T1: seq 1: event row or its derived records do not match the chain (edited)" in problems
        assert len([p for p in problems if "do not match the chain" in p]) == 7


@pytest.mark.parametrize("column, value", [
    ("t", 99.5), ("type", "tick"), ("event_id", "other"), ("body", '{"forged":true}'), ("recorded_at", 0.0),
])
def test_every_column_of_an_event_is_covered(store, table, column, value):
    table.session(3, 1)
    _tamper(store, update(TableEvent).where(TableEvent.table_id == "T1", TableEvent.seq == 4).values({column: value}))
    assert store.verify().problems == [
        "table T1: seq 4: event row or its derived records do not match the chain (edited)"]


def test_every_edited_event_is_named(store, table):
    table.session(3, 1)
    for seq in (2, 4):
        _tamper(store, update(TableEvent).where(TableEvent.table_id == "T1", TableEvent.seq == seq)
                .values(body=TableEvent.body + " "))
    assert store.verify().problems == [
        f"table T1: seq {seq}: event row or its derived records do not match the chain (edited)" for seq in (2, 4)]


def test_a_forged_score_in_a_derived_record_is_caught_without_replay(store, table):
    table.session(4, 1)
    (result,) = store.results("T1")
    forged = json.dumps({**{k: v for k, v in result.items() if k != "table"}, "score": {"NS": 0, "EW": 4}})
    _tamper(store, update(DerivedRecord).values(body=forged))
    assert store.verify().problems == [
        "table T1: seq 8: event row or its derived records do not match the chain (edited)"]
    assert "table T1: derived record 0 differs from a fresh replay of the events" in store.verify(rederive=True).problems


def test_a_derived_record_removed_or_added_is_caught(store, table):
    table.session(4, 1)
    _tamper(store, delete(DerivedRecord))
    assert store.verify().problems == [
        "table T1: seq 8: event row or its derived records do not match the chain (edited)"]


def test_a_fake_signoff_is_caught(store, table):
    table.session(3, 1)
    signoff.sign(store, "T1", "NS", "Ann")
    _tamper(store, insert(SignOff).values(table_id="T1", session=1, action="sign", side="EW", by="Bob",
                                          result_digest=None, note=None, at=0.0))
    assert store.verify().problems == ["signoffs row 2: added outside the store"]
    _tamper(store, update(SignOff).where(SignOff.id == 1).values(by="Mallory"))
    assert "signoffs row 1: changed outside the store" in store.verify().problems


@pytest.mark.parametrize("model, values, problem", [
    (Official, dict(name="Fake Ref", role="chief"), "officials row Fake Ref: added outside the store"),
    (Tournament, dict(id="CUP", name="c", ruleset="competition", chain="001", rounds=1, round_minutes=50,
                      deal_limit=8, seed=0), "tournaments row CUP: added outside the store"),
])
def test_officials_and_tournament_rows_are_sealed(store, model, values, problem):
    _tamper(store, insert(model).values(**values))
    assert store.verify().problems == [problem]


def test_signoff_and_tournament_writes_through_the_store_stay_sealed(store, table):
    """Rows written by the store's own code (whichever module) are re-sealed as they commit."""
    from web.tournament import service

    table.session(3, 1)
    signoff.sign(store, "T1", "NS", "Ann")
    signoff.dispute(store, "T1", "EW", "Bob", "deal 1")
    signoff.resolve(store, "T1", "Ref Li", "fine")
    service.create(store, "CUP", "Cup", ruleset="competition", chain="competition", rounds=2,
                   round_minutes=50, deal_limit=8, seed=1)
    service.add_pair(store, "CUP", "P1", "One", "a", "b", 1500)
    assert store.verify().ok, store.verify().problems


def test_a_deleted_table_is_named(store, table):
    table.session(2, 1)
    TableActions(store, "T2").session(1, 1)
    _tamper(store, delete(DerivedRecord).where(DerivedRecord.table_id == "T2"),
            delete(Snapshot).where(Snapshot.table_id == "T2"),
            delete(TableEvent).where(TableEvent.table_id == "T2"),
            delete(TableHead).where(TableHead.table_id == "T2"))
    report = store.verify()
    assert report.problems == ["table T2: listed in the signed manifest but missing (table deleted)"]
    assert report.tables == 1


def test_a_deleted_snapshot_is_named(store, table):
    table.session(6, 6)  # snapshots at 5, 10, 15
    _tamper(store, delete(Snapshot).where(Snapshot.seq == 10))
    assert store.verify().problems == ["table T1: seq 10: its snapshot was removed"]


@pytest.mark.parametrize("seq, problems", [
    (3, ["table T1: seq 3: missing (next stored is seq 4)",
         "table T1: seq 4: link to the previous event is broken (events removed or reordered)"]),
    (7, ["table T1: seq 7: head names seq 7 but the chain ends at seq 6 (tail removed, or head moved)",
         "table T1: seq 7: derived records stored for an event that is not in the chain"]),
])
def test_removed_events_are_detected(store, table, seq, problems):
    table.session(2, 2)
    _tamper(store, delete(TableEvent).where(TableEvent.table_id == "T1", TableEvent.seq == seq))
    assert store.verify().problems == problems


def test_a_tail_cut_with_the_head_moved_back_is_caught(store, table):
    table.session(2, 2)  # 7 events; the tail (session_end and its result) is cut
    six = _row(store, 6)
    _tamper(store, delete(DerivedRecord).where(DerivedRecord.source_seq == 7),
            delete(TableEvent).where(TableEvent.seq == 7),
            update(TableHead).values(head_seq=6, head_hash=six["hash"]))
    assert store.verify().problems == [
        "table T1: head row is not signed by this store's key (ruleset, head or generation edited)"]


def test_a_snapshot_is_compared_with_the_chain(store, table):
    table.session(3, 3)  # a snapshot at seq 5
    _tamper(store, update(TableEvent).where(TableEvent.seq == 5).values(hash="f" * 64))
    problems = store.verify().problems
    assert "table T1: seq 5: snapshot is pinned to another chain than the stored one" in problems
    assert "table T1: seq 5: event row or its derived records do not match the chain (edited)" in problems


def test_a_damaged_page_of_a_real_sqlite_store_is_reported_not_crashed_on(tmp_path):
    from tests.store.support import TallyDerivation

    path = tmp_path / "guandan.sqlite3"
    with Store(f"sqlite:///{path}", derivation=TallyDerivation(), secret_key=TEST_SECRET) as s:
        actions = TableActions(s)
        for i in range(40):
            actions.table = f"T{i}"
            actions.session(20, 20)
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = raw.execute("PRAGMA page_size").fetchone()[0]
        pages = raw.execute("PRAGMA page_count").fetchone()[0]
    assert pages > 20
    with path.open("r+b") as f:  # garbage over a page in the middle of the file
        f.seek(page_size * (pages // 2))
        f.write(bytes(range(256)) * (page_size // 256))
    with Store(f"sqlite:///{path}", derivation=TallyDerivation(), secret_key=TEST_SECRET, migrate=False) as s:
        report = s.verify()
    assert not report.ok
    assert any(p.startswith(("database file damaged", "cannot read the database file")) for p in report.problems)
    assert any("cannot read its events" in p or "damaged" in p for p in report.problems[1:]), report.problems


def test_snapshots_are_taken_and_used_to_reopen_a_table(store, table, reopen, derivation):
    table.session(6, 6)  # 15 events, snapshot_every=5
    with store.engine.connect() as conn:
        seqs = [r.seq for r in conn.execute(Snapshot.__table__.select().order_by(Snapshot.seq))]
    assert seqs == [5, 10, 15]
    with reopen(derivation=derivation, snapshot_every=5) as reopened:
        ref = reopened.referee("T1")
    assert derivation.restores == 1
    assert ref.records() == [{k: v for k, v in r.items() if k != "table"} for r in store.records("T1")]


@pytest.mark.parametrize("blob, signed, restores, logged", [
    (b"garbage", False, 0, "fails its signature check"),
    (b"garbage", True, 0, "is not plain JSON data"),
    (b'{"not": "a tally"}', True, 1, "unusable"),
], ids=["unsigned", "signed-not-json", "signed-json-refused-by-the-referee"])
def test_an_unusable_snapshot_falls_back_to_replay(store, table, reopen, derivation, blob, signed, restores,
                                                   logged, caplog):
    table.session(3, 3)  # 9 events: a snapshot at seq 5
    with store.engine.connect() as conn:
        at = conn.execute(select(Snapshot.event_hash).where(Snapshot.seq == 5)).scalar_one()
    mac = snapshot_mac(as_key(TEST_SECRET), "T1", 5, at, blob) if signed else "0" * 64
    _tamper(store, update(Snapshot).values(blob=blob, mac=mac))
    with reopen(derivation=derivation) as reopened, caplog.at_level(logging.WARNING, logger="web.store.referees"):
        assert reopened.referee("T1").records() == [
            {k: v for k, v in r.items() if k != "table"} for r in store.records("T1")]
        reopened.append({"type": "tick", "table": "T1", "t": 99})
    assert derivation.restores == restores  # only signed plain data is handed to the referee
    assert logged in caplog.text
    problems = store.verify().problems
    assert problems == ({b"garbage": ["table T1: seq 5: snapshot is not plain JSON data (never loaded; forged with "
                                      "the key?)"]}.get(blob, []) if signed else
                        ["table T1: seq 5: snapshot is not signed by this store's key (forged or another key)"])


def test_migrations_create_exactly_the_models_schema(store):
    assert current_revisions(store.engine) == head_revisions()
    store_tables = set(Base.metadata.tables)  # the app's own branch is checked in tests/app
    with store.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={
            "include_name": lambda name, kind, _parent: kind != "table" or name in store_tables})
        diff = compare_metadata(context, Base.metadata)
    assert diff == []


def test_reopening_an_existing_store_keeps_its_data(store, table, reopen, derivation):
    table.session(1, 0)
    with reopen(derivation=derivation) as again:
        assert len(again.events("T1")) == 4
        assert again.tables()[0]["head_seq"] == 4
    with store.engine.connect() as conn:
        assert conn.execute(TableHead.__table__.select()).first().head_seq == 4


def test_an_empty_key_is_refused_before_anything_is_opened(tmp_path):
    with pytest.raises(ValueError, match="secret key is empty"):
        Store(f"sqlite:///{tmp_path / 'x.sqlite3'}", secret_key=" ")
    assert not (tmp_path / "x.sqlite3").exists()
