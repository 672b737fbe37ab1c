"""The demo's tournament desk on a real store: the shipped pair list, round 1 drawn, each
table's simulated round (the bots' true events, as an operator would enter them) ending at
the event's deal limit, the pairs signing, round 2 drawn on Swiss, standings."""

import pytest

from web.app.agent.demodesk import PAIRS, Desk, round_minutes
from web.app.agent.simtable import plan_table
from web.app.agent.truth import session_results, truth_records
from web.store import get_store
from web.tournament import service
from web.tournament.pairlist import read_pairs


def play(store, desk, round_no, seed):
    """Each table of the round drawn, its whole simulated round appended."""
    for n, match in enumerate(desk.draw()):
        assert match.round == round_no and match.ew is not None
        plan = plan_table(seed + n, None, match.table_id, 0.03, brisk=0.25, teams=desk.teams(match),
                          ruleset=desk.ruleset)
        assert not [r for r in store.append_many(plan.truth) if isinstance(r, Exception)]
        assert session_results(store.records(match.table_id)) == session_results(truth_records(plan.truth,
                                                                                               plan.ruleset))


def test_rounds_of_the_shipped_pairs_end_at_the_deal_limit_are_signed_and_ranked(app):
    store = get_store(app)
    desk = Desk.open(store, tables=2, deals=2, rounds=2, seed=5)
    entries, _ = read_pairs(PAIRS)
    assert [p["pair"] for p in service.pairs(store, desk.event)] == sorted(e.pair for e in entries[:4])
    assert desk.ruleset.max_deals == 2 and desk.ruleset.session_minutes == round_minutes(2) == 50

    play(store, desk, 1, 5000)
    assert desk.waiting(1) == []
    for match in service.matches(store, desk.event, 1):
        (result,) = store.records(match.table_id, types=("session_result",))
        deals = len(store.records(match.table_id, types=("deal_end",)))
        assert result["reason"] in ("deals", "deciding_deal") and deals == (2 if result["reason"] == "deals" else 3)
        assert sum(result["score"].values()) == 28
        assert service.match_state(store, match) == "pending"
    assert desk.sign(1) == 4 and desk.sign(1) == 0  # each side once
    assert all(service.match_state(store, m) == "final" for m in service.matches(store, desk.event, 1))
    assert len(desk.results(1)) == 2 and "(final)" in desk.results(1)[0]
    assert len(desk.standings()) == 4

    play(store, desk, 2, 5100)  # drawn on Swiss: nobody meets the same pair twice
    met = [frozenset((m.ns, m.ew)) for m in service.matches(store, desk.event)]
    assert len(set(met)) == 4
    desk.sign(2)
    assert [s.rounds_played for s in service.standings_of(store, desk.event)] == [2, 2, 2, 2]


def test_the_desk_refuses_by_name_what_the_pair_list_cannot_seat(app, tmp_path):
    store = get_store(app)
    short = tmp_path / "pairs.csv"
    short.write_text("编号,队名,选手1,选手2\nA,甲队,张三,李四\nB,乙队,王五,赵六\n", encoding="utf-8")
    with pytest.raises(ValueError, match="2 pairs, 2 tables need 4"):
        Desk.open(store, tables=2, deals=1, rounds=1, seed=1, pairs=short)
    with pytest.raises(ValueError, match="at most 1 rounds"):
        Desk.open(store, tables=1, deals=1, rounds=2, seed=1, pairs=short)
