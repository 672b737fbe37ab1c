"""``guandan-ref recognize``, ``train-recognizer``, ``blend-classifiers``, ``quantize-classifier`` and ``deck enroll``.

``recognize IMAGE... --json`` prints one JSON object per image per line: ``image``,
``cards`` (the multiset read, in notation, sorted by rank then suit), ``detections``
(``card``, ``conf``, ``box`` [x0, y0, x1, y1] px, ``angle``: the turn in degrees,
counter-clockwise, that shows the index upright), ``card_confidence`` (one per card of
``cards``), ``alternatives`` (one per card of ``cards``: its most likely faces as
``[card, calibrated probability]``, the read face first), ``confidence`` (of the whole reading) and ``uncertain`` (the confidence is
below the reader's calibrated threshold: the read must be confirmed); an unreadable or
missing file gets an ``error`` field, the other images are still read, and the exit code
is 1. With ``--table`` the images are frames of a whole table and the table pipeline
(:mod:`recognizer.table.frames`) reads them instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from recognizer.images import MAX_PIXELS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recognize", help="read the cards lying face up in images")
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument("--json", action="store_true", help="one JSON object per image per line")
    p.add_argument("--table", action="store_true", help="the images are whole-table frames: segment plays per seat")
    p.add_argument("--calibration", metavar="FILE", help="table calibration file (with --table)")
    p.add_argument("--models", metavar="DIR", help="folder with index-detector.onnx and index-classifier.onnx")
    p.add_argument("--deck", metavar="NAME", help="read with the classifier adapted to this enrolled deck ('deck enroll')")
    p.add_argument("--data", metavar="DIR", help="data directory of enrolled decks (default $GUANDAN_DATA or ~/.cache/guandan-referee)")
    p.add_argument("--max-pixels", type=int, default=MAX_PIXELS, metavar="N", help=f"refuse images larger than this (default {MAX_PIXELS:,})")
    p.set_defaults(handler=recognize)

    t = sub.add_parser("train-recognizer", help="render training data and train the card reader (needs the 'train' extra)")
    t.add_argument("--out", metavar="DIR", default="work-data/recognizer", help="working folder for data and runs")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--images", type=int, default=2000, help="rendered scenes for the detector")
    t.add_argument("--epochs", type=int, default=12, help="detector epochs")
    t.add_argument("--classifier-scenes", type=int, default=6000, help="rendered scenes cut into classifier crops")
    t.add_argument("--classifier-epochs", type=int, default=10)
    t.add_argument("--detector-init", metavar="PT", type=Path, help="continue the detector from these ultralytics weights (an earlier run's best.pt)")
    t.add_argument("--classifier-init", metavar="PT", type=Path, help="continue the classifier from this state dict (an earlier run's index-classifier.pt)")
    t.add_argument("--mine-with", metavar="ONNX", type=Path, help="a detector whose false hits on the classifier's scenes become 'not an index' crops (default with --stage all: the detector just trained)")
    t.add_argument("--stage", choices=("all", "detector", "classifier"), default="all")
    t.add_argument("--no-decks", action="store_true", help="procedural Hershey-font designs only (no Debian deck or font packages)")
    t.add_argument("--install", action="store_true", help="copy the trained ONNX files into recognizer/models")
    t.add_argument("--resume", metavar="DIR", nargs="?", const="", help="train in chunks in DIR (default recognizer/training/checkpoints/realtrain, committed), continuing from what an earlier chunk left there (first chunk: from recognizer/models)")
    t.add_argument("--chunk-minutes", type=float, default=40.0, help="wall time of one chunk with --resume (default 40)")
    t.add_argument("--real", metavar="DIR", type=Path, help="labelled real photographs to train on with --resume (laid out like ../shared/realtrain)")
    t.add_argument("--render-scenes", type=int, default=1500, help="rendered scenes cut into classifier crops with --resume (default 1500)")
    t.add_argument("--render-jokers", type=int, default=0, help="with --resume: rendered scenes more, each hand with one to four jokers, cut into classifier crops and added to the detector's set (default 0)")
    t.add_argument("--render-fans", type=int, default=0, help="with --resume: rendered scenes more, each a hand fanned tightly, every card at its own angle, cut into classifier crops and added to the detector's set (default 0)")
    t.add_argument("--detector-lr0", type=float, default=0.01, help="with --resume: the detector's learning rate at the chunk's start (default 0.01; lower to continue a detector on the set it learnt)")
    t.add_argument("--detector-real-weight", type=int, default=1, help="with --resume: times each real training photo, in each quarter turn, is in the detector's set (renders once; default 1)")
    t.add_argument("--threads", type=int, default=2, help="torch threads with --resume (default 2; 1 ran 2-5x faster on the shared machine under load)")
    t.add_argument("--real-weight", type=int, default=2, help="with --resume: times each real crop is shown per classifier epoch (renders once; default 2)")
    t.add_argument("--distill", type=float, default=1.0, help="with --resume: weight of the installed classifier's outputs on the rendered crops it reads right (default 1; 0: labels only)")
    t.add_argument("--real-cuts", type=int, default=3, help="with --resume: crops cut of each labelled real index each way up (default 3)")
    t.add_argument("--augment", action="store_true", help="with --resume: also colour-cast, soften and noise the classifier's crops as they are drawn")
    t.add_argument("--classifier-widths", metavar="A,B,C", type=_widths, help="with --resume, starting a new folder: the classifier is a fresh network with these block widths (the installed one's: 16,32,64)")
    t.set_defaults(handler=train)

    b = sub.add_parser("blend-classifiers", help="one index classifier whose logits are the weighted sum of several (needs the 'train' extra)")
    b.add_argument("members", nargs="+", metavar="PT[:WEIGHT]", help="an index-classifier.pt (a plain one) and its weight (default 1)")
    b.add_argument("--out", metavar="DIR", type=Path, required=True, help="folder for the blend's index-classifier.pt and .onnx")
    b.set_defaults(handler=blend)

    q = sub.add_parser("quantize-classifier", help="write the int8 copy of a models folder's index classifier, which the reader then runs (needs the 'enroll' extra: onnx)")
    q.add_argument("--models", metavar="DIR", type=Path, help="folder with index-detector.onnx and the float index-classifier.onnx (default the installed models)")
    q.add_argument("--real", metavar="DIR", type=Path, help="labelled real photographs laid out like ../shared/realtrain: every third of their training split is read for calibration crops too")
    q.add_argument("--scenes", type=int, default=120, help="rendered scenes of the training designs read for calibration crops (default 120)")
    q.add_argument("--seed", type=int, default=0)
    q.set_defaults(handler=quantize)

    deck = sub.add_parser("deck", help="card decks of this tournament")
    deck_sub = deck.add_subparsers(dest="deck_command", required=True)
    e = deck_sub.add_parser("enroll", help="adapt the card reader to one deck from an image of each face (needs the 'enroll' extra: onnx)")
    faces = e.add_mutually_exclusive_group(required=True)
    faces.add_argument("--faces", metavar="DIR", help="one straightened image per face, named by the face: 7H.png, TS.jpg (52), SJ.png, BJ.png (jokers optional: a packaged design's otherwise)")
    faces.add_argument("--render", metavar="DESIGN", help="the faces of a rendered design instead (a demo, or a check on a held-out design)")
    e.add_argument("--name", required=True, help="the deck's name, for --deck NAME")
    e.add_argument("--data", metavar="DIR", help="data directory (default $GUANDAN_DATA or ~/.cache/guandan-referee)")
    e.add_argument("--scenes", type=int, default=1200, help="rendered scenes of the deck to learn from (default 1200: under 10 minutes on one core)")
    e.add_argument("--epochs", type=int, default=8)
    e.add_argument("--seed", type=int, default=0)
    e.set_defaults(handler=enroll_deck)


def _reading_json(path: str, reading) -> dict:
    from referee.cards import card_name

    return {
        "image": path,
        "cards": [card_name(c) for c in reading.cards],
        "detections": [
            {"card": card_name(d.card), "conf": round(d.conf, 4), "box": [round(v, 1) for v in d.box], "angle": d.angle} for d in reading.detections
        ],
        "card_confidence": [round(c, 4) for c in reading.card_confidence],
        "alternatives": [[[card_name(c), p] for c, p in alt] for alt in reading.alternatives],
        "confidence": round(reading.confidence, 4),
        "uncertain": reading.uncertain,
    }


def recognize(args: argparse.Namespace) -> int:
    if args.table:
        from recognizer.table.frames import recognize_frames

        records = recognize_frames(list(args.images), args.calibration, max_pixels=args.max_pixels)
        for record in records:
            print(json.dumps(record), flush=True)
        return 1 if any("error" in r for r in records) else 0
    if args.calibration:
        raise ValueError("--calibration only applies with --table")
    from recognizer.images import load_image
    from recognizer.reader import CardReader

    from recognizer.decks import deck_classifier

    classifier = deck_classifier(args.data, args.deck) if args.deck else None
    reader = CardReader(Path(args.models) if args.models else None, classifier=classifier)
    failed = False
    for path in args.images:
        try:
            record = _reading_json(path, reader.read(load_image(path, args.max_pixels)))
        except ValueError as exc:  # ImageError: the file; ValueError: an image the reader refuses
            failed = True
            record = {"image": path, "error": str(exc)}
        if args.json:
            print(json.dumps(record), flush=True)
        elif "error" in record:
            print(f"{path}: error: {record['error']}", file=sys.stderr)
        else:
            flag = ", uncertain" if record["uncertain"] else ""
            print(f"{path}: {' '.join(record['cards']) or '(no cards)'}  (confidence {record['confidence']:.2f}{flag})")
    return 1 if failed else 0


def train(args: argparse.Namespace) -> int:
    from recognizer.decks import data_folder
    from recognizer.training import train as training
    from recognizer.training.synth.decks import HELD_OUT, prepare_decks, training_design_sampler
    from recognizer.training.synth.fonts import ensure_font_packages, index_fonts

    work = Path(args.out).resolve()  # ultralytics puts a relative project under its own runs/ folder
    work.mkdir(parents=True, exist_ok=True)
    decks = [] if args.no_decks else prepare_decks(data_folder())
    if not args.no_decks and not decks:
        print("warning: deck packages unavailable; training on procedural designs only", file=sys.stderr)
    if not args.no_decks:
        ensure_font_packages()
    fonts = () if args.no_decks else index_fonts()
    real = [d.name for d in decks if d.name not in HELD_OUT]
    print(f"training designs: {len(real)} real decks (held out: {', '.join(HELD_OUT)}), procedural ones in {len(fonts)} outline fonts and 6 Hershey fonts")
    sampler = training_design_sampler(decks, fonts=fonts)
    if args.resume is not None:
        from recognizer.training.chunks import DEFAULT_DIR, ChunkConfig, run_chunk

        resume = Path(args.resume).resolve() if args.resume else DEFAULT_DIR
        cfg = ChunkConfig(resume, args.real, args.chunk_minutes, args.seed, args.stage, args.render_scenes, args.images, args.threads, sampler, args.real_weight, args.distill, args.render_jokers,
                          render_fans=args.render_fans, real_cuts=args.real_cuts, augment=args.augment, widths=args.classifier_widths,
                          detector_lr0=args.detector_lr0, detector_real_weight=args.detector_real_weight)
        chunk = run_chunk(cfg, " ".join(sys.argv))
        print(json.dumps(chunk, indent=1))
        return 0
    detector = classifier = None
    if args.stage in ("all", "detector"):
        detector = training.train_detector(work, args.images, args.epochs, args.seed, sampler, init=args.detector_init)
        print(f"detector: {detector}")
    if args.stage in ("all", "classifier"):
        mine_with = args.mine_with or detector
        classifier = training.train_classifier(work, args.classifier_scenes, args.classifier_epochs, args.seed, sampler, init=args.classifier_init, mine_with=mine_with)
        print(f"classifier: {classifier}")
    if args.install:
        training.install_models(detector, classifier)
        print(f"installed into {training.PACKAGE_MODELS}" + ("; the classifier runs as float until 'guandan-ref quantize-classifier --real DIR' makes its int8 copy" if classifier else ""))
    return 0


def _widths(text: str) -> tuple[int, int, int]:
    """``A,B,C`` as three positive block widths, or an error naming what was wrong."""
    try:
        widths = tuple(int(v) for v in text.split(","))
    except ValueError:
        widths = ()
    if len(widths) != 3 or min(widths) < 1:
        raise argparse.ArgumentTypeError(f"--classifier-widths must be three positive whole numbers like 24,48,96, got {text!r}")
    return widths


def _member(text: str) -> tuple[Path, float]:
    """``PT[:WEIGHT]`` as a path and a positive weight, or ``ValueError`` naming what was wrong."""
    path, sep, weight = text.rpartition(":")
    if not sep:
        path, weight = text, "1"
    try:
        value = float(weight)
    except ValueError:
        raise ValueError(f"{text!r}: expected PT or PT:WEIGHT, the weight a number") from None
    if not value > 0:
        raise ValueError(f"{text!r}: the weight must be positive")
    if not Path(path).is_file():
        raise ValueError(f"{text!r}: no classifier state dict at {path}")
    return Path(path), value


def blend(args: argparse.Namespace) -> int:
    from recognizer.training.classifier_net import blend_files

    out = blend_files([_member(m) for m in args.members], args.out)
    print(f"blend of {len(args.members)} classifiers: {out} and {out.with_suffix('.pt')}")
    return 0


def quantize(args: argparse.Namespace) -> int:
    import cv2
    import numpy as np

    from recognizer.decks import data_folder
    from recognizer.training.quantize import CALIBRATION_CROPS, calibration_scenes, quantize_classifier, reader_crops
    from recognizer.reader import MODELS, CardReader, int8_classifier
    from recognizer.training.realtrain import load_labelled, split_by_blocks
    from recognizer.training.synth.decks import prepare_decks, training_design_sampler

    models = args.models or MODELS
    classifier = models / "index-classifier.onnx"
    if args.scenes < 0:
        raise ValueError(f"--scenes must be at least 0, got {args.scenes}")
    if classifier.exists():  # the copy is made again below; meanwhile the reader reads with the float file
        int8_classifier(classifier).unlink(missing_ok=True)
    reader = CardReader(models, threads=1)
    images = []
    if args.real:
        train, _ = split_by_blocks([p for p in load_labelled(args.real) if p.boxes])
        images += [cv2.imread(str(p.path), cv2.IMREAD_COLOR) for p in train[::3]]
    sampler = training_design_sampler(prepare_decks(data_folder(), install=False))
    crops = np.concatenate([reader_crops(reader, images), reader_crops(reader, calibration_scenes(sampler, args.scenes, args.seed))])
    out = quantize_classifier(classifier, crops, args.seed)
    print(f"{out}: int8, calibrated on {min(len(crops), CALIBRATION_CROPS):,} of the {len(crops):,} crops the reader cut from "
          f"{len(images)} real photos and {args.scenes} rendered scenes")
    return 0


def enroll_deck(args: argparse.Namespace) -> int:
    from recognizer.decks import data_folder
    from recognizer.training.enroll import design_named, enroll
    from recognizer.training.synth.photos import JOKER_DESIGN, faces_of_design, read_faces
    from referee.cards import card_name

    try:
        import onnx  # noqa: F401
    except ModuleNotFoundError:
        raise ValueError("deck enroll needs the onnx package: pip install -e '.[enroll]'") from None
    data = data_folder(args.data)
    if args.scenes < 10 or args.epochs < 1:
        raise ValueError(f"--scenes must be at least 10 and --epochs at least 1, got {args.scenes} and {args.epochs}")
    faces, borrowed = read_faces(Path(args.faces)) if args.faces else (faces_of_design(design_named(args.render, data)), [])
    if borrowed:
        print(f"no image of {' or '.join(card_name(c) for c in borrowed)} in {args.faces}: drawn from the packaged design {JOKER_DESIGN!r} instead")
    result = enroll(args.name, data, faces, scenes=args.scenes, epochs=args.epochs, seed=args.seed, borrowed=borrowed)
    print(
        f"enrolled deck {args.name!r}: {result.classifier} ({result.crops} crops, {result.seconds:.0f} s; "
        f"index crops of scenes held out of the fine-tuning read right {result.before:.1%} -> {result.after:.1%}, "
        + (f"after epoch {result.epochs_kept} of {args.epochs})" if result.epochs_kept else "no epoch read them better: the classifier is kept unchanged)")
    )
    return 0
