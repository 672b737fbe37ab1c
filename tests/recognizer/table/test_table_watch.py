"""The whole pipeline on a rendered table clip (markers, four areas, hands, lighting,
flicker, a camera bump, cards turned face down) against the clip's ground truth.

The card reader here answers with the renderer's ground truth for each area
(:class:`TruthReaders`): this tests the segmentation logic — when areas are read, what
counts as a play, tokens, calibration — not card reading.
"""

from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from recognizer.training.table_video import Act, Script, TableRenderer, TruthReaders, demo_script
from recognizer.table.watcher import TableWatcher, WatchSettings

FPS = 10.0
LATENCY_S = 1.3  # hand dwell + retreat + one frame: when an area can first be still


class Counting:
    """Wraps a reader and counts reads per seat."""

    def __init__(self, readers):
        self.readers, self.counts = readers, Counter()

    def by_seat(self):
        return {seat: _Counted(self, seat) for seat in self.readers}


class _Counted:
    def __init__(self, owner, seat):
        self.owner, self.seat = owner, seat

    def read(self, image):
        self.owner.counts[self.seat] += 1
        assert image.shape == (260, 600, 3)  # the seat's area, upright, at 2 px/mm
        return self.owner.readers[self.seat].read(image)


def watch(script: Script, size=(1280, 720), crops_dir=None, settings=None):
    truth = TruthReaders()
    counting = Counting(truth.by_seat())
    watcher = TableWatcher(counting.by_seat(), settings=settings, crops_dir=crops_dir)
    events = []
    for frame in TableRenderer(script, size=size, fps=FPS).frames():
        truth.frame = frame
        events += watcher.process(frame.image, frame.t, frame.index)
    return events, counting.counts


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    crops = tmp_path_factory.mktemp("crops")
    events, counts = watch(demo_script(), crops_dir=crops)
    return events, counts


def key(event):
    return (event["type"], event.get("seat"), event.get("status"), tuple(event.get("cards", ())))


def test_observations_match_the_clip_ground_truth(demo):
    events, _ = demo
    expected = demo_script().expected()
    assert [key(e) for e in events] == [key(e) for e in expected]
    for got, want in zip(events, expected):
        assert want["t"] <= got["t"] <= want["t"] + LATENCY_S, (got, want)


def test_only_areas_whose_pixels_changed_are_read(demo):
    _, counts = demo
    visits = Counter(a.seat for a in demo_script().acts)
    frames = int(demo_script().duration * FPS)
    for seat, n in visits.items():
        # A few settles per hand visit (arrive, rest, leave) plus the first frame and the
        # bump, each read on two frames that agree; nothing while lighting changes or the
        # area lies untouched.
        assert counts[seat] <= 2 * (4 * n + 3), (seat, counts[seat])
    assert sum(counts.values()) < 0.1 * 4 * frames


def test_plays_carry_their_area_crop_as_evidence(demo):
    events, _ = demo
    crops = [e["evidence"]["crop"] for e in events if e["type"] == "play"]
    assert crops and all(crops)
    for path, event in zip(crops, [e for e in events if e["type"] == "play"]):
        assert f"{event['evidence']['frame']:06d}_{event['seat']}" in path
        assert cv2.imread(path).shape == (260, 600, 3)


def test_a_play_and_a_token_seen_at_one_frame_keep_a_crop_each(tmp_path):
    # The segmenter dates a play and a pass token that settle together by one frame; the
    # agent reads each observation's crop file and deletes it, so each needs its own.
    watcher = TableWatcher(TruthReaders().by_seat(), crops_dir=tmp_path)
    area = watcher.areas["W"]
    area.crops[412] = np.full((260, 600, 3), 90, np.uint8)
    paths = [watcher._save_crop(area, 412, "W", kind) for kind in ("play", "pass")]
    assert len(set(paths)) == 2 and all("000412_W" in p for p in paths)
    for path in paths:
        assert cv2.imread(path).shape == (260, 600, 3)
        Path(path).unlink()  # as the agent keeps it


def test_a_longer_stable_time_needs_longer_stillness():
    # S is still for 0.6 s between the two hands (gone at 2.2 s, back at 2.8 s).
    script = Script(
        duration=6.0,
        acts=(Act(1.5, "S", "lay", (0, 1)), Act(3.2, "S", "report")),
    )
    short, _ = watch(script, size=(960, 540), settings=WatchSettings(stable_s=0.5))
    long, _ = watch(script, size=(960, 540), settings=WatchSettings(stable_s=1.0))
    assert [e["type"] for e in short] == ["calibration", "play", "report"]
    assert [e["type"] for e in long] == ["calibration", "play", "report"]
    assert short[1]["t"] < 2.8 <= short[2]["t"]
    assert 2.8 <= long[1]["t"] == long[2]["t"]


def test_a_covered_camera_is_reported_lost_and_nothing_is_made_up_meanwhile():
    script = Script(duration=5.0, acts=(Act(1.0, "S", "lay", (0, 1)),))
    truth = TruthReaders()
    watcher = TableWatcher(truth.by_seat())
    events = []
    for frame in TableRenderer(script, size=(960, 540), fps=FPS).frames():
        truth.frame = frame
        image = frame.image if not 2.5 <= frame.t < 4.0 else np.full_like(frame.image, 12)  # lens covered
        events += watcher.process(image, frame.t, frame.index)
    assert [(e["type"], e.get("status")) for e in events] == [
        ("calibration", "ok"), ("play", None), ("calibration", "lost"), ("calibration", "ok"),
    ]
    # Last seen at 2.4 s: lost a second later.
    assert events[2]["t"] == pytest.approx(3.4) and events[3]["t"] == pytest.approx(4.0)


def test_frames_that_are_not_images_are_refused_by_name():
    watcher = TableWatcher(TruthReaders().by_seat())
    with pytest.raises(ValueError, match="frame 7: expected a BGR image"):
        watcher.process(cv2.imread("/nonexistent.png"), 0.0, 7)


def test_cards_taken_back_with_nobody_acting_since_are_a_take_back():
    # S lays a pair and takes it back; later W lays a single, N passes, and W's card is swept:
    # the end of a trick, not a take-back.
    script = Script(
        duration=17.0,
        acts=(Act(1.0, "S", "lay", (0, 1)), Act(3.0, "S", "clear"),
              Act(8.0, "W", "lay", (5,)), Act(10.0, "N", "pass"), Act(12.0, "W", "clear")),
    )
    events, _ = watch(script, size=(960, 540))
    assert [(e["type"], e.get("seat")) for e in events] == [
        ("calibration", None), ("play", "S"), ("take_back", "S"), ("play", "W"), ("pass", "N")]
    take_back = events[2]
    assert take_back["source"] == "camera"
    assert 3.0 + WatchSettings().hidden_s <= take_back["t"] <= 3.0 + WatchSettings().hidden_s + LATENCY_S
