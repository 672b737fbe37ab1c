"""Pairings: round 1 random (seeded) or by rating; later rounds Swiss.

Swiss (S2 variant, 001): equal scores meet, no pair meets another twice, at most one bye
per pair while others have none. A round is one maximum-weight matching (networkx's
blossom algorithm) over the pairs that have not met, so a pairing without repeats is
found whenever one exists; the weights make score differences (squared) cost far more
than distances in the ranking, so equal scores meet whenever the draw allows it and
neighbours in the ranking meet before distant ones. The bye goes to the lowest-ranked
pair that has not had one and without which the others can all be paired: it is chosen
first, so no weighing of the other tables can move it up the ranking.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

class PairingError(ValueError):
    """No pairing satisfies the rules (e.g. more rounds than distinct opponents)."""


@dataclass(frozen=True)
class Pairing:
    table: int
    ns: str
    ew: str | None
    """None: ``ns`` has the bye."""


def first_round(pairs: Mapping[str, float], seed: int, by_rating: bool = False) -> list[Pairing]:
    """Round 1: a seeded random draw, or by rating (top half meets bottom half)."""
    ids = sorted(pairs)
    if by_rating:
        ids.sort(key=lambda p: -pairs[p])
        bye = [ids.pop()] if len(ids) % 2 else []
        half = len(ids) // 2
        matches = list(zip(ids[:half], ids[half:]))
    else:
        random.Random(f"draw:{seed}").shuffle(ids)
        bye = [ids.pop()] if len(ids) % 2 else []
        matches = list(zip(ids[::2], ids[1::2]))
    tables = [Pairing(i + 1, ns, ew) for i, (ns, ew) in enumerate(matches)]
    return tables + [Pairing(len(tables) + 1, p, None) for p in bye]


def swiss_round(ranking: Sequence[str], points: Mapping[str, int], met: set[frozenset[str]],
                had_bye: set[str], ns_count: Mapping[str, int]) -> list[Pairing]:
    """Pair ``ranking`` (best first) so that equal ``points`` meet and nobody meets twice.

    ``met`` holds the pairs of pairs that already played; ``had_bye`` who already had a
    bye; ``ns_count`` how often each sat NS (seats alternate: the pair that sat NS less
    often gets NS, the better-ranked one on a tie).
    """
    n = len(ranking)
    rank = {p: i for i, p in enumerate(ranking)}
    spread = max(points.values(), default=0) - min(points.values(), default=0)
    scale = n * n + 1  # more than any sum of ranking distances
    top = scale * (spread * spread + 1) + n + 1
    graph = nx.Graph()
    graph.add_nodes_from(ranking)
    for i, a in enumerate(ranking):
        for b in ranking[i + 1:]:
            if frozenset((a, b)) not in met:
                graph.add_edge(a, b, weight=top - scale * (points[a] - points[b]) ** 2 - abs(rank[a] - rank[b]))
    byes: list[str] = []
    if n % 2:
        eligible = [p for p in ranking if p not in had_bye] or list(ranking)
        for candidate in reversed(eligible):  # the lowest-ranked first
            matching = nx.max_weight_matching(graph.subgraph(set(ranking) - {candidate}), maxcardinality=True)
            if 2 * len(matching) == n - 1:
                byes = [candidate]
                break
        else:
            raise PairingError(f"no pairing of {n} pairs without a repeat (or second bye) exists")
    else:
        matching = nx.max_weight_matching(graph, maxcardinality=True)
        if 2 * len(matching) != n:
            raise PairingError(f"no pairing of {n} pairs without a repeat (or second bye) exists")
    games = []
    for a, b in matching:
        a, b = sorted((a, b), key=lambda p: (ns_count.get(p, 0), rank[p]))
        games.append((a, b))
    games.sort(key=lambda g: min(rank[g[0]], rank[g[1]]))
    tables = [Pairing(i + 1, ns, ew) for i, (ns, ew) in enumerate(games)]
    return tables + [Pairing(len(tables) + 1, p, None) for p in byes]
