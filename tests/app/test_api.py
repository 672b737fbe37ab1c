"""The HTTP API of the contract, on SQLite and PostgreSQL: what agents post, what anyone reads."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.exc import OperationalError

from web.app.accounts import create_token
from web.store import get_store

from .conftest import bearer, hidden_faces, login, session_events

JPEG = b"\xff\xd8\xff\xe0" + b"frame bytes" * 20


@pytest.fixture
def agent(any_app):
    store = get_store(any_app)
    tokens = {t: create_token(store, t) for t in ("T1", "T2")}
    return any_app.test_client(), tokens


def test_events_are_accepted_once_and_answered_in_order(agent):
    client, tokens = agent
    events = session_events()[:3]
    response = client.post("/api/tables/T1/events", json=events, headers=bearer(tokens["T1"]))
    assert response.status_code == 200
    assert response.get_json() == {"results": [{"status": "accepted", "seq": n} for n in (1, 2, 3)]}
    again = client.post("/api/tables/T1/events", json=[events[2], {"type": "play", "t": 2.0, "seat": "Q", "cards": ["3S"]},
                                                       {"type": "pass", "t": 6.0, "seat": "E", "id": "x1"}],
                        headers=bearer(tokens["T1"]))
    results = again.get_json()["results"]
    assert results[0] == {"status": "duplicate", "seq": 3}
    assert results[1]["status"] == "rejected" and "seat" in results[1]["reason"]
    assert results[2] == {"status": "accepted", "seq": 4}
    assert [e["seq"] for e in client.get("/api/tables/T1/events").get_json()["events"]] == [1, 2, 3, 4]


def test_one_event_object_is_accepted_and_its_table_filled_in(agent):
    client, tokens = agent
    response = client.post("/api/tables/T2/events", json=session_events()[0], headers=bearer(tokens["T2"]))
    assert response.get_json() == {"results": [{"status": "accepted", "seq": 1}]}
    assert client.get("/api/tables/T2/events").get_json()["events"][0]["table"] == "T2"


@pytest.mark.parametrize("headers, status", [
    ({}, 401), ({"Authorization": "Bearer nope"}, 401), ({"Authorization": "Basic abc"}, 401)])
def test_a_missing_or_unknown_token_is_401(agent, headers, status):
    client, _ = agent
    response = client.post("/api/tables/T1/events", json=session_events()[0], headers=headers)
    assert response.status_code == status
    assert "error" in response.get_json()


def test_a_missing_token_and_a_wrong_method_say_how_to_ask(agent):
    """An error keeps its own headers: the scheme to authenticate with, the methods allowed."""
    client, _ = agent
    unauthorized = client.post("/api/tables/T1/events", json=session_events()[0])
    assert unauthorized.headers["WWW-Authenticate"] == "Bearer"
    wrong_method = client.delete("/api/tables/T1/events")
    assert wrong_method.status_code == 405 and "POST" in wrong_method.headers["Allow"]
    assert "error" in wrong_method.get_json()


def test_a_token_posts_to_its_own_table_only(agent):
    client, tokens = agent
    response = client.post("/api/tables/T2/events", json=session_events()[0], headers=bearer(tokens["T1"]))
    assert response.status_code == 403
    assert client.get("/api/tables/T2/events").get_json() == {"events": []}
    unknown = client.post("/api/tables/T9/events", json=session_events()[0], headers=bearer(tokens["T1"]))
    assert unknown.status_code == 403  # the same answer as a foreign table: no table id is enumerated
    assert unknown.get_json()["error"] == response.get_json()["error"].replace("'T2'", "'T9'")


@pytest.mark.parametrize("body, fragment", [
    (b"{not json", "malformed JSON"), (b"", "empty body"), (b"[]", "send 1 to"),
    (b'{"type": "tick", "t": NaN}', "malformed JSON"), (b"[" * 40 + b"]" * 40, "malformed JSON")])
def test_malformed_bodies_are_400_and_change_nothing(agent, body, fragment):
    client, tokens = agent
    response = client.post("/api/tables/T1/events", data=body, content_type="application/json",
                           headers=bearer(tokens["T1"]))
    assert response.status_code == 400
    assert fragment in response.get_json()["error"]
    assert client.get("/api/tables/T1/events").get_json() == {"events": []}


def test_a_body_over_the_limit_is_413(agent):
    client, tokens = agent
    big = json.dumps([{"type": "tick", "t": float(i)} for i in range(20_000)])
    response = client.post("/api/tables/T1/events", data=big, content_type="application/json",
                           headers=bearer(tokens["T1"]))
    assert response.status_code == 413
    assert "error" in response.get_json()


def test_agents_cannot_rule_or_write_to_another_table(agent):
    client, tokens = agent
    client.post("/api/tables/T1/events", json=session_events()[:2], headers=bearer(tokens["T1"]))
    results = client.post("/api/tables/T1/events", headers=bearer(tokens["T1"]), json=[
        {"type": "penalty", "t": 3.0, "side": "NS", "level": "loss", "rule": "P4", "by": "chief"},
        {"type": "correction", "t": 3.0, "of": "s", "event": {"type": "tick"}, "by": "chief"},
        {"type": "tick", "t": 3.0, "table": "T2"},
        "not an object",
    ]).get_json()["results"]
    assert [r["status"] for r in results] == ["rejected"] * 4
    assert "referee" in results[0]["reason"] and "T2" in results[2]["reason"] and "object" in results[3]["reason"]


def test_an_unavailable_store_is_503_with_retry_after(agent, monkeypatch):
    client, tokens = agent
    store = get_store(client.application)

    def down(*_args, **_kwargs):
        raise OperationalError("INSERT", {}, Exception("could not connect to server"))

    monkeypatch.setattr(store, "append_many", down)
    monkeypatch.setattr(store, "submit", down)  # the app's door where the store has group commit
    response = client.post("/api/tables/T1/events", json=session_events()[0], headers=bearer(tokens["T1"]))
    assert response.status_code == 503
    assert response.headers["Retry-After"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                         lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                             st.sampled_from(["type", "t", "seat", "cards", "id", "table", "x"]), inner, max_size=5),
                         max_leaves=12))
def test_no_body_ever_causes_a_500(agent, body):
    client, tokens = agent
    response = client.post("/api/tables/T1/events", data=json.dumps(body), content_type="application/json",
                           headers=bearer(tokens["T1"]))
    assert 200 <= response.status_code < 500


def test_evidence_is_stored_once_and_shown_to_referees_only(agent):
    client, tokens = agent
    first = client.post("/api/tables/T1/evidence", data=JPEG, content_type="image/jpeg", headers=bearer(tokens["T1"]))
    again = client.post("/api/tables/T1/evidence", data=JPEG, content_type="image/jpeg", headers=bearer(tokens["T1"]))
    assert first.status_code == again.status_code == 201
    sha = first.get_json()["id"]
    assert again.get_json()["id"] == sha and re.fullmatch(r"[0-9a-f]{64}", sha)
    assert client.post("/api/tables/T1/evidence", data=b"GIF89a", content_type="image/jpeg",
                       headers=bearer(tokens["T1"])).status_code == 400
    assert client.post("/api/tables/T1/evidence", data=JPEG, content_type="text/plain",
                       headers=bearer(tokens["T1"])).status_code == 415
    assert client.post("/api/tables/T2/evidence", data=JPEG, content_type="image/jpeg",
                       headers=bearer(tokens["T1"])).status_code == 403
    viewer = client.application.test_client()
    assert viewer.get(f"/api/tables/T1/evidence/{sha}").status_code == 403
    referee = client.application.test_client()
    login(referee, "referee")
    served = referee.get(f"/api/tables/T1/evidence/{sha}")
    assert served.status_code == 200 and served.data == JPEG and served.mimetype == "image/jpeg"
    assert referee.get(f"/api/tables/T2/evidence/{sha}").status_code == 404


def test_health_reports_reach_the_table_summary(agent):
    client, tokens = agent
    counts = {"plays": 40, "misread": 1, "caught": 1, "uncaught": 0, "deals": 1, "deals_right": 1}
    report = {"fps": 14.5, "last_read": 12.0, "calibration": "ok", "outbox": 3, "camera": "fault: frozen",
              "perception": counts}
    assert client.post("/api/tables/T1/health", json=report, headers=bearer(tokens["T1"])).status_code == 200
    for bad in ({"fps": "fast"}, {"perception": "40 plays"}, {"perception": {**counts, "plays": -1}},
                {"perception": {**counts, "extra": 1}}, {"perception": {**counts, "caught": True}}):
        answer = client.post("/api/tables/T1/health", json=bad, headers=bearer(tokens["T1"]))
        assert answer.status_code == 400 and f"health.{next(iter(bad))}" in answer.get_json()["error"], bad
    (tile,) = [t for t in client.get("/api/tables").get_json()["tables"] if t["table"] == "T1"]
    assert {k: tile["health"][k] for k in report} == report


def test_public_reads(agent):
    client, tokens = agent
    client.post("/api/tables/T1/events", json=session_events(), headers=bearer(tokens["T1"]))
    tables = {t["table"]: t for t in client.get("/api/tables").get_json()["tables"]}
    assert set(tables) == {"T1", "T2"}  # T2 is known by its token
    assert tables["T1"]["turn"] == "S" and tables["T1"]["counts"] == {"S": 26, "E": 26, "N": 27, "W": 26}
    assert tables["T1"]["open_flags"] == {}  # a spectator's (test_spectator)
    state = client.get("/api/tables/T1").get_json()
    assert state["state"]["deal"]["table"]["cards"] == ["9H"]
    assert [h["confidence"] for h in state["history"]][:2] == [None, None]  # a spectator's (test_spectator)
    login(client, "scorer")
    state = client.get("/api/tables/T1").get_json()
    assert [h["confidence"] for h in state["history"]][:2] == [0.97, 0.55]
    assert [h["low_confidence"] for h in state["history"]][:2] == [False, True]
    assert client.get("/api/tables").get_json()["tables"][0]["open_flags"] == {"violation": 1}
    events = client.get("/api/tables/T1/events?after=5").get_json()["events"]
    assert [e["seq"] for e in events] == [6, 7]
    assert client.get("/api/tables/T1/events?after=x").status_code == 400
    assert client.get("/api/tables/T9").status_code == 404
    assert client.get("/api/tables/T9/events").status_code == 404
    deal_start = client.get("/api/tables/T1/events").get_json()["events"][1]
    assert deal_start["type"] == "deal_start" and "hands" not in deal_start
    body = client.get("/api/tables/T1").get_data(as_text=True) + client.get("/api/tables/T1/events").get_data(as_text=True)
    assert not {face for face in hidden_faces() if f'"{face}"' in body}


def test_openapi_describes_every_api_route(agent):
    client, _ = agent
    spec = client.get("/api/openapi.json").get_json()
    assert spec["openapi"].startswith("3.")
    served = set()
    for rule in client.application.url_map.iter_rules():
        if rule.rule.startswith("/api/"):
            path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
            for method in rule.methods - {"HEAD", "OPTIONS"}:
                served.add((path, method.lower()))
    described = {(path, method) for path, ops in spec["paths"].items() for method in ops}
    assert served == described
