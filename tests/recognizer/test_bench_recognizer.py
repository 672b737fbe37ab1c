"""bench/recognizer.py: with --jokers every labelled joker of the held-out scenes is counted
once, in exactly one of its four fates, and candidates in a turned view are matched to the
label they lie on in the image; with --real --by-series each shoot's photos are counted apart;
--joker-pairs draws its plays in turn and counts every design once."""

import importlib.util
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from recognizer.orientation import rotate_points
from recognizer.reader import Candidate
from referee.cards import is_joker

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCH))  # for bench/_standalone.py, which takes bench/ off the path again
    spec = importlib.util.spec_from_file_location("bench_recognizer", BENCH / "recognizer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_candidate_in_a_turned_view_is_matched_to_the_label_it_lies_on(bench):
    labels = [SimpleNamespace(box=(10.0, 10.0, 30.0, 40.0)), SimpleNamespace(box=(200.0, 50.0, 220.0, 80.0))]
    cx, cy = rotate_points(np.array([[210.0, 65.0]]), 90.0)[0]  # the second label's centre, seen in the 90-degree view
    on_second = Candidate((cx - 10, cy - 15, cx + 10, cy + 15), 0.9, np.array([0.2, 0.8]), 90.0, 90.0)
    nowhere = Candidate((500.0, 500.0, 520.0, 530.0), 0.9, np.array([1.0, 0.0]), 0.0, 0.0)
    matched = bench.on_labels([on_second, nowhere], labels)
    assert [i for i, _ in matched] == [1]
    assert bench.on_labels([on_second], []) == []


def test_only_a_card_whose_index_the_frame_cuts_may_be_read_or_not(bench):
    from recognizer.training.synth.scenes import IndexLabel, Scene
    from referee.cards import parse_cards

    shown, cut, covered = parse_cards("7S KH 2D")
    image = np.zeros((100, 200, 3), np.uint8)
    scene = Scene(
        image,
        (shown, cut, covered),
        (IndexLabel(shown, (10.0, 10.0, 20.0, 30.0), False, 0),),
        "test",
        (
            IndexLabel(shown, (195.0, 80.0, 205.0, 100.0), True, 0),  # the shown card's other corner, cut
            IndexLabel(cut, (-4.0, 50.0, 6.0, 70.0), False, 1),  # across the left edge
            IndexLabel(covered, (50.0, 50.0, 60.0, 70.0), False, 2),  # under another card, in frame
        ),
    )
    assert bench.visible_cards(scene) == {shown: 1}
    assert bench.cut_cards(scene) == {cut: 1}


def test_every_held_out_joker_is_counted_in_one_fate(bench, capsys):
    bench.report_jokers([None], images=12, seed=7)
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    designs = {d.name for d in bench.held_out_designs()}
    assert {row[1] for row in rows} == designs
    total = 0
    for row in rows:
        jokers, no_box, other, unsure, read = map(int, row[2:7])
        assert jokers == no_box + other + unsure + read
        total += jokers
    expected = sum(is_joker(lab.card) for d in bench.held_out_designs() for scene, _ in bench.bench_scenes(d, 12, 7) for lab in scene.labels)
    assert total == expected > 0
    assert all(row[7] == "-" or re.fullmatch(r"[01]\.\d\d", row[7]) for row in rows)


def test_tossed_scenes_give_one_rate_per_design_and_overall(bench, capsys):
    bench.report_tossed([None], images=2, seed=7)
    header, row = capsys.readouterr().out.splitlines()[1:3]
    designs = bench.held_out_designs()
    assert header.split()[1:] == [d.name[:22] for d in designs] + ["overall"]
    rates = [float(v.rstrip("%")) for v in row.split()[1:]]
    assert len(rates) == len(designs) + 1 and all(r in (0.0, 50.0, 100.0) for r in rates[:-1])
    assert rates[-1] == pytest.approx(sum(rates[:-1]) / len(designs), abs=0.01)


def test_speed_reads_both_sizes_with_every_folder_side_by_side(bench, capsys):
    from recognizer.reader import MODELS

    bench.report_speed([None, MODELS], images=2, seed=7)
    rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 2 * 2 * len(bench.SETTINGS)  # two sizes, two folders, every reader setting
    assert sum("600 x 260" in r for r in rows) == sum("378 x 504" in r for r in rows) == 2 * len(bench.SETTINGS)
    for row in rows:
        mean = float(re.search(r"mean +([0-9.]+) ms", row).group(1))
        ratio = float(re.search(r"([0-9.]+) x the first", row).group(1))
        assert mean > 0 and ratio > 0
    firsts = [r for r in rows if "committed" in r]
    assert all("1.00 x the first" in r for r in firsts)


def test_real_photos_are_counted_per_shoot_as_well_as_in_all(bench, capsys):
    fixture = Path(__file__).with_name("fixtures") / "realphotos"
    bench.report_real([None], fixture, "all", by_series=True)
    rows = {line[:40].strip(): line[40:].split() for line in capsys.readouterr().out.splitlines()[2:]}
    assert rows["committed (recognizer/models)"][:2] == ["6/6", "100.0%"]
    assert rows["IMG_ 2022-09-21"][:2] == ["4/4", "100.0%"] and rows["IMG_ numbered"][:2] == ["2/2", "100.0%"]
    assert len(rows) == 3


def test_joker_pair_scenes_hold_a_pair_of_jokers_or_all_four_in_turn(bench):
    from collections import Counter

    from referee.cards import is_joker

    scenes = bench.joker_pair_scenes(bench.HELD_OUT_PROCEDURAL[0], 6, seed=7)
    plays = [Counter(c for c in scene.cards if is_joker(c)) for scene in scenes]
    assert plays == [Counter(bench.JOKER_PLAYS[k % 3]) for k in range(6)]
    assert all(len(scene.cards) <= play.total() + 4 for scene, play in zip(scenes, plays))


def test_joker_pairs_give_one_row_per_design_and_overall(bench, capsys):
    bench.report_joker_pairs([None], images=3, seed=7)
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    designs = [d.name for d in bench.held_out_designs()]
    assert [row[1] for row in rows] == designs + ["overall"]
    rates = [float(row[2].rstrip("%")) for row in rows]
    assert all(min(abs(r - 100 * k / 3) for k in range(4)) < 0.01 for r in rates[:-1])
    assert rates[-1] == pytest.approx(sum(rates[:-1]) / len(designs), abs=0.01)
    for row in rows[:-1]:
        assert 0 <= int(row[3]) <= 3 and 0 <= int(row[4]) <= 3
    assert int(rows[-1][3]) == sum(int(row[3]) for row in rows[:-1])
