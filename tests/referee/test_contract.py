"""The event contract: one parser, typed events that serialise one way, typed rejections,
the new observation events (fault, deck_anomaly, dismiss) and snapshots as plain data."""

from __future__ import annotations

import json
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee import events as ev
from referee.engine import Referee, Rejected
from referee.simulate import simulate_session
from referee.snapshot import SnapshotError
from referee.verdicts import Dismissed, Flag, Review, ReviewReason

from .conftest import Script


@cache
def simulated() -> tuple[dict, ...]:
    return tuple(simulate_session(4, breaches=0.03).events)


NEW_EVENTS = [
    {"type": "fault", "t": 3, "source": "camera", "message": "frozen frames", "seat": "E"},
    {"type": "deck_anomaly", "t": 3, "seat": "N", "tags": ["04A1B2"], "message": "tag 04A1B2 is from table 9's deck"},
    {"type": "dismiss", "t": 3, "rule": "P4", "seat": "S", "at": 2.0, "reason": "seen on video: in turn", "by": "Li"},
    {"type": "play", "t": 3, "seat": "S", "cards": ["3S", "3D"], "declared": "pair", "source": "fused",
     "confidence": 0.5, "evidence": {"frames": ["ab" * 32], "tags": ["x"]}, "table": "T1", "id": "p9"},
    {"type": "correction", "t": 4, "of": "p9", "by": "Li", "event": {"type": "pass", "seat": "S"}},
]


def test_every_simulated_event_round_trips_through_to_json():
    checked = 0
    for obj in simulated() + tuple(NEW_EVENTS):
        event = ev.parse_event(obj)
        assert ev.parse_event(event.to_json()) == event
        assert json.loads(json.dumps(event.to_json())) == event.to_json()
        checked += 1
    assert checked > 100


def test_to_json_is_the_canonical_form_of_what_was_read():
    event = ev.parse_event({"type": "play", "t": 1, "seat": "s", "cards": "th jd", "id": 7})
    assert event.to_json() == {"type": "play", "t": 1.0, "seat": "S", "cards": ["TH", "JD"], "id": "7"}


@pytest.mark.parametrize("obj,reason", [
    ({"type": "fault", "t": 1, "source": "fused", "message": "x"}, "fault.source: expected one of camera, rfid"),
    ({"type": "fault", "t": 1, "source": "camera"}, "fault event needs field 'message'"),
    ({"type": "deck_anomaly", "t": 1, "seat": "N", "tags": "04A1", "message": "m"}, "deck_anomaly.tags"),
    ({"type": "dismiss", "t": 1, "rule": "P4", "at": 1, "reason": "r", "by": " "}, "dismiss.by"),
    ({"type": "pass", "t": 1, "seat": "S", "source": "telepathy"}, "pass.source: expected one of"),
    ({"type": "play", "t": 1, "seat": "S", "cards": ["3S"], "confidence": 1.5}, "play.confidence: expected 0..1"),
])
def test_a_rejected_event_raises_one_typed_exception_with_the_reason(obj, reason):
    with pytest.raises(ev.EventError) as caught:
        ev.parse_event(obj)
    assert isinstance(caught.value, ValueError) and reason in caught.value.reason


def test_engine_rejections_are_the_same_exception_family():
    referee = Referee()
    with pytest.raises(Rejected, match="no session started") as caught:
        referee.feed({"type": "pass", "t": 0, "seat": "S"})
    assert isinstance(caught.value, ev.EventError)


def test_a_fault_is_ruled_on_with_a_review_and_changes_no_state():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    before = s.referee.state.deal.turn, dict(s.referee.state.deal.counts)
    out = s("fault", source="rfid", message="reader gone", seat="W")
    assert out == [Review(ReviewReason.FAULT, s.t, "rfid fault: reader gone: its reads cannot be trusted until "
                          "checked", seat="W", deal=1, source="rfid",
                              detail={"what": "fault", "text": "reader gone"}).to_json()]
    assert (s.referee.state.deal.turn, dict(s.referee.state.deal.counts)) == before


def test_a_deck_anomaly_raises_d3():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("deck_anomaly", seat="E", tags=["04A1"], message="tag 04A1 (7H) was played twice this deal")
    assert s.flags(ignore=()) == [("D3", "E")]
    assert s.of_type("flag")[0]["claim_until"] == {"deal": 1}


def test_dismiss_names_a_standing_flag_and_changes_nothing_else():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="N", cards=["3S"])  # out of turn: P4
    flag = s.of_type("flag")[0]
    turn = s.deal.turn
    out = s("dismiss", rule="P4", seat="N", at=flag["at"], reason="S had passed", by="Li")
    assert out == [Dismissed("P4", "N", flag["at"], "S had passed", "Li", s.t).to_json()]
    assert s.deal.turn == turn
    again = s("dismiss", rule="P4", seat="N", at=flag["at"], reason="twice", by="Li")
    assert again[0]["type"] == "error" and "no standing flag P4 of N" in again[0]["message"]


def test_a_snapshot_is_canonical_json_with_a_schema_and_restores_the_same_referee():
    referee = Referee()
    for event in simulated()[:120]:
        referee.feed(event)
    blob = referee.snapshot()
    data = json.loads(blob)
    assert data["schema"] == "guandan-referee-snapshot/1" and len(data["events"]) == 120
    again = Referee.restore(blob)
    assert again.records() == referee.records() and again.snapshot() == blob
    assert again.state == referee.state


@pytest.mark.parametrize("blob,words", [
    (b"\x80\x04\x95pickle", "not UTF-8"),
    (b"[]", "expected an object"),
    (b'{"schema": "other/9", "ruleset": {}, "events": []}', "schema 'other/9'"),
    (b'{"schema": "guandan-referee-snapshot/1", "ruleset": {"name": "x", "follow_seconds": "slow"}, "events": []}',
     "follow_seconds"),
    (b'{"schema": "guandan-referee-snapshot/1", "ruleset": {"name": "x"}, "events": [{"type": "pass", "t": 0}]}',
     "snapshot event 1: pass event needs field 'seat'"),
    (b'{"schema": "guandan-referee-snapshot/1", "ruleset": {"name": "x"}, "events": ' + b"[" * 40 + b"]" * 40 + b"}",
     "nested deeper"),
])
def test_a_malformed_snapshot_is_refused_with_a_value_error(blob, words):
    with pytest.raises(SnapshotError, match=words):
        Referee.restore(blob)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_restore_and_never_raise_anything_else(blob):
    with pytest.raises(SnapshotError):
        Referee.restore(blob)


def test_flags_are_keyed_by_rule_seat_and_time():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="N", cards=["3S"])
    flag = next(v for v in s.referee.verdicts() if isinstance(v, Flag))
    assert flag.key == ("P4", "N", s.t)


def test_a_snapshot_after_a_correction_and_a_dismissal_restores_every_record():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["9S"], id="p1")
    s("play", seat="E", cards=["8S"], id="p2")
    s("play", seat="N", cards=["3S"], id="p3")
    out = s("correction", of="p2", event={"type": "play", "seat": "E", "cards": ["TS"]}, by="Li")
    # E's P5 goes; N's 3S, judged against E's cards as they stood, did not beat 8S and does
    # not beat TS either: its P5 is withdrawn and raised again in the new table's words
    assert [(r["type"], r.get("rule"), r.get("seat")) for r in out] == [
        ("withdrawn", "P5", "E"), ("withdrawn", "P5", "N"), ("flag", "P5", "N"), ("rederived", None, None)]
    assert s("dismiss", rule="P5", seat="N", at=4.0, reason="seen on video", by="Li")[0]["type"] == "dismissed"
    blob = s.referee.snapshot()
    again = Referee.restore(blob)
    assert [r["type"] for r in again.records()] == ["flag", "withdrawn", "rederived", "dismissed"]
    assert again.records() == s.referee.records() and again.state == s.referee.state
    assert again.log == s.referee.log and again.snapshot() == blob


def test_a_penalty_level_is_an_enum_read_and_written_as_its_value():
    event = ev.parse_event({"type": "penalty", "t": 1, "side": "NS", "level": "violation", "rule": "P4"})
    assert event.level is ev.PenaltyLevel.VIOLATION
    assert type(event.to_json()["level"]) is str and json.dumps(event.to_json()["level"]) == '"violation"'
    assert [level.escalated() for level in ev.PenaltyLevel] == [
        ev.PenaltyLevel.VIOLATION, ev.PenaltyLevel.FOUL, ev.PenaltyLevel.LOSS, None]
    assert ev.PENALTY_LEVELS == ("warning", "violation", "foul", "loss")


def test_a_deals_phase_is_an_enum_and_the_public_view_carries_its_value():
    from referee.state import DealPhase
    from referee.view import view_for

    s = Script()
    s.quick_deal()
    assert s.deal.phase is DealPhase.PLAY
    assert json.dumps(view_for(s.referee.state)["deal"]["phase"]) == '"play"'


def test_an_event_the_parser_would_refuse_cannot_be_built_either():
    """Each event class is keyword-only, and what the parser requires has no default: built
    from its time alone, an event exists exactly when the parser accepts it from its time alone."""
    with pytest.raises(TypeError):
        ev.Play(t=1.0)
    with pytest.raises(TypeError):
        ev.Pass(1.0, "S")  # keyword-only
    classes = {cls.kind: cls for cls in _event_classes()}
    assert set(classes) == set(ev.EVENT_TYPES)
    for kind, cls in classes.items():
        try:
            parsed = ev.parse_event({"type": kind, "t": 1})
        except ev.EventError:
            with pytest.raises(TypeError):
                cls(t=1.0)
        else:
            assert cls(t=1.0) == parsed, kind


def _event_classes():
    seen, todo = [], [ev.Event]
    while todo:
        for sub in todo.pop().__subclasses__():
            seen.append(sub)
            todo.append(sub)
    return seen
