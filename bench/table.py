"""Table pipeline cost: per-frame time for 1080p frames with four play areas on one core.

Runs the rendered demo clip (hands, lighting, flicker, a camera bump, face-down cards)
through :class:`recognizer.table.watcher.TableWatcher`, timing only ``process`` with
OpenCV held to one thread. The card reader answers from ground truth, so this measures
the table side (markers, calibration, warps, change detection, segmentation); when the card
reader is installed its cost per area crop is measured too and added per read.
Target: >= 15 frames per second. Run: ``.venv/bin/python bench/table.py``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import _standalone  # noqa: F401,E402  (first of ours: keeps bench/ off the import path)
import cv2  # noqa: E402
import numpy as np  # noqa: E402

from recognizer.training.table_video import TableRenderer, TruthReaders, demo_script  # noqa: E402
from recognizer.table.watcher import TableWatcher  # noqa: E402


def reader_ms(crops: list[np.ndarray], models: str | None) -> float | None:
    """Milliseconds per area crop of the trained card reader, or None where it is not installed."""
    try:
        from recognizer.table.watcher import default_reader

        if models is None:
            reader = default_reader()
        else:
            from recognizer.reader import CardReader

            reader = CardReader(Path(models))
    except (ValueError, OSError):  # no reader module yet, or its models not trained
        return None
    reader.read(crops[0])
    start = time.perf_counter()
    for crop in crops:
        reader.read(crop)
    return (time.perf_counter() - start) * 1000 / len(crops)


class Keeping:
    """Wraps a reader, keeping every 10th crop it is shown (to time the real reader on)."""

    def __init__(self, reader, crops: list[np.ndarray]) -> None:
        self.reader, self.crops, self.calls = reader, crops, 0

    def read(self, image: np.ndarray):
        self.calls += 1
        if self.calls % 10 == 1:
            self.crops.append(image)
        return self.reader.read(image)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=24.5, help="length of the demo clip to run")
    parser.add_argument("--fps", type=float, default=15.0)
    parser.add_argument("--models", metavar="DIR", help="card reader models (default: recognizer/models)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    script = demo_script()
    truth = TruthReaders()
    crops: list[np.ndarray] = []
    watcher = TableWatcher({seat: Keeping(r, crops) for seat, r in truth.by_seat().items()})
    times, reads, events = [], [], []
    for frame in TableRenderer(script, size=(1920, 1080), fps=args.fps).frames():
        if frame.t >= args.seconds:
            break
        truth.frame = frame
        before = watcher.reads
        start = time.perf_counter()
        events += watcher.process(frame.image, frame.t, frame.index)
        times.append(time.perf_counter() - start)
        reads.append(watcher.reads - before)
    ms = np.array(times) * 1000
    print(f"frames: {len(ms)} at 1920x1080, four areas, one thread")
    print(f"table pipeline: mean {ms.mean():.2f} ms, p95 {np.percentile(ms, 95):.2f} ms, max {ms.max():.2f} ms "
          f"-> {1000 / ms.mean():.0f} fps (target >= 15)")
    print(f"area reads: {sum(reads)} of {4 * len(ms)} area-frames ({100 * sum(reads) / (4 * len(ms)):.1f} %), "
          f"at most {max(reads)} in one frame")
    expected = [e for e in script.expected() if e["t"] < args.seconds - 1.5]
    got = {(e["type"], e.get("seat"), e.get("status"), tuple(e.get("cards", ()))) for e in events}
    hits = sum((e["type"], e.get("seat"), e.get("status"), tuple(e.get("cards", ()))) in got for e in expected)
    print(f"observations: {len(events)} emitted, {hits}/{len(expected)} expected ones found")
    per_read = reader_ms(crops, args.models) if crops else None
    if per_read is None:
        print("card reader: not available (recognizer.reader or its models); figures exclude reading")
    else:
        total = ms + np.array(reads) * per_read
        print(f"card reader: {per_read:.1f} ms per area crop; with reads: mean {total.mean():.2f} ms "
              f"-> {1000 / total.mean():.0f} fps; worst frame (4 reads) {ms.mean() + 4 * per_read:.1f} ms "
              f"-> {1000 / (ms.mean() + 4 * per_read):.0f} fps")


if __name__ == "__main__":
    main()
