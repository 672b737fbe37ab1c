"""Backing services failing under load: PostgreSQL connections terminated
(``pg_terminate_backend``) and Redis stopped and started again. Requests fail clearly
(503 with Retry-After) or succeed, recover by themselves within seconds, and no event is
lost or accepted twice; viewers reconnect with ``Last-Event-ID`` and miss nothing."""

from __future__ import annotations

import time

import httpx

from .conftest import (
    Agent,
    Viewer,
    acked,
    check_stored_exactly_once,
    run_agents,
    session_of,
    terminate_backends,
    tokens,
    when,
)

RECOVERY_S = 10.0
RESUME_S = 30.0
"""A viewer's reconnect after Redis comes back waits out its backoff (Retry-After) first."""


def test_terminated_postgresql_backends_are_503s_then_recover(serve, pg_url):
    server = serve(pg_url)
    keys = tokens(pg_url, ["P1", "P2"])
    agents = [Agent(server.base, t, keys[t], session_of(t, seed, 40), batch=2) for seed, t in enumerate(keys)]
    terminated: list[int] = []

    def terminate_thrice() -> None:
        for threshold in (10, 30, 50):
            when(lambda: acked(agents) >= threshold)
            terminated.append(terminate_backends(pg_url))

    started = time.monotonic()
    run_agents(agents, timeout=60, fault=terminate_thrice, pause=0.05)
    assert len(terminated) == 3 and sum(terminated) >= 1  # the server's connections were cut
    for status, headers in (f for a in agents for f in a.failures):
        assert status == 503 and headers.get("retry-after"), (status, headers)
    assert time.monotonic() - started < 60
    check_stored_exactly_once(pg_url, agents)


def post(server, table: str, token: str, body, path: str = "events") -> httpx.Response:
    return httpx.post(f"{server.base}/api/tables/{table}/{path}", json=body,
                      headers={"Authorization": f"Bearer {token}"}, timeout=5)


def test_redis_restarted_under_load(serve, pg_url, private_redis):
    server = serve(pg_url, workers=2, redis=private_redis.url)
    keys = tokens(pg_url, ["R1", "R2"])
    events = {t: session_of(t, seed, 30) for seed, t in enumerate(keys)}
    with Viewer(server.base) as viewer:
        when(lambda: viewer.connections >= 1, timeout=10)
        for table in keys:
            assert post(server, table, keys[table], events[table][:10]).status_code == 200
        when(lambda: all(viewer.seqs.get(t) == 10 for t in keys), timeout=RECOVERY_S)

        private_redis.stop()
        for table in keys:  # stored all the same: the log is in PostgreSQL
            results = post(server, table, keys[table], events[table][10:20]).json()["results"]
            assert [r["status"] for r in results] == ["accepted"] * 10
        health = post(server, "R1", keys["R1"], {"fps": 25.0}, path="health")
        assert health.status_code == 503 and health.headers["Retry-After"]
        stream = httpx.get(f"{server.base}/api/stream", timeout=5)
        assert stream.status_code == 503 and stream.headers["Retry-After"]
        when(lambda: len(viewer.refusals) >= 1, timeout=RECOVERY_S)  # its stream ended; refused meanwhile
        assert all(status == 503 and after for status, after in viewer.refusals)

        private_redis.start()  # same port: the workers reconnect by themselves
        when(lambda: all(viewer.seqs.get(t) == 20 for t in keys), timeout=RESUME_S)  # resumed, missed nothing
        when(lambda: post(server, "R1", keys["R1"], {"fps": 25.0}, path="health").status_code == 200,
             timeout=RECOVERY_S)
        for table in keys:  # and live fan-out works again, through either worker
            assert post(server, table, keys[table], events[table][20:]).status_code == 200
        when(lambda: all(viewer.seqs.get(t) == 30 for t in keys), timeout=RECOVERY_S)
    agents = [Agent(server.base, t, keys[t], events[t], acked={e["id"]: i + 1 for i, e in enumerate(events[t])})
              for t in keys]
    check_stored_exactly_once(pg_url, agents)
