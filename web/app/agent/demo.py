"""``guandan-ref demo``: the dashboard and simulated tables, played through the real path.

Each simulated table is a seeded session of four bots (:mod:`.simtable`) drawn as camera
frames by the project's table renderer; the frames go to a :class:`~.agent.TableAgent`
with the trained card reader (and, with RFID, a simulated reader writes the tags on a
pseudo terminal whose other end the agent reads like a serial port, :mod:`.rfidsim`),
its outbox and its sender post to the server's event API over HTTP on 127.0.0.1, and the
server's store and referee judge them and push them to the dashboard. Nothing is handed to
the referee any other way: operator events (session and deal starts, tributes) go through
the same agent. At the end the demo compares what was recorded with the simulator's truth.
"""

from __future__ import annotations

import logging
import secrets
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hardware.table import RfidTable
from recognizer.training.table_video import TableRenderer
from recognizer.table.watcher import TableWatcher, WatchSettings, default_reader

from .agent import TableAgent
from .loop import ReaderWatch
from .outbox import Outbox
from .poster import Poster
from .rfidsim import SimulatedReader
from .sender import Sender
from .simtable import TablePlan, plan_table
from .sources import paced
from .status import health
from .truth import Perception, compare, deal_results, truth_records

log = logging.getLogger("web.app.agent")

DEMO_LOGIN = "demo"
FRAME_SIZE = (1280, 720)
"""The smallest frame at which the card reader reads the rendered table reliably."""
FPS = 8.0
SPEED = 2.0
"""Table seconds per wall second by default: a deal takes three to six minutes of table
time (the hands' trips to the play areas, the slow plays the bots make on purpose), so a
newcomer sees the first deal results after about two minutes."""


@dataclass(frozen=True)
class DemoOptions:
    tables: int = 4
    deals: int = 1
    speed: float = SPEED
    seed: int = 1
    data: Path = Path("demo-data")
    port: int = 5000
    rfid_sim: bool = False
    fps: float = FPS
    size: tuple[int, int] = FRAME_SIZE
    brisk: float = 0.25
    """The bots' ordinary pauses are quartered (see :mod:`.simtable`; a slow play keeps its
    length)."""
    breaches: float = 0.03

    def check(self) -> None:
        if not 1 <= self.tables <= 16:
            raise ValueError(f"--tables must be between 1 and 16, got {self.tables}")
        if not 1 <= self.deals <= 20:
            raise ValueError(f"--deals must be between 1 and 20, got {self.deals}")
        if not 0 < self.speed <= 100:
            raise ValueError(f"--speed must be in (0, 100], got {self.speed}")
        if not 1 <= self.port <= 65535:
            raise ValueError(f"--port must be a TCP port, got {self.port}")


class DemoServer:
    """The dashboard app on a threaded WSGI server on 127.0.0.1, in this process."""

    def __init__(self, data: Path, port: int, config: dict[str, Any] | None = None) -> None:
        from werkzeug.serving import WSGIRequestHandler, make_server

        class QuietHandler(WSGIRequestHandler):
            def log_request(self, code="-", size="-") -> None:  # agents post several times a second
                pass

        from web.app import create_app
        from web.store import get_store

        data.mkdir(parents=True, exist_ok=True)
        self.app = create_app({"DATA_DIR": str(data), **(config or {})})
        self.store = get_store(self.app)
        try:
            self._server = make_server("127.0.0.1", port, self.app, threaded=True, request_handler=QuietHandler)
        except OSError as exc:
            raise OSError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); try --port") from None
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="demo-server", daemon=True)
        self._thread.start()

    def token(self, table: str) -> str:
        from web.app.accounts import create_token

        return create_token(self.store, table)

    def login(self, name: str, role: str = "referee") -> str:
        from web.app.accounts import add_user

        password = secrets.token_urlsafe(9)
        add_user(self.store, name, role, password)
        return password

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@dataclass
class SimulatedTable:
    """One table: its plan, agent and sender; :meth:`play` feeds the frames."""

    plan: TablePlan
    agent: TableAgent
    sender: Sender
    options: DemoOptions
    done: bool = False
    finished: bool = False
    """Every frame of the plan was played (not stopped early)."""
    frames: int = 0
    reader: SimulatedReader | None = None
    """With RFID: the table's simulated reader on a pty (the agent reads its other end)."""
    error: str | None = None
    fed: list[tuple[float, float]] = field(default_factory=list)
    """(frame time, ``time.monotonic()`` when the frame was handed to the agent)."""
    _thread: threading.Thread | None = field(default=None, repr=False)

    def play(self, stop: threading.Event) -> None:
        manual = list(self.plan.manual)
        renderer = TableRenderer(self.plan.script, size=self.options.size, fps=self.options.fps,
                                 seed=int(self.plan.table.lstrip("T") or 0))
        t = 0.0
        try:
            watch = None
            if self.reader is not None:
                self.reader.start()
                watch = ReaderWatch(self.agent, self.reader.link)
            for index, t, image in paced(((f.index, f.t, f.image) for f in renderer.frames()), self.options.speed):
                if stop.is_set():
                    return
                while manual and manual[0]["t"] <= t:
                    self.agent.manual(manual.pop(0))
                if watch is not None:
                    self.reader.show(t)
                    watch.drain(t)
                self.fed.append((t, time.monotonic()))
                self.agent.frame(index, t, image)
                self.frames += 1
            if watch is not None:  # the last lines the parser has not handed over yet
                time.sleep(0.2)
                watch.drain(t)
            for event in manual:  # what the operator enters after the last frame
                self.agent.manual(event)
            self.agent.advance(t + 5.0)  # let the last lone observations out
            self.finished = True
        except Exception as exc:  # a table that fails must not take the others down
            log.exception("table %s stopped", self.plan.table)
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            if self.reader is not None:
                self.reader.close()
            self.done = True

    def start(self, stop: threading.Event) -> None:
        self.sender.start()
        self._thread = threading.Thread(target=self.play, args=(stop,), name=f"table-{self.plan.table}", daemon=True)
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def health(self, store) -> dict[str, Any]:
        """The agent's health report, with the demo's perception against the truth so far
        (the floor page shows it under the table)."""
        return {**health(self.agent), "perception": self.perception(store).counts()}

    def perception(self, store) -> Perception:
        """This table's truth against what the server recorded (up to the last frame played,
        less the time an observation takes, when the demo was stopped early)."""
        records = store.records(self.plan.table)
        until = self.fed[-1][0] - 2.0 if self.fed and not self.finished else float("inf")
        truth = [e for e in self.plan.truth if e["t"] <= until]
        seen = [e for e in self.plan.seen if e["t"] <= until]
        answers = [a for a in self.sender.answers if a.event["t"] <= until]
        return compare(seen, answers, records, deal_results(truth_records(truth)), corrected(store, self.plan.table))


def corrected(store, table: str) -> set[str]:
    """The ids of the events a referee's ``correction`` replaced at ``table``: a corrected
    misread was caught, though the flag it raised is gone from the re-derived record."""
    return {e["of"] for e in store.events(table) if e["type"] == "correction"}


def make_table(table: str, seed: int, options: DemoOptions, server_url: str, token: str, outboxes: Path,
               reader=None) -> SimulatedTable:
    """A simulated table wired to the server: plan, watcher with the card reader, outbox, sender."""
    plan = plan_table(seed, options.deals, table, options.breaches, rfid=options.rfid_sim, brisk=options.brisk)
    settings = WatchSettings()
    watcher = TableWatcher(reader or default_reader(), settings=settings,
                           crops_dir=outboxes / f"{table}-crops")
    outbox = Outbox(outboxes / f"{table}.sqlite", run=f"demo{seed}")
    sender = Sender(outbox, Poster(server_url, table, token))
    rfid = RfidTable(plan.registry) if plan.registry is not None else None
    agent = TableAgent(table, outbox, watcher, rfid=rfid, sender=sender)
    sender.health = lambda: health(agent)
    reader = SimulatedReader(plan.reads) if rfid is not None else None
    return SimulatedTable(plan, agent, sender, options, reader=reader)


def progress(tables: list[SimulatedTable]) -> str:
    parts = []
    for t in tables:
        depth = t.agent.outbox.depth()
        state = "done" if t.done else f"{t.agent.status.fps:4.1f} fps"
        net = "" if t.sender.reachable is not False else " server?"
        parts.append(f"{t.plan.table} {state} t={t.agent.table_time:5.0f}s out={depth}{net}")
    return " | ".join(parts)


def run(options: DemoOptions, out=sys.stdout) -> int:
    """The whole demo; returns the exit code."""
    options.check()
    server = DemoServer(options.data, options.port)
    stop = threading.Event()
    tables: list[SimulatedTable] = []
    try:
        password = server.login(DEMO_LOGIN)
        print(f"dashboard: {server.url}   login: {DEMO_LOGIN} / {password}", file=out, flush=True)
        outboxes = options.data / "agents"
        for n in range(options.tables):
            name = f"T{n + 1}"
            table = make_table(name, options.seed * 1000 + n, options, server.url, server.token(name), outboxes)
            table.sender.health = lambda table=table: table.health(server.store)
            tables.append(table)
        first = min(t.plan.first_deal_end for t in tables) / options.speed
        print(f"{options.tables} simulated tables, {options.deals} deal(s) each, {options.speed:g}x; the first deal "
              f"result after about {first:.0f} s (if the CPU keeps up); Ctrl-C stops", file=out, flush=True)
        for table in tables:
            table.start(stop)
        while not all(t.done for t in tables):
            time.sleep(2.0)
            print("\r" + progress(tables)[:200], end="", file=out, flush=True)
        print(file=out)
    except KeyboardInterrupt:
        stop.set()
        print("\nstopping...", file=out, flush=True)
    finally:
        for table in tables:
            table.join(timeout=30)
            table.sender.stop(drain_s=20.0)
        summary(tables, server, options.data, out)
        server.stop()
    return 0


def summary(tables: list[SimulatedTable], server: DemoServer, data: Path, out) -> None:
    total = Perception()
    for table in tables:
        seen = table.perception(server.store)
        total.add(seen)
        error = f"  (stopped: {table.error})" if table.error else ""
        print(f"{table.plan.table}: {seen.summary()}{error}", file=out)
        for line in seen.details[:5]:
            print(f"    misread at {line}", file=out)
    if len(tables) > 1:
        print(f"all: {total.summary()}", file=out)
    if total.caught:
        print(f"the misreads the referee caught wait on the flags page (/flags/; now: guandan-ref serve --data "
              f"{data}): correct each there as the referee (login above) and its deal is judged again with the "
              f"play corrected", file=out)
