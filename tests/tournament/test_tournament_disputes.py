"""Disputes within the windows of seed 000 (S4, X7), marked in the standings; one forfeit
scoring whichever way a > 10 min late arrival is recorded."""

from __future__ import annotations

import pytest

from tests.store.support import TEST_SECRET, TallyDerivation
from tests.tournament.conftest import Desk
from web.store import Store
from web.tournament import service, signoff
from web.tournament.tables import TournamentTables

START = 1_769_233_200.0  # 2026-01-24 13:40 Asia/Shanghai, seed 001's first round


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def cup(db_url, clock):
    """An event of four pairs with round 1 played (not signed), on a store whose clock the test moves."""
    with Store(db_url, derivation=TallyDerivation(), secret_key=TEST_SECRET, table_rules=TournamentTables(),
               clock=clock) as store:
        store.add_official("Chief Wang", "chief")
        store.add_official("Ref Li", "referee")
        service.create(store, "CUP", "Cup", rounds=3, seed=1)
        for p in "ABCD":
            service.add_pair(store, "CUP", p, f"pair {p}", f"{p}1", f"{p}2")
        drawn = service.pair_round(store, "CUP")
        Desk(store).play_round(drawn, sign=False)
        store.drawn = drawn
        yield store, drawn[0]


def _sign_both(store, m):
    signoff.sign(store, m.table_id, "NS", f"{m.ns}1")
    signoff.sign(store, m.table_id, "EW", f"{m.ew}1")


def test_a_scoring_error_is_disputed_at_the_table_before_both_sides_sign(cup, clock):
    store, m = cup
    clock.now += 3 * 3600  # no time limit while the sheet is unsigned: the players are still at the table
    signoff.sign(store, m.table_id, "NS", f"{m.ns}1")
    status = signoff.dispute(store, m.table_id, "EW", f"{m.ew}2", "deal 3 was +2, not +3")
    assert status.state == "disputed"
    (d,) = signoff.history(store, m.table_id, 1)
    assert d["window"] == "S4 scoring error (before both sides signed)" and d["resolution"] is None


@pytest.mark.parametrize(("minutes", "window"), [
    (9, "S4 entry error (within 10 min after the round)"),
    (29, "X7 appeal (within 30 min after the round)")])
def test_after_signing_a_side_disputes_within_the_entry_and_appeal_windows(cup, clock, minutes, window):
    store, m = cup
    _sign_both(store, m)
    clock.now += minutes * 60
    signoff.dispute(store, m.table_id, "NS", f"{m.ns}2", "entry error")
    assert signoff.history(store, m.table_id, 1)[0]["window"] == window


def test_past_every_window_the_refusal_names_each_and_only_the_chief_reopens(cup, clock):
    store, m = cup
    for other in store.drawn:
        _sign_both(store, other)
    service.pair_round(store, "CUP")  # the next round is drawn meanwhile
    clock.now += 31 * 60
    with pytest.raises(signoff.SignOffError) as refused:
        signoff.dispute(store, m.table_id, "NS", f"{m.ns}2", "we meant +2")
    text = str(refused.value)
    assert "the round ended at 2026-01-24 13:40:00 Asia/Shanghai" in text
    assert "S4 scoring error: only before both sides signed" in text
    assert "S4 entry error: within 10 min after the round (until 13:50)" in text
    assert "X7 appeal: within 30 min after the round (until 14:10)" in text
    assert "S4 published-result error: within 20 min after the stage (until 14:00)" in text
    assert "later corrections need the chief referee (--override-by CHIEF --reason TEXT)" in text
    assert signoff.status(store, m.table_id).state == "final"
    with pytest.raises(signoff.SignOffError, match="not the chief referee"):
        signoff.dispute(store, m.table_id, "NS", f"{m.ns}2", "x", override_by="Ref Li", reason="asked")
    with pytest.raises(signoff.SignOffError, match="the chief referee's reason is needed"):
        signoff.dispute(store, m.table_id, "NS", f"{m.ns}2", "x", override_by="Chief Wang")
    signoff.dispute(store, m.table_id, "NS", f"{m.ns}2", "we meant +2", override_by="Chief Wang",
                    reason="the scorer's entry was wrong")
    (d,) = signoff.history(store, m.table_id, 1)
    assert d["window"] == "S4: later correction (chief referee)"
    assert d["note"] == ("we meant +2 (reopened past the windows by the chief referee: Chief Wang: "
                         "the scorer's entry was wrong)")


def test_a_published_result_is_disputed_within_20_min_after_the_stage(db_url, clock):
    with Store(db_url, derivation=TallyDerivation(), secret_key=TEST_SECRET, table_rules=TournamentTables(),
               clock=clock) as store:
        service.create(store, "CUP", "Cup", rounds=3, seed=1)
        for p in "ABCD":
            service.add_pair(store, "CUP", p, f"pair {p}", f"{p}1", f"{p}2")
        first, second = service.pair_round(store, "CUP")
        desk = Desk(store)
        desk.play(first)
        _sign_both(store, first)
        clock.now += 40 * 60  # the other table of the stage ends 40 minutes later
        desk.play(second)
        _sign_both(store, second)
        clock.now += 15 * 60  # 55 min after the first table's round: past its X7 window, not the stage's
        signoff.dispute(store, first.table_id, "NS", f"{first.ns}2", "the published sheet says +3")
        (d,) = signoff.history(store, first.table_id, 1)
        assert d["window"] == "S4 published-result error (within 20 min after the stage)"
        clock.now += 16 * 60  # 31 minutes after the stage and the second table's round: every window past
        with pytest.raises(signoff.SignOffError, match=r"within 20 min after the stage \(until 14:40\)"):
            signoff.dispute(store, second.table_id, "NS", f"{second.ns}2", "too late")


def test_the_chief_does_not_stand_in_for_a_side_within_its_window(cup, clock):
    store, m = cup
    _sign_both(store, m)
    with pytest.raises(signoff.SignOffError, match=r"still within the S4 entry error .* window"):
        signoff.dispute(store, m.table_id, "NS", f"{m.ns}2", "x", override_by="Chief Wang", reason="r")


def test_a_disputed_result_is_marked_in_the_standings_and_its_resolution_kept(cup, clock):
    store, m = cup
    _sign_both(store, m)
    clock.now += 60
    signoff.dispute(store, m.table_id, "EW", f"{m.ew}1", "deal 2 order")
    rows = {r.pair: r for r in service.standings_of(store, "CUP")}
    assert rows[m.ns].disputed == [1] and rows[m.ew].disputed == [1]
    assert all(r.disputed == [] for p, r in rows.items() if p not in (m.ns, m.ew))
    clock.now += 60
    signoff.resolve(store, m.table_id, "Ref Li", "the record stands")
    (d,) = signoff.history(store, m.table_id, 1)
    assert (d["side"], d["by"], d["note"], d["resolved_by"], d["resolution"]) == (
        "EW", f"{m.ew}1", "deal 2 order", "Ref Li", "the record stands")
    assert d["resolved_at"] - d["at"] == 60
    assert all(r.disputed == [] for r in service.standings_of(store, "CUP"))


def test_a_forfeit_for_lateness_counts_the_same_at_the_table_and_as_an_event_ruling(real_store, liumoer):
    """001 三: > 10 min late is a forfeit scored A:6 (12 and 4 levels climbed), either way."""
    for event_id in ("TABLE", "RULING"):
        service.create(real_store, event_id, "六摩尔杯", ruleset=liumoer, rounds=2, seed=3)
        for p in "AB":
            service.add_pair(real_store, event_id, p, f"pair {p}", f"{p}1", f"{p}2")
        (m,) = service.pair_round(real_store, event_id)
        if event_id == "TABLE":
            real_store.append_many([{**e, "table": m.table_id, "t": float(i)} for i, e in enumerate([
                {"type": "session_start", "teams": {"NS": m.ns, "EW": m.ew}},
                {"type": "arrival", "side": "EW", "minutes_late": 12},
                {"type": "penalty", "side": "EW", "level": "loss", "rule": "K5", "by": "Chief Wang"}], 1)])
        else:
            service.record_forfeit(real_store, event_id, 1, m.ew, by="Chief Wang", reason="12 min late (K5)")
        rows = {r.pair: r for r in service.standings_of(real_store, event_id)}
        got = [(r.match_points, r.score, r.level_difference, r.upgrades) for r in (rows[m.ns], rows[m.ew])]
        assert got == [(2, 22, 8, 12), (0, 6, -8, 4)], event_id


def test_times_are_printed_in_the_event_zone_a_setting(monkeypatch):
    from web.tournament import clock

    monkeypatch.delenv(clock.TIMEZONE_ENV, raising=False)
    assert clock.wall_time(START) == "2026-01-24 13:40:00 Asia/Shanghai"
    monkeypatch.setenv(clock.TIMEZONE_ENV, "Europe/Berlin")
    assert clock.wall_time(START) == "2026-01-24 06:40:00 Europe/Berlin" and clock.clock_time(START) == "06:40"
    monkeypatch.setenv(clock.TIMEZONE_ENV, "Mars/Olympus")
    with pytest.raises(clock.TimeZoneError, match="GUANDAN_TIMEZONE='Mars/Olympus': not a known time zone"):
        clock.wall_time(START)
