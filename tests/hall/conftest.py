"""A hall on this machine's real servers: ``guandan-ref serve`` processes (gunicorn),
PostgreSQL scratch schemas, a Redis server of the test's own (so that restarting it
disturbs nobody else), and table agents that resend until acknowledged."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
import pytest
from sqlalchemy.engine import make_url

from referee.simulate import play_session
from web.app.accounts import create_token
from web.app.api import STREAM_KEEPALIVE_S
from web.store import open_store
from tests.store.support import TEST_SECRET, temporary_url

CLI = str(Path(sys.executable).parent / "guandan-ref")
START_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float, alive=lambda: True) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert alive(), "the process stopped before it listened"
            assert time.monotonic() < deadline, f"nothing listens on port {port} after {timeout} s"
            time.sleep(0.05)


class Server:
    """``guandan-ref serve`` on a fixed port, to be killed and started again at will."""

    def __init__(self, store: str, tmp: Path, workers: int = 1, redis: str | None = None):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.args = [CLI, "serve", "--port", str(self.port), "--workers", str(workers)]
        self.args += ["--db", store] if "://" in store else ["--data", store]
        self.args += ["--redis", redis] if redis else []
        self.env = {**os.environ, "GUANDAN_SECRET_KEY": TEST_SECRET, "GUANDAN_ADMIN_PASSWORD": "hall-chief-password",
                    "GUANDAN_REDIS_NAMESPACE": f"hall-{uuid.uuid4().hex[:8]}"}
        self.log = tmp / f"serve-{self.port}.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> Server:
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                         start_new_session=True)  # its own group: kill -9 takes all
        wait_for_port(self.port, START_TIMEOUT_S, lambda: self.proc.poll() is None)
        return self

    def workers(self) -> list[psutil.Process]:
        return psutil.Process(self.proc.pid).children()

    def kill_worker(self) -> int:
        """``kill -9`` one worker; gunicorn's master starts another. Returns its pid."""
        victim = self.workers()[0]
        victim.send_signal(signal.SIGKILL)
        return victim.pid

    def kill(self) -> None:
        """``kill -9`` of the whole server: master and workers at once."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture
def serve(tmp_path):
    """Starts servers; stops them all at the end."""
    started: list[Server] = []

    def start(store: str, **options) -> Server:
        server = Server(store, tmp_path, **options)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def pg_url(tmp_path):
    """A scratch PostgreSQL schema on the machine's server, named in its connections'
    ``application_name`` so that a test can terminate exactly its own backends."""
    with temporary_url("postgresql", tmp_path) as url:
        name = f"hall-{uuid.uuid4().hex[:8]}"
        yield make_url(url).update_query_dict({"application_name": name}).render_as_string(hide_password=False)


def terminate_backends(url: str) -> int:
    """``pg_terminate_backend`` every connection of ``url``'s application name; how many."""
    name = make_url(url).query["application_name"]
    admin = make_url(url).difference_update_query(["application_name", "options"]).render_as_string(
        hide_password=False)
    from sqlalchemy import create_engine, text

    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            return len(conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                         "WHERE application_name = :name"), {"name": name}).all())
    finally:
        engine.dispose()


class PrivateRedis:
    """A redis-server of the test's own on a free port (the machine's binary)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> PrivateRedis:
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                                      "--save", "", "--appendonly", "no"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, 10, lambda: self.proc.poll() is None)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


@pytest.fixture
def private_redis():
    redis = PrivateRedis().start()
    yield redis
    redis.stop()


def tokens(store: str, tables: list[str]) -> dict[str, str]:
    """Agent tokens for ``tables`` of the store at ``store`` (a URL or a data directory)."""
    db, data = (store, None) if "://" in store else (None, store)
    with open_store(db, data, TEST_SECRET) as opened:
        return {table: create_token(opened, table) for table in tables}


def session_of(table: str, seed: int, count: int) -> list[dict]:
    """The first ``count`` events of a seeded simulated session at ``table``."""
    return play_session(seed, {"NS": f"{table}-NS", "EW": f"{table}-EW"}, table=table)[:count]


@dataclass
class Agent:
    """A table agent: posts its events in batches and resends a batch until it is answered."""

    base: str
    table: str
    token: str
    events: list[dict]
    batch: int = 3
    acked: dict[str, int] = field(default_factory=dict)
    """Event id -> the seq the server acknowledged it with."""
    failures: list[tuple[int, dict]] = field(default_factory=list)
    """(status, headers) of every answer that was not 200 (0: no answer at all)."""
    next: int = 0

    def step(self, client: httpx.Client) -> bool:
        """Post the next batch once; True when it was acknowledged."""
        chunk = self.events[self.next:self.next + self.batch]
        try:
            response = client.post(f"{self.base}/api/tables/{self.table}/events", json=chunk,
                                   headers={"Authorization": f"Bearer {self.token}"}, timeout=5)
        except httpx.HTTPError:
            self.failures.append((0, {}))
            return False
        if response.status_code != 200:
            self.failures.append((response.status_code, dict(response.headers)))
            return False
        for event, result in zip(chunk, response.json()["results"]):
            assert result["status"] in ("accepted", "duplicate"), result
            assert self.acked.setdefault(event["id"], result["seq"]) == result["seq"], "one id, two seqs"
        self.next += len(chunk)
        return True

    @property
    def done(self) -> bool:
        return self.next >= len(self.events)


def acked(agents: list[Agent]) -> int:
    return sum(len(a.acked) for a in agents)


def run_agents(agents: list[Agent], timeout: float, fault=None, pause: float = 0.1) -> None:
    """Round-robin the agents until all are done, while ``fault()`` runs in a thread of its
    own (so that it strikes with requests in flight); its exception fails the test."""
    deadline = time.monotonic() + timeout
    errors: list[BaseException] = []

    def strike() -> None:
        try:
            fault()
        except BaseException as exc:  # re-raised below, in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=strike, daemon=True) if fault else None
    if thread:
        thread.start()
    with httpx.Client() as client:
        while not all(a.done for a in agents):
            assert time.monotonic() < deadline, f"agents not done after {timeout} s: {[a.next for a in agents]}"
            for agent in agents:
                if not agent.done and not agent.step(client):
                    time.sleep(pause)
    if thread:
        thread.join(timeout=30)
    if errors:
        raise errors[0]


def when(condition, timeout: float = 60.0, describe=lambda: "") -> None:
    """Wait for ``condition()`` (polled every 10 ms); on time-out, say what ``describe()`` says."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"condition not met in {timeout} s {describe()}"
        time.sleep(0.01)


def check_stored_exactly_once(store_url: str, agents: list[Agent]) -> None:
    """Each table holds its events once each, in order, every acknowledged one at its seq,
    and the referee state derived from them equals a fresh replay (verify --rederive)."""
    with open_store(store_url, None, TEST_SECRET) as store:
        for agent in agents:
            stored = store.events(agent.table)
            assert [e["id"] for e in stored] == [e["id"] for e in agent.events], agent.table
            assert [e["seq"] for e in stored] == list(range(1, len(stored) + 1))
            assert {e["id"]: e["seq"] for e in stored} == agent.acked
        report = store.verify(rederive=True)
        assert report.ok, report.problems


class Viewer:
    """A viewer on ``/api/stream`` in a thread of its own: reconnects with its
    ``Last-Event-ID`` whenever the stream ends or is refused, as a browser does."""

    def __init__(self, base: str):
        self.base = base
        self.last_id: str | None = None
        self.seqs: dict[str, int] = {}
        self.refusals: list[tuple[int, str | None]] = []
        """(status, Retry-After) of every refused connection."""
        self.connections = 0
        self.dropped: list[str] = []
        """Why each stream ended other than by the server closing it (time-outs, resets)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Viewer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def __repr__(self) -> str:
        return (f"<Viewer alive={self._thread.is_alive()} connections={self.connections} seqs={self.seqs} "
                f"last_id={self.last_id} refusals={self.refusals[-3:]} dropped={self.dropped[-3:]}>")

    def _run(self) -> None:
        # A browser never times out a stream: it waits for data or the server's keep-alive.
        with httpx.Client(timeout=httpx.Timeout(5.0, read=STREAM_KEEPALIVE_S + 5)) as client:
            while not self._stop.is_set():
                headers = {"Last-Event-ID": self.last_id} if self.last_id else {}
                try:
                    with client.stream("GET", f"{self.base}/api/stream", headers=headers) as response:
                        if response.status_code != 200:
                            self.refusals.append((response.status_code, response.headers.get("Retry-After")))
                            time.sleep(0.2)
                            continue
                        self.connections += 1
                        self._read(response)
                except httpx.HTTPError as exc:  # a dropped stream
                    self.dropped.append(repr(exc))
                    time.sleep(0.1)

    def _read(self, response) -> None:
        """Dispatch each event at its blank line, taking its id then (as EventSource does:
        an event cut off before its end is neither seen nor acknowledged)."""
        event_id = data = None
        for line in response.iter_lines():
            if self._stop.is_set():
                return
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: "):
                data = line[6:]
            elif not line and data is not None:
                tile = json.loads(data)
                self.seqs[tile["table"]] = max(self.seqs.get(tile["table"], 0), tile["seq"])
                self.last_id = event_id or self.last_id
                event_id = data = None
