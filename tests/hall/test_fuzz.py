"""Fuzzing the two doors event text comes in by: the HTTP event API and ``replay``.

Malformed JSON, wrong types, unknown seats and cards, huge payloads, replayed ids with
other content and time going backwards: the API answers 200 with per-event verdicts or a
clear 4xx, never a 500, and a refused event changes nothing (the table holds exactly the
events it acknowledged, and its derived state equals a fresh replay; the refused bodies
kept stay within their bound, every refusal counted); ``replay`` prints one error record
naming the line for each bad line and the same records for the rest as if that line were
not there."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.simulate import play_session
from tests.app.conftest import make_app
from web.app.accounts import create_token
from web.app.cli import main
from web.store import get_store
from tests.store.support import temporary_url

SESSION = play_session(7, {"NS": "A", "EW": "B"}, table="Z1")[:40]
FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
seats = st.sampled_from(["N", "E", "S", "W"]) | st.text(max_size=3) | st.integers() | st.none()
cards = st.lists(st.sampled_from(["3S", "TD", "BJ", "SJ", "1X", "ZZ", "", "10H"]) | st.text(max_size=3),
                 max_size=6) | json_values


@st.composite
def broken_events(draw) -> dict:
    """A real event of the session with one field made wrong."""
    event = dict(draw(st.sampled_from(SESSION[2:])))
    change = draw(st.sampled_from(["seat", "cards", "t", "type", "huge", "id", "table", "extra"]))
    if change == "seat":
        event["seat"] = draw(seats)
    elif change == "cards":
        event["cards"] = draw(cards)
    elif change == "t":
        event["t"] = draw(st.sampled_from([-1.0, 0.0, 1e308, "soon", None, True]) | st.floats(allow_nan=False))
    elif change == "type":
        event["type"] = draw(st.text(max_size=12) | json_values)
    elif change == "huge":
        event["note"] = "x" * draw(st.integers(60_000, 200_000))
    elif change == "id":
        event["id"] = draw(st.sampled_from(["1", "2", "3"]) | json_values)  # ids the table already used
    elif change == "table":
        event["table"] = draw(json_values)
    else:
        event[draw(st.text(max_size=10))] = draw(json_values)
    return event


bodies = (st.binary(max_size=300)
          | st.text(max_size=300).map(str.encode)
          | json_values.map(lambda v: json.dumps(v).encode())
          | st.lists(broken_events(), min_size=1, max_size=3).map(lambda v: json.dumps(v).encode())
          | broken_events().map(lambda v: json.dumps(v).encode())
          | st.just(b"[" * 5000 + b"]" * 5000)
          | st.just(b'{"type": "play", "t": 1e999999}'))


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """A table whose first 20 events are stored; the fuzz posts after them."""
    with temporary_url("sqlite", tmp_path_factory.mktemp("fuzz")) as url:
        app = make_app(url)
        get_store(app).rejected_keep = 5  # the fuzz refuses more than this: the bound is held under it
        token = create_token(get_store(app), "Z1")
        client = app.test_client()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        response = client.post("/api/tables/Z1/events", json=SESSION[:20], headers=headers)
        assert {r["status"] for r in response.get_json()["results"]} == {"accepted"}
        yield app, client, headers
        get_store(app).close()


@FUZZ
@given(body=bodies)
def test_the_event_api_never_fails_and_refusals_change_nothing(table, body):
    app, client, headers = table
    store = get_store(app)
    before = store.events("Z1")
    response = client.post("/api/tables/Z1/events", data=body, headers=headers)
    assert response.status_code in (200, 400, 413), response.get_data(as_text=True)[:300]
    answer = response.get_json()
    after = store.events("Z1")
    if response.status_code != 200:
        assert len(answer["error"].splitlines()) == 1 and "Traceback" not in answer["error"]
        assert after == before
        return
    accepted = [r["seq"] for r in answer["results"] if r["status"] == "accepted"]
    assert [e["seq"] for e in after] == [e["seq"] for e in before] + accepted  # exactly what it acknowledged
    assert after[:len(before)] == before
    for r in answer["results"]:
        assert r["status"] in ("accepted", "duplicate", "rejected")
        if r["status"] == "rejected":
            assert r["reason"] and len(r["reason"].splitlines()) == 1


def test_after_the_fuzz_the_table_equals_a_fresh_replay(table):
    app, _, _ = table
    store = get_store(app)
    report = store.verify(rederive=True)
    assert report.ok, report.problems
    tally = store.rejected_tally("Z1")  # every refusal counted, only the latest bodies kept
    assert tally["kept"] == len(store.rejected("Z1")) == 5 and tally["rejected"] == 5 + tally["dropped"] > 5


def replay(tmp_path, lines: list[str]) -> tuple[int, list[dict]]:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["replay", str(path), "--json"])
    return code, [json.loads(line) for line in out.getvalue().splitlines()]


bad_lines = (st.text(max_size=80).filter(lambda s: "\n" not in s and "\r" not in s and s.strip())
             | json_values.map(json.dumps)
             | broken_events().map(json.dumps))


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad=bad_lines, where=st.integers(2, len(SESSION)))
def test_replay_names_a_bad_line_and_is_otherwise_unchanged(tmp_path, bad, where):
    good = [json.dumps(e) for e in SESSION]
    code, clean = replay(tmp_path, good)
    assert code == 0
    code, records = replay(tmp_path, good[:where] + [bad] + good[where:])
    assert code == 0
    errors = [r for r in records if r["type"] == "error" and r.get("line") == where + 1]
    others = [r for r in records if not (r["type"] == "error" and r.get("line") == where + 1)]
    if not errors:  # the line was a harmless event after all (an unknown extra field, a tick)
        return
    assert all(r["message"].startswith(f"line {where + 1}: ") for r in errors)
    renumber = [dict(r, line=r["line"] - 1 if r.get("line", 0) > where + 1 else r["line"])
                if "line" in r else r for r in others]
    strip = [{k: v for k, v in r.items() if k != "message"} for r in renumber]
    assert strip == [{k: v for k, v in r.items() if k != "message"} for r in clean]


def test_replay_of_bytes_that_are_not_utf8_is_an_error_record_and_goes_on(tmp_path, capsys):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"type": "tick", "t": 1}\n\xff\xfe\x00garbage\n{"type": "tick", "t": 0}\n')
    assert main(["replay", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["type"], r["line"]) for r in records] == [("error", 2), ("error", 3)] and err == ""
    assert "not UTF-8 text" in records[0]["message"] and "time goes backwards" in records[1]["message"]
