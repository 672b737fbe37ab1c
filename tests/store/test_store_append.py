"""Appending: sequence numbers, rejection with reasons, idempotent resend, derivation."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from web.store import EventRejected, SequenceConflict
from web.store.queries import known_ids_query


def test_events_are_numbered_per_table_and_read_back_in_order(store, table):
    table.session(2, 1)
    other = {"type": "session_start", "table": "T2", "t": 1, "teams": {"NS": "C", "EW": "D"}}
    assert store.append(other).seq == 1
    events = store.events("T1")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events] == ["session_start", "deal_start", "play", "play", "play", "session_end"]
    assert [t["table"] for t in store.tables()] == ["T1", "T2"]


def test_events_between_reads_each_tables_range_as_events_does(store, table):
    table.session(3, 2)
    other = {"type": "session_start", "table": "T2", "t": 1, "teams": {"NS": "C", "EW": "D"}}
    store.append(other)
    ranges = {"T1": (2, 5), "T2": (0, 1), "T3": (0, 4)}  # T3 has no events
    with store.engine.connect() as conn:
        found = store.events_between(ranges, conn=conn)
    assert found == {"T1": store.events("T1")[2:5], "T2": store.events("T2"), "T3": []}


def test_session_result_is_recorded_as_derived(store, table):
    table.session(5, 2)
    (result,) = store.results("T1")
    assert result["type"] == "session_result" and result["table"] == "T1"
    assert result["level_difference"] == 3 and result["winner"] == "NS"
    assert result["score"] == {"NS": 17, "EW": 11}


@pytest.mark.parametrize("event, reason", [
    ({"type": "play", "table": "T1", "t": 1, "seat": "S", "cards": ["2S"]}, "before session_start"),
    ({"type": "play", "table": "T1", "t": 1, "seat": "S"}, "play event needs field 'cards'"),
    ({"type": "shout", "table": "T1", "t": 1}, "unknown event type"),
    ({"type": "tick", "table": "T1"}, "tick event needs field 't'"),
    ({"type": "tick", "table": "T1", "t": float("nan")}, "nan is not a JSON number"),
    ({"type": "tick", "table": "T1", "t": 10 ** 400}, "a number of 401 characters (limit 32)"),
    ({"type": "tick", "t": 1}, "missing or bad 'table'"),
    (["not", "an", "object"], "must be a JSON object"),
    ({"type": "penalty", "table": "T1", "t": 1, "side": "NS", "level": "warning", "rule": "P6"}, "'by' must name"),
])
def test_bad_events_are_rejected_with_a_reason_and_kept_aside(store, event, reason):
    with pytest.raises(EventRejected) as caught:
        store.append(event)
    assert reason in str(caught.value)
    assert store.events("T1") == []
    assert reason in store.rejected()[-1]["reason"]


def test_engine_error_rejects_without_changing_state(store, table):
    table.append("session_start", teams={"NS": "A", "EW": "B"})
    table.append("session_end")
    with pytest.raises(EventRejected, match="play after session_end"):
        table.append("play", seat="S", cards=["2S"])
    appended = table.append("tick")
    assert appended.seq == 3
    assert store.rejected("T1")[0]["reason"].endswith("play after session_end")


def test_resend_with_same_id_is_idempotent_but_a_reused_id_is_refused(store, table):
    table.append("session_start", teams={"NS": "A", "EW": "B"})
    first = store.append({"type": "play", "table": "T1", "t": 5, "seat": "S", "cards": ["2S"], "id": "p1"})
    again = store.append({"type": "play", "table": "T1", "t": 5, "seat": "S", "cards": ["2S"], "id": "p1"})
    assert again.duplicate and again.seq == first.seq == 2
    with pytest.raises(EventRejected, match="id 'p1' is already used by seq 2"):
        store.append({"type": "play", "table": "T1", "t": 6, "seat": "E", "cards": ["2S"], "id": "p1"})
    assert len(store.events("T1")) == 2


def test_an_id_is_known_per_table_in_a_group_of_resends(store):
    """One id at two tables is two events; resent together, each is found at its own table."""
    plays = [{"type": "session_start", "table": t, "t": 1, "teams": {"NS": "A", "EW": "B"}, "id": f"s-{t}"}
             for t in ("T1", "T2")]
    plays += [{"type": "play", "table": t, "t": 2, "seat": "S", "cards": [c], "id": "same"}
              for t, c in (("T1", "2S"), ("T2", "3H"))]
    first = store.submit(plays)
    again = store.submit(plays[::-1])
    assert [a.seq for a in first] == [1, 1, 2, 2] and not any(a.duplicate for a in first)
    assert [(a.seq, a.duplicate) for a in again] == [(2, True), (2, True), (1, True), (1, True)]
    assert [e["cards"] for t in ("T1", "T2") for e in store.events(t) if e["type"] == "play"] == [["2S"], ["3H"]]


def test_known_ids_are_searched_in_the_index_not_scanned(store):
    """Asked in every commit: a scan of the events table would slow every write as the record grows."""
    if store.engine.dialect.name != "sqlite":
        pytest.skip("the query plan checked is SQLite's")
    query = known_ids_query(3)
    with store.engine.connect() as conn:
        plan = conn.execute(text(f"EXPLAIN QUERY PLAN {query.text}"),
                            {f"{side}{i}": "x" for i in range(3) for side in "te"}).all()
    steps = [row[-1] for row in plan]
    assert any(s.startswith("SEARCH e USING INDEX uq_table_events_event_id") for s in steps), steps
    assert not any(s.startswith("SCAN e") for s in steps), steps


def test_expected_seq_detects_a_moved_head(store, table):
    table.append("session_start", teams={"NS": "A", "EW": "B"})
    assert table.store.append(table.event("tick"), expected_seq=1).seq == 2
    with pytest.raises(SequenceConflict, match="expected head seq 1, store has 2"):
        store.append(table.event("tick"), expected_seq=1)


def test_two_stores_on_one_database_see_each_others_appends(store, table, reopen, derivation):
    table.append("session_start", teams={"NS": "A", "EW": "B"})
    table.append("play", seat="S", cards=["2S"])
    with reopen(derivation=derivation) as other:
        other.append(table.event("play", seat="E", cards=["3S"]))
        other.append(table.event("play", seat="E", cards=["3S"]))
    # this store's cached referee is one event behind; it must catch up, not fork
    table.append("session_end")
    assert [e["seq"] for e in store.events("T1")] == [1, 2, 3, 4, 5]
    assert store.results("T1")[0]["winner"] == "EW"
    assert store.verify().ok


def test_init_app_opens_the_store_named_by_the_config(db_url, tmp_path, key_home):
    from flask import Flask

    from web.store import get_store, init_app

    app = Flask("t")
    app.config.update(STORE_URL=db_url, SECRET_KEY="from the config")
    store = init_app(app)
    assert get_store(app) is store and store.url == db_url
    store.close()
    data = Flask("d")
    data.config["DATA_DIR"] = str(tmp_path / "d")
    with init_app(data):
        assert (tmp_path / "d" / "guandan.sqlite3").exists()
        # no key configured: a per-user key is made once, outside the data directory,
        # readable by its owner only
        assert not (tmp_path / "d" / "secret.key").exists()
        key = key_home / "guandan-referee" / "secret.key"
        assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_text().strip()) == 64
    made = key.read_text()
    with init_app(data):
        assert key.read_text() == made


def test_append_many_validates_each_event_exactly_like_append(store, table):
    start = table.event("session_start", teams={"NS": "A", "EW": "B"})
    p1 = table.event("play", seat="S", cards=["2S"], id="p1")
    other = {"type": "session_start", "table": "T2", "t": 1, "teams": {"NS": "C", "EW": "D"}}
    events = [
        start, p1,
        {"type": "shout", "table": "T1", "t": 3},               # bad envelope
        {"type": "play", "table": "T3", "t": 1, "seat": "S", "cards": ["2S"]},  # refused by the referee
        dict(p1),                                                # a resend: stored once
        {**table.event("play", seat="E", cards=["2S"]), "id": "p1"},  # id reused with other content
        other,                                                   # another table ends the batch
        table.event("play", seat="E", cards=["3S"], id="e1"),
        table.event("session_end"),
    ]
    outcomes = store.append_many(events, batch_size=2)
    kinds = [type(o).__name__ if isinstance(o, Exception) else ("dup" if o.duplicate else o.seq)
             for o in outcomes]
    assert kinds == [1, 2, "EventRejected", "EventRejected", "dup", "EventRejected", 1, 3, 4]
    assert "unknown event type 'shout'" in str(outcomes[2]) and "before session_start" in str(outcomes[3])
    assert "id 'p1' is already used by seq 2" in str(outcomes[5])
    # each table's events in one transaction (T1 alone, T2 and T3 together), then the bad envelope
    assert [r["reason"] for r in store.rejected()] == [outcomes[i].reason for i in (5, 3, 2)]
    assert [e["type"] for e in store.events("T1")] == ["session_start", "play", "play", "session_end"]
    assert outcomes[8].records[0]["score"] == {"NS": 14, "EW": 14}  # one play each
    assert store.results("T1") == [{**outcomes[8].records[0], "table": "T1"}]
    report = store.verify(rederive=True)
    assert report.ok and (report.tables, report.events) == (2, 5)


def test_a_new_table_takes_its_ruleset_from_its_first_accepted_event(store):
    early = {"type": "play", "table": "T3", "t": 1, "seat": "S", "cards": ["2S"]}
    start = {"type": "session_start", "table": "T3", "t": 2, "teams": {"NS": "A", "EW": "B"},
             "ruleset": "report6"}
    with pytest.raises(EventRejected, match="before session_start"):
        store.append(early)
    assert store.tables() == []  # a refused first event opens no table
    done = store.append_many([early, start])
    assert isinstance(done[0], EventRejected) and done[1].seq == 1
    assert [(t["table"], t["ruleset"]) for t in store.tables()] == [("T3", "report6")]


def test_append_many_refuses_a_batch_size_below_one(store):
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        store.append_many([], batch_size=0)
