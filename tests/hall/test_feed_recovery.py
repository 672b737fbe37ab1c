"""A worker's live feed after PostgreSQL cut its connection in the middle of a batch's read:
the open streams end (their pages reconnect with ``Last-Event-ID``), and the next batch
reaches the streams of the same worker. The feed once kept the cut connection as its
batches' shared one, and cut every page of that worker for as long as it lived."""

from __future__ import annotations

import json
import threading

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import make_url

from web.app.accounts import create_token
from web.store import get_store
from tests.app.conftest import bearer, make_app, session_events
from tests.app.test_stream import table_events

from .conftest import when


def terminate(url: str, pid: int) -> None:
    """``pg_terminate_backend(pid)`` from a connection of its own, until that backend is gone."""
    admin = create_engine(make_url(url).difference_update_query(["application_name"]), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            when(lambda: conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid"),
                                      {"pid": pid}).scalar() == 0, timeout=10)
    finally:
        admin.dispose()


def test_the_feed_delivers_the_next_batch_after_its_backend_was_terminated_mid_read(pg_url):
    app = make_app(pg_url)
    store = get_store(app)
    token = create_token(store, "T1")
    agent = app.test_client()
    events = session_events()

    def post(chunk: list[dict]) -> None:
        assert agent.post("/api/tables/T1/events", json=chunk, headers=bearer(token)).status_code == 200

    struck: list[int] = []

    @event.listens_for(store.engine, "before_cursor_execute")
    def strike(conn, cursor, statement, *_args) -> None:
        """Once: the feed's read of a batch's heads finds its backend terminated."""
        if not struck and threading.current_thread().name == "guandan-feed" \
                and "FROM table_heads" in statement and " IN (" in statement:
            struck.append(conn.connection.dbapi_connection.info.backend_pid)
            terminate(pg_url, struck[0])

    try:
        post(events[:2])
        first = app.test_client().get("/api/stream", buffered=False)
        tiles = table_events(first)
        assert next(tiles)["id"] == {"T1": 2}
        post(events[2:3])  # the feed's read of this batch fails: the stream ends
        assert [t["id"] for t in tiles] == []
        first.close()
        assert struck, "the feed's read-ahead never ran"

        again = app.test_client().get("/api/stream", headers={"Last-Event-ID": json.dumps({"T1": 2})},
                                      buffered=False)
        tiles = table_events(again)
        assert next(tiles)["id"] == {"T1": 3}  # resumed: the change it missed, read by the page
        post(events[3:4])  # a batch of the same feed, on a fresh connection
        assert next(tiles)["id"] == {"T1": 4}
        again.close()
    finally:
        event.remove(store.engine, "before_cursor_execute", strike)
        store.close()
