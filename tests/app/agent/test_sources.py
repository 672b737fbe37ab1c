"""Frame sources: a folder of frames, a video file, pacing, and black/frozen camera checks."""

import cv2
import numpy as np
import pytest

from web.app.agent.sources import FrameCheck, folder_frames, paced, video_frames


def noisy(seed, shape=(72, 128, 3)):
    return np.random.default_rng(seed).integers(40, 220, shape, dtype=np.uint8)


def test_a_folder_plays_in_name_order_at_its_rate_skipping_unreadable_files(tmp_path):
    for n in (2, 0, 1):
        cv2.imwrite(str(tmp_path / f"f{n:03d}.png"), noisy(n))
    (tmp_path / "f001b.png").write_bytes(b"not an image")
    (tmp_path / "notes.txt").write_text("ignored")
    got = list(folder_frames(tmp_path, fps=4))
    assert [(i, t) for i, t, _ in got] == [(0, 0.0), (1, 0.25), (3, 0.75)]
    assert np.array_equal(got[2][2], noisy(2))


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "missing", "is not a directory"),
    (lambda p: p, "holds no images"),
])
def test_bad_folders_are_named(tmp_path, make, message):
    with pytest.raises(ValueError, match=message):
        list(folder_frames(make(tmp_path), fps=10))


def test_a_video_file_is_dated_by_its_frame_rate(tmp_path):
    path = str(tmp_path / "clip.avi")
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), 5.0, (128, 72))
    for n in range(4):
        writer.write(noisy(n))
    writer.release()
    assert [(i, round(t, 3)) for i, t, _ in video_frames(path)] == [(0, 0.0), (1, 0.2), (2, 0.4), (3, 0.6)]


def test_paced_frames_wait_for_their_time():
    now = [100.0]
    slept = []

    def sleep(s):
        slept.append(round(s, 6))
        now[0] += s

    frames = [(i, t, None) for i, t in enumerate((5.0, 5.5, 7.0))]
    assert [t for _, t, _ in paced(frames, speed=2.0, clock=lambda: now[0], sleep=sleep)] == [5.0, 5.5, 7.0]
    assert slept == [0.25, 0.75]
    with pytest.raises(ValueError, match="speed must be > 0"):
        list(paced(frames, speed=0))


def test_black_then_frozen_then_live_frames():
    check = FrameCheck(frozen_s=1.0)
    black = np.zeros((72, 128, 3), np.uint8)
    assert check.check(noisy(1), 0.0) is None and check.good
    assert check.check(black, 0.1) == "black" and not check.good
    assert check.check(black, 0.2) is None
    still = noisy(2)
    assert check.check(still, 0.3) == "ok"
    assert [check.check(still, t) for t in (0.5, 1.0)] == [None, None]
    assert check.check(still, 1.4) == "frozen" and not check.good
    assert check.check(noisy(3), 1.5) == "ok"
