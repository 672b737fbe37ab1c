"""End to end: a simulated table's frames through the agent, over HTTP, into the real server.

The server is the dashboard app (``create_app``) on a threaded WSGI server on a free
loopback port, with SQLite in a temporary data directory; the agent posts to it exactly
as ``guandan-ref agent`` does.
"""

import re
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from recognizer.training.table_video import TableRenderer, TruthReaders
from recognizer.table.watcher import TableWatcher
from web.app.agent.agent import TableAgent
from web.app.agent.demo import DemoOptions, DemoServer, make_table
from web.app.agent.outbox import Outbox
from web.app.agent.poster import Poster
from web.app.agent.sender import Sender
from web.app.agent.simtable import plan_table
from web.app.agent.truth import deal_results, truth_records

MODELS = Path(__file__).parents[3] / "recognizer" / "models"
SEED = 2
"""A short first deal (81 camera events) with a planted P4, R1, R2 and K3."""


@pytest.fixture
def server(tmp_path):
    running = DemoServer(tmp_path / "data", 0)
    yield running
    running.stop()


def flags_of(records):
    return Counter((r["rule"], r["seat"]) for r in records if r["type"] == "flag")


def console_of(server):
    """A client logged in as a floor referee, for the flags console."""
    password = server.login("floor")
    console = server.app.test_client()
    token = re.search(r'name="csrf_token" value="([^"]+)"', console.get("/login").get_data(as_text=True)).group(1)
    assert console.post("/login", data={"name": "floor", "password": password, "csrf_token": token}).status_code == 302
    return console


@pytest.mark.skipif(not (MODELS / "index-detector.onnx").exists(), reason="card reader models not installed")
def test_one_deal_through_the_real_recognizer_agent_and_server(server, tmp_path):
    options = DemoOptions(tables=1, deals=1, speed=1000.0, brisk=0.2, breaches=0.05)
    table = make_table("T1", SEED, options, server.url, server.token("T1"), tmp_path / "agents")
    table.start(threading.Event())
    table.join()
    table.sender.stop(drain_s=30.0)
    assert table.error is None
    assert table.agent.outbox.depth() == 0 and not table.sender.rejected

    records = server.store.records("T1")
    truth = truth_records(table.plan.truth)
    (result,) = deal_results(records)
    assert [result] == deal_results(truth)
    planted = Counter(table.plan.expected_flags)
    assert {rule for rule, _ in planted} >= {"P4", "R1", "R2", "K3"}
    assert not planted - flags_of(records), f"planted {planted}, flagged {flags_of(records)}"
    perception = table.perception(server.store)
    assert perception.misread == 0, perception.details
    stored = server.store.events("T1")
    play = next(e for e in stored if e["type"] == "play")
    assert play["source"] == "camera" and len(play["evidence"]["frames"]) == 1


@pytest.mark.skipif(not (MODELS / "index-detector.onnx").exists(), reason="card reader models not installed")
def test_a_misread_the_referee_caught_and_corrected_on_the_console_puts_the_deal_right(server, tmp_path):
    """At this table, filmed by a 720p camera, the reader takes W's 2S for a 2C in a straight
    (a suit sign of a few pixels; the demo's 1080p camera reads it right), which is still a straight; when W later lays the real 2C, the referee sees a
    card laid twice (by W, or a third time in the deal) and asks at that play, naming the
    earlier read as one that may be wrong (which of the two items depends on what the reader
    made of the deal's other plays: both are the referee's, unit-tested in tests/referee). The referee at the console corrects the earlier read (here the test knows what
    lay there, as the referee looking at the table does); the referee replays the deal with
    the play corrected and the recorded result is the true one, and the demo's count (the
    floor tile) still has the misread caught, now corrected."""
    options = DemoOptions(tables=1, deals=1, speed=1000.0, brisk=0.2, breaches=0.05, size=(1280, 720))
    table = make_table("T1004", 1004, options, server.url, server.token("T1004"), tmp_path / "agents")
    table.start(threading.Event())
    table.join()
    table.sender.stop(drain_s=30.0)
    assert table.error is None

    records = server.store.records("T1004")
    truth = deal_results(truth_records(table.plan.truth))
    perception = table.perception(server.store)
    assert perception.misread >= 1 and perception.caught == perception.misread, perception.details

    asked = {r.get("of") for r in records if r["type"] == "review"}
    asked |= {e["of"] for r in records if r["type"] == "review" for e in (r.get("detail") or {}).get("earlier", ())}
    true_plays = [e for e in table.plan.seen if e["type"] == "play"]
    misread = []
    for answer in table.sender.answers:
        sent = answer.event
        if sent["type"] != "play":
            continue
        true = min((e for e in true_plays if e["seat"] == sent["seat"]), key=lambda e: abs(e["t"] - sent["t"]))
        if sorted(true["cards"]) != sorted(sent["cards"]):
            misread.append((sent, true))
    assert misread and all(sent["id"] in asked for sent, _ in misread)  # every misread play is named by a review
    again = [r for r in records if r["type"] == "review" and r["detail"].get("what") in ("laid_again", "seen_again")]
    assert again and all(any(e["of"] == sent["id"] for r in again for e in r["detail"]["earlier"]) for sent, _ in misread)

    console = console_of(server)
    token = re.search(r'name="csrf_token" value="([^"]+)"', console.get("/flags/").get_data(as_text=True)).group(1)
    for sent, true in misread:
        form = {"of": sent["id"], "seat": sent["seat"], "kind": "play", "cards": " ".join(true["cards"]),
                "csrf_token": token}
        assert console.post("/flags/T1004/correct", data=form).status_code == 302
    corrections = [e for e in server.store.events("T1004") if e["type"] == "correction"]
    assert len(corrections) == len(misread)
    assert deal_results(server.store.records("T1004")) == truth
    after = table.perception(server.store)  # what the floor tile shows: still caught, now corrected
    assert (after.misread, after.caught, after.corrected, after.uncaught) == (
        perception.misread, perception.misread, len(misread), 0), after.details


def test_a_server_outage_mid_deal_loses_and_doubles_nothing(tmp_path):
    """The server is stopped for 10 s mid-deal and restarted on the same data; the agent
    keeps watching and buffering meanwhile. Ground-truth readers: this is about transport."""
    data = tmp_path / "data"
    server = DemoServer(data, 0)
    port, token = server._server.server_port, server.token("T1")
    plan = plan_table(SEED, 1, "T1", breaches=0.05, brisk=0.2)
    truth_readers = TruthReaders()
    outbox = Outbox(tmp_path / "agent" / "T1.sqlite")
    sender = Sender(outbox, Poster(server.url, "T1", token, timeout=2.0), max_backoff=1.0)
    agent = TableAgent("T1", outbox, TableWatcher(truth_readers.by_seat(), crops_dir=tmp_path / "crops"), sender=sender)
    sender.start()
    manual = list(plan.manual)
    renderer = TableRenderer(plan.script, size=(1280, 720), fps=8)
    count = int(plan.script.duration * renderer.fps)
    down_at = None
    seen_down = []  # (outbox depth, sender reachable) just before the restart

    def restart():
        seen_down.append((outbox.depth(), sender.reachable))
        return DemoServer(data, port)

    try:
        for n, frame in enumerate(renderer.frames()):
            if n == count // 3:
                server.stop()
                down_at = time.monotonic()
            while manual and manual[0]["t"] <= frame.t:
                agent.manual(manual.pop(0))
            truth_readers.frame = frame
            agent.frame(frame.index, frame.t, frame.image)
            if down_at is not None and time.monotonic() - down_at >= 10.0:
                server, down_at = restart(), None
        if down_at is not None:  # the frames ran out first: the rest of the outage, then back
            time.sleep(max(0.0, 10.0 - (time.monotonic() - down_at)))
            server = restart()
        agent.advance(frame.t + 5.0)
        sender.stop(drain_s=30.0)
        stored = server.store.events("T1")
        records = server.store.records("T1")
    finally:
        server.stop()
    ((depth_during, reachable_during),) = seen_down
    assert depth_during > 5 and reachable_during is False  # events waited while the server was away
    assert outbox.depth() == 0
    ids = [e["id"] for e in stored]
    made = [a.event["id"] for a in sender.answers if a.result["status"] in ("accepted", "duplicate")]
    assert len(ids) == len(set(ids)) == len(set(made)) and set(ids) == set(made)
    assert not [a for a in sender.answers if a.result["status"] == "rejected"]
    assert [e["seq"] for e in stored] == list(range(1, len(stored) + 1))
    assert deal_results(records) == deal_results(truth_records(plan.truth))


@pytest.mark.skipif(not (MODELS / "index-detector.onnx").exists(), reason="card reader models not installed")
def test_a_card_only_rfid_can_tell_is_flagged_d3_through_the_simulated_reader_on_a_pty(server, tmp_path):
    """With --rfid-sim: E's second play of seed 147 has a card of another deck (same face).
    The camera reads the face as usual; the simulated reader writes its tag on a pty, the
    agent reads the pty with the jsonl parser, its deck check names the stranger, the
    referee flags D3 for E and the flag is on the flags console."""
    options = DemoOptions(tables=1, deals=1, speed=1000.0, brisk=0.2, breaches=0.05, rfid_sim=True)
    table = make_table("T1", 147, options, server.url, server.token("T1"), tmp_path / "agents")
    (stranger,) = [r for r in table.plan.reads if r.tag not in table.plan.registry]
    assert ("D3", "E") in table.plan.expected_flags and table.reader is not None

    stop = threading.Event()

    def stop_after_the_swap():  # the rest of the deal adds nothing here
        while not table.done:
            if table.fed and table.fed[-1][0] > stranger.t + 6.0:
                stop.set()
                return
            time.sleep(0.05)

    threading.Thread(target=stop_after_the_swap, daemon=True).start()
    table.start(stop)
    table.join()
    assert table.error is None and stop.is_set()
    table.agent.advance(table.fed[-1][0] + 5.0)
    table.sender.stop(drain_s=30.0)

    assert table.reader.link.stats["reads"] > 0  # the tags crossed the pty and the parser
    stored = server.store.events("T1")
    (anomaly,) = [e for e in stored if e["type"] == "deck_anomaly"]
    assert anomaly["source"] == "rfid" and anomaly["seat"] == "E"
    play = next(e for e in stored if e["type"] == "play" and e["seat"] == "E" and e["source"] == "fused"
                and stranger.tag.upper() in e["evidence"]["tags"])
    assert play["cards"]  # the camera named the card RFID could not
    flags = flags_of(server.store.records("T1"))
    assert flags[("D3", "E")] == 1, flags
    page = console_of(server).get("/flags/").get_data(as_text=True)  # where the referee sees it
    assert page.count('data-table="T1" data-rule="D3" data-seat="E"') == 1
