"""Standings (S2 chains) and a whole seeded tournament through the store."""

from __future__ import annotations

import random

import pytest

from referee.simulate import simulate_session
from web.store import Appended
from web.tournament import service, signoff
from web.tournament.standings import MatchResult, lots, standings


def independent_ranking(pairs, games, chain, seed):
    """Recompute the ranking from first principles: games are (round, a, b, sa, sb, d, ups_a, ups_b)
    with sa/sb in {2,1,0} match points; a forfeit/bye is marked by d=None and counts 17:0."""
    mp = {p: [0] * 10 for p in pairs}
    won, ldp, tld, ups, opps = ({p: 0 for p in pairs} for _ in range(5))
    opp_list = {p: [] for p in pairs}
    for rnd, a, b, sa, sb, d, ua, ub in games:
        for me, other, s, u in ((a, b, sa, ua), (b, a, sb, ub)):
            if me is None:
                continue
            mp[me][rnd] += s
            won[me] += s == 2
            if d is None:
                ldp[me] += 17 if s == 2 else 0
                tld[me] += 4 if s == 2 else -4
            else:
                ldp[me] += {2: 13 + min(d, 13), 1: 13, 0: 13 - min(d, 13)}[s]
                tld[me] += {2: d, 1: 0, 0: -d}[s]
            ups[me] += u
            if other is not None:
                opp_list[me].append(other)
    total = {p: sum(mp[p]) for p in pairs}
    last = max(g[0] for g in games)
    prog = {p: sum(sum(mp[p][1:r + 1]) for r in range(2, last + 1)) for p in pairs}
    opp_pts = {p: sum(total[o] for o in opp_list[p]) for p in pairs}
    lot = lots(list(pairs), seed)
    def key(p):
        if chain == "competition":
            return (-total[p], -prog[p], -won[p], -ldp[p], -ups[p], lot[p])
        return (-total[p], -opp_pts[p], -tld[p], -ups[p], lot[p])
    return sorted(pairs, key=key)


def test_progressive_score_leaves_out_round_one():
    rs = [MatchResult(1, "A", "B", winner="NS", level_difference=2),
          MatchResult(2, "A", "B", winner="EW", level_difference=1),
          MatchResult(3, "A", "B", winner=None)]
    rows = {r.pair: r for r in standings(["A", "B"], rs)}
    # A: 2,0,1 -> running 2,2,3 -> without round 1: 5; B: 0,2,1 -> 0,2,3 -> 5
    assert (rows["A"].progressive, rows["B"].progressive) == (5, 5)
    assert (rows["A"].match_points, rows["B"].match_points) == (3, 3)
    assert (rows["A"].ld_points, rows["B"].ld_points) == (15 + 12 + 13, 11 + 14 + 13)
    assert [r.pair for r in standings(["A", "B"], rs)] == ["A", "B"]  # rounds won tie, ld points decide


def test_forfeit_and_bye_count_17_to_0():
    rs = [MatchResult(1, "A", "B", forfeit="B"), MatchResult(1, "C", None)]
    rows = {r.pair: r for r in standings(["A", "B", "C"], rs)}
    assert (rows["A"].match_points, rows["A"].score, rows["A"].ld_points) == (2, 17, 17)
    assert (rows["B"].match_points, rows["B"].score, rows["B"].ld_points) == (0, 0, 0)
    assert (rows["C"].match_points, rows["C"].rounds_won) == (2, 1)


def test_the_two_chains_can_disagree():
    # C and D both win once, against equally strong opponents with equal level
    # differences: D won in round 1, so its progressive score is higher (competition
    # chain), while the 001 chain falls through to upgrades and the lot
    rs = [MatchResult(1, "A", "C", winner="NS", level_difference=9),
          MatchResult(1, "B", "D", winner="EW", level_difference=1),
          MatchResult(2, "A", "D", winner="NS", level_difference=9),
          MatchResult(2, "B", "C", winner="NS", level_difference=1),
          MatchResult(3, "B", "A", winner="NS", level_difference=1),
          MatchResult(3, "C", "D", winner="NS", level_difference=1)]
    comp = [r.pair for r in standings(list("ABCD"), rs, "competition")]
    var = [r.pair for r in standings(list("ABCD"), rs, "001")]
    assert comp[:3] == ["A", "B", "D"] and comp != var
    assert comp == independent_ranking(list("ABCD"), _games(rs), "competition", 0)
    assert var == independent_ranking(list("ABCD"), _games(rs), "001", 0)


def _games(rs):
    out = []
    for m in rs:
        if m.winner is None:
            sa = sb = 1
        else:
            sa, sb = (2, 0) if m.winner == "NS" else (0, 2)
        out.append((m.round, m.ns, m.ew, sa, sb, m.level_difference, *m.upgrades))
    return out


@pytest.mark.parametrize("chain", ["competition", "001"])
def test_whole_seeded_tournament_of_simulated_sessions(real_store, chain):
    """16 pairs, 4 Swiss rounds, every match a simulated session (2 deals) imported through
    the store and refereed by the engine, signed by both sides; one forfeit. The standings must equal a ranking
    computed here from the sessions' own results."""
    store, rng = real_store, random.Random(2024)
    ids = [f"P{i:02}" for i in range(16)]
    service.create(store, "OPEN", "Open pairs", chain=chain, rounds=4, deal_limit=2, seed=11)
    for p in ids:
        service.add_pair(store, "OPEN", p, f"pair {p}", f"{p}-a", f"{p}-b", rating=rng.randint(1000, 2000))
    rules = service.ruleset(store, "OPEN")
    assert rules.max_deals == 2
    games, met = [], set()
    for rnd in range(1, 5):
        drawn = service.pair_round(store, "OPEN")
        assert {m.round for m in drawn} == {rnd}
        sims = {}
        for m in drawn:
            assert frozenset((m.ns, m.ew)) not in met
            met.add(frozenset((m.ns, m.ew)))
            if rnd == 2 and m.table_no == 3:
                service.record_forfeit(store, "OPEN", rnd, m.ew, by="Chief Wang")
                games.append((rnd, m.ns, m.ew, 2, 0, None, 0, 0))
            else:
                sims[m] = simulate_session(rng.randrange(10**6), {"NS": m.ns, "EW": m.ew}, rules,
                                           table=m.table_id)
        outcomes = store.append_many([e for sim in sims.values() for e in sim.events])
        assert all(isinstance(o, Appended) for o in outcomes)
        for m, sim in sims.items():
            signoff.sign(store, m.table_id, "NS", f"{m.ns}-a")
            signoff.sign(store, m.table_id, "EW", f"{m.ew}-b")
            own = [r for r in sim.records if r["type"] in ("deal_end", "session_result")]
            assert [{k: v for k, v in r.items() if k != "table"} for r in store.results(m.table_id)] == own
            games.append(_game(rnd, m, own))
    assert len({g[5] for g in games}) > 2  # the sessions ended with several level differences
    want = independent_ranking(ids, games, chain, seed=11)
    assert [s.pair for s in service.standings_of(store, "OPEN")] == want
    other = "001" if chain == "competition" else "competition"
    assert [s.pair for s in standings(ids, service.match_results(store, "OPEN"), other, 11)] == \
        independent_ranking(ids, games, other, seed=11)
    with pytest.raises(service.TournamentError, match="all 4 rounds are drawn"):
        service.pair_round(store, "OPEN")


def _game(rnd, m, records):
    """A match as ``independent_ranking`` takes it, read off the session's own records."""
    (result,) = [r for r in records if r["type"] == "session_result"]
    ups = {"NS": 0, "EW": 0}
    for r in records:
        if r["type"] == "deal_end":
            for side, k in r["upgrade"].items():
                ups[side] += k
    points = {"NS": 2, "EW": 0} if result["winner"] == "NS" else \
        {"NS": 0, "EW": 2} if result["winner"] == "EW" else {"NS": 1, "EW": 1}
    return (rnd, m.ns, m.ew, points["NS"], points["EW"], result["level_difference"], ups["NS"], ups["EW"])
