"""``kill -9`` mid-deal: of one worker (PostgreSQL + Redis, two workers) and of the whole
server (SQLite and PostgreSQL), with requests in flight. Agents keep resending what was
not acknowledged; after the restart every acknowledged event is stored exactly once, at
the seq it was acknowledged with, and each table's derived state equals a fresh replay of
its events."""

from __future__ import annotations

import time

import pytest

from web.store import data_url

from .conftest import Agent, acked, check_stored_exactly_once, run_agents, session_of, tokens, when

EVENTS = 45
"""Per table: the session start, the first deal and a good part of its play."""
TABLES = ("K1", "K2")


def agents_for(server, store: str) -> list[Agent]:
    keys = tokens(store, list(TABLES))
    return [Agent(server.base, t, keys[t], session_of(t, seed, EVENTS)) for seed, t in enumerate(TABLES)]


def test_kill_9_of_a_worker_mid_deal_loses_and_doubles_nothing(serve, pg_url, private_redis):
    server = serve(pg_url, workers=2, redis=private_redis.url)
    agents = agents_for(server, pg_url)
    killed: list[int] = []

    def kill_two_workers() -> None:  # one early in the deal, one later
        for threshold in (20, 50):
            when(lambda: acked(agents) >= threshold)
            killed.append(server.kill_worker())

    run_agents(agents, timeout=60, fault=kill_two_workers)
    assert len(killed) == 2
    when(lambda: len(server.workers()) == 2, timeout=20)  # the master replaced them
    assert not set(killed) & {w.pid for w in server.workers()}
    check_stored_exactly_once(pg_url, agents)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_kill_9_of_the_whole_server_then_restart(kind, serve, tmp_path, request):
    if kind == "sqlite":
        store, url = str(tmp_path / "data"), data_url(tmp_path / "data")
    else:
        store = url = request.getfixturevalue("pg_url")
    server = serve(store)
    agents = agents_for(server, store)

    def crash_and_restart() -> None:
        when(lambda: acked(agents) >= 30)
        server.kill()
        time.sleep(0.3)  # agents meet a dead address for a while
        server.start()

    run_agents(agents, timeout=90, fault=crash_and_restart)
    assert any(status == 0 for a in agents for status, _ in a.failures)  # the crash was seen
    check_stored_exactly_once(url, agents)
