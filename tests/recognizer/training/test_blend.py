"""Blending index classifiers: one network whose logits are the weighted sum of its
members', which deck enrolment can still adapt (needs torch)."""

import numpy as np
import pytest

from recognizer.crops import CROP_H, CROP_W
from recognizer.reader import _session
from web.app.cli import main

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

from recognizer.training.classifier_net import FLAT, BlendedClassifier, IndexClassifier, load_classifier  # noqa: E402
from recognizer.training.enroll import _features  # noqa: E402


def members(tmp_path, n: int = 2) -> list:
    """``n`` classifiers with weights of their own (random, as the test needs only that they differ)."""
    paths = []
    for seed in range(n):
        torch.manual_seed(seed)
        net = IndexClassifier().eval()
        for p in net.parameters():
            torch.nn.init.normal_(p, std=0.05)
        paths.append(tmp_path / f"member{seed}.pt")
        torch.save(net.state_dict(), paths[-1])
    return paths


def logits_of(onnx_path, crops: np.ndarray) -> np.ndarray:
    session = _session(onnx_path, 1)
    return session.run(None, {session.get_inputs()[0].name: crops})[0]


def test_a_blend_reads_as_the_weighted_sum_of_its_members_and_enrolment_adapts_its_head(tmp_path, capsys):
    a, b = members(tmp_path)
    assert main(["blend-classifiers", f"{a}:0.25", f"{b}:0.75", "--out", str(tmp_path / "blend")]) == 0
    assert "blend of 2 classifiers" in capsys.readouterr().out
    crops = np.random.default_rng(0).random((9, 3, CROP_H, CROP_W), np.float32)
    with torch.no_grad():
        la, lb = (load_classifier(p).eval()(torch.from_numpy(crops)).numpy() for p in (a, b))
    blended = logits_of(tmp_path / "blend" / "index-classifier.onnx", crops)
    assert np.allclose(blended, 0.25 * la + 0.75 * lb, atol=1e-4)
    assert not np.allclose(la, lb, atol=1e-2)  # the members do differ: the blend is no copy of one
    again = load_classifier(tmp_path / "blend" / "index-classifier.pt")  # a blend names its members: it loads as one
    assert isinstance(again, BlendedClassifier) and int(again.members) == 2
    with torch.no_grad():
        assert np.allclose(again.eval()(torch.from_numpy(crops)).numpy(), blended, atol=1e-4)
    model = onnx.load(str(tmp_path / "blend" / "index-classifier.onnx"))
    assert _features(model, (crops * 255).astype(np.uint8).transpose(0, 2, 3, 1)).shape == (9, 2 * FLAT)


def test_a_blend_names_what_is_wrong_with_its_members(tmp_path, capsys):
    a, b = members(tmp_path)
    main(["blend-classifiers", str(a), str(b), "--out", str(tmp_path / "blend")])
    capsys.readouterr()
    for args, says in (([f"{a}:0"], "the weight must be positive"), ([f"{a}:heavy"], "the weight a number"),
                       ([str(tmp_path / "none.pt")], "no classifier state dict"),
                       ([str(tmp_path / "blend" / "index-classifier.pt")], "is a blend already")):
        assert main(["blend-classifiers", *args, "--out", str(tmp_path / "other")]) == 2
        assert says in capsys.readouterr().err
    with pytest.raises(ValueError, match="one positive weight per member"):
        BlendedClassifier.of([load_classifier(a)], [0.5, 0.5])
