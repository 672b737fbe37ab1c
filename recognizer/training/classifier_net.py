"""The index classifier network (training side only: needs torch; the table runs its ONNX export).

Small on purpose: 48 x 32 colour crops, three conv blocks and one hidden layer, a few
million multiply-adds per crop, so twenty crops cost a few milliseconds on one core.
The flattened (not pooled) features keep where the rank sits in the crop, which is
what tells an upright index from an upside-down one.
"""

from __future__ import annotations

import torch
from torch import nn

from recognizer.crops import CROP_H, CROP_W, N_CLASSES


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


class IndexClassifier(nn.Module):
    def __init__(self, widths: tuple[int, int, int] = (16, 32, 64), hidden: int = 192) -> None:
        super().__init__()
        self.features = nn.Sequential(_block(3, widths[0]), _block(widths[0], widths[1]), _block(widths[1], widths[2]))
        flat = widths[2] * (CROP_H // 8) * (CROP_W // 8)
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(flat, hidden), nn.ReLU(inplace=True), nn.Linear(hidden, N_CLASSES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))
