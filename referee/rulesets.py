"""Rulesets: the fixed rules of a session, apart from the per-deal state (STYLE habit 5).

The default is the competition rule book (RULES.md, source 000); named variants switch on
the alternatives RULES.md lists. A TOML file may start from any named ruleset
(``base = "report6"``) and override fields; unknown keys are an error, so a typo in a
tournament's rules file cannot silently fall back to a default.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass


class RulesetError(ValueError):
    """An unknown ruleset name, an unknown key, or a value of the wrong type."""


@dataclass(frozen=True)
class Ruleset:
    name: str = "competition"
    report_threshold: int = 10  # R1: report at <= this many cards (variant: 6)
    tribute_seconds: float = 20  # K1
    return_seconds: float = 40  # K1
    lead_seconds: float = 40  # K2
    follow_seconds: float = 20  # K3 (variant: 15)
    countdown_seconds: float = 10  # K4
    a_pass_needs_second: bool = False  # U3 variant: passing A needs the partner 二游
    a_reset_after: int = 0  # U3 variant: after this many failed tries at A, back to 2 (0 = never)
    lateness: str = "competition"  # K5: "competition" or "friendly" (001: > 5 min costs deal 1)
    session_minutes: float = 50  # W1
    max_deals: int = 8  # W1
    no_new_deal_minutes: float = 5  # W2
    min_confidence: float = 0.8  # reads below this are shown for review, never trusted silently

    def __post_init__(self) -> None:
        if self.lateness not in ("competition", "friendly"):
            raise RulesetError(f"lateness must be 'competition' or 'friendly', not {self.lateness!r}")
        if not 1 <= self.report_threshold <= 27:
            raise RulesetError(f"report_threshold must be 1..27, not {self.report_threshold!r}")


NAMED: dict[str, Ruleset] = {
    "competition": Ruleset(),
    "report6": Ruleset(name="report6", report_threshold=6),
    "fast15": Ruleset(name="fast15", follow_seconds=15),
    "a-reset": Ruleset(name="a-reset", a_reset_after=3),
    "a-second": Ruleset(name="a-second", a_pass_needs_second=True),
    "friendly": Ruleset(name="friendly", lateness="friendly", report_threshold=6),
}


def ruleset_from_mapping(data: dict, name: str = "custom") -> Ruleset:
    """Build a ruleset from a mapping (a parsed TOML file): ``base`` plus overrides."""
    data = dict(data)
    base_name = data.pop("base", "competition")
    if base_name not in NAMED:
        raise RulesetError(f"unknown base ruleset {base_name!r} (known: {', '.join(NAMED)})")
    base = NAMED[base_name]
    fields = {f.name: f for f in dataclasses.fields(Ruleset)}
    for key, value in data.items():
        if key not in fields or key == "name":
            raise RulesetError(f"unknown ruleset key {key!r} (known: {', '.join(k for k in fields if k != 'name')})")
        expected = type(getattr(base, key))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not expected:
            raise RulesetError(f"ruleset key {key!r} must be {expected.__name__}, not {value!r}")
        data[key] = value
    return dataclasses.replace(base, name=data.pop("name", name), **data)


def ruleset_from_toml(text: str, name: str = "custom") -> Ruleset:
    """Parse a ruleset file's text (the caller reads the file: the engine does no I/O)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesetError(f"ruleset {name!r} is not valid TOML: {exc}") from None
    return ruleset_from_mapping(data, name=name)


def load_ruleset(name: str) -> Ruleset:
    """A named ruleset: ``competition`` (default), ``report6``, ``fast15``, ``a-reset``,
    ``a-second``, ``friendly``."""
    try:
        return NAMED[name]
    except KeyError:
        raise RulesetError(f"unknown ruleset {name!r} (known: {', '.join(NAMED)}; or a .toml file)") from None
