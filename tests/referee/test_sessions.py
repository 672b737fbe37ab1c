"""Whole sessions from seeded bots: clean play raises nothing; injected breaches raise
exactly their flags. ``GUANDAN_SESSIONS`` sets how many seeds (default 160; the soak in
``bench/referee.py`` runs thousands)."""

import os

import pytest

from referee.engine import replay
from referee.simulate import simulate_session

SEEDS = range(int(os.environ.get("GUANDAN_SESSIONS", "160")))


def _flags(records):
    return sorted((r["rule"], r["seat"]) for r in records if r["type"] == "flag")


@pytest.mark.parametrize("chunk", range(4))
def test_clean_sessions_raise_no_flag_and_end_with_a_result(chunk):
    for seed in SEEDS[chunk::4][: len(SEEDS) // 8 + 1]:
        sim = simulate_session(seed)
        assert _flags(sim.records) == [], seed
        results = [r for r in sim.records if r["type"] == "session_result"]
        assert len(results) == 1, seed
        ends = [r for r in sim.records if r["type"] == "deal_end"]
        assert ends and all(sorted(e["order"]) == ["E", "N", "S", "W"] for e in ends)
        score = results[0]["score"]
        assert sum(score.values()) == 28 or results[0]["reason"] == "forfeit"


@pytest.mark.parametrize("chunk", range(4))
def test_injected_breaches_raise_exactly_the_expected_flags(chunk):
    for seed in SEEDS[chunk::4]:
        sim = simulate_session(10_000 + seed, breaches=0.02)
        assert _flags(sim.records) == sorted(sim.expected_flags), seed


def test_replaying_a_log_gives_the_same_records():
    for seed in SEEDS[:20]:
        sim = simulate_session(seed, breaches=0.02)
        assert replay(sim.events) == sim.records
