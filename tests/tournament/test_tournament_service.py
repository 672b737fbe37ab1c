"""Round clock (W1-W2), forfeits (K5/X4, X6) and draw preconditions."""

from __future__ import annotations

import pytest

from referee.rulesets import load_ruleset
from web.store import EventRejected
from web.store.authority import NotAuthorized
from web.tournament import service


@pytest.fixture
def cup(store):
    service.create(store, "CUP", "Cup", rounds=3, round_minutes=50, seed=1)
    for p in "ABCDE":
        service.add_pair(store, "CUP", p, f"pair {p}", f"{p}1", f"{p}2")
    return store


def test_round_clock_stops_new_deals_with_five_minutes_left(cup):
    service.pair_round(cup, "CUP")
    assert service.round_clock(cup, "CUP", 1, now=0)["started"] is False
    service.start_round(cup, "CUP", 1, at=1000.0)
    early = service.round_clock(cup, "CUP", 1, now=1000.0 + 44 * 60)
    late = service.round_clock(cup, "CUP", 1, now=1000.0 + 45 * 60)
    over = service.round_clock(cup, "CUP", 1, now=1000.0 + 51 * 60)
    assert early["new_deals"] and early["remaining_s"] == 360
    assert not late["new_deals"] and not late["over"]
    assert over["over"] and over["remaining_s"] == 0 and over["deal_limit"] == 8


def test_forfeit_needs_the_chief_and_counts_17_to_0(cup, desk):
    drawn = service.pair_round(cup, "CUP")
    game, other = (m for m in drawn if m.ew is not None)
    with pytest.raises(NotAuthorized, match="only the chief referee"):
        service.record_forfeit(cup, "CUP", 1, game.ew, by="Ref Li")
    service.record_forfeit(cup, "CUP", 1, game.ew, by="Chief Wang")
    assert service.standings_of(cup, "CUP", require_all=False)[0].rounds_played == 0  # round 1 is not over
    desk.play(other)
    rows = {s.pair: s for s in service.standings_of(cup, "CUP", require_all=False)}
    assert (rows[game.ns].score, rows[game.ew].score) == (17, 0)
    bye = next(m for m in drawn if m.ew is None)
    assert rows[bye.ns].match_points == 2


def test_next_round_waits_for_every_result_and_tables_check_the_draw(cup):
    drawn = service.pair_round(cup, "CUP")
    with pytest.raises(service.TournamentError, match="has no result yet"):
        service.pair_round(cup, "CUP")
    game = next(m for m in drawn if m.ew is not None)
    with pytest.raises(EventRejected, match="do not match the draw"):
        cup.append({"type": "session_start", "table": game.table_id, "t": 0, "teams": {"NS": "X", "EW": "Y"}})
    with pytest.raises(service.TournamentError, match="pairs are fixed"):
        service.add_pair(cup, "CUP", "F", "late", "F1", "F2")


def test_an_event_plays_its_ruleset_with_the_round_limits(store):
    with pytest.raises(ValueError, match="unknown ruleset 'blitz'"):
        service.create(store, "X", "X", ruleset="blitz")
    service.create(store, "R6", "Report six", ruleset="report6", deal_limit=3, round_minutes=40)
    rules = service.ruleset(store, "R6")
    assert (rules.name, rules.report_threshold, rules.max_deals, rules.session_minutes) == ("report6", 6, 3, 40.0)
    service.create(store, "STD", "Standard")  # the defaults are the ruleset's own W1 limits
    assert service.ruleset(store, "STD") == load_ruleset("competition")
