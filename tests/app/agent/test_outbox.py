"""The outbox keeps events in order until acknowledged, across restarts, one copy per id."""

import sqlite3

import pytest
from hypothesis import given, settings, strategies as st

from web.app.agent.outbox import Outbox, OutboxError


def event(eid, t=1.0, **extra):
    return {"type": "pass", "seat": "S", "t": t, "table": "T1", "id": eid, **extra}


def test_events_leave_in_the_order_they_were_put_and_only_when_acked(tmp_path):
    box = Outbox(tmp_path / "o.sqlite")
    for n in range(5):
        box.put(event(f"e{n}", t=n))
    assert [e["id"] for e in box.pending(3)] == ["e0", "e1", "e2"]
    box.ack(["e0", "e1"])
    assert [e["id"] for e in box.pending()] == ["e2", "e3", "e4"]
    assert box.depth() == 3


def test_a_restart_keeps_unacked_events_and_never_reuses_an_id(tmp_path):
    path = tmp_path / "o.sqlite"
    box = Outbox(path, run="r1")
    ids = [box.new_id() for _ in range(3)]
    assert ids == ["r1-1", "r1-2", "r1-3"]
    for eid in ids:
        box.put(event(eid))
    box.ack(ids[:1])
    box.close()
    again = Outbox(path, run="ignored: the file already has its run")
    assert [e["id"] for e in again.pending()] == ids[1:]
    assert again.new_id() == "r1-4"


def test_a_second_put_of_an_id_keeps_the_first_copy(tmp_path):
    box = Outbox(tmp_path / "o.sqlite")
    box.put(event("a", t=1.0))
    box.put(event("a", t=9.0))
    assert box.pending() == [event("a", t=1.0)]


def test_events_without_an_id_or_not_json_are_refused(tmp_path):
    box = Outbox(tmp_path / "o.sqlite")
    with pytest.raises(OutboxError, match="needs a string 'id'"):
        box.put({"type": "tick", "t": 1.0})
    with pytest.raises(OutboxError, match="not JSON"):
        box.put(event("x", t=float("nan")))
    assert box.depth() == 0


def test_evidence_waits_until_uploaded(tmp_path):
    box = Outbox(tmp_path / "o.sqlite")
    sha = box.put_evidence(b"\xff\xd8jpeg bytes")
    assert len(sha) == 64 and box.evidence(sha) == b"\xff\xd8jpeg bytes"
    box.evidence_uploaded(sha)
    assert box.evidence(sha) is None


def test_what_a_killed_writer_committed_is_there(tmp_path):
    """Each put is its own committed transaction: another connection sees it at once."""
    path = tmp_path / "o.sqlite"
    box = Outbox(path)
    box.put(event("kept"))
    other = sqlite3.connect(path)
    assert other.execute("SELECT id FROM events").fetchall() == [("kept",)]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3)), max_size=40))
def test_acks_in_any_pattern_keep_the_rest_in_order(tmp_path_factory, steps):
    box = Outbox(tmp_path_factory.mktemp("box") / "o.sqlite")
    model: list[str] = []
    for put, n in steps:
        if put:
            eid = box.new_id()
            box.put(event(eid))
            model.append(eid)
        else:
            acked = [e["id"] for e in box.pending(n)]
            assert acked == model[:n]
            box.ack(acked)
            del model[:n]
    assert [e["id"] for e in box.pending(1000)] == model
