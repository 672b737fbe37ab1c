"""``guandan-ref watch``, ``table-sheets`` and ``render-table``: the table camera commands.

Heavy imports (OpenCV, the card reader) happen inside the handlers.
"""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    watch = sub.add_parser(
        "watch",
        help="watch a table camera or video; print play/pass/report observations as they happen",
    )
    source = watch.add_mutually_exclusive_group(required=True)
    source.add_argument("--video", metavar="FILE", help="a video file of the table")
    source.add_argument("--camera", metavar="N", type=int, help="camera device number")
    watch.add_argument("--calibration", metavar="FILE", help="table layout (TOML; default: 90 x 90 cm table)")
    watch.add_argument("--json", action="store_true", help="JSON Lines (one observation per line)")
    watch.add_argument("--stable", metavar="SECONDS", type=float, default=0.35, help="how long an area must stay still to count (default 0.35)")
    watch.add_argument("--crops", metavar="DIR", help="save each observation's area crop here as evidence")
    watch.add_argument("--deck", metavar="NAME", help="read with the classifier adapted to this enrolled deck ('deck enroll')")
    watch.add_argument("--data", metavar="DIR", help="data directory of enrolled decks (default $GUANDAN_DATA or ~/.cache/guandan-referee)")
    watch.set_defaults(handler=run_watch)

    sheets = sub.add_parser("table-sheets", help="write printable corner markers and tokens (PDF + PNG)")
    sheets.add_argument("--out", metavar="DIR", required=True)
    sheets.add_argument("--calibration", metavar="FILE", help="table layout (TOML) giving the marker size")
    sheets.add_argument("--dpi", type=int, default=300)
    sheets.set_defaults(handler=run_sheets)

    render = sub.add_parser("render-table", help="render the demo table clip (with ground truth) to a video file")
    render.add_argument("--out", metavar="FILE", required=True, help="video file to write (.mp4 or .avi)")
    render.add_argument("--truth", metavar="FILE", help="write the expected observations here (JSON Lines)")
    render.add_argument("--size", default="1920x1080", help="frame size WIDTHxHEIGHT (default 1920x1080)")
    render.add_argument("--fps", type=float, default=15.0)
    render.set_defaults(handler=run_render)


def frame_size(text: str) -> tuple[int, int]:
    """``1920x1080`` -> (1920, 1080): a camera frame size, for ``--size`` and the demo's ``--frame``."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a frame size is WIDTHxHEIGHT, like 1920x1080, got {text!r}") from None
    if not (320 <= w <= 7680 and 240 <= h <= 4320):
        raise argparse.ArgumentTypeError(f"frame size {text} is outside 320x240 .. 7680x4320")
    return w, h


def run_watch(args: argparse.Namespace) -> int:
    from .capture import camera_frames, video_frames
    from .layout import load_layout
    from .watcher import TableWatcher, WatchSettings, default_reader

    layout = load_layout(args.calibration)
    if args.stable < 0:
        raise ValueError(f"--stable must be >= 0 seconds, got {args.stable}")
    watcher = TableWatcher(default_reader(args.deck, args.data), layout, WatchSettings(stable_s=args.stable), crops_dir=args.crops)
    frames = video_frames(args.video) if args.video is not None else camera_frames(args.camera)
    try:
        for index, t, frame in frames:
            for event in watcher.process(frame, t, index):
                print(json.dumps(event, ensure_ascii=False) if args.json else _describe(event), flush=True)
    except KeyboardInterrupt:
        pass
    return 0


def _describe(event: dict) -> str:
    if event["type"] == "calibration":
        return f"{event['t']:8.2f}s  calibration {event['status']}"
    cards = " " + " ".join(event["cards"]) if "cards" in event else ""
    return f"{event['t']:8.2f}s  {event['seat']} {event['type']}{cards}  (confidence {event['confidence']:.2f})"


def run_sheets(args: argparse.Namespace) -> int:
    from .layout import load_layout
    from .sheets import write_sheets

    if not 72 <= args.dpi <= 1200:
        raise ValueError(f"--dpi must be between 72 and 1200, got {args.dpi}")
    for path in write_sheets(args.out, load_layout(args.calibration), args.dpi):
        print(path)
    return 0


def run_render(args: argparse.Namespace) -> int:
    import cv2

    from recognizer.training.table_video import TableRenderer, demo_script

    try:
        width, height = frame_size(args.size)
    except argparse.ArgumentTypeError as e:
        raise ValueError(f"--size must be WIDTHxHEIGHT: {e}") from None
    if args.fps <= 0:
        raise ValueError(f"--fps {args.fps} must be positive")
    script = demo_script()
    fourcc = cv2.VideoWriter_fourcc(*("mp4v" if args.out.lower().endswith(".mp4") else "MJPG"))
    writer = cv2.VideoWriter(args.out, fourcc, args.fps, (width, height))
    if not writer.isOpened():
        raise OSError(f"cannot write video {args.out!r}")
    try:
        for frame in TableRenderer(script, size=(width, height), fps=args.fps).frames():
            writer.write(frame.image)
    finally:
        writer.release()
    if args.truth:
        with open(args.truth, "w", encoding="utf-8") as out:
            for event in script.expected():
                out.write(json.dumps(event) + "\n")
    print(args.out, file=sys.stderr)
    return 0
