"""Hall load: N table agents posting seeded sessions and M viewers on the live stream.

Starts ``guandan-ref serve`` on a free loopback port (SQLite in a temporary data
directory, or a scratch schema of ``--db`` dropped afterwards; ``--redis`` under a
namespace of its own), gives each table a token; the tables join over ``--ramp`` seconds
(default 5: a round's tables sit down over minutes, not in one instant; ``--ramp 0`` has
every table's first event, which creates it, within one period), then all post for
``--seconds``:

- each of ``--tables`` agents posts the events of its own seeded session
  (``referee.simulate``: plays, passes, reports, tributes, with a ``tick`` between the
  turns) at ``--rate`` events/s on a fixed schedule, one event per request as a table
  agent does, and resends with the same ``id`` what was not acknowledged;
- each of ``--viewers`` holds ``/api/stream`` open (reconnecting with its
  ``Last-Event-ID``) and notes when each table's sequence number reaches it.

The viewers run in processes of their own, ``VIEWERS_PER_PROCESS`` each: 500 viewers
reading every batch in the agents' event loop kept it busy for tens of milliseconds at a
time (the acknowledgements waited in their sockets, counted as the server's ingest
latency), and in one process of their own the last of them read a batch 150 ms after the
first (counted as push latency). All processes read the same system-wide monotonic clock.

With ``--url URL --tokens FILE`` it drives a hall that is already running instead (one
host, or the proxy in front of several): the tables are those of the file (lines ``TABLE
TOKEN``, made with ``guandan-ref token create``), which must not have events yet; lost
events are counted through the hall's API (``GET /api/tables/<id>/events``, a broadcast
delay of 0), and the server's CPU is that of the processes named by ``--pid`` (each
host's gunicorn master with its workers; on this machine), or left out; ``--pid redis=PID``
and ``--pg-database NAME`` narrow Redis and PostgreSQL to the hall's own on a shared machine.

It prints accepted events/s (over the whole run, the ramp included), ingest latency
(request sent -> acknowledged) p50/p99, push latency (acknowledged at the agent -> seen
by a viewer; a viewer that saw it first counts 0) p50/p99, errors, lost events
(acknowledged but not in the store afterwards), and the CPU used by the server, PostgreSQL
and Redis over the run (percent of one core, and ms per accepted event). With ``--json``
the last line is one JSON object.

Usage: python bench/load.py --tables N --rate R --viewers M --seconds S
       [--db URL --redis URL --workers K | --url URL --tokens FILE [--pid PID ...]]
       [--ramp S] [--connections C] [--json]
Everything is bounded: the run stops after ``--ramp`` + ``--seconds`` plus a few seconds of drain,
and the server is stopped and the scratch data removed however it ends.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import _standalone  # noqa: F401  (first: keeps bench/ off the import path)
import aiohttp
import numpy as np
import psutil
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test support below

from referee.simulate import play_session  # noqa: E402
from tests.store.support import PG_URL_ENV, TEST_SECRET, temporary_url  # noqa: E402
from web.app.accounts import create_token  # noqa: E402
from web.store import open_store  # noqa: E402

CLI = str(Path(sys.executable).parent / "guandan-ref")
DRAIN_S = 5.0
"""After the schedule ends: how long outstanding requests and pushes may still finish."""
RETRY_S = 0.5
"""An agent's pause before resending what was not acknowledged."""
START_TIMEOUT_S = 60.0
READY_TIMEOUT_S = 60.0
"""How long the viewers may take to open their streams before the agents start anyway."""
VIEWERS_PER_PROCESS = 125
BACKLOG_BYTES = 4 << 20
"""What a viewer keeps unread while the agents post (``Reader``): 125 viewers of a process
keep at most half a gigabyte."""
NICE = 5
"""The viewers' processes' niceness: on a machine with fewer cores than processes, the
agents waiting behind the viewers' parsing would be counted as ingest latency."""
REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=10.0)
STREAM_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=5.0)
"""A live stream is held for the whole run; only connecting to it is bounded."""


@dataclass
class Figures:
    sent: int = 0
    accepted: int = 0
    duplicates: int = 0
    rejected: int = 0
    errors: int = 0
    """Requests answered with anything but 200, or failing at the connection (then resent)."""
    ingest_ms: list[float] = field(default_factory=list)
    acked: dict[str, dict[int, tuple[str, float]]] = field(default_factory=dict)
    """table -> seq -> (event id, monotonic time the agent got the acknowledgement)."""


@dataclass
class Sightings:
    """What the viewers saw (in the viewers' process)."""

    errors: int = 0
    ready: set[str] = field(default_factory=set)
    """Viewers that have received their stream's first bytes."""
    readers: dict[str, Reader] = field(default_factory=dict)
    """viewer -> what it received."""


def table_events(index: int, count: int, table: str | None = None) -> list[dict]:
    """``count`` events of the seeded session ``index`` at ``table`` (default L<index>), a
    ``tick`` between every two turns."""
    table = table or f"L{index}"
    out: list[dict] = []
    session = play_session(index, {"NS": f"NS{index}", "EW": f"EW{index}"}, table=table)
    for before, after in zip(session, session[1:] + [None]):
        out.append(before)
        if after is not None and before["type"] in ("play", "pass") and after["t"] > before["t"]:
            out.append({"type": "tick", "t": round((before["t"] + after["t"]) / 2, 3), "table": table,
                        "id": f"tick-{before['id']}"})
    if count > len(out):
        raise SystemExit(f"--seconds x --rate asks for {count} events per table; a session has {len(out)}")
    return out[:count]


def read_tokens(path: str) -> dict[str, str]:
    """Table -> agent token, from lines ``TABLE TOKEN`` (blank lines and ``#`` comments skipped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SystemExit(f"--tokens {path}: {exc}") from None
    tokens = {}
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            parts = line.split()
            if len(parts) != 2:
                raise SystemExit(f"{path} line {number}: expected 'TABLE TOKEN', not {line.strip()[:80]!r}")
            tokens[parts[0]] = parts[1]
    if not tokens:
        raise SystemExit(f"{path}: no 'TABLE TOKEN' line")
    return tokens


def get_json(url: str) -> dict | None:
    """The JSON a GET of ``url`` answers; None for a 404."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise SystemExit(f"GET {url}: {exc.code} {exc.reason}") from None
    except OSError as exc:
        raise SystemExit(f"GET {url}: {exc}") from None


def fresh_tables(base: str, tables: list[str]) -> None:
    """Refuse tables of a running hall that have events: a seeded session posted again is
    answered ``duplicate`` (or rejected), not measured."""
    used = [t for t in tables if (get_json(f"{base}/api/tables/{urllib.request.quote(t, safe='')}/events")
                                  or {}).get("events")]
    if used:
        raise SystemExit(f"tables with events already: {', '.join(used[:10])}; give tokens of new tables")


def lost_over_api(base: str, fig: Figures) -> int:
    """``lost_events`` through the hall's API: acknowledged events it does not list at their seq."""
    lost = 0
    for table, acked in fig.acked.items():
        listed = get_json(f"{base}/api/tables/{urllib.request.quote(table, safe='')}/events") or {"events": []}
        stored = {e["seq"]: str(e.get("id")) for e in listed["events"]}
        lost += sum(1 for seq, (eid, _) in acked.items() if stored.get(seq) != str(eid))
    return lost


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loopback_only(url: str | None, what: str) -> None:
    """The bench talks to this machine only: refuse a database or Redis elsewhere."""
    if url is None:
        return
    host = make_url(url).host if "://" in url else None
    if what == "--redis":
        from urllib.parse import urlsplit

        host = urlsplit(url).hostname
    try:
        local = host in ("localhost", None, "") or ipaddress.ip_address(host).is_loopback
    except ValueError:
        local = False
    if not local:
        raise SystemExit(f"{what} {url}: the load bench runs on loopback only")


@contextmanager
def server(args, data: Path):
    """``guandan-ref serve`` on a scratch store; yields (base URL, its process, store URL)."""
    with ExitStack() as stack:
        if args.db:
            os.environ[PG_URL_ENV] = args.db  # the scratch schema is made in this database
        db = stack.enter_context(temporary_url("postgresql", data)) if args.db else None
        port = free_port()
        env = {**os.environ, "GUANDAN_SECRET_KEY": TEST_SECRET, "GUANDAN_ADMIN_PASSWORD": "load-bench-chief",
               "GUANDAN_REDIS_NAMESPACE": f"load-{uuid.uuid4().hex[:8]}"}
        cmd = [CLI, "serve", "--port", str(port), "--workers", str(args.workers),
               "--connections", str(args.connections)]
        cmd += ["--db", db] if db else ["--data", str(data / "store")]
        cmd += ["--redis", args.redis] if args.redis else []
        log = (data / "serve.log").open("w")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                if proc.poll() is not None:
                    raise SystemExit(f"the server stopped at start: {(data / 'serve.log').read_text()[-2000:]}")
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit("the server did not start within a minute") from None
                    time.sleep(0.1)
            yield f"http://127.0.0.1:{port}", proc, db or None
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()


def percentile(values, q: float) -> float | None:
    """The ``q``-th percentile (linear between closest ranks), None for no values."""
    return round(float(np.percentile(values, q)), 2) if len(values) else None


async def agent(client: aiohttp.ClientSession, table: str, token: str, events: list[dict], rate: float,
                start: float, stop: float, fig: Figures) -> None:
    """Post ``events`` on schedule (event k at ``start + k / rate``); resend until acknowledged.

    ``start`` is this table's own: the tables of a hall play independently, so the bench
    spreads their phases over one period instead of sending every table's event at once."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    acked = fig.acked.setdefault(table, {})
    for k, event in enumerate(events):
        body = json.dumps(event).encode()
        due = start + k / rate
        now = time.monotonic()
        if due > now:
            await asyncio.sleep(due - now)
        while time.monotonic() < stop:
            fig.sent += 1
            sent = time.monotonic()
            try:
                async with client.post(f"/api/tables/{table}/events", data=body, headers=headers) as response:
                    status, answer = response.status, await response.read()
            except (aiohttp.ClientError, asyncio.TimeoutError):
                fig.errors += 1
                await asyncio.sleep(RETRY_S)
                continue
            done = time.monotonic()
            if status != 200:
                fig.errors += 1
                await asyncio.sleep(RETRY_S)
                continue
            fig.ingest_ms.append(1000 * (done - sent))
            (result,) = json.loads(answer)["results"]
            if result["status"] == "rejected":
                fig.rejected += 1
            else:
                fig.duplicates += result["status"] == "duplicate"
                fig.accepted += result["status"] == "accepted"
                acked[result["seq"]] = (event["id"], done)
            break


TILE = re.compile(rb'^data: \{"table":"([^"]*)","seq":(\d+)', re.MULTILINE)
"""A tile's table and seq: the first two fields of every ``table`` event's data."""
EVENT_ID = re.compile(rb"^id: (.*)$", re.MULTILINE)


@dataclass
class Reader:
    """What one viewer received, read for when each table's seq first reached it.

    While the agents post, the bytes are only kept, with the time they arrived
    (``received``); they are read once the agents are done (``live``), or when
    ``BACKLOG_BYTES`` of them are waiting. 500 viewers receive every table's every
    change: reading it as it came took their processes about 60% of a core beside the
    server being measured (200 tables), keeping it 10-30%.
    """

    seen_at: dict[str, list[float]] = field(default_factory=dict)
    """table -> the monotonic time this viewer first saw seq k, at index k - 1."""
    live: bool = False
    last_id: str | None = None
    """The id of the last whole event read: what a reconnection resumes from."""
    _backlog: list[tuple[float, bytes]] = field(default_factory=list)
    _size: int = 0
    _carry: bytes = b""

    def received(self, now: float, data: bytes) -> None:
        if self.live:
            self._read(now, data)
            return
        self._backlog.append((now, data))
        self._size += len(data)
        if self._size > BACKLOG_BYTES:
            self.catch_up()

    def catch_up(self) -> None:
        """Read what is kept."""
        backlog, self._backlog, self._size = self._backlog, [], 0
        for now, data in backlog:
            self._read(now, data)

    def reconnecting(self) -> str | None:
        """The id to resume from; a new connection begins at a new event."""
        self.catch_up()
        self._carry = b""
        return self.last_id

    def _read(self, now: float, data: bytes) -> None:
        data = self._carry + data
        end = data.rfind(b"\n\n") + 2
        done, self._carry = data[:end], data[end:]
        ids = EVENT_ID.findall(done)
        if ids:
            self.last_id = ids[-1].decode()
        for table, seq in dict(TILE.findall(done)).items():  # the last seq of each table
            times = self.seen_at.setdefault(table.decode(), [])
            if int(seq) > len(times):
                times.extend([now] * (int(seq) - len(times)))


async def viewer(client: aiohttp.ClientSession, name: str, stop: float, sight: Sightings) -> None:
    """Hold the live stream, reconnecting with the last id; note when each table's seq first
    reaches this viewer (a tile carries a table's state: seeing seq k is seeing 1..k).

    Hundreds of viewers each receive every table's every change: the bytes are scanned by
    two regular expressions rather than decoded line by line, and after the agents' run
    (``Reader``), so that the bench's own parsing does not take the CPU the server is
    measured on.
    """
    reader = sight.readers[name] = Reader()
    while time.monotonic() < stop:
        last_id = reader.reconnecting()
        headers = {"Last-Event-ID": last_id} if last_id else {}
        try:
            async with client.get("/api/stream", headers=headers, timeout=STREAM_TIMEOUT) as response:
                if response.status != 200:
                    raise aiohttp.ClientResponseError(response.request_info, (), status=response.status)
                async for data in response.content.iter_any():
                    now = time.monotonic()
                    sight.ready.add(name)
                    reader.received(now, data)
                    if now >= stop:
                        return
        except (aiohttp.ClientError, asyncio.TimeoutError):
            sight.errors += 1
            await asyncio.sleep(RETRY_S)


def viewers_process(base: str, names: list[str], stop: float, conn) -> None:
    """A viewers' process: stream until the parent sends the acknowledgements (or ``stop``),
    let every viewer catch up for at most ``DRAIN_S``, send back the push latencies."""
    os.nice(NICE)  # the server and the agents (whose latency is measured) come first
    asyncio.run(_viewers(base, names, stop, conn))


async def _viewers(base: str, names: list[str], stop: float, conn) -> None:
    sight = Sightings()
    async with aiohttp.ClientSession(base, connector=aiohttp.TCPConnector(limit=0), timeout=REQUEST_TIMEOUT) as client:
        tasks = [asyncio.create_task(viewer(client, name, stop, sight)) for name in names]
        ready_by = time.monotonic() + READY_TIMEOUT_S
        while len(sight.ready) < len(names) and time.monotonic() < ready_by:
            await asyncio.sleep(0.05)
        conn.send(len(sight.ready))
        acked = await asyncio.get_running_loop().run_in_executor(None, conn.recv)
        cpu = psutil.Process().cpu_times()  # while the agents posted: not the reading below
        for reader in sight.readers.values():
            reader.live = True
            reader.catch_up()
        want = {t: max(seqs) for t, seqs in acked.items() if seqs}
        deadline = time.monotonic() + DRAIN_S
        while time.monotonic() < deadline and not all(
                len(sight.readers[name].seen_at.get(t, ())) >= seq for name in names for t, seq in want.items()):
            await asyncio.sleep(0.1)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    pushes, missed = push_latencies(sight, acked)
    conn.send({"pushes": pushes.astype(np.float32), "push_missed": missed, "viewer_errors": sight.errors,
               "cpu_s": cpu.user + cpu.system})


def push_latencies(sight: Sightings, acked: dict[str, dict[int, float]]) -> tuple[np.ndarray, int]:
    """Push latency of every (viewer, acknowledged event) pair in ms (a viewer that saw an
    event before its acknowledgement counts 0), and how many such pairs never reached the viewer."""
    ack_times = {}
    for table, seqs in acked.items():
        times = np.full(max(seqs, default=0), np.nan)
        for seq, at in seqs.items():
            times[seq - 1] = at
        ack_times[table] = times
    out, missed = [], 0
    for seen_at in (reader.seen_at for reader in sight.readers.values()):
        for table, times in ack_times.items():
            seen = np.asarray(seen_at.get(table, ())[:len(times)])
            delay = seen - times[:len(seen)]
            out.append(np.maximum(delay[~np.isnan(delay)], 0.0) * 1000)
            missed += int(np.count_nonzero(~np.isnan(times[len(seen):])))
    return (np.concatenate(out) if out else np.array([])), missed


Roots = dict[str, Callable[[], list[psutil.Process]]]
"""Role (server, postgresql, redis) -> its processes now (each counted with its descendants)."""


def roots(named: dict[str, list[int]], pg_database: str | None = None) -> Roots:
    """The server (gunicorn's masters), PostgreSQL's postmaster and the Redis servers of this
    machine, or the processes ``named`` for a role; with ``pg_database``, PostgreSQL is the
    backends serving that database only (found again at each reading: a pool opens some
    during a run; one that exits meanwhile takes its CPU with it)."""
    try:
        fixed = {role: [psutil.Process(pid) for pid in pids] for role, pids in named.items()}
    except psutil.NoSuchProcess as exc:
        raise SystemExit(f"--pid {exc.pid}: no such process on this machine") from None

    def found(role: str) -> list[psutil.Process]:
        out = []
        for proc in psutil.process_iter(["name", "ppid", "cmdline"]):
            name = proc.info["name"] or ""
            try:
                parent = psutil.Process(proc.info["ppid"]).name() if proc.info["ppid"] else ""
            except psutil.Error:
                parent = ""
            if role == "postgresql" and pg_database is not None:
                title = " ".join(proc.info["cmdline"] or ())
                if name.startswith("postgres") and title.startswith("postgres: ") and f" {pg_database} " in title:
                    out.append(proc)
            elif role == "postgresql" and name.startswith("postgres") and not parent.startswith("postgres"):
                out.append(proc)
            elif role == "redis" and name.startswith("redis-server"):
                out.append(proc)
        return out

    return {role: (lambda procs=fixed[role]: procs) if role in fixed else (lambda role=role: found(role))
            for role in ("server", "postgresql", "redis") if role in fixed or role != "server"}


def pids_by_role(values: list[str]) -> dict[str, list[int]]:
    """``--pid`` values (``PID``: a server's; ``ROLE=PID``) by role."""
    out: dict[str, list[int]] = {}
    for value in values:
        role, _, pid = value.rpartition("=")
        if role not in ("", "server", "postgresql", "redis") or not pid.isdigit():
            raise SystemExit(f"--pid {value!r}: expected PID or ROLE=PID (ROLE: server, postgresql, redis)")
        out.setdefault(role or "server", []).append(int(pid))
    return out


def cpu_seconds(procs: Roots) -> dict[str, float]:
    """CPU of each root and all its descendants, the exited ones included (their parent
    reaped them: a PostgreSQL backend lives as long as its connection)."""
    total = {}
    for role, group in procs.items():
        seconds = 0.0
        for root in group():
            try:
                family = [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
            for proc in family:
                try:
                    t = proc.cpu_times()
                    seconds += t.user + t.system + t.children_user + t.children_system
                except psutil.Error:
                    pass
        total[role] = seconds
    return total


def lost_events(store_url: str, fig: Figures) -> int:
    """Acknowledged events not in the store at the seq they were acknowledged with."""
    lost = 0
    with open_store(store_url, secret=TEST_SECRET, migrate=False) as store:
        for table, acked in fig.acked.items():
            stored = {e["seq"]: str(e.get("id")) for e in store.events(table)}
            lost += sum(1 for seq, (eid, _) in acked.items() if stored.get(seq) != str(eid))
    return lost


def joining(tables: int, rate: float, ramp: float) -> list[float]:
    """When each table's agent starts, in seconds after the first: the tables join over
    ``ramp`` seconds, as a hall's tables sit down over the first minutes of a round rather
    than in the same instant (a load tool's spawn rate). Their phases are spread over one
    period, so that the tables that joined do not post at the same instant either."""
    period = 1 / rate
    periods = int(ramp * rate)
    return [period * i / tables + period * (periods * i // tables) for i in range(tables)]


async def run(args, base: str, tokens: dict[str, str], plan: dict[str, list[dict]], fig: Figures,
              start: float) -> float:
    """The agents, from ``start`` (the viewers are connected by then); the seconds they took."""
    async with aiohttp.ClientSession(base, connector=aiohttp.TCPConnector(limit=0), timeout=REQUEST_TIMEOUT) as client:
        end = args.ramp + args.seconds  # every table posts until then, from its own start
        starts = joining(len(plan), args.rate, args.ramp)
        await asyncio.gather(*(agent(client, table, tokens[table], events[:round((end - at) * args.rate)], args.rate,
                                     start + at, start + end + DRAIN_S, fig)
                               for (table, events), at in zip(plan.items(), starts)))
        return time.monotonic() - start


def watch(args, base: str, fig: Figures, agents: Callable[[float], float]) -> tuple[float, dict]:
    """Open the viewers' streams, then run ``agents(start)`` while they stream (the figures
    are of a floor already watched: 500 pages opening at once is another measurement);
    (the agents' seconds, the push figures)."""
    if not args.viewers:
        return agents(time.monotonic()), {"pushes": 0, "push_missed": 0, "viewer_errors": 0, "push_p50_ms": None,
                          "push_p99_ms": None, "cpu_s": 0.0}
    stop = time.monotonic() + READY_TIMEOUT_S + args.ramp + args.seconds + 3 * DRAIN_S
    names = [f"v{v}" for v in range(args.viewers)]
    children = []
    for first in range(0, len(names), VIEWERS_PER_PROCESS):
        mine, theirs = multiprocessing.Pipe()
        child = multiprocessing.get_context("fork").Process(
            target=viewers_process, args=(base, names[first:first + VIEWERS_PER_PROCESS], stop, theirs), daemon=True)
        child.start()
        children.append((child, mine))
    try:
        for _, mine in children:
            if not mine.poll(READY_TIMEOUT_S + 10):
                raise SystemExit("a viewers' process did not start")
            mine.recv()
        wall = agents(time.monotonic() + 0.5)
        acked = {t: {seq: at for seq, (_, at) in seqs.items()} for t, seqs in fig.acked.items()}
        for _, mine in children:
            mine.send(acked)
        parts = []
        for _, mine in children:
            if not mine.poll(max(0.0, stop - time.monotonic()) + 60):
                raise SystemExit("a viewers' process sent no figures")
            parts.append(mine.recv())
    finally:
        for child, _ in children:
            child.join(timeout=10)
            if child.is_alive():
                child.kill()
    pushes = np.concatenate([p["pushes"] for p in parts])
    return wall, {"pushes": len(pushes), "push_missed": sum(p["push_missed"] for p in parts),
                  "viewer_errors": sum(p["viewer_errors"] for p in parts), "push_p50_ms": percentile(pushes, 50),
                  "push_p99_ms": percentile(pushes, 99), "cpu_s": sum(p["cpu_s"] for p in parts)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--rate", type=float, default=2.0, help="events per second per table")
    parser.add_argument("--viewers", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--ramp", type=float, default=5.0,
                        help="seconds over which the tables join (then all post for --seconds)")
    parser.add_argument("--db", metavar="URL", help="PostgreSQL on this machine (a scratch schema is used)")
    parser.add_argument("--redis", metavar="URL", help="Redis on this machine (needed by --workers > 1)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--connections", type=int, default=None,
                        help="connections per worker (default: every viewer and agent, and then some)")
    parser.add_argument("--url", help="drive this running hall (a host, or the proxy in front) instead")
    parser.add_argument("--tokens", metavar="FILE", help="with --url: lines 'TABLE TOKEN' of new tables")
    parser.add_argument("--pid", action="append", default=[], metavar="[ROLE=]PID",
                        help="with --url: a server's gunicorn master on this machine, for its CPU (repeat); "
                             "ROLE=PID names the process of a role instead (redis=PID: a Redis of the hall's own)")
    parser.add_argument("--pg-database", metavar="NAME",
                        help="with --url: PostgreSQL's CPU is that of the backends serving NAME only")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()
    if args.url and (not args.tokens or args.db or args.redis or args.workers != 1):
        parser.error("--url takes --tokens FILE, and none of --db, --redis, --workers (the hall has its own)")
    if min(args.tables, args.workers) < 1 or args.viewers < 0 or args.rate <= 0 or not 0 < args.seconds <= 600 \
            or not 0 <= args.ramp <= 600:
        parser.error("--tables and --workers at least 1, --viewers at least 0, --rate above 0, --seconds 0..600, "
                     "--ramp 0..600")
    loopback_only(args.db, "--db")
    loopback_only(args.redis, "--redis")
    if args.connections is None:
        args.connections = max(1000, args.viewers + args.tables + 50)
    count = int((args.ramp + args.seconds) * args.rate)
    fig = Figures()
    if args.url:
        base = args.url.rstrip("/")
        tokens = read_tokens(args.tokens)
        if args.tables > len(tokens):
            parser.error(f"--tables {args.tables}: {args.tokens} has tokens for {len(tokens)}")
        plan = {table: table_events(i, count, table) for i, table in enumerate(list(tokens)[:args.tables])}
        fresh_tables(base, list(plan))
        procs = roots(pids_by_role(args.pid), args.pg_database)  # no server named: no CPU per event
        wall, views, cpu, bench_cpu_s, loads = measure(args, base, tokens, plan, fig, procs)
        lost = lost_over_api(base, fig)
    else:
        plan = {f"L{i}": table_events(i, count) for i in range(args.tables)}
        with tempfile.TemporaryDirectory(prefix="guandan-load-") as tmp:
            data = Path(tmp)
            with server(args, data) as (base, proc, db):
                store_url = db or f"sqlite:///{data / 'store' / 'guandan.sqlite3'}"
                with open_store(store_url, secret=TEST_SECRET, migrate=False) as store:
                    tokens = {table: create_token(store, table) for table in plan}
                wall, views, cpu, bench_cpu_s, loads = measure(args, base, tokens, plan, fig, roots({"server": [proc.pid]}))
                lost = lost_events(store_url, fig)
    report(args, fig, wall, views, cpu, bench_cpu_s, loads, lost)


def measure(args, base: str, tokens: dict[str, str], plan: dict[str, list[dict]], fig: Figures,
            procs: Roots) -> tuple[float, dict, dict[str, float], float, list[float]]:
    """Run the viewers and agents against ``base``; (wall seconds, push figures, CPU seconds
    of each of ``procs``' roles, the bench's own CPU seconds, the load average before and after)."""
    bench_proc = psutil.Process()
    before, bench_before = cpu_seconds(procs), bench_proc.cpu_times()
    load_before = os.getloadavg()
    wall, views = watch(args, base, fig, lambda start: asyncio.run(run(args, base, tokens, plan, fig, start)))
    after, bench_after = cpu_seconds(procs), bench_proc.cpu_times()
    load_after = os.getloadavg()
    bench_cpu_s = (bench_after.user + bench_after.system + views["cpu_s"]) - (bench_before.user + bench_before.system)
    return wall, views, {role: after[role] - before[role] for role in before}, bench_cpu_s, \
        [load_before[0], load_after[0]]


def report(args, fig: Figures, wall: float, views: dict, cpu: dict[str, float], bench_cpu_s: float,
           loads: list[float], lost: int) -> None:
    busy = sum(cpu.values())
    out = {
        "tables": args.tables, "rate": args.rate, "viewers": args.viewers, "seconds": args.seconds, "ramp": args.ramp,
        "db": None if args.url else "postgresql" if args.db else "sqlite", "redis": bool(args.redis),
        "workers": args.workers,
        "url": args.url, "pids": args.pid if args.url else None, "pg_database": args.pg_database,
        "connections": args.connections,
        "sent": fig.sent, "accepted": fig.accepted, "duplicates": fig.duplicates, "rejected": fig.rejected,
        "errors": fig.errors + views["viewer_errors"], "lost": lost, "push_missed": views["push_missed"],
        "accepted_per_s": round(fig.accepted / wall, 1),
        "ingest_p50_ms": percentile(fig.ingest_ms, 50), "ingest_p99_ms": percentile(fig.ingest_ms, 99),
        "push_p50_ms": views["push_p50_ms"], "push_p99_ms": views["push_p99_ms"],
        "cpu_pct_of_one_core": {role: round(100 * s / wall, 1) for role, s in cpu.items()},
        "cpu_ms_per_event": round(1000 * busy / fig.accepted, 2) if fig.accepted and "server" in cpu else None,
        "bench_client_cpu_pct": round(100 * bench_cpu_s / wall, 1),
        "loadavg_1m": [round(load, 2) for load in loads],
    }
    hall = args.url or f"{out['db']}{'+redis' if args.redis else ''}, {args.workers} worker(s)"
    print(f"{hall}: {args.tables} tables x "
          f"{args.rate:g} events/s, {args.viewers} viewers, {wall:.0f} s")
    print(f"  accepted {fig.accepted} ({out['accepted_per_s']}/s), errors {out['errors']}, lost {lost}, "
          f"rejected {fig.rejected}, pushes missed {out['push_missed']}")
    print(f"  ingest p50 {out['ingest_p50_ms']} ms, p99 {out['ingest_p99_ms']} ms; "
          f"push p50 {out['push_p50_ms']} ms, p99 {out['push_p99_ms']} ms")
    print(f"  CPU (% of one core): {out['cpu_pct_of_one_core']}, {out['cpu_ms_per_event']} ms per event; "
          f"bench client {out['bench_client_cpu_pct']}%; load average {out['loadavg_1m']}")
    if args.json:
        print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
