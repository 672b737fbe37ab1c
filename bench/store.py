"""Event-store figures for a live hall: events/s interleaved over many tables, per event
and group-committed, side by side in one run (with the real referee deriving); import
rate; reopen and verify times.

Usage: python bench/store.py [--kind sqlite|postgresql] [--tables N] [--events N] [--single N]
The hall: ``--tables`` tables each play a simulated session; their events arrive one per
table in turn. "per event" appends them in that order, one transaction (one fsync) each;
"group commit of the feed" hands the same stream in as it arrives
(``Store.submit_async``), committed in groups across tables; "senders" has one thread per
table (as concurrent HTTP requests would), each waiting for its event to be committed
before sending the next (``Store.submit``). Each run uses a fresh temporary database (a SQLite file, or a
PostgreSQL schema dropped afterwards); each path writes tables of its own.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import _standalone  # noqa: F401  (first: keeps bench/ off the import path)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test support below

from referee.simulate import play_session  # noqa: E402
from tests.store.support import KINDS, TEST_SECRET, temporary_url  # noqa: E402
from web.store import Appended, Store  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=KINDS, default="sqlite")
    parser.add_argument("--tables", type=int, default=200, help="tables playing at once")
    parser.add_argument("--events", type=int, default=60, help="events per table (the start of a session)")
    parser.add_argument("--single", type=int, default=2000, help="events sent through the per-event path")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, temporary_url(args.kind, Path(tmp)) as url:
        run(url, args)


def hall(prefix: str, tables: int, per_table: int) -> list[list[dict]]:
    """Each table's events (the first ``per_table`` of a seeded session), on tables ``<prefix>N``."""
    return [play_session(seed, {"NS": "A", "EW": "B"}, table=f"{prefix}{seed}")[:per_table]
            for seed in range(tables)]


def interleaved(feeds: list[list[dict]]) -> list[dict]:
    """One event per table in turn, as a hall's feed arrives."""
    return [feed[i] for i in range(max(map(len, feeds))) for feed in feeds if i < len(feed)]


def per_event(store: Store, events: list[dict]) -> float:
    start = time.perf_counter()
    for e in events:
        store.append(e)
    return time.perf_counter() - start


def feed_commit(store: Store, events: list[dict]) -> float:
    """The interleaved feed handed in as it arrives (``submit_async``), committed in groups."""
    start = time.perf_counter()
    futures = [store.submit_async([e]) for e in events]
    outcomes = [f.result()[0] for f in futures]
    took = time.perf_counter() - start
    assert all(isinstance(o, Appended) for o in outcomes), [o for o in outcomes if not isinstance(o, Appended)][:3]
    return took


def group_commit(store: Store, feeds: list[list[dict]]) -> float:
    failures: list[object] = []

    def send(feed: list[dict]) -> None:
        for e in feed:
            (done,) = store.submit([e])
            if not isinstance(done, Appended):
                failures.append(done)

    threads = [threading.Thread(target=send, args=(feed,)) for feed in feeds]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.perf_counter() - start
    assert not failures, failures[:3]
    return took


def run(url: str, args) -> None:
    kind = args.kind
    with Store(url, snapshot_every=200, secret_key=TEST_SECRET) as store:
        single = interleaved(hall("one", args.tables, args.events))[:args.single]
        took = per_event(store, single)
        print(f"{kind}: per event, interleaved over {args.tables} tables: {len(single)} events in {took:.2f} s "
              f"= {len(single) / took:.0f} events/s")
        rate = len(single) / took
        events = interleaved(hall("feed", args.tables, args.events))
        took = feed_commit(store, events)
        print(f"{kind}: group commit of the interleaved feed (submit_async): {len(events)} events in {took:.2f} s "
              f"= {len(events) / took:.0f} events/s ({len(events) / took / rate:.1f}x per event)")
        feeds = hall("grp", args.tables, args.events)
        n = sum(map(len, feeds))
        took = group_commit(store, feeds)
        print(f"{kind}: group commit, {args.tables} senders each waiting for its ack (submit): {n} events in "
              f"{took:.2f} s = {n / took:.0f} events/s ({n / took / rate:.1f}x per event)")
        events = interleaved(hall("imp", args.tables, args.events))
        start = time.perf_counter()
        outcomes = store.append_many(events)
        took = time.perf_counter() - start
        assert all(isinstance(o, Appended) for o in outcomes)
        print(f"{kind}: import (append_many, whole tables per transaction): {len(events)} events in {took:.2f} s "
              f"= {len(events) / took:.0f} events/s")
    with Store(url, secret_key=TEST_SECRET) as store:
        start = time.perf_counter()
        store.referee("grp0")
        print(f"{kind}: open table grp0 ({len(store.events('grp0'))} events): "
              f"{1000 * (time.perf_counter() - start):.1f} ms")
        start = time.perf_counter()
        report = store.verify()
        took = time.perf_counter() - start
        print(f"{kind}: verify: {report.tables} tables, {report.events} events in {1000 * took:.0f} ms "
              f"({report.events / took:.0f} events/s) ok={report.ok}")


if __name__ == "__main__":
    main()
