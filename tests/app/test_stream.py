"""The live stream (/api/stream): a change reaches an open stream; Last-Event-ID resumes."""

from __future__ import annotations

import json
import threading
import time
import uuid

import pytest
from werkzeug.test import EnvironBuilder

from web.app import api, context
from web.app.broker import LocalBroker, RedisBroker
from web.app.feed import Batch, Subscriber, frame

from .conftest import bearer, make_app, session_events

REDIS_URL = "redis://127.0.0.1:6379/0"


def table_events(stream):
    """The ``table`` and ``change`` events of a stream as they come (skipping the retry line
    and keep-alives), each with the table's whole tile as a page holds it (a change merged
    into the tile the stream sent before, which must exist); an event's ``id`` is None
    unless it ends what was written at once."""
    text, tiles = "", {}
    for chunk in stream.response:
        text += chunk.decode()
        while "\n\n" in text:
            block, text = text.split("\n\n", 1)
            fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
            if fields.get("event") in ("table", "change"):
                data = json.loads(fields["data"])
                if fields["event"] == "change":
                    data = {**tiles[data["table"]], **data}
                tiles[data["table"]] = data
                yield {"id": json.loads(fields["id"]) if "id" in fields else None, "data": data,
                       "kind": fields["event"], "size": len(fields["data"])}


def test_a_posted_event_reaches_an_open_stream(app, post_events):
    post_events(session_events()[:2])
    stream = app.test_client().get("/api/stream", buffered=False)
    assert stream.mimetype == "text/event-stream"
    events = table_events(stream)
    first = [next(events), next(events)]  # every known table, T2 by its token
    assert [e["data"]["table"] for e in first] == ["T1", "T2"] and first[-1]["id"] == {"T1": 2, "T2": 0}
    post_events(session_events()[2:4])
    second = next(events)  # the latency itself is measured by bench/dashboard.py
    assert second["id"] == {"T1": 4, "T2": 0} and second["data"]["counts"]["E"] == 26
    stream.close()


def test_a_stream_sends_each_table_whole_once_then_what_changed(app, post_events):
    """A page holds every tile it was sent; each change then carries only the fields that
    moved, and the tile it makes is the table's tile as the API gives it."""
    post_events(session_events()[:2])
    stream = app.test_client().get("/api/stream", buffered=False)
    events = table_events(stream)
    assert [next(events)["kind"] for _ in "12"] == ["table", "table"]
    sizes = []
    for event in session_events()[2:]:
        post_events([event])
        got = next(events)
        whole = app.test_client().get("/api/tables").get_json()["tables"][0]
        assert got["kind"] == "change" and got["data"] == whole
        sizes.append((got["size"], len(json.dumps(whole, ensure_ascii=False, separators=(",", ":")))))
    assert all(change < tile for change, tile in sizes)
    # most steps move a few fields; S's out-of-turn play moves the table, the turn and a count
    # as well (the referee follows the table), so the saving is a little under half
    assert sum(change for change, _ in sizes) < sum(tile for _, tile in sizes) * 0.6
    stream.close()


def test_a_stream_gets_a_whole_tile_unless_it_sent_the_one_a_change_goes_from(app, post_events):
    """A change goes from the table's tile built before it. A stream that was sent another
    (a page that opened meanwhile had a tile built for it alone) gets the next tile whole:
    a change from a tile it never sent would leave its page with a wrong one."""
    post_events(session_events()[:2])
    first = app.test_client().get("/api/stream", buffered=False)
    first_events = table_events(first)
    [next(first_events) for _ in "12"]
    post_events(session_events()[2:3])
    assert next(first_events)["kind"] == "change"
    with app.app_context():
        tiles = context.tiles()
    tiles._cache.clear()  # the next page's first tiles are built for it: a tile the first never got
    second = app.test_client().get("/api/stream", buffered=False)
    second_events = table_events(second)
    assert [next(second_events)["data"]["seq"] for _ in "12"] == [3, 0]
    post_events(session_events()[3:4])
    assert next(second_events)["kind"] == "change"
    assert next(first_events)["kind"] == "table"
    post_events(session_events()[4:5])
    assert [next(first_events)["kind"], next(second_events)["kind"]] == ["change", "change"]  # in step again
    second.close()  # the last opened first: both streams' contexts live in this one thread
    first.close()


def test_a_tile_is_encoded_whole_only_for_a_stream_that_needs_it_whole():
    from web.app.tiles import Tiles

    built = iter([{"table": "T1", "seq": 1, "turn": "N"}, {"table": "T1", "seq": 2, "turn": "E"}])
    tiles = Tiles(lambda table, health: next(built))
    first = tiles.get("T1", 0.0, {})
    second = tiles.get("T1", time.monotonic() + 1, {})  # newer than the cached one: built again
    assert second.base == first.version and "message" not in vars(second)
    assert second.sent_as(first.version) == second.change and b'"turn":"E"' in second.change
    assert "message" not in vars(second)  # a stream in step wrote the change alone
    assert second.sent_as(None).startswith(b"event: table\ndata: ") and "message" in vars(second)


def test_a_stream_closed_before_it_began_leaves_the_feed(app, post_events):
    """A page gone before its first byte (the server closes the response unread): the feed
    no longer counts it, and can stop when idle."""
    with app.app_context():
        feed = context.feed()
    before = feed.streams
    body = app(EnvironBuilder(path="/api/stream").get_environ(), lambda status, headers: None)
    assert feed.streams == before + 1
    body.close()
    assert feed.streams == before


def test_pages_opening_together_reuse_the_tiles_and_miss_no_change(app, post_events):
    """A page opening after another reuses the tiles built since the feed subscribed (500
    pages opening at once built every table 500 times), and still gets every change."""
    post_events(session_events()[:2])
    with app.app_context():
        tiles = context.tiles()
    built, build = [], tiles._build
    tiles._build = lambda table, health: built.append(table) or build(table, health)
    first = app.test_client().get("/api/stream", buffered=False)
    first_events = table_events(first)
    assert [next(first_events)["data"]["seq"] for _ in "12"] == [2, 0] and sorted(built) == ["T1", "T2"]
    post_events(session_events()[2:3])  # committed before the second page opens
    second = app.test_client().get("/api/stream", buffered=False)
    second_events = table_events(second)
    seen = {}
    while seen.get("T1") != 3:  # now, or in the batch of that change
        event = next(second_events)
        seen[event["data"]["table"]] = event["data"]["seq"]
    assert next(first_events)["data"]["seq"] == 3
    assert built.count("T2") == 1 and built.count("T1") == 2  # T1 once more, for its change
    second.close()  # the last opened first: both streams' contexts live in this one thread
    first.close()


def test_last_event_id_resumes_with_what_moved_only(app, post_events):
    post_events(session_events()[:2])
    post_events([{"type": "session_start", "t": 0.0, "teams": {"NS": "A", "EW": "B"}}], table="T2")
    stream = app.test_client().get("/api/stream", headers={"Last-Event-ID": json.dumps({"T1": 2, "T2": 0})},
                                   buffered=False)
    events = table_events(stream)
    event = next(events)
    assert event["data"]["table"] == "T2" and event["id"] == {"T1": 2, "T2": 1}
    post_events(session_events()[2:3])
    assert next(events)["id"] == {"T1": 3, "T2": 1}
    stream.close()


def test_an_event_stored_without_its_notice_reaches_open_streams_when_sent_again(app, post_events, monkeypatch):
    """A host that stored an event and died before its notice went out: the agent, never
    answered, sends the event again to another host, which finds it stored. That host
    tells the open pages, which would otherwise hold the table's last tile for good."""
    monkeypatch.setattr(api, "STREAM_MAX_S", 3.0)  # without the notice the stream ends unchanged
    post_events(session_events()[:2])
    stream = app.test_client().get("/api/stream", buffered=False)
    events = table_events(stream)
    assert [next(events)["data"]["seq"] for _ in "12"] == [2, 0]
    with monkeypatch.context() as dying:
        dying.setattr(app.extensions["guandan_broker"], "publish", lambda table_id: None)
        assert [r["status"] for r in post_events(session_events()[2:3])] == ["accepted"]
    assert [r["status"] for r in post_events(session_events()[2:3])] == ["duplicate"]
    assert next(events)["data"]["seq"] == 3
    stream.close()


def test_a_delayed_broadcast_shows_the_table_as_it_was(sqlite_url, tokens_for):
    """With a broadcast delay the public view stops that many seconds of table time back."""
    app = make_app(sqlite_url, BROADCAST_DELAY=10.0)
    token = tokens_for(app)["T1"]
    client = app.test_client()
    client.post("/api/tables/T1/events", json=session_events(), headers=bearer(token))
    delayed = client.get("/api/tables/T1").get_json()  # latest t=18: shows up to t=8
    assert delayed["seq"] == 3 and delayed["delayed"] and delayed["state"]["deal"]["table"]["cards"] == ["3S"]
    assert [e["seq"] for e in client.get("/api/tables/T1/events").get_json()["events"]] == [1, 2, 3]
    assert "9H" not in client.get("/tables/T1").get_data(as_text=True)


@pytest.mark.parametrize("kind", ["local", "redis"])
def test_brokers_carry_changes_and_health(kind):
    broker = LocalBroker() if kind == "local" else RedisBroker(REDIS_URL, namespace=f"test-{uuid.uuid4().hex}")
    other = broker if kind == "local" else RedisBroker(REDIS_URL, namespace=broker._channel.split(":")[0])
    sub = broker.subscribe()
    try:
        time.sleep(0.05)  # Redis: the subscription is live before the publish
        for table in ("T7", "T 8", "T7", "桌9"):  # any table id; a burst may share a message
            other.publish(table)
        got = []
        deadline = time.monotonic() + 2
        while set(got) != {"T7", "T 8", "桌9"} and time.monotonic() < deadline:
            got += [table for table in [sub.get(timeout=0.2)] if table is not None]
        assert set(got) == {"T7", "T 8", "桌9"} and got.count("T 8") == 1
        other.set_health("T7", {"fps": 12.0})
        assert broker.health() == {"T7": {"fps": 12.0}}
    finally:
        sub.close()


def test_a_batch_encodes_each_streams_own_map_as_its_id():
    """Streams share one encoding of the id when their maps are equal, never a stale one."""
    batch = Batch(1, {}, {})
    seen = {"T1": 2}
    assert json.loads(batch.event_id(seen)) == {"T1": 2}
    assert json.loads(batch.event_id({"T1": 2, "T2": 1})) == {"T1": 2, "T2": 1}
    seen["T1"] = 3  # the batch kept a copy of what it encoded, not the stream's map
    assert json.loads(batch.event_id(seen)) == {"T1": 3}
    assert json.loads(batch.event_id({"T1": 3})) == {"T1": 3}


class Socket:
    """A connection whose buffer takes ``room`` more bytes (gevent's ``send`` with no wait)."""

    def __init__(self, room: int):
        self.room, self.got = room, b""

    def send(self, data: bytes, flags: int, timeout: float) -> int:
        assert timeout == 0.0  # the feed never waits on one client
        if not self.room:
            raise BlockingIOError("full")
        taken = data[:self.room]
        self.got, self.room = self.got + taken, self.room - len(taken)
        return len(taken)


def held(feed, room: int, sent_version: int):
    """A stream held by ``feed`` (as ``Feed.hold`` holds it), at batch 0, with T1's tile
    ``sent_version`` sent."""
    sub = Subscriber({"T1": 4}, (0, 0), {"T1": sent_version}, Socket(room))
    sub.waiter = threading.Lock()
    sub.waiter.acquire()
    feed._held.add(sub)
    return sub


def test_streams_in_step_come_out_of_a_batch_sharing_their_maps_and_copy_them_to_change(app):
    """The feed merges a batch into each distinct pair of maps once (the streams of one floor
    hold equal maps); a stream with another map gets its own id, and a stream's own write
    changes its maps only."""
    with app.app_context():
        feed = context.feed()
    changes = b'event: change\ndata: {"table":"T1","seq":5,"turn":"E"}\n\n'
    batch = Batch(1, {}, {}, changes, {"T1": 5}, {"T1": 7}, {"T1": 8})
    one, two, own = held(feed, 10_000, 7), held(feed, 10_000, 7), held(feed, 10_000, 7)
    own.seen = {"T1": 4, "T2": 9}
    feed._deliver(batch)
    assert one.seen is two.seen and one.sent is two.sent and (one.seen, one.sent) == ({"T1": 5}, {"T1": 8})
    assert one.sock.got == two.sock.got == frame(changes, '{"T1":5}')
    assert own.seen == {"T1": 5, "T2": 9} and own.sock.got == frame(changes, '{"T1":5,"T2":9}')
    one.take(b'event: table\ndata: {"table":"T3","seq":1}\n\n', {"T3": 1}, {"T3": 2})
    assert (one.seen, one.sent) == ({"T1": 5, "T3": 1}, {"T1": 8, "T3": 2})
    assert (two.seen, two.sent) == ({"T1": 5}, {"T1": 8})
    feed._fail("Redis went away")
    assert not feed._held


def test_the_feed_writes_held_streams_one_chunk_and_hands_back_what_it_cannot(app):
    """In step: the batch's changes as one HTTP chunk, the id on the last event. A client
    whose buffer takes part of it: the stream writes the rest; none of it: the stream writes
    the batch itself; out of step (another tile sent): handed back untouched."""
    with app.app_context():
        feed = context.feed()
    changes = b'event: change\ndata: {"table":"T1","seq":5,"turn":"E"}\n\n'
    batch = Batch(1, {}, {}, changes, {"T1": 5}, {"T1": 7}, {"T1": 8})
    whole, part, full, other = (held(feed, 10_000, 7), held(feed, 20, 7), held(feed, 0, 7), held(feed, 10_000, 6))
    twin = held(feed, 10_000, 7)
    feed._deliver(batch)
    data = changes[:-1] + b'id: {"T1":5}\n\n'
    assert whole.sock.got == b"%X\r\n" % len(data) + data + b"\r\n" == twin.sock.got == frame(changes, '{"T1":5}')
    assert (whole.place, whole.seen, whole.sent) == ((1, 0), {"T1": 5}, {"T1": 8})
    assert whole in feed._held and whole.waiter.locked()
    assert part.sock.got + part.rest == whole.sock.got and len(part.sock.got) == 20
    assert part.place == (1, 0) and part not in feed._held and not part.waiter.locked()
    assert (full.sock.got, full.rest, full.place, full.seen) == (b"", b"", (0, 0), {"T1": 4})
    assert full not in feed._held and not full.waiter.locked()
    assert other.sock.got == b"" and other.place == (0, 0) and not other.waiter.locked()
    feed._fail("Redis went away")  # every held stream goes back to its thread, to end
    assert not feed._held and not whole.waiter.locked() and not twin.waiter.locked()


def test_the_feed_writes_a_spectator_the_tiles_without_open_flags_and_shares_a_tile_without_any():
    """A table with open flags is built twice per change (an official's tile and a
    spectator's, each changing from its own last one); without any, once, for both."""
    from web.app.tiles import Tiles

    built = iter([{"table": "T1", "seq": 1, "turn": "N", "open_flags": {"violation": 1}, "reviews": 0},
                  {"table": "T1", "seq": 2, "turn": "E", "open_flags": {"violation": 2}, "reviews": 1},
                  {"table": "T1", "seq": 3, "turn": "S", "open_flags": {}, "reviews": 0}])
    tiles = Tiles(lambda table, health: next(built))
    first = tiles.get("T1", 0.0, {})
    second = tiles.get("T1", time.monotonic() + 1, {})
    assert first.seen_by(True).data == {"table": "T1", "seq": 1, "turn": "N", "open_flags": {}, "reviews": 0}
    spectators = second.seen_by(True)
    assert spectators.base == first.seen_by(True).version and b"violation" not in spectators.change
    assert second.base == first.version and b'"violation":2' in second.change
    batch = Batch.of(1, {"T1": second}, {})
    assert batch.seen_by(True).changes == spectators.change and batch.changes == second.change
    assert batch.seen_by(True).versions == {"T1": spectators.version}
    third = tiles.get("T1", time.monotonic() + 2, {})
    assert third.seen_by(True) is third and Batch.of(2, {"T1": third}, {}).seen_by(True).spectators is None


def test_the_feed_writes_held_spectators_and_officials_each_their_own_chunk(app):
    with app.app_context():
        feed = context.feed()
    changes = b'event: change\ndata: {"table":"T1","seq":5,"open_flags":{"violation":1}}\n\n'
    quiet = b'event: change\ndata: {"table":"T1","seq":5}\n\n'
    batch = Batch(1, {}, {}, changes, {"T1": 5}, {"T1": 7}, {"T1": 8},
                  spectators=Batch(1, {}, {}, quiet, {"T1": 5}, {"T1": 6}, {"T1": 9}))
    official, spectator = held(feed, 10_000, 7), held(feed, 10_000, 6)
    spectator.spectator = True
    feed._deliver(batch)
    assert official.sock.got == frame(changes, '{"T1":5}') and official.sent == {"T1": 8}
    assert spectator.sock.got == frame(quiet, '{"T1":5}') and spectator.sent == {"T1": 9}
    feed._fail("Redis went away")
    assert not feed._held
