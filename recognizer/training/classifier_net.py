"""The index classifier network (training side only: needs torch; the table runs its ONNX export).

Small on purpose: 48 x 32 colour crops, three conv blocks and one hidden layer, a few
million multiply-adds per crop, so twenty crops cost a few milliseconds on one core.
The flattened (not pooled) features keep where the rank sits in the crop, which is
what tells an upright index from an upside-down one.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from recognizer.crops import CROP_H, CROP_W, N_CLASSES

WIDTHS = (16, 32, 64)
"""The channels of the three conv blocks (the installed classifier's; a network can be
built wider, :class:`IndexClassifier`)."""
HIDDEN = 192


def flat(widths: tuple[int, int, int] = WIDTHS) -> int:
    """Features the conv blocks hand the head: (last block's channels) x (the crop / 8)."""
    return widths[2] * (CROP_H // 8) * (CROP_W // 8)


FLAT = flat()
"""Features one blend member's conv blocks hand its head."""


def _block(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
    )


def _features(widths: tuple[int, int, int] = WIDTHS) -> nn.Sequential:
    return nn.Sequential(_block(3, widths[0]), _block(widths[0], widths[1]), _block(widths[1], widths[2]))


class IndexClassifier(nn.Module):
    """One network; ``widths`` (kept in the state dict as a buffer, so a file says how to
    rebuild it: :func:`load_classifier`) are its blocks' channels. Twice the widths cost
    about four times the multiply-adds a crop."""

    def __init__(self, widths: tuple[int, int, int] = WIDTHS) -> None:
        super().__init__()
        if len(widths) != 3 or min(widths) < 1:
            raise ValueError(f"a classifier needs three positive block widths, got {widths}")
        self.register_buffer("widths", torch.tensor(widths))
        self.features = _features(widths)
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(flat(widths), HIDDEN), nn.ReLU(inplace=True), nn.Linear(HIDDEN, N_CLASSES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


class BlendedClassifier(nn.Module):
    """Several index classifiers as one network whose logits are the weighted sum of
    theirs (a weighted geometric mean of their probabilities).

    Why: a classifier that learnt from photographs reads photographs better and a rendered
    deck it never saw worse than the one that learnt from renders alone; the blend of the
    two reads both about as well as the better one (recognizer/MODEL.md). It stays one
    graph whose head is two linear layers, as deck enrolment adapts it
    (``recognizer.training.enroll``): the members' conv features side by side, the first
    head layer block-diagonal over them, the second their weighted sum. ``members`` (a
    buffer, so the state dict says how to rebuild it: :func:`load_classifier`).
    """

    def __init__(self, members: int) -> None:
        super().__init__()
        if members < 1:
            raise ValueError(f"a blend needs at least one member, got {members}")
        self.register_buffer("members", torch.tensor(members))
        self.features = nn.ModuleList(_features() for _ in range(members))
        self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(members * FLAT, members * HIDDEN), nn.ReLU(inplace=True),
                                  nn.Linear(members * HIDDEN, N_CLASSES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.cat([f(x).flatten(1) for f in self.features], 1))

    @classmethod
    def of(cls, nets: list[IndexClassifier], weights: list[float]) -> BlendedClassifier:
        """The blend of trained ``nets`` whose logits are ``weights``-weighted: exact, no training."""
        if len(nets) != len(weights) or any(w <= 0 for w in weights):
            raise ValueError(f"one positive weight per member: {len(nets)} members, weights {weights}")
        blend = cls(len(nets))
        with torch.no_grad():
            first, second = blend.head[1], blend.head[3]
            first.weight.zero_()
            for i, (net, w) in enumerate(zip(nets, weights)):
                blend.features[i].load_state_dict(net.features.state_dict())
                a, b = net.head[2], net.head[4]
                first.weight[i * HIDDEN : (i + 1) * HIDDEN, i * FLAT : (i + 1) * FLAT] = a.weight
                first.bias[i * HIDDEN : (i + 1) * HIDDEN] = a.bias
                second.weight[:, i * HIDDEN : (i + 1) * HIDDEN] = w * b.weight
            second.bias.copy_(sum(w * net.head[4].bias for net, w in zip(nets, weights)))
        return blend.eval()


def load_classifier(path: Path) -> nn.Module:
    """The classifier whose state dict ``path`` holds: a plain one, or a blend (it names its members)."""
    state = torch.load(path, map_location="cpu")
    if "members" in state:
        net = BlendedClassifier(int(state["members"]))
    else:
        state.setdefault("widths", torch.tensor(WIDTHS))  # written before networks were built wider
        net = IndexClassifier(tuple(int(w) for w in state["widths"]))
    net.load_state_dict(state)
    return net


def save_classifier(net: nn.Module, folder: Path) -> Path:
    """``net`` into ``folder`` as ``index-classifier.pt`` (its state dict, to continue from) and
    ``index-classifier.onnx`` (what the reader runs: ``crops`` in, ``logits`` out); returns the ONNX."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(net.state_dict(), folder / "index-classifier.pt")
    net.eval()
    out = folder / "index-classifier.onnx"
    torch.onnx.export(net, torch.zeros(1, 3, CROP_H, CROP_W), str(out), input_names=["crops"], output_names=["logits"],
                      dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}}, opset_version=17, dynamo=False)
    return out


def blend_files(members: list[tuple[Path, float]], folder: Path) -> Path:
    """The blend (:class:`BlendedClassifier`) of the plain classifiers whose state dicts
    ``members`` name, each with its weight, saved into ``folder``; returns its ONNX."""
    nets = []
    for path, _ in members:
        net = load_classifier(path)
        if not isinstance(net, IndexClassifier):
            raise ValueError(f"{path} is a blend already: name its members instead")
        if tuple(net.widths.tolist()) != WIDTHS:
            raise ValueError(f"{path} is {tuple(net.widths.tolist())} wide: a blend's members are {WIDTHS} wide")
        nets.append(net)
    return save_classifier(BlendedClassifier.of(nets, [w for _, w in members]), folder)
