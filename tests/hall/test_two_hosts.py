"""Two hosts behind one address, as deploy/README.md sets them up: ``guandan-ref serve`` on
127.0.0.2 and 127.0.0.3 (two workers each) on one PostgreSQL database and one Redis, with
Debian's HAProxy in front running deploy/haproxy.cfg itself. One host is killed (``kill -9``
of its master and workers) while table agents post and live pages follow through the
proxy: every acknowledged event is stored once, without gaps, the pages resume on the other
host and miss nothing, and the store verifies."""

from __future__ import annotations

import shutil
import socket
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest

from tests.store.support import TEST_SECRET
from web.app.accounts import add_user
from web.store import open_store

from .conftest import (
    Agent,
    Server,
    Viewer,
    acked,
    check_stored_exactly_once,
    free_port,
    run_agents,
    session_of,
    tokens,
    when,
)

ROOT = Path(__file__).resolve().parents[2]
TABLES = [f"H{n}" for n in range(1, 11)]
EVENTS = 40
VIEWERS = 4

pytestmark = pytest.mark.skipif(shutil.which("haproxy") is None,
                                reason="HAProxy is not installed (./run.sh setup installs Debian's haproxy)")


def listening(address: str, port: int) -> bool:
    try:
        socket.create_connection((address, port), timeout=0.2).close()
        return True
    except OSError:
        return False


class Host(Server):
    """``guandan-ref serve`` on a loopback address of its own, behind the proxy at 127.0.0.1:
    the hall's Redis namespace, the proxy trusted (``GUANDAN_PROXY_IPS``, ``GUANDAN_PROXIES``)."""

    def __init__(self, address: str, store: str, tmp: Path, redis: str, namespace: str):
        super().__init__(store, tmp, workers=2, redis=redis)
        self.address = address
        self.args += ["--host", address]
        self.base = f"http://{address}:{self.port}"
        self.env.update(GUANDAN_REDIS_NAMESPACE=namespace, GUANDAN_PROXY_IPS="127.0.0.1", GUANDAN_PROXIES="1")

    def launch(self) -> None:
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                         start_new_session=True)  # its own group: kill -9 takes all

    def wait_ready(self) -> None:
        """Until its workers answer the health check (gunicorn listens before they are up)."""
        when(lambda: self.healthy() or self.proc.poll() is not None, timeout=30)
        assert self.proc.poll() is None, self.log.read_text()[-2000:]

    def healthy(self) -> bool:
        try:
            return httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False


class Proxy:
    """HAProxy on deploy/haproxy.cfg, in the foreground, its log in a file."""

    def __init__(self, hosts: list[Host], tmp: Path):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = tmp / "haproxy.log"
        self.env = {"PATH": "/usr/sbin:/usr/bin:/bin", "GUANDAN_HALL_BIND": f"127.0.0.1:{self.port}",
                    "GUANDAN_HOST_A": f"{hosts[0].address}:{hosts[0].port}",
                    "GUANDAN_HOST_B": f"{hosts[1].address}:{hosts[1].port}"}
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Proxy:
        with self.log.open("w") as log:
            self.proc = subprocess.Popen(["haproxy", "-f", str(ROOT / "deploy" / "haproxy.cfg")], env=self.env,
                                         stdout=log, stderr=subprocess.STDOUT)
        when(lambda: listening("127.0.0.1", self.port) or self.proc.poll() is not None, timeout=10)
        assert self.proc.poll() is None, self.log.read_text()
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def test_a_host_killed_under_load_loses_doubles_and_hides_nothing(pg_url, private_redis, tmp_path):
    # As deploy/README.md has it: the store made once (migrated, its agents' tokens, the
    # chief's login) before the hosts start, together.
    keys = tokens(pg_url, TABLES)
    with open_store(pg_url, None, TEST_SECRET) as store:
        add_user(store, "chief", "chief", "hall-chief-password")
    namespace = f"hall-{uuid.uuid4().hex[:8]}"
    viewers: list[Viewer] = []
    hosts = [Host(address, pg_url, tmp_path, private_redis.url, namespace) for address in ("127.0.0.2", "127.0.0.3")]
    try:
        for host in hosts:
            host.launch()
        for host in hosts:
            host.wait_ready()
        with Proxy(hosts, tmp_path) as proxy:
            def state() -> str:
                return "\n".join([*map(repr, viewers), proxy.log.read_text()[-3000:],
                                  *(h.log.read_text()[-2000:] for h in hosts)])

            viewers += [Viewer(proxy.base).__enter__() for _ in range(VIEWERS)]  # round robin: two on each
            when(lambda: all(v.connections == 1 for v in viewers), timeout=20, describe=state)
            agents = [Agent(proxy.base, t, keys[t], session_of(t, seed, EVENTS), batch=2)
                      for seed, t in enumerate(TABLES)]

            def kill_a_host() -> None:
                when(lambda: acked(agents) >= len(TABLES) * EVENTS // 3, describe=state)
                hosts[0].kill()

            try:
                run_agents(agents, timeout=40, fault=kill_a_host, pause=0.05)
                assert hosts[0].proc.poll() is not None, "the host was not killed"
                assert acked(agents) == len(TABLES) * EVENTS
                # the request in flight when the host died, at most: the rest went to the other host
                failures = [status for a in agents for status, _ in a.failures]
                assert len(failures) <= 1 and set(failures) <= {0, 502, 503}, failures
                health = httpx.get(f"{proxy.base}/healthz", timeout=5)
                assert health.status_code == 200 and health.json()["database"] == "ok"
                final = {a.table: len(a.events) for a in agents}
                when(lambda: all(v.seqs == final for v in viewers), timeout=20, describe=state)
                assert any(v.connections >= 2 for v in viewers), state()  # some page resumed on host b
            finally:
                for viewer in viewers:  # told to stop now; their streams end with the proxy
                    viewer._stop.set()
        for viewer in viewers:
            viewer.__exit__(None, None, None)
    finally:
        for host in hosts:
            host.stop()
    check_stored_exactly_once(pg_url, agents)  # once each, no gaps, verify (with a re-derivation) OK
