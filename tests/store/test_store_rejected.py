"""Refused events are kept within bounds, on SQLite and PostgreSQL: each table's latest
bodies, every refusal counted, the oldest summed up by reason; a token flooding its table
with bad events cannot grow the database without bound, nor touch another table's."""

from __future__ import annotations

import json

from alembic import command
from sqlalchemy import func, insert, select

from web.store import EventRejected
from web.store.db import alembic_config, make_engine
from web.store.models import RejectedEvent
from web.store import rejected
from web.store.rejected import OTHER, kind_of

START = {"type": "session_start", "table": "T1", "t": 0, "teams": {"NS": "A", "EW": "B"}}


def _bad(table: str, i: int, size: int = 0) -> dict:
    return {"type": "play", "table": table, "t": 1 + i, "seat": "S", "cards": ["2S"], "pad": "x" * size}


def test_a_flood_keeps_the_latest_bodies_and_counts_and_sums_up_the_rest(reopen, derivation):
    with reopen(derivation=derivation, rejected_keep=5) as store:
        store.append({**START, "table": "T2"})
        outcomes = store.append_many([_bad("T1", i, 1000) for i in range(12)])  # before session_start
        assert all(isinstance(o, EventRejected) for o in outcomes)
        store.append_many([{"type": "x", "table": "T2", "t": 1}])
        kept = store.rejected("T1")
        assert [json.loads(r["body"])["t"] for r in kept] == [8, 9, 10, 11, 12]  # the latest five
        tally = store.rejected_tally("T1")
        assert (tally["rejected"], tally["kept"], tally["dropped"]) == (12, 5, 7)
        assert tally["reasons"] == {"play before session_start": 7}
        assert store.rejected_tally("T2")["rejected"] == 1 and len(store.rejected("T2")) == 1  # its own
        assert store.verify().ok


def test_the_bound_holds_across_requests_and_writers(reopen, derivation):
    with reopen(derivation=derivation, rejected_keep=3) as one, reopen(derivation=derivation, rejected_keep=3) as two:
        for i in range(10):
            (one if i % 2 else two).submit([_bad("T1", i, 50_000)])
        with one.engine.connect() as conn:
            count, size = conn.execute(select(func.count(), func.sum(func.length(RejectedEvent.body)))
                                       .where(RejectedEvent.table_id == "T1")).one()
        assert count == 3 and size < 3 * 51_000
        assert (one.rejected_tally("T1")["rejected"], one.rejected_tally("T1")["dropped"]) == (10, 7)


def test_events_refused_before_any_table_was_known_are_bounded_too(reopen, derivation):
    with reopen(derivation=derivation, rejected_keep=2) as store:
        for i in range(5):
            try:
                store.append({"type": "tick", "t": i, "table": "\x00bad" * (i + 1)})
            except EventRejected:
                pass
        assert [r["table"] for r in store.rejected()] == [None, None]
        tally = store.rejected_tally(None)
        assert (tally["rejected"], tally["dropped"]) == (5, 3) and list(tally["reasons"].values()) == [3]


def test_reasons_are_summed_up_without_what_varies(reopen, derivation, monkeypatch):
    assert kind_of("t=5.5 is past this table's time bound t<=3600 (its last event's t=0, + 16x the 12 s") == \
        "t=N is past this table's time bound t<=N (its last event's t=N, + Nx the N s"
    assert kind_of("event names table 'A', not 'B'") == kind_of("event names table 'C', not \"D\"")
    monkeypatch.setattr(rejected, "MAX_REASONS", 1)
    with reopen(derivation=derivation, rejected_keep=1) as store:
        for event in (_bad("T1", 0), {"type": "x", "table": "T1", "t": 1}, _bad("T1", 1), _bad("T1", 2)):
            store.append_many([event])  # each drops the one before: a play, the unknown type, a play
        assert store.rejected_tally("T1")["reasons"] == {"play before session_start": 2, OTHER: 1}


def test_an_upgraded_store_counts_the_refusals_it_already_held(db_url, reopen, derivation):
    reopen(derivation=derivation).close()  # a store, then taken back to the schema before the tallies
    engine = make_engine(db_url)
    with engine.begin() as conn:
        config = alembic_config()
        config.attributes["connection"] = conn
        command.downgrade(config, "0005")
        conn.execute(insert(RejectedEvent), [dict(table_id=tid, body="{}", reason="old", received_at=float(i))
                                             for i, tid in enumerate(["T1", "T1", None, "T1"])])
    engine.dispose()
    with reopen(derivation=derivation, rejected_keep=2) as store:
        assert (store.rejected_tally("T1")["rejected"], store.rejected_tally(None)["rejected"]) == (3, 1)
        store.append_many([_bad("T1", 0)])
        tally = store.rejected_tally("T1")
        assert (tally["rejected"], tally["kept"], tally["reasons"]) == (4, 2, {"old": 2})
        assert len(store.rejected("T1")) == 2
