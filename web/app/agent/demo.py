"""``guandan-ref demo``: a tournament round on simulated tables, played through the real path.

The demo opens an event of the shipped pair list (:mod:`.demodesk`) and draws round 1
with the tournament service. Each drawn table is a seeded session of four bots
(:mod:`.simtable`) seated as the draw's pairs, drawn as camera frames by the project's
table renderer; the frames go to a :class:`~.agent.TableAgent` with the trained card reader
(and, with RFID, a simulated reader writes the tags on a pseudo terminal whose other end
the agent reads like a serial port, :mod:`.rfidsim`), its outbox and its sender post to the
server's event API over HTTP on 127.0.0.1, and the server's store and referee judge them
and push them to the dashboard. Nothing is handed to the referee any other way: operator
events (session and deal starts, tributes) go through the same agent. A table's round ends
at the event's deal limit with its session result; the pairs sign it, and with
``--rounds`` the next Swiss round is drawn and played.

Who answers the flags console: with ``--referee auto`` a simulated floor referee who knows
the truth (:mod:`.floorref`, its own official), with ``none`` the person trying the demo.
When the tables are done the demo compares what was recorded with the simulator's truth,
prints it, and keeps the dashboard serving until Ctrl-C (``--exit-when-done``: it returns).
"""

from __future__ import annotations

import logging
import re
import secrets
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TextIO

from hardware.table import RfidTable
from recognizer.training.synth import Design
from recognizer.training.synth.photos import PhotoDeck
from recognizer.training.table_video import TableRenderer, TruthReaders
from recognizer.decks import deck_classifier
from recognizer.table.watcher import AreaReader, TableWatcher, WatchSettings, default_reader
from referee.rulesets import Ruleset
from web.tournament import service

from .agent import TableAgent
from .demodesk import PAIRS, Desk
from .floorref import FloorReferee, TableView
from .loop import ReaderWatch
from .outbox import Outbox
from .poster import Poster, ServerRefused, ServerUnavailable
from .rfidsim import SimulatedReader
from .sender import Sender
from .simtable import TablePlan, plan_table
from .sources import paced
from .status import health
from .truth import Perception, compare, deal_results, session_results, settled_reads, truth_records

log = logging.getLogger("web.app.agent")

DEMO_LOGIN = "demo"
AUTO_REFEREE = "auto-referee"
"""The simulated floor referee's name: its answers on the console and in a table's history."""
REFEREES = ("none", "auto")
FRAME_SIZE = (1920, 1080)
"""The camera's frame: a 1080p camera over the table, as a club or a hall would mount one.
At 1280 x 720 a card is about 75 px tall and a black suit's sign a blob of a few pixels, a
spade and a club alike to the eye and to the reader: 7 of 558 plays misread over the demo's
seeds, all a spade read as a club; at 1080p none (``bench/pipeline.py --part misreads
--tables 11 --frame WxH``, recognizer/MODEL.md). Rendering a frame costs 6 ms more there;
reading it, the same (the play areas are read at the layout's ``read_px_per_mm`` either way)."""
FPS = 8.0
SPEED = 2.0
"""Table seconds per wall second by default: a deal takes three to six minutes of table
time (the hands' trips to the play areas, the slow plays the bots make on purpose), so a
newcomer sees the first deal results after about two minutes."""


@dataclass(frozen=True)
class DemoOptions:
    tables: int = 4
    deals: int = 1
    """Deals a round: the event's deal limit (W1; one more decides at equal levels)."""
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
    rounds: int = 1
    referee: str = "none"
    """``auto``: the simulated floor referee answers the console; ``none``: a person does."""
    exit_when_done: bool = False
    pairs: Path = PAIRS
    deck_photos: Path | None = None
    """A folder of straightened photographs of a real deck's faces (:mod:`recognizer.training.synth.photos`):
    the tables' cards are drawn from them instead of the renderer's procedural design."""
    deck: str | None = None
    """An enrolled deck (``guandan-ref deck enroll``, under ``$GUANDAN_DATA``): the tables read
    their cards with its adapted classifier, as a table-side agent with ``--deck`` does."""

    def check(self) -> None:
        if not 1 <= self.tables <= 16:
            raise ValueError(f"--tables must be between 1 and 16, got {self.tables}")
        if not 1 <= self.deals <= 20:
            raise ValueError(f"--deals must be between 1 and 20, got {self.deals}")
        if not 1 <= self.rounds <= max(1, 2 * self.tables - 1):
            raise ValueError(f"--rounds must be between 1 and {2 * self.tables - 1} for {self.tables} table(s) "
                             f"({2 * self.tables} pairs, who meet each other once), got {self.rounds}")
        if not 0 < self.speed <= 100:
            raise ValueError(f"--speed must be in (0, 100], got {self.speed}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"--port must be a TCP port (0: any free one), got {self.port}")
        if self.referee not in REFEREES:
            raise ValueError(f"--referee must be one of {', '.join(REFEREES)}, got {self.referee!r}")
        if self.deck is not None:
            deck_classifier(None, self.deck)  # an unknown deck is refused here, before any table starts


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

    def publish(self, table: str) -> None:
        """Tell the open pages that ``table`` moved (what the app does after its own writes)."""
        from web.app import context

        with self.app.app_context():
            context.broker().publish(table)

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
    truth_readers: TruthReaders | None = None
    """Card readers that answer with the renderer's truth (tests of what lies past the card
    reader): each frame is handed to them before the agent sees it."""
    design: Design | None = None
    """The cards' faces (None: the renderer's own design)."""
    _thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def number(self) -> int:
        """The table's number (the digits its name ends with): the renderer's seed, so each
        table is drawn with its own noise."""
        found = re.search(r"(\d+)$", self.plan.table)
        return int(found.group(1)) if found else 0

    def play(self, stop: threading.Event) -> None:
        manual = list(self.plan.manual)
        renderer = TableRenderer(self.plan.script, size=self.options.size, fps=self.options.fps, design=self.design,
                                 seed=self.number)
        t = 0.0
        try:
            watch = None
            if self.reader is not None:
                self.reader.start()
                watch = ReaderWatch(self.agent, self.reader.link)
            for index, t, frame in paced(((f.index, f.t, f) for f in renderer.frames()), self.options.speed):
                if stop.is_set():
                    return
                if self.truth_readers is not None:
                    self.truth_readers.frame = frame
                while manual and manual[0]["t"] <= t:
                    self.agent.manual(manual.pop(0))
                if watch is not None:
                    self.reader.show(t)
                    watch.drain(t)
                self.fed.append((t, time.monotonic()))
                self.agent.frame(index, t, frame.image)
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
        records = store.records(self.plan.table) + settled_reads(store.events(self.plan.table), self.plan.ruleset)
        until = self.fed[-1][0] - 2.0 if self.fed and not self.finished else float("inf")
        truth = truth_records([e for e in self.plan.truth if e["t"] <= until], self.plan.ruleset)
        seen = [e for e in self.plan.seen if e["t"] <= until]
        answers = [a for a in self.sender.answers if a.event["t"] <= until]
        return compare(seen, answers, records, deal_results(truth), corrected(store, self.plan.table),
                       session_results(truth))

    def view(self) -> TableView:
        """What the floor referee knows of this table: its truth, and the table time so far."""
        return TableView(self.plan.table, self.plan.truth, self.plan.breaches, self.sender.answers,
                         lambda: self.fed[-1][0] if self.fed else 0.0)


def corrected(store, table: str) -> set[str]:
    """The ids of the events a referee's ``correction`` replaced at ``table``: a corrected
    misread was caught, though the flag it raised is gone from the re-derived record."""
    return {e["of"] for e in store.events(table) if e["type"] == "correction"}


@lru_cache(maxsize=4)
def photo_deck(folder: Path) -> PhotoDeck:
    """The deck photographed in ``folder``, read once for all the tables of a run."""
    return PhotoDeck.from_folder(folder)


def card_design(options: DemoOptions) -> Design | None:
    """The faces the tables' cards are drawn with: ``options.deck_photos``' deck, or the renderer's own."""
    return photo_deck(Path(options.deck_photos).resolve()) if options.deck_photos is not None else None


def make_table(table: str, seed: int, options: DemoOptions, server_url: str, token: str, outboxes: Path,
               reader: AreaReader | TruthReaders | None = None, teams: dict[str, str] | None = None,
               ruleset: Ruleset | None = None) -> SimulatedTable:
    """A simulated table wired to the server: plan, watcher with the card reader (``reader``:
    another one), outbox, sender. With ``ruleset`` (a tournament table's) the session is
    played to the end of its round (W1), else ``options.deals`` deals of it."""
    plan = plan_table(seed, None if ruleset is not None else options.deals, table, options.breaches,
                      rfid=options.rfid_sim, brisk=options.brisk, teams=teams, ruleset=ruleset)
    truth_readers = reader if isinstance(reader, TruthReaders) else None
    watcher = TableWatcher(truth_readers.by_seat() if truth_readers else reader or default_reader(options.deck),
                           settings=WatchSettings(), crops_dir=outboxes / f"{table}-crops")
    outbox = Outbox(outboxes / f"{table}.sqlite", run=f"demo{seed}")
    sender = Sender(outbox, Poster(server_url, table, token))
    rfid = RfidTable(plan.registry) if plan.registry is not None else None
    agent = TableAgent(table, outbox, watcher, rfid=rfid, sender=sender)
    sender.health = lambda: health(agent)
    simulated = SimulatedReader(plan.reads) if rfid is not None else None
    return SimulatedTable(plan, agent, sender, options, reader=simulated, truth_readers=truth_readers,
                          design=card_design(options))


def progress(tables: list[SimulatedTable]) -> str:
    parts = []
    for t in tables:
        depth = t.agent.outbox.depth()
        state = "done" if t.done else f"{t.agent.status.fps:4.1f} fps"
        net = "" if t.sender.reachable is not False else " server?"
        parts.append(f"{t.plan.table} {state} t={t.agent.table_time:5.0f}s out={depth}{net}")
    return " | ".join(parts)


class Demo:
    """One run of the demo: the server, the event's desk, every round's tables."""

    def __init__(self, options: DemoOptions, server: DemoServer, out: TextIO,
                 readers: Callable[[], AreaReader | TruthReaders] | None = None) -> None:
        self.options, self.server, self.out, self.readers = options, server, out, readers
        self.store = server.store
        self.desk: Desk | None = None
        self.tables: list[SimulatedTable] = []
        """Every table played, round after round."""
        self.answered: Counter = Counter()
        """The simulated floor referee's answers appended, by event type, every round's."""
        self.refused: list[str] = []
        """Its answers the store refused, with the reason."""
        self._posted: dict[str, dict] = {}

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def open(self) -> None:
        """Logins, and the event with its pairs."""
        password = self.server.login(DEMO_LOGIN)
        self.say(f"dashboard: {self.server.url}   login: {DEMO_LOGIN} / {password}")
        if self.options.referee == "auto":
            self.server.login(AUTO_REFEREE)
        o = self.options
        self.desk = Desk.open(self.store, o.tables, o.deals, o.rounds, o.seed, o.pairs)
        answers = (f"the simulated floor referee ({AUTO_REFEREE}) answers the flags console" if o.referee == "auto"
                   else "the flags console waits for you (/flags/, the login above)")
        self.say(f"event {self.desk.event!r}: {2 * o.tables} pairs of {o.pairs.name}, {o.rounds} round(s) of "
                 f"{o.deals} deal(s); {answers}")
        if o.deck_photos is not None:
            self.say(card_design(o).describe())
        if o.deck is not None:
            self.say(f"cards read with the enrolled deck {o.deck!r} ({deck_classifier(None, o.deck)})")

    def play(self, stop: threading.Event) -> None:
        """Every round: drawn, played, its results signed; returns early when a round cannot
        be drawn (results still missing, and the demo is not to wait for them)."""
        for round_no in range(1, self.options.rounds + 1):
            if round_no > 1 and not self._round_closed(round_no - 1, stop):
                return
            if stop.is_set():
                return
            self._play_round(round_no, stop)
        self._round_closed(self.options.rounds, stop, wait=False)

    def _play_round(self, round_no: int, stop: threading.Event) -> None:
        o, desk = self.options, self.desk
        matches = [m for m in desk.draw() if m.ew is not None]
        service.start_round(self.store, desk.event, round_no, time.time())
        ruleset = desk.ruleset
        tables = []
        for n, m in enumerate(matches):
            seed = o.seed * 1000 + 100 * (round_no - 1) + n
            table = make_table(m.table_id, seed, o, self.server.url, self.server.token(m.table_id),
                               o.data / "agents", self.readers() if self.readers else None, desk.teams(m), ruleset)
            table.sender.health = lambda table=table: table.health(self.store)
            tables.append(table)
        self.tables += tables
        first = min(t.plan.first_deal_end for t in tables) / o.speed
        self.say(f"round {round_no}: {len(tables)} table(s), {', '.join(t.plan.table for t in tables)}, {o.speed:g}x; "
                 f"the first deal result after about {first:.0f} s (if the CPU keeps up); Ctrl-C stops")
        referee = FloorReferee(self.store, [t.view() for t in tables], AUTO_REFEREE, notify=self.server.publish) \
            if o.referee == "auto" else None
        answering = threading.Event()
        watcher = threading.Thread(target=referee.run, args=(answering,), name="floor-referee", daemon=True) \
            if referee else None
        for table in tables:
            table.start(stop)
        if watcher is not None:
            watcher.start()
        try:
            while not all(t.done for t in tables):
                time.sleep(2.0)
                print("\r" + progress(tables)[:200], end="", file=self.out, flush=True)
            print(file=self.out)
        except KeyboardInterrupt:
            stop.set()  # the tables stop at their next frame
            print("\nstopping...", file=self.out, flush=True)
            raise
        finally:
            for table in tables:
                table.join(timeout=30)
                table.sender.stop(drain_s=20.0)
            answering.set()
            if watcher is not None:
                watcher.join()
                referee.finish()
                self.answered.update(referee.given)
                self.refused += referee.refused
        self.refresh_health()

    def _round_closed(self, round_no: int, stop: threading.Event, wait: bool = True) -> bool:
        """Whether every table of ``round_no`` has its result, signed by both pairs; with
        ``wait`` (and not ``--exit-when-done``) it waits for the person at the console."""
        waiting = self.desk.waiting(round_no)
        if waiting and wait and not self.options.exit_when_done:
            self.say(f"round {round_no}: {', '.join(waiting)} wait(s) for the referee: correct the misreads on the "
                     f"flags console ({self.server.url}/flags/); round {round_no + 1} is drawn then")
            while waiting and not stop.wait(2.0):
                self.tick()
                waiting = self.desk.waiting(round_no)
        self.sign(round_no)
        self.say(f"round {round_no} results (28-point score, NS:EW):")
        for line in self.desk.results(round_no):
            self.say(line)
        if waiting and wait:
            self.say(f"round {round_no + 1} is not drawn: {', '.join(waiting)} without a result")
        return not waiting

    def sign(self, round_no: int) -> None:
        """The pairs sign each new result of ``round_no`` (the open pages are told)."""
        if self.desk.sign(round_no):
            for match in service.matches(self.store, self.desk.event, round_no):
                self.server.publish(match.table_id)

    def tick(self) -> None:
        """While the tables are done: a result the console's corrections completed is signed
        by its pairs, and the floor tiles' counts follow the corrections."""
        if self.desk is not None and self.tables:
            self.sign(max(service.matches(self.store, self.desk.event), key=lambda m: m.round).round)
        self.refresh_health()

    def refresh_health(self) -> None:
        """Post each table's health again where its counts against the truth changed (a
        correction on the console after the table's agent stopped): the floor tile keeps them right."""
        for table in self.tables:
            if not table.done:
                continue
            report = table.health(self.store)
            if self._posted.get(table.plan.table) == report:
                continue
            try:
                table.sender.poster.health(report)
            except (ServerRefused, ServerUnavailable) as exc:
                log.warning("health of %s not taken: %s", table.plan.table, exc)
                continue
            self._posted[table.plan.table] = report

    def summary(self) -> Perception:
        total = Perception()
        for table in self.tables:
            seen = table.perception(self.store)
            total.add(seen)
            error = f"  (stopped: {table.error})" if table.error else ""
            self.say(f"{table.plan.table}: {seen.summary()}{error}")
            for line in seen.details[:5]:
                self.say(f"    misread at {line}")
        if len(self.tables) > 1:
            self.say(f"all: {total.summary()}")
        if self.options.referee == "auto":
            given = ", ".join(f"{n} {kind}" for kind, n in sorted(self.answered.items())) or "nothing to answer"
            refused = f"; {len(self.refused)} refused by the store" if self.refused else ""
            self.say(f"{AUTO_REFEREE}: {given}{refused}")
        if total.waiting:
            self.say(f"{total.waiting} caught misread(s) wait on the flags console ({self.server.url}/flags/): "
                     f"correct each there as the referee (login above) and its deal is judged again with the play "
                     f"corrected")
        if self.desk is not None:
            standings = self.desk.standings()
            self.say("standings:" if standings else "standings: no round has every table's result yet")
            for line in standings:
                self.say(line)
        return total


def run(options: DemoOptions, out: TextIO = sys.stdout, stop: threading.Event | None = None,
        readers: Callable[[], AreaReader | TruthReaders] | None = None) -> int:
    """The whole demo; returns the exit code (1: a table stopped on an error). ``stop``: set
    to end it (as Ctrl-C does); ``readers``: makes each table's card reader (default: the
    trained one)."""
    options.check()
    card_design(options)  # a folder of faces that cannot be used stops the demo before its server starts
    stop = stop or threading.Event()
    server = DemoServer(options.data, options.port)
    demo = Demo(options, server, out, readers)
    summarized = False
    try:
        demo.open()
        demo.play(stop)
        demo.summary()
        summarized = True
        if not options.exit_when_done and not stop.is_set():
            demo.say(f"the tables are done; the dashboard stays up until Ctrl-C: {server.url}/ (floor), /flags/ "
                     f"(console), /results, /events/{demo.desk.event} (standings)")
            while not stop.wait(2.0):
                demo.tick()
    except KeyboardInterrupt:
        stop.set()
        if not summarized:
            demo.summary()
    finally:
        server.stop()
    return 1 if any(t.error for t in demo.tables) else 0
