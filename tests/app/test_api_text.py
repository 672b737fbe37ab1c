"""Every door of the API validates text fully, on SQLite and PostgreSQL: lone surrogates,
Unicode digits, a deeply nested Last-Event-ID and far-future times are answered 4xx (or
refused in the results) naming the problem, never a 500; and, as a property, no body at
all gives a 5xx or changes a table it is refused for."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from web.app.accounts import create_token
from web.store import get_store

from .conftest import bearer, login, session_events


@pytest.fixture
def agent(any_app):
    store = get_store(any_app)
    tokens = {t: create_token(store, t) for t in ("T1", "T2")}
    client = any_app.test_client()
    client.post("/api/tables/T1/events", json=session_events()[:2], headers=bearer(tokens["T1"]))
    return client, tokens, store


def _seqs(store, table="T1") -> list[int]:
    return [e["seq"] for e in store.events(table)]


@pytest.mark.parametrize("body", [
    b'{"type":"tick","t":9999,"id":"\\ud800"}',
    b'[{"type":"tick","t":2,"id":"ok"},{"type":"tick","t":3,"evidence":{"\\udfff":1}}]',
    '{"type":"tick","t":2,"id":"\ud800"}'.encode("utf-8", "surrogatepass"),  # CESU: not UTF-8
])
def test_a_lone_surrogate_is_a_400_naming_it_and_nothing_is_stored(agent, body):
    client, tokens, store = agent
    answer = client.post("/api/tables/T1/events", data=body, content_type="application/json",
                         headers=bearer(tokens["T1"]))
    assert answer.status_code == 400, answer.get_data(as_text=True)
    error = answer.get_json()["error"]
    assert "lone UTF-16 surrogate" in error or "not UTF-8 text" in error
    assert _seqs(store) == [1, 2]


@pytest.mark.parametrize("query", ["after=%C2%B2", "after=%D9%A3", "after=-1", "after=99999999999999999999",
                                   "after=1e3", "after="])
def test_a_sequence_number_is_ascii_digits_within_range(agent, query):
    client, _, _ = agent
    answer = client.get(f"/api/tables/T1/events?{query}")
    assert answer.status_code == 400 and "after: expected a sequence number" in answer.get_json()["error"]


@pytest.mark.parametrize("arg", ["deal", "step", "seq"])
def test_the_review_page_refuses_unicode_digits(agent, arg):
    client, _, _ = agent
    login(client, "referee")
    assert client.get(f"/tables/T1/review?{arg}=%C2%B2").status_code == 400
    assert client.get(f"/tables/T1/review?{arg}=99999999999999999999").status_code == 400


def test_a_deeply_nested_last_event_id_starts_the_stream_afresh(agent):
    client, _, _ = agent
    for header in ("[" * 3000, '{"T1": ' * 3000, '{"T1": [[[1]]]}', '{"T1": 1' + "0" * 40 + "}"):
        stream = client.get("/api/stream", headers={"Last-Event-ID": header}, buffered=False)
        assert stream.status_code == 200
        chunks = iter(stream.response)
        text = ""
        while "T1" not in text:  # every table sent whole: nothing was taken as seen
            text += next(chunks).decode()
        stream.close()


def test_a_far_future_time_is_refused_with_its_bound_and_the_table_goes_on(agent):
    client, tokens, store = agent
    answer = client.post("/api/tables/T1/events", json=[{"type": "tick", "t": 1e308}, {"type": "tick", "t": 2.0}],
                         headers=bearer(tokens["T1"]))
    first, second = answer.get_json()["results"]
    assert first["status"] == "rejected" and "past this table's time bound t<=" in first["reason"]
    assert second == {"status": "accepted", "seq": 3}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
EVENTS = st.fixed_dictionaries(
    {"type": st.sampled_from(["tick", "play", "pass", "fault", "penalty", "session_end", "x"]),
     "t": st.one_of(st.floats(), st.integers(), st.text(max_size=3))},
    optional={"id": st.text(max_size=130) | st.integers(), "seat": st.text(max_size=2), "table": st.text(max_size=3),
              "cards": st.lists(st.text(max_size=3), max_size=3), "evidence": JSON, "source": st.text(max_size=8)})
BODIES = st.one_of(
    st.binary(max_size=200),
    JSON.map(lambda v: json.dumps(v).encode()),
    EVENTS.map(lambda v: json.dumps(v).encode()),
    st.lists(EVENTS, max_size=4).map(lambda v: json.dumps(v).encode()),
    st.text(max_size=60).map(lambda s: s.encode("utf-8", "surrogatepass")),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES, table=st.sampled_from(["T1", "T2", "T9"]), who=st.sampled_from(["T1", "T2", "none"]))
def test_no_body_gives_a_5xx_or_changes_a_table_it_is_refused_for(agent, body, table, who):
    client, tokens, store = agent
    before = {t: _seqs(store, t) for t in ("T1", "T2", "T9")}
    headers = bearer(tokens[who]) if who in tokens else {}
    answer = client.post(f"/api/tables/{table}/events", data=body, content_type="application/json",
                         headers=headers)
    assert answer.status_code < 500, answer.get_data(as_text=True)
    after = {t: _seqs(store, t) for t in before}
    taken = 0
    if answer.status_code == 200:
        taken = sum(r["status"] == "accepted" for r in answer.get_json()["results"])
    assert {t: s for t, s in after.items() if t != table} == {t: s for t, s in before.items() if t != table}
    assert after[table] == before[table] + list(range(len(before[table]) + 1, len(before[table]) + 1 + taken))
