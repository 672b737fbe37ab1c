"""A correction with no event strikes a play or pass a reader saw where nobody acted (a
hand over the play area read as a play): the deal is judged again without it. A pass in
its place would not do: the seat's real action, seen afterwards, would be out of turn."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from referee import events as ev
from referee.simulate import simulate_session
from referee.verdicts import Flag
from referee.view import view_for

from .conftest import Script, judged_afresh

CAMERA = {"source": "camera", "confidence": 0.99}


def _phantom() -> Script:
    """S leads 9S; a phantom 3H read at E; E then really plays TS, N and W pass."""
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["9S"], id="s1", **CAMERA)
    s("play", seat="E", cards=["3H"], id="ghost", source="camera", confidence=0.6)
    s("play", seat="E", cards=["TS"], id="e1", **CAMERA)
    s("pass", seat="N", id="n1", **CAMERA)
    return s


def test_a_struck_read_is_judged_as_if_nobody_acted_there():
    s = _phantom()
    assert s.deal.counts["E"] == 25  # as read, E laid 3H and TS (the others "passed unseen")
    assert [r["reason"] for r in s.records if r["type"] == "review"] == ["suspect_read"]
    out = s("correction", of="ghost", event=None, by="chief")
    assert [r["type"] for r in out] == ["rederived"]
    assert s.deal.counts == {"S": 26, "E": 26, "N": 27, "W": 27} and s.deal.turn == "W"
    assert [r for r in s.referee.records() if r["type"] in ("review", "settled", "flag")] == []
    assert [e.id for e in s.referee.log if isinstance(e, ev.Play)] == ["s1", "ghost", "e1"]  # kept at its place


def test_a_struck_read_raises_nothing_it_raised_and_a_pass_in_its_place_would_not_do():
    passed = _phantom()
    passed("correction", of="ghost", event={"type": "pass", "seat": "E"}, by="chief")
    assert ("P4", "E") in passed.standing()  # E's real play after "its pass" is out of turn
    struck = _phantom()
    out = struck("correction", of="ghost", event=None, by="chief")
    assert all(r["type"] != "flag" for r in out) and struck.standing() == []


def test_a_struck_read_can_be_put_back_by_a_correction_and_is_struck_only_once():
    s = _phantom()
    s("correction", of="ghost", event=None, by="chief")
    again = s("correction", of="ghost", event=None, by="chief")
    assert again[0]["type"] == "error" and "is struck already" in again[0]["message"]
    confirm = s("confirm_read", of="ghost", by="chief")
    assert confirm[0]["type"] == "error" and "was struck" in confirm[0]["message"]
    out = s("correction", of="ghost", event={"type": "pass", "seat": "E"}, by="chief")
    assert out[-1]["type"] == "rederived" and ("P4", "E") in s.standing()  # judged again, as a pass


def test_only_a_play_or_a_pass_can_be_struck():
    s = _phantom()
    s("report", seat="E", count=10, id="r1")
    out = s("correction", of="r1", event=None, by="chief")
    assert out[0]["type"] == "error" and "only a play or a pass can be struck" in out[0]["message"]


def test_a_strike_is_null_in_json_and_parses_back():
    strike = ev.parse_event({"type": "correction", "t": 5, "of": "ghost", "event": None, "by": "chief"})
    assert strike.event is None and strike.to_json()["event"] is None
    assert ev.parse_event(strike.to_json()) == strike and strike.replacement_t(3.0) == 3.0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 40), st.integers(0, 10**6))
def test_striking_an_action_of_any_seeded_session_judges_the_log_without_it(seed, which):
    """Whichever play or pass is struck, the table ends as the log without it judged afresh."""
    events = [dict(e, id=f"e{i}") for i, e in enumerate(simulate_session(seed).events)]
    actions = [i for i, e in enumerate(events) if e["type"] in ("play", "pass")]
    at = actions[which % len(actions)]
    live = judged_afresh(events)
    live.feed({"type": "correction", "t": events[-1]["t"], "of": f"e{at}", "event": None, "by": "chief"})
    fresh = judged_afresh(events[:at] + events[at + 1:])
    assert view_for(live.state) == view_for(fresh.state)
    flags = [{v.key for v in r.verdicts() if isinstance(v, Flag)} for r in (live, fresh)]
    assert flags[0] == flags[1]
