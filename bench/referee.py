"""Referee benchmark: events per second replaying generated sessions, plus a soak.

    .venv/bin/python bench/referee.py [--sessions N] [--soak N]

Times are CPU seconds of this process (robust on a shared machine).
Replays seeded bot sessions (with hands, tributes, reports and injected breaches) through
a fresh Referee and prints events/s (target >= 50,000). The soak plays N more seeded
sessions with breaches and checks that exactly the injected flags appear.
"""

from __future__ import annotations

import argparse
import time

import _standalone  # noqa: F401  (first: keeps bench/ off the import path)

from referee.engine import Referee
from referee.events import parse_event
from referee.simulate import simulate_session
from referee.verdicts import Flag


def replay_seconds(logs: list[list]) -> float:
    """CPU seconds to replay every log through a fresh referee."""
    start = time.process_time()
    for log in logs:
        referee = Referee()
        for event in log:
            referee.feed(event)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--soak", type=int, default=1000)
    args = parser.parse_args()
    logs = [simulate_session(seed, breaches=0.02).events for seed in range(args.sessions)]
    total = sum(len(log) for log in logs)
    print(f"replay: {total / replay_seconds(logs):,.0f} events/s over {total:,} events of {args.sessions} "
          f"sessions (target >= 50,000; JSON dicts parsed and validated on the way)")
    parsed = [[parse_event(e) for e in log] for log in logs]
    print(f"replay of parsed events: {total / replay_seconds(parsed):,.0f} events/s")
    start = time.process_time()
    mismatches = 0
    for seed in range(args.soak):
        sim = simulate_session(100_000 + seed, breaches=0.02)
        got = sorted((v.rule, v.seat) for v in sim.verdicts if isinstance(v, Flag))
        mismatches += got != sorted(sim.expected_flags)
    print(f"soak: {args.soak} seeded sessions with injected breaches, {mismatches} with unexpected flags "
          f"({time.process_time() - start:.0f} s)")


if __name__ == "__main__":
    main()
