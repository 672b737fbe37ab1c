"""The database connection cut in the middle of a commit (PostgreSQL's backend terminated)."""

from __future__ import annotations

import pytest
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from referee.simulate import play_session
from tests.store.support import TEST_SECRET, temporary_url
from web.store import Store


def test_a_connection_cut_mid_commit_says_so_and_the_next_append_works(tmp_path):
    events = play_session(3, {"NS": "A", "EW": "B"}, table="C1")[:3]
    with temporary_url("postgresql", tmp_path) as url, Store(url, secret_key=TEST_SECRET) as store:
        assert store.submit(events[:1])[0].seq == 1
        armed = [True]

        @event.listens_for(store.engine, "before_cursor_execute")
        def _cut(conn, cursor, statement, *_args) -> None:
            if armed and statement.startswith("INSERT INTO table_events"):
                armed.clear()  # the transaction has locked the head and derived the event
                cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")

        with pytest.raises(OperationalError, match="terminating connection"):  # not PendingRollbackError
            store.submit(events[1:2])
        assert not armed and [e["seq"] for e in store.events("C1")] == [1]  # nothing half-written
        assert [o.seq for o in store.submit(events[1:3])] == [2, 3]  # the same store goes on
        assert [e["id"] for e in store.events("C1")] == [e["id"] for e in events]
        assert store.verify(rederive=True).ok
