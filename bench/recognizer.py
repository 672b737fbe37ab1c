"""Card reader benchmark on rendered play areas in designs held out of training.

    .venv/bin/python bench/recognizer.py [--images 300] [--seed 7]
    .venv/bin/python bench/recognizer.py --rotation [--images 60]
    .venv/bin/python bench/recognizer.py --realcards [../shared/realcards]
    .venv/bin/python bench/recognizer.py --real DIR [--split val] [--models A --models B]
    .venv/bin/python bench/recognizer.py --calibration --real DIR [--split val] [--models A] [--write]
    .venv/bin/python bench/recognizer.py --jokers [--images 80] [--models A --models B]
    .venv/bin/python bench/recognizer.py --tossed [--images 80] [--models A --models B]
    .venv/bin/python bench/recognizer.py --joker-pairs [--images 80] [--models A --models B]
    .venv/bin/python bench/recognizer.py --choose-thresholds [--images 300]
    .venv/bin/python bench/recognizer.py --calibrate [--images 500]
    .venv/bin/python bench/recognizer.py --speed [--images 200] [--models DIR --models DIR]
    .venv/bin/python bench/recognizer.py --deck NAME --design DESIGN [--data DIR] [--images 300]

Every report compares the reader's settings side by side in one run: ``upright`` (one
upright view, no tiles, jokers like any other face: the settings before the reader looked
at turned images) and ``any-angle`` (the defaults: two views a quarter turn apart from the
image's dominant edge direction, large photos also in tiles, jokers only when sure).

For each held-out design (the real decks of ``recognizer.training.synth.decks.HELD_OUT`` when the
Debian deck packages are installed, and the held-out procedural designs always): per-card
precision and recall, exact-multiset accuracy per image (target >= 99.5%), the same on
images with duplicate faces, with wildcards and with every index at least 20 px tall
(the scale the table reads at), milliseconds per image on one core (target <= 15 ms)
and the most common misreads. The truth of an image is the cards with at least one
corner index in view (a card a hand covers entirely cannot be read; a card whose index
box the frame's edge cuts is not in view either, and the overall figures say too how many
images are exact when such a card counts right read or not). The real decks
are rendered from the Debian packages when installed (the benchmark never installs them).

``--rotation`` lays the same rendered scenes of the held-out designs at 0-345 degrees in
15-degree steps and prints the exact-multiset accuracy per angle and its spread (target:
flat within 2 points). ``--realcards`` reads the real photographs of
``../shared/realcards`` (see its README): the straightened single cards as photographed
and turned by 90 and 45 degrees, and the whole-deal photos (exact sets and the share of
labelled cards found; a joker read counts as a false joker, the set has none).

``--real DIR`` reads every photo of a folder labelled like ``../shared/realcards`` (cards
per photo) or ``../shared/realtrain`` (boxes per index; ``--split val`` keeps to the
time-stamp blocks training holds out, ``train`` to the others) and prints, per models
folder side by side (``--models`` twice), the share of photos read exactly, recall and
precision of the cards, false jokers (jokers read that the photo does not show) and CPU
ms per photo. ``--calibration`` matches the reader's candidate boxes on such photos to
the labelled indices and prints the expected calibration error and a reliability table of
the classifier's face probabilities, before and after temperature scaling (fitted on
half the photos, measured on the other half), and of the cards read; ``--write`` stores
the temperature beside the classifier (``index-classifier.json``), where the reader's
``alternatives`` use it.

``--jokers`` follows every labelled joker index of the held-out designs' scenes (the same
scenes as the default run) through the reader, per models folder: no candidate box on it,
its best box read as another class, read as the joker under the any-angle reader's
``joker_conf``, or read; and the median probability of the joker on its best box. Jokers
are where new classifiers have lost the held-out designs (recognizer/MODEL.md).

``--tossed`` reads scenes of two to four cards of each held-out design lying apart, each
turned by its own angle between -60 and 60 degrees (``recognizer.training.synth.scenes.tossed_scene``:
tossed and fanned cards, where no two views square on to every card), per models folder
with the defaults: exact-multiset accuracy per design and overall.

``--joker-pairs`` reads scenes of each held-out design whose play holds two of a joker or all
four (a pair of jokers, the four-joker bomb), with up to four other cards, laid in a row or
fanned, per models folder with the defaults: exact-multiset accuracy and the scenes whose
jokers are counted short or over. The default run's random hands seldom hold two jokers
alike, and two of them side by side, or one joker's two corners, are what the reader's
pairing of a card's corners must tell apart (:func:`recognizer.geometry.could_pair`).

``--deck NAME --design DESIGN`` reads scenes of a rendered design that was enrolled as
deck NAME (``guandan-ref deck enroll --render DESIGN --name NAME``) with the committed
classifier and with the enrolled one, side by side (target: >= 99.5% exact).
``--calibrate`` chooses the reader's confidence threshold on training designs.
``--speed`` times reads of play-area crops the size the table reads (600 x 260 px: a
300 x 130 mm area at 2 px/mm) and of phone-photo-sized scenes (378 x 504 px) in CPU
milliseconds of the reading process (target <= 30 ms on one core; CPU time, not wall
time, so a busy shared machine does not inflate it), per ``--models`` folder side by side.

``--choose-thresholds`` is how the reader's runtime settings were chosen: exact-multiset
accuracy over a grid of detector score, classifier floor and classifier views on scenes of the *training*
designs (scene seeds no training run and no benchmark uses), never on the held-out ones.
"""

from __future__ import annotations

import _standalone  # noqa: F401  (first: keeps bench/ off the import path)
import argparse
import json
import time
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from recognizer.decks import data_folder
from recognizer.orientation import rotate_image
from recognizer.reader import CardReader
from recognizer.training.synth import HELD_OUT_PROCEDURAL
from recognizer.training.synth.decks import HELD_OUT, prepare_decks, training_design_sampler
from recognizer.training.synth.fonts import index_fonts
from recognizer.training.synth.scenes import Scene, random_hand, render_scene
from referee.cards import BJ, SJ, card_name, is_joker, parse_cards, wildcard

SWEEP_SEED = 50_000_000  # training scenes use seed * 1_000_003 + k for small seeds: far below this
DET_GRID = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
CLS_GRID = (0.3, 0.4, 0.5, 0.6, 0.7)
VIEWS = (1, 2)
TABLE_INDEX_PX = 20
"""Smallest index height of the "table-sized" subset: the table reads play areas at 2 px/mm
(``Layout.read_px_per_mm``), where a standard 12-15 mm corner index is 24-30 px tall; the
benchmark's images go down to 6 px indices (40 px cards) on purpose."""


def visible_cards(scene: Scene) -> Counter:
    """The truth of a scene: its cards with at least one corner index in view."""
    return Counter(scene.cards[i] for i in {lab.card_id for lab in scene.labels})


def cut_cards(scene: Scene) -> Counter:
    """The cards not in a scene's truth that show part of a corner index at the frame's edge:
    their index box crosses it, so the truth leaves them out, though a person, or the reader,
    may read what shows."""
    h, w = scene.image.shape[:2]
    shown = {lab.card_id for lab in scene.labels}
    cut = {lab.card_id for lab in scene.hidden if lab.box[0] < 0 or lab.box[1] < 0 or lab.box[2] > w or lab.box[3] > h} - shown
    return Counter(scene.cards[i] for i in cut)


def held_out_designs() -> list:
    real = [d for d in prepare_decks(data_folder(), HELD_OUT, install=False) if d.name in HELD_OUT]
    if not real:
        print("(deck packages not installed: held-out procedural designs only;"
              " apt-get install gnome-cards-data kdegames-card-data-kf5 librsvg2-bin for the real decks)")
    return real + list(HELD_OUT_PROCEDURAL)


def bench_scenes(design, images: int, seed: int):
    """The benchmark's ``images`` scenes of ``design`` with each one's level: 1-10 cards as
    players lay them, a wildcard of the level in three scenes of ten."""
    rng = np.random.default_rng(seed)
    for k in range(images):
        n = int(min(10, 1 + rng.geometric(0.22)))
        cards = random_hand(rng, n)
        level = int(rng.integers(0, 13))
        if rng.random() < 0.3:
            cards[int(rng.integers(len(cards)))] = wildcard(level)
        yield render_scene(seed * 100_000 + k, design, cards=sorted(cards)), level


def run(design, reader: CardReader, images: int, seed: int) -> dict:
    stats = Counter()
    per_face = {k: Counter() for k in ("tp", "fp", "fn")}
    confusions: Counter = Counter()
    times = []
    trust = []
    for scene, level in bench_scenes(design, images, seed):
        truth = visible_cards(scene)
        t0 = time.perf_counter()
        reading = reader.read(scene.image)
        times.append(time.perf_counter() - t0)
        got = Counter(reading.cards)
        exact = got == truth
        trust.append((reading.uncertain, exact))
        stats["cut_ok"] += not truth - got and not got - truth - cut_cards(scene)  # exact, or only frame-cut cards more
        dup = any(v > 1 for v in truth.values())
        wild = truth[wildcard(level)] > 0
        big = min((lab.box[3] - lab.box[1] for lab in scene.labels), default=0) >= TABLE_INDEX_PX
        for key, flag in (("all", True), ("dup", dup), ("wild", wild), ("big", big)):
            if flag:
                stats[key] += 1
                stats[key + "_ok"] += exact
        missed, extra = truth - got, got - truth
        for face, c in (truth & got).items():
            per_face["tp"][face] += c
        per_face["fn"].update(missed)
        per_face["fp"].update(extra)
        m, e = sorted(missed.elements()), sorted(extra.elements())
        for a, b in zip(m, e):
            confusions[(card_name(a), card_name(b))] += 1
        for a in m[len(e) :]:
            confusions[(card_name(a), "-")] += 1
        for b in e[len(m) :]:
            confusions[("-", card_name(b))] += 1
    tp, fp, fn = (sum(per_face[k].values()) for k in ("tp", "fp", "fn"))
    return {
        "design": design.name,
        "images": images,
        "precision": tp / max(1, tp + fp),
        "recall": tp / max(1, tp + fn),
        "exact": stats["all_ok"] / max(1, stats["all"]),
        "exact_cut": stats["cut_ok"],
        "exact_dup": (stats["dup_ok"], stats["dup"]),
        "exact_wild": (stats["wild_ok"], stats["wild"]),
        "exact_big": (stats["big_ok"], stats["big"]),
        "ms": 1000 * float(np.mean(times)),
        "ms_p95": 1000 * float(np.percentile(times, 95)),
        "confusions": confusions.most_common(8),
        "trust": trust,
        "worst_recall": sorted(
            ((card_name(f), per_face["tp"][f] / (per_face["tp"][f] + per_face["fn"][f])) for f in per_face["fn"]),
            key=lambda x: x[1],
        )[:5],
    }


def choose_thresholds(models: Path | None, images: int) -> None:
    """Print exact-multiset accuracy on training-design scenes for each pair of thresholds,
    with one and with two classifier views per box."""
    decks = [d for d in prepare_decks(data_folder(), install=False) if d.name not in HELD_OUT]
    sampler = training_design_sampler(decks, fonts=index_fonts())
    readers = {views: CardReader(models, det_conf=min(DET_GRID), views=views, threads=1) for views in VIEWS}
    ok = Counter()
    for k in range(images):
        scene = render_scene(SWEEP_SEED + k, sampler)
        truth = visible_cards(scene)
        for views, reader in readers.items():
            candidates = reader.candidates(scene.image)
            for d in DET_GRID:
                for m in CLS_GRID:
                    ok[views, d, m] += Counter(reader.reading(candidates, d, m).cards) == truth
    print(f"exact-multiset accuracy on {images} scenes of the training designs ({len(decks)} real decks + procedural)")
    for views in VIEWS:
        print(f"{views} classifier view(s): detector score \\ classifier floor " + "  ".join(f"{m:>6}" for m in CLS_GRID))
        for d in DET_GRID:
            print(f"{d:>54}  " + "  ".join(f"{ok[views, d, m] / images:6.1%}" for m in CLS_GRID))
    best = max(ok, key=lambda key: (ok[key], -key[0], key[1], key[2]))  # on a tie: fewer views, higher thresholds
    print(f"best: {best[0]} view(s), detector score {best[1]}, classifier floor {best[2]} ({ok[best] / images:.1%})")


SETTINGS = {"upright": {"passes": 1, "deskew": False, "tile": 0, "joker_conf": 0.0, "joker_scale": 0.0, "joker_width": 0.0}, "any-angle": {}}
"""The reader settings every report compares: the reader as it was (one upright view, no
tiles, jokers like any face) and the defaults."""
SWEEP_ANGLES = tuple(range(0, 360, 15))
REALCARDS = Path(__file__).resolve().parents[1] / ".." / "shared" / "realcards"


def readers(models: Path | None) -> dict[str, CardReader]:
    built = {name: CardReader(models, threads=1, **kw) for name, kw in SETTINGS.items()}
    for reader in built.values():
        reader.read(np.zeros((200, 400, 3), np.uint8))  # warm-up
    return built


def rendered_scenes(images: int, seed: int) -> list[Scene]:
    """``images`` scenes spread over the held-out procedural designs (always available)."""
    designs = list(HELD_OUT_PROCEDURAL)
    return [render_scene(seed * 100_000 + k, designs[k % len(designs)]) for k in range(images)]


def rotation_sweep(reader: CardReader, scenes: list[Scene], angles=SWEEP_ANGLES) -> dict[int, float]:
    """Exact-multiset accuracy of ``reader`` on ``scenes`` turned by each of ``angles``."""
    truths = [visible_cards(scene) for scene in scenes]
    return {
        angle: sum(Counter(reader.read(rotate_image(s.image, angle)).cards) == t for s, t in zip(scenes, truths)) / len(scenes)
        for angle in angles
    }


def report_rotation(models: Path | None, images: int, seed: int) -> None:
    scenes = rendered_scenes(images, seed)
    print(f"exact-multiset accuracy per angle, {images} scenes of the held-out procedural designs turned by each angle")
    print(f"{'angle':>6}  " + "  ".join(f"{name:>10}" for name in SETTINGS))
    sweeps = {name: rotation_sweep(reader, scenes) for name, reader in readers(models).items()}
    for angle in SWEEP_ANGLES:
        print(f"{angle:>6}  " + "  ".join(f"{sweeps[name][angle]:>10.1%}" for name in SETTINGS))
    for name, sweep in sweeps.items():
        values = list(sweep.values())
        print(f"{name}: mean {np.mean(values):.1%}, min {min(values):.1%}, max {max(values):.1%}, spread {max(values) - min(values):.1%} (target <= 2 points)")


def report_realcards(models: Path | None, folder: Path) -> None:
    labels = json.loads((folder / "labels.json").read_text())
    images = {name: cv2.imread(str(folder / "images" / name), cv2.IMREAD_COLOR) for name in sorted(labels)}
    singles = [n for n in images if n.startswith("bidly_card_")]
    deals = [n for n in images if n.startswith("bidly_deal")]
    print(f"real photographs: {folder.resolve()} ({len(singles)} straightened single cards, {len(deals)} whole-deal photos)")
    for name, reader in readers(models).items():
        line, trust = [], []
        for turn in (0, 90, 45):
            ok = 0
            for n in singles:
                reading = reader.read(rotate_image(images[n], turn))
                trust.append((reading.uncertain, Counter(reading.cards) == Counter(parse_cards(labels[n]))))
                ok += trust[-1][1]
            line.append(f"single cards turned {turn}: {ok}/{len(singles)} exact")
        found = total = extra = jokers = exact = 0
        t0 = time.perf_counter()
        for n in deals:
            reading = reader.read(images[n])
            truth, got = Counter(parse_cards(labels[n])), Counter(reading.cards)
            trust.append((reading.uncertain, got == truth))
            exact += got == truth
            found += sum((truth & got).values())
            total += sum(truth.values())
            extra += sum((got - truth).values())
            jokers += sum(c for card, c in got.items() if card in (SJ, BJ))
        ms = 1000 * (time.perf_counter() - t0) / max(1, len(deals))
        print(f"{name:<10} " + ", ".join(line))
        print(
            f"{'':<10} whole deals: {exact}/{len(deals)} exact, {found}/{total} labelled cards found ({found / max(1, total):.1%}), "
            f"{extra} cards read that are not labelled, {jokers} false jokers, {ms:.0f} ms/photo"
        )
        print(f"{'':<10} {abstention(trust)}")


CALIBRATION_SEED = SWEEP_SEED + 1_000_000


def calibrate(models: Path | None, images: int, target: float = 0.995) -> None:
    """The lowest reading confidence above which reads of training-design scenes (turned
    at random: upright, a quarter turn either way or any angle) are exact at least
    ``target`` of the time, and how many reads it keeps."""
    decks = [d for d in prepare_decks(data_folder(), install=False) if d.name not in HELD_OUT]
    sampler = training_design_sampler(decks, fonts=index_fonts())
    reader = CardReader(models, threads=1)
    rng = np.random.default_rng(CALIBRATION_SEED)
    scored = []
    for k in range(images):
        scene = render_scene(CALIBRATION_SEED + k, sampler)
        angle = float(rng.choice([0.0, 0.0, 90.0, 270.0, rng.uniform(0, 360)]))
        reading = reader.read(rotate_image(scene.image, angle))
        scored.append((reading.confidence, Counter(reading.cards) == visible_cards(scene)))
    scored.sort(key=lambda x: -x[0])
    right = np.cumsum([ok for _, ok in scored])
    keep = [i + 1 for i in range(len(scored)) if right[i] >= target * (i + 1) and (i + 1 == len(scored) or scored[i + 1][0] < scored[i][0])]
    n = max(keep, default=0)
    print(f"{images} training-design scenes: exact {right[-1] / len(scored):.1%} overall")
    for t in (0.5, 0.8, 0.9, 0.95, 0.97):
        sel = [ok for c, ok in scored if c >= t]
        print(f"  confidence >= {t}: {len(sel)} reads ({len(sel) / len(scored):.1%}), exact {np.mean(sel) if sel else float('nan'):.2%}")
    if n:
        print(f"threshold for >= {target:.1%} exact: confidence >= {scored[n - 1][0]} keeps {n} of {len(scored)} reads ({n / len(scored):.1%})")
    else:
        print(f"no confidence threshold reaches {target:.1%} exact")


def abstention(scored: list[tuple[bool, bool]]) -> str:
    """``(uncertain, exact)`` per read -> how the reads the reader trusts fared."""
    trusted = [ok for uncertain, ok in scored if not uncertain]
    rate = f"{np.mean(trusted):.2%} exact" if trusted else "none"
    return f"trusted reads {len(trusted)}/{len(scored)}: {rate}"


def report_enrolled(models: Path | None, deck: str, design_name: str, data: Path | None, images: int, seed: int) -> None:
    from recognizer.decks import deck_classifier
    from recognizer.training.enroll import design_named

    design = design_named(design_name, data_folder(data))
    enrolled = CardReader(models, threads=1, classifier=deck_classifier(data, deck))
    for name, reader in {**readers(models), f"enrolled {deck}": enrolled}.items():
        print(f"== reader settings: {name}")
        r = run(design, reader, images, seed)
        print(f"{r['design']:<24} precision {r['precision']:.4f}  recall {r['recall']:.4f}  exact {r['exact']:.2%} (target 99.5%)  {r['ms']:.1f} ms/image")
        if r["confusions"]:
            print("    misreads (truth -> read, '-' = none):", ", ".join(f"{a}->{b} x{c}" for (a, b), c in r["confusions"]))
        print("    " + abstention(r["trust"]))


TABLE_CROP = (600, 260)


PHOTO = (378, 504)
"""A phone photo's size as the issue's new user read them (portrait)."""


def report_speed(models: list[Path | None], images: int, seed: int) -> None:
    """CPU ms per read of play-area crops and of phone-photo-sized scenes, per models folder
    (each image read by every folder in turn, so the machine's load falls on all alike),
    with each folder's mean against the first's."""
    designs = list(HELD_OUT_PROCEDURAL)
    print(f"CPU ms per read, {images} rendered images of each size, one thread, per models folder and reader setting (target <= 30 ms)")
    built = {(str(m or "committed"), setting): reader for m in models for setting, reader in readers(m).items()}
    for size, what in ((TABLE_CROP, "play-area crop"), (PHOTO, "phone photo")):
        scenes = [render_scene(seed * 100_000 + k, designs[k % len(designs)], size=size).image for k in range(images)]
        times = {key: [] for key in built}
        for image in scenes:
            for key, reader in built.items():
                t0 = time.process_time()
                reader.read(image)
                times[key].append(time.process_time() - t0)
        first = {}  # reader setting -> the first folder's mean
        for (folder, setting), ts in times.items():
            first.setdefault(setting, np.mean(ts))
            print(f"{size[0]} x {size[1]} px {what:<15} {folder[-40:]:<40} {setting:<10} mean {1000 * np.mean(ts):5.1f} ms, "
                  f"p95 {1000 * np.percentile(ts, 95):5.1f} ms, {np.mean(ts) / first[setting]:.2f} x the first folder's")


def real_photos(folder: Path, split: str) -> list:
    from recognizer.training.realtrain import load_labelled, split_by_blocks

    photos = load_labelled(folder)
    if split == "all":
        return photos
    train, val = split_by_blocks([p for p in photos if p.boxes])
    return val if split == "val" else train


def report_real(models: list[Path | None], folder: Path, split: str, by_series: bool = False) -> None:
    """Exact %, recall, precision, false jokers and CPU ms per photo, per models folder; with
    ``by_series``, the same per shoot too (:func:`recognizer.training.realtrain.series`)."""
    from recognizer.training.realtrain import series

    photos = real_photos(folder, split)
    images = [cv2.imread(str(p.path), cv2.IMREAD_COLOR) for p in photos]
    print(f"{len(photos)} labelled photos of {folder.resolve()} (split {split}), {sum(len(p.cards) for p in photos)} cards; reader defaults, one thread")
    print(f"{'models':<40} {'exact':>14} {'recall':>8} {'precision':>9} {'false jokers':>12} {'CPU ms/photo':>12}")
    for folder_models in models:
        reader = CardReader(folder_models, threads=1)
        reader.read(np.zeros((200, 400, 3), np.uint8))
        counts: dict[str, Counter] = {}
        for photo, image in zip(photos, images):
            t0 = time.process_time()
            got = Counter(reader.read(image).cards)
            cpu = time.process_time() - t0
            truth = Counter(photo.cards)
            for key in ("", series(photo.path.name)) if by_series else ("",):
                c = counts.setdefault(key, Counter())
                c.update(photos=1, exact=int(got == truth), found=sum((truth & got).values()), total=sum(truth.values()), read=sum(got.values()),
                         jokers=sum(n for card, n in (got - truth).items() if card in (SJ, BJ)), us=round(1e6 * cpu))
        name = str(folder_models or "committed (recognizer/models)")
        for key, c in sorted(counts.items()):
            label = f"  {key}" if key else name[-40:]
            exact = f"{c['exact']}/{c['photos']} {c['exact'] / max(1, c['photos']):.1%}"
            print(
                f"{label:<40} {exact:>14} {c['found'] / max(1, c['total']):>8.1%} "
                f"{c['found'] / max(1, c['read']):>9.1%} {c['jokers']:>12} {c['us'] / 1000 / max(1, c['photos']):>12.1f}"
            )


def on_labels(candidates: list, labels: list) -> list[tuple[int, np.ndarray]]:
    """(label number, class probabilities) of every candidate box whose centre lies on one
    of ``labels`` (objects with an image-pixel ``box``: within half the index's longer side)."""
    from recognizer.orientation import rotate_points

    if not labels:
        return []
    centres = np.array([[(b.box[0] + b.box[2]) / 2, (b.box[1] + b.box[3]) / 2] for b in labels])
    sizes = np.array([max(b.box[2] - b.box[0], b.box[3] - b.box[1]) for b in labels])
    out = []
    for box, _, probs, angle, *_ in candidates:
        centre = rotate_points(np.array([[(box[0] + box[2]) / 2, (box[1] + box[3]) / 2]]), -angle)[0]
        dist = np.hypot(*(centres - centre).T)
        i = int(dist.argmin())
        if dist[i] < 0.5 * sizes[i]:
            out.append((i, probs))
    return out


def _matched_candidates(reader: CardReader, photos: list, images: list) -> list[tuple[int, np.ndarray, int]]:
    """(photo number, class probabilities, true face number) of every candidate box whose
    centre lies on a labelled index."""
    from referee.cards import FACES

    return [(k, probs, FACES.index(photo.boxes[i].card)) for k, (photo, image) in enumerate(zip(photos, images)) if photo.boxes
            for i, probs in on_labels(reader.candidates(image), photo.boxes)]


def report_tossed(models: list[Path | None], images: int, seed: int) -> None:
    """Exact-multiset accuracy on ``images`` tossed scenes per held-out design, per models folder."""
    from recognizer.training.synth.scenes import tossed_scene

    designs = held_out_designs()
    scenes = {}  # drawn once, read by every models folder
    for design in designs:
        rng = np.random.default_rng(seed)
        scenes[design.name] = [tossed_scene(seed * 100_000 + k, design, random_hand(rng, int(rng.integers(2, 5)))) for k in range(images)]
    print(f"exact reads of {images} scenes per held-out design, 2-4 cards apart, each at its own angle in [-60, 60] degrees (seed {seed})")
    print(f"{'models':<32} " + " ".join(f"{d.name[:22]:>22}" for d in designs) + f" {'overall':>8}")
    for folder in models:
        reader = CardReader(folder, threads=1)
        rates = [sum(reader.read(image).cards == truth for image, truth in scenes[d.name]) / images for d in designs]
        print(f"{str(folder or 'committed')[-32:]:<32} " + " ".join(f"{r:>22.2%}" for r in rates) + f" {sum(rates) / len(rates):>8.2%}")


JOKER_PLAYS = ((SJ, SJ), (BJ, BJ), (SJ, SJ, BJ, BJ))
"""The jokers of ``--joker-pairs``' scenes, in turn: a pair of each, and the four-joker bomb."""


def joker_pair_scenes(design, images: int, seed: int) -> list[Scene]:
    """``images`` scenes of ``design`` whose play holds :data:`JOKER_PLAYS` in turn and up to
    four other cards, a third of them fanned."""
    rng = np.random.default_rng(seed)
    scenes = []
    for k in range(images):
        n = int(rng.integers(0, 5))
        others = [c for c in random_hand(rng, n) if not is_joker(c)] if n else []
        scenes.append(render_scene(seed * 100_000 + k, design, cards=sorted(JOKER_PLAYS[k % len(JOKER_PLAYS)] + tuple(others)),
                                   fanned=bool(rng.random() < 1 / 3)))
    return scenes


def report_joker_pairs(models: list[Path | None], images: int, seed: int) -> None:
    """Exact-multiset accuracy on scenes holding two of a joker or all four, per held-out
    design and models folder, with the scenes whose jokers are counted short or over."""
    designs = held_out_designs()
    scenes = {d.name: joker_pair_scenes(d, images, seed) for d in designs}  # drawn once, read by every models folder
    print(f"scenes per held-out design holding two of a joker or all four, in a row or fanned ({images} each, seed {seed})")
    print(f"{'models':<32} {'design':<24} {'exact':>7} {'jokers short':>12} {'jokers over':>11}")
    for folder in models:
        reader, name = CardReader(folder, threads=1), str(folder or "committed")[-32:]
        totals = Counter()
        for design in designs:
            tally = Counter()
            for scene in scenes[design.name]:
                truth, got = visible_cards(scene), Counter(reader.read(scene.image).cards)
                tally["exact"] += got == truth
                jokers = [j for j in truth | got if is_joker(j)]
                tally["short"] += any(got[j] < truth[j] for j in jokers)
                tally["over"] += any(got[j] > truth[j] for j in jokers)
            totals.update(tally)
            print(f"{name:<32} {design.name:<24} {tally['exact'] / images:>7.2%} {tally['short']:>12} {tally['over']:>11}")
        n = images * len(designs)
        print(f"{name:<32} {'overall':<24} {totals['exact'] / n:>7.2%} {totals['short']:>12} {totals['over']:>11}")


def report_jokers(models: list[Path | None], images: int, seed: int) -> None:
    """Where the held-out designs' jokers go: for every labelled joker index of the
    benchmark's scenes, the candidate on it that the classifier gives the most of that joker
    (either orientation), in any of the reader's views. A joker is lost to the detector (no
    box), to another class (the box read as a face or "not an index"), or to the joker rule
    (read, but under ``joker_conf``; the reader still keeps it when the card's other corner
    reads the same joker), or read."""
    from recognizer.crops import decode_class
    from recognizer.reader import face_probabilities
    from referee.cards import FACES

    designs = held_out_designs()
    print(f"{'models':<32} {'design':<24} {'jokers':>6} {'no box':>6} {'other':>6} {'unsure':>6} {'read':>6} {'median p':>8}")
    for folder in models:
        reader = CardReader(folder, threads=1)
        for design in designs:
            tally, probabilities = Counter(), []
            for scene, _ in bench_scenes(design, images, seed):
                jokers = [lab for lab in scene.labels if is_joker(lab.card)]
                best: dict[int, tuple[float, bool]] = {}  # label number -> (joker probability, read as that joker)
                for i, probs in on_labels(reader.candidates(scene.image) if jokers else [], jokers):
                    p = float(face_probabilities(probs)[FACES.index(jokers[i].card)])
                    if p > best.get(i, (-1.0, False))[0]:
                        best[i] = (p, (decode_class(int(probs.argmax())) or (None,))[0] == jokers[i].card)
                tally["jokers"] += len(jokers)
                tally["no box"] += len(jokers) - len(best)
                for p, named in best.values():
                    tally["other" if not named else "unsure" if p < reader.joker_conf else "read"] += 1
                    probabilities.append(p)
            median = f"{np.median(probabilities):.2f}" if probabilities else "-"
            name = str(folder or "committed")
            print(f"{name[-32:]:<32} {design.name:<24} " + " ".join(f"{tally[k]:>6}" for k in ("jokers", "no box", "other", "unsure", "read")) + f" {median:>8}")


def reliability(conf: np.ndarray, correct: np.ndarray, bins: int = 10) -> tuple[float, list[str]]:
    """Expected calibration error and one table row per confidence bin."""
    edges = np.linspace(0, 1, bins + 1)
    rows, ece = [], 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (conf > lo) & (conf <= hi) if lo > 0 else (conf >= lo) & (conf <= hi)
        if inside.any():
            gap = abs(conf[inside].mean() - correct[inside].mean())
            ece += inside.mean() * gap
            rows.append(f"    {lo:.1f}-{hi:.1f} {int(inside.sum()):>6} {conf[inside].mean():>10.3f} {correct[inside].mean():>9.3f}")
    return float(ece), rows


def _nll(probs: np.ndarray, truth: np.ndarray, temperature: float) -> float:
    from recognizer.reader import face_probabilities

    return float(-np.mean([np.log(max(face_probabilities(p, temperature)[t], 1e-12)) for p, t in zip(probs, truth)]))


def report_calibration(models: Path | None, folder: Path, split: str, write: bool) -> None:
    """Temperature scaling of the classifier's face probabilities on labelled real indices."""
    from recognizer.reader import MODELS, face_probabilities

    photos = [p for p in real_photos(folder, split) if p.boxes]
    if not photos:
        raise SystemExit(f"--calibration needs photos labelled with boxes (like realtrain); {folder} has none")
    images = [cv2.imread(str(p.path), cv2.IMREAD_COLOR) for p in photos]
    reader = CardReader(models, threads=1)
    matched = _matched_candidates(reader, photos, images)
    fit = [m for m in matched if m[0] % 2 == 0]
    held = [m for m in matched if m[0] % 2 == 1]
    probs_fit, truth_fit = np.array([m[1] for m in fit]), np.array([m[2] for m in fit])
    grid = np.round(np.arange(0.5, 4.01, 0.05), 2)
    temperature = float(grid[int(np.argmin([_nll(probs_fit, truth_fit, t) for t in grid]))])
    print(f"{len(matched)} candidate boxes on labelled indices of {len(photos)} photos ({folder.name}, split {split}); temperature fitted on the even photos: {temperature}")
    for name, t in (("uncalibrated", 1.0), (f"temperature {temperature}", temperature)):
        faces = np.array([face_probabilities(p, t) for _, p, _ in held])
        conf = faces.max(1)
        correct = faces.argmax(1) == np.array([m[2] for m in held])
        ece, rows = reliability(conf, correct)
        print(f"{name}: held-out (odd) photos, {len(held)} boxes, expected calibration error {ece:.4f}, NLL {_nll(np.array([m[1] for m in held]), np.array([m[2] for m in held]), t):.3f}")
        print(f"    {'bin':<7} {'boxes':>6} {'mean conf':>10} {'accuracy':>9}")
        print("\n".join(rows))
    reader.temperature = temperature
    card_conf, card_ok = [], []
    for photo, image in zip(photos, images):
        reading = reader.read(image)
        left = Counter(photo.cards)
        for card, alternatives in zip(reading.cards, reading.alternatives):
            card_conf.append(alternatives[0][1])
            card_ok.append(left[card] > 0)
            left[card] -= 1
    ece, rows = reliability(np.array(card_conf), np.array(card_ok))
    print(f"cards read (temperature {temperature}, all {len(photos)} photos): {len(card_conf)}, expected calibration error {ece:.4f} (the read face's probability against the card being in the photo)")
    print(f"    {'bin':<7} {'cards':>6} {'mean conf':>10} {'accuracy':>9}")
    print("\n".join(rows))
    if write:
        target = (models or MODELS) / "index-classifier.json"
        settings = json.loads(target.read_text()) if target.exists() else {}  # keeps the classifier's other settings
        settings.update(temperature=temperature, fitted_on=f"{folder.name} split {split}, {len(fit)} boxes")
        target.write_text(json.dumps(settings) + "\n")
        print(f"wrote {target}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=300, help="images per held-out design")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--models", type=Path, action="append", help="folder with the two ONNX files (default: the committed ones); twice with --real or the default run: side by side")
    ap.add_argument("--choose-thresholds", action="store_true", help="sweep the runtime thresholds on training designs instead")
    ap.add_argument("--deck", metavar="NAME", help="an enrolled deck: compare its classifier with the committed one on --design")
    ap.add_argument("--design", metavar="DESIGN", help="the rendered design the deck was enrolled from")
    ap.add_argument("--data", type=Path, metavar="DIR", help="data directory of enrolled decks")
    ap.add_argument("--speed", action="store_true", help="CPU time per table-sized play-area crop instead")
    ap.add_argument("--calibrate", action="store_true", help="choose the confidence threshold on training designs instead")
    ap.add_argument("--rotation", action="store_true", help="the rotation sweep instead (--images scenes in all)")
    ap.add_argument("--realcards", nargs="?", const=REALCARDS, type=Path, metavar="DIR", help="the real photographs instead")
    ap.add_argument("--real", type=Path, metavar="DIR", help="a labelled folder like ../shared/realcards or ../shared/realtrain: exact, recall, precision, false jokers, ms")
    ap.add_argument("--split", choices=("all", "train", "val"), default="all", help="with --real: the time-stamp blocks training holds out (val), the others, or all")
    ap.add_argument("--by-series", action="store_true", help="with --real: the figures per shoot too (the file names' camera and day)")
    ap.add_argument("--calibration", action="store_true", help="with --real: temperature scaling, calibration error and reliability tables")
    ap.add_argument("--write", action="store_true", help="with --calibration: write the temperature beside the classifier")
    ap.add_argument("--jokers", action="store_true", help="where the held-out designs' labelled jokers go (no box, read as another class, under the joker rule, read), per --models")
    ap.add_argument("--joker-pairs", action="store_true", help="scenes holding two of a joker or all four: exact reads and jokers counted short or over, per held-out design and --models")
    ap.add_argument("--tossed", action="store_true", help="scenes of cards apart, each at its own angle: exact reads per held-out design, per --models")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    all_models = args.models or [None]
    args.models = all_models[0]
    if args.calibration and not args.real:
        ap.error("--calibration needs --real DIR")
    if args.calibration:
        report_calibration(args.models, args.real, args.split, args.write)
    elif args.real:
        report_real(all_models, args.real, args.split, args.by_series)
    elif args.jokers:
        report_jokers(all_models, args.images, args.seed)
    elif args.joker_pairs:
        report_joker_pairs(all_models, args.images, args.seed)
    elif args.tossed:
        report_tossed(all_models, args.images, args.seed)
    elif args.choose_thresholds:
        choose_thresholds(args.models, args.images)
    elif args.deck:
        if not args.design:
            ap.error("--deck needs --design (the rendered design it was enrolled from)")
        report_enrolled(args.models, args.deck, args.design, args.data, args.images, args.seed)
    elif args.speed:
        report_speed(all_models, args.images, args.seed)
    elif args.calibrate:
        calibrate(args.models, args.images)
    elif args.rotation:
        report_rotation(args.models, args.images, args.seed)
    elif args.realcards:
        report_realcards(args.models, args.realcards)
    else:
        for models in all_models:
            for name, reader in readers(models).items():
                print(f"== models {models or 'committed'}, reader settings: {name}")
                report_held_out(reader, args.images, args.seed)


def report_held_out(reader: CardReader, images: int, seed: int) -> None:
    totals = Counter()
    trust: list[tuple[bool, bool]] = []
    for design in held_out_designs():
        r = run(design, reader, images, seed)
        d_ok, d_n = r["exact_dup"]
        w_ok, w_n = r["exact_wild"]
        b_ok, b_n = r["exact_big"]
        print(
            f"{r['design']:<24} precision {r['precision']:.4f}  recall {r['recall']:.4f}  "
            f"exact {r['exact']:.2%}  duplicates {d_ok}/{d_n}  wildcards {w_ok}/{w_n}  indices >= {TABLE_INDEX_PX} px {b_ok}/{b_n}  "
            f"{r['ms']:.1f} ms/image (p95 {r['ms_p95']:.1f}, one core)"
        )
        if r["confusions"]:
            print("    misreads (truth -> read, '-' = none):", ", ".join(f"{a}->{b} x{c}" for (a, b), c in r["confusions"]))
        if r["worst_recall"]:
            print("    lowest recall:", ", ".join(f"{f} {v:.2f}" for f, v in r["worst_recall"]))
        print("    " + abstention(r["trust"]))
        trust += r["trust"]
        totals["images"] += r["images"]
        totals["exact"] += round(r["exact"] * r["images"])
        totals["cut_ok"] += r["exact_cut"]
        totals["big"] += b_n
        totals["big_ok"] += b_ok
    print(f"overall exact-multiset accuracy {totals['exact'] / max(1, totals['images']):.2%} on {totals['images']} images (target 99.5%)")
    print(
        f"  a card whose corner index the frame cuts (not in the truth) counted right read or not: "
        f"{totals['cut_ok'] / max(1, totals['images']):.2%}"
    )
    print(
        f"  on the {totals['big']} images whose every index is >= {TABLE_INDEX_PX} px tall (the table's reading scale): "
        f"{totals['big_ok'] / max(1, totals['big']):.2%}"
    )
    print("  " + abstention(trust))


if __name__ == "__main__":
    main()
