"""Render the training data and train the two-stage card reader (``guandan-ref train-recognizer``).

Why two stages: a 54-class YOLO from scratch does not converge on a 2-core CPU within the
budget (measured: mAP50 0.22 after 56 minutes). A one-class detector only has to find
"a corner index" — a generic, high-contrast pattern — and a small classifier on the
cropped index learns the 54 faces (times upright / upside down, plus "not an index")
from tens of thousands of cheap crops.

1. ``detector``: an ultralytics YOLO built from ``models/index-detector.yaml`` (no
   pretrained weights), trained on rendered play-area scenes, exported to ONNX.
2. ``classifier``: :mod:`recognizer.training.classifier_net` on index crops cut from rendered
   scenes with the detector's typical box jitter, exported to ONNX.

Both stages draw every scene from ``seed``; held-out designs never reach training.
The committed models were made by the command recorded in ``recognizer/MODEL.md``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from recognizer.reader import int8_classifier
from recognizer.training.synth.scenes import random_hand, render_scene
from referee.cards import BJ, SJ, is_joker

PACKAGE_MODELS = Path(__file__).resolve().parents[1] / "models"
DETECTOR_YAML = PACKAGE_MODELS / "index-detector.yaml"
DETECTOR_SIZE = 320
MINING_SCORE = 0.1
"""Detector score from which a box clear of every index counts as a false hit to learn from
(below the reader's own threshold, so the classifier also meets tomorrow's false hits)."""


def quarter_turn(image: np.ndarray, boxes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``image`` turned ``k`` quarter turns counter-clockwise with its boxes (N x 4: x0, y0,
    x1, y1) turned exactly: a box stays tight, where a free rotation would loosen it to the
    box around the turned one (what ultralytics' ``degrees`` does)."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    for _ in range(k % 4):
        w = image.shape[1]
        image = np.rot90(image)
        boxes = np.stack([boxes[:, 1], w - boxes[:, 2], boxes[:, 3], w - boxes[:, 0]], 1)
    return np.ascontiguousarray(image), boxes


def write_yolo(folder: Path, name: str, image: np.ndarray, boxes: np.ndarray) -> None:
    """One image of a one-class YOLO set, shrunk to the detector's input size, with its boxes."""
    h, w = image.shape[:2]
    s = DETECTOR_SIZE / max(h, w)
    small = cv2.resize(image, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA)
    cv2.imwrite(str(folder / "images" / f"{name}.jpg"), small, [cv2.IMWRITE_JPEG_QUALITY, 92])
    lines = [f"0 {(x0 + x1) / 2 / w:.6f} {(y0 + y1) / 2 / h:.6f} {(x1 - x0) / w:.6f} {(y1 - y0) / h:.6f}" for x0, y0, x1, y1 in boxes]
    (folder / "labels" / f"{name}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))


def render_detector_set(out: Path, images: int, seed: int, sampler=None, val_fraction: float = 0.1, turns: bool = False, jokers: int = 0,
                        fans: int = 0) -> Path:
    """Write a YOLO dataset of ``images`` scenes under ``out``; returns its data yaml.

    With ``turns`` scene ``k`` is turned ``k`` quarter turns, exactly (:func:`quarter_turn`).
    ``jokers`` scenes more (training images) are laid with one to four jokers in each hand
    (:func:`_joker_hand`): a joker's index (stacked letters, a word, a star) is the one
    shape a detector sees in 4 of 108 cards otherwise. ``fans`` scenes more after them hold
    a hand fanned (``render_scene``'s ``fanned``): each card at its own angle, a sliver showing.

    ``sampler`` picks each scene's design (see ``training_design_sampler``); a detector
    trained on procedural designs alone was measured to find only 10-60% of the indices
    of real decks, so the real training decks belong here too.
    """
    n_val = max(1, int(images * val_fraction))
    for split in ("train", "val"):
        (out / split / "images").mkdir(parents=True, exist_ok=True)
        (out / split / "labels").mkdir(parents=True, exist_ok=True)
    hands = np.random.default_rng(seed + 31)
    for k in tqdm(range(images + jokers + fans), desc="render detector scenes", unit="img"):
        split = "val" if k < n_val else "train"
        joker = images <= k < images + jokers
        scene = render_scene(seed * 1_000_003 + k, sampler, cards=_joker_hand(hands) if joker else None, fanned=k >= images + jokers)
        image, boxes = quarter_turn(scene.image, [lab.box for lab in scene.labels], k if turns else 0)
        write_yolo(out / split, f"{k:06d}", image, boxes)
    data = out / "data.yaml"
    data.write_text(f"path: {out}\ntrain: train/images\nval: val/images\nnames:\n  0: index\n")
    return data


def train_detector(work: Path, images: int, epochs: int, seed: int, sampler=None, batch: int = 32, init: Path | None = None) -> Path:
    """Render scenes, train the one-class index detector, export ONNX; returns the ONNX path.

    ``init`` (an earlier run's ``best.pt``) continues training from those weights on the
    scenes of ``seed``, with a lower learning rate and no warm-up: more epochs on fresh
    scenes without paying again for the first ones.
    """
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from ultralytics import YOLO

    data = render_detector_set(work / "detector-data", images, seed, sampler)
    model = YOLO(str(init) if init is not None else str(DETECTOR_YAML), task="detect")
    model.train(
        data=str(data),
        imgsz=DETECTOR_SIZE,
        epochs=epochs,
        batch=batch,
        device="cpu",
        workers=0,
        seed=seed,
        deterministic=True,
        pretrained=False if init is None else str(init),
        amp=False,
        plots=False,
        optimizer="SGD",
        lr0=0.02 if init is None else 0.01,
        lrf=0.05,
        momentum=0.9,
        warmup_epochs=1 if init is None else 0,
        close_mosaic=max(1, epochs // 5),
        fliplr=0.0,
        degrees=5.0,
        scale=0.4,
        translate=0.1,
        mosaic=1.0,
        project=str(work / "runs"),
        name="detector",
        exist_ok=True,
        verbose=False,
    )
    best = work / "runs" / "detector" / "weights" / "best.pt"
    onnx = YOLO(str(best)).export(format="onnx", imgsz=DETECTOR_SIZE, opset=17, simplify=False, dynamic=True)
    return Path(onnx)


def install_models(detector_onnx: Path | None, classifier_onnx: Path | None, dest: Path = PACKAGE_MODELS) -> None:
    """Copy trained ONNX files to where :class:`recognizer.reader.CardReader` loads them,
    with the weights they were exported from (the start of a later ``--*-init`` run). The
    int8 copy of the classifier replaced goes (the reader would pass it over anyway): the new
    one runs as float until ``guandan-ref quantize-classifier`` makes its own."""
    for src, name in ((detector_onnx, "index-detector"), (classifier_onnx, "index-classifier")):
        if src is not None:
            shutil.copyfile(src, dest / f"{name}.onnx")
            shutil.copyfile(src.with_suffix(".pt"), dest / f"{name}.pt")
    if classifier_onnx is not None:
        int8_classifier(dest / "index-classifier.onnx").unlink(missing_ok=True)


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of one box ``a`` against boxes ``b`` (N x 4)."""
    ix = np.clip(np.minimum(a[2], b[:, 2]) - np.maximum(a[0], b[:, 0]), 0, None)
    iy = np.clip(np.minimum(a[3], b[:, 3]) - np.maximum(a[1], b[:, 1]), 0, None)
    inter = ix * iy
    area = lambda r: (r[..., 2] - r[..., 0]) * (r[..., 3] - r[..., 1])  # noqa: E731
    return inter / (area(a) + area(b) - inter + 1e-9)


def _joker_hand(rng: np.random.Generator) -> list:
    """A hand as players lay them with one to four jokers in it (a double deck's two of each)."""
    cards = [c for c in random_hand(rng, int(rng.integers(1, 7))) if not is_joker(c)]
    jokers = [SJ, SJ, BJ, BJ]
    for _ in range(int(rng.integers(1, 5))):
        joker = jokers.pop(int(rng.integers(len(jokers))))
        if cards and rng.random() < 0.5:
            cards[int(rng.integers(len(cards)))] = joker
        else:
            cards.append(joker)
    return sorted(cards)


def render_classifier_set(
    scenes: int, seed: int, sampler=None, jitters: int = 2, negatives: int = 3, detector=None, mined: int = 4, tilt: float = 0.0,
    mine_views: tuple[float, ...] = (0.0,), jokers: int = 0, mine_turns: tuple[float, ...] = (), fans: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Index crops (N x 48 x 32 x 3 uint8) and classes cut from ``scenes`` rendered scenes.

    Positives are cut with the box jitter a detector has (each edge moved up to 12% of
    the box, and up to 20% for the further jitters: boxes on unseen decks are looser);
    negatives are boxes of index size elsewhere (pips, court art, cloth, card backs) and,
    given a ``detector`` (:class:`recognizer.reader.IndexDetector`), up to ``mined`` of its
    own false hits per scene looking in ``mine_views``: boxes clear of every corner index,
    shown or hidden (:func:`recognizer.training.mining.false_hits`), each cut again at
    ``mine_turns`` further round.
    Scenes are shrunk at random first so crops cover the resolutions cameras give. With a
    ``tilt`` each index's first crop is cut in a view turned a little (8 degrees standard
    deviation: most indices lie near upright in one of the reader's views) and its others
    in a view turned by up to ``tilt`` degrees either way, each box the one around the turned index (as a detector looking in that view draws it): the
    reader's two views a quarter turn apart then leave no index more than 45 degrees off.
    ``jokers`` scenes more are laid with one to four jokers in each hand: jokers are 4 of a
    double deck's 108 cards, and their index is what differs most between decks (stacked
    letters, the word down or across the corner, a star), so a classifier that also learns
    real photographs' text and art as "not an index" keeps too few of them otherwise.
    ``fans`` scenes more after them hold a hand fanned: indices with the next card's edge
    across them, each card at its own angle.
    """
    from recognizer.crops import NOT_INDEX, class_of, crop_index
    from recognizer.training.mining import false_hits
    from recognizer.training.realtrain import view_box

    rng = np.random.default_rng(seed + 17)
    xs, ys = [], []
    hands = np.random.default_rng(seed + 23)
    for k in tqdm(range(scenes + jokers + fans), desc="render classifier crops", unit="scene"):
        joker = scenes <= k < scenes + jokers
        scene = render_scene(seed * 1_000_003 + 500_000 + k, sampler, cards=_joker_hand(hands) if joker else None, fanned=k >= scenes + jokers)
        s = rng.uniform(0.55, 1.0)
        image = cv2.resize(scene.image, None, fx=s, fy=s, interpolation=cv2.INTER_AREA)
        boxes = np.array([lab.box for lab in scene.labels], np.float32).reshape(-1, 4) * s
        for lab, box in zip(scene.labels, boxes):
            for t in range(jitters):
                view = (float(rng.uniform(-tilt, tilt)) if t else float(rng.normal(0, 8))) if tilt else 0.0
                vb = np.array(view_box((box[:2] + box[2:]) / 2, box[2] - box[0], box[3] - box[1], 0.0, view)) if view else box
                w, h = vb[2] - vb[0], vb[3] - vb[1]
                spread = 0.12 if t == 0 else 0.2
                j = vb + rng.uniform(-spread, spread, 4) * (w, h, w, h)
                xs.append(crop_index(image, tuple(j), view))
                ys.append(class_of(lab.card, lab.inverted))
        ih, iw = image.shape[:2]
        ref = boxes if len(boxes) else np.array([[0, 0, 0.05 * iw, 0.1 * ih]], np.float32)
        for _ in range(negatives):
            b = ref[rng.integers(len(ref))]
            w, h = (b[2] - b[0]) * rng.uniform(0.7, 1.4), (b[3] - b[1]) * rng.uniform(0.7, 1.4)
            if rng.random() < 0.6:  # near an index: on the same card or its neighbours
                x0 = b[0] + rng.uniform(-3, 5) * w
                y0 = b[1] + rng.uniform(-2, 5) * h
            else:
                x0, y0 = rng.uniform(0, max(1, iw - w)), rng.uniform(0, max(1, ih - h))
            cand = np.array([x0, y0, x0 + w, y0 + h], np.float32)
            if len(boxes) and _iou(cand, boxes).max() > 0.25:
                continue
            view = float(rng.uniform(-180, 180)) if tilt else 0.0  # printed text and art at every angle
            xs.append(crop_index(image, view_box((cand[:2] + cand[2:]) / 2, w, h, 0.0, view), view))
            ys.append(NOT_INDEX)
        if detector is not None:
            known = np.array([lab.box for lab in scene.labels + scene.hidden], np.float32).reshape(-1, 4) * s
            overlaps = lambda c: bool(len(known)) and _iou(np.concatenate([c.min(0), c.max(0)]).astype(np.float32), known).max() >= 0.1  # noqa: E731
            for box, view in false_hits(detector, image, overlaps, mine_views, mined, mine_turns):
                xs.append(crop_index(image, box, view))
                ys.append(NOT_INDEX)
    return np.stack(xs), np.array(ys, np.int64)


def train_classifier(work: Path, scenes: int, epochs: int, seed: int, sampler=None, batch: int = 128, init: Path | None = None, mine_with: Path | None = None) -> Path:
    """Train :class:`recognizer.training.classifier_net.IndexClassifier` (or the blend ``init`` holds) on rendered crops; export ONNX.

    ``init`` (an earlier run's ``index-classifier.pt``) continues from those weights on the
    crops of ``seed`` with a third of the peak learning rate. ``mine_with`` (a detector
    ONNX) adds its false hits on the training scenes as "not an index" crops.
    """
    import torch

    from recognizer.training.classifier_net import IndexClassifier, load_classifier, save_classifier
    from recognizer.crops import to_tensor
    from recognizer.reader import IndexDetector

    torch.manual_seed(seed)
    detector = IndexDetector(mine_with, det_conf=MINING_SCORE, threads=1) if mine_with is not None else None
    x, y = render_classifier_set(scenes, seed, sampler, detector=detector)
    n_val = max(1, len(x) // 20)
    order = np.random.default_rng(seed).permutation(len(x))
    val, tr = order[:n_val], order[n_val:]
    xt, yt = torch.from_numpy(to_tensor(x[tr])), torch.from_numpy(y[tr])
    xv, yv = torch.from_numpy(to_tensor(x[val])), torch.from_numpy(y[val])
    net = IndexClassifier() if init is None else load_classifier(init)
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    steps = epochs * ((len(xt) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3 if init is None else 1e-3, total_steps=steps)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    gen = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        net.train()
        perm = torch.randperm(len(xt), generator=gen)
        bar = tqdm(range(0, len(xt), batch), desc=f"classifier epoch {epoch + 1}/{epochs}", unit="batch")
        for i in bar:
            idx = perm[i : i + batch]
            xb = xt[idx]
            # Photometric jitter per batch: contrast and brightness the renderer may miss.
            xb = (xb * torch.empty(len(xb), 1, 1, 1).uniform_(0.7, 1.3, generator=gen) + torch.empty(len(xb), 1, 1, 1).uniform_(-0.15, 0.15, generator=gen)).clamp(0, 1)
            loss = loss_fn(net(xb), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            bar.set_postfix(loss=f"{loss.item():.3f}")
        net.eval()
        with torch.no_grad():
            acc = (net(xv).argmax(1) == yv).float().mean().item()
        print(f"classifier epoch {epoch + 1}: validation accuracy {acc:.4f} on {len(xv)} crops", flush=True)
    return save_classifier(net, work)
