"""The command-line contract: import, results, standings, verify, export."""

from __future__ import annotations

import csv
import json

import pytest
from sqlalchemy import update

from referee.simulate import play_session
from web.app.cli import main
from web.store import KEY_ENV, KEY_FILE_ENV, Store
from web.store.models import TableEvent
from tests.store.support import TEST_SECRET


@pytest.fixture
def loc(db_url, tmp_path):
    """Command-line options naming the test database (--data for SQLite, --db otherwise;
    the data directory keeps the snapshot key either way)."""
    data = ["--data", str(tmp_path / "guandan-data")]
    return data if db_url.startswith("sqlite") else ["--db", db_url, *data]


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_import_reports_bad_lines_and_results_lists_what_was_derived(loc, tmp_path, capsys):
    events = play_session(11, {"NS": "甲", "EW": "乙"})
    lines = [json.dumps(e, ensure_ascii=False) for e in events]
    lines.insert(3, "{not json")
    lines.insert(7, json.dumps({"type": "play", "table": "T1", "t": 1e9, "seat": "S", "cards": ["ZZ"]}))
    path = _write(tmp_path / "events.jsonl", lines)
    assert main(["import", path, *loc]) == 1
    out, err = capsys.readouterr()
    assert "line 4: not JSON" in err and "line 8: " in err and "ZZ" in err
    assert f"imported {len(events)} events into 1 table(s); 0 already stored; 2 rejected" in out
    # a second import of the same file is idempotent (event ids)
    assert main(["import", path, *loc]) == 1
    assert f"imported 0 events into 1 table(s); {len(events)} already stored" in capsys.readouterr().out

    assert main(["results", "--json", *loc]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    deals = [r for r in rows if r["type"] == "deal_end"]
    assert deals and all({"table", "deal", "order", "upgrade", "levels"} <= r.keys() for r in deals)
    assert [r["deal"] for r in deals] == list(range(1, len(deals) + 1))
    (session,) = [r for r in rows if r["type"] == "session_result"]
    assert session["signoff"]["state"] == "pending" and session["table"] == "T1"


def test_verify_names_the_broken_link(loc, db_url, tmp_path, capsys):
    events = play_session(12, {"NS": "A", "EW": "B"})[:50]
    path = _write(tmp_path / "e.jsonl", [json.dumps(e) for e in events])
    assert main(["import", path, *loc]) == 0
    assert main(["verify", "--rederive", *loc]) == 0
    assert "OK: 1 table(s), 50 event(s) checked" in capsys.readouterr().out
    with Store(db_url, secret_key=TEST_SECRET) as store, store.engine.begin() as conn:
        conn.execute(update(TableEvent).where(TableEvent.seq == 17).values(body=TableEvent.body + " "))
    assert main(["verify", *loc]) == 1
    assert "table T1: seq 17: event row or its derived records do not match the chain (edited)" in capsys.readouterr().out


def test_tournament_from_the_command_line(loc, tmp_path, capsys):
    pairs = tmp_path / "pairs.csv"
    with pairs.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["pair", "name", "player1", "player2", "rating"])
        for i in range(4):
            w.writerow([f"P{i}", f"队{i}", f"p{i}a", f"p{i}b", 1500 + i])
    assert main(["event", "create", "CUP", "--rounds", "2", "--seed", "3", *loc]) == 0
    assert main(["event", "pairs", "CUP", str(pairs), *loc]) == 0
    assert capsys.readouterr().out == "added 4 pairs to CUP from pairs.csv (utf-8)\n"
    assert main(["event", "draw", "CUP", "--by-rating", *loc]) == 0
    draw = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(d["NS"], d["EW"]) for d in draw] == [("P3", "P1"), ("P2", "P0")]
    lines = []
    for i, d in enumerate(draw):
        lines += [json.dumps(e) for e in play_session(20 + i, {"NS": d["NS"], "EW": d["EW"]}, table=d["table"])]
    assert main(["import", _write(tmp_path / "r1.jsonl", lines), *loc]) == 0
    capsys.readouterr()
    assert main(["standings", "--json", *loc]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["rank"] for r in rows] == [1, 2, 3, 4]
    assert sum(r["match_points"] for r in rows) == 4  # two matches, 2 points each (win or two draws)
    assert all(r["rounds_played"] == 1 for r in rows)
    out_pdf, out_csv, st_csv = tmp_path / "r1.pdf", tmp_path / "r1.csv", tmp_path / "st.csv"
    assert main(["export", "sheet", "--event", "CUP", "--round", "1", "--out", str(out_pdf), *loc]) == 0
    assert out_pdf.read_bytes().startswith(b"%PDF")
    assert main(["export", "sheet", "--event", "CUP", "--round", "1", "--out", str(out_csv), *loc]) == 0
    sheet = list(csv.DictReader(out_csv.open(encoding="utf-8-sig")))  # with a BOM, for Excel
    assert {r["table"] for r in sheet} == {d["table"] for d in draw}
    assert [r["line"] for r in sheet].count("result") == 2
    assert main(["export", "standings", "--out", str(st_csv), *loc]) == 0
    standings = list(csv.DictReader(st_csv.open(encoding="utf-8-sig")))
    assert [r["pair"] for r in standings] == [r["pair"] for r in rows]
    assert standings[0]["name"].startswith("队")


def test_standings_need_an_event(loc, capsys):
    assert main(["official", "Ref Li", *loc]) == 0
    assert main(["standings", *loc]) == 2
    assert "name the event with --event (events: none)" in capsys.readouterr().err


def test_sign_dispute_resolve_from_the_command_line(loc, tmp_path, capsys):
    events = play_session(13, {"NS": "A", "EW": "B"})
    assert main(["import", _write(tmp_path / "e.jsonl", [json.dumps(e) for e in events]), *loc]) == 0
    assert main(["official", "Ref Li", *loc]) == 0
    capsys.readouterr()

    def run(*argv):
        code = main([*argv, *loc])
        out, err = capsys.readouterr()
        return code, out, err

    code, out, _ = run("sign", "T1", "--side", "NS", "--by", "Ann", "--json")
    status = json.loads(out)
    assert code == 0 and status.pop("signed_at").keys() == {"NS"} and status.pop("doors")["NS"]["door"] == "desk"
    assert status == {
        "table": "T1", "session": 1, "state": "pending", "signed": {"NS": "Ann"}, "dispute": None}
    assert run("dispute", "T1", "--side", "EW", "--by", "Bob", "--note", "deal 3 order")[1] == \
        "T1 session 1: disputed (EW (Bob): deal 3 order)\n"
    code, _, err = run("sign", "T1", "--side", "EW", "--by", "Bob")
    assert code == 1 and "refused: sign: the result is disputed" in err
    code, _, err = run("resolve", "T1", "--by", "Ann")
    assert code == 1 and "not a registered official" in err
    assert run("resolve", "T1", "--by", "Ref Li", "--note", "order confirmed")[1] == \
        "T1 session 1: pending (no signatures)\n"
    run("sign", "T1", "--side", "EW", "--by", "Bob")
    assert run("sign", "T1", "--side", "NS", "--by", "Ann")[1] == "T1 session 1: final (EW: Bob, NS: Ann)\n"
    code, _, err = run("sign", "T1", "--session", "2", "--side", "NS", "--by", "Ann")
    assert code == 1 and "no session result #2 recorded" in err
    code, out, _ = run("results", "--json")
    (session,) = [json.loads(line) for line in out.splitlines() if '"session_result"' in line]
    assert session["signoff"]["signed"] == {"NS": "Ann", "EW": "Bob"} and session["signoff"]["state"] == "final"


def test_the_key_comes_from_outside_the_data_directory(loc, db_url, tmp_path, key_home, monkeypatch, capsys):
    data = tmp_path / "guandan-data"
    events = play_session(14, {"NS": "A", "EW": "B"})[:60]
    path = _write(tmp_path / "e.jsonl", [json.dumps(e) for e in events])
    monkeypatch.setenv(KEY_ENV, "key from the environment")
    assert main(["import", path, *loc]) == 0
    assert main(["verify", *loc]) == 0
    user_key = key_home / "guandan-referee" / "secret.key"
    assert not user_key.exists() and not list(data.glob("*.key"))  # a configured key is not stored
    monkeypatch.delenv(KEY_ENV)
    capsys.readouterr()
    # another key (here the per-user one, made now) cannot vouch for what the first signed
    assert main(["verify", *loc]) == 1
    out = capsys.readouterr().out
    assert user_key.stat().st_mode & 0o777 == 0o600
    assert "the table manifest is not signed by this store's key" in out
    assert "table T1: head row is not signed by this store's key" in out
    assert "table T1: seq 1: event row or its derived records do not match the chain" in out
    if loc[0] == "--db":
        return  # a PostgreSQL store has no data directory to keep a key out of
    # a key file inside the data directory is refused, and not created
    assert main(["verify", *loc, "--key-file", str(data / "secret.key")]) == 2
    assert "is inside the data directory" in capsys.readouterr().err
    assert not (data / "secret.key").exists()
    # a key file named by path is made once (0600) and used from then on
    named, second = tmp_path / "keys" / "hall.key", ["--data", str(tmp_path / "second")]
    assert main(["import", path, *second, "--key-file", str(named)]) == 0
    assert named.stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv(KEY_FILE_ENV, str(named))
    assert main(["verify", *second]) == 0
