"""A table's timeline replays its events as the referee judged them in the end: a read a
referee confirmed later is judged as read at every step after it (the appeal review)."""

from referee.engine import fold_corrections
from web.app.timeline import Timeline, Timelines

CAMERA = {"source": "camera", "confidence": 0.99}


def _raw() -> list[dict]:
    events = [
        {"type": "session_start", "t": 0, "teams": {"NS": "Reds", "EW": "Blues"}},
        {"type": "deal_start", "t": 1, "deal": 1, "first_leader": "S"},
        {"type": "play", "t": 2, "seat": "S", "cards": ["9S"], **CAMERA},
        # E's cards read as 7S 8D, no combination; the deal goes on with the likely TS
        {"type": "play", "t": 3, "id": "e1", "seat": "E", "cards": ["7S", "8D"], "source": "camera",
         "confidence": 0.55, "alternatives": [{"cards": ["TS"], "p": 0.4}]},
        {"type": "play", "t": 4, "seat": "N", "cards": ["JS"], **CAMERA},
        {"type": "play", "t": 5, "seat": "W", "cards": ["QS"], **CAMERA},
        {"type": "confirm_read", "t": 9, "of": "e1", "by": "chief", "source": "manual"},
    ]
    return [dict(e, seq=i + 1) for i, e in enumerate(events)]


def _counts_of_e(raw: list[dict]) -> tuple[list[int], Timeline]:
    timeline = Timelines(None)._build("T1", {"ruleset": "competition", "generation": 1}, raw)
    return [step.state_view["deal"]["counts"]["E"]
            for step in timeline.steps if step.deal == 1 and step.event["type"] == "play"], timeline


def test_a_read_confirmed_later_is_judged_as_read_at_every_step_after_it():
    raw = _raw()
    before, _ = _counts_of_e(raw[:-1])
    assert before == [27, 26, 26, 26]  # taken as TS while in question
    after, timeline = _counts_of_e(raw)
    # E's own step shows the doubt as it was; from the confirmation on, two cards left E's hand
    assert after == [27, 26, 25, 25]
    confirm = next(i for i, s in enumerate(timeline.steps) if s.event["type"] == "confirm_read")
    assert timeline.steps[confirm - 1].event.get("id") == "e1"  # right after the read it confirms
    assert [r["type"] for r in timeline.steps[confirm].records][-1] == "confirmed"
    times = [s.event["t"] for s in timeline.steps]
    assert times == sorted(times)  # a viewer's delayed view cuts a prefix


def test_folding_keeps_a_confirmation_of_an_unknown_read_where_it_came():
    raw = _raw()
    raw[-1]["of"] = "nope"
    assert [e["type"] for e, _ in fold_corrections(raw)][-1] == "confirm_read"
