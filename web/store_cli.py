"""``guandan-ref`` commands of the event store and tournaments.

``import``, ``results``, ``standings``, ``verify`` and ``export`` read or write the store
in ``--data DIR`` (SQLite, default ``./guandan-data``) or at ``--db URL`` (PostgreSQL);
``sign``, ``dispute`` and ``resolve`` are the sign-off of a session result (S3); ``event``
and ``official`` set up a tournament. SQLAlchemy is imported in the handlers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def store_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data", metavar="DIR", default=None,
                        help="data directory holding the SQLite store (default ./guandan-data)")
    common.add_argument("--db", metavar="URL", default=None,
                        help="database URL instead, e.g. postgresql+psycopg://postgres@127.0.0.1:5432/test")
    common.add_argument("--key-file", metavar="FILE", default=None,
                        help="the store's key (default $GUANDAN_SECRET_KEY, else $GUANDAN_KEY_FILE, else "
                             "~/.config/guandan-referee/secret.key, made once); never inside the data directory")
    return common


def open_from_args(args, create: bool = False):
    """The store the options name, with tournament tables checked against their draw. Only
    ``create`` commands make one, in a new or empty directory; any other names a missing or
    non-store path with a one-line error (exit 2) and creates nothing."""
    from web.store import DB_FILE, DEFAULT_DATA_DIR, NotAStore, open_store
    from web.tournament.tables import TournamentTables

    if args.db is None:
        folder = Path(args.data or DEFAULT_DATA_DIR)
        if folder.exists() and not folder.is_dir():
            raise NotAStore(f"{folder} is a file, not a data directory")
        if not (folder / DB_FILE).exists():
            if not create:
                raise NotAStore(f"no store in {folder} (guandan-ref import creates one)")
            if folder.exists() and any(folder.iterdir()):
                raise NotAStore(f"{folder} holds no store and is not empty: name a new or empty directory")
    return open_store(args.db, args.data, key_file=args.key_file, create=create, table_rules=TournamentTables())


def _reading(where: str):
    """Turns a database that fails part-way (a damaged page) into a one-line error."""
    from contextlib import contextmanager

    from sqlalchemy.exc import DBAPIError

    from web.store import StoreError

    @contextmanager
    def guard():
        try:
            yield
        except DBAPIError as exc:
            raise StoreError(f"cannot read {where}: {str(exc.orig).splitlines()[0]} "
                             "(guandan-ref verify names what is damaged)") from None

    return guard()


def _json(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)


def register(sub) -> None:
    common = store_options()

    p = sub.add_parser("import", parents=[common], help="append a JSON Lines file of table events to the store")
    p.add_argument("events", metavar="EVENTS.jsonl", help="one table event per line ('-' for stdin)")
    p.add_argument("--table", metavar="ID", help="bring a game file of one table onto table ID (e.g. a drawn "
                                                 "CUP-R1-T2: its session's teams become the draw's pairs)")
    p.set_defaults(handler=cmd_import)

    p = sub.add_parser("results", parents=[common], help="recorded deal and session results")
    p.add_argument("--table", help="only this table")
    p.add_argument("--json", action="store_true", help="JSON Lines (table, deal, order, upgrade, levels, ...)")
    p.set_defaults(handler=cmd_results)

    p = sub.add_parser("standings", parents=[common], help="standings of a tournament (S2)")
    p.add_argument("--event", help="tournament id (needed when the store holds several)")
    p.add_argument("--round", type=int, help="standings after this round (default: every round played)")
    p.add_argument("--json", action="store_true", help="JSON Lines, best first")
    p.set_defaults(handler=cmd_standings)

    p = sub.add_parser("verify", parents=[common],
                       help="check every table's keyed chain, the manifest, seals, snapshots and the database file")
    p.add_argument("--rederive", action="store_true", help="also replay each table and compare its results")
    p.add_argument("--anchors", metavar="FILE", default=None,
                   help="check for a rollback against this anchor file (default: the store's, beside the key)")
    p.set_defaults(handler=cmd_verify)

    signing = argparse.ArgumentParser(add_help=False, parents=[common])
    signing.add_argument("table", help="table stream id")
    signing.add_argument("--session", type=int, default=1, help="which session of the table (default 1)")
    signing.add_argument("--json", action="store_true", help="the sign-off status as one JSON object")
    p = sub.add_parser("sign", parents=[signing], help="a side confirms a session result (S3)")
    p.add_argument("--side", required=True, choices=("NS", "EW"))
    p.add_argument("--by", required=True, help="the player who signs for the side")
    p.set_defaults(handler=cmd_signoff, action="sign")
    p = sub.add_parser("dispute", parents=[signing], help="a side disputes a session result: it reopens")
    p.add_argument("--side", required=True, choices=("NS", "EW"))
    p.add_argument("--by", required=True, help="the player who disputes for the side")
    p.add_argument("--note", required=True, help="what is disputed")
    p.add_argument("--override-by", metavar="CHIEF", help="the chief referee, reopening it past the S4/X7 windows")
    p.add_argument("--reason", help="why (with --override-by)")
    p.set_defaults(handler=cmd_signoff, action="dispute")
    p = sub.add_parser("resolve", parents=[signing], help="an official closes a dispute; both sides sign again")
    p.add_argument("--by", required=True, help="a registered referee or the chief referee")
    p.add_argument("--note", default="", help="the ruling")
    p.set_defaults(handler=cmd_signoff, action="resolve")

    p = sub.add_parser("export", parents=[common], help="score sheets or standings (PDF, CSV or .xlsx)")
    p.add_argument("what", choices=("sheet", "standings"))
    p.add_argument("--event", help="tournament id")
    p.add_argument("--round", type=int, help="sheets of this round (default: all); standings after it")
    p.add_argument("--table", help="sheet of this table stream (no tournament needed)")
    p.add_argument("--out", required=True, help="output file: .pdf, .csv (UTF-8 with BOM) or .xlsx")
    p.set_defaults(handler=cmd_export)

    p = sub.add_parser("event", help="create a tournament, add pairs, draw rounds, forfeits, rulings")
    ev = p.add_subparsers(dest="action", required=True)
    c = ev.add_parser("create", parents=[common])
    c.add_argument("id")
    c.add_argument("--name", default=None)
    c.add_argument("--ruleset", default="competition")
    c.add_argument("--chain", default=None, choices=("competition", "001"),
                   help="ranking chain (default: the ruleset's; liumoer-2026 ranks by 001)")
    c.add_argument("--rounds", type=int, default=4)
    c.add_argument("--minutes", type=int, default=50, help="round time (W1)")
    c.add_argument("--deals", type=int, default=8, help="deal limit per round (W1)")
    c.add_argument("--seed", type=int, default=0, help="seed of the round-1 draw and the lot")
    c = ev.add_parser("pairs", parents=[common],
                      help="add pairs from a CSV or .xlsx: pair,name,player1,player2[,rating]")
    c.add_argument("id")
    c.add_argument("csv", metavar="FILE", help=".csv (UTF-8 with or without BOM, GBK/GB18030) or .xlsx")
    c.add_argument("--encoding", help="the CSV's encoding (default: detected)")
    c = ev.add_parser("draw", parents=[common], help="draw the next round (round 1 random, then Swiss)")
    c.add_argument("id")
    c.add_argument("--by-rating", action="store_true", help="round 1 by rating instead of random")
    c.add_argument("--override-by", metavar="CHIEF", help="the chief referee, drawing before every result is final")
    c.add_argument("--reason", help="why (with --override-by)")
    c = ev.add_parser("forfeit", parents=[common], help="record (or --withdraw) a forfeit (chief referee)")
    c.add_argument("id")
    c.add_argument("--round", type=int, required=True)
    c.add_argument("--pair", required=True)
    c.add_argument("--by", required=True, help="the chief referee")
    c.add_argument("--reason", help="the ruling's reason (needed over a recorded result, another forfeit, --withdraw)")
    c.add_argument("--withdraw", action="store_true", help="withdraw the pair's forfeit given by mistake")
    c = ev.add_parser("session", parents=[common],
                      help="the chief referee lets a drawn table play another session, which counts instead")
    c.add_argument("id")
    c.add_argument("--round", type=int, required=True)
    c.add_argument("--table", type=int, required=True, help="the table's number in the round")
    c.add_argument("--by", required=True, help="the chief referee")
    c.add_argument("--reason", required=True, help="why another session counts (a replay ordered, ...)")
    c = ev.add_parser("rulings", parents=[common],
                      help="forfeits, draws over open results, another session (JSON Lines)")
    c.add_argument("id")
    p.set_defaults(handler=cmd_event)

    p = sub.add_parser("official", parents=[common], help="register a referee or the chief referee")
    p.add_argument("name")
    p.add_argument("--role", choices=("referee", "chief"), default="referee")
    p.set_defaults(handler=cmd_official)


def cmd_import(args) -> int:
    """Validate the whole file, store each table's good events in one transaction, and end
    with a summary naming every rejected line (exit 1 if any)."""
    from web.store.ingest import import_stream
    from web.tournament.intake import onto_table

    if args.events != "-" and not Path(args.events).is_file():
        raise FileNotFoundError(f"no events file {args.events}")
    source = sys.stdin.buffer if args.events == "-" else open(args.events, "rb")  # noqa: SIM115
    with source, open_from_args(args, create=True) as store:
        summary = import_stream(store, source, onto_table(store, args.table) if args.table else None)
    for number, reason in summary.rejected:
        print(f"line {number}: {reason}", file=sys.stderr)
    print(f"imported {summary.accepted} events into {len(summary.tables)} table(s); "
          f"{summary.duplicates} already stored; {len(summary.rejected)} rejected"
          + (f" (lines {', '.join(str(n) for n, _ in summary.rejected)})" if summary.rejected else ""))
    return 1 if summary.rejected else 0


def cmd_results(args) -> int:
    from web.tournament import signoff

    with open_from_args(args) as store, _reading("the results"):
        results = store.results(args.table)
        sessions: dict[str, int] = {}
        for r in results:
            if r["type"] == "session_result":
                sessions[r["table"]] = sessions.get(r["table"], 0) + 1
                r["session"] = sessions[r["table"]]
                r["signoff"] = signoff.status(store, r["table"], r["session"]).as_dict()
    for r in results:
        if args.json:
            print(_json(r))
        elif r["type"] == "deal_end":
            (side, k), = r["upgrade"].items()
            print(f"{r['table']} deal {r['deal']}: {' '.join(r['order'])}  {side} +{k}  "
                  f"NS {r['levels']['NS']} EW {r['levels']['EW']}")
        else:
            print(f"{r['table']} result: NS {r['levels']['NS']} EW {r['levels']['EW']}  "
                  f"d={r['level_difference']}  {r['score']['NS']}:{r['score']['EW']}  "
                  f"winner {r.get('winner') or 'draw'}  [{r['signoff']['state']}]")
    return 0


def cmd_signoff(args) -> int:
    """``sign``, ``dispute`` or ``resolve``; a refused action exits 1 and says why."""
    from web.tournament import signoff

    if getattr(args, "reason", None) and not args.override_by:
        raise ValueError("--reason goes with --override-by (the chief referee reopening a result past the windows)")
    with open_from_args(args) as store:
        try:
            if args.action == "sign":
                status = signoff.sign(store, args.table, args.side, args.by, session=args.session)
            elif args.action == "dispute":
                status = signoff.dispute(store, args.table, args.side, args.by, args.note, session=args.session,
                                         override_by=args.override_by, reason=args.reason)
            else:
                status = signoff.resolve(store, args.table, args.by, args.note, session=args.session)
        except signoff.SignOffError as exc:
            print(f"guandan-ref {args.action}: refused: {exc}", file=sys.stderr)
            return 1
    if args.json:
        print(_json({"table": args.table, "session": args.session, **status.as_dict()}))
    else:
        signed = ", ".join(f"{side}: {who}" for side, who in sorted(status.signed.items()))
        detail = status.dispute if status.state == "disputed" else (signed or "no signatures")
        print(f"{args.table} session {args.session}: {status.state} ({detail})")
    return 0


def _event_id(store, given: str | None) -> str:
    from web.tournament import service

    ids = [e["id"] for e in service.events(store)]
    if given:
        if given not in ids:
            raise ValueError(f"no event {given!r} (events: {', '.join(ids) or 'none'})")
        return given
    if len(ids) != 1:
        raise ValueError(f"name the event with --event (events: {', '.join(ids) or 'none'})")
    return ids[0]


def cmd_standings(args) -> int:
    from web.tournament import export, service

    with open_from_args(args) as store:
        event = _event_id(store, args.event)
        info = service.event_info(store, event)
        rows = service.standings_of(store, event, require_all=False, after_round=args.round)
        pairs = service.pairs(store, event)
    if not args.json:
        print("\n".join(export.standings_text(rows, pairs, info["chain"])))
        return 0
    names = {p["pair"]: p for p in pairs}
    for row in rows:
        print(_json({"event": event, "name": names[row.pair]["name"], "players": names[row.pair]["players"],
                     **row.as_dict()}))
    return 0


def cmd_verify(args) -> int:
    if args.anchors is not None and not Path(args.anchors).is_file():
        raise FileNotFoundError(f"no anchor file {args.anchors}")
    with open_from_args(args) as store:
        report = store.verify(rederive=args.rederive, anchor=args.anchors)
    for problem in report.problems:
        print(problem)
    state = "OK" if report.ok else f"BROKEN ({len(report.findings)} finding(s))"
    print(f"{state}: {report.tables} table(s), {report.events} event(s) checked")
    print(report.anchor + (f"; not anchored: {', '.join(report.unanchored)}" if report.unanchored else ""))
    return 0 if report.ok else 1


def cmd_export(args) -> int:
    from web.tournament import export, service

    export.check_format(args.out)  # a wrong suffix is named before the store is opened
    with open_from_args(args) as store:
        if args.what == "standings":
            event = _event_id(store, args.event)
            rows = service.standings_of(store, event, require_all=False, after_round=args.round)
            export.save_standings(rows, service.pairs(store, event), service.event_info(store, event), args.out)
            return 0
        if args.table:
            sheets = [export.score_sheet(store, args.table)]
        else:
            event = _event_id(store, args.event)
            sheets = export.tournament_sheets(store, event, args.round)
            if not sheets:
                raise ValueError(f"event {event!r}" + (f" round {args.round}" if args.round else "")
                                 + ": no table has been drawn, so there is no score sheet")
        export.save_sheets(sheets, args.out)
    return 0


def cmd_event(args) -> int:
    from web.tournament import pairlist, service, signoff

    with open_from_args(args, create=args.action == "create") as store:
        if args.action == "create":
            service.create(store, args.id, args.name or args.id, ruleset=args.ruleset, chain=args.chain,
                           rounds=args.rounds, round_minutes=args.minutes, deal_limit=args.deals,
                           seed=args.seed)
        elif args.action == "pairs":
            try:
                entries, encoding = pairlist.read_pairs(args.csv, args.encoding)
            except pairlist.PairListError as exc:
                for problem in exc.problems:
                    print(f"guandan-ref event pairs: error: {exc.source}: {problem}", file=sys.stderr)
                print(f"guandan-ref event pairs: nothing added ({len(exc.problems)} problem(s))", file=sys.stderr)
                return 2
            added = service.add_pairs(store, args.id, entries)
            print(f"added {added} pairs to {args.id} from {Path(args.csv).name} ({encoding})")
        elif args.action == "draw":
            if args.reason and not args.override_by:
                raise ValueError("--reason goes with --override-by (the chief referee's draw over open results)")
            for m in service.pair_round(store, args.id, by_rating=args.by_rating,
                                        override_by=args.override_by, reason=args.reason):
                print(_json({"round": m.round, "table_no": m.table_no, "table": m.table_id,
                             "NS": m.ns, "EW": m.ew}))
        elif args.action == "forfeit" and args.withdraw:
            service.withdraw_forfeit(store, args.id, args.round, args.pair, args.by, args.reason)
        elif args.action == "forfeit":
            service.record_forfeit(store, args.id, args.round, args.pair, args.by, reason=args.reason)
        elif args.action == "session":
            print(service.rule_session(store, args.id, args.round, args.table, args.by, args.reason))
        elif args.action == "rulings":
            for ruling in service.rulings(store, args.id):
                print(_json({**ruling, "at": signoff.wall_time(ruling["at"])}))
    return 0


def cmd_official(args) -> int:
    with open_from_args(args, create=True) as store:
        store.add_official(args.name, args.role)
    return 0
