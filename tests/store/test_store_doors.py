"""Every door of the store bounded: paths that are not stores, bad lines, whole-file import."""

from __future__ import annotations

import json
import sqlite3

import pytest
from sqlalchemy import create_engine

from referee.simulate import play_session
from tests.store.support import TEST_SECRET
from web.app.cli import main
from web.store import NotAStore, Store
from web.store.db import upgrade


@pytest.fixture
def loc(db_url, tmp_path):
    data = ["--data", str(tmp_path / "guandan-data")]
    return data if db_url.startswith("sqlite") else ["--db", db_url]


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["verify", "results", "standings", "sign"])
def test_a_mistyped_data_path_is_an_error_and_creates_nothing(tmp_path, capsys, command):
    missing = tmp_path / "guandan-dta"
    extra = ["T1", "--side", "NS", "--by", "Ann"] if command == "sign" else []
    code, out, err = _run(capsys, command, *extra, "--data", str(missing))
    assert code == 2 and out == ""
    assert err == f"guandan-ref {command}: error: no store in {missing} (guandan-ref import creates one)\n"
    assert not missing.exists()


def test_a_missing_postgresql_store_is_an_error(db_url, capsys):
    if not db_url.startswith("postgresql"):
        pytest.skip("the PostgreSQL case")
    code, _, err = _run(capsys, "verify", "--db", db_url)
    assert code == 2 and err.startswith("guandan-ref verify: error: no store at postgresql")


def test_a_garbage_file_given_as_the_store_is_a_clear_error(tmp_path, capsys):
    data = tmp_path / "d"
    data.mkdir()
    (data / "guandan.sqlite3").write_bytes(b"this is not a database, just some bytes\n" * 200)
    for command in ("verify", "results"):
        code, out, err = _run(capsys, command, "--data", str(data))
        assert code == 2 and out == ""
        assert err.startswith(f"guandan-ref {command}: error: ") and "is not a store: file is not a database" in err
        assert len(err.splitlines()) == 1


def test_a_file_or_a_busy_directory_is_not_a_data_directory(tmp_path, capsys):
    events = _write(tmp_path / "e.jsonl", [json.dumps(e) for e in play_session(3, {"NS": "A", "EW": "B"})[:5]])
    code, _, err = _run(capsys, "import", events, "--data", events)
    assert code == 2 and "is a file, not a data directory" in err
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    code, _, err = _run(capsys, "import", events, "--data", str(busy))
    assert code == 2 and "holds no store and is not empty" in err
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]


def test_a_missing_events_file_creates_nothing(tmp_path, capsys):
    data = tmp_path / "d"
    code, _, err = _run(capsys, "import", str(tmp_path / "nope.jsonl"), "--data", str(data))
    assert code == 2 and "no events file" in err
    assert not data.exists()


def test_a_damaged_page_makes_results_a_clear_error(tmp_path, capsys):
    data = tmp_path / "d"
    lines = []
    for seed in range(12):
        lines += [json.dumps(e) for e in play_session(seed, {"NS": "A", "EW": "B"}, table=f"T{seed}")]
    assert _run(capsys, "import", _write(tmp_path / "e.jsonl", lines), "--data", str(data))[0] == 0
    path = data / "guandan.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size, pages = raw.execute("PRAGMA page_size").fetchone()[0], raw.execute("PRAGMA page_count").fetchone()[0]
    with path.open("r+b") as f:
        f.seek(page_size)  # every page but the first (the schema): the store opens, then fails
        f.write(b"\xff" * page_size * (pages - 1))
    code, out, err = _run(capsys, "results", "--data", str(data))
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "guandan-ref results: error: " in err
    code, out, err = _run(capsys, "verify", "--data", str(data))
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith("guandan-ref verify: error: ") and "is not a store: database disk image is malformed" in err


def test_bad_lines_are_named_and_every_good_event_is_stored(loc, tmp_path, capsys):
    """Line 3001 of 4000 has a 5000-digit number: the 3999 others are stored, and the
    summary names it (and each other bad line) by number and reason."""
    events = []
    for seed in range(8):
        events += play_session(seed, {"NS": "A", "EW": "B"}, table=f"T{seed}")
    lines = [json.dumps(e) for e in events[:3999]]
    lines.insert(3000, '{"type": "tick", "table": "T4", "t": ' + "9" * 5000 + "}")
    lines += ["[" * 60_000,
              '{"type": "tick", "table": "T0", "t": ' + "1" * 400 + "}",
              json.dumps({"type": "tick", "table": "T0", "t": 1, "evidence": "x" * 70_000}),
              "\xff not json"]
    code, out, err = _run(capsys, "import", _write(tmp_path / "e.jsonl", lines), *loc)
    assert code == 1
    assert err.splitlines() == [
        "line 3001: a number of 5000 characters (limit 32)",
        "line 4001: nested deeper than 16 levels",
        "line 4002: a number of 400 characters (limit 32)",
        "line 4003: line longer than 65536 bytes",
        "line 4004: not JSON: Expecting value at column 1",
    ]
    assert out == ("imported 3999 events into 7 table(s); 0 already stored; 5 rejected "
                   "(lines 3001, 4001, 4002, 4003, 4004)\n")
    with Store(loc[1] if loc[0] == "--db" else f"sqlite:///{tmp_path}/guandan-data/guandan.sqlite3",
               create=False) as store:
        assert sum(t["head_seq"] for t in store.tables()) == 3999
        assert store.verify().ok


def test_a_file_without_ids_imported_twice_is_stored_once(loc, tmp_path, capsys):
    events = [{k: v for k, v in e.items() if k != "id"} for e in play_session(4, {"NS": "A", "EW": "B"})]
    path = _write(tmp_path / "e.jsonl", [json.dumps(e) for e in events])
    assert _run(capsys, "import", path, *loc)[0] == 0
    code, first, _ = _run(capsys, "results", "--json", *loc)
    code, out, err = _run(capsys, "import", path, *loc)
    assert (code, err) == (0, "")
    assert out == f"imported 0 events into 1 table(s); {len(events)} already stored; 0 rejected\n"
    assert _run(capsys, "results", "--json", *loc)[1] == first
    assert _run(capsys, "verify", "--rederive", *loc)[0] == 0


def test_number_formatting_does_not_make_another_event(store):
    store.append({"type": "session_start", "table": "T1", "t": 0, "teams": {"NS": "A", "EW": "B"}})
    first = store.append({"type": "tick", "table": "T1", "t": 5})
    again = store.append({"type": "tick", "table": "T1", "t": 5.0})
    assert again.duplicate and again.seq == first.seq == 2
    explicit = store.append({"type": "tick", "table": "T1", "t": 6.0, "id": "k"})
    assert store.append({"type": "tick", "table": "T1", "t": 6, "id": "k"}).duplicate
    assert explicit.seq == 3 and len(store.events("T1")) == 3


def test_an_old_store_with_data_must_be_reimported(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    engine = create_engine(url)
    upgrade(engine, "0003")
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO table_heads (table_id, ruleset, head_seq, head_hash, generation, "
                             "created_at) VALUES ('T1', 'competition', 0, '', 0, 0)")
    engine.dispose()
    with pytest.raises(NotAStore, match="written before its records were signed with a key .* import its "
                                        "event files into a new data directory"):
        Store(url, secret_key=TEST_SECRET)
