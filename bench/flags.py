"""Flags a referee can trust: seeded simulated tables through the real path, against their truth.

Each seed plays ``--tables`` tables of the demo (``web/app/agent/demo.py``: four bots with
planted breaches, drawn as camera frames, read by the watcher and the trained card reader,
posted by the agent's outbox and sender over HTTP to the dashboard's store and referee), as
fast as the CPU allows, table seed ``seed * 1000 + n`` as ``guandan-ref demo --seed`` has
it. Then what was recorded is compared with the simulation's truth
(``web/app/agent/truth.py``, :func:`score`). With ``--referee auto`` a floor referee who
knows the truth answers every item a few table seconds after it appears
(``web/app/agent/floorref.py``); with ``none`` nobody answers. ``both`` plays each seed once
with the floor referee and scores it twice: as played, and with the agent's events alone
replayed into a store of their own (what ``none`` records: the agent does not hear the
referee, so its events are the same), side by side on the same camera reads.

Goals (issue 27; seeds 1-5, 4 tables x 2 deals, the demo's defaults): planted breaches
flagged >= 99 %, knock-on flags 0, misreads caught >= 95 %, prompts per table-hour <= 5,
deal results equal to the truth 100 % with ``--referee auto`` and >= 95 % with ``none``.

Run: ``.venv/bin/python bench/flags.py --tables 1 --deals 1 --seeds 1 --json`` (the last
line is one JSON object).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import _standalone  # noqa: F401  (first of ours: keeps bench/ off the import path)

from recognizer.decks import deck_classifier  # noqa: E402
from web.app.agent.demo import DemoOptions, DemoServer, SimulatedTable, corrected, make_table  # noqa: E402
from web.app.agent.floorref import DELAY_S, FloorReferee, history  # noqa: E402
from web.app.agent.sender import Answer  # noqa: E402
from web.app.agent.truth import FlagScore, score, settled_reads  # noqa: E402
from web.store import Appended, Store, open_store  # noqa: E402

REFEREE = "floor"
DETAILS = 12
"""Lines of detail (breaches not flagged, false flags, misreads unnoticed) shown per table."""
SPEED = 1000.0
"""Table seconds per wall second asked for: in effect as fast as the CPU reads the frames
(every frame is still read; nothing is skipped)."""


def seeds_of(text: str) -> list[int]:
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds: expected numbers separated by commas, got {text!r}") from None
    if not seeds:
        raise argparse.ArgumentTypeError("--seeds: give at least one seed")
    return seeds


def scored(tables: list[SimulatedTable], store: Store, answers: dict[str, list[Answer]]) -> dict[str, FlagScore]:
    """Each table's record in ``store`` against its truth (``answers``: the agent's events with
    the store's answers to them)."""
    return {t.plan.table: score(t.plan.truth, t.plan.breaches, answers[t.plan.table],
                                history(store, t.plan.table) + settled_reads(store.events(t.plan.table)),
                                store.records(t.plan.table), corrected(store, t.plan.table)) for t in tables}


def without_referee(tables: list[SimulatedTable], base: Path) -> dict[str, FlagScore]:
    """The scores had nobody answered: each table's events as the agent sent them, in its
    order, appended to a store of their own and judged there."""
    answers = {}
    with open_store(data_dir=str(base)) as store:
        for table in tables:
            name, sent = table.plan.table, list(table.sender.answers)
            outcomes = store.append_many([{**a.event, "table": name} for a in sent])
            answers[name] = [Answer(a.event, {"status": "accepted", "seq": o.seq} if isinstance(o, Appended)
                                    else {"status": "rejected", "reason": getattr(o, "reason", str(o))}, a.at)
                             for a, o in zip(sent, outcomes)]
        return scored(tables, store, answers)


def keep(tables: list[SimulatedTable], store: Store, path: Path) -> None:
    """Each table's truth, the agent's events with the server's answers, and the store's
    events and records, as one JSON file: a run to look into afterwards."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({t.plan.table: {
        "truth": t.plan.truth, "breaches": t.plan.breaches,
        "answers": [{"event": a.event, "result": a.result} for a in t.sender.answers],
        "events": store.events(t.plan.table), "records": store.records(t.plan.table)} for t in tables}))


def run_seed(seed: int, args: argparse.Namespace, base: Path) -> dict:
    """One seed's tables played and scored (per mode: ``none``, ``auto`` or both): per-table
    scores, the referee's answers, errors."""
    options = DemoOptions(tables=args.tables, deals=args.deals, speed=SPEED, seed=seed, rfid_sim=args.rfid_sim,
                          deck_photos=args.deck_photos, deck=args.deck)
    server = DemoServer(base / "data", 0)
    try:
        server.login(REFEREE)
        tables = [make_table(f"T{n + 1}", seed * 1000 + n, options, server.url, server.token(f"T{n + 1}"),
                             base / "agents") for n in range(args.tables)]
        referee = FloorReferee(server.store, [t.view() for t in tables], REFEREE, args.delay) \
            if args.referee != "none" else None
        done = threading.Event()
        watcher = threading.Thread(target=referee.run, args=(done,), daemon=True) if referee else None
        for table in tables:
            table.start(threading.Event())  # played to the end
        if watcher is not None:
            watcher.start()
        for table in tables:
            table.join()
        for table in tables:
            table.sender.stop(drain_s=30.0)
        done.set()
        if watcher is not None:
            watcher.join()
            referee.finish()
        played = scored(tables, server.store, {t.plan.table: list(t.sender.answers) for t in tables})
        if args.keep is not None:
            keep(tables, server.store, args.keep / f"seed{seed}.json")
        scores = {"none": played} if referee is None else {"auto": played}
        if args.referee == "both":
            scores["none"] = without_referee(tables, base / "none")
        return {"scores": scores, "given": referee.given if referee else Counter(),
                "refused": referee.refused if referee else [],
                "errors": [f"{t.plan.table}: {t.error}" for t in tables if t.error],
                "unsent": sum(t.agent.outbox.depth() for t in tables)}
    finally:
        server.stop()


def summary(total: FlagScore, args: argparse.Namespace, mode: str, wall_s: float) -> list[str]:
    f = total.figures()

    def pct(share: float | None) -> str:
        return "-" if share is None else f"{100 * share:.1f} %"

    return [
        f"{args.tables} table(s) x {args.deals} deal(s), seeds {','.join(map(str, args.seeds))}, referee "
        f"{mode}{', RFID simulated' if args.rfid_sim else ''}: {f['table_hours']:.3f} table-hours "
        f"in {wall_s:.0f} s",
        f"breaches flagged:  {f['breaches_flagged']}/{f['breaches']} ({pct(f['breaches_flagged_share'])}; goal >= 99 %)",
        f"false flags:       {f['false_flags']} of {f['flags']} raised: {f['flags_at_misreads']} at a misread play, "
        f"{f['knock_on']} knock-on (goal 0), {f['other_false_flags']} other",
        f"misreads caught:   {f['misreads_caught']}/{f['misreads']} of {f['plays']} plays "
        f"({pct(f['misreads_caught_share'])}; goal >= 95 %; {f['misreads_settled']} settled to the true cards by "
        f"the deal without a prompt, {f['misreads_caught_later']} only by a later item naming them), "
        f"{f['misreads_corrected']} corrected, "
        f"{f['misreads_rejected']} refused by the server",
        f"prompts:           {f['prompts']} ({f['prompts_on_misreads']} on misreads; "
        f"{', '.join(f'{n} {reason}' for reason, n in f['prompt_reasons'].items()) or 'none'}), "
        f"{f['prompts_per_table_hour']} per table-hour (goal <= 5)",
        f"deal results:      {f['deal_results_right']}/{f['deals']} equal the truth "
        f"({pct(f['deal_results_right_share'])}; goal 100 % auto, >= 95 % none)",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument("--seeds", type=seeds_of, default=seeds_of("1,2,3,4,5"), help="e.g. 1,2,3")
    parser.add_argument("--referee", choices=("none", "auto", "both"), default="none",
                        help="nobody answers the items, a floor referee who knows the truth does, or both "
                             "(one play, scored as answered and with the agent's events alone)")
    parser.add_argument("--rfid-sim", action="store_true", help="each table with a simulated RFID reader on a pty")
    parser.add_argument("--deck-photos", metavar="DIR", type=Path,
                        help="draw the cards from photographs of a real deck's faces (as guandan-ref demo --deck-photos)")
    parser.add_argument("--deck", metavar="NAME",
                        help="read the cards with an enrolled deck's classifier (as guandan-ref demo --deck)")
    parser.add_argument("--delay", type=float, default=DELAY_S,
                        help=f"table seconds before the auto referee answers an item (default {DELAY_S:g})")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="write each seed's tables (truth, the agent's events and answers, the store's "
                             "events and records) to DIR/seedN.json")
    parser.add_argument("--json", action="store_true", help="end with one line of JSON")
    args = parser.parse_args()
    if not 1 <= args.tables <= 16:
        parser.error(f"--tables must be between 1 and 16, got {args.tables}")
    if not 1 <= args.deals <= 20:
        parser.error(f"--deals must be between 1 and 20, got {args.deals}")
    if args.delay < 0:
        parser.error(f"--delay must be >= 0, got {args.delay}")
    if args.deck is not None:
        try:
            deck_classifier(None, args.deck)
        except ValueError as exc:
            parser.error(str(exc))
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    modes = ("auto", "none") if args.referee == "both" else (args.referee,)
    totals, given, refused, errors, unsent = {m: FlagScore() for m in modes}, Counter(), [], [], 0
    start = time.monotonic()
    for seed in args.seeds:
        with tempfile.TemporaryDirectory(prefix=f"flags-{seed}-") as base:
            out = run_seed(seed, args, Path(base))
        for mode, scores in out["scores"].items():
            for name, table in scores.items():
                f = table.figures()
                print(f"seed {seed} {name} referee {mode}: {f['plays']} plays, {f['misreads']} misread "
                      f"({f['misreads_caught']} caught), {f['breaches_flagged']}/{f['breaches']} breaches flagged, "
                      f"{f['false_flags']} false flags ({f['knock_on']} knock-on), {f['prompts']} prompts, "
                      f"{f['deal_results_right']}/{f['deals']} deals right", file=sys.stderr, flush=True)
                for line in table.details[:DETAILS]:
                    print(f"    {line}", file=sys.stderr)
                totals[mode].add(table)
        given.update(out["given"])
        refused += out["refused"]
        errors += out["errors"]
        unsent += out["unsent"]
    wall_s = time.monotonic() - start
    for mode in modes:
        for line in summary(totals[mode], args, mode, wall_s):
            print(line)
    if args.referee != "none":
        print(f"referee answers: {dict(given) or 'none'}; refused by the store: {len(refused)}")
        for reason, count in Counter(refused).most_common(5):
            print(f"    refused {count} x: {reason}")
    for error in errors:
        print(f"table stopped: {error}")
    if args.json:
        common = {"tables": args.tables, "seeds": args.seeds, "rfid_sim": args.rfid_sim, "answers": dict(given),
                  "answers_refused": len(refused), "errors": errors, "unsent": unsent, "wall_s": round(wall_s, 1)}
        if args.referee == "both":
            print(json.dumps({**common, "referee": "both", **{m: totals[m].figures() for m in modes}}))
        else:
            print(json.dumps({**totals[args.referee].figures(), **common, "referee": args.referee}))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
