"""Backing services failing under load: PostgreSQL connections terminated
(``pg_terminate_backend``) and Redis stopped and started again. Requests fail clearly
(503 with Retry-After) or succeed, recover by themselves within seconds, and no event is
lost or accepted twice; viewers reconnect with ``Last-Event-ID`` and miss nothing."""

from __future__ import annotations

import re
import time

import httpx

from web.app.auth import LOGIN_LIMIT

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
LOGIN_ATTEMPTS = int(LOGIN_LIMIT.split()[0])


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
        def state() -> str:
            return f"{viewer!r}\n{server.log.read_text()[-4000:]}"

        when(lambda: viewer.connections >= 1, timeout=10, describe=state)
        for table in keys:
            assert post(server, table, keys[table], events[table][:10]).status_code == 200
        when(lambda: all(viewer.seqs.get(t) == 10 for t in keys), timeout=RECOVERY_S, describe=state)

        private_redis.stop()
        for table in keys:  # stored all the same: the log is in PostgreSQL
            results = post(server, table, keys[table], events[table][10:20]).json()["results"]
            assert [r["status"] for r in results] == ["accepted"] * 10
        health = post(server, "R1", keys["R1"], {"fps": 25.0}, path="health")
        assert health.status_code == 503 and health.headers["Retry-After"]
        stream = httpx.get(f"{server.base}/api/stream", timeout=5)
        assert stream.status_code == 503 and stream.headers["Retry-After"]
        # its stream ended; refused meanwhile
        when(lambda: len(viewer.refusals) >= 1, timeout=RECOVERY_S, describe=state)
        assert all(status == 503 and after for status, after in viewer.refusals)

        private_redis.start()  # same port: the workers reconnect by themselves
        # resumed, missed nothing
        when(lambda: all(viewer.seqs.get(t) == 20 for t in keys), timeout=RECOVERY_S, describe=state)
        when(lambda: post(server, "R1", keys["R1"], {"fps": 25.0}, path="health").status_code == 200,
             timeout=RECOVERY_S, describe=state)
        for table in keys:  # and live fan-out works again, through either worker
            assert post(server, table, keys[table], events[table][20:]).status_code == 200
        when(lambda: all(viewer.seqs.get(t) == 30 for t in keys), timeout=RECOVERY_S, describe=state)
    agents = [Agent(server.base, t, keys[t], events[t], acked={e["id"]: i + 1 for i, e in enumerate(events[t])})
              for t in keys]
    check_stored_exactly_once(pg_url, agents)


def test_redis_restarted_at_once_ends_open_streams(serve, pg_url, private_redis):
    """Redis back before anyone reconnects: the notices published meanwhile were lost, so
    the open stream must end all the same (its page resumes from its Last-Event-ID), not
    carry on as if nothing had been missed."""
    server = serve(pg_url, redis=private_redis.url)
    keys = tokens(pg_url, ["Q1"])
    events = session_of("Q1", 3, 20)
    with Viewer(server.base) as viewer:
        def state() -> str:
            return f"{viewer!r}\n{server.log.read_text()[-4000:]}"

        when(lambda: viewer.connections >= 1, timeout=10, describe=state)
        assert post(server, "Q1", keys["Q1"], events[:10]).status_code == 200
        when(lambda: viewer.seqs.get("Q1") == 10, timeout=RECOVERY_S, describe=state)
        private_redis.stop()
        assert post(server, "Q1", keys["Q1"], events[10:]).json()["results"][-1]["status"] == "accepted"
        private_redis.start()
        when(lambda: viewer.seqs.get("Q1") == 20, timeout=RECOVERY_S, describe=state)


def test_a_worker_restarted_while_redis_is_down_comes_up(serve, pg_url, private_redis):
    """Gunicorn stops the whole server when a worker fails to boot: a worker restarted
    during a Redis outage must come up all the same, and serve live updates once it is back."""
    server = serve(pg_url, workers=2, redis=private_redis.url)
    keys = tokens(pg_url, ["W1"])
    events = session_of("W1", 5, 10)
    when(lambda: server.log.read_text().count(" ready") == 2, timeout=30)
    private_redis.stop()
    killed = server.kill_worker()
    when(lambda: server.log.read_text().count(" ready") == 3, timeout=30,
         describe=lambda: server.log.read_text()[-4000:])
    assert server.proc.poll() is None and killed not in {w.pid for w in server.workers()}
    assert post(server, "W1", keys["W1"], events).status_code == 200  # the log is in PostgreSQL
    private_redis.start()
    with Viewer(server.base) as viewer:
        when(lambda: viewer.seqs.get("W1") == 10, timeout=RECOVERY_S, describe=lambda: repr(viewer))


def test_logins_are_answered_and_limited_while_redis_is_down(serve, pg_url, private_redis):
    """The login rate limit counts in Redis; without it each worker counts for itself
    (one worker here, so the limit is exact) instead of answering 500."""
    server = serve(pg_url, redis=private_redis.url)
    private_redis.stop()
    with httpx.Client(base_url=server.base, timeout=10) as client:
        form = client.get("/login")
        token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
        statuses = [client.post("/login", data={"name": "chief", "password": "wrong", "csrf_token": token}).status_code
                    for _ in range(LOGIN_ATTEMPTS + 1)]
    assert form.status_code == 200
    assert 500 not in statuses and statuses[-1] == 429, statuses


def test_the_floor_page_shows_its_tables_while_redis_is_down(serve, pg_url, private_redis):
    server = serve(pg_url, redis=private_redis.url)
    keys = tokens(pg_url, ["F1"])
    assert post(server, "F1", keys["F1"], session_of("F1", 2, 5)).status_code == 200
    private_redis.stop()
    floor = httpx.get(f"{server.base}/", timeout=10)
    tile = httpx.get(f"{server.base}/floor/tile/F1", timeout=10)
    assert floor.status_code == 200 and 'id="tile-F1"' in floor.text
    assert tile.status_code == 200 and tile.text.strip().startswith('<a id="tile-F1"')
