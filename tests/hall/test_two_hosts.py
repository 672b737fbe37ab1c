"""Two hosts behind one address, as deploy/README.md sets them up: ``guandan-ref serve`` on
127.0.0.2 and 127.0.0.3 (two workers each) on one PostgreSQL database and one Redis, with
Debian's HAProxy in front running deploy/haproxy.cfg itself. While table agents post and
live pages follow through the proxy, one host loses its database (its connections go
through a relay the test cuts) and gets it back, then the other host is killed (``kill -9``
of its master and workers): the proxy marks the host without a database down by its health
check and places the posts it answered 503 on the other host, every acknowledged event is
stored once, without gaps, the pages resume on the remaining host and miss nothing, and
the store verifies."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

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
EVENTS = 45
VIEWERS = 4

pytestmark = pytest.mark.skipif(shutil.which("haproxy") is None,
                                reason="HAProxy is not installed (./run.sh setup installs Debian's haproxy)")


def listening(address: str, port: int) -> bool:
    try:
        socket.create_connection((address, port), timeout=0.2).close()
        return True
    except OSError:
        return False


class Relay:
    """A TCP relay to PostgreSQL for one host's connections: cut, it closes them and every
    new one at once (that host alone has lost its database); restored, it relays again."""

    def __init__(self, url: str):
        parsed = make_url(url)
        self.target = (parsed.host or "127.0.0.1", parsed.port or 5432)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = parsed.set(port=self.listener.getsockname()[1]).render_as_string(hide_password=False)
        self.cut_off = False
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.cut_off:
                client.close()
                continue
            upstream = socket.create_connection(self.target)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        self.cut_off = True
        sockets, self.sockets = self.sockets, []
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def restore(self) -> None:
        self.cut_off = False

    def close(self) -> None:
        self.cut()
        self.listener.close()


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


def test_a_host_without_its_database_then_a_host_killed_under_load(pg_url, private_redis, tmp_path):
    # As deploy/README.md has it: the store made once (migrated, its agents' tokens, the
    # chief's login) before the hosts start, together.
    keys = tokens(pg_url, TABLES)
    with open_store(pg_url, None, TEST_SECRET) as store:
        add_user(store, "chief", "chief", "hall-chief-password")
    namespace = f"hall-{uuid.uuid4().hex[:8]}"
    viewers: list[Viewer] = []
    relay = Relay(pg_url)  # host b's way to the database
    hosts = [Host("127.0.0.2", pg_url, tmp_path, private_redis.url, namespace),
             Host("127.0.0.3", relay.url, tmp_path, private_redis.url, namespace)]
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

            def strike() -> None:
                """Host b loses its database and gets it back; then host a dies."""
                when(lambda: acked(agents) >= len(TABLES) * EVENTS // 5, describe=state)
                relay.cut()
                when(lambda: "hosts/b is DOWN" in proxy.log.read_text(), timeout=15, describe=state)
                relay.restore()
                when(lambda: "hosts/b is UP" in proxy.log.read_text(), timeout=15, describe=state)
                hosts[0].kill()

            try:
                run_agents(agents, timeout=60, fault=strike, pause=0.05)
                assert hosts[0].proc.poll() is not None, "the host was not killed"
                assert acked(agents) == len(TABLES) * EVENTS
                log = proxy.log.read_text()
                assert "hosts/b is DOWN, reason: Layer7 wrong status, code: 503" in log, log[-3000:]
                # what host b answered 503 without its database went to host a; what the proxy
                # could not place on a host (before it marked the dead one down) it answers 503:
                # one at most, the post in flight when host a died. No answer at all (0: a
                # time-out on a slow machine) is resent.
                failures = [status for a in agents for status, _ in a.failures]
                assert len([s for s in failures if s != 0]) <= 1 and set(failures) <= {0, 502, 503}, failures
                health = httpx.get(f"{proxy.base}/healthz", timeout=5)
                assert health.status_code == 200 and health.json()["database"] == "ok"
                final = {a.table: len(a.events) for a in agents}
                when(lambda: all(v.seqs == final for v in viewers), timeout=20, describe=state)
                assert any(v.connections >= 2 for v in viewers), state()  # some page resumed elsewhere
            finally:
                for viewer in viewers:  # told to stop now; their streams end with the proxy
                    viewer._stop.set()
        for viewer in viewers:
            viewer.__exit__(None, None, None)
    finally:
        for host in hosts:
            host.stop()
        relay.close()
    check_stored_exactly_once(pg_url, agents)  # once each, no gaps, verify (with a re-derivation) OK
