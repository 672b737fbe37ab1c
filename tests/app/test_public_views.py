"""A table's public views read the records kept aside as they are derived (``Timeline.noted``)
and find the delayed steps from the end; here they are checked against the plain
definition: every step the delay lets a viewer see, every record of those steps."""

from __future__ import annotations

import tempfile
import threading
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import event

from referee.simulate import play_session
from tests.store.support import TEST_SECRET
from web.app.public import (
    SEVERITIES,
    flag_status,
    public_summary,
    public_table,
    review_status,
    summary,
)
from web.app.timeline import READ_AHEAD_MOST, Timelines
from web.store import open_store


def walked(timeline, delay: float) -> dict:
    """The parts of ``public_table`` that count records, from a walk over every step."""
    steps = timeline.steps
    if delay > 0 and steps:
        steps = [s for s in steps if s.event["t"] <= timeline.steps[-1].event["t"] - delay]
    state = steps[-1].state_view if steps else {}
    records = [(s, r) for s in steps for r in s.records]
    flags = Counter(r["severity"] for _, r in records
                    if r.get("type") == "flag" and flag_status(r, timeline.closed, state) == "open")
    return {
        "seq": steps[-1].seq if steps else 0,
        "delayed": len(steps) < len(timeline.steps),
        "open_flags": {s: flags[s] for s in SEVERITIES if flags[s]},
        "reviews": sum(1 for s, r in records
                       if r.get("type") == "review" and review_status(r, s, state, timeline.closed) == "open"),
        "deals": [r for _, r in records if r.get("type") == "deal_end"],
        "sessions": [r for _, r in records if r.get("type") == "session_result"],
        "corrections": sum(1 for s in steps if s.corrected) + sum(
            1 for s in timeline.struck
            if len(steps) == len(timeline.steps) or (steps and s["original"]["t"] <= steps[-1].event["t"])),
    }


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), share=st.floats(0.05, 1.0), delay=st.sampled_from([0.0, 4.0, 30.0, 1e6]))
def test_views_count_what_a_walk_over_every_shown_step_counts(seed, share, delay):
    events = play_session(seed, breaches=0.2, table="T1")
    events = events[:max(1, int(len(events) * share))]
    with tempfile.TemporaryDirectory() as tmp, \
            open_store(f"sqlite:///{tmp}/g.sqlite3", secret=TEST_SECRET) as store:
        store.append_many(events)
        timelines = Timelines(store)
        table = public_table(timelines, "T1", delay)
        expected = walked(timelines.get("T1"), delay)
        assert {k: table[k] for k in expected} == expected
        assert public_summary(timelines, "T1", delay) == summary(table)


def test_the_kept_records_hold_flags_and_results_of_a_whole_session():
    """The property above is not vacuous: a session with breaches has flags and results."""
    with tempfile.TemporaryDirectory() as tmp, \
            open_store(f"sqlite:///{tmp}/g.sqlite3", secret=TEST_SECRET) as store:
        store.append_many(play_session(7, breaches=0.2, table="T1"))
        timelines = Timelines(store)
        kinds = Counter(r["type"] for _, r in timelines.get("T1").noted)
        assert kinds["flag"] > 0 and kinds["deal_end"] > 1 and kinds["session_result"] == 1


def test_a_feeds_reads_share_one_connection_while_reading():
    """Each connection checked out of a PostgreSQL pool is pinged first: a batch of tiles
    read inside ``reading()`` checks out one, not two per table (once the timelines follow
    the tables' live referees: the first read of a table asks the store for it)."""
    with tempfile.TemporaryDirectory() as tmp, \
            open_store(f"sqlite:///{tmp}/g.sqlite3", secret=TEST_SECRET) as store:
        one, two = play_session(3, table="T1"), play_session(4, table="T2")
        store.append_many(one[:18] + two[:18])
        timelines = Timelines(store)
        timelines.get("T1"), timelines.get("T2")
        store.append_many(one[18:20] + two[18:20])
        checkouts = []
        event.listen(store.engine, "checkout", lambda *args: checkouts.append(args))
        with timelines.reading():
            assert timelines.get("T1").head_seq == 20 and timelines.get("T2").head_seq == 20
            assert timelines.head("T1")["head_seq"] == 20
        assert len(checkouts) == 1
        store.append_many(one[20:22])
        before = len(checkouts)
        assert timelines.get("T1").head_seq == 22 and len(checkouts) == before + 1  # outside: one of its own


def statements(store) -> list[str]:
    """Every query the store's engine runs from now on (not the driver's own BEGIN)."""
    ran: list[str] = []
    event.listen(store.engine, "before_cursor_execute",
                 lambda conn, cursor, sql, *rest: sql.startswith(("SELECT", "WITH")) and ran.append(sql))
    return ran


def test_a_batch_reads_its_tables_heads_and_new_events_in_two_queries():
    """A live feed's batch names its tables to ``reading``: their heads and the events their
    cached timelines lack come in two queries, and the timelines equal fresh replays."""
    sessions = {f"T{n}": play_session(n, breaches=0.2, table=f"T{n}") for n in range(1, 9)}
    with tempfile.TemporaryDirectory() as tmp, \
            open_store(f"sqlite:///{tmp}/g.sqlite3", secret=TEST_SECRET) as store:
        store.append_many([e for events in sessions.values() for e in events[:30]])
        timelines = Timelines(store)
        for table in sessions:
            timelines.get(table)
        store.append_many([e for events in sessions.values() for e in events[30:33]])
        ran = statements(store)
        with timelines.reading(set(sessions)):
            read = {table: public_summary(timelines, table) for table in sessions}
        assert len(ran) == 2
        fresh = Timelines(store)
        assert read == {table: public_summary(fresh, table) for table in sessions}
        assert {t["seq"] for t in read.values()} == {33}


def test_a_table_long_unread_or_named_late_is_read_on_its_own():
    with tempfile.TemporaryDirectory() as tmp, \
            open_store(f"sqlite:///{tmp}/g.sqlite3", secret=TEST_SECRET) as store:
        events = play_session(5, table="T1")
        store.append_many(events[:10] + play_session(6, table="T2")[:10])
        timelines = Timelines(store)
        timelines.get("T1")
        store.append_many(events[10:10 + READ_AHEAD_MOST + 1])
        with timelines.reading({"T1", "T2", "T3"}):  # T1 too far behind, T2 never read, T3 no table
            assert timelines.get("T1").head_seq == 11 + READ_AHEAD_MOST
            assert timelines.get("T2").head_seq == 10 and timelines.get("T3") is None
        assert timelines.get("T1").steps[-1].state_view == Timelines(store).get("T1").steps[-1].state_view


def test_a_timeline_read_past_the_read_ahead_meanwhile_is_kept():
    """Between a batch's read-ahead and its tile of a table, a page may read that table
    after newer events: the batch takes that timeline as it is, not one rebuilt older."""
    with tempfile.TemporaryDirectory() as tmp, \
            open_store(f"sqlite:///{tmp}/g.sqlite3", secret=TEST_SECRET) as store:
        events = play_session(8, table="T1")
        store.append_many(events[:20])
        timelines = Timelines(store)
        timelines.get("T1")
        with timelines.reading({"T1"}):
            store.append_many(events[20:22])
            page = threading.Thread(target=timelines.get, args=("T1",))  # a page: reads on its own
            page.start()
            page.join()
            later = timelines._cache["T1"]
            assert later.head_seq == 22
            assert timelines.get("T1") is later
