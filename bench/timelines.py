"""Dashboard work per event in one process: the CPU a worker spends to take an event and
have its pages' state of the table up to date.

Each of ``--tables`` seeded sessions is appended event by event through one ``Store``
(SQLite in a temporary folder), the tables taking turns, and after each append the table's
floor tile is read (``public_summary``), as a live feed reads every table that moved. Prints
the process CPU per event for the appends alone (a store without pages) and with the tiles,
their difference (what the pages cost on top of the store), and how many times a referee
judged an event (``Referee.feed``) per event with the tiles: a figure no other load on the
machine moves. Run it in each tree to compare (``PYTHONPATH=TREE python TREE/bench/timelines.py``).

Usage: python bench/timelines.py [--tables N] [--events N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import _standalone  # noqa: F401  (first: keeps bench/ off the import path)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test support below

from referee.engine import Referee  # noqa: E402
from referee.simulate import play_session  # noqa: E402
from tests.store.support import TEST_SECRET  # noqa: E402
from web.app.public import public_summary  # noqa: E402
from web.app.timeline import Timelines  # noqa: E402
from web.store import open_store  # noqa: E402


def run(sessions: dict[str, list[dict]], tiles: bool) -> float:
    """CPU seconds to append every event (and read its table's tile after each, if ``tiles``)."""
    turns = [(table, event) for i in range(max(map(len, sessions.values())))
             for table, events in sessions.items() if i < len(events) for event in [events[i]]]
    with tempfile.TemporaryDirectory() as tmp, \
            open_store(f"sqlite:///{tmp}/g.sqlite3", secret=TEST_SECRET) as store:
        timelines = Timelines(store)
        start = time.process_time()
        for table, event in turns:
            store.append(event)
            if tiles:
                public_summary(timelines, table)
        return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--events", type=int, default=300, help="events of each table's session (at most)")
    args = parser.parse_args()
    sessions = {f"T{n}": play_session(n, breaches=0.1, table=f"T{n}")[:args.events] for n in range(1, args.tables + 1)}
    count = sum(map(len, sessions.values()))
    store_only = run(sessions, False)
    judged, feed = [0], Referee.feed

    def counted(self, obj):
        judged[0] += 1
        return feed(self, obj)

    Referee.feed = counted
    with_tiles = run(sessions, True)
    print(f"{count} events: store {store_only / count * 1e3:.3f} ms/event, with tiles "
          f"{with_tiles / count * 1e3:.3f} ms/event, pages {(with_tiles - store_only) / count * 1e3:.3f} ms/event, "
          f"judged {judged[0] / count:.2f} times/event")


if __name__ == "__main__":
    main()
