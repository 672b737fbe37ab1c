"""``guandan-ref classify`` and ``guandan-ref replay``: the rules engine on the command line."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("classify", help="read a play: its legal readings, and whether it beats the table")
    p.add_argument("cards", help='cards in RULES.md notation, e.g. "3S 4S 5H 6S 7S"')
    p.add_argument("--level", default="2", help="the deal's level (2..A); its heart card is the wildcard")
    p.add_argument("--table", help="the play lying on the table (read as its strongest reading)")
    p.add_argument("--declared", help="the reading the player declared (a combination type)")
    p.add_argument("--json", action="store_true", help="print one JSON object (the default output)")
    p.set_defaults(handler=classify_command)

    p = sub.add_parser("replay", help="replay a table's events; print flags, deal results, session result")
    p.add_argument("events", help="table events, JSON Lines (DESIGN.md)")
    p.add_argument("--ruleset", default="competition", help="a ruleset name or a TOML file")
    p.add_argument("--json", action="store_true", help="print JSON Lines (the default output)")
    p.set_defaults(handler=replay_command)


def classify_command(args: argparse.Namespace) -> int:
    from referee.cards import cards_name, over_copies, parse_cards, parse_level
    from referee.combos import ComboError, default_reading, parse_comb_type, readings

    level = parse_level(args.level)
    cards = parse_cards(args.cards)
    if not 1 <= len(cards) <= 10:
        raise ComboError(f"a play has 1 to 10 cards, got {len(cards)}: {args.cards!r}")
    declared = parse_comb_type(args.declared) if args.declared else None
    table = None
    if args.table:
        table_cards = parse_cards(args.table)
        if over_copies(table_cards):
            raise ComboError(f"the table play holds more copies of {cards_name(over_copies(table_cards))} "
                             f"than two decks hold: {args.table!r}")
        table = default_reading(table_cards, level)
        if table is None:
            raise ComboError(f"the table play is not a legal combination: {args.table!r}")
    extra = over_copies(cards)  # D3: more copies than two decks hold is a misread, never a play
    chosen = None if extra else default_reading(cards, level, table, declared)
    if chosen is None and table is not None and not extra:
        chosen = default_reading(cards, level, None, declared)  # legal, but does not beat
    reading = chosen.to_json() if chosen else None
    out = {
        "legal": chosen is not None,
        "type": reading["type"] if reading else None,
        "rank": reading["rank"] if reading else None,
        "size": len(cards),
        "reading": reading,
        "readings": [] if extra else [r.to_json() for r in readings(cards, level)],
    }
    if extra:
        out["reason"] = (f"more copies of {cards_name(extra)} than two decks hold (two of each face): "
                         "a misread, or a card from another deck")
    if table is not None:
        out["table"] = table.to_json()
        out["beats"] = chosen is not None and chosen.beats(table)
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def resolve_ruleset(name_or_path: str):
    """``--ruleset``: a named ruleset, or a TOML file read here (the engine does no I/O)."""
    from pathlib import Path

    from referee.rulesets import load_ruleset, ruleset_from_toml

    if name_or_path.endswith(".toml"):
        path = Path(name_or_path)
        return ruleset_from_toml(path.read_text(encoding="utf-8"), name=path.stem)
    return load_ruleset(name_or_path)


def replay_command(args: argparse.Namespace) -> int:
    from referee.engine import Referee

    referee = Referee(resolve_ruleset(args.ruleset))
    with open(args.events, "rb") as lines:  # each line decoded alone: a non-UTF-8 one is an error record
        for number, line in enumerate(lines, 1):
            if line.strip():
                for record in replay_line(referee, line, number):
                    print(json.dumps(record, ensure_ascii=False), flush=True)
    return 0


def replay_line(referee, line: str | bytes, number: int) -> list[dict]:
    """One line of a JSON Lines file through the referee: its records, or an ``error``
    record naming the line (the event is not accepted and the replay goes on)."""
    from referee.events import EventError
    from referee.jsontext import loads
    from referee.verdicts import Rejection

    obj = None
    try:
        obj = loads(line)
        return [verdict.to_json() for verdict in referee.feed(obj)]
    except EventError as exc:  # the bounded decoder's JSONTextError is a ValueError too
        return [Rejection(f"line {number}: {exc}", event=obj, line=number).to_json()]
    except ValueError as exc:
        return [Rejection(f"line {number}: {exc}", line=number).to_json()]
