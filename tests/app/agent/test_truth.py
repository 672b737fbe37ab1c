"""Perception against the truth: misreads found, caught ones told from those that slipped through,
and the flags benchmark's figures (true breaches flagged, false and knock-on flags, prompts)."""

import pytest

from web.app.agent.sender import Answer
from web.app.agent.simtable import plan_table
from web.app.agent.truth import align, compare, deal_results, match_flags, score, truth_records


def ev(kind, seat, t, cards=None, id=None):
    e = {"type": kind, "seat": seat, "t": t}
    if cards:
        e["cards"] = cards
    if id:
        e["id"] = id
    return e


def answered(*pairs):
    return [Answer(e, {"status": status, "seq": n}, 0.0) for n, (e, status) in enumerate(pairs)]


def test_right_reads_count_no_misread():
    seen = [ev("play", "S", 1.0, ["3S", "3H"]), ev("pass", "E", 3.0)]
    got = answered((ev("play", "S", 1.1, ["3H", "3S"]), "accepted"), (ev("pass", "E", 3.1), "accepted"))
    p = compare(seen, got, [], [])
    assert (p.plays, p.misread, p.caught, p.uncaught) == (1, 0, 0, 0)


def test_a_misread_the_referee_flagged_or_rejected_is_caught_the_rest_is_not():
    seen = [ev("play", "S", 1.0, ["3S"]), ev("play", "W", 2.0, ["9C"]), ev("play", "N", 3.0, ["KD"])]
    got = answered(
        (ev("play", "S", 1.1, ["3C"]), "rejected"),  # S does not hold 3C
        (ev("play", "W", 2.1, ["8C"]), "accepted"),  # flagged below
        (ev("play", "N", 3.1, ["KH"]), "accepted"),  # legal and unnoticed
    )
    records = [{"type": "flag", "rule": "P5", "seat": "W", "at": 2.1}]
    p = compare(seen, got, records, [])
    assert (p.plays, p.misread, p.caught, p.uncaught) == (3, 3, 2, 1)
    assert any(d.startswith("N:") for d in p.details)


def test_a_misread_with_a_review_item_at_its_play_is_caught_one_elsewhere_is_not():
    seen = [ev("play", "E", 1.0, ["5D"]), ev("play", "S", 2.0, ["6D"])]
    got = answered((ev("play", "E", 1.1, ["5H"]), "accepted"), (ev("play", "S", 2.1, ["6H"]), "accepted"))
    review = {"type": "review", "reason": "suspect_read", "seat": "E", "at": 1.1}
    p = compare(seen, got, [review, dict(review, seat="S", at=2.0)], [])  # S's review names no play of S
    assert (p.misread, p.caught, p.uncaught) == (2, 1, 1)


def test_a_corrected_misread_stays_caught_when_the_re_derived_record_no_longer_flags_it():
    seen = [ev("play", "W", 2.0, ["9C"])]
    got = answered((ev("play", "W", 2.1, ["8C"], id="w1"), "accepted"))
    flagged = compare(seen, got, [{"type": "flag", "rule": "P5", "seat": "W", "at": 2.1}], [])
    after = compare(seen, got, [], [], corrected={"w1"})  # the correction's replay dropped the flag
    assert (flagged.caught, flagged.corrected, flagged.uncaught) == (1, 0, 0)
    assert "1 waiting on the flags console" in flagged.summary()
    assert (after.caught, after.corrected, after.uncaught) == (1, 1, 0)
    assert "1 caught" in after.summary() and "1 of them corrected" in after.summary()
    assert "0 went into the record unnoticed" in after.summary() and "waiting" not in after.summary()
    assert compare(seen, got, [], [], corrected={"other"}).uncaught == 1


def test_a_misread_the_deal_settled_to_the_true_cards_is_caught_and_waits_on_nobody():
    seen = [ev("play", "E", 1.0, ["3C", "3C"]), ev("play", "S", 2.0, ["6D"])]
    got = answered((ev("play", "E", 1.1, ["3C", "3S"]), "accepted"), (ev("play", "S", 2.1, ["6H"]), "accepted"))
    records = [{"type": "settled", "seat": "E", "at": 1.1, "cards": ["3C", "3C"]},
               {"type": "settled", "seat": "S", "at": 2.1, "cards": ["6S"]}]  # settled, but not to the true card
    p = compare(seen, got, records, [])
    assert (p.misread, p.caught, p.settled, p.waiting, p.uncaught) == (2, 1, 1, 0, 1)
    assert "1 settled to the true cards by the deal" in p.summary() and "waiting" not in p.summary()
    assert "1 went into the record unnoticed" in p.summary()


def test_missed_and_phantom_plays_are_misreads_and_deal_results_are_compared():
    seen = [ev("play", "E", 1.0, ["5D"])]
    got = answered((ev("play", "S", 1.2, ["7S"]), "accepted"))
    (deal,) = deal_results([{"type": "deal_end", "deal": 1, "order": ["S", "E", "N", "W"], "upgrade": {"NS": 1},
                             "levels": {"EW": "2", "NS": "3"}}])
    records = [{"type": "deal_end", "deal": 1, "order": ["S", "E", "N", "W"], "upgrade": {"NS": 1},
                "levels": {"NS": "3", "EW": "2"}}]
    p = compare(seen, got, records, [deal])
    assert (p.misread, p.uncaught) == (2, 2)
    assert (p.deals, p.deals_right) == (1, 1)


def test_alignment_pairs_every_sent_event_with_its_truth():
    seen = [ev("play", "N", 1.0, ["3S"]), ev("pass", "N", 5.0), ev("play", "N", 9.0, ["4S", "4H"])]
    got = answered((ev("play", "N", 1.1, ["3S"]), "accepted"), (ev("pass", "N", 5.1), "accepted"),
                   (ev("play", "N", 9.1, ["4S", "4D"]), "accepted"))
    pairs = align(seen, got).by_sent()
    assert not pairs[("N", 1.1)].misread and pairs[("N", 1.1)].true["t"] == 1.0
    wrong = pairs[("N", 9.1)]
    assert wrong.misread and wrong.true["cards"] == ["4S", "4H"]


def test_flags_pair_with_breaches_by_rule_seat_and_time_each_once():
    breaches = [{"rule": "P4", "seat": "S", "at": 10.0}, {"rule": "K3", "seat": "W", "at": 50.0, "due": 40.0}]
    flags = [{"rule": "P4", "seat": "S", "at": 10.1}, {"rule": "P4", "seat": "S", "at": 10.2},
             {"rule": "K3", "seat": "W", "at": 45.0, "due": 40.1},  # a tick raised it before the next play
             {"rule": "P4", "seat": "E", "at": 10.0}]
    assert match_flags(breaches, flags) == {0: 0, 1: 2}
    assert match_flags(breaches, [{"rule": "P4", "seat": "S", "at": 20.0}]) == {}


@pytest.fixture(scope="module")
def plan():
    """Seed 2's first deal: 81 camera events and a planted P4, R1, R2 and K3."""
    return plan_table(2, 1, "T1", breaches=0.05, brisk=0.2)


def sent_as_seen(plan, misread_at=None, cards=None):
    """The agent's answers had it read every camera event right (but the one at ``misread_at``)."""
    out = []
    for n, e in enumerate(plan.seen):
        sent = dict(e, id=f"e{n}")
        if e["t"] == misread_at:
            sent["cards"] = cards
        out.append(Answer(sent, {"status": "accepted", "seq": n}, 0.0))
    return out


def test_a_perfect_record_scores_every_breach_flagged_and_nothing_false(plan):
    records = truth_records(plan.truth)
    s = score(plan.truth, plan.breaches, sent_as_seen(plan), records, records)
    assert s.breaches == len(plan.breaches) >= 4 and s.breaches_flagged == s.breaches
    assert (s.misreads, s.false_flags, s.knock_on, s.prompts) == (0, 0, 0, 0)
    assert s.deals == s.deal_results_right == 1
    assert s.table_seconds == max(e["t"] for e in plan.truth)
    assert s.figures()["table_hours"] == pytest.approx(s.table_seconds / 3600, abs=1e-4)


def test_flags_at_a_misread_after_it_and_unrelated_are_counted_apart_and_prompts_counted_once(plan):
    plays = [e for e in plan.seen if e["type"] == "play"]
    misread, later = plays[10], plays[11]
    before = plays[2]
    records = truth_records(plan.truth)
    raised = records + [
        {"type": "flag", "rule": "P5", "seat": misread["seat"], "at": misread["t"]},  # at the misread
        {"type": "flag", "rule": "P4", "seat": later["seat"], "at": later["t"]},  # knock-on
        {"type": "flag", "rule": "P1", "seat": before["seat"], "at": before["t"]},  # before any misread
        {"type": "review", "reason": "suspect_read", "seat": misread["seat"], "at": misread["t"]},
        {"type": "review", "reason": "suspect_read", "seat": misread["seat"], "at": misread["t"]},  # re-derived
        {"type": "review", "reason": "low_confidence", "seat": later["seat"], "at": later["t"]},
        {"type": "review", "reason": "unchecked", "seat": later["seat"], "at": later["t"]},  # not a prompt
    ]
    answers = sent_as_seen(plan, misread["t"], ["BJ"])
    s = score(plan.truth, plan.breaches, answers, raised, records)
    assert (s.misreads, s.misreads_caught) == (1, 1)
    assert (s.false_flags, s.flags_at_misreads, s.knock_on, s.other_false_flags) == (3, 1, 1, 1)
    assert s.breaches_flagged == s.breaches
    assert (s.prompts, s.prompts_on_misreads) == (2, 1)
    assert s.figures()["prompt_reasons"] == {"suspect_read": 1, "low_confidence": 1}
    assert f"knock-on: P4 {later['seat']} at {later['t']:g}" in s.details
    assert f"at a misread: P5 {misread['seat']} at {misread['t']:g}" in s.details


def test_a_misread_a_later_item_names_as_an_earlier_read_is_caught_later(plan):
    plays = [e for e in plan.seen if e["type"] == "play"]
    misread, later = plays[10], plays[14]
    records = truth_records(plan.truth)
    naming = {"type": "review", "reason": "suspect_read", "seat": later["seat"], "at": later["t"],
              "detail": {"what": "seen_again", "earlier": [{"seat": misread["seat"], "at": misread["t"]}]}}
    answers = sent_as_seen(plan, misread["t"], ["BJ"])
    s = score(plan.truth, plan.breaches, answers, records + [naming], records)
    assert (s.misreads, s.misreads_caught, s.misreads_caught_later, s.prompts_on_misreads) == (1, 1, 1, 1)
    unnamed = dict(naming, detail={"what": "impossible_read"})
    s = score(plan.truth, plan.breaches, answers, records + [unnamed], records)
    assert (s.misreads_caught, s.misreads_caught_later) == (0, 0)


def test_a_misread_the_deal_settled_to_the_true_cards_is_caught_without_a_prompt(plan):
    misread = [e for e in plan.seen if e["type"] == "play"][10]
    answers = sent_as_seen(plan, misread["t"], ["BJ"])
    records = truth_records(plan.truth)
    right = {"type": "settled", "seat": misread["seat"], "at": misread["t"], "cards": misread["cards"]}
    s = score(plan.truth, plan.breaches, answers, records + [right], records)
    assert (s.misreads, s.misreads_caught, s.misreads_settled, s.misreads_caught_later, s.prompts) == (1, 1, 1, 0, 0)
    wrong = dict(right, cards=["BJ"])  # settled, but to what the camera read
    s = score(plan.truth, plan.breaches, answers, records + [wrong], records)
    assert (s.misreads_caught, s.misreads_settled) == (0, 0) and any("misread unnoticed" in d for d in s.details)


def test_a_corrected_misread_whose_items_are_gone_still_counts_caught_and_results_come_from_the_record(plan):
    misread = [e for e in plan.seen if e["type"] == "play"][10]
    answers = sent_as_seen(plan, misread["t"], ["BJ"])
    records = [r for r in truth_records(plan.truth) if r["type"] != "deal_end"]  # the deal's result went wrong
    (sent,) = [a.event for a in answers if a.event["t"] == misread["t"] and a.event["seat"] == misread["seat"]]
    s = score(plan.truth, plan.breaches, answers, records, records, corrected={sent["id"]})
    assert (s.misreads, s.misreads_caught, s.misreads_corrected) == (1, 1, 1)
    assert (s.deals, s.deal_results_right) == (1, 0)
    assert score(plan.truth, plan.breaches, answers, records, records).misreads_caught == 0


def test_a_misread_the_server_refused_asked_nobody_the_benchmark_does_not_count_it_caught(plan):
    misread = [e for e in plan.seen if e["type"] == "play"][10]
    answers = [Answer(a.event, {"status": "rejected", "reason": "no such card"}, 0.0)
               if a.event["t"] == misread["t"] and a.event["seat"] == misread["seat"] else a
               for a in sent_as_seen(plan, misread["t"], ["BJ"])]
    records = truth_records(plan.truth)
    s = score(plan.truth, plan.breaches, answers, records, records)
    assert (s.misreads, s.misreads_caught, s.misreads_rejected) == (1, 0, 1)
    assert compare(plan.seen, answers, records, []).caught == 1  # the demo's count: kept out of the record
