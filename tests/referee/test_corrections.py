"""A correction is a replay: the misread's own flags are withdrawn, the corrected event and
everything after it are judged afresh, and the result equals a fresh replay of the
corrected log."""

from __future__ import annotations

import random
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from referee import events as ev
from referee.cards import cards_name
from referee.engine import Referee
from referee.simulate import simulate_session
from referee.verdicts import Flag, Rederived, Withdrawn

from .conftest import Script, judged_afresh


def _led_nine(s: Script) -> None:
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["9S"], id="p1")


def test_a_misread_8_that_was_a_10_keeps_no_p5():
    s = Script()
    _led_nine(s)
    s("play", seat="E", cards=["8S"], id="p2")
    assert s.standing() == [("P5", "E")]
    out = s("correction", of="p2", event={"type": "play", "seat": "E", "cards": ["TS"]}, by="Ref Li")
    assert out[0] == {"type": "withdrawn", "rule": "P5", "seat": "E", "at": 3.0,
                      "reason": "not raised once event 'p2' is read as corrected"}
    assert out[-1]["type"] == "rederived"
    assert s.standing() == [] and s.deal.turn == "N" and s.deal.counts["E"] == 26


def test_a_misread_10_that_was_an_8_raises_p5():
    s = Script()
    _led_nine(s)
    s("play", seat="E", cards=["TS"], id="p2")
    assert s.standing() == [] and s.deal.turn == "N"
    out = s("correction", of="p2", event={"type": "play", "seat": "E", "cards": ["8S"]}, by="Ref Li")
    assert [(r["type"], r.get("rule")) for r in out] == [("flag", "P5"), ("rederived", None)]
    assert "does not beat 9S" in out[0]["message"] and out[0]["at"] == 3.0
    # the table played on after E's cards: they stood (the referee follows the table)
    assert s.standing() == [("P5", "E")] and s.deal.turn == "N" and s.deal.counts["E"] == 26


def test_a_correction_after_later_events_withdraws_their_p4():
    s = Script()
    _led_nine(s)
    s("play", seat="W", cards=["TS"], id="p2")  # misread seat: it was E, in turn
    s("play", seat="N", cards=["JS"], id="p3")  # in turn once p2 is E's: out of turn as read
    assert s.standing() == [("P4", "W"), ("P4", "N")]
    out = s("correction", of="p2", event={"type": "play", "seat": "E", "cards": ["TS"]}, by="Ref Li")
    assert [(r["type"], r.get("rule"), r.get("seat")) for r in out] == [
        ("withdrawn", "P4", "W"), ("withdrawn", "P4", "N"), ("rederived", None, None)]
    assert s.standing() == [] and s.deal.turn == "W" and s.deal.table_seat == "N"


def test_a_count_corrected_to_11_withdraws_r1():
    s = Script()
    s("deal_start", deal=1, first_leader="S",
      hands={"S": ["3S"] * 2 + ["4S", "4D", "5S", "5D", "6S", "6D", "7S", "7D", "8S", "8D", "9S"],
             "E": ["AS"], "N": ["AD"], "W": ["AC"]})
    s("play", seat="S", cards=["3S", "3S"], id="p1")  # 11 left: no report due at <= 10
    s("report", seat="S", count=10, id="r1")  # a misread 11
    assert s.standing() == [("R1", "S")]
    out = s("correction", of="r1", event={"type": "report", "seat": "S", "count": 11}, by="Ref Li")
    assert [r["type"] for r in out] == ["withdrawn", "rederived"] and out[0]["rule"] == "R1"
    assert s.standing() == []


def test_an_impossible_replacement_rejects_the_correction_and_changes_nothing():
    s = Script()
    s("deal_start", deal=1, first_leader="S", hands={"S": ["9S", "3D"], "E": ["TS"], "N": ["AD"], "W": ["AC"]})
    s("play", seat="S", cards=["9S"], id="p1")
    before = s.referee.snapshot()
    out = s("correction", of="p1", event={"type": "play", "seat": "S", "cards": ["KS"]}, by="Ref Li")
    assert out[0]["type"] == "error" and "the replacement is impossible there: S does not hold KS" in out[0]["message"]
    assert s.referee.snapshot() == before


def test_a_correction_cannot_correct_a_correction():
    s = Script()
    _led_nine(s)
    s("play", seat="E", cards=["8S"], id="p2")
    s("correction", of="p2", event={"type": "play", "seat": "E", "cards": ["TS"]}, by="Ref Li", id="c1")
    out = s("correction", of="c1", event={"type": "pass", "seat": "E"}, by="Ref Li")
    assert out[0]["type"] == "error" and "is a correction" in out[0]["message"]


@cache
def _session(seed: int) -> tuple[dict, ...]:
    return tuple(simulate_session(seed, breaches=0.03).events)


def _replacement(play: dict, rng: random.Random, hand: list[str]) -> dict:
    """Another reading of a play: other cards from the same hand, another seat, or a pass."""
    choice = rng.randrange(3)
    if choice == 0 and hand:
        cards = rng.sample(hand, min(len(play["cards"]), len(hand)))
        return {"type": "play", "seat": play["seat"], "cards": cards}
    if choice == 1:
        return {"type": "play", "seat": rng.choice("SENW"), "cards": play["cards"]}
    return {"type": "pass", "seat": play["seat"]}


def _core(verdicts) -> list:
    return [v for v in verdicts if not isinstance(v, (Withdrawn, Rederived))]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 5), st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 3))
def test_a_correction_equals_a_fresh_replay_of_the_corrected_log(seed, which, how, later):
    events = list(_session(seed))
    plays = [i for i, e in enumerate(events) if e["type"] == "play"]
    at = plays[which % len(plays)]
    rng = random.Random(how)
    probe = Referee()
    for event in events[:at]:
        probe.feed(event)
    hand = cards_name(probe.state.deal.hands[events[at]["seat"]]).split()
    replacement = _replacement(events[at], rng, hand)
    upto = min(len(events), at + 1 + later * 10)  # the correction comes after some later events
    referee = Referee()
    stream = []
    for event in events[:upto]:
        stream += referee.feed(event)
    correction = {"type": "correction", "t": events[upto - 1]["t"], "of": events[at]["id"], "by": "Ref",
                  "event": replacement}
    try:
        stream += referee.feed(correction)
    except ev.EventError as exc:
        assert "the replacement is impossible there" in str(exc)
        return
    corrected = list(events[:upto])
    corrected[at] = {**replacement, "t": events[at]["t"], "id": events[at]["id"], "table": events[at]["table"]}
    fresh = judged_afresh(corrected)
    assert _core(referee.verdicts()) == fresh.verdicts()
    assert referee.state == fresh.state
    shown = [v.key for v in stream if isinstance(v, Flag)]
    for v in stream:
        if isinstance(v, Withdrawn):
            shown.remove((v.rule, v.seat, v.at))
    assert sorted(shown, key=repr) == sorted((v.key for v in fresh.verdicts() if isinstance(v, Flag)), key=repr)
