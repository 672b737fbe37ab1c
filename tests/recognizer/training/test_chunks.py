"""Chunked training: exact quarter turns of the detector's data, and a second chunk that
continues from the first, also in a copy holding only what git keeps of the folder (the
tiny classifier, a few seconds each; needs torch)."""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from recognizer.training.train import PACKAGE_MODELS, quarter_turn
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


def test_a_second_chunk_continues_from_the_first_and_a_clone_from_what_git_keeps(tmp_path, capsys):
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
    assert (work / done["init"]).resolve() == (PACKAGE_MODELS / "index-classifier.pt").resolve()  # the first from the committed weights
    assert then["init"] == "classifier/index-classifier.pt" and then["optimizer"] == "resumed"  # the second from the first's
    assert then["accuracy_before"] == done["accuracy_after"]
    assert state["classifier"] == "classifier/index-classifier.pt"
    assert done["mined_with"] == then["mined_with"] == state["detector"]  # no detector chunk yet: the committed one mined both
    assert (work / "classifier" / "index-classifier.onnx").stat().st_size > 100_000

    # What git keeps of the folder (its .gitignore leaves out data/): copied elsewhere, it resumes.
    ignored = (work / ".gitignore").read_text().split()
    assert "data/" in ignored and (work / "data" / "classifier-real.npz").exists()
    clone = tmp_path / "clone"  # beside it: the paths to recognizer/models stay right
    shutil.copytree(work, clone, ignore=shutil.ignore_patterns("data", "lock"))
    kept = {str(f.relative_to(clone)) for f in clone.rglob("*") if f.is_file()}
    assert kept == {".gitignore", "state.json", "classifier/index-classifier.pt", "classifier/index-classifier.onnx"}
    weights = sum((PACKAGE_MODELS / f"index-classifier.{s}").stat().st_size for s in ("pt", "onnx"))
    assert sum((clone / f).stat().st_size for f in kept) < weights + 100_000  # the log and one classifier: as small as the installed one
    assert main([a if a != str(work) else str(clone) for a in args] + ["--chunk-minutes", "0.05"]) == 0
    cloned = json.loads((clone / "state.json").read_text())["chunks"][2]["stages"][0]
    assert cloned["init"] == "classifier/index-classifier.pt" and cloned["optimizer"] == "fresh"
    assert cloned["accuracy_before"] == then["accuracy_after"]  # the same weights, the data drawn again alike

    capsys.readouterr()
    assert main(args[:-1] + ["5", "--chunk-minutes", "0.05"]) == 2
    assert "--seed 4" in capsys.readouterr().err
    (work / "lock").write_text(str(os.getpid()))  # a chunk still running there
    assert main(args + ["--chunk-minutes", "0.05"]) == 2
    assert f"another chunk (process {os.getpid()})" in capsys.readouterr().err
    assert len(json.loads((work / "state.json").read_text())["chunks"]) == 2
    (work / "lock").unlink()
    (work / "classifier" / "index-classifier.pt").unlink()  # a state whose weights were not committed
    assert main(args + ["--chunk-minutes", "0.05"]) == 2
    assert "classifier/index-classifier.pt, which is missing" in capsys.readouterr().err


def test_a_new_folder_can_start_from_a_fresh_wider_network_and_only_a_new_one(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    from recognizer.training.classifier_net import IndexClassifier, load_classifier

    work = tmp_path / "wide"
    args = ["train-recognizer", "--no-decks", "--resume", str(work), "--stage", "classifier", "--real", str(FIXTURE), "--render-scenes", "6", "--seed", "4",
            "--chunk-minutes", "0.05", "--augment", "--real-cuts", "1"]
    assert main(args + ["--classifier-widths", "8,8,16"]) == 0
    chunk = json.loads((work / "state.json").read_text())["chunks"][0]["stages"][0]
    assert chunk["init"] == "classifier/index-classifier.pt" and chunk["steps"] >= 1
    net = load_classifier(work / "classifier" / "index-classifier.pt")
    assert isinstance(net, IndexClassifier) and net.widths.tolist() == [8, 8, 16]
    assert net.features[2][3].out_channels == 16
    assert chunk["augment"] is True and chunk["real_cuts"] == 1
    with np.load(work / "data" / "classifier-real.npz") as data:
        one_cut = len(data["real_y"])
    assert main(args + ["--classifier-widths", "8,8,16"]) == 2  # the folder holds a network to continue
    assert "only start a new folder" in capsys.readouterr().err
    assert main(args) == 0  # continued as it is, without the widths
    assert load_classifier(work / "classifier" / "index-classifier.pt").widths.tolist() == [8, 8, 16]
    assert main(args[:-1] + ["2"]) == 0  # two cuts of each index: the real crops cut again
    with np.load(work / "data" / "classifier-real.npz") as data:
        assert len(data["real_y"]) > one_cut
    for bad in ("8,8", "8,x,8", "0,8,8"):
        with pytest.raises(SystemExit):
            main(args + ["--classifier-widths", bad])
        assert "three positive whole numbers" in capsys.readouterr().err
    assert torch.equal(load_classifier(PACKAGE_MODELS / "index-classifier.pt").members, torch.tensor(3))  # the installed blend of three loads as before


def test_a_detector_learning_rate_out_of_range_is_refused_by_name(tmp_path, capsys):
    args = ["train-recognizer", "--no-decks", "--resume", str(tmp_path / "run"), "--stage", "detector", "--real", str(FIXTURE), "--seed", "4"]
    for bad in ("0", "-0.01", "0.5"):
        assert main(args + ["--detector-lr0", bad]) == 2
        assert "the detector's learning rate must be in (0, 0.1]" in capsys.readouterr().err
    assert not (tmp_path / "run" / "state.json").exists()


def test_photometric_changes_crops_as_a_camera_would_and_keeps_them_crops():
    torch = pytest.importorskip("torch")
    from recognizer.training.chunks import photometric

    xb = torch.rand(64, 3, 48, 32)
    out = photometric(xb, torch.Generator().manual_seed(1), share=1.0)
    assert out.shape == xb.shape and float(out.min()) >= 0 and float(out.max()) <= 1
    assert bool((out - xb).abs().flatten(1).amax(1).gt(0.01).all())  # every crop changed
    assert torch.equal(out, photometric(xb, torch.Generator().manual_seed(1), share=1.0))  # the generator decides
    assert torch.equal(photometric(xb, torch.Generator().manual_seed(1), share=0.0), xb)
    soft = photometric(torch.rand(8, 3, 48, 32), torch.Generator().manual_seed(2), share=1.0)
    assert float(soft.diff(dim=3).abs().mean()) < 0.3  # softened: neighbouring pixels closer than noise's ~0.33


def test_photometric_shows_some_crops_grey_as_a_camera_without_colour_would():
    torch = pytest.importorskip("torch")
    import cv2

    from recognizer.training.chunks import photometric

    red = torch.zeros(300, 3, 48, 32)
    red[:, 2] = 0.8  # a red heart's ink, BGR
    out = photometric(red, torch.Generator().manual_seed(3), share=0.3)
    grey = (out[:, 0] - out[:, 2]).abs().flatten(1).amax(1) < 0.2  # channels alike but for noise
    assert 0.03 < float(grey.float().mean()) < 0.2  # a third of the 30 % chance: about one in ten
    plain = photometric(red[:1], torch.Generator().manual_seed(0), share=0.0)[0]
    as_opencv = cv2.cvtColor((plain.permute(1, 2, 0).numpy() * 255).astype("uint8"), cv2.COLOR_BGR2GRAY)
    assert abs(float(out[grey][0, 0].median()) * 255 - float(as_opencv.mean())) < 15  # OpenCV's lightness of that red
