"""Perception against the truth: misreads found, caught ones told from those that slipped through."""

from web.app.agent.sender import Answer
from web.app.agent.truth import compare, deal_results


def ev(kind, seat, t, cards=None):
    e = {"type": kind, "seat": seat, "t": t}
    if cards:
        e["cards"] = cards
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
