"""``guandan-ref agent`` on a folder of frames against the real server; bad input in one line."""

from pathlib import Path

import cv2
import pytest

from recognizer.training.table_video import Act, Script, TableRenderer
from referee.cards import parse_cards
from web.app.agent.demo import DemoServer
from web.app.cli import main

MODELS = Path(__file__).parents[3] / "recognizer" / "models"


@pytest.mark.skipif(not (MODELS / "index-detector.onnx").exists(), reason="card reader models not installed")
def test_the_agent_command_sends_a_folder_of_frames_to_the_server(tmp_path, capsys, caplog):
    script = Script(duration=5.0, acts=(
        Act(0.8, "S", "lay", tuple(parse_cards("3S 3H"))),
        Act(2.2, "E", "lay", tuple(parse_cards("7D 8C 9D TS JH"))),
        Act(3.4, "W", "pass"),
    ))
    frames = tmp_path / "frames"
    frames.mkdir()
    for f in TableRenderer(script, size=(1280, 720), fps=8).frames():
        cv2.imwrite(str(frames / f"{f.index:05d}.jpg"), f.image)
    operator = tmp_path / "operator.jsonl"
    operator.write_text('{"type": "session_start", "teams": {"NS": "Red", "EW": "Blue"}}\n'
                        'not json\n'
                        '{"type": "deal_start", "deal": 1, "first_leader": "S"}\n')
    server = DemoServer(tmp_path / "data", 0)
    try:
        token = server.token("T5")
        code = main(["agent", "--table", "T5", "--server", server.url, "--token", token, "--frames", str(frames),
                     "--fps", "8", "--speed", "50", "--outbox", str(tmp_path / "outbox"), "--operator", str(operator)])
        stored = server.store.events("T5")
    finally:
        server.stop()
    assert code == 0
    seen = [(e["type"], e.get("seat"), e.get("cards"), e["source"]) for e in stored if e["type"] != "tick"]
    assert seen == [
        ("session_start", None, None, "manual"), ("deal_start", None, None, "manual"),
        ("play", "S", ["3S", "3H"], "camera"), ("play", "E", ["7D", "8C", "9D", "TS", "JH"], "camera"),
        ("pass", "W", None, "camera"),
    ]
    assert "operator line 2 skipped" in caplog.text
    assert "0 rejected, 0 waiting" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--frames", "/nonexistent"], "is not a directory"),
    (["--frames", ".", "--rfid", "loop://"], "--rfid needs --protocol and --registry"),
    (["--video", "x.mp4", "--stable", "-1"], "--stable must be >= 0"),
])
def test_bad_agent_options_are_one_line(extra, message, tmp_path, capsys):
    code = main(["agent", "--table", "T1", "--server", "http://127.0.0.1:9", "--token", "x",
                 "--outbox", str(tmp_path / "o"), *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_the_demo_wants_a_fresh_data_directory(tmp_path, capsys):
    (tmp_path / "store.sqlite").write_text("")
    assert main(["demo", "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is not empty" in err and len(err.strip().splitlines()) == 1
    assert main(["demo", "--tables", "0", "--data", str(tmp_path / "new")]) == 2
    assert "--tables must be between 1 and 16" in capsys.readouterr().err


def test_the_demo_films_at_the_frame_size_asked(tmp_path, capsys, monkeypatch):
    from web.app.agent import demo

    asked = []
    monkeypatch.setattr(demo, "run", lambda options: asked.append(options) or 0)
    assert main(["demo", "--frame", "1280x720", "--data", str(tmp_path / "a")]) == 0
    assert main(["demo", "--data", str(tmp_path / "b")]) == 0
    assert [o.size for o in asked] == [(1280, 720), (1920, 1080)]
    for bad, message in (("720p", "a frame size is WIDTHxHEIGHT, like 1920x1080, got '720p'"),
                         ("100x100", "frame size 100x100 is outside 320x240 .. 7680x4320")):
        with pytest.raises(SystemExit) as exit_:
            main(["demo", "--frame", bad])
        assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_the_demo_draws_its_cards_from_photographed_faces(tmp_path, capsys):
    from recognizer.training.synth import HELD_OUT_PROCEDURAL
    from recognizer.training.synth.photos import PhotoDeck, faces_of_design
    from referee.cards import FACES, card_name
    from web.app.agent.demo import DemoOptions, card_design, make_table

    faces = tmp_path / "faces"
    faces.mkdir()
    for card, img in faces_of_design(HELD_OUT_PROCEDURAL[1], FACES[:52]).items():
        cv2.imwrite(str(faces / f"{card_name(card)}.jpg"), img)
    options = DemoOptions(tables=1, deck_photos=faces)
    table = make_table("T1", 1, options, "http://127.0.0.1:9", "token", tmp_path / "agents")
    assert isinstance(table.design, PhotoDeck) and table.design is card_design(options)  # read once a run
    assert make_table("T2", 2, DemoOptions(tables=1), "http://127.0.0.1:9", "token", tmp_path / "agents").design is None
    assert main(["demo", "--deck-photos", str(tmp_path / "nowhere"), "--data", str(tmp_path / "new")]) == 2
    err = capsys.readouterr().err
    assert "no such folder of faces" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "new").exists()  # refused before the demo's server started


def test_the_demo_reads_with_an_enrolled_decks_classifier(tmp_path, capsys, monkeypatch):
    import shutil

    from recognizer.decks import DECK_CLASSIFIER, deck_folder
    from recognizer.reader import MODELS
    from web.app.agent import demo

    monkeypatch.setenv("GUANDAN_DATA", str(tmp_path / "decks"))
    assert main(["demo", "--deck", "club", "--data", str(tmp_path / "new")]) == 2
    err = capsys.readouterr().err
    assert "no enrolled deck 'club'" in err and "deck enroll" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "new").exists()  # refused before the demo's server started
    folder = deck_folder(None, "club")
    folder.mkdir(parents=True)
    shutil.copy(MODELS / "index-classifier.onnx", folder / DECK_CLASSIFIER)  # as deck enroll leaves it
    asked, real = [], demo.default_reader
    monkeypatch.setattr(demo, "default_reader", lambda deck=None: asked.append(deck) or real(deck))
    demo.make_table("T1", 1, demo.DemoOptions(tables=1, deck="club"), "http://127.0.0.1:9", "token", tmp_path / "agents")
    assert asked == ["club"]
