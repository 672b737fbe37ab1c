"""The store with the real referee engine: simulated sessions, snapshots, corrections."""

from __future__ import annotations

import json
import logging
import pickle

import pytest
from sqlalchemy import select, update

from referee.engine import Referee
from referee.rulesets import load_ruleset
from referee.simulate import play_session
from web.store import Appended, EventRejected
from tests.store.support import TEST_SECRET
from web.store.models import Snapshot, TableEvent
from web.store.signing import snapshot_is_authentic, snapshot_mac

TEAMS = {"NS": "Pair A", "EW": "Pair B"}


@pytest.fixture
def real_store(reopen):
    with reopen(snapshot_every=100) as s:
        s.add_official("Ref Li", "referee")
        yield s


def _import(store, events):
    outcomes = store.append_many(events, batch_size=64)
    assert all(isinstance(o, Appended) for o in outcomes), [o for o in outcomes if not isinstance(o, Appended)]


def test_simulated_session_results_are_recorded_as_derived(real_store):
    events = play_session(5, TEAMS)
    _import(real_store, events)
    ref = Referee(load_ruleset("competition"))
    for e in events:
        ref.feed(e)
    want = [r for r in ref.records() if r["type"] in ("deal_end", "session_result")]
    got = real_store.results("T1")
    assert [{k: v for k, v in r.items() if k != "table"} for r in got] == want
    assert got[-1]["type"] == "session_result" and got[0]["type"] == "deal_end"
    assert real_store.verify(rederive=True).ok


def test_reopened_table_continues_from_a_snapshot(real_store, reopen):
    events = play_session(6, TEAMS)
    half = len(events) // 2
    _import(real_store, events[:half])
    with reopen(snapshot_every=100) as other:
        _import(other, events[half:])
        assert other.results("T1")[-1]["type"] == "session_result"
    ref = Referee(load_ruleset("competition"))
    for e in events:
        ref.feed(e)
    assert real_store.referee("T1").records() == ref.records()


def test_engine_rejection_is_reported_and_not_stored(real_store):
    events = play_session(7, TEAMS)
    _import(real_store, events[:10])
    bad = {"type": "play", "table": "T1", "t": events[9]["t"] + 1, "seat": "S", "cards": ["ZZ"]}
    with pytest.raises(EventRejected, match="ZZ"):
        real_store.append(bad)
    assert "ZZ" in real_store.rejected("T1")[0]["reason"]
    assert len(real_store.events("T1")) == 10


def test_correction_through_the_engine_starts_a_new_generation(real_store):
    events = play_session(8, TEAMS)
    _import(real_store, events)
    played = next(e for e in events if e["type"] == "penalty" or e["type"] == "pass")
    fix = {"type": "correction", "table": "T1", "t": events[-1]["t"] + 1, "of": played["id"],
           "by": "Ref Li", "event": {k: v for k, v in played.items() if k not in ("id", "table")}}
    real_store.append(fix)
    assert real_store.tables()[0]["generation"] == 1
    assert real_store.records("T1", generation=0)
    assert real_store.audit("T1")[0]["original"]["id"] == played["id"]
    assert real_store.verify(rederive=True).ok


class _Planted:
    """Unpickling this creates ``path``: a stand-in for code an attacker would run."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.mark.parametrize("key", [TEST_SECRET.encode(), b"a key guessed by the forger"],
                         ids=["signed-with-the-store-key", "signed-with-another-key"])
def test_a_planted_pickle_is_never_unpickled_and_the_table_replays(reopen, tmp_path, caplog, key):
    events = play_session(9, TEAMS)[:151]
    with reopen(snapshot_every=50) as s:
        _import(s, events[:150])
    pickle.loads(pickle.dumps(_Planted(tmp_path / "proof")))  # such a blob does run code...
    assert (tmp_path / "proof").exists()
    marker = tmp_path / "pwned"
    planted = pickle.dumps(_Planted(marker))
    with reopen() as s, s.engine.begin() as conn:
        # ...and is planted as a snapshot pinned to the right link, signed even with the
        # store's own key (the worst case: an intruder who also stole the key)
        link = conn.execute(select(TableEvent.hash).where(TableEvent.seq == 150)).scalar_one()
        conn.execute(update(Snapshot).where(Snapshot.seq == 150).values(
            blob=planted, mac=snapshot_mac(key, "T1", 150, link, planted)))
    with reopen(snapshot_every=50) as s, caplog.at_level(logging.WARNING, logger="web.store.referees"):
        ref = s.referee("T1")
        assert ("is not plain JSON data" if key == TEST_SECRET.encode() else "fails its signature check") \
            in caplog.text
        assert not marker.exists()
        want = Referee(load_ruleset("competition"))
        for e in events[:150]:
            want.feed(e)
        assert ref.records() == want.records()
        assert s.append(events[150]).seq == 151  # the table goes on from the replayed state
        problems = s.verify(rederive=True).problems
    assert not marker.exists()
    assert problems == [("table T1: seq 150: snapshot is not plain JSON data (never loaded; forged with the key?)"
                         if key == TEST_SECRET.encode() else
                         "table T1: seq 150: snapshot is not signed by this store's key (forged or another key)")]


def test_only_plain_data_snapshots_are_kept(reopen):
    """The engine's snapshot bytes are stored only when they are plain JSON data."""
    with reopen(snapshot_every=50) as s:
        _import(s, play_session(9, TEAMS)[:120])
        with s.engine.connect() as conn:
            blobs = conn.execute(select(Snapshot.blob)).scalars().all()
    for blob in blobs:
        json.loads(blob)
    assert len(blobs) == 2


def test_a_snapshot_mac_binds_the_blob_to_its_table_and_place():
    key, blob = b"k" * 32, b"state"
    mac = snapshot_mac(key, "T1", 50, "ab" * 32, blob)
    assert snapshot_is_authentic(key, mac, "T1", 50, "ab" * 32, blob)
    for other in [(b"x" * 32, "T1", 50, "ab" * 32, blob), (key, "T2", 50, "ab" * 32, blob),
                  (key, "T1", 51, "ab" * 32, blob), (key, "T1", 50, "cd" * 32, blob),
                  (key, "T1", 50, "ab" * 32, b"state!")]:
        assert not snapshot_is_authentic(other[0], mac, *other[1:])
    assert not snapshot_is_authentic(key, None, "T1", 50, "ab" * 32, blob)
