"""Resumable training in chunks of set wall time, on real photographs and renders
(``guandan-ref train-recognizer --resume DIR --chunk-minutes M``).

Why chunks: this project trains on a shared 2-core CPU in sessions that end; a chunk
writes what the next one needs into ``DIR``, so the next command carries on where the last
stopped, in this checkout or a fresh clone. ``DIR`` is meant to be committed: it holds
``state.json`` (the chunk log; every path in it relative to ``DIR``) and each stage's latest
weights (``classifier/``, ``detector/``: a few MB). What is big or redrawn from the seed
(crops, the detector's images, ultralytics' runs, the classifier's optimizer) goes to
``DIR/data/``, which ``DIR/.gitignore`` keeps out of git: a chunk without it draws the data
again (same seed, same crops) and starts a fresh optimizer, warmed up within the chunk.

Each chunk trains the classifier first (cheap: the crops are cut once) and the detector
with the time left. The classifier learns indices at their own angle (real photographs,
the angle inferred per :mod:`recognizer.training.realtrain`) and in views turned up to
:data:`TILT` degrees off, so the reader's two views a quarter turn apart leave no index
unreadable; the same index seen a quarter turn off, printed words, court art and pips at
every angle, and the false hits of the detector it will be paired with (the state's latest,
in the reader's two views, on photos and renders) are "not an index".
The detector sees each real photo and render in all four exact quarter turns.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from recognizer.crops import DARK_DECK_LEAST, N_FACES, NOT_INDEX, class_of, crop_index, dark_deck, index_rect, light_ink, lightness_turned, to_tensor, view_box
from recognizer.reader import REFINE_TURNS
from recognizer.training.mining import false_hits
from recognizer.training.realtrain import RealPhoto, infer_turns, load_labelled, split_by_blocks
from recognizer.training.train import PACKAGE_MODELS, DETECTOR_SIZE, MINING_SCORE, quarter_turn, render_classifier_set, render_detector_set, write_yolo
from referee.cards import is_joker

STATE = "state.json"
CACHE_KEY = "_key"
"""The entry of a crops file naming what they were cut for (:func:`mining_key`)."""
DATA = "data"
"""``DIR``'s subfolder of what is not committed (redrawn from the seed when missing)."""
IGNORED = f"{DATA}/\nlock\n*.tmp\n*.tmp.*\n"
"""``DIR/.gitignore``: everything but the chunk log and the weights."""
DEFAULT_DIR = PACKAGE_MODELS.parent / "training" / "checkpoints" / "realtrain"
"""Where ``--resume`` without a folder trains: committed, so chunks survive the session."""
TILT = 50.0
"""Views up to this many degrees off an index's upright still read it (45 is the most the
reader's two views leave; a margin over it)."""
SIDEWAYS = (70.0, 110.0)
"""An index seen this many degrees off its upright (either way) is "not an index": the
reader's other view reads it."""
CLASSIFIER_SHARE = 0.3
"""Share of a chunk the classifier trains for; the detector takes the rest."""
EXPORT_MARGIN_S = 150
"""Seconds a chunk keeps back for the detector's last epoch to finish and its export."""
READER_VIEWS = (0.0, 90.0)
"""The reader's two views, in which the detector's false hits are mined."""


@dataclass(frozen=True)
class ChunkConfig:
    """What one ``train-recognizer --resume`` command was asked for."""

    work: Path
    real: Path | None
    minutes: float
    seed: int
    stage: str
    render_scenes: int
    detector_scenes: int
    threads: int
    sampler: object = None
    real_weight: int = 2
    """How many times each real crop is shown per classifier epoch (renders once)."""
    distill: float = 1.0
    """Weight of the pull towards the installed classifier's outputs on rendered crops it
    reads right (0: none). Without it the real-photo chunks lost 4.5-6 points on rendered
    held-out designs while gaining on photographs."""
    render_jokers: int = 0
    """Rendered scenes more whose hands hold jokers, for either stage (:func:`render_classifier_set`,
    :func:`render_detector_set`)."""
    render_fans: int = 0
    """Rendered scenes more, each a hand fanned, for either stage (:func:`render_detector_set`'s
    and :func:`render_classifier_set`'s ``fans``)."""
    real_cuts: int = 3
    """Crops cut of each labelled real index each way up (:func:`real_crops`' ``per_box``)."""
    augment: bool = False
    """Whether the classifier's crops are also blurred, noised and colour-cast as they are
    drawn (:func:`photometric`): a network shown the same real crops epoch after epoch
    learns them by heart (chunk 20: 99.99 % of its real training crops, 86.7 % of the held-out ones)."""
    detector_lr0: float = 0.01
    """The detector's learning rate at the chunk's start (ultralytics' ``lr0``; it falls to
    ``lrf`` = 0.05 of it by the chunk's end, and each chunk starts it again). A chunk
    continuing a detector already trained on the same set reads better from a lower start:
    ``realtrain-fans`` chunk 2, at chunk 1's 0.01, read a little worse than chunk 1."""
    detector_real_weight: int = 1
    """How many times each real training photo, in each quarter turn, is in the detector's
    set (renders once; validation once). At 1 the real photos were a sixth of the set, and
    four chunks that raised the set's validation read the real sets worse."""
    widths: tuple[int, int, int] | None = None
    """A new folder's classifier starts as a fresh network of these block widths instead of
    the installed classifier (:class:`~recognizer.training.classifier_net.IndexClassifier`)."""

    def __post_init__(self) -> None:
        if self.real_cuts < 1:
            raise ValueError(f"real cuts must be at least 1, got {self.real_cuts}")
        if self.detector_real_weight < 1:
            raise ValueError(f"the detector's real weight must be at least 1, got {self.detector_real_weight}")
        if not 0 < self.detector_lr0 <= 0.1:
            raise ValueError(f"the detector's learning rate must be in (0, 0.1], got {self.detector_lr0}")

    @property
    def data(self) -> Path:
        return self.work / DATA


def _ref(path: Path, work: Path) -> str:
    """``path`` as ``state.json`` keeps it: relative to ``DIR``, so a clone elsewhere resumes."""
    return os.path.relpath(Path(path).resolve(), work.resolve())


def _weights(ref: str, work: Path) -> Path:
    return (work / ref).resolve()


def _load_state(work: Path, seed: int, widths: tuple[int, int, int] | None = None) -> dict:
    path = work / STATE
    if path.exists():
        if widths is not None:
            raise ValueError(f"{work} holds a classifier to continue already: a fresh network's widths only start a new folder")
        state = json.loads(path.read_text())
        if state["seed"] != seed:
            raise ValueError(f"{work} was started with --seed {state['seed']}, not {seed}: resume with the same seed")
        for stage in ("detector", "classifier"):
            if not _weights(state[stage], work).is_file():
                raise ValueError(f"{work}/{STATE} continues the {stage} from {state[stage]}, which is missing: commit or restore it")
        return state
    classifier = PACKAGE_MODELS / "index-classifier.pt" if widths is None else _fresh_classifier(work, seed, widths)
    return {"seed": seed, "chunks": [], "detector": _ref(PACKAGE_MODELS / "index-detector.pt", work), "classifier": _ref(classifier, work)}


def _fresh_classifier(work: Path, seed: int, widths: tuple[int, int, int]) -> Path:
    """A new network of ``widths``, initialised from ``seed``, saved where the folder's
    chunks keep their classifier: what the first chunk continues from."""
    import torch

    from recognizer.training.classifier_net import IndexClassifier, save_classifier

    torch.manual_seed(seed)
    folder = work / "classifier"
    save_classifier(IndexClassifier(widths), folder)
    return folder / "index-classifier.pt"


def _save_state(work: Path, state: dict) -> None:
    tmp = work / (STATE + ".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    tmp.replace(work / STATE)


def real_crops(photos: list[RealPhoto], seed: int, classifier, detector=None, per_box: int = 3, negatives: int = 3, mined: int = 4) -> tuple[np.ndarray, np.ndarray, int]:
    """Classifier crops of labelled real photos: each index with an inferred angle cut
    ``per_box`` times upright and as many upside down in views up to :data:`TILT` off, once
    seen sideways ("not an index"); per photo ``negatives`` random boxes at any angle clear
    of every label and up to ``mined`` of ``detector``'s false hits in the two upright views,
    each cut again at the reader's :data:`~recognizer.reader.REFINE_TURNS`. A photo of a dark
    deck (its index crops, :func:`~recognizer.crops.dark_deck`) gives each of its light crops
    once more with the lightness turned over, the way the reader reads them again; such a
    photo, and one where ``detector`` finds fewer than :data:`~recognizer.crops.DARK_DECK_LEAST`
    boxes, gives up to ``mined`` false hits more, found in the photo with its lightness turned
    over as the reader looks there too (a laptop's light logo on its dark lid read as a joker),
    each cut from the photo and, where it shows light ink, turned over as well.
    A joker's index seen sideways is left out rather than taught as "not an index": decks
    print the word JOKER down the corner or across it (bellot), and read either way it names
    the same card. Returns crops, classes and how many labelled boxes had no angle (left out)."""
    rng = np.random.default_rng(seed + 29)
    xs, ys, unknown = [], [], 0
    for photo in tqdm(photos, desc="cut real crops", unit="photo"):
        image = cv2.imread(str(photo.path), cv2.IMREAD_COLOR)
        turns = infer_turns(image, photo, classifier)
        start, indices = len(xs), []
        labelled = np.array([b.box for b in photo.boxes], np.float64).reshape(-1, 4)
        for b, turn in zip(photo.boxes, turns):
            if turn is None:
                unknown += 1
                continue
            centre, w, h = index_rect(b.box, turn)
            for flip in (0.0, 180.0):
                for t in range(per_box):
                    view = turn + flip + (rng.normal(0, 8) if t == 0 else rng.uniform(-TILT, TILT))
                    vb = np.array(view_box(centre, w, h, turn, view))
                    size = np.tile(vb[2:] - vb[:2], 2)
                    xs.append(crop_index(image, tuple(vb + rng.uniform(-0.15, 0.15, 4) * size), view))
                    ys.append(class_of(b.card, bool(flip)))
                    indices.append(xs[-1])
            side = turn + rng.choice([-1, 1]) * rng.uniform(*SIDEWAYS) + rng.choice([0.0, 180.0])
            if not is_joker(b.card):  # decks print the joker's word along the corner or across it: sideways it is still the joker
                xs.append(crop_index(image, view_box(centre, w, h, turn, side), side))
                ys.append(NOT_INDEX)
        size = np.median(labelled[:, 2:] - labelled[:, :2], 0) if len(labelled) else np.array([40.0, 60.0])
        ih, iw = image.shape[:2]
        for _ in range(negatives):
            w, h = size * rng.uniform(0.7, 1.4, 2)
            centre = np.array([rng.uniform(0, iw), rng.uniform(0, ih)])
            if len(labelled) and np.min(np.hypot(*((labelled[:, :2] + labelled[:, 2:]) / 2 - centre).T)) < 1.2 * max(w, h):
                continue
            view = float(rng.uniform(-180, 180))
            xs.append(crop_index(image, view_box(centre, w, h, 0.0, view), view))
            ys.append(NOT_INDEX)
        near = lambda c: bool(len(labelled)) and np.min(np.hypot(*((labelled[:, :2] + labelled[:, 2:]) / 2 - c.mean(0)).T)) < 1.2 * max(size)  # noqa: E731
        if detector is not None:  # clear of every label by more than an index: a photo's labels may miss a card's edge
            for box, view in false_hits(detector, image, near, READER_VIEWS, mined, REFINE_TURNS):
                xs.append(crop_index(image, box, view))
                ys.append(NOT_INDEX)
        dark = bool(indices) and dark_deck(np.stack(indices))
        if dark:  # its light crops turned over too, as the reader reads them
            cut = np.stack(xs[start:])
            for k in np.flatnonzero(light_ink(cut)):
                xs.append(lightness_turned(cut[k]))
                ys.append(ys[start + k])
        if detector is not None and (dark or len(detector.detect(image)) < DARK_DECK_LEAST):
            for box, view in false_hits(detector, lightness_turned(image), near, (0.0,), mined, REFINE_TURNS):
                crop = crop_index(image, box, view)  # cut from the photo, as the reader cuts what it found turned over
                cuts = [crop, lightness_turned(crop)] if light_ink(crop[None])[0] else [crop]
                xs += cuts
                ys += [NOT_INDEX] * len(cuts)
    return np.stack(xs), np.array(ys, np.int64), unknown


def _real_split(cfg: ChunkConfig) -> tuple[list[RealPhoto], list[RealPhoto]]:
    if cfg.real is None:
        return [], []
    return split_by_blocks([p for p in load_labelled(cfg.real) if p.boxes])


def _cached(path: Path, make, key: str) -> dict[str, np.ndarray]:
    """The arrays of ``path``, made by ``make()`` and written whole the first time, or again
    when they were made for another ``key``."""
    if path.exists():
        with np.load(path) as data:
            if str(data.get(CACHE_KEY, "")) == key:
                return {k: data[k] for k in data.files if k != CACHE_KEY}
    tmp = path.with_suffix(".tmp.npz")
    arrays = make()
    np.savez(tmp, **arrays, **{CACHE_KEY: np.array(key)})
    tmp.replace(path)
    return arrays


def mining_key(detector: Path) -> str:
    """What the crops were mined with: the detector's bytes (a chunk that changed the
    detector makes the next classifier chunk cut its crops again, with the new one's hits)."""
    return hashlib.sha256(detector.read_bytes()).hexdigest()[:16]


def labels_key(photos: list[RealPhoto]) -> str:
    """What the real crops were cut from: each photo's labelled faces and boxes, so that a
    label corrected since (:data:`~recognizer.training.realtrain.RELABELLED`) makes the next
    classifier chunk cut its crops again."""
    return hashlib.sha256(repr([(p.path.name, p.boxes) for p in photos]).encode()).hexdigest()[:16]


def classifier_data(cfg: ChunkConfig, state: dict) -> dict[str, np.ndarray]:
    """The classifier's crops (``real``, ``render``: training; ``real_val``, ``render_val``:
    held out), cut into ``DIR/data/classifier-real.npz`` and ``classifier-render.npz`` and
    read from there after, until the state's detector changes (its false hits, in the
    reader's two views, are the crops' mined "not an index"), the real photos' labels do or
    the rendered scenes asked for do (delete a file to draw it again)."""
    from recognizer.reader import IndexDetector

    miner = _weights(state["detector"], cfg.work).with_suffix(".onnx")
    detector = IndexDetector(miner, det_conf=MINING_SCORE, threads=cfg.threads)
    key = mining_key(miner)

    train, val = _real_split(cfg)

    def real() -> dict[str, np.ndarray]:
        from recognizer.reader import _session

        classifier = _session(PACKAGE_MODELS / "index-classifier.onnx", cfg.threads)
        out = {}
        for name, photos in (("real", train), ("real_val", val)):
            if photos:
                out[f"{name}_x"], out[f"{name}_y"], unknown = real_crops(photos, cfg.seed + (name == "real_val"), classifier, detector, per_box=cfg.real_cuts)
                print(f"{name}: {len(out[name + '_y'])} crops from {len(photos)} photos ({unknown} labelled boxes without an angle left out)", flush=True)
        return out

    def render() -> dict[str, np.ndarray]:
        if not cfg.render_scenes:
            return {}
        x, y = render_classifier_set(cfg.render_scenes, cfg.seed, cfg.sampler, tilt=TILT, detector=detector, mine_views=READER_VIEWS, mine_turns=REFINE_TURNS, jokers=cfg.render_jokers,
                                     fans=cfg.render_fans)
        n_val = max(1, len(x) // 20)
        return {"render_x": x[n_val:], "render_y": y[n_val:], "render_val_x": x[:n_val], "render_val_y": y[:n_val]}

    drawn = f"{key} scenes {cfg.render_scenes} jokers {cfg.render_jokers}" + (f" fans {cfg.render_fans}" if cfg.render_fans else "")
    return {**_cached(cfg.data / "classifier-real.npz", real, f"{key} cuts {cfg.real_cuts} dark decks turned, their hits turned over mined, labels {labels_key(train + val)}"), **_cached(cfg.data / "classifier-render.npz", render, drawn)}


def _accuracy(net, x: np.ndarray, y: np.ndarray) -> float:
    import torch

    net.eval()
    with torch.no_grad():
        hits = sum(int((net(torch.from_numpy(to_tensor(x[i : i + 512]))).argmax(1).numpy() == y[i : i + 512]).sum()) for i in range(0, len(x), 512))
    return hits / max(1, len(x))


def teacher_targets(x: np.ndarray, y: np.ndarray, threads: int) -> tuple[np.ndarray, np.ndarray]:
    """The installed classifier's logits on crops ``x`` and which of them it reads right
    (``y``): what distillation keeps. Where it reads wrong (tilted indices it never learnt,
    photographs) only the label teaches."""
    from recognizer.reader import _session

    session = _session(PACKAGE_MODELS / "index-classifier.onnx", threads)
    name = session.get_inputs()[0].name
    logits = np.concatenate([session.run(None, {name: to_tensor(x[i : i + 1024])})[0] for i in range(0, len(x), 1024)]) if len(x) else np.zeros((0, 1), np.float32)
    return logits.astype(np.float32), logits.argmax(1) == y if len(x) else np.zeros(0, bool)


GREY = (0.114, 0.587, 0.299)
"""The lightness of a BGR pixel (ITU-R BT.601, as OpenCV's ``COLOR_BGR2GRAY``)."""


def photometric(xb, gen, share: float = 0.3):
    """Crops ``xb`` (N x 3 x H x W in [0, 1], BGR) as other cameras and lights would show them:
    each with chance ``share`` colour-cast (a gain per channel), softened (cut to a size
    drawn once per batch, 40-80 %, and scaled back: a smaller or blurred index) and noised,
    independently; and with a third of that chance grey (its lightness in every channel), as
    a camera without colour shows it: 139 of realtrain's 613 photos are grey, where the
    reader found 92.3 % of the cards against 98.1 % on the same shoot's colour photos, a
    heart's index told from a club's by its shape alone (recognizer/MODEL.md)."""
    import torch
    import torch.nn.functional as F

    n, _, h, w = xb.shape
    pick = lambda: torch.rand(n, generator=gen) < share  # noqa: E731
    cast = torch.where(pick()[:, None, None, None], torch.empty(n, 3, 1, 1).uniform_(0.8, 1.2, generator=gen), torch.ones(n, 3, 1, 1))
    xb = xb * cast
    grey = torch.rand(n, generator=gen) < share / 3
    if grey.any():  # ``xb`` is already the cast copy, not the caller's crops
        xb[grey] = (xb[grey] * torch.tensor(GREY).view(1, 3, 1, 1)).sum(1, keepdim=True).expand(-1, 3, -1, -1)
    soft = pick()
    if soft.any():
        scale = float(torch.empty(1).uniform_(0.4, 0.8, generator=gen))
        small = F.interpolate(xb[soft], size=(max(4, round(h * scale)), max(4, round(w * scale))), mode="bilinear", align_corners=False)
        xb = xb.clone()
        xb[soft] = F.interpolate(small, size=(h, w), mode="bilinear", align_corners=False)
    noise = torch.where(pick()[:, None, None, None], torch.empty(n, 1, 1, 1).uniform_(0.01, 0.05, generator=gen), torch.zeros(n, 1, 1, 1))
    return (xb + noise * torch.randn(xb.shape, generator=gen)).clamp(0, 1)


def classifier_chunk(cfg: ChunkConfig, state: dict, seconds: float, batch: int = 128, temperature: float = 2.0) -> dict:
    """Train the classifier for ``seconds`` from the state's latest weights (and optimizer,
    when an earlier chunk in this checkout left one), learning rate on a cosine over the
    chunk's wall time; on rendered crops the installed classifier reads right, its outputs
    are a second target (``cfg.distill``, softened by ``temperature``). Writes
    ``DIR/classifier/`` (.pt, .onnx). Returns the chunk's figures."""
    import torch
    import torch.nn.functional as F

    from recognizer.training.classifier_net import load_classifier, save_classifier

    data = classifier_data(cfg, state)
    mined_with = state["detector"]
    keys = [k for k in ("real_x",) * cfg.real_weight + ("render_x",) if k in data]
    x = np.concatenate([data[k] for k in keys])
    y = np.concatenate([data[k.replace("_x", "_y")] for k in keys])
    teacher = np.zeros((len(x), 1 + N_FACES * 2), np.float32)
    taught = np.zeros(len(x), bool)
    if cfg.distill and "render_x" in data:
        n = len(data["render_x"])
        teacher[-n:], taught[-n:] = teacher_targets(data["render_x"], data["render_y"], cfg.threads)
        print(f"distillation on {int(taught[-n:].sum())} of {n} rendered crops (those the installed classifier reads right)", flush=True)
    torch.manual_seed(cfg.seed + len(state["chunks"]))
    init = state["classifier"]
    net = load_classifier(_weights(init, cfg.work))
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)
    ckpt = cfg.data / "classifier-optimizer.pt"
    resumed = ckpt.exists() and init == _ref(cfg.work / "classifier" / "index-classifier.pt", cfg.work)
    if resumed:
        opt.load_state_dict(torch.load(ckpt, map_location="cpu")["optimizer"])
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    gen = torch.Generator().manual_seed(cfg.seed + len(state["chunks"]))
    before = {k: round(_accuracy(net, data[k + "_x"], data[k + "_y"]), 4) for k in ("real_val", "render_val") if k + "_x" in data}
    print(f"classifier before: {before}", flush=True)
    start, epochs, steps, peak = time.monotonic(), 0, 0, 1e-3
    while steps == 0 or time.monotonic() - start < seconds:
        net.train()
        perm = torch.randperm(len(x), generator=gen).numpy()
        for i in tqdm(range(0, len(x), batch), desc=f"classifier epoch {epochs + 1}", unit="batch", mininterval=30):
            done = min(1.0, (time.monotonic() - start) / max(seconds, 1e-9))
            if done >= 1 and steps:
                break
            steps += 1
            for group in opt.param_groups:
                group["lr"] = peak * min(1.0, done * 20) * 0.5 * (1 + math.cos(math.pi * done))
            idx = perm[i : i + batch]
            xb = torch.from_numpy(to_tensor(x[idx]))
            xb = (xb * torch.empty(len(xb), 1, 1, 1).uniform_(0.7, 1.3, generator=gen) + torch.empty(len(xb), 1, 1, 1).uniform_(-0.15, 0.15, generator=gen)).clamp(0, 1)
            if cfg.augment:
                xb = photometric(xb, gen)
            logits = net(xb)
            loss = loss_fn(logits, torch.from_numpy(y[idx]))
            mask = torch.from_numpy(taught[idx])
            if cfg.distill and mask.any():
                soft = F.log_softmax(torch.from_numpy(teacher[idx][taught[idx]]) / temperature, 1)
                kl = F.kl_div(F.log_softmax(logits[mask] / temperature, 1), soft, log_target=True, reduction="batchmean")
                loss = loss + cfg.distill * temperature**2 * kl * mask.float().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        epochs += 1
        print(f"classifier epoch {epochs}: " + ", ".join(f"{k} {_accuracy(net, data[k + '_x'], data[k + '_y']):.4f}" for k in before), flush=True)
    after = {k: round(_accuracy(net, data[k + "_x"], data[k + "_y"]), 4) for k in before}
    folder = cfg.work / "classifier"
    torch.save({"optimizer": opt.state_dict()}, ckpt)
    save_classifier(net, folder)
    state["classifier"] = _ref(folder / "index-classifier.pt", cfg.work)
    return {"stage": "classifier", "init": init, "optimizer": "resumed" if resumed else "fresh", "distill": cfg.distill, "augment": cfg.augment, "real_cuts": cfg.real_cuts, "seconds": round(time.monotonic() - start),
            "epochs": epochs, "steps": steps, "crops": len(x), "mined_with": mined_with, "accuracy_before": before, "accuracy_after": after}


def detector_data(cfg: ChunkConfig) -> Path:
    """The detector's YOLO set under ``DIR/data/detector-data``: rendered scenes in the four
    quarter turns (``--images``, and ``--render-jokers`` more whose hands hold jokers), and
    every real photo of each split in all four (a training photo ``detector_real_weight``
    times: ultralytics' mosaic, scale and shift draw each copy anew). Drawn once, and again
    when the renders or the real weight asked for change."""
    out = cfg.data / "detector-data"
    done = out / "complete"
    drawn = (f"scenes {cfg.detector_scenes} jokers {cfg.render_jokers}" + (f" fans {cfg.render_fans}" if cfg.render_fans else "")
             + (f" real {cfg.detector_real_weight}" if cfg.detector_real_weight != 1 else ""))
    if done.exists() and done.read_text() == drawn:
        return out / "data.yaml"
    shutil.rmtree(out, ignore_errors=True)
    data = render_detector_set(out, cfg.detector_scenes, cfg.seed, cfg.sampler, turns=True, jokers=cfg.render_jokers, fans=cfg.render_fans)
    train, val = _real_split(cfg)
    for split, photos in (("train", train), ("val", val)):
        for photo in tqdm(photos, desc=f"real photos ({split})", unit="photo"):
            image = cv2.imread(str(photo.path), cv2.IMREAD_COLOR)
            copies = cfg.detector_real_weight if split == "train" else 1
            for k in range(4):
                name = f"real-{photo.path.stem}-{k}"
                write_yolo(out / split, name, *quarter_turn(image, [b.box for b in photo.boxes], k))
                for copy in range(1, copies):  # the same files again: linked, not encoded anew
                    for folder, ext in (("images", "jpg"), ("labels", "txt")):
                        os.link(out / split / folder / f"{name}.{ext}", out / split / folder / f"{name}-{copy}.{ext}")
    done.write_text(drawn)  # only now: a chunk stopped while writing draws the set again
    return data


def detector_chunk(cfg: ChunkConfig, state: dict, seconds: float) -> dict:
    """Continue the detector from the state's latest weights for about ``seconds`` (whole
    epochs: ultralytics' ``time``), export ONNX into ``DIR/detector/``."""
    os.environ["YOLO_OFFLINE"] = "1"
    import ultralytics.utils.torch_utils as torch_utils
    from ultralytics import YOLO

    torch_utils.NUM_THREADS = cfg.threads  # ultralytics sets cpu_count - 1 threads (1 on two cores)
    data = detector_data(cfg)
    start = time.monotonic()
    init = state["detector"]
    weights_in = str(_weights(init, cfg.work))
    run = f"detector-{len(state['chunks'])}"
    YOLO(weights_in, task="detect").train(
        data=str(data), imgsz=DETECTOR_SIZE, epochs=100, time=max(60.0, seconds - EXPORT_MARGIN_S) / 3600, batch=32, device="cpu", workers=0,
        seed=cfg.seed + len(state["chunks"]), deterministic=True, pretrained=weights_in, amp=False, plots=False, optimizer="SGD", lr0=cfg.detector_lr0, lrf=0.05,
        momentum=0.9, warmup_epochs=0, close_mosaic=1, fliplr=0.0, degrees=0.0, scale=0.4, translate=0.1, mosaic=0.5,
        project=str(cfg.data / "runs"), name=run, exist_ok=True, verbose=False,
    )
    weights = cfg.data / "runs" / run / "weights" / "best.pt"
    folder = cfg.work / "detector"
    folder.mkdir(exist_ok=True)
    onnx = Path(YOLO(str(weights)).export(format="onnx", imgsz=DETECTOR_SIZE, opset=17, simplify=False, dynamic=True))
    shutil.copyfile(weights, folder / "index-detector.pt")
    shutil.copyfile(onnx, folder / "index-detector.onnx")
    (folder / "index-detector.json").write_text(json.dumps({"quarter_turns": True}) + "\n")  # the reader then looks once (recognizer.reader.detector_turns)
    state["detector"] = _ref(folder / "index-detector.pt", cfg.work)
    results = cfg.data / "runs" / run / "results.csv"
    last = results.read_text().strip().splitlines()[-1] if results.exists() else ""
    return {"stage": "detector", "init": init, "lr0": cfg.detector_lr0, "real_weight": cfg.detector_real_weight, "seconds": round(time.monotonic() - start), "run": run, "last_epoch": last}


def run_chunk(cfg: ChunkConfig, command: str) -> dict:
    """One chunk: the classifier then the detector (or the ``stage`` asked), within
    ``minutes`` of wall time all told; the state is saved after each stage."""
    import torch

    torch.set_num_threads(cfg.threads)
    cfg.data.mkdir(parents=True, exist_ok=True)
    (cfg.work / ".gitignore").write_text(IGNORED)
    with _only_chunk(cfg.work):
        return _run_chunk(cfg, command)


@contextmanager
def _only_chunk(work: Path):
    """Hold ``DIR/lock`` while a chunk runs: two chunks in one folder would each save a state
    without the other's stage."""
    lock = work / "lock"
    try:
        other = int(lock.read_text() or 0)
        os.kill(other, 0)
    except (FileNotFoundError, ValueError, ProcessLookupError):
        pass
    else:
        raise ValueError(f"another chunk (process {other}) is training in {work}: wait for it or stop it")
    lock.write_text(str(os.getpid()))
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def _run_chunk(cfg: ChunkConfig, command: str) -> dict:
    state = _load_state(cfg.work, cfg.seed, cfg.widths)
    deadline = time.monotonic() + cfg.minutes * 60
    if cfg.stage in ("all", "classifier"):  # the data is drawn once, in the first chunk's time
        classifier_data(cfg, state)
    if cfg.stage in ("all", "detector"):
        detector_data(cfg)
    chunk = {"command": command, "started": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "stages": []}
    state["chunks"].append(chunk)
    if cfg.stage in ("all", "classifier"):
        share = CLASSIFIER_SHARE if cfg.stage == "all" else 1.0
        chunk["stages"].append(classifier_chunk(cfg, state, share * (deadline - time.monotonic())))
        _save_state(cfg.work, state)
    if cfg.stage in ("all", "detector"):
        chunk["stages"].append(detector_chunk(cfg, state, deadline - time.monotonic()))
        _save_state(cfg.work, state)
    chunk["wall_s"] = round(cfg.minutes * 60 - (deadline - time.monotonic()))
    _save_state(cfg.work, state)
    return chunk
