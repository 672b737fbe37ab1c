"""The referee state machine, rule by rule (RULES.md IDs in the test names)."""

import pytest

from referee.cards import parse_cards
from referee.engine import Referee, replay
from referee.events import EventError
from referee.rulesets import RulesetError, load_ruleset, ruleset_from_toml
from referee.scoring import deal_outcome, table_score

from .conftest import Script


def _full_hands(**fixed: str) -> dict[str, list[str]]:
    """27-card hands: the given cards plus fillers so each seat holds 27 and the deck is 108."""
    from referee.cards import DOUBLE_DECK, card_name, parse_cards

    pool = list(DOUBLE_DECK)
    hands = {}
    for seat, text in fixed.items():
        hands[seat] = parse_cards(text)
        for card in hands[seat]:
            pool.remove(card)
    for seat in "SENW":
        hand = hands.setdefault(seat, [])
        while len(hand) < 27:
            hand.append(pool.pop())
    return {seat: [card_name(c) for c in cards] for seat, cards in hands.items()}


# ---------------------------------------------------------------- P1-P3, P7: play order
def test_p1_p2_turns_rounds_and_leads():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["3S"])
    s("play", seat="E", cards=["5S"])
    s("pass", seat="N")
    s("pass", seat="W")
    s("pass", seat="S")
    assert s.deal.turn == "E" and s.deal.table is None and s.deal.round == 2
    s("play", seat="E", cards=["7S", "7D"])
    assert s.deal.turn == "N" and s.flags() == []


def test_p1_the_leader_cannot_pass():
    s = Script()
    s("deal_start", deal=1, first_leader="W")
    s("pass", seat="W")
    assert s.flags() == [("P1", "W")] and s.deal.turn == "W"


def test_p3_jiefeng_partner_leads_after_a_player_goes_out_unbeaten_and_p7_order():
    s = Script()
    s.quick_deal()
    s("play", seat="S", cards=["AS"])
    assert s.deal.out == ["S"] and s.deal.turn == "E"
    s("play", seat="E", cards=["2S"])  # level card beats A
    s("pass", seat="N")
    s("pass", seat="W")
    assert s.deal.turn == "W"  # E went out unbeaten: partner W leads
    s("play", seat="W", cards=["3S"])
    end = s.of_type("deal_end")
    assert end and end[0]["order"] == ["S", "E", "W", "N"]
    assert end[0]["upgrade"] == {"NS": 1} and end[0]["levels"] == {"NS": "3", "EW": "2"}


def test_p7_deal_ends_when_both_of_a_side_are_out_double_down():
    s = Script()
    s.play_double_down_deal()
    end = s.of_type("deal_end")[0]
    assert end["order"][:2] == ["S", "N"] and end["double_down"] and end["upgrade"] == {"NS": 3}


# ---------------------------------------------------------------- P4, P5
def test_p4_out_of_turn_play_is_a_violation_and_stands_while_the_table_plays_on():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="N", cards=["9S"])
    flag = s.of_type("flag")[0]
    assert (flag["rule"], flag["severity"], flag["seat"]) == ("P4", "violation", "N")
    assert s.deal.counts["N"] == 26 and s.deal.turn == "W"  # the referee follows the table
    s("play", seat="W", cards=["TS"])  # W, due after N, plays on: N's play stood
    assert s.of_type("flag") == [flag] and s.deal.counts["N"] == 26 and s.deal.table_seat == "W"


def test_p4_out_of_turn_play_goes_back_when_the_seat_due_before_acts():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="N", cards=["9S"])
    s("play", seat="S", cards=["3S"])  # S, who was due, leads: N's cards went back
    assert [r["rule"] for r in s.of_type("flag")] == ["P4"]
    assert s.deal.counts["N"] == 27 and s.deal.table_seat == "S" and s.deal.turn == "E"


def test_p4_out_of_turn_play_goes_back_when_seen_taken_back():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="N", cards=["9S"])
    assert s("take_back", seat="N") == []
    assert s.deal.counts["N"] == 27 and s.deal.turn == "S" and s.deal.table is None


def test_cards_swept_after_a_session_or_its_deal_ended_are_no_error():
    from referee.simulate import simulate_session

    events = simulate_session(seed=3).events
    s = Script()
    last_deal_play = max(i for i, e in enumerate(events) if e["type"] == "play" and i < next(
        j for j, e in enumerate(events) if j > 1 and e["type"] == "deal_start"))
    for event in events[1:last_deal_play + 1]:
        s.feed(event)
    assert s.deal.phase == "over"
    assert s.feed({"type": "take_back", "seat": events[last_deal_play]["seat"], "t": events[last_deal_play]["t"] + 1}) == []
    for event in events[last_deal_play + 1:]:
        s.feed(event)
    assert s.referee.state.over
    assert s.feed({"type": "take_back", "seat": "N", "t": events[-1]["t"]}) == []
    assert s.of_type("error") == []


def test_p4_out_of_turn_pass_is_a_warning():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["9S"])
    s("pass", seat="W")
    assert [(r["rule"], r["severity"]) for r in s.of_type("flag")] == [("P4", "warning")]


@pytest.mark.parametrize("cards,why", [(["7S", "8D"], "not a combination"), (["4S"], "does not beat")])
def test_p5_illegal_play_goes_back_when_the_same_seat_plays_again(cards, why):
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["9S"])
    s("play", seat="E", cards=cards)
    flag = s.of_type("flag")[0]
    assert flag["rule"] == "P5" and why in flag["message"]
    assert s.deal.turn == "N" and s.deal.counts["E"] == 27 - len(cards)  # stands while the table plays on
    s("play", seat="E", cards=["TS"])  # E lays other cards: the first ones went back
    assert s.of_type("flag") == [flag] and s.deal.counts["E"] == 26 and s.deal.turn == "N"


@pytest.mark.parametrize("cards", [["7S", "8D"], ["4S"]])
def test_p5_illegal_play_stands_when_the_next_seat_plays_on(cards):
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["9S"])
    s("play", seat="E", cards=cards)
    s("pass", seat="N")
    s("pass", seat="W")
    s("pass", seat="S")  # the round ends on E's cards: E leads, nobody is out of turn
    assert [r["rule"] for r in s.of_type("flag")] == ["P5"]
    assert s.deal.turn == "E" and s.deal.table is None and s.deal.counts["E"] == 27 - len(cards)


def test_p5_with_known_hands_a_card_not_held_is_rejected():
    s = Script()
    s("deal_start", deal=1, first_leader="S", hands=_full_hands(S="3S 4S", E="5S 6S"))
    out = s("play", seat="S", cards=["5S"])
    assert out[0]["type"] == "error" and "does not hold 5S" in out[0]["message"]


# ---------------------------------------------------------------- R1, R2
def test_r1_missing_report_and_r2_repeat_and_ask():
    s = Script(load_ruleset("report6"))
    s.quick_deal(hands={"S": ["3S", "4S", "5S", "6S", "8S", "9S", "TS"], "E": ["2S"] * 1 + ["KD"], "N": ["KS"], "W": ["QS"]})
    s("play", seat="S", cards=["3S"])  # S now holds 6 <= 6: must report
    s("pass", seat="E")
    assert s.flags() == [("R1", "S")]
    s("report", seat="S", count=6)
    s("report", seat="S", count=6)
    s("ask_count", seat="E", of="S")
    assert s.flags() == [("R1", "S"), ("R2", "S"), ("R2", "E")]


def test_r1_timely_report_raises_nothing_and_a_wrong_count_is_flagged():
    s = Script()
    s.quick_deal(hands={"S": ["3S"] + ["4S"] * 2 + ["6D"] * 2 + ["8C"] * 2 + ["9S"] * 2 + ["JD"] * 2, "E": ["KD"], "N": ["KS"], "W": ["QS"]})
    s("play", seat="S", cards=["3S"])
    s("report", seat="S", count=10)
    s("play", seat="E", cards=["KD"])
    assert s.flags() == []
    s2 = Script()
    s2.quick_deal(hands={"S": ["3S"] + ["4S"] * 10, "E": ["KD"], "N": ["KS"], "W": ["QS"]})
    s2("play", seat="S", cards=["3S"])
    s2("report", seat="S", count=9)
    assert s2.flags() == [("R1", "S")]


# ---------------------------------------------------------------- K1-K4, replay without ticks
def _slow_follow(with_ticks: bool) -> list[tuple]:
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["3S"])
    if with_ticks:
        for _ in range(35):
            s("tick")
        s("play", seat="E", cards=["5S"], dt=1)
    else:
        s("play", seat="E", cards=["5S"], dt=36)
    return [(r["rule"], r["seat"], r["severity"], r["due"]) for r in s.of_type("flag")]


def test_k3_k4_slow_follow_flag_is_the_same_with_or_without_ticks():
    live, replayed = _slow_follow(True), _slow_follow(False)
    assert live == replayed == [("K3", "E", "warning", 32.0)]


def test_k3_variant_15_seconds():
    s = Script(load_ruleset("fast15"))
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["3S"])
    s("play", seat="E", cards=["5S"], dt=27)
    assert s.flags() == [("K3", "E")]


def test_k2_first_lead_has_40_seconds():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["3S"], dt=45)
    assert s.flags() == []
    s2 = Script()
    s2("deal_start", deal=1, first_leader="S")
    s2("play", seat="S", cards=["3S"], dt=51)
    assert s2.flags() == [("K2", "S")]


@pytest.mark.parametrize("minutes,severity", [(3, "warning"), (8, "foul"), (12, "loss")])
def test_k5_late_arrival(minutes, severity):
    s = Script()
    s("arrival", side="EW", minutes_late=minutes)
    flag = s.of_type("flag")[0]
    assert (flag["rule"], flag["severity"], flag["side"]) == ("K5", severity, "EW")


# ---------------------------------------------------------------- T1-T6
def _deal_two(hands2, first_hands=None) -> Script:
    """Deal 1 ends S, E, W, N (NS up to 3); deal 2 starts with ``hands2``."""
    s = Script()
    s.play_quick_deal()
    s("deal_start", deal=2, hands=hands2)
    return s


def test_t1_t2_t5_tribute_return_and_first_lead():
    s = _deal_two(_full_hands(N="BJ AS", S="4D KS"))
    assert s.deal.phase == "tribute" and s.deal.payers == ("N",) and s.deal.level == 1  # playing 3
    s("tribute", seat="N", to="S", card="BJ")
    s("return", seat="S", to="N", card="4D")
    assert s.deal.phase == "play" and s.deal.turn == "N"  # who paid the 上游 leads
    assert s.flags() == []


def test_t1_not_the_highest_card_and_heart_level_card_are_refused():
    s = _deal_two(_full_hands(N="BJ AS 3H"))
    s("tribute", seat="N", to="S", card="AS")
    s("tribute", seat="N", to="S", card="3H")
    assert s.flags() == [("T6", "N"), ("T6", "N")] and s.deal.phase == "tribute"


def test_t2_return_must_be_2_to_10_non_level():
    s = _deal_two(_full_hands(N="BJ", S="KS 4D 3D"))
    s("tribute", seat="N", to="S", card="BJ")
    s("return", seat="S", to="N", card="KS")
    s("return", seat="S", to="N", card="3D")  # 3 is the level
    assert s.flags() == [("T6", "S"), ("T6", "S")]
    s("return", seat="S", to="N", card="4D")
    assert s.deal.phase == "play"


def test_t4_anti_tribute_when_the_payer_holds_both_big_jokers():
    s = _deal_two(_full_hands(N="BJ BJ"))
    assert s.deal.phase == "play" and s.deal.turn == "S"
    assert s.of_type("review")[0]["reason"] == "anti_tribute"


def test_t3_double_down_higher_tribute_to_the_winner():
    s = Script()
    s.play_double_down_deal()  # NS at 5
    s("deal_start", deal=2, hands=_full_hands(E="BJ", W="SJ", S="2D", N="2C"))
    assert set(s.deal.payers) == {"E", "W"}
    s("tribute", seat="W", to="N", card="SJ")
    s("tribute", seat="E", to="S", card="BJ")
    s("return", seat="S", to="E", card="2D")
    s("return", seat="N", to="W", card="2C")
    assert s.flags() == [] and s.deal.turn == "E"


def test_t3_equal_tributes_go_to_the_payers_left():
    s = Script()
    s.play_double_down_deal()
    s("deal_start", deal=2, hands=_full_hands(E="BJ", W="BJ"))
    assert s.deal.phase == "play"  # both losers together hold both big jokers: anti-tribute
    s2 = Script()
    s2.play_double_down_deal()
    s2("deal_start", deal=2, hands=_full_hands(E="SJ", W="SJ"))
    s2("tribute", seat="E", to="S", card="SJ")  # E's 上家 is S
    s2("tribute", seat="W", to="S", card="SJ")  # wrong: W's 上家 is N
    assert s2.flags() == [("T3", "W")]


def test_k1_tribute_within_20_seconds():
    s = _deal_two(_full_hands(N="BJ"))
    s("tribute", seat="N", to="S", card="BJ", dt=31)
    assert s.flags() == [("K1", "N")]


# ---------------------------------------------------------------- X1-X5
def test_x1_x2_penalties_escalate_and_a_violation_forbids_the_next_play():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["3S"])
    s("penalty", side="EW", level="warning", rule="P4", by="referee")
    s("penalty", side="EW", level="warning", rule="P4", by="referee", seat="E")
    ruling = s.of_type("ruling")[-1]
    assert ruling["level"] == "violation" and ruling["escalated_by"] == ["2nd warning"]
    assert s.deal.turn == "N"  # E's play was forbidden: an automatic pass


def test_x3_foul_ends_the_deal_double_down_and_no_tribute_next():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["3S"])
    s("penalty", side="NS", level="foul", rule="X3", seat="S", by="chief")
    end = s.of_type("deal_end")[0]
    assert end["order"][:2] in (["E", "W"], ["W", "E"]) and end["upgrade"] == {"EW": 3} and end["foul"] == "NS"
    s("deal_start", deal=2, hands=_full_hands())
    assert s.deal.phase == "play" and s.deal.turn == "E"  # violator's 下家 leads


def test_k5_x3_a_foul_between_deals_loses_the_coming_deal():
    s = Script()
    s("arrival", side="EW", minutes_late=7)
    s("penalty", side="EW", level="foul", rule="K5", by="chief")
    end = s.of_type("deal_end")[0]
    assert end["deal"] == 1 and end["foul"] == "EW" and end["upgrade"] == {"NS": 3}
    assert end["levels"] == {"NS": "5", "EW": "2"}
    s("deal_start", deal=2, first_leader="S")
    assert s.deal.number == 2 and s.deal.phase == "play" and s.deal.level == 3  # NS play 5, no tribute
    assert s.deal.turn == "S"  # no violating seat was named: the announced leader leads


def test_x4_second_foul_loses_the_session_4_levels():
    s = Script()
    s("penalty", side="NS", level="foul", rule="X3")
    s("penalty", side="NS", level="foul", rule="X3")
    result = s.of_type("session_result")[0]
    assert result["winner"] == "EW" and result["level_difference"] == 4 and result["score"] == {"EW": 18, "NS": 10}


def test_x4_forfeit_for_lateness_is_17_0():
    s = Script()
    s("penalty", side="EW", level="loss", rule="K5")
    assert s.of_type("session_result")[0]["score"] == {"NS": 17, "EW": 0}


def test_x5_every_flag_shows_its_claim_window():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="E", cards=["3S"])
    assert s.of_type("flag")[0]["claim_until"] == {"deal": 1, "round": 1}


# ---------------------------------------------------------------- U1-U3, W1-W2, S1
@pytest.mark.parametrize("order,up", [(("S", "N", "E", "W"), 3), (("S", "E", "N", "W"), 2), (("S", "E", "W", "N"), 1)])
def test_u1_upgrades(order, up):
    out = deal_outcome(order, {"NS": 0, "EW": 0}, None, {"NS": 0, "EW": 0}, False, 0)
    assert out.levels == {"NS": up, "EW": 0} and out.winner == "NS"


def test_u2_no_upgrade_skips_past_a():
    out = deal_outcome(("E", "W", "S", "N"), {"NS": 0, "EW": 11}, "NS", {}, False, 0)
    assert out.levels["EW"] == 12 and not out.passed_a


def test_u3_passing_a_needs_the_partner_not_last_or_second_in_the_variant():
    assert deal_outcome(("S", "E", "N", "W"), {"NS": 12, "EW": 3}, "NS", {}, False, 0).passed_a
    assert not deal_outcome(("S", "E", "W", "N"), {"NS": 12, "EW": 3}, "NS", {}, False, 0).passed_a
    assert not deal_outcome(("S", "E", "N", "W"), {"NS": 12, "EW": 3}, "NS", {}, True, 0).passed_a
    assert not deal_outcome(("S", "N", "E", "W"), {"NS": 12, "EW": 3}, "EW", {}, False, 0).passed_a  # not their A deal


def test_u3_variant_three_failed_tries_at_a_drop_to_2():
    failures = {"NS": 2, "EW": 0}
    out = deal_outcome(("E", "S", "W", "N"), {"NS": 12, "EW": 3}, "NS", failures, False, 3)
    assert out.levels["NS"] == 0 and out.a_failures["NS"] == 0


def test_s1_table_score():
    assert table_score({"NS": 13, "EW": 3}, "NS") == (10, {"NS": 24, "EW": 4})
    assert table_score({"NS": 5, "EW": 5}, None) == (0, {"NS": 14, "EW": 14})


def test_w1_w2_equal_levels_at_session_end_one_more_deal_decides():
    s = Script()
    s("session_end")
    assert s.of_type("review")[0]["reason"] == "deciding_deal" and not s.referee.state.over
    s.play_quick_deal()
    result = s.of_type("session_result")[0]
    assert result["winner"] == "NS" and result["reason"] == "deciding_deal"


def test_w2_session_end_waits_for_the_deal_in_progress():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    out = s("session_end")
    assert out[0]["type"] == "error" and "still in progress" in out[0]["message"]


# ---------------------------------------------------------------- errors, corrections, determinism
@pytest.mark.parametrize(
    "event,words",
    [
        ({"type": "play", "t": 5, "seat": "X", "cards": ["3S"]}, "not a seat"),
        ({"type": "play", "t": 5, "seat": "S", "cards": ["3Z"]}, "not a card: '3Z'"),
        ({"type": "pass", "t": 0.5, "seat": "S"}, "time goes backwards"),
        ({"type": "play", "t": 5, "seat": "S"}, "needs field 'cards'"),
        ({"type": "teleport", "t": 5}, "unknown event type"),
        ([1, 2], "JSON object"),
    ],
)
def test_malformed_events_are_errors_and_change_nothing(event, words):
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    before = s.referee.snapshot()
    with pytest.raises(EventError, match=words):
        s.referee.feed(event)
    assert s.referee.snapshot() == before


def test_play_after_the_deal_ended_is_an_error():
    s = Script()
    s.play_quick_deal()
    out = s("play", seat="N", cards=["KS"])
    assert out[0]["type"] == "error" and "no deal in progress" in out[0]["message"]


def test_correction_replaces_a_misread_event_and_rederives():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["9S"], id="p1")
    s("play", seat="E", cards=["5S"], id="p2")  # misread: really 5S was TS
    assert s.flags() == [("P5", "E")]
    out = s("correction", of="p2", event={"type": "play", "seat": "E", "cards": ["TS"]}, by="referee")
    assert [r["type"] for r in out] == ["withdrawn", "rederived"]
    assert [r for r in s.referee.records() if r["type"] == "flag"] == []
    assert s.deal.turn == "N" and s.deal.counts["E"] == 26


def test_resending_an_event_with_the_same_id_is_harmless():
    s = Script()
    s("deal_start", deal=1, first_leader="S", id="d1")
    assert s("deal_start", dt=0, deal=1, first_leader="S", id="d1") == [] and len(s.referee.log) == 2


def test_snapshot_restore_continues_identically():
    from referee.simulate import simulate_session

    events = simulate_session(3, breaches=0.02).events
    full = replay(events)
    ref = Referee()
    head = [r for e in events[:200] for r in ref.feed(e)]
    again = Referee.restore(ref.snapshot())
    tail = [r for e in events[200:] for r in again.feed(e)]
    assert head + tail == full


def test_rulesets_from_toml_reject_unknown_keys():
    rules = ruleset_from_toml('base = "report6"\nfollow_seconds = 15\n', name="club")
    assert rules.report_threshold == 6 and rules.follow_seconds == 15.0 and rules.name == "club"
    with pytest.raises(RulesetError, match="unknown ruleset key 'folow_seconds'"):
        ruleset_from_toml("folow_seconds = 15")
    with pytest.raises(RulesetError, match="must be int"):
        ruleset_from_toml('report_threshold = "six"')
    with pytest.raises(RulesetError, match="unknown ruleset"):
        load_ruleset("chess")


def test_t1_unknown_hands_say_what_could_not_be_checked():
    s = Script()
    s.play_quick_deal()
    s("deal_start", deal=2)
    s("tribute", seat="N", to="S", card="3H")  # heart level card: checkable without hands
    s("tribute", seat="N", to="S", card="KD")
    assert s.flags() == [("T6", "N")]
    assert s.of_type("review")[-1]["reason"] == "unchecked"
    s("return", seat="S", to="N", card="QS")  # not 2-10: flagged, and the exception is named as unchecked
    assert s.flags()[-1] == ("T6", "S") and "hands unknown" in s.of_type("flag")[-1]["message"]


def test_session_start_names_its_ruleset_and_an_unknown_one_is_an_error():
    referee = Referee()
    with pytest.raises(EventError, match="unknown ruleset 'bridge'"):
        referee.feed({"type": "session_start", "t": 0, "ruleset": "bridge"})
    assert referee.state is None
    referee.feed({"type": "session_start", "t": 0, "ruleset": "report6"})
    assert referee.state.ruleset.report_threshold == 6


# ---------------------------------------------------------------- D3: physically impossible plays
def test_d3_a_play_with_more_copies_than_two_decks_is_flagged_not_judged_as_a_bomb():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    out = s("play", seat="S", cards=["3S", "3S", "3S", "3S"])
    assert [(r["rule"], r["seat"]) for r in out] == [("D3", "S")]
    assert "3S 4 times" in out[0]["message"] and "not judged" in out[0]["message"]
    s("take_back", seat="S")
    assert s.deal.turn == "S" and s.deal.table is None and s.deal.counts["S"] == 27


def test_d3_a_card_seen_a_third_time_in_a_deal_is_flagged_and_goes_back_when_read_again():
    s = Script()
    s("deal_start", deal=1, first_leader="S")
    s("play", seat="S", cards=["7H", "7H"])
    s("play", seat="E", cards=["7H", "7D"])  # a third 7H: a misread or another deck's card
    flag = s.of_type("flag")[-1]
    assert (flag["rule"], flag["seat"], flag["claim_until"]) == ("D3", "E", {"deal": 1})
    assert "7H 3 times" in flag["message"]
    s("play", seat="E", cards=["8S", "8D"])  # read right: the misread play is replaced
    assert s.deal.table_seat == "E" and s.deal.table_cards == tuple(parse_cards("8S 8D")) and s.deal.counts["E"] == 25
    assert s.deal.played_faces[parse_cards("7H")[0]] == 2
