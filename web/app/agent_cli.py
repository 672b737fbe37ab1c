"""``guandan-ref agent`` (a live table -> the server) and ``guandan-ref demo`` (simulated tables).

Heavy imports (OpenCV, the card reader, requests, the server) happen inside the handlers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from recognizer.table.cli import frame_size


def register(sub: argparse._SubParsersAction) -> None:
    agent = sub.add_parser("agent", help="run a table agent: camera/video/frames (+ RFID) -> events -> the server")
    agent.add_argument("--table", required=True, help="table id, e.g. T7")
    agent.add_argument("--server", required=True, metavar="URL", help="the dashboard server, e.g. http://127.0.0.1:5000")
    agent.add_argument("--token", required=True, help="the table's token (guandan-ref token create T7)")
    source = agent.add_mutually_exclusive_group(required=True)
    source.add_argument("--camera", metavar="N", type=int, help="camera device number")
    source.add_argument("--video", metavar="FILE", help="a video file, played at its own rate")
    source.add_argument("--frames", metavar="DIR", help="a folder of still frames (name order), played at --fps")
    agent.add_argument("--fps", type=float, default=15.0, help="frame rate of --frames (default 15)")
    agent.add_argument("--speed", type=float, default=1.0, help="play --video/--frames this many times faster (default 1)")
    agent.add_argument("--rfid", metavar="PORT", help="RFID reader port (serial device or pyserial URL)")
    agent.add_argument("--protocol", help="RFID reader protocol (with --rfid)")
    agent.add_argument("--registry", metavar="FILE", type=Path, help="the table deck's tag registry (with --rfid)")
    agent.add_argument("--layout", metavar="FILE", help="table layout (TOML; default: 90 x 90 cm table)")
    agent.add_argument("--operator", metavar="FILE",
                       help="operator events (session_start, deal_start, tribute...) as JSON Lines; '-' = stdin")
    agent.add_argument("--outbox", metavar="DIR", default="agent-outbox", help="where unsent events wait (default ./agent-outbox)")
    agent.add_argument("--stable", metavar="SECONDS", type=float, default=0.35, help="how long an area must stay still to count (default 0.35)")
    agent.set_defaults(handler=run_agent)

    demo = sub.add_parser("demo", help="the dashboard and simulated tables played through the real agent path")
    demo.add_argument("--tables", type=int, default=4, help="simulated tables (default 4), 2 pairs each")
    demo.add_argument("--deals", type=int, default=1,
                      help="deals a round (default 1): the event's deal limit; one more decides at equal levels")
    demo.add_argument("--rounds", type=int, default=1, help="rounds played (default 1); those after the first are drawn Swiss")
    demo.add_argument("--referee", choices=("none", "auto"), default="none",
                      help="who answers the flags console: none (you, default) or auto (a simulated floor referee "
                           "who knows the truth)")
    demo.add_argument("--exit-when-done", action="store_true",
                      help="exit once the tables are done (default: the dashboard stays up until Ctrl-C)")
    demo.add_argument("--pairs", metavar="FILE", type=Path,
                      help="pair list (CSV or .xlsx; default: the shipped examples/demo-pairs.csv)")
    demo.add_argument("--speed", type=float, default=2.0,
                      help="time compression: table seconds per wall second (default 2; the CPU may hold it lower)")
    demo.add_argument("--seed", type=int, default=1, help="seed of the simulated sessions (default 1)")
    demo.add_argument("--data", metavar="DIR", type=Path,
                      help="data directory, new or empty (default: a new ./demo-data/run-DATE-TIME)")
    demo.add_argument("--port", type=int, default=5000, help="server port on 127.0.0.1 (default 5000)")
    demo.add_argument("--rfid-sim", action="store_true", help="a simulated RFID reader at every table")
    demo.add_argument("--deck-photos", metavar="DIR", type=Path,
                      help="draw the cards from straightened photographs of a real deck's faces, one per face named "
                           "by it (7H.jpg, deck_TS.jpg; jokers optional: a packaged design's otherwise)")
    demo.add_argument("--deck", metavar="NAME",
                      help="read the cards with an enrolled deck's classifier (guandan-ref deck enroll; $GUANDAN_DATA)")
    demo.add_argument("--frame", metavar="WxH", type=frame_size,
                      help="the simulated camera's frame size (default 1920x1080; at 1280x720 a black suit's "
                           "sign is a few pixels and spades are read as clubs)")
    demo.set_defaults(handler=run_demo)


def run_agent(args: argparse.Namespace) -> int:
    from hardware.protocols import PROTOCOLS
    from recognizer.table.layout import load_layout
    from recognizer.table.watcher import TableWatcher, WatchSettings, default_reader

    from .agent.agent import TableAgent
    from .agent.loop import OperatorInput, ReaderWatch, run
    from .agent.outbox import Outbox
    from .agent.poster import Poster
    from .agent.sender import Sender
    from .agent.sources import camera_frames, folder_frames, paced, video_frames
    from .agent.status import StatusLine, health

    if args.stable < 0:
        raise ValueError(f"--stable must be >= 0 seconds, got {args.stable}")
    if args.rfid and (not args.protocol or not args.registry):
        raise ValueError("--rfid needs --protocol and --registry")
    if args.protocol and args.protocol not in PROTOCOLS:
        raise ValueError(f"--protocol must be one of {', '.join(PROTOCOLS)}, got {args.protocol!r}")
    if args.camera is not None:
        frames = camera_frames(args.camera)
    elif args.video is not None:
        frames = paced(video_frames(args.video), args.speed)
    else:
        frames = paced(folder_frames(args.frames, args.fps), args.speed)
    outdir = Path(args.outbox)
    outbox = Outbox(outdir / f"{args.table}.sqlite")
    watcher = TableWatcher(default_reader(), load_layout(args.layout), WatchSettings(stable_s=args.stable),
                           crops_dir=outdir / "crops")
    rfid, link = (None, None) if not args.rfid else _rfid(args)
    sender = Sender(outbox, Poster(args.server, args.table, args.token))
    agent = TableAgent(args.table, outbox, watcher, rfid=rfid, sender=sender)
    sender.health = lambda: health(agent)
    status = StatusLine(agent, sender)
    operator = None
    if args.operator:
        operator = OperatorInput(sys.stdin if args.operator == "-" else open(args.operator, encoding="utf-8"))
        operator.start()
        if args.operator != "-":
            operator.join()  # a file is read whole before the first frame
    sender.start()
    try:
        run(agent, frames, ReaderWatch(agent, link) if link else None, status, operator=operator)
    except KeyboardInterrupt:
        pass
    finally:
        if link is not None:
            link.stop()
        sender.stop(drain_s=5.0)
        status.close()
        left = outbox.depth()
        outbox.close()
    print(f"agent {args.table}: {sender.sent} events sent, {len(sender.rejected)} rejected, {left} waiting in {outdir}",
          file=sys.stderr)
    return 0


def _rfid(args: argparse.Namespace):
    import time

    from hardware.link import ReaderLink, port_opener
    from hardware.protocols import protocol_class
    from hardware.registry import TagRegistry
    from hardware.table import RfidTable

    cls = protocol_class(args.protocol)
    start = time.monotonic()  # the camera's clock starts with its first frame; close enough for fusion
    clock = lambda: round(time.monotonic() - start, 3)  # noqa: E731
    link = ReaderLink(port_opener(args.rfid, cls.BAUDRATE), lambda sink, stats: cls(sink, stats, clock=clock, name=args.rfid))
    link.start()
    return RfidTable(TagRegistry.load(args.registry)), link


def run_demo(args: argparse.Namespace) -> int:
    import time

    from .agent.demo import DemoOptions, run

    data = args.data or Path("demo-data") / time.strftime("run-%Y%m%d-%H%M%S")
    if data.exists() and any(data.iterdir()):
        raise ValueError(f"--data {str(data)!r} is not empty: the demo starts its tables afresh; name a new directory")
    extra = {"pairs": args.pairs} if args.pairs else {}
    if args.frame:
        extra["size"] = args.frame
    return run(DemoOptions(tables=args.tables, deals=args.deals, speed=args.speed, seed=args.seed,
                           data=data, port=args.port, rfid_sim=args.rfid_sim, rounds=args.rounds,
                           referee=args.referee, exit_when_done=args.exit_when_done, deck_photos=args.deck_photos,
                           deck=args.deck, **extra))
