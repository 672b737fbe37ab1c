"""Camera + RFID fusion: agree -> one play, disagree -> a conflict, alone -> its own play."""

import pytest

from web.app.agent.fusion import Fuser, ObservationError


def cam(seat, cards, t, **extra):
    return {"type": "play", "seat": seat, "cards": cards, "t": t, "source": "camera",
            "evidence": {"crop": f"frames/{t}.jpg"}, **extra}


def rfid(seat, cards, t):
    return {"type": "play", "seat": seat, "cards": cards, "t": t, "source": "rfid",
            "evidence": {"tags": [f"T{c}" for c in cards]}}


def test_agreeing_sources_make_one_play_with_both_evidences():
    fuser = Fuser(window=1.5)
    assert fuser.add(cam("S", ["7H", "7D"], 12.6, declared="pair")) == []
    (event,) = fuser.add(rfid("S", ["7d", "7H"], 12.5))
    assert event == {
        "type": "play", "seat": "S", "cards": ["7H", "7D"], "t": 12.5, "declared": "pair", "source": "fused",
        "evidence": {"camera": {"crop": "frames/12.6.jpg"}, "rfid": {"tags": ["T7d", "T7H"]}},
    }
    assert fuser.flush(100.0) == []


def test_disagreeing_sources_make_a_conflict_for_a_human():
    fuser = Fuser()
    fuser.add(rfid("E", ["7H", "7H"], 3.0))
    (event,) = fuser.add(cam("E", ["7H", "7D"], 3.4))
    assert event == {
        "type": "conflict", "seat": "E", "t": 3.0, "source": "fused",
        "readings": {"camera": ["7H", "7D"], "rfid": ["7H", "7H"]},
        "evidence": {"camera": {"crop": "frames/3.4.jpg"}, "rfid": {"tags": ["T7H", "T7H"]}},
    }


def test_a_lone_observation_leaves_after_the_window_in_time_order():
    fuser = Fuser(window=1.0)
    assert fuser.add(cam("S", ["3S"], 1.0)) == []  # RFID never saw it (an untagged card?)
    assert fuser.add(rfid("E", ["5S"], 1.5)) == []
    assert fuser.add(cam("E", ["5S"], 1.6)) == []  # agreed, but waits behind S's play
    assert fuser.flush(1.9) == []
    s_play, e_play = fuser.flush(2.1)
    assert (s_play["seat"], s_play["evidence"]) == ("S", {"camera": {"crop": "frames/1.0.jpg"}})
    assert e_play["seat"] == "E" and set(e_play["evidence"]) == {"camera", "rfid"}


def test_same_seat_outside_the_window_is_two_plays():
    fuser = Fuser(window=1.0)
    fuser.add(cam("N", ["9S"], 1.0))
    first, = fuser.add(rfid("N", ["9S"], 2.5))
    assert first["evidence"] == {"camera": {"crop": "frames/1.0.jpg"}}
    (second,) = fuser.flush(4.0)
    assert second["evidence"] == {"rfid": {"tags": ["T9S"]}}


def test_single_source_and_other_events_pass_straight_through():
    fuser = Fuser(sources=("rfid",))
    (event,) = fuser.add(rfid("W", ["BJ"], 5.0))
    assert event["cards"] == ["BJ"] and event["source"] == "rfid"
    fuser = Fuser()
    (event,) = fuser.add({"type": "pass", "seat": "N", "t": 6.0, "source": "camera"})
    assert event == {"type": "pass", "seat": "N", "t": 6.0, "source": "camera", "evidence": {"camera": None}}


@pytest.mark.parametrize("obs, message", [
    ([], "must be an object"),
    ({"type": "play", "seat": "S", "cards": ["7H"], "t": 1.0, "source": "radar"}, "source must be one of"),
    ({"type": "play", "seat": "S", "cards": ["7H"], "source": "rfid"}, "numeric time"),
    ({"type": "play", "seat": "X", "cards": ["7H"], "t": 1, "source": "rfid"}, "needs a seat"),
    ({"type": "play", "seat": "S", "cards": "7H", "t": 1, "source": "rfid"}, "list of cards"),
])
def test_malformed_observations_are_rejected_clearly(obs, message):
    fuser = Fuser()
    with pytest.raises(ObservationError, match=message):
        fuser.add(obs)
    assert fuser.flush(1e9) == []


def test_unknown_sources_are_a_configuration_error():
    with pytest.raises(ValueError, match="sources must be among"):
        Fuser(sources=("lidar",))


def test_a_tag_of_another_deck_is_named_by_the_camera():
    fuser = Fuser()
    stray = {"type": "play", "seat": "W", "cards": ["9S"], "t": 2.0, "source": "rfid",
             "evidence": {"tags": ["A1", "FF"], "unknown": ["FF"]}}
    fuser.add(stray)
    (event,) = fuser.add(cam("W", ["9S", "9S"], 2.3))
    assert (event["type"], event["cards"], event["source"]) == ("play", ["9S", "9S"], "fused")
    fuser.add(dict(stray, t=9.0))
    (event,) = fuser.add(cam("W", ["9S", "TS", "JS"], 9.2))  # one unknown tag cannot be two cards
    assert event["type"] == "conflict"
