"""Sign-off that holds (S3): a side signs once, draws wait for final results, the chief
referee's override is a ruling with a name and a reason."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from web.store.authority import NotAuthorized
from web.tournament import service, signoff
from web.tournament.signoff import SignOffError


@pytest.fixture
def cup(store, desk):
    store.clock = iter(range(1_769_000_000, 1_769_100_000, 60)).__next__  # a minute per action
    service.create(store, "CUP", "Cup", rounds=3, seed=1)
    for p in "ABCDE":
        service.add_pair(store, "CUP", p, f"pair {p}", f"{p}1", f"{p}2")
    return store


def _game(drawn):
    return next(m for m in drawn if m.ew is not None)


def test_a_side_signs_once_and_the_error_names_who_signed_when(cup, desk):
    m = _game(service.pair_round(cup, "CUP"))
    desk.play(m)
    first = signoff.sign(cup, m.table_id, "NS", f"{m.ns}1")
    signed_at = signoff.wall_time(first.signed_at["NS"])
    signoff.sign(cup, m.table_id, "EW", f"{m.ew}1")
    for again in (f"{m.ns}1", f"{m.ns}2"):  # the same player again, or the partner
        with pytest.raises(SignOffError, match=rf"NS already signed this result: {m.ns}1 at {signed_at}"):
            signoff.sign(cup, m.table_id, "NS", again)
    status = signoff.status(cup, m.table_id)
    assert status.state == "final" and status.signed == {"NS": f"{m.ns}1", "EW": f"{m.ew}1"}


def test_a_changed_signer_needs_a_dispute_and_a_resolution(cup, desk):
    m = _game(service.pair_round(cup, "CUP"))
    desk.play(m)
    signoff.sign(cup, m.table_id, "NS", f"{m.ns}1")
    signoff.sign(cup, m.table_id, "EW", f"{m.ew}1")
    with pytest.raises(SignOffError, match="a player of pair"):
        signoff.dispute(cup, m.table_id, "NS", "somebody", "not our signature")
    assert signoff.dispute(cup, m.table_id, "NS", f"{m.ns}2", "partner signs").state == "disputed"
    with pytest.raises(SignOffError, match="already disputed|is disputed"):
        signoff.dispute(cup, m.table_id, "EW", f"{m.ew}1", "again")
    assert signoff.resolve(cup, m.table_id, "Ref Li", "NS re-signs").state == "pending"
    signoff.sign(cup, m.table_id, "NS", f"{m.ns}2")
    assert signoff.sign(cup, m.table_id, "EW", f"{m.ew}1").signed == {"NS": f"{m.ns}2", "EW": f"{m.ew}1"}


@pytest.mark.parametrize("state", ["pending", "disputed"])
def test_the_next_round_waits_for_every_result_to_be_final(cup, desk, state):
    drawn = service.pair_round(cup, "CUP")
    desk.play_round(drawn)
    m = _game(drawn)
    # reopen one table: disputed, or resolved and signed again by one side only
    signoff.dispute(cup, m.table_id, "EW", f"{m.ew}1", "deal 1 order")
    if state == "pending":
        signoff.resolve(cup, m.table_id, "Ref Li", "order confirmed")
        signoff.sign(cup, m.table_id, "NS", f"{m.ns}1")
    with pytest.raises(service.TournamentError, match=rf"round 2 waits for every result to be final \(S3\): "
                                                      rf"{m.table_id} {state}"):
        service.pair_round(cup, "CUP")
    assert {x.round for x in service.matches(cup, "CUP")} == {1}


def test_the_chief_referee_may_draw_anyway_and_it_is_kept_as_a_ruling(cup, desk):
    drawn = service.pair_round(cup, "CUP")
    desk.play_round(drawn, sign=False)
    with pytest.raises(NotAuthorized, match="only the chief referee"):
        service.pair_round(cup, "CUP", override_by="Ref Li", reason="time")
    with pytest.raises(service.TournamentError, match="needs the chief referee's reason"):
        service.pair_round(cup, "CUP", override_by="Chief Wang", reason=" ")
    assert {x.round for x in service.matches(cup, "CUP")} == {1}
    second = service.pair_round(cup, "CUP", override_by="Chief Wang", reason="hall closes at six")
    assert {x.round for x in second} == {2}
    (ruling,) = service.rulings(cup, "CUP")
    assert ruling["kind"] == "draw" and ruling["round"] == 2 and ruling["by"] == "Chief Wang"
    assert ruling["reason"].startswith("hall closes at six (not final: ") and "pending" in ruling["reason"]
    desk.play_round(second)
    with pytest.raises(service.TournamentError, match="round 3 waits"):  # round 1 is still unsigned
        service.pair_round(cup, "CUP")


def test_an_override_with_nothing_to_override_is_refused(cup, desk):
    desk.play_round(service.pair_round(cup, "CUP"))
    with pytest.raises(service.TournamentError, match="nothing to override"):
        service.pair_round(cup, "CUP", override_by="Chief Wang", reason="habit")
    assert service.rulings(cup, "CUP") == []


ACTIONS = st.lists(st.tuples(st.sampled_from(["sign", "dispute", "resolve"]), st.sampled_from(["NS", "EW"]),
                             st.sampled_from(["p1", "p2"]), st.sampled_from(["r1", "r2"])), max_size=25)


@settings(max_examples=200, deadline=None)
@given(ACTIONS)
def test_a_recorded_signer_changes_only_through_a_dispute_and_a_resolution(attempts):
    """Any sequence of attempts, each kept only if ``check_action`` allows it (as the store
    does), on a result that a correction may change (digest r1 -> r2)."""
    kept: list[dict] = []
    disputed = False
    for at, (action, side, who, digest) in enumerate(attempts):
        before = signoff.replay(kept, digest)
        try:
            signoff.check_action(action, None if action == "resolve" else side, before)
        except SignOffError:
            assert disputed != (action == "resolve") or (action == "sign" and side in before.signed)
            continue
        kept.append(dict(action=action, side=side, by=who, result_digest=digest, note="", at=float(at)))
        after = signoff.replay(kept, digest)
        if action == "sign":
            assert after.signed == {**before.signed, side: who} and side not in before.signed
        else:
            disputed = action == "dispute"
            assert after.signed == {}
        assert after.state == ("disputed" if disputed else "final" if len(after.signed) == 2 else "pending")
