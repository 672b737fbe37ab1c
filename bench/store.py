"""Event-store figures: append rate one by one and in batches (with the real referee),
reopen time with signed snapshots and by full replay, verify rate.

Usage: python bench/store.py [--kind sqlite|postgresql] [--sessions N] [--batch N]
Each run uses a fresh temporary database (a SQLite file, or a PostgreSQL schema dropped
afterwards); the same simulated sessions are appended both ways, to different tables.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import _standalone  # noqa: F401  (first: keeps bench/ off the import path)

from referee.simulate import play_session
from web.store import Appended, Store
from web.store.store import BATCH_SIZE
from web.store.testing import KINDS, TEST_SECRET, temporary_url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=KINDS, default="sqlite")
    parser.add_argument("--sessions", type=int, default=3, help="simulated sessions (~600 events each)")
    parser.add_argument("--batch", type=int, default=BATCH_SIZE, help="events per transaction in append_many")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, temporary_url(args.kind, Path(tmp)) as url:
        run(url, args.kind, args.sessions, args.batch)


def sessions(count: int, prefix: str) -> list[dict]:
    """The events of ``count`` seeded sessions, on tables ``<prefix>0``, ``<prefix>1``, ..."""
    return [e for seed in range(count) for e in play_session(seed, {"NS": "A", "EW": "B"}, table=f"{prefix}{seed}")]


def run(url: str, kind: str, count: int, batch: int) -> None:
    with Store(url, snapshot_every=200, secret_key=TEST_SECRET) as store:
        events = sessions(count, "one")
        start = time.perf_counter()
        for e in events:
            store.append(e)
        single = time.perf_counter() - start
        events = sessions(count, "many")
        start = time.perf_counter()
        outcomes = store.append_many(events, batch_size=batch)
        many = time.perf_counter() - start
        assert all(isinstance(o, Appended) for o in outcomes)
    n = len(events)
    print(f"{kind}: append one by one: {n} events in {single:.2f} s = {n / single:.0f} events/s "
          f"({1000 * single / n:.2f} ms each, referee derivation included)")
    print(f"{kind}: append_many (batch {batch}): {n} events in {many:.2f} s = {n / many:.0f} events/s "
          f"({1000 * many / n:.3f} ms each) -> {single / many:.1f}x faster")
    for every, label in ((200, "from a signed snapshot"), (0, "by full replay")):
        with Store(url, snapshot_every=every, secret_key=TEST_SECRET) as store:
            if every == 0:
                with store.engine.begin() as conn:
                    conn.exec_driver_sql("DELETE FROM snapshots")
            start = time.perf_counter()
            store.referee("many0")
            took = time.perf_counter() - start
            print(f"{kind}: open table many0 ({len(store.events('many0'))} events) {label}: {1000 * took:.1f} ms")
    with Store(url, secret_key=TEST_SECRET) as store:
        start = time.perf_counter()
        report = store.verify()
        print(f"{kind}: verify: {report.events} events in {1000 * (time.perf_counter() - start):.0f} ms ok={report.ok}")


if __name__ == "__main__":
    main()
