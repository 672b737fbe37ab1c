"""A correction may give the replacement its own time: one event stamped far ahead of the
table (a tick at t=1e308, a Unix date) would otherwise refuse every true event after it as
"time goes backwards". The new time stays between the event's neighbours in the log; the
correction itself is judged against the corrected log's last time."""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from referee import events as ev
from referee.engine import Referee
from referee.simulate import simulate_session
from referee.verdicts import Rederived, Withdrawn

from .conftest import Script


def _far_tick() -> Script:
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["9S"], id="p1")  # t=2
    s("tick", dt=2998, id="k1")  # t=3000: a clock gone wrong, yet within any bound
    return s


def test_after_a_far_future_tick_the_table_refuses_true_times():
    s = _far_tick()
    out = s.feed({"type": "play", "t": 3.0, "seat": "E", "cards": ["TS"]})
    assert out[0]["type"] == "error" and "time goes backwards: t=3 after t=3000" in out[0]["message"]


def test_a_tick_corrected_to_its_true_time_lets_the_table_go_on():
    s = _far_tick()
    out = s.feed({"type": "correction", "t": 2.5, "of": "k1", "event": {"type": "tick", "t": 2.5}, "by": "Ref"})
    assert out[-1]["type"] == "rederived"
    assert [e.t for e in s.referee.log] == [0.0, 1.0, 2.0, 2.5, 2.5]
    assert s.feed({"type": "play", "t": 3.0, "seat": "E", "cards": ["TS"]}) == []
    assert s.deal.turn == "N"


def test_a_correction_without_a_time_keeps_the_originals_and_is_judged_by_it():
    s = _far_tick()
    out = s.feed({"type": "correction", "t": 2.5, "of": "k1", "event": {"type": "tick"}, "by": "Ref"})
    assert out[0]["type"] == "error" and "time goes backwards: t=2.5 after t=3000" in out[0]["message"]
    assert s.feed({"type": "correction", "t": 3000, "of": "k1", "event": {"type": "tick"}, "by": "Ref"})[-1][
        "type"] == "rederived"
    assert s.referee.log[3].t == 3000.0


def test_a_new_time_outside_its_neighbours_is_refused_naming_the_bound():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["9S"], id="p1")  # t=2
    s("play", seat="E", cards=["TS"], id="p2")  # t=3
    s("pass", seat="N", id="p3")  # t=4
    before = (s.referee.log, s.referee.verdicts(), s.referee.state)
    out = s("correction", of="p2", event={"type": "play", "seat": "E", "cards": ["TS"], "t": 4.5}, by="Ref")
    assert out[0]["type"] == "error"
    assert "t=4.5 is outside its neighbours' times, 2<=t<=4" in out[0]["message"]
    out = s("correction", of="p3", event={"type": "pass", "seat": "N", "t": 1}, by="Ref")
    assert "t=1 is outside its neighbours' times, t>=3" in out[0]["message"]
    assert (s.referee.log, s.referee.verdicts(), s.referee.state) == before
    assert s("correction", of="p2", event={"type": "play", "seat": "E", "cards": ["TS"], "t": 2.5},
             by="Ref")[-1]["type"] == "rederived"
    assert [e.t for e in s.referee.log][2:5] == [2.0, 2.5, 4.0]


def test_a_correction_names_its_time_only_when_given():
    plain = ev.parse_event({"type": "correction", "t": 5, "of": "k1", "event": {"type": "tick"}, "by": "Ref"})
    timed = ev.parse_event({"type": "correction", "t": 5, "of": "k1", "event": {"type": "tick", "t": 5}, "by": "Ref"})
    assert plain != timed and not plain.timed and timed.timed
    assert "t" not in plain.to_json()["event"] and timed.to_json()["event"]["t"] == 5
    assert ev.parse_event(plain.to_json()) == plain and ev.parse_event(timed.to_json()) == timed
    assert plain.replacement_t(3.0) == 3.0 and timed.replacement_t(3.0) == 5


@cache
def _session(seed: int) -> tuple[dict, ...]:
    return tuple(simulate_session(seed, breaches=0.03).events)


def _core(verdicts) -> list:
    return [v for v in verdicts if not isinstance(v, (Withdrawn, Rederived))]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3), st.integers(1, 10**6), st.sampled_from([3000.0, 1.7e9, 1e308]),
       st.floats(0, 1), st.booleans())
def test_correcting_a_far_future_time_lets_later_true_events_in(seed, which, ahead, where, restore):
    events = list(_session(seed))
    cut = which % (len(events) - 1) + 1
    last_t, next_t = events[cut - 1]["t"], events[cut]["t"]
    far = {"type": "tick", "t": last_t + ahead if ahead < 1e300 else ahead, "id": "far"}
    referee = Referee()
    for event in events[:cut]:
        referee.feed(event)
    referee.feed(far)
    try:
        referee.feed(events[cut])
        raise AssertionError("an event before the far-future time was accepted")
    except ev.EventError as exc:
        assert "time goes backwards" in str(exc)
    true_t = last_t + where * (next_t - last_t)
    correction = {"type": "correction", "t": true_t, "of": "far", "by": "Ref", "event": {"type": "tick", "t": true_t}}
    referee.feed(correction)
    for event in events[cut:]:
        referee.feed(event)  # every later true event is accepted
    corrected = events[:cut] + [{**far, "t": true_t}] + events[cut:]
    if restore:  # a reopened table (a snapshot of what was received) agrees
        referee = Referee.restore(referee.snapshot())
    fresh = Referee()
    for event in corrected:
        fresh.feed(event)
    assert _core(referee.verdicts()) == fresh.verdicts()
    assert referee.state == fresh.state
