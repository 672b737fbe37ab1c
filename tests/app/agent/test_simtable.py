"""Simulated tables as the camera sees them: plans a watcher can follow, truth a referee accepts."""

from collections import Counter

import pytest

from web.app.agent.simtable import AREA_GAP, MANUAL_GAP, QUIET_START_S, plan_table
from web.app.agent.truth import deal_results, truth_records


@pytest.fixture(scope="module")
def plan():
    return plan_table(seed=5, deals=2, table="T3", breaches=0.05, rfid=True, brisk=0.5)


def test_hands_never_crowd_an_area_and_swept_areas_forget_before_the_next_play(plan):
    by_seat: dict[str, list] = {}
    for act in sorted(plan.script.acts, key=lambda a: a.t):
        by_seat.setdefault(act.seat, []).append(act)
    assert set(by_seat) == set("NESW")
    for acts in by_seat.values():
        for before, after in zip(acts, acts[1:]):
            assert after.t - before.t >= AREA_GAP - 1e-9
            if before.kind == "clear" and after.kind == "lay":
                assert after.t - before.t >= 3.5 - 1e-9


def test_a_token_is_picked_up_before_another_is_put_down(plan):
    lying: dict[str, set] = {s: set() for s in "NESW"}
    for act in sorted(plan.script.acts, key=lambda a: a.t):
        if act.kind in ("pass", "report"):
            assert not lying[act.seat]
            lying[act.seat].add(act.kind)
        elif act.kind == "clear":
            lying[act.seat].clear()


def test_operator_events_wait_for_the_cameras_last_observation(plan):
    camera = sorted(a.t for a in plan.script.acts if a.kind != "clear")
    for event in plan.manual:
        earlier = [t for t in camera if t < event["t"]]
        assert not earlier or event["t"] - earlier[-1] >= MANUAL_GAP - 1e-9
    assert {e["type"] for e in plan.manual} <= {"session_start", "deal_start", "tribute", "return"}


def test_the_truth_is_in_time_order_and_a_referee_takes_it_whole(plan):
    times = [e["t"] for e in plan.truth]
    assert times == sorted(times)
    records = truth_records(plan.truth)
    assert not [r for r in records if r["type"] == "error"]
    assert len(deal_results(records)) == 2
    flags = Counter((r["rule"], r["seat"]) for r in records if r["type"] == "flag")
    planted = Counter(f for f in plan.expected_flags if f[0] != "D3")  # D3: only the RFID reads show it
    assert planted and not planted - flags


def test_every_laid_card_is_read_once_and_swaps_carry_a_stranger_tag(plan):
    lays = [a for a in plan.script.acts if a.kind == "lay"]
    assert len(plan.reads) == sum(len(a.cards) for a in lays)
    strangers = [r for r in plan.reads if r.tag not in plan.registry]
    assert strangers and len(strangers) == Counter(f[0] for f in plan.expected_flags)["D3"]
    own = [r.tag for r in plan.reads if r.tag in plan.registry]
    deal_starts = [e["t"] for e in plan.manual if e["type"] == "deal_start"]
    for start, end in zip(deal_starts, deal_starts[1:] + [1e9]):
        in_deal = [r.tag for r in plan.reads if start <= r.t < end and r.tag in plan.registry]
        assert len(in_deal) == len(set(in_deal))  # each physical card once per deal
    assert own


def test_the_first_hand_comes_once_the_camera_has_watched_the_empty_table():
    """Seed 1001's first act is E's pass out of turn, at 0.3 s as simulated: too early for the watcher."""
    plan = plan_table(1001, 1, "T2", breaches=0.03, brisk=0.25)
    assert min(a.t for a in plan.script.acts) == QUIET_START_S
    first = min(plan.breaches, key=lambda b: b["at"])
    assert (first["rule"], first["seat"]) == ("P4", "E") and first["at"] > QUIET_START_S


def test_swaps_are_breaches_with_the_time_their_play_is_seen(plan):
    swaps = [b for b in plan.breaches if b["rule"] == "D3"]
    assert [(b["rule"], b["seat"]) for b in swaps] == [f for f in plan.expected_flags if f[0] == "D3"]
    seen = {(e["seat"], e["t"]) for e in plan.seen if e["type"] == "play"}
    assert all((b["seat"], b["at"]) in seen for b in swaps)


def test_bad_plan_options_are_named():
    with pytest.raises(ValueError, match="deals must be >= 1"):
        plan_table(1, 0)
    with pytest.raises(ValueError, match="brisk must be in"):
        plan_table(1, 1, brisk=0)
