"""The agent on a rendered table clip: stamped, ordered events with evidence in the outbox."""

import cv2
import numpy as np

from recognizer.training.table_video import Act, Script, TableRenderer, TruthReading, TruthReaders
from recognizer.table.watcher import TableWatcher
from referee.cards import parse_cards
from referee.events import parse_event
from web.app.agent.agent import TableAgent
from web.app.agent.outbox import Outbox

SCRIPT = Script(
    duration=6.0,
    acts=(
        Act(1.0, "S", "lay", tuple(parse_cards("3S 3H"))),
        Act(2.4, "E", "lay", tuple(parse_cards("5D 5C"))),
        Act(3.8, "N", "pass"),
    ),
)


class Woken:
    def __init__(self):
        self.count = 0

    def wake(self):
        self.count += 1


def play_clip(tmp_path, script=SCRIPT):
    truth = TruthReaders()
    outbox = Outbox(tmp_path / "out.sqlite", run="r")
    sender = Woken()
    agent = TableAgent("T9", outbox, TableWatcher(truth.by_seat(), crops_dir=tmp_path / "crops"), sender=sender)
    for frame in TableRenderer(script, size=(960, 540), fps=8).frames():
        truth.frame = frame
        agent.frame(frame.index, frame.t, frame.image)
    return agent, outbox, sender


def test_plays_and_passes_become_stamped_events_with_their_crops(tmp_path):
    agent, outbox, sender = play_clip(tmp_path)
    events = outbox.pending(1000)
    seen = [(e["type"], e.get("seat"), e.get("cards")) for e in events if e["type"] != "tick"]
    assert seen == [("play", "S", ["3S", "3H"]), ("play", "E", ["5D", "5C"]), ("pass", "N", None)]
    assert [e["id"] for e in events] == [f"r-{n}" for n in range(1, len(events) + 1)]
    assert all(e["table"] == "T9" and e["source"] == "camera" for e in events)
    times = [e["t"] for e in events]
    assert times == sorted(times)
    for e in events:
        parse_event(e)
    play = events[[e["type"] for e in events].index("play")]
    assert 1.0 <= play["t"] <= 2.0 and 0 < play["confidence"] <= 1
    (sha,) = play["evidence"]["frames"]
    crop = cv2.imdecode(np.frombuffer(outbox.evidence(sha), np.uint8), cv2.IMREAD_COLOR)
    assert crop is not None and crop.shape[0] > 50
    assert not list((tmp_path / "crops").glob("*.png"))  # the PNG became the outbox's JPEG
    assert sender.count == len(events)
    assert agent.status.calibration == "ok" and agent.status.last_read.startswith("N pass")


def test_a_tick_every_second_of_table_time(tmp_path):
    _, outbox, _ = play_clip(tmp_path)
    ticks = [e["t"] for e in outbox.pending(1000) if e["type"] == "tick"]
    assert len(ticks) == 5  # 6 s of frames: ticks at 1..5 s, dated behind the newest frame
    # one second apart, unless an observation dated later went out first (time never goes back)
    assert all(0.8 <= step <= 1.2 for step in np.diff(ticks))


def test_manual_events_are_stamped_in_line(tmp_path):
    outbox = Outbox(tmp_path / "out.sqlite", run="m")
    agent = TableAgent("T9", outbox, TableWatcher(TruthReaders().by_seat()))
    start = agent.manual({"type": "session_start", "t": 0.0, "teams": {"NS": "A", "EW": "B"}})
    later = agent.manual({"type": "deal_start", "t": -1.0, "deal": 1})
    assert start["source"] == "manual" and start["id"] == "m-1"
    assert later["t"] == 0.0  # never back in time


class ScriptedWatcher:
    """Stands in for the watcher: hands out given observations at given frames."""

    def __init__(self, by_frame):
        from recognizer.table.watcher import WatchSettings

        self.settings = WatchSettings()
        self.delay_s = self.settings.stable_s
        self.by_frame = by_frame

    def process(self, frame, t, index):
        return self.by_frame.get(index, [])


def obs(kind, seat, t, **extra):
    return {"type": kind, "seat": seat, "t": t, "source": "camera", "confidence": 1.0,
            "evidence": {"frame": 0, "crop": None}, **extra}


def test_observations_completed_in_one_frame_leave_in_the_order_of_their_dates(tmp_path):
    # the watcher lists areas in its own order; E acted before W and must go first
    watcher = ScriptedWatcher({
        10: [obs("pass", "W", 0.7), obs("play", "E", 0.6, cards=["5D"])],
    })
    outbox = Outbox(tmp_path / "o.sqlite")
    agent = TableAgent("T1", outbox, watcher)
    rng = np.random.default_rng(0)
    for index in range(30):
        agent.frame(index, index / 8, rng.integers(60, 200, (72, 128, 3), dtype=np.uint8))
    sent = [(e["type"], e["seat"], e["t"]) for e in outbox.pending() if e["type"] != "tick"]
    assert sent == [("play", "E", 0.6), ("pass", "W", 0.7)]


def run_frames(agent, frames):
    for index, (t, image) in enumerate(frames):
        agent.frame(index, t, image)


def clip_frames(script, fps=8):
    return [(f.t, f.image) for f in TableRenderer(script, size=(960, 540), fps=fps).frames()]


def test_black_frames_are_a_camera_fault_never_plays(tmp_path):
    truth = TruthReaders()
    outbox = Outbox(tmp_path / "o.sqlite")
    agent = TableAgent("T1", outbox, TableWatcher(truth.by_seat()))
    script = Script(duration=8.0, acts=(Act(5.5, "S", "lay", tuple(parse_cards("9S 9H"))),))
    rendered = list(TableRenderer(script, size=(960, 540), fps=8).frames())
    black = np.zeros_like(rendered[0].image)
    for f in rendered:
        truth.frame = f
        dark = 1.5 <= f.t < 3.0
        agent.frame(f.index, f.t, black if dark else f.image)
        if dark:
            assert agent.status.camera == "fault: black"
    events = [e for e in outbox.pending(1000) if e["type"] != "tick"]
    assert [(e["type"], e.get("source")) for e in events] == [("fault", "camera"), ("play", "camera")]
    assert "black" in events[0]["message"] and 1.5 <= events[0]["t"] < 2.0
    assert agent.status.camera == "ok"


class NoCards:
    def read(self, image):
        return TruthReading([])


def test_lost_markers_are_a_camera_fault(tmp_path):
    outbox = Outbox(tmp_path / "o.sqlite")
    agent = TableAgent("T1", outbox, TableWatcher(NoCards()))
    table = clip_frames(Script(duration=1.0, acts=()))
    rng = np.random.default_rng(1)
    covered = [(1.0 + n / 8, rng.integers(90, 160, table[0][1].shape, dtype=np.uint8)) for n in range(16)]
    run_frames(agent, table + covered)
    (fault,) = [e for e in outbox.pending(1000) if e["type"] == "fault"]
    assert "calibration lost" in fault["message"] and agent.status.calibration == "lost"


def test_a_reader_that_is_not_there_is_an_rfid_fault(tmp_path):
    from hardware.link import ReaderLink, port_opener
    from hardware.protocols import protocol_class
    from hardware.registry import TagRegistry
    from hardware.table import RfidTable
    from web.app.agent.loop import ReaderWatch

    cls = protocol_class("jsonl")
    link = ReaderLink(port_opener(str(tmp_path / "no-such-port"), cls.BAUDRATE), lambda sink, stats: cls(sink, stats),
                      retry=0.05)
    link.start()
    outbox = Outbox(tmp_path / "o.sqlite")
    agent = TableAgent("T1", outbox, TableWatcher(NoCards()), rfid=RfidTable(TagRegistry()))
    watch = ReaderWatch(agent, link, gone_after_s=3.0)
    try:
        for t in (0.0, 1.0, 2.9, 3.1, 5.0):
            watch.drain(t)
    finally:
        link.stop()
    (fault,) = [e for e in outbox.pending() if e["type"] == "fault"]
    assert (fault["source"], fault["t"], watch.status) == ("rfid", 3.1, "gone")
    assert "not connected for 3 s" in fault["message"]


def test_the_status_line_and_health_say_what_the_agent_knows(tmp_path):
    from types import SimpleNamespace

    from web.app.agent.status import health, line

    agent, outbox, _ = play_clip(tmp_path)
    sender = SimpleNamespace(reachable=False, problem="http://x/api: ConnectionError")
    text = line(agent, sender)
    assert "T9" in text and "fps" in text and "last read: N pass @" in text
    assert "calibration: ok" in text and f"outbox: {outbox.depth()}" in text and "server UNREACHABLE" in text
    body = health(agent)
    assert body["calibration"] == "ok" and body["camera"] == "ok" and body["outbox"] == outbox.depth()
    assert body["fps"] > 0 and 3.8 < body["last_read"] < 5.0
