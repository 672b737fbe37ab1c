"""A table's timeline replays its events as the referee judged them in the end: a read a
referee confirmed later is judged as read at every step after it (the appeal review)."""

from referee.engine import fold_corrections
from referee.rulesets import load_ruleset
from web.app.timeline import Timeline, replayed

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
    timeline = replayed("T1", "competition", 1, load_ruleset("competition"), raw)
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
    assert [e["type"] for e, _ in fold_corrections(raw).judged][-1] == "confirm_read"


def test_the_steps_are_the_live_referees_judgements_and_a_correction_is_replayed(monkeypatch):
    """Once a worker follows a table, its steps come from the store's live referee (no
    replay of its own) and equal a fresh replay; a correction re-judges: replayed once."""
    import tempfile

    from referee.simulate import play_session
    from tests.store.support import TEST_SECRET
    from web.app import timeline as module
    from web.store import open_store

    replays = []
    monkeypatch.setattr(module, "replayed", lambda *args: replays.append(len(args[-1])) or replayed(*args))
    events = play_session(9, breaches=0.2, table="T1")
    with tempfile.TemporaryDirectory() as tmp, \
            open_store(f"sqlite:///{tmp}/g.sqlite3", secret=TEST_SECRET) as store:
        store.append_many(events[:10])
        timelines = module.Timelines(store)
        assert timelines.get("T1").head_seq == 10
        for event in events[10:60]:  # a live feed reads the table after each event
            store.append(event)
            timelines.get("T1")
        followed = timelines.get("T1")
        assert replays == [10] and followed.head_seq == 60
        fresh = module.Timelines(store).get("T1")
        assert replays == [10, 60]
        assert [(s.seq, s.records, s.state_view, s.deal, s.round) for s in followed.steps] == \
            [(s.seq, s.records, s.state_view, s.deal, s.round) for s in fresh.steps]
        play = next(e for e in followed.raw if e["type"] == "play" and len(e["cards"]) == 1)
        store.add_official("chief", "referee")
        store.append({"type": "correction", "t": followed.raw[-1]["t"], "of": play["id"], "by": "chief",
                      "event": {"type": "play", "seat": play["seat"], "cards": play["cards"]}, "table": "T1"})
        corrected = timelines.get("T1")
        assert replays[2:] == [61] and corrected.head_seq == 61
        assert any(s.corrected and s.seq == play["seq"] for s in corrected.steps)
