"""Rulesets named for their source, and range-checked values."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest

from referee.rulesets import NAMED, RANGES, Ruleset, RulesetError, load_ruleset, ruleset_from_toml

from .conftest import Script


def test_liumoer_2026_is_seed_001_house_rules():
    rules = load_ruleset("liumoer-2026")
    assert (rules.lead_seconds, rules.follow_seconds, rules.report_threshold) == (40, 15, 10)  # 六.4, 六.5
    assert (rules.session_minutes, rules.max_deals, rules.no_new_deal_minutes) == (50, 8, 5)  # 四, 六.6
    assert rules.late_foul_deal_one and rules.late_forfeit_levels == "A:6"  # 三
    assert not rules.a_pass_needs_second and rules.a_reset_after == 0


def test_liumoer_2026_lateness_deal_one_and_forfeit_at_a_6():
    s = Script(load_ruleset("liumoer-2026"))
    s("arrival", side="EW", minutes_late=7)
    assert s.of_type("flag")[0]["message"] == "EW arrived 7 min late: gives the opponents deal 1 with +3"
    s("penalty", side="EW", level="foul", rule="K5")  # the referee rules it: deal 1 to NS, +3
    assert s.of_type("deal_end")[0]["upgrade"] == {"NS": 3}
    late = Script(load_ruleset("liumoer-2026"))
    late("arrival", side="NS", minutes_late=11)
    assert late.of_type("flag")[0]["message"] == "NS arrived 11 min late: forfeits the round (scored A:6)"
    late("penalty", side="NS", level="loss", rule="K5")
    result = late.of_type("session_result")[0]
    assert (result["reason"], result["levels"], result["level_difference"], result["score"]) == (
        "forfeit", {"NS": "6", "EW": "A"}, 8, {"EW": 22, "NS": 6})


def test_lateness_follows_the_ruleset_fields_never_its_name():
    """A club's rules file scores a lateness forfeit at K:3; a file named like seed 001's
    ruleset but with 000's lateness settings records it 17:0 with 000's words."""
    club = Script(ruleset_from_toml('late_foul_deal_one = true\nlate_forfeit_levels = "K:3"\n', name="club"))
    club("arrival", side="NS", minutes_late=11)
    assert club.of_type("flag")[0]["message"] == "NS arrived 11 min late: forfeits the round (scored K:3)"
    assert club.of_type("flag")[0]["detail"]["house"] is True
    club("penalty", side="NS", level="loss", rule="K5")
    assert club.of_type("session_result")[0]["levels"] == {"NS": "3", "EW": "K"}
    plain = ruleset_from_toml('base = "liumoer-2026"\nlate_foul_deal_one = false\nlate_forfeit_levels = ""\n',
                              name="liumoer-2026")
    late = Script(plain)
    late("arrival", side="EW", minutes_late=7)
    assert late.of_type("flag")[0]["message"] == "EW arrived 7 min late: is a foul"
    late("arrival", side="EW", minutes_late=12)
    assert late.of_type("flag")[1]["message"] == "EW arrived 12 min late: forfeits the round"
    late("penalty", side="EW", level="loss", rule="K5")
    assert late.of_type("session_result")[0]["score"] == {"NS": 17, "EW": 0}


@pytest.mark.parametrize("levels", ["6:A", "A", "A:6:2", "X:2", "A:SJ", "7:7"])
def test_late_forfeit_levels_must_be_two_levels_winner_above(levels):
    with pytest.raises(RulesetError, match=re.escape(
            f"ruleset 'club': late_forfeit_levels must be two levels as winner:forfeiter, the winner's above "
            f"(\"A:6\"), or empty, not {levels!r}")):
        ruleset_from_toml(f'late_forfeit_levels = "{levels}"\n', name="club")


def test_every_named_ruleset_cites_its_sources():
    import referee.rulesets as module

    source = open(module.__file__, encoding="utf-8").read()
    for name in NAMED:
        assert f'"""``{name}``:' in source, f"{name} has no docstring naming it"
    assert len(NAMED) == 6


def test_friendly_is_gone_with_a_clear_error_naming_its_replacement():
    with pytest.raises(RulesetError, match="ruleset 'friendly' is gone: .* use 'liumoer-2026'"):
        load_ruleset("friendly")
    with pytest.raises(RulesetError, match="base ruleset 'friendly' is gone"):
        ruleset_from_toml('base = "friendly"\n')
    with pytest.raises(RulesetError, match="ruleset key 'lateness' is gone: .* late_foul_deal_one .* late_forfeit_levels"):
        ruleset_from_toml('lateness = "liumoer-2026"\n')


@pytest.mark.parametrize("text,words", [
    ("follow_seconds = -5", "follow_seconds must be 1..600 s, not -5.0"),
    ("lead_seconds = 40000", "lead_seconds must be 1..600 s, not 40000.0"),
    ("countdown_seconds = nan", "countdown_seconds must be 0..120 s, not nan"),
    ("tribute_seconds = inf", "tribute_seconds must be 1..600 s, not inf"),
    ("report_threshold = 0", "report_threshold must be 1..27 cards, not 0"),
    ("max_deals = 0", "max_deals must be 1..100 deals, not 0"),
    ("session_minutes = 100000", "session_minutes must be 1..600 min"),
    ("a_reset_after = -1", "a_reset_after must be 0..20 tries"),
    ("min_confidence = 2", "min_confidence must be 0..1, not 2.0"),
    ("session_minutes = 4", "no_new_deal_minutes (5) must be less than session_minutes (4)"),
])
def test_ruleset_values_are_range_checked(text, words):
    with pytest.raises(RulesetError, match="ruleset 'club': " + words.replace("(", r"\(").replace(")", r"\)")):
        ruleset_from_toml(text, name="club")


def test_every_named_ruleset_lies_within_the_ranges():
    checked = 0
    for rules in NAMED.values():
        for key, (low, high, _unit) in RANGES.items():
            assert low <= getattr(rules, key) <= high
            checked += 1
    assert checked == len(NAMED) * len(RANGES)
    assert dataclasses.replace(Ruleset(), follow_seconds=1.0).follow_seconds == 1.0
    assert math.isfinite(Ruleset().session_minutes)


def test_a_tournament_spec_out_of_range_is_refused():
    from referee.rulesets import tournament_ruleset

    with pytest.raises(RulesetError, match="max_deals must be 1..100"):
        tournament_ruleset("liumoer-2026", 0, 50)
    assert tournament_ruleset("liumoer-2026", 8, 50) == "liumoer-2026"


LOSS = {"type": "penalty", "side": "NS", "level": "loss", "rule": "X4", "by": "Li"}
"""A penalty that ends the session at once."""


def test_a_session_plays_the_ruleset_it_names_else_the_tables():
    """The rules in force live on the session: a session that names a ruleset (by name or
    by spec) plays it, the next one that names none plays the table's again, and naming
    the table's own ruleset keeps the table's settings."""
    from referee.engine import Referee
    from referee.rulesets import load_ruleset_spec, ruleset_spec

    table = load_ruleset_spec(ruleset_spec("competition", max_deals=2))
    referee = Referee(table)
    assert referee.rules_in_force is table  # before any session: the table's
    referee.feed({"type": "session_start", "t": 0, "ruleset": "competition"})
    assert referee.state.ruleset is table and referee.state.ruleset.max_deals == 2
    referee.feed(LOSS | {"t": 1})
    referee.feed({"type": "session_start", "t": 2, "ruleset": ruleset_spec("report6", max_deals=3)})
    assert (referee.state.ruleset.report_threshold, referee.state.ruleset.max_deals) == (6, 3)
    assert referee.rules_in_force is referee.state.ruleset  # what the pages judge reads by
    referee.feed(LOSS | {"t": 3})
    referee.feed({"type": "session_start", "t": 4})
    assert referee.state.ruleset is table


@pytest.mark.parametrize("named", ['{"base": "report6"', '{"base": ["x"]}', '{"report_threshold": 0}', "bridge"])
def test_a_session_naming_no_ruleset_that_exists_is_refused_with_the_reason(named):
    s = Script()
    s.feed(LOSS | {"t": 1})
    (record,) = s("session_start", ruleset=named)
    assert record["type"] == "error" and record["message"].startswith("session_start.ruleset: ")
    assert s.referee.state.over  # the refused start changed nothing
