"""The floor referee who knows the truth (bench/flags.py --referee auto): its answers, and
those answers appended through a real store and judged by the real referee."""

from web.app.agent.floorref import FloorReferee, TableView, decide, history
from web.app.agent.sender import Answer
from web.app.agent.truth import Pair
from web.store import get_store
from tests.app.conftest import session_events

READ = {"type": "play", "seat": "E", "t": 9.0, "cards": ["5S"], "id": "p2"}
REVIEW = {"type": "review", "reason": "low_confidence", "seat": "E", "at": 9.0}
FLAG = {"type": "flag", "rule": "P4", "seat": "E", "at": 9.0}


def test_a_doubted_read_that_was_right_is_confirmed_one_that_was_wrong_corrected():
    right = Pair("E", {"type": "play", "seat": "E", "t": 8.9, "cards": ["5S"]}, READ, {}, False)
    wrong = Pair("E", {"type": "play", "seat": "E", "t": 8.9, "cards": ["6S"]}, READ, {}, True)
    assert decide(REVIEW, [right], False) == {"type": "confirm_read", "of": "p2"}
    assert decide(dict(REVIEW, reason="suspect_read"), [wrong], False) == {
        "type": "correction", "of": "p2", "event": {"type": "play", "seat": "E", "source": "manual", "cards": ["6S"]}}
    assert decide(dict(REVIEW, reason="unchecked"), [wrong], False) is None  # not a question about a read
    assert decide(REVIEW, [None], False) is None  # no play of the truth to say


def test_a_play_seen_where_nobody_played_is_struck():
    phantom = Pair("E", None, READ, {}, True)
    assert decide(dict(REVIEW, reason="suspect_read"), [phantom], False) == {
        "type": "correction", "of": "p2", "event": None}
    assert decide(dict(FLAG, rule="P4"), [phantom], False)["event"] is None  # a flag at it too
    assert decide(dict(REVIEW, reason="suspect_read"), [phantom], False, corrected={"p2"}) is None


def test_a_flag_at_a_misread_is_corrected_a_true_breach_stays_any_other_is_dismissed():
    right = Pair("E", {"type": "play", "seat": "E", "t": 8.9, "cards": ["5S"]}, READ, {}, False)
    wrong = Pair("E", {"type": "play", "seat": "E", "t": 8.9, "cards": ["6S"]}, READ, {}, True)
    assert decide(FLAG, [wrong], False)["type"] == "correction"
    assert decide(FLAG, [right], True) is None
    assert decide(FLAG, [right], False) == {"type": "dismiss", "rule": "P4", "seat": "E", "at": 9.0,
                                          "reason": "not a breach: the table shows otherwise"}
    assert decide(dict(FLAG, rule="K3"), [None], False)["type"] == "dismiss"


def test_an_item_naming_an_earlier_read_corrects_whichever_named_read_was_wrong():
    right = Pair("E", {"type": "play", "seat": "E", "t": 8.9, "cards": ["5S"]}, READ, {}, False)
    earlier = {"type": "play", "seat": "S", "t": 4.0, "cards": ["5S"], "id": "p1"}
    wrong_before = Pair("S", dict(earlier, cards=["5H"]), earlier, {}, True)
    item = dict(REVIEW, reason="suspect_read", detail={"what": "seen_again", "earlier": [
        {"seat": "S", "at": 4.0, "of": "p1", "cards": ["5S"]}]})
    assert decide(item, [right, wrong_before], False) == {
        "type": "correction", "of": "p1", "event": {"type": "play", "seat": "S", "source": "manual", "cards": ["5H"]}}
    assert decide(item, [right, None], False) == {"type": "confirm_read", "of": "p2"}
    wrong_too = Pair("E", {"type": "play", "seat": "E", "t": 8.9, "cards": ["6S"]}, READ, {}, True)
    first = decide(item, [wrong_too, wrong_before], False)
    assert first["of"] == "p2"  # its own read first, then the earlier one it names
    assert decide(item, [wrong_too, wrong_before], False, corrected={"p2"})["of"] == "p1"


def truth_with(e_cards):
    """The camera events of ``session_events`` as they truly were, E's play being ``e_cards``."""
    return [dict(e, cards=e_cards if e.get("id") == "p2" else e.get("cards"), t=e["t"] - 0.1)
            for e in session_events() if e["type"] in ("play", "pass")]


def table_of(store, truth, breaches):
    events = session_events()
    assert all(not isinstance(o, Exception) for o in store.append_many([dict(e, table="T1") for e in events]))
    answers = [Answer(e, {"status": "accepted"}, 0.0) for e in events]
    return TableView("T1", truth, breaches, answers, lambda: 100.0)


def test_answers_go_through_the_store_confirm_a_right_read_and_dismiss_a_flag_that_is_no_breach(app):
    store = get_store(app)
    table = table_of(store, truth_with(["5S"]), breaches=[])
    referee = FloorReferee(store, [table], "referee")
    assert referee.step(table, 15.0) == 1  # E's review is due (9 + 5), S's flag at 12 not yet
    assert referee.step(table, 100.0) == 1
    assert referee.step(table, 100.0) == 0  # answered once
    added = [e for e in store.events("T1") if e.get("by") == "referee"]
    assert [(e["type"], e.get("of") or e.get("rule")) for e in added] == [("confirm_read", "p2"), ("dismiss", "P4")]
    assert added[0]["t"] == 18.0  # dated at the table's latest event
    assert not referee.refused and referee.given == {"confirm_read": 1, "dismiss": 1}


def test_a_misread_is_corrected_a_true_breach_stays_and_the_history_keeps_what_the_replay_dropped(app):
    store = get_store(app)
    breach = {"type": "flag", "rule": "P4", "seat": "S", "at": 11.9}
    table = table_of(store, truth_with(["6S"]), breaches=[breach])
    referee = FloorReferee(store, [table], "referee")
    referee.finish()
    (correction,) = [e for e in store.events("T1") if e["type"] == "correction"]
    assert correction["of"] == "p2" and correction["event"]["cards"] == ["6S"]
    assert not [e for e in store.events("T1") if e["type"] in ("dismiss", "confirm_read")]
    assert table.corrected == {"p2"}
    current = store.records("T1")
    assert not [r for r in current if r["type"] == "review" and r["reason"] == "low_confidence"]  # 6S: not read
    assert [r for r in history(store, "T1") if r["type"] == "review" and r["reason"] == "low_confidence"]
    assert [(r["rule"], r["seat"]) for r in current if r["type"] == "flag"] == [("P4", "S")]
