"""The table commands through the ``guandan-ref`` dispatcher."""

import json

import pytest

from recognizer.table import frames, watcher
from web.app.cli import main


class Blind:
    """A reader that sees no cards: what remains comes from markers alone."""

    def __init__(self, deck=None, data=None):
        self.deck = deck

    def read(self, image):
        return type("Reading", (), {"cards": [], "confidence": 1.0, "uncertain": False, "alternatives": []})()


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    folder = tmp_path_factory.mktemp("clip")
    video, truth = folder / "demo.avi", folder / "truth.jsonl"
    assert main(["render-table", "--out", str(video), "--truth", str(truth), "--size", "960x540", "--fps", "5"]) == 0
    return video, [json.loads(line) for line in truth.read_text().splitlines()]


def test_watch_a_video_prints_json_lines_of_tokens_and_calibration(clip, capsys, monkeypatch):
    video, truth = clip
    monkeypatch.setattr(watcher, "default_reader", Blind)
    assert main(["watch", "--video", str(video), "--json"]) == 0
    # Observations come out when complete, so a report may follow a later status line.
    events = sorted((json.loads(line) for line in capsys.readouterr().out.splitlines()), key=lambda e: e["t"])
    from_markers = [(e["type"], e.get("seat"), e.get("status")) for e in truth if e["type"] != "play"]
    assert [(e["type"], e.get("seat"), e.get("status")) for e in events] == from_markers
    assert all(e["source"] == "camera" for e in events if e["type"] != "calibration")


def test_watch_without_json_prints_readable_lines(clip, capsys, monkeypatch):
    monkeypatch.setattr(watcher, "default_reader", Blind)
    assert main(["watch", "--video", str(clip[0]), "--stable", "0.4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("calibration ok") and any(" N pass " in line for line in lines)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["watch", "--video", "nope.mp4"], "cannot open video 'nope.mp4'"),
        (["watch", "--video", "x.mp4", "--stable", "-1"], "--stable must be >= 0"),
        (["watch", "--video", "x.mp4", "--calibration", "nope.toml"], "cannot read table layout nope.toml"),
        (["render-table", "--out", "x.avi", "--size", "big"], "--size must be WIDTHxHEIGHT"),
        (["table-sheets", "--out", "x", "--dpi", "5"], "--dpi must be between"),
    ],
)
def test_bad_arguments_get_one_line_errors(argv, message, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(watcher, "default_reader", Blind)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_table_sheets_writes_pdf_and_pngs(tmp_path, capsys):
    assert main(["table-sheets", "--out", str(tmp_path), "--dpi", "100"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table-sheets-1.png", "table-sheets-2.png", "table-sheets.pdf"]


def test_recognize_table_prints_one_json_line_per_frame(clip, tmp_path, capsys, monkeypatch):
    import cv2

    from recognizer.table.capture import video_frames

    frame = next(f for i, _, f in video_frames(str(clip[0])) if i == 40)  # N's pass token is down
    path = tmp_path / "frame.png"
    cv2.imwrite(str(path), frame)
    monkeypatch.setattr(frames, "default_reader", Blind)
    main(["recognize", "--table", str(path), str(tmp_path / "missing.png")])
    first, second = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert first["image"] == str(path) and first["N"]["tokens"] == ["pass"]
    assert all(first[seat]["cards"] == [] for seat in "NESW")
    assert second["image"].endswith("missing.png") and "error" in second


def test_watch_reads_with_an_enrolled_deck_or_says_it_is_missing(clip, tmp_path, capsys, monkeypatch):
    made = []
    monkeypatch.setattr(watcher, "default_reader", lambda deck=None, data=None: made.append((deck, data)) or Blind())
    assert main(["watch", "--video", str(clip[0]), "--json", "--deck", "club", "--data", str(tmp_path)]) == 0
    assert made == [("club", str(tmp_path))]
    monkeypatch.undo()
    assert main(["watch", "--video", str(clip[0]), "--deck", "club", "--data", str(tmp_path)]) == 2
    assert "no enrolled deck 'club'" in capsys.readouterr().err
