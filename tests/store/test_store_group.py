"""Group commit: concurrent callers, many tables, one transaction per group."""

from __future__ import annotations

import threading

from web.store import Appended, EventRejected


def _start(table: str) -> dict:
    return {"type": "session_start", "table": table, "t": 0, "teams": {"NS": "A", "EW": "B"}}


def _play(table: str, i: int) -> dict:
    return {"type": "play", "table": table, "t": i + 1, "seat": "S", "cards": ["2S"], "id": f"{table}-{i}"}


def test_concurrent_submitters_keep_every_table_strict(store):
    tables = [f"T{i}" for i in range(20)]
    errors: list[object] = []
    commits = []
    original = store._committer.commit

    def counting(groups, *args):
        commits.append(sum(map(len, groups.values())))
        return original(groups, *args)

    store._committer.commit = counting

    def send(table: str) -> None:
        for event in [_start(table), *(_play(table, i) for i in range(15))]:
            (done,) = store.submit([event])
            if not isinstance(done, Appended):
                errors.append(done)

    threads = [threading.Thread(target=send, args=(t,)) for t in tables]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for table in tables:
        events = store.events(table)
        assert [e["seq"] for e in events] == list(range(1, 17))
        assert [e["id"] for e in events[1:]] == [f"{table}-{i}" for i in range(15)]
    assert sum(commits) == 20 * 16
    assert len(commits) < 20 * 16  # events of several callers shared commits
    assert store.verify(rederive=True).ok


def test_submit_reports_each_event_in_order_and_resends_are_duplicates(store):
    outcomes = store.submit([_start("T1"), _play("T1", 0), {"type": "shout", "table": "T1", "t": 2},
                             _play("T1", 0), {"type": "play", "table": "T2", "t": 1, "seat": "S", "cards": ["2S"]}])
    assert [type(o).__name__ for o in outcomes] == ["Appended", "Appended", "EventRejected", "Appended",
                                                    "EventRejected"]
    assert outcomes[3].duplicate and outcomes[3].seq == outcomes[1].seq == 2
    assert "before session_start" in outcomes[4].reason
    again = store.submit([_play("T1", 0)], table_id="T1")
    assert again[0].duplicate
    assert isinstance(store.submit([_play("T2", 5)], table_id="T1")[0], EventRejected)


def test_async_feed_is_committed_in_order(store):
    feed = [_start("T1"), _start("T2")] + [_play(t, i) for i in range(30) for t in ("T1", "T2")]
    futures = [store.submit_async([e]) for e in feed]
    assert all(isinstance(f.result()[0], Appended) for f in futures)
    assert [e["id"] for e in store.events("T2")[1:]] == [f"T2-{i}" for i in range(30)]
