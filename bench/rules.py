"""Rules-engine benchmark: classification throughput and legal-play enumeration latency.

    .venv/bin/python bench/rules.py

Classification: a fixed seeded stream of random 1-10-card draws from the double deck at
level 5 (target >= 200,000/s). Enumeration: every legal lead from random 27-card hands
holding 0, 1 and 2 wildcards (target p50 < 2 ms). Times are CPU seconds of this process;
the figures are absolute (a comparison with another engine belongs in a run that measures
both on the same stream, side by side).
"""

from __future__ import annotations

import random
import statistics
import time

import _standalone  # noqa: F401  (first: keeps bench/ off the import path)

from referee.cards import DOUBLE_DECK, parse_level, wildcard
from referee.combos import readings
from referee.plays import legal_plays


def classification_rate(n: int = 300_000, seed: int = 5) -> float:
    rng = random.Random(seed)
    stream = [rng.sample(DOUBLE_DECK, rng.randint(1, 10)) for _ in range(n)]
    level = parse_level("5")
    start = time.process_time()
    for cards in stream:
        readings(cards, level)
    return n / (time.process_time() - start)


def enumeration_times(wilds: int, hands: int = 300, seed: int = 7) -> tuple[list[float], float]:
    rng = random.Random(seed + wilds)
    times, counts = [], []
    for _ in range(hands):
        level = rng.randrange(13)
        wild = wildcard(level)
        deck = [c for c in DOUBLE_DECK if c != wild]
        hand = rng.sample(deck, 27 - wilds) + [wild] * wilds
        start = time.process_time()
        counts.append(sum(1 for _ in legal_plays(hand, level)))
        times.append(time.process_time() - start)
    return sorted(times), statistics.median(counts)


def main() -> None:
    rate = classification_rate()
    print(f"classification: {rate:,.0f} plays/s (target >= 200,000)")
    for wilds in (0, 1, 2):
        times, plays = enumeration_times(wilds)
        p50 = times[len(times) // 2] * 1e3
        p99 = times[int(len(times) * 0.99)] * 1e3
        print(f"legal leads, 27 cards, {wilds} wildcard(s): p50 {p50:.2f} ms, p99 {p99:.2f} ms, "
              f"median {plays:.0f} distinct plays (target p50 < 2 ms)")


if __name__ == "__main__":
    main()
