"""Whole sessions from seeded bots: clean play raises nothing; injected breaches raise
exactly their flags. ``GUANDAN_SESSIONS`` sets how many seeds (default 160; the soak in
``bench/referee.py`` runs thousands)."""

import os

import pytest

from referee.engine import replay
from referee.simulate import simulate_session
from referee.verdicts import DealEnd, Flag, SessionEnding, SessionResult

SEEDS = range(int(os.environ.get("GUANDAN_SESSIONS", "160")))


def _flags(verdicts):
    return sorted((v.rule, v.seat) for v in verdicts if isinstance(v, Flag))


@pytest.mark.parametrize("chunk", range(4))
def test_clean_sessions_raise_no_flag_and_end_with_a_result(chunk):
    checked = 0
    for seed in SEEDS[chunk::4][: len(SEEDS) // 8 + 1]:
        sim = simulate_session(seed)
        assert _flags(sim.verdicts) == [], seed
        results = [v for v in sim.verdicts if isinstance(v, SessionResult)]
        assert len(results) == 1, seed
        ends = [v for v in sim.verdicts if isinstance(v, DealEnd)]
        assert ends and all(sorted(e.order) == ["E", "N", "S", "W"] for e in ends)
        assert sum(results[0].score.values()) == 28 or results[0].ending is SessionEnding.FORFEIT
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("chunk", range(4))
def test_injected_breaches_raise_exactly_the_expected_flags(chunk):
    checked = 0
    for seed in SEEDS[chunk::4]:
        sim = simulate_session(10_000 + seed, breaches=0.02)
        assert _flags(sim.verdicts) == sorted(sim.expected_flags), seed
        checked += 1
    assert checked >= 1


def test_replaying_a_log_gives_the_same_records():
    checked = 0
    for seed in SEEDS[:20]:
        sim = simulate_session(seed, breaches=0.02)
        assert replay(sim.events) == sim.verdicts
        checked += 1
    assert checked >= 1
