"""Tamper evidence, snapshots and schema migrations."""

from __future__ import annotations

import logging

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import delete, select, update

from web.store import Store
from web.store.db import current_revisions, head_revisions
from web.store.models import Base, DerivedRecord, Snapshot, TableEvent, TableHead
from web.store.signing import as_key, snapshot_mac
from web.store.testing import TEST_SECRET


def test_untouched_store_verifies(store, table):
    table.session(3, 3)
    report = store.verify(rederive=True)
    assert report.ok, report.problems
    assert (report.tables, report.events) == (1, 9)


def _tamper(store, stmt):
    with store.engine.begin() as conn:
        conn.execute(stmt)


def test_edited_event_is_named_as_the_first_broken_link(store, table):
    table.session(3, 1)
    _tamper(store, update(TableEvent).where(TableEvent.table_id == "T1", TableEvent.seq == 4)
            .values(body=TableEvent.body + " "))
    _tamper(store, update(TableEvent).where(TableEvent.table_id == "T1", TableEvent.seq == 6)
            .values(body=TableEvent.body + " "))
    report = store.verify()
    assert report.problems == ["table T1: seq 4: content does not match its hash (edited after it was stored)"]


def test_rehashed_edit_breaks_the_next_link(store, table):
    table.session(2, 2)
    from web.store.store import chain_hash

    rows = store.events("T1")
    body = '{"forged":true}'
    with store.engine.begin() as conn:
        prev = conn.execute(TableEvent.__table__.select().where(
            TableEvent.table_id == "T1", TableEvent.seq == 2)).first().prev_hash
        conn.execute(update(TableEvent).where(TableEvent.table_id == "T1", TableEvent.seq == 2)
                     .values(body=body, hash=chain_hash(prev, "T1", 2, body)))
    assert len(rows) == 7
    assert store.verify().problems == ["table T1: seq 3: link to the previous event is broken (prev_hash differs)"]


@pytest.mark.parametrize("seq, problem", [
    (3, "seq 3 is missing (next stored is 4)"),
    (7, "head says seq 7 but the chain ends at seq 6 (events removed?)"),
])
def test_removed_events_are_detected(store, table, seq, problem):
    table.session(2, 2)
    _tamper(store, delete(TableEvent).where(TableEvent.table_id == "T1", TableEvent.seq == seq))
    assert store.verify().problems == [f"table T1: {problem}"]


def test_edited_derived_record_is_found_by_rederivation(store, table):
    table.session(4, 1)
    _tamper(store, update(DerivedRecord).values(body='{"type":"session_result","winner":"EW"}'))
    assert store.verify().ok  # the chain covers events; results are checked by replay
    assert store.verify(rederive=True).problems == [
        "table T1: derived record 0 differs from a fresh replay of the events"]


def test_snapshots_are_taken_and_used_to_reopen_a_table(store, table, reopen, derivation):
    table.session(6, 6)  # 15 events, snapshot_every=5
    with store.engine.connect() as conn:
        seqs = [r.seq for r in conn.execute(Snapshot.__table__.select().order_by(Snapshot.seq))]
    assert seqs == [5, 10, 15]
    with reopen(derivation=derivation, snapshot_every=5) as reopened:
        ref = reopened.referee("T1")
    assert derivation.restores == 1
    assert ref.records() == [{k: v for k, v in r.items() if k != "table"} for r in store.records("T1")]


@pytest.mark.parametrize("signed", [True, False], ids=["signed-but-unreadable", "unsigned"])
def test_an_unusable_snapshot_falls_back_to_replay(store, table, reopen, derivation, signed, caplog):
    table.session(3, 3)  # 9 events: a snapshot at seq 5
    with store.engine.connect() as conn:
        at = conn.execute(select(Snapshot.event_hash).where(Snapshot.seq == 5)).scalar_one()
    mac = snapshot_mac(as_key(TEST_SECRET), "T1", 5, at, b"garbage") if signed else "0" * 64
    _tamper(store, update(Snapshot).values(blob=b"garbage", mac=mac))
    with reopen(derivation=derivation) as reopened, caplog.at_level(logging.WARNING, logger="web.store.store"):
        assert reopened.referee("T1").records() == [
            {k: v for k, v in r.items() if k != "table"} for r in store.records("T1")]
        reopened.append({"type": "tick", "table": "T1", "t": 99})
    assert derivation.restores == int(signed)  # an unsigned blob is never handed to the referee
    assert ("unusable" if signed else "fails its signature check") in caplog.text
    problems = store.verify().problems
    assert problems == ([] if signed else
                        ["table T1: snapshot after seq 5 is not signed by this store's key (forged or another key)"])


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


def test_a_postgresql_store_needs_a_configured_snapshot_key():
    with pytest.raises(ValueError, match="postgresql store needs a secret key for its snapshots"):
        Store("postgresql+psycopg://postgres@127.0.0.1:5432/test")
    with pytest.raises(ValueError, match="secret key for snapshots is empty"):
        Store("postgresql+psycopg://postgres@127.0.0.1:5432/test", secret_key=" ")
