"""Enrol a tournament's own deck: adapt the index classifier to its faces (``guandan-ref deck enroll``).

The reader's models learnt many designs, none of them the deck on the table. One image
of each of the 52 suited faces and the jokers (a photo or scan, straightened, the face
filling the frame; or a rendered design's faces for the demo; a deck photographed without
its jokers borrows a packaged design's, :func:`.synth.photos.read_faces`) is enough to
synthesise thousands of play-area scenes of that deck with the project's scene renderer
(:mod:`.synth.scenes`: tilts, overlap, light gradients, shadows, glare, blur, noise, JPEG),
and to fine-tune the classifier's two last layers on their index crops. The convolutional
features stay as they are: a few minutes on one core suffice, and no torch is needed (the
head is trained in numpy on features computed by onnxruntime, then written back into a copy
of the ONNX file). The detector, one generic "corner index" pattern, is not adapted.

The adapted classifier lands in ``DATA/enrolled/NAME/index-classifier.onnx``, with the faces
as the scene renderer uses them and ``enrolled.json`` (what was done, which jokers were
borrowed, and the crop accuracy before and after on a tenth of the scenes, rendered apart
and held out of the fine-tuning: crops of the scenes trained on are jittered copies of the same
indices and would say nothing of a fresh hand). The weights kept are those of the epoch that
reads the held-out scenes best, or the base classifier's when none reads them better.
Its int8 copy, which the reader runs (:mod:`recognizer.training.quantize`), lies beside it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from recognizer.crops import N_CLASSES, to_tensor
from recognizer.decks import DECK_CLASSIFIER, deck_folder
from recognizer.training.quantize import calibration_scenes, quantize_classifier, reader_crops
from recognizer.reader import (
    LOOK_ALWAYS,
    MODELS,
    REFINE_OFF,
    CardReader,
    IndexDetector,
    _session,
    classifier_frame_again_below,
    classifier_refine_below,
    classifier_sure_enough_at,
    int8_classifier,
)
from recognizer.training.synth.decks import RENDER_H, RealDeck
from recognizer.training.synth.photos import JOKER_DESIGN, card_shaped
from referee.cards import FACES, Card, card_name

JITTERS = 4
"""Crops cut per shown index (the detector's box jitter): crops are cheap, scenes are not."""
CALIBRATION_SCENES = 60
"""Rendered scenes of the deck whose crops, as the reader cuts them, set the int8 copy's
activation ranges (:mod:`recognizer.training.quantize`): 13.5 s more on this project's machine,
rendering, reading and quantizing (recognizer/MODEL.md)."""


class EnrollError(ValueError):
    """Faces that cannot be enrolled: says which files or faces are wrong."""


@dataclass(frozen=True)
class EnrollResult:
    classifier: Path
    crops: int
    before: float
    after: float
    epochs_kept: int
    seconds: float


def find_index_box(face_bgr: np.ndarray, detector: IndexDetector) -> tuple[float, float, float, float] | None:
    """The top-left index box of a straightened face (fractions of the face), as the
    reader's own detector finds it on the face laid on a plain cloth: the detected box
    nearest the top-left corner, within the corner's third of the card."""
    h, w = face_bgr.shape[:2]
    m = round(0.25 * h)
    canvas = cv2.copyMakeBorder(face_bgr, m, m, m, m, cv2.BORDER_CONSTANT, value=(60, 110, 50))
    best = None
    for (x0, y0, x1, y1), _ in detector.detect(canvas):
        box = ((x0 - m) / w, (y0 - m) / h, (x1 - m) / w, (y1 - m) / h)
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        if 0 <= cx < 0.35 and 0 <= cy < 0.4 and (best is None or cx + cy < best[0]):
            best = (cx + cy, box)
    return None if best is None else tuple(float(np.clip(v, 0.0, 1.0)) for v in best[1])


def deck_from_faces(faces: dict[Card, np.ndarray], name: str, folder: Path, detector: IndexDetector) -> RealDeck:
    """Write the faces where the scene renderer reads them and find each face's index box
    (:func:`find_index_box`); a face whose box is not found takes the deck's typical box."""
    folder.mkdir(parents=True, exist_ok=True)
    aspect = float(np.median([img.shape[1] / img.shape[0] for img in faces.values()]))
    size = (round(aspect * RENDER_H), RENDER_H)
    resized = {card: cv2.resize(img, size, interpolation=cv2.INTER_AREA) for card, img in faces.items()}
    images = {card: card_shaped(img) for card, img in resized.items()}
    boxes = {card: box for card, img in resized.items() if (box := find_index_box(img, detector)) is not None}
    plain = [b for c, b in boxes.items() if c not in (FACES[52], FACES[53])]
    if len(plain) < 26:
        raise EnrollError(f"the corner index was found on only {len(plain)} of 52 faces: are the faces upright, straightened and filling the frame?")
    typical = tuple(float(v) for v in np.median(np.array(plain), 0))
    for card, img in images.items():
        cv2.imwrite(str(folder / f"{card}.png"), img)
    return RealDeck(name, aspect, str(folder), tuple(sorted((c, tuple(boxes.get(c, typical))) for c in images)))


def _head(model) -> tuple[str, list]:
    """The input of the classifier's head (the flattened features) and its two Gemm nodes."""
    gemms = [n for n in model.graph.node if n.op_type == "Gemm"]
    if len(gemms) != 2:
        raise EnrollError(f"unexpected classifier graph: {len(gemms)} Gemm layers, expected the two of the head")
    return gemms[0].input[0], gemms


def _features(model, crops: np.ndarray, batch: int = 512) -> np.ndarray:
    """The head's input for each crop, from a copy of the classifier that outputs it."""
    import onnx
    import onnxruntime as ort

    feature, _ = _head(model)
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    probe.graph.output.append(onnx.helper.make_tensor_value_info(feature, onnx.TensorProto.FLOAT, None))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    session = ort.InferenceSession(probe.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: to_tensor(crops[i : i + batch])})[0] for i in range(0, len(crops), batch)])


class _Head:
    """The classifier's last two layers in numpy: ReLU(x W1' + b1) W2' + b2."""

    def __init__(self, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray) -> None:
        self.params = [p.astype(np.float32).copy() for p in (w1, b1, w2, b2)]
        self.start = [p.copy() for p in self.params]

    def logits(self, x: np.ndarray) -> np.ndarray:
        w1, b1, w2, b2 = self.params
        return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        return float((self.logits(x).argmax(1) == y).mean())

    def fit(self, x: np.ndarray, y: np.ndarray, epochs: int, seed: int, val: tuple[np.ndarray, np.ndarray],
            lr: float = 1e-3, batch: int = 256, smoothing: float = 0.05, pull: float = 1e-3) -> int:
        """Adam on cross-entropy with label smoothing, and an L2 pull towards the starting
        weights (few images of one deck must not undo what many designs taught). Keeps the
        weights, after whichever epoch or none, that read the ``val`` crops (of scenes not
        trained on) best, and returns that epoch (0: the starting weights): on few scenes
        fine-tuning can read a deck's fresh scenes worse than the classifier it started from."""
        rng = np.random.default_rng(seed)
        m = [np.zeros_like(p) for p in self.params]
        v = [np.zeros_like(p) for p in self.params]
        step = 0
        target_off = smoothing / N_CLASSES
        best, kept, best_params = self.accuracy(*val), 0, [p.copy() for p in self.params]
        for epoch in range(1, epochs + 1):
            for idx in np.array_split(rng.permutation(len(x)), max(1, len(x) // batch)):
                w1, b1, w2, b2 = self.params
                xb = x[idx]
                pre = xb @ w1.T + b1
                h = np.maximum(pre, 0)
                z = h @ w2.T + b2
                p = np.exp(z - z.max(1, keepdims=True))
                p /= p.sum(1, keepdims=True)
                t = np.full_like(p, target_off)
                t[np.arange(len(idx)), y[idx]] += 1 - smoothing
                dz = (p - t) / len(idx)
                dh = (dz @ w2) * (pre > 0)
                grads = [dh.T @ xb, dh.sum(0), dz.T @ h, dz.sum(0)]
                step += 1
                for i, g in enumerate(grads):
                    g = g + pull * (self.params[i] - self.start[i])
                    m[i] = 0.9 * m[i] + 0.1 * g
                    v[i] = 0.999 * v[i] + 0.001 * g * g
                    self.params[i] -= lr * (m[i] / (1 - 0.9**step)) / (np.sqrt(v[i] / (1 - 0.999**step)) + 1e-8)
            if (score := self.accuracy(*val)) > best:
                best, kept, best_params = score, epoch, [p.copy() for p in self.params]
        self.params = best_params
        return kept


def adapt_classifier(base: Path, deck, out: Path, scenes: int, epochs: int, seed: int, detector: IndexDetector | None = None) -> EnrollResult:
    """Fine-tune the head of the classifier at ``base`` on index crops of nine tenths of
    ``scenes`` rendered scenes of ``deck`` (positives at the detector's box jitter, "not an
    index" boxes elsewhere and the detector's own false hits), judged on the other tenth;
    write the adapted copy to ``out``."""
    import onnx
    from onnx import numpy_helper

    from recognizer.training.train import render_classifier_set

    t0 = time.perf_counter()
    model = onnx.load(str(base))
    _, (g1, g2) = _head(model)
    init = {i.name: i for i in model.graph.initializer}
    head = _Head(*(numpy_helper.to_array(init[n]) for n in (g1.input[1], g1.input[2], g2.input[1], g2.input[2])))
    mine = detector or IndexDetector(MODELS / "index-detector.onnx", det_conf=0.1, threads=1)
    n_val = max(1, scenes // 10)
    crops, labels = render_classifier_set(scenes - n_val, seed, deck, jitters=JITTERS, detector=mine)
    # another seed's scenes: each seed numbers its own from seed x 1,000,003, so none is trained on
    val_crops, val_labels = render_classifier_set(n_val, seed + 1, deck, jitters=JITTERS, detector=mine)
    feats, val_feats = _features(model, crops), _features(model, val_crops)
    before = head.accuracy(val_feats, val_labels)
    kept = head.fit(feats, labels, epochs, seed, val=(val_feats, val_labels))
    after = head.accuracy(val_feats, val_labels)
    for name, value in zip((g1.input[1], g1.input[2], g2.input[1], g2.input[2]), head.params):
        init[name].CopyFrom(numpy_helper.from_array(value.astype(np.float32), name))
    out.parent.mkdir(parents=True, exist_ok=True)
    int8_classifier(out).unlink(missing_ok=True)  # an earlier enrolment's copy: made again from this file (enroll)
    tmp = out.with_suffix(".tmp")
    onnx.save(model, str(tmp))
    tmp.replace(out)
    _session(out, 1)  # the adapted file loads as the reader will load it
    return EnrollResult(out, len(feats), before, after, kept, time.perf_counter() - t0)


def enroll(name: str, data: Path, faces: dict[Card, np.ndarray], scenes: int, epochs: int, seed: int = 0,
           base: Path | None = None, borrowed: Sequence[Card] = ()) -> EnrollResult:
    """Enrol the deck whose ``faces`` are given as ``name`` under ``data``; ``borrowed``: the
    faces among them that are a packaged design's, not the deck's (its jokers, when photographed
    without them), recorded in ``enrolled.json``."""
    folder = deck_folder(data, name)
    detector = IndexDetector(MODELS / "index-detector.onnx", det_conf=0.1, threads=1)
    deck = deck_from_faces(faces, name, folder / "faces", detector)
    base = base or MODELS / "index-classifier.onnx"
    result = adapt_classifier(base, deck, folder / DECK_CLASSIFIER, scenes, epochs, seed, detector)
    # the adapted classifier keeps the base one's features: it reads unsure boxes again, frames
    # crops and spares sure boxes' further looks as the base does (and keeps no earlier enrolment's settings, from another base)
    settings = {
        "refine_below": (classifier_refine_below(base), REFINE_OFF),
        "frame_again_below": (classifier_frame_again_below(base), LOOK_ALWAYS),
        "sure_enough_at": (classifier_sure_enough_at(base), LOOK_ALWAYS),
    }
    kept = {key: value for key, (value, unset) in settings.items() if value != unset}
    meta = (folder / DECK_CLASSIFIER).with_suffix(".json")
    if kept:
        meta.write_text(json.dumps(kept) + "\n")
    else:
        meta.unlink(missing_ok=True)
    reader = CardReader(classifier=result.classifier, threads=1)  # the deck's reader, as it will read (settings included)
    quantize_classifier(result.classifier, reader_crops(reader, calibration_scenes(deck, CALIBRATION_SCENES, seed)), seed)
    (folder / "enrolled.json").write_text(
        json.dumps(
            {
                "name": name,
                "scenes": scenes,
                "epochs": epochs,
                "seed": seed,
                "borrowed": {"faces": [card_name(c) for c in borrowed], "design": JOKER_DESIGN} if borrowed else None,
                "crops": result.crops,
                "held_out_crop_accuracy": {"before": round(result.before, 4), "after": round(result.after, 4)},
                "epochs_kept": result.epochs_kept,
                "seconds": round(result.seconds, 1),
            },
            indent=1,
        )
    )
    return result


def design_named(name: str, data: Path):
    """A procedural design by name (the named and held-out ones), or an installed real deck."""
    from recognizer.training.synth import HELD_OUT_PROCEDURAL, PROCEDURAL_DESIGNS
    from recognizer.training.synth.decks import DECKS, prepare_decks

    for design in (*PROCEDURAL_DESIGNS, *HELD_OUT_PROCEDURAL):
        if design.name == name:
            return design
    if any(src.name == name and src.standard for src in DECKS):  # render only the deck named, not every deck to say "no such deck"
        for deck in prepare_decks(data, names=(name,), install=False):
            return deck
    names = ", ".join(d.name for d in (*PROCEDURAL_DESIGNS[:3], *HELD_OUT_PROCEDURAL))
    raise EnrollError(f"no rendered design named {name!r} (e.g. {names}, ...; real decks once their Debian packages are installed)")
