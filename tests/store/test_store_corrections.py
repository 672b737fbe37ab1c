"""Corrections (S4 windows, roles), penalties (X6), the audit trail, sign-off (S3)."""

from __future__ import annotations

import pytest

from web.store import EventRejected
from web.store.authority import NotAuthorized, Windows, check_correction
from web.tournament import signoff
from web.tournament.signoff import SignOffError


def _correct(table, of: str, seat: str, by: str, t: float | None = None):
    event = table.event("correction", of=of, by=by, event={"type": "play", "seat": seat, "cards": ["2S"], "t": 3})
    if t is not None:
        event["t"] = t
    return table.store.append(event)


def test_correction_rederives_and_the_audit_shows_both(store, table):
    table.session(2, 1)
    assert store.results("T1")[0]["winner"] == "NS"
    appended = _correct(table, "ns1", "E", "Ref Li")
    assert appended.records == []  # the new generation replaces, it is not "new records"
    (result,) = store.results("T1")
    assert result["winner"] == "EW" and result["level_difference"] == 1
    (old,) = store.records("T1", generation=0)
    assert old["winner"] == "NS"
    (entry,) = store.audit("T1")
    assert entry["by"] == "Ref Li"
    assert entry["original"]["seat"] == "S" and entry["replacement"]["seat"] == "E"
    assert store.verify(rederive=True).ok


def test_after_the_window_only_the_chief_may_correct(store, table):
    table.session(2, 1)
    end_t = table.t
    with pytest.raises(EventRejected, match=r"past the 600 s window \(S4\)"):
        _correct(table, "ns1", "E", "Ref Li", t=end_t + 601)
    _correct(table, "ns1", "E", "Chief Wang", t=end_t + 601)
    assert store.results("T1")[0]["winner"] == "EW"


def test_within_the_window_a_referee_may_correct(store, table):
    table.session(2, 1)
    _correct(table, "ns1", "E", "Ref Li", t=table.t + 600)
    assert store.results("T1")[0]["winner"] == "EW"


@pytest.mark.parametrize("by, of, reason", [
    ("Somebody", "ns1", "not a registered official"),
    ("Ref Li", "nope", "no event with that id"),
])
def test_bad_corrections_are_rejected(store, table, by, of, reason):
    table.session(2, 1)
    with pytest.raises(EventRejected, match=reason):
        _correct(table, of, "E", by)


def test_window_rule_as_a_pure_function():
    w = Windows(entry_s=60)
    check_correction("r", "referee", t=100, session_end_t=None, windows=w)
    check_correction("r", "referee", t=160, session_end_t=100, windows=w)
    check_correction("c", "chief", t=10_000, session_end_t=100, windows=w)
    with pytest.raises(NotAuthorized):
        check_correction("r", "referee", t=160.5, session_end_t=100, windows=w)


def test_fouls_and_losses_need_the_chief(store, table):
    table.append("session_start", teams={"NS": "A", "EW": "B"})
    table.append("penalty", side="NS", level="warning", rule="P6", by="Ref Li")
    with pytest.raises(EventRejected, match=r"only the chief referee gives fouls and losses \(X6\)"):
        table.append("penalty", side="NS", level="foul", rule="X3", by="Ref Li")
    table.append("penalty", side="NS", level="foul", rule="X3", by="Chief Wang")
    assert [r["severity"] for r in store.records("T1", types=["flag"])] == ["warning", "foul"]
    assert [a["level"] for a in store.audit("T1")] == ["warning", "foul"]


def test_result_is_final_when_both_sides_sign(store, table):
    table.session(3, 1)
    assert signoff.status(store, "T1").state == "pending"
    assert signoff.sign(store, "T1", "NS", "Ann").state == "pending"
    status = signoff.sign(store, "T1", "EW", "Bob")
    assert status.state == "final" and status.signed == {"NS": "Ann", "EW": "Bob"}


def test_dispute_reopens_and_a_correction_voids_signatures(store, table):
    table.session(3, 1)
    signoff.sign(store, "T1", "NS", "Ann")
    assert signoff.dispute(store, "T1", "EW", "Bob", "play ns1 was E's").state == "disputed"
    with pytest.raises(SignOffError, match="disputed"):
        signoff.sign(store, "T1", "EW", "Bob")
    _correct(table, "ns1", "E", "Ref Li")
    with pytest.raises(SignOffError, match="not a registered official"):
        signoff.resolve(store, "T1", "Ann")
    assert signoff.resolve(store, "T1", "Ref Li", "corrected ns1").state == "pending"
    signoff.sign(store, "T1", "NS", "Ann")
    assert signoff.sign(store, "T1", "EW", "Bob").state == "final"
    # a later chief correction changes the result: the signatures no longer count
    now = store.clock()
    store.clock = lambda: now + 5000  # the hall's clock moved on too (a table's time keeps to it)
    _correct(table, "ns2", "E", "Chief Wang", t=table.t + 5000)
    assert signoff.status(store, "T1").state == "pending"


def test_signing_needs_a_result_and_a_side(store, table):
    table.session(1, 1, end=False)
    with pytest.raises(SignOffError, match="no session result #1"):
        signoff.sign(store, "T1", "NS", "Ann")
    table.append("session_end")
    with pytest.raises(SignOffError, match="side must be NS or EW"):
        signoff.sign(store, "T1", "XX", "Ann")


def test_a_correction_in_the_same_batch_sees_the_events_before_it(store, table):
    events = [table.event("session_start", teams={"NS": "A", "EW": "B"}),
              table.event("play", seat="S", cards=["2S"], id="ns0"),
              table.event("play", seat="S", cards=["2S"], id="ns1"),
              table.event("penalty", side="EW", level="warning", rule="P6", by="Ref Li"),
              table.event("session_end"),
              table.event("correction", of="ns1", by="Ref Li",
                          event={"type": "play", "seat": "E", "cards": ["2S"], "t": 3}),
              table.event("penalty", side="NS", level="warning", rule="P6", by="Ref Li")]
    outcomes = store.append_many(events)
    assert [o.seq for o in outcomes] == list(range(1, 8))
    assert [r["type"] for r in store.records("T1", generation=0)] == ["flag", "session_result"]
    assert store.records("T1", generation=0)[1]["winner"] == "NS"
    assert [(r["type"], r.get("winner")) for r in store.records("T1")] == [
        ("flag", None), ("session_result", None), ("flag", None)]  # 1:1 after the fix, a draw
    assert store.audit("T1")[1]["original"]["seat"] == "S"
    assert store.verify(rederive=True).ok
