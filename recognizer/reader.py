"""Read the cards in one image (a rectified play area, or any photo) without torch.

Two ONNX models run under onnxruntime: a one-class YOLO finds corner indices, a small
classifier names each crop (face, upright or upside down, or "not an index"; its int8 copy
where one was made from it, :func:`int8_classifier`), and
:mod:`recognizer.geometry` turns the indices into a multiset. Both models ship in
``recognizer/models`` (how they were made: ``recognizer/MODEL.md``).

The models know indices near upright only, so the reader looks in rotated views of the
image (:mod:`recognizer.orientation`), in tiles when a photo is far larger than a play
area, reads a box it is unsure of again at turns between the views (tossed and fanned
cards each lie at their own angle), and merges what the views read. Both models learnt dark
ink on light cards: in a photo of a dark deck (or one whose first view finds next to nothing),
the detector looks again at the photo with its lightness turned over, and an unsure crop is
read again so. Every reading carries a confidence calibrated on
training designs and an ``uncertain`` flag below the trusted threshold.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np

from recognizer.crops import CROP_H, CROP_W, DARK_DECK_LEAST, N_CLASSES, N_FACES, NOT_INDEX, crop_index, dark_deck, decode_class, light_ink, lightness_turned, to_tensor, turned_index
from recognizer.geometry import IndexHit, box_centre, cards_from_indices, distinct_indices, has_partner, reconcile_corners, same_place
from recognizer.orientation import pass_angles, rotate_points, rotation
from referee.cards import FACES, Card, is_joker

MODELS = Path(__file__).with_name("models")
TILE_ABOVE = 1.5
"""Images whose longer side exceeds this many tiles are read in tiles as well as whole."""
ALTERNATIVES = 3
"""How many faces, the read one first, each card's :attr:`AreaReading.alternatives` lists."""
VIEW_GROWTH = 0.06
"""Each further classifier view grows the detected box by this share of its size on every side."""
CANVAS_MARGIN = 16
"""Pixels of grey a detector with free input sides gets at least on each side of the image
(:meth:`IndexDetector.canvas`): without them, the image's edges meet the network's own zero
padding, and it put a quarter more boxes on nothing in rendered play areas."""
REFINE_OFF = -1.0
"""``refine_below`` that reads no box again (no read is less sure than -1): a classifier
file says in ``<name>.json`` how unsure a read must be to be read again at
:data:`REFINE_TURNS` (:func:`classifier_refine_below`); one that never learnt court art and
printed words at those turns as "not an index" reads them there as jokers, so without it
the reader does not."""
LOOK_ALWAYS = 2.0
"""A surety setting that always takes the further look (no read is as sure as 2): a classifier
file says in ``<name>.json`` how sure a crop's first framing may be and still be read in the
further ones (:func:`classifier_frame_again_below`), and how sure a box's read in one view
may be and still be read in the others (:func:`classifier_sure_enough_at`)."""
REFINE_TURNS = (-45.0, -22.5, 22.5)
"""With the two views a quarter turn apart, each view and these turns of it read an index
within 11.25 degrees of square on, whatever its angle."""
REFINE_FLOOR = 0.8
"""A read at a turn is taken only when at least this sure (:func:`_surety`): the surest of
three more looks at an unsure box leans towards a wrong face (a bellot 5 turned 22.5
degrees reads as a J at 0.6-0.7; recognizer/MODEL.md measures the floor)."""
REFINE_NOT_INDEX = 0.5
"""A box this surely "not an index" in its view is not read again (a view a quarter turn
off an index calls it so; the other view reads it)."""


def _grown(box: tuple[float, float, float, float], share: float) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = box
    dx, dy = (x1 - x0) * share, (y1 - y0) * share
    return (x0 - dx, y0 - dy, x1 + dx, y1 + dy)


@dataclass(frozen=True)
class Detection:
    """One corner index read: the face, the classifier's confidence, its box (x0, y0, x1, y1)
    in image pixels (the bounds of the index box as read), and the rotation (degrees,
    OpenCV's counter-clockwise sense) that shows the index upright."""

    card: Card
    conf: float
    box: tuple[float, float, float, float]
    angle: float = 0.0


class Candidate(NamedTuple):
    """One detected box as read: the box in the frame of the image turned by ``angle``
    (the rotation its crop was read at), its detector score, the classifier's class
    probabilities, the reader's view that found it (``angle`` itself, or that view
    turned further where a read square on to the index was surer), and whether its box is one
    the detector found in the photo with its lightness turned over (where both looks found the
    index, the surer box's look; :meth:`CardReader._dark_boxes_too`)."""

    box: tuple[float, float, float, float]
    score: float
    probs: np.ndarray
    angle: float
    view: float
    turned_look: bool = False

    def place(self) -> tuple[float, float]:
        """The box centre in the image's own pixel frame (a tenth of a pixel): the same for
        the copies of one box in views a quarter turn apart."""
        x, y = rotate_points(np.array([box_centre(self.box)]), -self.angle)[0]
        return round(float(x), 1), round(float(y), 1)


def _turned_box(box: tuple[float, float, float, float], angle: float) -> tuple[float, float, float, float]:
    """``box`` of one view in the frame of a view turned ``angle`` degrees further: its
    corners turned and bounded (exact for quarter turns, which keep a box a box)."""
    x0, y0, x1, y1 = box
    pts = rotate_points(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]), angle)
    return tuple(float(v) for v in (*pts.min(0), *pts.max(0)))


def _face(p: np.ndarray) -> Card:
    """The face class probabilities ``p`` name most (either orientation)."""
    return FACES[int(face_probabilities(p).argmax())]


def _surety(p: np.ndarray) -> float:
    """How surely class probabilities ``p`` name one face: its probability (either
    orientation) less that of "not an index"."""
    return float(face_probabilities(p).max() - p[NOT_INDEX])


def _image_bounds(box: tuple[float, float, float, float], angle: float) -> tuple[float, float, float, float]:
    return tuple(round(v, 1) for v in _turned_box(box, -angle))


def _model_setting(model: Path, key: str, default, valid, says: str):
    """One setting of a model file from ``<name>.json`` beside it (``default`` without one),
    refused with what it must be when ``valid`` rejects it."""
    meta = Path(model).with_suffix(".json")
    if not meta.exists():
        return default
    value = json.loads(meta.read_text()).get(key, default)
    if not valid(value):
        raise ValueError(f"{meta}: {key} must be {says}, got {value!r}")
    return value


def detector_turns(detector: Path) -> bool:
    """Whether a detector file learnt indices lying every way (``<name>.json`` beside it says
    ``"quarter_turns": true``; written by the training chunks, which show it each image in
    the four quarter turns). The reader's views a quarter turn apart then need it to look
    once: a detector trained upright only finds a sideways index in the turned view alone."""
    return _model_setting(detector, "quarter_turns", False, lambda v: isinstance(v, bool), "true or false")


CONFIDENT = 0.96
"""The reading confidence from which a read is trusted (below it the read is marked
``uncertain``): chosen on scenes of the training designs so that reads at or above it were
exact at least 99.5 % of the time (``bench/recognizer.py --calibrate``; MODEL.md)."""


@dataclass(frozen=True)
class AreaReading:
    """What one image shows: the cards as a sorted multiset, each card's confidence (same
    order), the indices behind them, and the confidence of the whole reading: the weakest
    card's, lowered by the strongest detected box that no card explains (an index the
    classifier could not name is a card that may be missing). ``uncertain`` below the
    reader's threshold: the referee must not take such a read silently.

    ``alternatives`` (same order as ``cards``): each card's most likely faces with
    probabilities calibrated on held-out real photographs (temperature scaling of the
    classifier, ``bench/recognizer.py --calibration``), the read face first; the referee's
    doubt handling weighs them. ``card_confidence`` stays the uncalibrated probability the
    reader's thresholds were chosen on."""

    cards: list[Card] = field(default_factory=list)
    detections: list[Detection] = field(default_factory=list)
    confidence: float = 1.0
    card_confidence: list[float] = field(default_factory=list)
    uncertain: bool = False
    alternatives: list[tuple[tuple[Card, float], ...]] = field(default_factory=list)


def face_probabilities(probs: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """The 54 faces' probabilities (either orientation) from the classifier's class
    probabilities (one crop's, or a row per crop), softened by ``temperature`` (the same as
    dividing the logits by it for one view; the reader averages two views' probabilities first)."""
    q = np.power(np.clip(probs, 1e-12, 1.0), 1.0 / temperature)
    q = q / q.sum(-1, keepdims=True)
    return q[..., :N_FACES] + q[..., N_FACES : 2 * N_FACES]


def classifier_temperature(classifier: Path) -> float:
    """The temperature calibrated for a classifier file (``<name>.json`` beside it, written by
    ``bench/recognizer.py --calibration --write``); 1.0 when none was fitted."""
    valid = lambda v: isinstance(v, (int, float)) and 0.05 <= v <= 20  # noqa: E731
    return float(_model_setting(classifier, "temperature", 1.0, valid, "a number in [0.05, 20]"))


def classifier_refine_below(classifier: Path) -> float:
    """How unsure a read of a classifier file must be to be read again at :data:`REFINE_TURNS`
    (``"refine_below"`` in ``<name>.json`` beside it, written when a classifier that learnt
    those turns is installed; recognizer/MODEL.md); :data:`REFINE_OFF` when none is set."""
    valid = lambda v: isinstance(v, (int, float)) and -1 <= v <= 1  # noqa: E731
    return float(_model_setting(classifier, "refine_below", REFINE_OFF, valid, "a number in [-1, 1]"))


FLOAT_DIGEST = "float_sha256"
"""The metadata key under which an int8 classifier names the float file it was made from."""


def int8_classifier(classifier: Path) -> Path:
    """Where the int8 copy of a classifier file lies (``<name>.int8.onnx`` beside it, written by
    :func:`recognizer.training.quantize.quantize_classifier`)."""
    return Path(classifier).with_name(Path(classifier).stem + ".int8.onnx")


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes: what ties an int8 copy to the float file it was made from
    (a file's name and time say nothing once a classifier is installed or enrolled again)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _classifier_session(classifier: Path, threads: int):
    """The session the reader classifies with: the int8 copy of ``classifier`` where one lies
    beside it made from this very file (its metadata names the file's SHA-256), else the
    float file itself. A copy left from an earlier float file (a classifier installed or
    enrolled again, not quantized again) is passed over with a warning, not run."""
    int8 = int8_classifier(classifier)
    if int8.exists() and Path(classifier).exists():
        session = _session(int8, threads)
        if session.get_modelmeta().custom_metadata_map.get(FLOAT_DIGEST) == file_digest(classifier):
            return session
        warnings.warn(f"{int8} was not made from {classifier} as it now is: reading with the float file "
                      f"(make it again: guandan-ref quantize-classifier --models {classifier.parent})", stacklevel=3)
    return _session(classifier, threads)


def _surety_setting(classifier: Path, key: str) -> float:
    """A surety in [0, 1] from a classifier file's ``<name>.json``; :data:`LOOK_ALWAYS` when unset."""
    valid = lambda v: v is None or (isinstance(v, (int, float)) and 0 <= v <= 1)  # noqa: E731
    value = _model_setting(classifier, key, None, valid, "a number in [0, 1]")
    return LOOK_ALWAYS if value is None else float(value)


def classifier_frame_again_below(classifier: Path) -> float:
    """Below what surety a crop of a classifier file is read in the reader's further framings
    (``"frame_again_below"`` in ``<name>.json`` beside it): a crop read surer in its first
    framing keeps that read, and the framings after it, which cost as much again, are spared.
    :data:`LOOK_ALWAYS` when none is set. Set for the installed blend at 0.9: on the real
    photo sets no crop that sure in its first framing was named otherwise by the mean of both,
    and 40 % of the crops are (recognizer/MODEL.md)."""
    return _surety_setting(classifier, "frame_again_below")


def classifier_sure_enough_at(classifier: Path) -> float:
    """From what surety a box read by a classifier file in one of the reader's views takes no
    more looks (``"sure_enough_at"`` in ``<name>.json`` beside it; a joker never does, see
    :meth:`CardReader._sure_enough`): the boxes of a detector that learnt quarter turns are
    classified in every view, and one read so in the first spares the others' crops, and any
    view's further framings. :data:`LOOK_ALWAYS` when none is set."""
    return _surety_setting(classifier, "sure_enough_at")


def _session(path: Path, threads: int):
    import onnxruntime as ort

    if not path.exists():
        raise FileNotFoundError(f"recognizer model missing: {path} (train it with 'guandan-ref train-recognizer')")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def _tiles(image: np.ndarray, tile: int) -> list[tuple[tuple[int, int], np.ndarray]]:
    """The whole image, and for one much larger than ``tile`` its overlapping ``tile``-sized
    pieces too (a quarter overlap): the detector sees a fixed 320 px input, so in a whole
    deal photographed from above the indices would be a few pixels tall."""
    h, w = image.shape[:2]
    out = [((0, 0), image)]
    if not tile or max(h, w) <= TILE_ABOVE * tile:
        return out
    step = max(1, tile * 3 // 4)
    xs = sorted({min(x, max(0, w - tile)) for x in range(0, max(1, w - tile + step), step)})
    ys = sorted({min(y, max(0, h - tile)) for y in range(0, max(1, h - tile + step), step)})
    return out + [((x, y), image[y : y + tile, x : x + tile]) for y in ys for x in xs]


def _per_card(cards: list[Card], hits: list[IndexHit], faces: dict[tuple, np.ndarray]) -> tuple[list[float], list[tuple[tuple[Card, float], ...]]]:
    """Each card's confidence and alternatives, from the face's most confident reads, one
    per card counted: the read's classifier probability, and its :data:`ALTERNATIVES` most
    likely faces with calibrated probabilities (``faces``: per read, by box and view), the
    read face first."""
    by_face: dict[Card, list[IndexHit]] = {}
    for h in hits:
        by_face.setdefault(h.card, []).append(h)
    for reads in by_face.values():
        reads.sort(key=lambda h: -h.conf)
    seen: dict[Card, int] = {}
    confs, alternatives = [], []
    for card in cards:
        k = seen.get(card, 0)
        seen[card] = k + 1
        hit = by_face[card][min(k, len(by_face[card]) - 1)]
        confs.append(hit.conf)
        p = faces[(hit.box, hit.angle)]
        others = [int(i) for i in np.argsort(-p) if FACES[int(i)] != card][: ALTERNATIVES - 1]
        alternatives.append(((card, round(float(p[FACES.index(card)]), 4)),) + tuple((FACES[i], round(float(p[i]), 4)) for i in others))
    return confs, alternatives


def _explained(box: tuple[float, float, float, float], angle: float, hits: list[IndexHit]) -> bool:
    """True when a detected box lies on an index that a kept read stands for."""
    probe = IndexHit(0, False, box, 0.0, angle)  # any face: only its place and size matter
    return any(float(np.hypot(*(probe.centre() - h.centre()))) < 0.5 * max(probe.size, h.size) for h in hits)


def _detector_input(session, path: Path) -> tuple[tuple[int, int], int]:
    """The detector's input (height, width) and, for one exported with free height and width
    (ultralytics' ``dynamic=True``), the stride its sides must be multiples of (0 when fixed):
    both from the size and stride ultralytics writes into the file's metadata."""
    shape = session.get_inputs()[0].shape
    if all(isinstance(d, int) for d in shape[2:]):
        return (int(shape[2]), int(shape[3])), 0
    meta = session.get_modelmeta().custom_metadata_map
    try:
        size = json.loads(meta["imgsz"])
        return (int(size[0]), int(size[1])), int(meta["stride"])
    except (KeyError, ValueError, TypeError, IndexError) as err:
        raise ValueError(f"{path}: a detector with free input sides must name its imgsz and stride in its metadata, as ultralytics' export does ({err!r})") from None


class IndexDetector:
    """The one-class corner-index detector alone (the reader's first stage; training also
    runs it to find the false hits the classifier must learn to reject)."""

    def __init__(self, path: Path, det_conf: float = 0.15, nms_iou: float = 0.4, threads: int = 1) -> None:
        self.session = _session(Path(path), threads)
        self.size, self.stride = _detector_input(self.session, Path(path))
        self.det_conf = det_conf
        self.nms_iou = nms_iou

    def canvas(self, height: int, width: int) -> tuple[int, int]:
        """The network input (height, width) for an image scaled to ``height`` x ``width``
        within :attr:`size`: the whole size for a detector exported at a fixed one, else
        the scaled image with :data:`CANVAS_MARGIN` round it where the size leaves room,
        padded up to the detector's stride. A 600 x 260 play area then costs a 320 x 176
        input, not a 320 x 320 one mostly padding."""
        if not self.stride:
            return self.size
        m = 2 * CANVAS_MARGIN
        return (min(self.size[0], -(-(height + m) // self.stride) * self.stride), min(self.size[1], -(-(width + m) // self.stride) * self.stride))

    def detect(self, image: np.ndarray, angle: float = 0.0) -> list[tuple[tuple[float, float, float, float], float]]:
        """Index boxes (x0, y0, x1, y1) with their scores, after NMS: in ``image`` pixels, or
        with an ``angle`` in the frame of ``image`` turned by that many degrees about its
        origin (OpenCV's sense; :func:`recognizer.orientation.rotation`)."""
        turn, (iw, ih) = rotation(image.shape, angle)
        s = min(self.size[0] / ih, self.size[1] / iw)
        small = cv2.resize(image, None, fx=s, fy=s, interpolation=cv2.INTER_AREA)
        if angle:
            small_turn, size = rotation(small.shape, angle)
            small = cv2.warpAffine(small, small_turn, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(114, 114, 114))
        th, tw = self.canvas(small.shape[0], small.shape[1])
        nh, nw = min(th, small.shape[0]), min(tw, small.shape[1])
        top, left = (th - nh) // 2, (tw - nw) // 2
        canvas = np.full((th, tw, 3), 114, np.uint8)
        canvas[top : top + nh, left : left + nw] = small[:nh, :nw]
        ox, oy = -turn[0, 2], -turn[1, 2]  # the turned canvas's origin in the turned frame
        x = to_tensor(canvas[None, :, :, ::-1])
        out = self.session.run(None, {self.session.get_inputs()[0].name: x})[0][0]  # (5, anchors)
        keep = out[4] >= self.det_conf
        cx, cy, w, h, score = out[:, keep]
        boxes = [[float(a - c / 2), float(b - d / 2), float(c), float(d)] for a, b, c, d in zip(cx, cy, w, h)]
        picked = cv2.dnn.NMSBoxes(boxes, score.tolist(), self.det_conf, self.nms_iou) if boxes else []
        found = []
        for i in np.array(picked).reshape(-1):
            x0, y0, bw, bh = boxes[i]
            box = ((x0 - left) / s, (y0 - top) / s, (x0 + bw - left) / s, (y0 + bh - top) / s)
            box = (max(0.0, box[0]) + ox, max(0.0, box[1]) + oy, min(float(iw), box[2]) + ox, min(float(ih), box[3]) + oy)
            if box[2] > box[0] and box[3] > box[1]:
                found.append((box, float(score[i])))
        return found


class CardReader:
    """Loads the committed models once; :meth:`read` is then a pure function of the image.

    ``det_conf`` is the detector score an index needs; ``nms_iou`` the overlap above which
    two detected boxes are one index; ``min_conf`` the classifier probability below which a
    crop is dropped as unreadable (so a low-confidence read still shows in
    :attr:`AreaReading.confidence` above that floor). ``views`` is how many crops of each
    box the classifier sees (the box as detected, then grown by :data:`VIEW_GROWTH` per
    view) before their probabilities are averaged: a box the detector placed loosely on
    an unseen deck is then read from a second framing too; a crop read at least
    ``frame_again_below`` sure (of a face or of "not an index") in its first framing keeps
    that read (default: the classifier file's, see :func:`classifier_frame_again_below`). ``passes`` is how many rotated
    views of the image the reader looks in (:func:`recognizer.orientation.pass_angles`:
    evenly over half a turn from the image's dominant edge direction with ``deskew``);
    ``passes=1, deskew=False`` is the upright-only reader; with a detector that learnt
    quarter turns, its boxes are classified in every view, but a box read at least
    ``sure_enough_at`` surely as a face (not a joker) in the first view is not read in the
    views a quarter turn on, and one read so in any view is not framed again (default:
    the classifier file's, see :func:`classifier_sure_enough_at`). ``classifier`` replaces the
    classifier file (an enrolled deck's, :func:`recognizer.decks.deck_classifier`). An image
    more than :data:`TILE_ABOVE` times ``tile`` pixels long is also read in ``tile``-sized
    pieces (``tile=0``: never); a table's play-area crop is far smaller. The view
    whose reads add up to the most confidence is the main one; another view adds only
    reads of at least ``other_view_conf`` where the main view read no index
    (:func:`recognizer.geometry.same_place`: in a fanned hand the next card's index can lie
    a third of an index height off one the main view read), jokers only of
    at least ``other_view_joker_conf`` (a view turned a quarter off the cards reads their
    art and printed words as indices, unsurely, and as jokers most of all; a real card
    lying a quarter off the main view is often read right in the other below 0.85:
    recognizer/MODEL.md measures both floors); a joker on a box the detector found in the
    photo with its lightness turned over (:attr:`Candidate.turned_look`) needs that floor too
    (a laptop's light logo on its dark lid read as one at 0.63 on realtrain). A joker needs
    ``joker_conf``, or its card's other corner read as the same joker where a card's far
    corner lies: court art and printed words are the detector's commonest false indices,
    and the classifier names them jokers (measured on training designs: false jokers were
    read at 0.41-0.69 in the median, true ones at 0.77 or more nine times in ten). A box
    read less surely than ``refine_below`` (default: the classifier file's, see
    :func:`classifier_refine_below`) in every view (an index lying up to 45 degrees off
    both views, as fanned and tossed cards do) is read again at :data:`REFINE_TURNS` from
    each view, square on to the index at one of them, and keeps the surest read with the
    angle it was read at (:class:`Candidate`), unless that read is a joker: a joker's index
    (a star, the word JOKER) has no upright to find, so its surest turn is any turn, and
    the turns' extra looks at court art are what read as jokers. A joker read less than
    ``joker_scale`` the size of the other indices read beside it (their median longer
    side) is dropped too: small printed words (a maker's address on an ace) read as jokers,
    and a deck's joker index is about as large as its ranks' (on rendered designs the
    smallest, a plain star, 0.54 of them; recognizer/MODEL.md). So is a joker whose shorter
    side is less than ``joker_width`` of the other indices' (their median width): a line of
    print is long but thin, where a joker's index, a star, a word stacked down the corner or
    laid across it in letters as tall as a rank's, is about as wide as a rank's (the
    narrowest of 1,384 jokers read beside other indices on real photos and rendered designs,
    0.42 of it; a bookshop's name printed on an ace, 0.33; recognizer/MODEL.md).
    """

    def __init__(
        self,
        models: Path | None = None,
        det_conf: float = 0.15,
        min_conf: float = 0.4,
        nms_iou: float = 0.4,
        views: int = 2,
        threads: int = 1,
        passes: int = 2,
        deskew: bool = True,
        other_view_conf: float = 0.6,
        other_view_joker_conf: float = 0.85,
        joker_conf: float = 0.6,
        joker_scale: float = 0.5,
        joker_width: float = 0.4,
        confident: float = CONFIDENT,
        classifier: Path | None = None,
        tile: int = 640,
        detect_once: bool | None = None,
        refine_below: float | None = None,
        frame_again_below: float | None = None,
        sure_enough_at: float | None = None,
    ) -> None:
        folder = Path(models) if models is not None else MODELS
        self.detector = IndexDetector(folder / "index-detector.onnx", det_conf, nms_iou, threads)
        self.detect_once = detector_turns(folder / "index-detector.onnx") if detect_once is None else detect_once
        classifier_file = Path(classifier) if classifier is not None else folder / "index-classifier.onnx"
        self.classifier = _classifier_session(classifier_file, threads)
        self.temperature = classifier_temperature(classifier_file)
        self.min_conf = min_conf
        if views < 1:
            raise ValueError(f"views must be at least 1, got {views}")
        self.views = views
        self.frame_again_below = classifier_frame_again_below(classifier_file) if frame_again_below is None else frame_again_below
        if passes < 1:
            raise ValueError(f"passes must be at least 1, got {passes}")
        self.passes = passes
        self.deskew = deskew
        self.other_view_conf = other_view_conf
        self.other_view_joker_conf = other_view_joker_conf
        self.joker_conf = joker_conf
        self.joker_scale = joker_scale
        self.joker_width = joker_width
        self.confident = confident
        self.tile = tile
        self.refine_below = classifier_refine_below(classifier_file) if refine_below is None else refine_below
        self.sure_enough_at = classifier_sure_enough_at(classifier_file) if sure_enough_at is None else sure_enough_at

    def _detect_view(self, image_bgr: np.ndarray, angle: float) -> list[tuple[tuple[float, float, float, float], float]]:
        """The detector's boxes and scores in the view turned by ``angle``, whole and in tiles."""
        boxes, scores = [], []
        for (ox, oy), tile in _tiles(image_bgr, self.tile):
            sx, sy = rotate_points(np.array([[ox, oy]], np.float64), angle)[0]
            for (x0, y0, x1, y1), score in self.detector.detect(tile, angle):
                boxes.append((x0 + sx, y0 + sy, x1 + sx, y1 + sy))
                scores.append(score)
        keep = self._one_box_an_index(boxes, scores) if self.tile else range(len(boxes))  # an index seen whole and in a tile, or in two tiles
        return [(tuple(float(v) for v in boxes[i]), scores[i]) for i in keep]

    def _one_box_an_index(self, boxes: list, scores: list[float]) -> list[int]:
        """Which of ``boxes`` (x0, y0, x1, y1) to keep where looks at one image found one index
        more than once: the detector's own NMS over all of them."""
        if len(boxes) < 2:
            return list(range(len(boxes)))
        return [int(i) for i in np.array(cv2.dnn.NMSBoxes([[b[0], b[1], b[2] - b[0], b[3] - b[1]] for b in boxes], scores, 0.0, self.detector.nms_iou)).reshape(-1)]

    def _dark_boxes_too(self, image_bgr: np.ndarray, angle: float, seen: list, crops: np.ndarray, dark: bool) -> tuple[list, np.ndarray, bool, set[int]]:
        """The first view's boxes ``seen`` (and their ``crops``) with those the detector finds in
        the image with its lightness turned over, whether the photo is a dark deck's, and which
        of the boxes returned that look gave (where both looks found one index, the NMS keeps
        the surer box). The detector learnt dark ink on light cards: on ``../shared/realtrain``'s black-and-gold
        deck it finds 3 of 14 indices under 16 px tall in its input, on the white decks' photos
        154 of 163, and turned over the black cards' small indices are found. Looked at so in a
        dark deck, and in a view with fewer than :data:`recognizer.crops.DARK_DECK_LEAST` boxes,
        whose deck its boxes cannot tell (a black card far off, its index unfound): there the
        boxes found turned over count only where they are a dark deck's themselves."""
        more = self._detect_view(lightness_turned(image_bgr), angle)
        if not more:
            return seen, crops, dark, set()
        more_crops = self._crops(image_bgr, [(box, angle) for box, _ in more], 0)
        if not (dark or dark_deck(more_crops)):
            return seen, crops, dark, set()
        both = seen + more
        keep = self._one_box_an_index([box for box, _ in both], [score for _, score in both])
        return [both[i] for i in keep], np.concatenate([crops, more_crops])[keep], True, {k for k, i in enumerate(keep) if i >= len(seen)}

    def candidates(self, image_bgr: np.ndarray) -> list[Candidate]:
        """Every index box the detector scores at least ``det_conf`` in any of the reader's
        views, with that score, the classifier's class probabilities (before any threshold
        on them) and the view's rotation; a box read sure enough in the first view (:meth:`_sure_enough`)
        is left out of the views a quarter turn on."""
        if not isinstance(image_bgr, np.ndarray) or image_bgr.ndim != 3 or image_bgr.shape[2] != 3 or image_bgr.dtype != np.uint8:
            raise ValueError(f"expected an H x W x 3 uint8 BGR image, got {getattr(image_bgr, 'shape', type(image_bgr))}")
        if min(image_bgr.shape[:2]) < 8:
            raise ValueError(f"image too small to read: {image_bgr.shape[1]}x{image_bgr.shape[0]} px")
        first, *others = pass_angles(image_bgr, self.passes, self.deskew)
        seen = self._detect_view(image_bgr, first)
        crops = self._crops(image_bgr, [(box, first) for box, _ in seen], 0)
        dark, turned_look = dark_deck(crops), set()
        if dark or len(seen) < DARK_DECK_LEAST:
            seen, crops, dark, turned_look = self._dark_boxes_too(image_bgr, first, seen, crops, dark)
        found = [((box, score, first), i) for i, (box, score) in enumerate(seen)]  # each with the first view's box it shows
        probs = self._read_crops(crops, dark)
        enough = {i for i, p in enumerate(probs) if self._sure_enough(p)}  # the first view's boxes read sure enough
        later = []
        for angle in others:
            quarter = round((angle - first) / 90.0) * 90.0
            if self.detect_once and quarter and abs(angle - first - quarter) < 0.1:  # the first view's boxes not sure enough, a quarter turn on
                later += [((_turned_box(box, quarter), score, angle), i) for i, (box, score) in enumerate(seen) if i not in enough]
            else:  # boxes of this view's own, no first view's
                later += [((box, score, angle), None) for box, score in self._detect_view(image_bgr, angle)]
        turned = self._probabilities(image_bgr, [(box, angle) for (box, _, angle), _ in later], 0, dark)
        enough |= {i for (_, i), p in zip(later, turned) if i is not None and self._sure_enough(p)}
        found += later
        if not found:
            return []
        asks = [(box, angle) for (box, _, angle), _ in found]
        probs = self._framed_again(image_bgr, asks, np.concatenate([probs, turned]), dark, np.array([i in enough for _, i in found]))
        out = [Candidate(box, score, p, angle, angle, i in turned_look) for ((box, score, angle), i), p in zip(found, probs)]
        if self.refine_below > REFINE_OFF:
            self._refine(image_bgr, out, dark)
        return out

    def _sure_enough(self, probs: np.ndarray) -> bool:
        """Whether a box read so in one view needs no more looks (in the view a quarter turn
        on, when read so in the first; in further framings, in any view): a face other than
        a joker read at least ``sure_enough_at`` surely (:func:`_surety`). A quarter turn off an
        index the classifier sees its side, which it reads as "not an index" or unsurely at
        best; a joker's star or word has no side to tell it by, and a first view's "not an
        index" may be an index lying a quarter off."""
        return _surety(probs) >= self.sure_enough_at and not is_joker(_face(probs))

    def _refine(self, image_bgr: np.ndarray, out: list[Candidate], dark: bool) -> None:
        """Reads each box unsure in every view again at :data:`REFINE_TURNS` from its view,
        replacing a candidate by a surer read (see the class docstring). Only the surest
        turn's crop is framed again: the other turns' reads are dropped whatever they are.
        ``dark``: the cards are a dark deck (:meth:`_read_crops`)."""
        sure = {c.place() for c in out if _surety(c.probs) >= self.refine_below}  # read surely in some view: no more looks
        unsure = [i for i, c in enumerate(out) if c.place() not in sure and c.probs[NOT_INDEX] < REFINE_NOT_INDEX]
        if not unsure:
            return
        asks = [turned_index(out[i].box, out[i].view, turn) for i in unsure for turn in REFINE_TURNS]
        tries = self._probabilities(image_bgr, asks, 0, dark).reshape(len(unsure), len(REFINE_TURNS), -1)
        best = [max(range(len(REFINE_TURNS)), key=lambda j: _surety(reads[j])) for reads in tries]
        picked = [asks[k * len(REFINE_TURNS) + j] for k, j in enumerate(best)]
        reads = self._framed_again(image_bgr, picked, tries[np.arange(len(unsure)), best], dark)
        for i, (box, angle), p in zip(unsure, picked, reads):
            if _surety(p) > max(_surety(out[i].probs), REFINE_FLOOR) and not is_joker(_face(p)):
                out[i] = out[i]._replace(box=tuple(float(v) for v in box), probs=p, angle=angle)

    def _framed_again(
        self, image_bgr: np.ndarray, asks: list[tuple[tuple[float, float, float, float], float]], probs: np.ndarray, dark: bool, enough: np.ndarray | None = None
    ) -> np.ndarray:
        """The class probabilities of each asked crop (a box in the frame of the image turned
        by an angle) from ``probs``, its first framing's: averaged over the reader's ``views``
        framings where the first reads it less surely than ``frame_again_below`` and its box
        is not read sure enough in some view (``enough``: :meth:`_sure_enough`). ``dark``: the
        cards are a dark deck (:meth:`_read_crops`)."""
        again = np.maximum(face_probabilities(probs).max(1), probs[:, NOT_INDEX]) < self.frame_again_below
        again = np.flatnonzero(again if enough is None else again & ~enough)
        if again.size:
            asked = [asks[i] for i in again]
            probs[again] = np.mean([probs[again]] + [self._probabilities(image_bgr, asked, v, dark) for v in range(1, self.views)], axis=0)
        return probs

    def _probabilities(self, image_bgr: np.ndarray, asks: list[tuple[tuple[float, float, float, float], float]], framing: int, dark: bool) -> np.ndarray:
        """The classifier's class probabilities of each asked crop in one framing (:meth:`_crops`,
        :meth:`_read_crops`)."""
        return self._read_crops(self._crops(image_bgr, asks, framing), dark)

    def _crops(self, image_bgr: np.ndarray, asks: list[tuple[tuple[float, float, float, float], float]], framing: int) -> np.ndarray:
        """The classifier's crop of each asked box (in the frame of the image turned by its
        angle) in one framing: the box grown by ``framing`` times :data:`VIEW_GROWTH` per side."""
        if not asks:
            return np.zeros((0, CROP_H, CROP_W, 3), np.uint8)
        return np.stack([crop_index(image_bgr, _grown(box, framing * VIEW_GROWTH), angle) for box, angle in asks])

    def _read_crops(self, crops: np.ndarray, dark: bool) -> np.ndarray:
        """The classifier's class probabilities of ``crops``. Of a ``dark`` deck (the first view's
        crops, :func:`recognizer.crops.dark_deck`), a crop read less surely than
        ``frame_again_below`` that shows light ink is read again with its lightness turned over,
        and takes that read where it is surer."""
        if not len(crops):
            return np.zeros((0, N_CLASSES), np.float32)
        probs = self._classify(crops)
        if not dark:
            return probs
        unsure = np.maximum(face_probabilities(probs).max(1), probs[:, NOT_INDEX]) < self.frame_again_below
        light = np.flatnonzero(unsure & light_ink(crops))
        if light.size:
            for i, turned in zip(light, self._classify(np.stack([lightness_turned(crops[i]) for i in light]))):
                if _surety(turned) > _surety(probs[i]):
                    probs[i] = turned
        return probs

    def _classify(self, crops: np.ndarray) -> np.ndarray:
        """The classifier's class probabilities of ``crops`` (N x H x W x 3, BGR)."""
        logits = self.classifier.run(None, {self.classifier.get_inputs()[0].name: to_tensor(crops)})[0]
        probs = np.exp(logits - logits.max(1, keepdims=True))
        return probs / probs.sum(1, keepdims=True)

    def reading(
        self, candidates: list[Candidate], det_conf: float | None = None, min_conf: float | None = None, joker_conf: float | None = None
    ) -> AreaReading:
        """The cards that ``candidates`` show, keeping those at or above the thresholds
        (the reader's own by default; a higher ``det_conf`` than the reader's selects the
        same boxes a reader built with it would find, since NMS keeps boxes by score)."""
        det_conf = self.detector.det_conf if det_conf is None else det_conf
        min_conf = self.min_conf if min_conf is None else min_conf
        joker_conf = self.joker_conf if joker_conf is None else joker_conf
        hits, views, faces = [], [], {}  # views: the view that found each hit
        for box, score, p, angle, view, turned_look in candidates:
            k = int(p.argmax())
            decoded = decode_class(k)
            if decoded is None or score < det_conf:
                continue
            face, inverted = decoded
            conf = float(p[k % N_FACES] + p[k % N_FACES + N_FACES])  # either orientation names the face
            if conf < min_conf or p[NOT_INDEX] > conf or (turned_look and is_joker(face) and conf < self.other_view_joker_conf):
                continue
            hit = IndexHit(face, inverted, tuple(round(v, 1) for v in box), round(conf, 4), angle)
            hits.append(hit)
            views.append(view)
            faces[(hit.box, hit.angle)] = face_probabilities(p, self.temperature)
        weight: dict[float, float] = {}
        for h, view in zip(hits, views):
            weight[view] = weight.get(view, 0.0) + h.conf
        main = max(weight, key=weight.__getitem__, default=0.0)
        mains = distinct_indices([h for h, view in zip(hits, views) if view == main])
        others = distinct_indices([h for h, view in zip(hits, views) if view != main and h.conf >= self._other_view_floor(h.card)])
        hits = mains + [h for h in others if not any(same_place(h, m) for m in mains)]  # not an index the main view read
        hits = [h for h in hits if not is_joker(h.card) or h.conf >= joker_conf or has_partner(h, hits)]
        hits = self._jokers_to_scale(hits)
        hits = reconcile_corners(hits, [faces[(h.box, h.angle)] for h in hits])
        detections = sorted(
            (Detection(h.card, h.conf, _image_bounds(h.box, h.angle), round(h.upright_angle, 1)) for h in hits),
            key=lambda d: (d.box[0], d.box[1]),
        )
        cards = cards_from_indices(hits)
        card_conf, alternatives = _per_card(cards, hits, faces)
        unexplained = max((c.score for c in candidates if c.score >= det_conf and not _explained(c.box, c.angle, hits)), default=0.0)
        confidence = round(min(min(card_conf, default=1.0), 1.0 - unexplained), 4)
        return AreaReading(cards, detections, confidence, card_conf, confidence < self.confident, alternatives)

    def _jokers_to_scale(self, hits: list[IndexHit]) -> list[IndexHit]:
        """``hits`` less the jokers shorter than ``joker_scale`` of the other indices' median
        size or thinner than ``joker_width`` of their median width (all of them where no
        other index was read: nothing to measure against)."""
        others = [h for h in hits if not is_joker(h.card)]
        if not others or len(others) == len(hits):  # nothing to measure against, or no joker
            return hits
        floor = self.joker_scale * float(np.median([h.size for h in others]))
        width_floor = self.joker_width * float(np.median([h.width for h in others]))
        return [h for h in hits if not is_joker(h.card) or (h.size >= floor and h.width >= width_floor)]

    def _other_view_floor(self, card: Card) -> float:
        """How sure a read outside the main view must be to count: surer for a joker, the
        face a turned view reads court art and printed words as."""
        return self.other_view_joker_conf if is_joker(card) else self.other_view_conf

    def read(self, image_bgr: np.ndarray) -> AreaReading:
        """The cards lying face up in ``image_bgr`` (H x W x 3 uint8, BGR as OpenCV reads)."""
        return self.reading(self.candidates(image_bgr))
