"""Event-store figures: append rate with the real referee, reopen time with snapshots,
verify rate. Usage: python bench/store.py [--kind sqlite|postgresql] (a fresh temporary
database: a SQLite file, or a PostgreSQL schema dropped afterwards)."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the project, not bench/, first

from referee.simulate import play_session  # noqa: E402
from web.store import Store  # noqa: E402
from web.store.testing import KINDS, temporary_url  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=KINDS, default="sqlite")
    parser.add_argument("--sessions", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, temporary_url(args.kind, Path(tmp)) as url:
        run(url, args.sessions)


def run(url: str, sessions: int) -> None:
    events = [e for seed in range(sessions) for e in play_session(seed, {"NS": "A", "EW": "B"}, table=f"B{seed}")]
    with Store(url, snapshot_every=200) as store:
        start = time.perf_counter()
        accepted = 0
        for e in events:
            try:
                store.append(e)
                accepted += 1
            except ValueError:
                pass
        took = time.perf_counter() - start
        print(f"append: {accepted} events in {took:.2f} s = {accepted / took:.0f} events/s "
              f"({1000 * took / accepted:.2f} ms each, referee derivation included)")
    for every, label in ((200, "with snapshots"), (0, "full replay")):
        with Store(url, snapshot_every=every) as store:
            if every == 0:
                with store.engine.begin() as conn:
                    conn.exec_driver_sql("DELETE FROM snapshots")
            start = time.perf_counter()
            store.referee("B0")
            print(f"open table B0 ({len(store.events('B0'))} events) {label}: {1000 * (time.perf_counter() - start):.1f} ms")
    with Store(url) as store:
        start = time.perf_counter()
        report = store.verify()
        print(f"verify: {report.events} events in {1000 * (time.perf_counter() - start):.0f} ms ok={report.ok}")


if __name__ == "__main__":
    main()
