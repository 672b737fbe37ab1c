"""Chunked training: exact quarter turns of the detector's data, and a second chunk that
continues from the first (the tiny classifier, a few seconds each; needs torch)."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from recognizer.training.train import quarter_turn
from web.app.cli import main

FIXTURE = Path(__file__).parents[1] / "fixtures" / "realphotos"


@pytest.mark.parametrize("k", [0, 1, 2, 3, 5])
def test_a_quarter_turn_keeps_every_box_tight_on_its_pixels(k):
    image = np.zeros((60, 100, 3), np.uint8)
    image[10:20, 30:45] = 255  # one bright box: x 30-45, y 10-20
    turned, boxes = quarter_turn(image, [[30, 10, 45, 20]], k)
    ys, xs = np.nonzero(turned[..., 0])
    assert boxes.tolist() == [[xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]]
    assert turned.shape[:2] == ((60, 100) if k % 2 == 0 else (100, 60))


def test_a_second_chunk_continues_from_the_first(tmp_path, capsys):
    pytest.importorskip("torch")
    work = tmp_path / "run"
    args = ["train-recognizer", "--no-decks", "--resume", str(work), "--stage", "classifier", "--real", str(FIXTURE), "--render-scenes", "6", "--seed", "4"]
    assert main(args + ["--chunk-minutes", "0.05"]) == 0
    first = json.loads((work / "state.json").read_text())
    assert main(args + ["--chunk-minutes", "0.05"]) == 0
    state = json.loads((work / "state.json").read_text())
    assert len(state["chunks"]) == 2 and state["chunks"][0] == first["chunks"][0]
    done, then = state["chunks"][0]["stages"][0], state["chunks"][1]["stages"][0]
    assert done["steps"] >= 1 and then["steps"] >= 1
    assert done["init"].endswith("recognizer/models/index-classifier.pt")  # the first from the committed weights
    assert then["init"] == str(work / "classifier" / "index-classifier.pt")  # the second from the first's
    assert then["accuracy_before"] == done["accuracy_after"]
    assert state["classifier"] == str(work / "classifier" / "index-classifier.pt")
    assert (work / "classifier" / "index-classifier.onnx").stat().st_size > 100_000
    capsys.readouterr()
    assert main(args[:-1] + ["5", "--chunk-minutes", "0.05"]) == 2
    assert "--seed 4" in capsys.readouterr().err
    (work / "lock").write_text(str(os.getpid()))  # a chunk still running there
    assert main(args + ["--chunk-minutes", "0.05"]) == 2
    assert f"another chunk (process {os.getpid()})" in capsys.readouterr().err
    assert len(json.loads((work / "state.json").read_text())["chunks"]) == 2
