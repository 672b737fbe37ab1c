"""A database rolled back to an older copy is caught by a plain verify, on SQLite and
PostgreSQL: the store's anchor beside the key remembers each table's newest head and the
last sign-off; one table's rows copied back, sign-offs copied back (a dispute gone) or
the whole SQLite file replaced all fail ``verify``, which says what it could check."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import create_engine, delete, insert, select

from web.app.cli import main
from web.store import Store, anchors, open_store
from web.store.signing import as_key
from web.store.models import DerivedRecord, Seal, SignOff, SignOffDoor, Snapshot, TableEvent, TableHead
from web.tournament import signoff

from .conftest import TableActions
from .support import TEST_SECRET

ROOT = Path(__file__).resolve().parents[2]
T1_ROWS = (TableEvent, DerivedRecord, Snapshot, TableHead)


@pytest.fixture
def reopen(db_url, key_home):
    """The store fixtures with the test's key kept as a key file's is: with a folder beside
    it (the test's own config home) where the store keeps its anchor."""
    return functools.partial(Store, db_url, secret_key=as_key(TEST_SECRET, "the test's key", key_home))


def _copy(store, models, where) -> dict:
    """The rows of ``models`` (filtered by ``where``) as an older copy of the database holds them."""
    with store.engine.connect() as conn:
        return {m: [dict(r._mapping) for r in conn.execute(select(m).where(*where(m)))] for m in models}


def _restore(store, copy: dict, where) -> None:
    """Put an older copy's rows back with SQL, as someone with the database file (and no key) would."""
    engine = create_engine(store.url)
    with engine.begin() as conn:
        for model in copy:  # children first, then the head
            conn.execute(delete(model).where(*where(model)))
        for model in reversed(list(copy)):
            if copy[model]:
                conn.execute(insert(model), copy[model])
    engine.dispose()


def test_one_table_copied_back_from_an_older_copy_is_caught(store, table, reopen, derivation):
    table.session(3, 3, end=False)
    other = TableActions(store, "T2")
    other.session(1, 1)
    where = lambda m: [m.table_id == "T1"]  # noqa: E731
    older = _copy(store, T1_ROWS, where)
    table.append("play", seat="S", cards=["2S"], id="late")
    table.append("session_end")
    store.close()  # the anchor is written (at the latest) when the store closes
    with reopen(derivation=derivation) as again:
        assert again.verify().ok
        _restore(again, older, where)
        report = again.verify()
    assert report.problems == ["table T1: rolled back: the database ends at seq 8, the anchor of "
                               f"{report.problems[0].split('the anchor of ')[1].split(' (')[0]} "
                               f"({again.anchors.path.name}) saw seq 10 (an older copy of the database?)"]
    assert report.anchor.endswith("2 of 2 table(s) checked for a rollback") and report.unanchored == []


def test_sign_offs_copied_back_are_caught_a_dispute_cannot_disappear(store, table, reopen, derivation):
    table.session(3, 1)
    signoff.sign(store, "T1", "NS", "Ann")
    rows = (SignOffDoor, SignOff, Seal)  # each action's door refers to it: children first
    where = lambda m: [Seal.name.in_(["rows:signoffs", "rows:signoff_doors"])] if m is Seal else [True]  # noqa: E731
    older = _copy(store, rows, where)
    signoff.dispute(store, "T1", "EW", "Bob", "play ns1 was E's")
    store.close()
    with reopen(derivation=derivation) as again:
        _restore(again, older, where)
        assert signoff.status(again, "T1").state == "pending"  # the dispute is gone from the database
        problems = again.verify().problems
    assert len(problems) == 1 and problems[0].startswith("signoffs: rolled back: the last row is id 1, the anchor")


def test_a_table_made_after_the_anchor_is_named_as_not_checked(store, table, reopen, derivation):
    table.session(1, 1)
    store.close()
    with reopen(derivation=derivation) as again:
        path = again.anchors.path
        kept = path.read_text()
        TableActions(again, "T9").session(1, 1)
        again.anchors._pending = False  # as if it was killed before it wrote the anchor
    path.write_text(kept)
    with reopen(derivation=derivation) as third:
        report = third.verify()
        assert report.ok and report.unanchored == ["T9"] and "1 of 2 table(s) checked" in report.anchor
        path.unlink()
        report = third.verify()
        assert report.ok and report.unanchored == ["T1", "T9"] and report.anchor.startswith("no anchor at")
        path.write_text(json.dumps({**json.loads(kept), "tables": {}}))  # edited without the key
        report = third.verify()
        assert report.problems == [f"anchor {path} is not signed by this store's key (edited, or another key's)"]


def test_the_whole_file_replaced_by_an_older_copy_fails_a_plain_verify(tmp_path, capsys):
    data = tmp_path / "D"
    events = (ROOT / "examples" / "session.jsonl").read_text(encoding="utf-8").splitlines()
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("\n".join(events[:40]) + "\n")
    second.write_text("\n".join(events[40:80]) + "\n")
    assert main(["import", str(first), "--data", str(data)]) == 0
    shutil.copy(data / "guandan.sqlite3", tmp_path / "older.sqlite3")
    assert main(["import", str(second), "--data", str(data)]) == 0
    capsys.readouterr()
    shutil.copy(tmp_path / "older.sqlite3", data / "guandan.sqlite3")
    assert main(["verify", "--data", str(data)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("table T1: rolled back: the database ends at seq 40") and "saw seq 80" in out[0]
    assert out[1] == "BROKEN (1 finding(s)): 1 table(s), 40 event(s) checked"
    assert out[2].endswith("1 of 1 table(s) checked for a rollback")
    named = tmp_path / "copied-anchor.json"  # an anchor taken elsewhere, named with --anchors
    with open_store(data_dir=str(data), create=False) as store:
        shutil.copy(store.anchors.path, named)
    capsys.readouterr()
    assert main(["verify", "--data", str(data), "--anchors", str(named)]) == 1
    assert f"anchor {named} of " in capsys.readouterr().out
    assert main(["verify", "--data", str(data), "--anchors", str(tmp_path / "none.json")]) == 2


def test_anchors_only_move_forward(store, table):
    table.session(1, 1)
    store.anchors.write()
    before = anchors.read(store.anchors.path, store._key)
    older = anchors.Anchor(before.store, before.at - 10, {"T1": [1, "x", 0], "T0": [3, "y", 0]}, {"signoffs": 0})
    merged = before.merged(older)
    assert merged.tables["T1"] == before.tables["T1"] and merged.tables["T0"] == [3, "y", 0]
    assert merged.at == before.at


def test_a_new_store_where_one_was_removed_starts_its_own_anchor(tmp_path, capsys):
    data = tmp_path / "D"
    session = str(ROOT / "examples" / "session.jsonl")
    assert main(["import", session, "--data", str(data)]) == 0
    shutil.rmtree(data)
    first = tmp_path / "first.jsonl"
    first.write_text("\n".join((ROOT / "examples" / "session.jsonl").read_text().splitlines()[:10]) + "\n")
    assert main(["import", str(first), "--data", str(data)]) == 0
    capsys.readouterr()
    assert main(["verify", "--data", str(data)]) == 0
    assert "1 of 1 table(s) checked" in capsys.readouterr().out


def test_the_whole_database_replaced_by_an_older_copy_fails_a_plain_verify(store, table, reopen, derivation):
    """Every row of every table put back as an older copy has them (a database restored
    from an old dump, on either engine), the key and its anchor intact."""
    from web.store.models import Base

    tables = list(reversed(Base.metadata.sorted_tables))  # children first, as ``_restore`` deletes
    table.session(2, 1, end=False)
    TableActions(store, "T2").session(1, 1)
    older = _copy(store, tables, lambda _: [True])
    table.append("play", seat="S", cards=["2S"], id="late")
    table.append("session_end")
    store.close()
    with reopen(derivation=derivation) as again:
        assert again.verify().ok
        _restore(again, older, lambda _: [True])
        report = again.verify()
    (problem,) = report.problems
    assert problem.startswith("table T1: rolled back: the database ends at seq 5, the anchor of ")
    assert problem.endswith(" saw seq 7 (an older copy of the database?)")
    assert report.anchor.endswith("2 of 2 table(s) checked for a rollback")
