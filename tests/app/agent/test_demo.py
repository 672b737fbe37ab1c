"""The demo end to end: an event's round on a simulated table through the agent, HTTP, the
store and the referee, the simulated floor referee answering the console, the dashboard
still serving once the table is done.

The card reader is the renderer's ground truth (the trained reader takes minutes a deal on
a shared machine; ``test_e2e.py`` covers it), read wrong once on purpose: a five-card play
seen without its last card, which is no combination, so the referee raises an item at it
and the floor referee corrects it from the truth.
"""

import csv
import io
import re
import threading
import time

import requests

from recognizer.training.table_video import TruthReaders, TruthReading
from referee.cards import card_name, rank_of
from web.app import create_app
from web.app.agent.demo import AUTO_REFEREE, DemoOptions, run
from web.app.agent.demodesk import EVENT
from web.store import get_store
from web.tournament import service

SEED = 6
"""The demo's seed: its round-1 table (seed 6000) plays a short deal (158 s of table time)."""


class MisreadOnce(TruthReaders):
    """Ground-truth readers that read the table's first five-card play (not a bomb)
    without its last card, on every frame it lies there, as a reader that cannot see one
    card does."""

    def __init__(self) -> None:
        super().__init__()
        self.target: tuple[str, tuple[int, ...]] | None = None
        self.dropped = 0

    def by_seat(self):
        return {seat: _Reader(self, seat) for seat in self.seats}


class _Reader:
    def __init__(self, source: MisreadOnce, seat: str) -> None:
        self.source, self.seat = source, seat

    def read(self, image_bgr) -> TruthReading:
        cards = tuple(self.source.frame.visible[self.seat])
        if self.source.target is None and len(cards) == 5 and len({rank_of(c) for c in cards}) > 1:
            self.source.target = (self.seat, cards)
        if self.source.target == (self.seat, cards):
            self.source.dropped += 1
            return TruthReading(list(cards[:-1]))
        return TruthReading(list(cards))


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def start_demo(tmp_path, referee):
    """The demo in a thread, up to its tables being done: (thread, output, stop, exit codes,
    the readers it made, the dashboard's URL)."""
    options = DemoOptions(tables=1, deals=1, speed=100.0, seed=SEED, data=tmp_path / "data", port=0, referee=referee)
    out, stop, codes, readers = io.StringIO(), threading.Event(), [], []

    def readers_made():
        readers.append(MisreadOnce())
        return readers[-1]

    demo = threading.Thread(target=lambda: codes.append(run(options, out, stop, readers_made)), daemon=True)
    demo.start()
    try:
        wait_for(lambda: "stays up" in out.getvalue() or not demo.is_alive(), 300, "the tables to finish")
        assert demo.is_alive(), out.getvalue()  # the tables are done, the demo is not
        assert readers[0].dropped > 0, "the misread never happened"
    except BaseException:
        stop.set()
        raise
    return demo, out, stop, codes, readers, re.search(r"dashboard: (http://\S+)", out.getvalue()).group(1)


def logged_in(url, text):
    """A browser session logged in with the demo's login (printed in ``text``)."""
    login, password = re.search(r"login: (\S+) / (\S+)", text).groups()
    session = requests.Session()
    token = re.search(r'name="csrf_token" value="([^"]+)"', session.get(url + "/login", timeout=10).text).group(1)
    session.post(url + "/login", data={"name": login, "password": password, "csrf_token": token}, timeout=10)
    return session


def perception(url):
    (tile,) = requests.get(f"{url}/api/tables", timeout=10).json()["tables"]
    return tile["health"]["perception"]


def test_a_round_with_the_auto_referee_ends_with_true_results_and_the_dashboard_stays_up(tmp_path):
    data = tmp_path / "data"
    demo, out, stop, codes, readers, url = start_demo(tmp_path, "auto")
    try:
        text = out.getvalue()
        table = service.table_id(EVENT, 1, 1)

        summary = next(line for line in text.splitlines() if line.startswith(f"{table}:"))
        assert "1 caught by the referee" in summary and "1 of them corrected" in summary, summary
        assert "0 went into the record unnoticed" in summary and "waiting" not in summary, summary
        assert "1/1 deal results, 1/1 round results equal the truth" in summary, summary
        assert f"{AUTO_REFEREE}: 1 correction" in text, text

        for page in ("/", "/results", f"/events/{EVENT}"):  # served after the tables are done
            assert requests.get(url + page, timeout=10).status_code == 200, page
        assert logged_in(url, text).get(url + "/flags/", timeout=10).status_code == 200  # the console, for a person
        floor = requests.get(url + "/", timeout=10).text
        standings = requests.get(f"{url}/events/{EVENT}", timeout=10).text
        sheet = requests.get(f"{url}/events/{EVENT}/sheets.csv", timeout=10).content.decode("utf-8-sig")
        tile = requests.get(f"{url}/api/tables", timeout=10).json()["tables"][0]
    finally:
        stop.set()
        demo.join(timeout=60)
    assert codes == [0]

    store = get_store(create_app({"DATA_DIR": str(data)}))
    (match,) = service.matches(store, EVENT, 1)
    assert tile["teams"] == {"NS": match.ns, "EW": match.ew} and match.ns in floor and match.ew in floor
    assert tile["health"]["perception"]["caught"] == 1 and tile["health"]["perception"]["uncaught"] == 0
    (correction,) = [e for e in store.events(table) if e["type"] == "correction"]
    assert correction["by"] == AUTO_REFEREE
    (result,) = store.records(table, types=("session_result",))
    assert result["reason"] == "deals" and sum(result["score"].values()) == 28
    assert service.match_state(store, match) == "final"  # both pairs signed
    names = {p["pair"]: p["name"] for p in service.pairs(store, EVENT)}
    rows = list(csv.DictReader(io.StringIO(sheet)))
    (line,) = [r for r in rows if r["line"] == "result"]  # the round's end named by the ruleset's limit (W1)
    assert line["ended"] == "deals" and line["signed"].startswith("final") and line["ns_name"] == names[match.ns]
    assert [r for r in rows if r["line"] == "ruling" and AUTO_REFEREE in r["note"] and "correction" in r["note"]]
    assert names[match.ns] in standings and names[match.ew] in standings
    (first, second) = service.standings_of(store, EVENT)
    assert first.rounds_played == second.rounds_played == 1


def test_a_correction_on_the_console_after_the_tables_are_done_closes_the_item_and_keeps_the_round_right(tmp_path):
    """With no floor referee the caught misread waits on the console. Its deal's result is
    right already: the seat the misread left holding a card went out with a last play that
    nobody followed. The person corrects the read there once the table is done: the item
    closes, and the floor tile's counts, the round's result and its signatures stay right
    while the demo stays up."""
    demo, out, stop, codes, readers, url = start_demo(tmp_path, "none")
    table = service.table_id(EVENT, 1, 1)
    try:
        summary = next(line for line in out.getvalue().splitlines() if line.startswith(f"{table}:"))
        assert "1 caught by the referee" in summary and "1 waiting on the flags console" in summary, summary
        assert "wait on the flags console" in out.getvalue()
        before = perception(url)
        assert (before["misread"], before["caught"], before["uncaught"], before["deals_right"]) == (1, 1, 0, 1)
        store = get_store(create_app({"DATA_DIR": str(tmp_path / "data")}))
        assert [r["reason"] for r in store.records(table, types=("review",))] == ["suspect_read"]

        person = logged_in(url, out.getvalue())
        console = person.get(url + "/flags/", timeout=10).text
        token = re.search(r'name="csrf_token" value="([^"]+)"', console).group(1)
        seat, cards = readers[0].target
        read = sorted(card_name(c) for c in cards[:-1])
        (misread,) = [e for e in person.get(f"{url}/api/tables/{table}/events", timeout=10).json()["events"]
                      if e["type"] == "play" and e["seat"] == seat and sorted(e["cards"]) == read]
        form = {"of": misread["id"], "seat": seat, "kind": "play", "cards": " ".join(card_name(c) for c in cards),
                "csrf_token": token}
        assert person.post(f"{url}/flags/{table}/correct", data=form, timeout=10).status_code in (200, 302)

        wait_for(lambda: not store.records(table, types=("review",)), 30, "the corrected read's item to close")
        after = perception(url)
        assert (after["misread"], after["caught"], after["uncaught"], after["deals_right"]) == (1, 1, 0, 1)
        (match,) = service.matches(store, EVENT, 1)
        wait_for(lambda: service.match_state(store, match) == "final", 30, "both pairs to sign the result")
        assert [s.rounds_played for s in service.standings_of(store, EVENT)] == [1, 1]
    finally:
        stop.set()
        demo.join(timeout=60)
    assert codes == [0]
