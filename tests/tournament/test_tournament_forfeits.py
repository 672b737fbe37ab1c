"""Forfeits and byes by the tournament's own rules; standings count only rounds played."""

from __future__ import annotations

import pytest

from web.tournament import service, signoff
from web.tournament.rules import COMPETITION, LIUMOER_2026, TournamentRules, rules_for
from web.tournament.standings import MatchResult, standings


def _cup(store, ruleset="competition", pairs="ABCDE"):
    service.create(store, "CUP", "Cup", ruleset=ruleset, rounds=3, seed=1)
    for p in pairs:
        service.add_pair(store, "CUP", p, f"pair {p}", f"{p}1", f"{p}2")


def _signed(store, desk):
    _cup(store)
    drawn = service.pair_round(store, "CUP")
    desk.play_round(drawn)
    return next(m for m in drawn if m.ew is not None)


def test_a_forfeit_over_a_signed_result_needs_the_chief_and_a_reason(store, desk):
    m = _signed(store, desk)
    with pytest.raises(service.TournamentError,
                       match=rf"table 1 \({m.table_id}\) has a recorded result \(final, signed EW by {m.ew}1, "
                             rf"NS by {m.ns}1\); a forfeit over it needs the chief referee's reason"):
        service.record_forfeit(store, "CUP", 1, m.ns, by="Chief Wang")
    assert service.matches(store, "CUP", 1)[0].forfeit is None
    service.record_forfeit(store, "CUP", 1, m.ns, by="Chief Wang", reason="NS left before deal 8 (K5)")
    (ruling,) = service.rulings(store, "CUP")
    assert (ruling["kind"], ruling["pair"], ruling["by"], ruling["reason"]) == (
        "forfeit", m.ns, "Chief Wang", "NS left before deal 8 (K5)")
    rows = {s.pair: s for s in service.standings_of(store, "CUP")}
    assert (rows[m.ns].score, rows[m.ew].score) == (0, 17)  # the ruling replaces the signed 15:13


def test_a_forfeit_over_a_disputed_result_needs_a_reason_too(store, desk):
    m = _signed(store, desk)
    signoff.dispute(store, m.table_id, "EW", f"{m.ew}2", "NS arrived 12 min late")
    with pytest.raises(service.TournamentError, match=r"\(disputed\); a forfeit over it needs"):
        service.record_forfeit(store, "CUP", 1, m.ns, by="Chief Wang")
    service.record_forfeit(store, "CUP", 1, m.ns, by="Chief Wang", reason="late arrival confirmed")
    assert service.match_state(store, service.matches(store, "CUP", 1)[0]) == "forfeit"


def test_a_pair_forfeits_once_and_the_chief_may_forfeit_the_other_pair_instead(store, desk):
    m = _signed(store, desk)
    service.record_forfeit(store, "CUP", 1, m.ew, by="Chief Wang", reason="EW absent")
    with pytest.raises(service.TournamentError,
                       match=rf"{m.ew} already forfeited \(ruled by Chief Wang at .* Asia/Shanghai: EW absent\); "
                             "to undo it: event forfeit --withdraw"):
        service.record_forfeit(store, "CUP", 1, m.ew, by="Chief Wang", reason="again")
    with pytest.raises(service.TournamentError, match=rf"{m.ew} forfeited; forfeiting {m.ns} instead needs"):
        service.record_forfeit(store, "CUP", 1, m.ns, by="Chief Wang")
    with pytest.raises(service.NotAuthorized):
        service.record_forfeit(store, "CUP", 1, m.ns, by="Ref Li", reason="wrong pair")
    service.record_forfeit(store, "CUP", 1, m.ns, by="Chief Wang", reason="it was NS who was absent")
    assert service.matches(store, "CUP", 1)[0].forfeit == m.ns
    assert [(r["kind"], r["pair"], r["reason"]) for r in service.rulings(store, "CUP")] == [
        ("forfeit", m.ew, "EW absent"),
        ("forfeit_withdrawn", m.ew, f"{m.ns} forfeits instead: it was NS who was absent"),
        ("forfeit", m.ns, "it was NS who was absent")]
    rows = {s.pair: s for s in service.standings_of(store, "CUP")}
    assert (rows[m.ns].score, rows[m.ew].score) == (0, 17)


def test_the_chief_withdraws_a_forfeit_given_by_mistake_and_the_table_result_counts_again(store, desk):
    m = _signed(store, desk)
    before = {s.pair: s.score for s in service.standings_of(store, "CUP")}
    service.record_forfeit(store, "CUP", 1, m.ns, by="Chief Wang", reason="thought NS absent")
    assert {s.pair: s.score for s in service.standings_of(store, "CUP")}[m.ns] == 0
    with pytest.raises(service.NotAuthorized):
        service.withdraw_forfeit(store, "CUP", 1, m.ns, by="Ref Li", reason="mistake")
    with pytest.raises(service.TournamentError, match="withdrawing the forfeit of .* needs the chief referee's reason"):
        service.withdraw_forfeit(store, "CUP", 1, m.ns, by="Chief Wang", reason=" ")
    with pytest.raises(service.TournamentError, match=rf"{m.ew} has no forfeit to withdraw \({m.ns} forfeited\)"):
        service.withdraw_forfeit(store, "CUP", 1, m.ew, by="Chief Wang", reason="mistake")
    service.withdraw_forfeit(store, "CUP", 1, m.ns, by="Chief Wang", reason="NS was at table 3 by mistake")
    assert service.matches(store, "CUP", 1)[0].forfeit is None
    assert {s.pair: s.score for s in service.standings_of(store, "CUP")} == before
    assert service.rulings(store, "CUP")[-1] | {"at": 0} == dict(
        round=1, table_no=1, kind="forfeit_withdrawn", pair=m.ns, by="Chief Wang",
        reason="NS was at table 3 by mistake", at=0)
    with pytest.raises(service.TournamentError, match="no forfeit recorded"):
        service.withdraw_forfeit(store, "CUP", 1, m.ns, by="Chief Wang", reason="again")


def test_forfeit_scores_by_the_tournament_ruleset(store, desk, liumoer):
    _cup(store, ruleset=liumoer, pairs="ABCD")
    assert service.event_info(store, "CUP")["chain"] == "001"  # seed 001 art. 5
    drawn = service.pair_round(store, "CUP")
    service.record_forfeit(store, "CUP", 1, drawn[0].ew, by="Chief Wang", reason="more than 10 min late (art. 3)")
    desk.play_round(drawn[1:])
    rows = {s.pair: s for s in service.standings_of(store, "CUP")}
    win, lose = rows[drawn[0].ns], rows[drawn[0].ew]
    # A:6 -> levels 12 and 4 (2 = 0), difference 8, 28-point score 22:6
    assert (win.match_points, win.score, win.level_difference, win.ld_points, win.upgrades) == (2, 22, 8, 21, 12)
    assert (lose.match_points, lose.score, lose.level_difference, lose.ld_points, lose.upgrades) == (0, 6, -8, 5, 4)


def test_the_competition_forfeit_stays_x4():
    assert rules_for("competition") is COMPETITION and rules_for("report6") is COMPETITION
    assert COMPETITION.forfeit.score == (17, 0) and COMPETITION.forfeit.level_difference == 4
    assert rules_for("liumoer-2026") is LIUMOER_2026
    assert (LIUMOER_2026.forfeit.score, LIUMOER_2026.forfeit.level_difference) == ((22, 6), 8)


@pytest.mark.parametrize("rules, bye", [
    (COMPETITION, dict(match_points=2, rounds_won=1, score=17, ld_points=17, level_difference=4, upgrades=0)),
    (LIUMOER_2026, dict(match_points=2, rounds_won=1, score=22, ld_points=21, level_difference=8, upgrades=12)),
    (TournamentRules("x", "competition", COMPETITION.forfeit, bye="draw"),
     dict(match_points=1, rounds_won=0, score=14, ld_points=13, level_difference=0, upgrades=0)),
])
def test_a_bye_counts_in_every_tie_break_as_the_one_setting_says(rules, bye):
    # C has the bye in round 1, then loses to A by one level (13:15, 3 upgrades)
    rs = [MatchResult(1, "A", "B", winner="NS", level_difference=3, score=(17, 11), upgrades=(5, 2)),
          MatchResult(1, "C", None),
          MatchResult(2, "C", "A", winner="EW", level_difference=1, score=(13, 15), upgrades=(3, 4)),
          MatchResult(2, "B", None)]
    c = {r.pair: r for r in standings(list("ABC"), rs, rules=rules)}["C"]
    assert {k: getattr(c, k) for k in bye} == {
        "match_points": bye["match_points"], "rounds_won": bye["rounds_won"], "score": bye["score"] + 13,
        "ld_points": bye["ld_points"] + 12, "level_difference": bye["level_difference"] - 1,
        "upgrades": bye["upgrades"] + 3}
    assert c.progressive == bye["match_points"]  # the running total after round 2 (round 1 left out)
    assert c.opponents == ["A"]  # a bye has no opponent: it adds nothing to the opponents' total
    assert c.opponents_points == {r.pair: r for r in standings(list("ABC"), rs, rules=rules)}["A"].match_points


def test_standings_count_only_rounds_that_were_played(store, desk):
    _cup(store)  # five pairs: a bye every round
    first = service.pair_round(store, "CUP")
    desk.play_round(first)
    after_one = {s.pair: s.match_points for s in service.standings_of(store, "CUP")}
    second = service.pair_round(store, "CUP")
    bye = next(m.ns for m in second if m.ew is None)
    now = {s.pair: s for s in service.standings_of(store, "CUP", require_all=False)}
    assert {p: s.match_points for p, s in now.items()} == after_one  # round 2's bye waits for round 2
    assert {s.rounds_played for s in now.values()} == {1}
    desk.play(next(m for m in second if m.ew is not None))
    assert service.standings_of(store, "CUP", require_all=False)[0].rounds_played == 1  # round 2 half played
    desk.play_round([m for m in second if m.ew is not None][1:])
    rows = {s.pair: s for s in service.standings_of(store, "CUP")}
    assert rows[bye].match_points == after_one[bye] + 2
    assert {s.rounds_played for s in rows.values()} == {2}
    assert {s.pair: s.match_points for s in service.standings_of(store, "CUP", after_round=1)} == after_one
