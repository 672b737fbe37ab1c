"""A drawn table records one session: another, imported or live, is refused naming the
signed one until the chief referee rules that it counts; the score sheet and the
standings then say which session counts and why (on SQLite and PostgreSQL)."""

from __future__ import annotations

import csv
import json

import pytest

from referee.engine import Referee
from referee.rulesets import load_ruleset_spec, tournament_ruleset
from referee.simulate import play_session
from tests.app.conftest import bearer, make_app
from tests.store.support import KINDS, temporary_url
from web.app.accounts import create_token
from web.store import EventRejected, get_store
from web.store.authority import NotAuthorized
from web.tournament import export, service, signoff

from tests.tournament.test_tournament_cli import run  # noqa: F401  (the fixture: the command line on the test database)


CUP_RULESET = load_ruleset_spec(tournament_ruleset("competition", deal_limit=2, round_minutes=600))


def _session(match, seed: int, after: float = 0.0, prefix: str = "") -> list[dict]:
    """A seeded session of the match's pairs at its table, ``after`` seconds on, up to the
    event that ends it under the cup's ruleset, its ids prefixed (another session's are its own)."""
    referee, out = Referee(CUP_RULESET), []
    for event in play_session(seed, {"NS": match.ns, "EW": match.ew}, table=match.table_id):
        out.append({**event, "t": event["t"] + after, "id": prefix + event["id"]})
        if any(v.to_json()["type"] == "session_result" for v in referee.feed(event)):
            return out
    raise AssertionError(f"seed {seed}: the session does not end")


def _last_t(store, table: str) -> float:
    return store.events(table)[-1]["t"]


@pytest.fixture
def cup(real_store):
    """A cup of four pairs, round 1 drawn; table 1 played (seed 40) and signed by both sides."""
    service.create(real_store, "CUP", "Cup", rounds=2, deal_limit=2, round_minutes=600)
    for p in "ABCD":
        service.add_pair(real_store, "CUP", p, f"Team {p}", f"{p}1", f"{p}2")
    drawn = service.pair_round(real_store, "CUP")
    for i, m in enumerate(drawn):
        real_store.append_many(_session(m, 40 + i))
        signoff.sign(real_store, m.table_id, "NS", f"{m.ns}1")
        signoff.sign(real_store, m.table_id, "EW", f"{m.ew}1")
    return real_store, drawn[0]


def test_a_second_session_on_a_signed_table_is_refused_naming_the_signed_one(cup):
    store, m = cup
    before = (store.events(m.table_id), service.standings_of(store, "CUP"))
    second = _session(m, 77, after=_last_t(store, m.table_id) + 10, prefix="b")
    outcomes = store.append_many(second)
    assert isinstance(outcomes[0], EventRejected)
    assert outcomes[0].reason.startswith(f"session 1 of table {m.table_id} is signed (EW by {m.ew}1 at ")
    assert f"NS by {m.ns}1 at " in outcomes[0].reason and "; final); a drawn table records one session" in \
        outcomes[0].reason
    assert (f"guandan-ref event session CUP --round 1 --table {m.table_no} --by CHIEF --reason TEXT"
            in outcomes[0].reason)
    assert not any(hasattr(o, "seq") and not o.duplicate for o in outcomes)  # nothing of it was stored
    assert (store.events(m.table_id), service.standings_of(store, "CUP")) == before
    (sheet,) = [s for s in export.tournament_sheets(store, "CUP", 1) if s.table == m.table_id]
    assert [d["deal"] for d in sheet.deals] == [1, 2] and sheet.counting == ""
    assert store.verify().ok


def test_a_chiefs_ruling_lets_another_session_count_and_the_papers_say_why(cup):
    store, m = cup
    first = service.match_results(store, "CUP")[0]
    with pytest.raises(NotAuthorized, match="'Ref Li' is not the chief referee"):
        service.rule_session(store, "CUP", 1, m.table_no, "Ref Li", "replay")
    with pytest.raises(service.TournamentError, match=r"another session needs the chief referee's reason"):
        service.rule_session(store, "CUP", 1, m.table_no, "Chief Wang", " ")
    text = service.rule_session(store, "CUP", 1, m.table_no, "Chief Wang", "cards of deal 2 were misdealt")
    assert text.startswith("cards of deal 2 were misdealt (session 2 counts instead of session 1: session 1 of "
                           f"table {m.table_id} is signed (")
    with pytest.raises(service.TournamentError, match="session 2 may already be played"):
        service.rule_session(store, "CUP", 1, m.table_no, "Chief Wang", "twice")
    assert service.match_state(store, m) == "no result"  # session 1 no longer counts; 2 is not played yet
    assert [r.ns for r in service.match_results(store, "CUP", require_all=False)] == [
        o.ns for o in service.matches(store, "CUP") if o.table_id != m.table_id]
    with pytest.raises(service.TournamentError, match=r"has no result yet \(session 2, ruled by the chief referee\)"):
        service.match_results(store, "CUP")

    outcomes = store.append_many(_session(m, 77, after=_last_t(store, m.table_id) + 10, prefix="b"))
    assert all(hasattr(o, "seq") for o in outcomes), [str(o) for o in outcomes if not hasattr(o, "seq")][:3]
    replayed = service.match_results(store, "CUP")[0]
    assert replayed.session == 2 and (replayed.score, replayed.upgrades) != (first.score, first.upgrades)
    assert service.match_state(store, m) == "pending"  # session 2 is signed on its own
    rows = {r.pair: r for r in service.standings_of(store, "CUP")}
    assert rows[m.ns].sessions == [(1, 2)] and rows[m.ew].sessions == [(1, 2)]
    assert "第2场计分 session 2 counts R1 (裁判长裁定 chief referee's ruling)" in export.standing_notes(rows[m.ns])

    (sheet,) = [s for s in export.tournament_sheets(store, "CUP", 1) if s.table == m.table_id]
    numbers = [d["deal"] for d in sheet.deals]  # session 2's deals, not both sessions'
    every = [r for r in store.results(m.table_id) if r["type"] == "deal_end"]
    assert numbers == list(range(1, len(numbers) + 1)) and every[2:] == sheet.deals  # session 1 played 2
    assert sheet.result["score"] == {"NS": replayed.score[0], "EW": replayed.score[1]}
    assert sheet.counting.startswith("第2场计分 session 2 counts (裁判长裁定 chief referee's ruling: Chief Wang, ")
    (ruling,) = [r for r in sheet.rulings if r["kind"] == export.SESSION_RULING]
    assert ruling["by"] == "Chief Wang" and ruling["reason"].startswith(text)
    result = [r for r in sheet.rows() if r["line"] == "result"]
    assert [r["note"] for r in result] == [sheet.counting]
    assert [r["kind"] for r in service.rulings(store, "CUP")] == ["session"]

    third = _session(m, 78, after=_last_t(store, m.table_id) + 10, prefix="c")
    (refused, *_) = store.append_many(third)
    assert refused.reason.startswith(f"session 2 of table {m.table_id} is recorded (not signed yet); ")
    assert store.verify().ok


def test_the_import_command_refuses_another_session_and_takes_it_after_the_ruling(run, tmp_path):  # noqa: F811
    assert run("event", "create", "CUP", "--rounds", "1", "--deals", "2", "--minutes", "600")[0] == 0
    (tmp_path / "pairs.csv").write_text("pair,name,player1,player2\nA,Team A,A1,A2\nB,Team B,B1,B2\n")
    run("event", "pairs", "CUP", str(tmp_path / "pairs.csv"))
    run("official", "Chief Wang", "--role", "chief")
    (table,) = [json.loads(line) for line in run("event", "draw", "CUP")[1].splitlines()]
    tid = table["table"]
    m = service.MatchInfo(1, 1, table["NS"], table["EW"], tid, None)
    first = _session(m, 40)
    (tmp_path / "one.jsonl").write_text("".join(json.dumps(e) + "\n" for e in first))
    assert run("import", str(tmp_path / "one.jsonl"))[0] == 0
    run("sign", tid, "--side", "NS", "--by", f"{m.ns}1")
    run("sign", tid, "--side", "EW", "--by", f"{m.ew}1")
    second = _session(m, 41, after=first[-1]["t"] + 10, prefix="b")
    (tmp_path / "two.jsonl").write_text("".join(json.dumps({**e, "table": "T7"}) + "\n" for e in second))

    code, out, err = run("import", str(tmp_path / "two.jsonl"), "--table", tid)
    assert code == 1 and out.startswith("imported 0 events into 0 table(s)"), out
    assert err.splitlines()[0].startswith(f"line 1: table {tid}: session 1 of table {tid} is signed (EW by B1 at ")
    assert "guandan-ref event session CUP --round 1 --table 1 --by CHIEF --reason TEXT" in err.splitlines()[0]
    code, _, err = run("event", "session", "CUP", "--round", "1", "--table", "1", "--by", "A1", "--reason", "x")
    assert code == 2 and "'A1' is not the chief referee" in err

    code, out, _ = run("event", "session", "CUP", "--round", "1", "--table", "1", "--by", "Chief Wang",
                       "--reason", "the table's camera recorded the wrong deck")
    assert code == 0 and out.startswith("the table's camera recorded the wrong deck (session 2 counts instead of "
                                        "session 1: ")
    code, out, err = run("import", str(tmp_path / "two.jsonl"), "--table", tid)
    assert code == 0, err
    ruled = [json.loads(line) for line in run("event", "rulings", "CUP")[1].splitlines()]
    assert [(r["kind"], r["by"], r["table_no"]) for r in ruled] == [("session", "Chief Wang", 1)]

    assert run("export", "sheet", "--event", "CUP", "--out", str(tmp_path / "sheets.csv"))[0] == 0
    with open(tmp_path / "sheets.csv", encoding=export.CSV_ENCODING) as f:
        rows = list(csv.DictReader(f))
    assert [r["line"] for r in rows if r["line"].isdigit()] == ["1", "2"]  # deals 1-2 once: session 2's
    (result,) = [r for r in rows if r["line"] == "result"]
    assert result["note"].startswith("第2场计分 session 2 counts (裁判长裁定 chief referee's ruling: Chief Wang")
    assert run("export", "standings", "--event", "CUP", "--out", str(tmp_path / "standings.csv"))[0] == 0
    with open(tmp_path / "standings.csv", encoding=export.CSV_ENCODING) as f:
        notes = {r["pair"]: r["notes"] for r in csv.DictReader(f)}
    assert notes == {p: "第2场计分 session 2 counts R1 (裁判长裁定 chief referee's ruling)" for p in (m.ns, m.ew)}
    assert run("verify")[0] == 0


@pytest.mark.parametrize("kind", KINDS)
def test_the_live_api_refuses_another_session_and_leaves_the_table_as_it_was(kind, tmp_path):
    with temporary_url(kind, tmp_path) as url:
        app = make_app(url)
        store = get_store(app)
        try:
            store.add_official("Chief Wang", "chief")
            service.create(store, "CUP", "Cup", rounds=1, deal_limit=2, round_minutes=600)
            for p in "AB":
                service.add_pair(store, "CUP", p, f"Team {p}", f"{p}1", f"{p}2")
            (m,) = service.pair_round(store, "CUP")
            client, headers = app.test_client(), bearer(create_token(store, m.table_id))
            first = _session(m, 40)
            answer = client.post(f"/api/tables/{m.table_id}/events", json=first, headers=headers).get_json()
            assert {r["status"] for r in answer["results"]} == {"accepted"}
            signoff.sign(store, m.table_id, "NS", "A1")
            signoff.sign(store, m.table_id, "EW", "B1")
            before = store.events(m.table_id)
            second = _session(m, 41, after=first[-1]["t"] + 10, prefix="b")
            refused = client.post(f"/api/tables/{m.table_id}/events", json=second[:3], headers=headers).get_json()
            assert refused["results"][0]["status"] == "rejected"
            assert refused["results"][0]["reason"].startswith(f"session 1 of table {m.table_id} is signed (")
            assert store.events(m.table_id) == before and service.match_state(store, m) == "final"
            service.rule_session(store, "CUP", 1, 1, "Chief Wang", "replayed at the chief's order")
            taken = client.post(f"/api/tables/{m.table_id}/events", json=second, headers=headers).get_json()
            assert {r["status"] for r in taken["results"]} == {"accepted"}
            assert service.match_results(store, "CUP")[0].session == 2 and store.verify().ok
        finally:
            store.close()
