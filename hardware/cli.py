"""``guandan-ref rfid enroll|listen|simulate``: the RFID side of a table from the shell."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

from hardware.protocols import PROTOCOLS, protocol_class


def register(sub: argparse._SubParsersAction) -> None:
    rfid = sub.add_parser("rfid", help="RFID card readers: enrol a deck, listen, simulate")
    cmds = rfid.add_subparsers(dest="rfid_command", required=True, metavar="ACTION")

    def reader_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--port", required=True, help="serial device or pyserial URL (e.g. /dev/ttyUSB0, loop://)")
        p.add_argument("--protocol", required=True, choices=PROTOCOLS)
        p.add_argument("--quiet", type=float, default=1.0,
                       help="seconds without a read before a tag counts as removed (default 1.0)")

    enroll = cmds.add_parser("enroll", help="enrol the 108 cards of a deck, one by one as prompted")
    reader_args(enroll)
    enroll.add_argument("--registry", required=True, type=Path,
                        help="registry file (JSON); an existing one is resumed")
    enroll.add_argument("--deck", default="deck", help="deck name stored in a new registry")
    enroll.add_argument("--card", help="enrol one more card of this face only (e.g. a replacement 7H)")
    enroll.set_defaults(handler=_enroll)

    listen = cmds.add_parser("listen", help="print debounced reads (or plays and deck anomalies)")
    reader_args(listen)
    listen.add_argument("--registry", type=Path, help="registry file, to name the cards")
    where = listen.add_mutually_exclusive_group()
    where.add_argument("--antennas", type=Path, help="TOML file mapping antenna index to seat")
    where.add_argument("--seat", help="the seat of a single-antenna reader")
    listen.add_argument("--json", action="store_true", help="one JSON object per read: seat, tag, card, t")
    listen.add_argument("--plays", action="store_true",
                        help="print play observations and D3 deck anomalies (JSON lines) instead of reads; "
                             "the whole run counts as one deal")
    listen.add_argument("--settle", type=float, default=0.5,
                        help="seconds without a new card before a seat's play is complete (default 0.5)")
    listen.add_argument("--count", type=int, help="stop after this many records")
    listen.add_argument("--duration", type=float, help="stop after this many seconds")
    listen.set_defaults(handler=_listen)

    sim = cmds.add_parser("simulate", help="a pseudo-terminal that plays a scripted deal as a reader")
    sim.add_argument("--protocol", required=True, choices=PROTOCOLS)
    sim.add_argument("--registry", type=Path,
                     help="registry to take tags from; written with a demo deck if it does not exist")
    sim.add_argument("--link", type=Path, help="also make this symlink to the pty (a stable port name)")
    sim.add_argument("--seat", default="S", help="seat a single-antenna reader serves (default S)")
    sim.add_argument("--wait", type=float, default=30.0,
                     help="seconds to wait for a listener to open the port before playing (default 30)")
    sim.add_argument("--gap", type=float, default=1.5, help="seconds between plays (default 1.5)")
    sim.add_argument("--hold", type=float, default=1.0, help="seconds a play lies on the antenna (default 1.0)")
    sim.set_defaults(handler=_simulate)


def _open_link(args: argparse.Namespace, clock):
    from hardware.link import ReaderLink, port_opener

    cls = protocol_class(args.protocol)
    factory = lambda sink, stats: cls(sink, stats, clock=clock, name=args.port)  # noqa: E731
    link = ReaderLink(port_opener(args.port, cls.BAUDRATE), factory)
    link.start()
    return link


def _clock():
    t0 = time.monotonic()
    return lambda: round(time.monotonic() - t0, 3)


def _arrivals(link, presence, clock) -> Iterator:
    for read in link.reads():
        if read is None:
            presence.expire(clock())
        elif (arrival := presence.feed(read)) is not None:
            yield arrival


def _enroll(args: argparse.Namespace) -> int:
    from hardware.enroll import enroll
    from hardware.presence import PresenceTracker
    from hardware.registry import TagRegistry
    from referee.cards import parse_card

    registry = TagRegistry.load(args.registry) if args.registry.exists() else TagRegistry(args.deck)
    todo = [registry.next_copy(parse_card(args.card))] if args.card else None
    if todo is None and not registry.missing():
        print(f"{args.registry}: all {len(registry)} cards are enrolled already")
        return 0
    clock = _clock()
    link = _open_link(args, clock)
    try:
        enroll(registry, _arrivals(link, PresenceTracker(args.quiet), clock),
               partial(registry.save, args.registry), sys.stdout)
    except KeyboardInterrupt:
        print(f"\nstopped; {len(registry)} cards saved in {args.registry}")
    finally:
        link.stop()
    missing = len(registry.missing())
    print(f"{args.registry}: {len(registry)} cards enrolled" + (f", {missing} missing" if missing else ""))
    return 0


def _listen(args: argparse.Namespace) -> int:
    from hardware.antennas import DEFAULT_ANTENNAS, load_antenna_map
    from hardware.registry import TagRegistry
    from hardware.table import RfidTable
    from referee.seats import parse_seat

    registry = TagRegistry.load(args.registry) if args.registry else TagRegistry()
    if args.antennas:
        antennas = load_antenna_map(args.antennas)
    elif args.seat:
        antennas = {0: parse_seat(args.seat)}
    else:
        antennas = DEFAULT_ANTENNAS
    table = RfidTable(registry, antennas, quiet=args.quiet, settle=args.settle)
    clock = _clock()
    link = _open_link(args, clock)
    printed = 0
    try:
        for read in link.reads():
            now = clock()
            if args.duration is not None and now >= args.duration:
                break
            records = []
            if read is not None and (record := table.read(read)) is not None and not args.plays:
                records.append(record)
            if args.plays:
                records.extend(table.tick(now))
            for record in records:
                print(_format(record, args.json or args.plays), flush=True)
                printed += 1
            if args.count is not None and printed >= args.count:
                break
    except KeyboardInterrupt:
        pass
    finally:
        link.stop()
        print("reader: " + " ".join(f"{k}={v}" for k, v in sorted(link.stats.snapshot().items())), file=sys.stderr)
    return 0


def _format(record: dict, as_json: bool) -> str:
    if as_json:
        return json.dumps(record)
    where = record["seat"] or f"antenna {record['antenna']}"
    return f"{record['t']:8.3f}  {where}  {record['card'] or '??'}  tag {record['tag']}"


def _simulate(args: argparse.Namespace) -> int:
    from hardware.registry import TagRegistry
    from hardware.simulator import PtyPort, Simulator, demo_registry, timeline
    from referee.seats import parse_seat

    if args.registry and args.registry.exists():
        registry = TagRegistry.load(args.registry)
    else:
        registry = demo_registry(args.protocol)
        if args.registry:
            registry.save(args.registry)
    seats = None if protocol_class(args.protocol).MULTI_ANTENNA else [parse_seat(args.seat)]
    lays = timeline(registry, seats=seats, gap=args.gap, hold=args.hold)
    port = PtyPort(args.link)
    try:
        print(port.path, flush=True)
        if not port.wait_for_listener(args.wait):
            print(f"no listener opened {port.path} within {args.wait} s; playing anyway", file=sys.stderr)
        Simulator(args.protocol, port, lays).run()
    except KeyboardInterrupt:
        pass
    finally:
        port.close()
    return 0
