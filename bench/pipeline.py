"""The live pipeline: frames per second per table, latency to the store and the stream, misreads.

Three measurements, each on a simulated table (:mod:`web.app.agent.simtable`, seeded):

* ``fps``: one table's agent on one core (OpenCV and onnxruntime held to one thread) at
  the demo's 1920x1080 (``--frame``) with the trained card reader, and where the time
  goes: capture (decoding the camera's JPEG frames), the table markers, the rest of the table side (calibration,
  rectifying the areas, change detection, segmentation, stamping, the outbox), the index
  detector and the index classifier;
* ``latency``: the demo's path with the dashboard server in this process: from the wall
  time the first frame showing a new play was handed to the agent to the server's answer
  that stored its event, and to the event's arrival on ``GET /api/stream`` (SSE) read by a
  client thread; p50 and p95;
* ``misreads``: misread plays per 1,000 over the demo's seeded session (its tables, seeds
  and deals), without and with the simulated RFID reader (the same frames; with RFID a
  disagreement becomes a conflict for a human).

With ``--deck-photos DIR`` every part draws the cards from photographs of a real deck
(``guandan-ref demo --deck-photos``: straightened faces, lit and blurred as the camera
would show them), so the figures are measured on photographic cards, not on the
renderer's own design.

Run: ``.venv/bin/python bench/pipeline.py [--part fps|latency|misreads|all] [--deck-photos DIR]``;
``--part misreads --models A --models B [--rfid without]`` compares two card readers' models
on the same tables.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import _standalone  # noqa: F401,E402  (first of ours: keeps bench/ off the import path)
import cv2  # noqa: E402
import numpy as np  # noqa: E402

from recognizer.training.table_video import TableRenderer  # noqa: E402
from recognizer.table.watcher import TableWatcher  # noqa: E402
from web.app.agent.agent import TableAgent  # noqa: E402
from web.app.agent.demo import FRAME_SIZE as DEMO_FRAME, DemoOptions, card_design  # noqa: E402
from recognizer.table.cli import frame_size  # noqa: E402
from web.app.agent.outbox import Outbox  # noqa: E402
from web.app.agent.simtable import plan_table  # noqa: E402


class Clock:
    """Seconds spent per named stage."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)

    def wrap(self, name: str, fn):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[name] += time.perf_counter() - start

        return timed


class TimedSession:
    """An onnxruntime session whose ``run`` is timed."""

    def __init__(self, session, clock: Clock, name: str) -> None:
        self._session = session
        self.run = clock.wrap(name, session.run)

    def get_inputs(self):
        return self._session.get_inputs()


def measure_fps(seconds: float, fps: float, seed: int, base: DemoOptions) -> None:
    from recognizer.decks import deck_classifier
    from recognizer.reader import CardReader

    cv2.setNumThreads(1)
    plan = plan_table(seed, 1, "T1", brisk=0.5)
    frames = []
    for frame in TableRenderer(plan.script, size=base.size, fps=fps, design=card_design(base)).frames():
        if frame.t >= seconds:
            break
        ok, jpeg = cv2.imencode(".jpg", frame.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        frames.append((frame.index, frame.t, jpeg))
    clock = Clock()
    reader = CardReader(classifier=deck_classifier(None, base.deck) if base.deck else None)
    reader.detector.detect = clock.wrap("index detector", reader.detector.detect)
    reader.classifier = TimedSession(reader.classifier, clock, "index classifier")
    with tempfile.TemporaryDirectory() as tmp:
        watcher = TableWatcher(reader, crops_dir=Path(tmp) / "crops")
        watcher.detector.detect = clock.wrap("table markers", watcher.detector.detect)
        agent = TableAgent("T1", Outbox(Path(tmp) / "o.sqlite"), watcher)
        manual = list(plan.manual)
        start = time.perf_counter()
        for index, t, jpeg in frames:
            t0 = time.perf_counter()
            image = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
            t1 = time.perf_counter()
            clock.spent["capture (JPEG decode)"] += t1 - t0
            while manual and manual[0]["t"] <= t:
                agent.manual(manual.pop(0))
            agent.frame(index, t, image)
            clock.spent["agent.frame"] += time.perf_counter() - t1
        total = time.perf_counter() - start
    n = len(frames)
    inner = sum(clock.spent[k] for k in ("table markers", "index detector", "index classifier"))
    clock.spent["calibration, rectify, change detection, segmentation, outbox"] = clock.spent.pop("agent.frame") - inner
    plays = sum(1 for e in plan.seen if e["t"] < seconds and e["type"] == "play")
    print(f"fps: {n} frames of {base.size[0]}x{base.size[1]} at {fps:g} fps ({seconds:g} s of table time, {plays} plays), one thread")
    print(f"  {n / total:.1f} frames/s per table on one core ({1000 * total / n:.1f} ms per frame; "
          f"{watcher.reads} area reads)")
    for name, spent in sorted(clock.spent.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<62} {1000 * spent / n:7.2f} ms/frame  {100 * spent / total:5.1f} %")


class StreamClient(threading.Thread):
    """A browser-like SSE client of ``GET /api/stream``: when each table's public seq arrived."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.arrivals: list[tuple[str, int, float]] = []  # (table, seq, time.monotonic())
        self.connected = threading.Event()

    def run(self) -> None:
        import requests

        with requests.get(self.url + "/api/stream", stream=True, timeout=(5, 3600)) as response:
            self.connected.set()
            for line in response.iter_lines(decode_unicode=True):
                if line and line.startswith("data:"):
                    tile = json.loads(line[5:])
                    self.arrivals.append((tile["table"], int(tile["seq"]), time.monotonic()))

    def first_at(self, table: str, seq: int) -> float | None:
        return next((at for t, s, at in self.arrivals if t == table and s >= seq), None)


def percentiles(values: list[float]) -> str:
    if not values:
        return "no samples"
    ms = np.array(values) * 1000
    return f"p50 {np.percentile(ms, 50):.0f} ms, p95 {np.percentile(ms, 95):.0f} ms (n={len(ms)})"


def measure_latency(speed: float, deals: int, seed: int, base: DemoOptions) -> None:
    from web.app.agent.demo import DemoServer, make_table

    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        server = DemoServer(Path(tmp) / "data", 0)
        try:
            options = replace(base, tables=1, deals=deals, speed=speed)
            table = make_table("T1", seed, options, server.url, server.token("T1"), Path(tmp) / "agents")
            client = StreamClient(server.url)
            client.start()
            client.connected.wait(10)
            table.start(threading.Event())
            table.join()
            table.sender.stop(drain_s=30.0)
            time.sleep(1.0)  # the last pushes
        finally:
            server.stop()
    fed_t = np.array([t for t, _ in table.fed])
    fed_wall = [w for _, w in table.fed]
    truth = [e for e in table.plan.seen if e["type"] == "play"]
    stored, pushed = [], []
    for answer in table.sender.answers:
        event = answer.event
        if event["type"] != "play" or answer.result.get("status") != "accepted":
            continue
        true = next((e for e in truth if e["seat"] == event["seat"] and abs(e["t"] - event["t"]) < 0.5), None)
        if true is None:
            continue
        first = int(np.searchsorted(fed_t, true["t"] - 1e-6))  # the first frame showing the play
        if first >= len(fed_wall):
            continue
        stored.append(answer.at - fed_wall[first])
        at = client.first_at("T1", int(answer.result["seq"]))
        if at is not None:
            pushed.append(at - fed_wall[first])
    frames = len(table.fed)
    wall = table.fed[-1][1] - table.fed[0][1] if frames > 1 else 0.0
    print(f"latency: one table at {speed:g}x ({frames} frames of {options.size[0]}x{options.size[1]} at {options.fps:g} fps "
          f"in {wall:.0f} s: {table.fed[-1][0] / wall if wall else 0:.2f} table-seconds per second), first frame showing a play ->")
    print(f"  event stored (server's answer):  {percentiles(stored)}")
    print(f"  SSE push received by a client:   {percentiles(pushed)}")
    stable = table.agent.watcher.settings.stable_s
    print(f"  (includes the watcher's stable_s = {stable:g} s of table time, {1000 * stable / speed:.0f} ms at {speed:g}x, "
          f"rounded up to whole frames)")


def measure_misreads(tables: int, deals: int, seed: int, base: DemoOptions, models: list[Path | None],
                     rfid_runs: tuple[bool, ...] = (False, True)) -> None:
    """The demo's session for ``seed`` (its tables' seeds), one table at a time, as fast as
    the CPU goes; once per models folder (None: the installed models), side by side on the
    same frames, since a few misreads in hundreds of plays is too few to compare runs
    of different days."""
    from recognizer.decks import deck_classifier
    from recognizer.reader import CardReader
    from web.app.agent.demo import DemoServer, make_table
    from web.app.agent.truth import Perception

    logging.disable(logging.WARNING)
    classifier = deck_classifier(None, base.deck) if base.deck else None
    for folder in models:
        reader = CardReader(folder, classifier=classifier)  # one per folder: the tables play one after another
        for rfid in rfid_runs:
            total, errors = Perception(), []
            for n in range(tables):
                with tempfile.TemporaryDirectory() as tmp:
                    server = DemoServer(Path(tmp) / "data", 0)
                    try:
                        options = replace(base, tables=tables, deals=deals, speed=1000.0, rfid_sim=rfid)
                        name = f"T{n + 1}"  # the demo's names: each table is drawn with its own noise
                        table = make_table(name, seed * 1000 + n, options, server.url, server.token(name),
                                           Path(tmp) / "agents", reader)
                        table.start(threading.Event())
                        table.join()
                        table.sender.stop(drain_s=30.0)
                        total.add(table.perception(server.store))
                    finally:
                        server.stop()
                if table.error:
                    errors.append(f"table {n + 1} stopped: {table.error}")
            label = "with --rfid-sim   " if rfid else "without --rfid-sim"
            cards = f"cards photographed ({base.deck_photos})" if base.deck_photos else "cards rendered"
            if base.deck:
                cards += f", read with the enrolled deck {base.deck!r}"
            per_k = 1000 * total.misread / total.plays if total.plays else 0.0
            print(f"{folder or 'installed models'}: misreads {label} ({tables} tables x {deals} deal(s), seed {seed}, "
                  f"{cards}): {per_k:.1f} per 1,000 plays; {total.summary()}{'; ' + '; '.join(errors) if errors else ''}")
            for line in total.details[:10]:
                print(f"    {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("fps", "latency", "misreads", "all"), default="all")
    parser.add_argument("--seconds", type=float, default=40.0, help="table time of the fps run (default 40)")
    parser.add_argument("--fps", type=float, default=15.0, help="camera frame rate of the fps run (default 15)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--speed", type=float, default=2.0, help="time compression of the latency run (the demo's default 2)")
    parser.add_argument("--deals", type=int, default=1, help="deals of the latency and misread runs (default 1)")
    parser.add_argument("--tables", type=int, default=4, help="tables of the misread run, as in the demo (default 4)")
    parser.add_argument("--deck-photos", metavar="DIR", type=Path,
                        help="draw the cards from photographs of a real deck's faces (as guandan-ref demo --deck-photos)")
    parser.add_argument("--deck", metavar="NAME",
                        help="read the cards with an enrolled deck's classifier (as guandan-ref demo --deck)")
    parser.add_argument("--models", metavar="DIR", type=Path, action="append",
                        help="the misread run's card reader models (twice: side by side on the same frames; "
                             "default the installed ones)")
    parser.add_argument("--frame", metavar="WxH", type=frame_size,
                        help="the camera's frame size (default the demo's, "
                             f"{DEMO_FRAME[0]}x{DEMO_FRAME[1]})")
    parser.add_argument("--rfid", choices=("both", "without", "with"), default="both",
                        help="the misread run without the simulated RFID reader, with it, or both (default)")
    args = parser.parse_args()
    base = DemoOptions(deck_photos=args.deck_photos, deck=args.deck, size=args.frame or DEMO_FRAME)
    try:
        base.check()  # an unknown deck or an unusable folder of faces is said before any measurement
        card_design(base)
    except ValueError as exc:
        parser.error(str(exc))
    if args.part in ("fps", "all"):
        measure_fps(args.seconds, args.fps, args.seed, base)
    if args.part in ("latency", "all"):
        measure_latency(args.speed, args.deals, args.seed, base)
    if args.part in ("misreads", "all"):
        rfid_runs = {"both": (False, True), "without": (False,), "with": (True,)}[args.rfid]
        measure_misreads(args.tables, args.deals, args.seed, base, args.models or [None], rfid_runs)


if __name__ == "__main__":
    main()
