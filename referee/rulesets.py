"""Rulesets: the fixed rules of a session, apart from the per-deal state (STYLE habit 5).

Each named ruleset is named for its source and says, value by value, which article of
which seed document (``../shared/seeds/``: 000 Jiangsu competition rules, 001 the 2026
六摩尔 cup's house rules with an introductory article, 002/003 encyclopedia summaries) it
comes from; where a ruleset takes values from more than one source, or a value has no
source, its docstring says so. A TOML file may start from any named ruleset
(``base = "report6"``) and override fields; unknown keys and values out of range are an
error, so a typo in a tournament's rules file cannot silently fall back to a default.
"""

from __future__ import annotations

import dataclasses
import json
import math
import tomllib
from dataclasses import dataclass

from .cards import CardError, Rank, parse_level

RANGES: dict[str, tuple[float, float, str]] = {
    "report_threshold": (1, 27, " cards"),
    "tribute_seconds": (1, 600, " s"),
    "return_seconds": (1, 600, " s"),
    "lead_seconds": (1, 600, " s"),
    "follow_seconds": (1, 600, " s"),
    "countdown_seconds": (0, 120, " s"),
    "a_reset_after": (0, 20, " tries"),
    "session_minutes": (1, 600, " min"),
    "max_deals": (1, 100, " deals"),
    "no_new_deal_minutes": (0, 600, " min"),
    "min_confidence": (0, 1, ""),
}
"""The range each numeric setting must lie in: wider than any rule book, narrow enough that
a sign slip or a unit mix-up (seconds typed as milliseconds) is caught."""

RETIRED = {
    "friendly": "'friendly' mixed the report6 threshold with seed 001's lateness and 000's clock, "
                "matching no source; use 'liumoer-2026' (seed 001's house rules) or a TOML file "
                "with base = \"report6\"",
}
"""Names that are gone, and what replaces them."""

RETIRED_KEYS = {
    "lateness": "the K5 scheme is two settings now: late_foul_deal_one (true: a foul for > 5 min "
                "late is worded as the opponents winning deal 1 with +3) and late_forfeit_levels "
                "(\"A:6\": a forfeit for > 10 min late is scored at those levels; empty: 17:0)",
}
"""Ruleset keys that are gone, and what replaces them."""


class RulesetError(ValueError):
    """An unknown ruleset name, an unknown key, or a value of the wrong type or out of range."""


@dataclass(frozen=True)
class Ruleset:
    name: str = "competition"
    report_threshold: int = 10  # R1: report at <= this many cards
    tribute_seconds: float = 20.0  # K1
    return_seconds: float = 40.0  # K1
    lead_seconds: float = 40.0  # K2
    follow_seconds: float = 20.0  # K3
    countdown_seconds: float = 10.0  # K4
    a_pass_needs_second: bool = False  # U3 variant: passing A needs the partner 二游
    a_reset_after: int = 0  # U3 variant: after this many failed tries at A, back to 2 (0 = never)
    late_foul_deal_one: bool = False  # K5 > 5 min: the foul worded as deal 1 to the opponents, +3
    late_forfeit_levels: str = ""  # K5 > 10 min: "winner:forfeiter" levels of the forfeit; "": 17:0
    session_minutes: float = 50.0  # W1
    max_deals: int = 8  # W1
    no_new_deal_minutes: float = 5.0  # W2
    min_confidence: float = 0.8  # reads below this are shown for review, never trusted silently

    def __post_init__(self) -> None:
        if self.late_forfeit_levels:
            self.late_forfeit_at()  # raises, naming the setting
        for key, (low, high, unit) in RANGES.items():
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                shown = f"{value!r}" if not isinstance(value, float) or math.isfinite(value) else str(value)
                raise RulesetError(f"ruleset {self.name!r}: {key} must be {low:g}..{high:g}{unit}, not {shown}")
        if self.no_new_deal_minutes >= self.session_minutes:
            raise RulesetError(f"ruleset {self.name!r}: no_new_deal_minutes ({self.no_new_deal_minutes:g}) must be "
                               f"less than session_minutes ({self.session_minutes:g})")

    def late_forfeit_at(self) -> tuple[Rank, Rank] | None:
        """The levels (winner, forfeiter) a forfeit for lateness is scored at, or None when it
        is recorded 17:0 instead."""
        if not self.late_forfeit_levels:
            return None
        try:
            winner, forfeiter = (parse_level(level) for level in self.late_forfeit_levels.split(":"))
            if winner <= forfeiter:
                raise ValueError("the winner's level is not above the forfeiter's")
        except (CardError, ValueError):
            raise RulesetError(f"ruleset {self.name!r}: late_forfeit_levels must be two levels as "
                               f"winner:forfeiter, the winner's above (\"A:6\"), or empty, not {self.late_forfeit_levels!r}") from None
        return winner, forfeiter


COMPETITION = Ruleset()
"""``competition``: seed 000 (Jiangsu competition rules), with the round's limits of 001.

* R1 report at <= 10 cards: 000 比赛通则 五 (报牌);
* K1 tribute 20 s, return 40 s; K2 first lead 40 s; K3 follow 20 s: 000 通则 九.2-3;
* K4 countdown: 000 通则 九 says 读秒 without a length; 10 s is this project's default;
* K5 lateness (<= 5 min warning, <= 10 min foul, more: forfeit recorded 17:0, so no
  ``late_forfeit_levels``): 000 通则 九.1 and 第四章 三(四) (弃权记分17:0);
* U1-U3 (passing A with the partner 二游 or 三游, no reset): 000 通则 六;
* W1 50 minutes or 8 deals: 001 四 (000 通则 七.1 only says "规定时间/规定的副数");
  W2 no new deal in the last 5 minutes: 001 六.6;
* ``min_confidence`` 0.8 is a recognition setting, not a rule.
"""

LIUMOER_2026 = Ruleset(name="liumoer-2026", follow_seconds=15.0, late_foul_deal_one=True, late_forfeit_levels="A:6")
"""``liumoer-2026``: seed 001's house rules (化学加"六摩尔"杯摜蛋友谊赛规则, 2026) exactly.

* K2 first play of a deal 40 s, K3 every later play 15 s: 001 六.4;
* R1 report at <= 10 cards: 001 六.5;
* K5 > 5 min late: the opponents win deal 1 (+3, ``late_foul_deal_one``); > 10 min: the
  round is forfeited and scored A:6 (``late_forfeit_levels``): 001 三;
* W1 50 minutes, 8 deals, or passing A ends the round; U1 (+3/+2/+1): 001 四;
* W2 no new deal after the 5-minute call: 001 六.6;
* everything else 001 leaves to the national rules it names (六.9): K1 20 s / 40 s,
  the K4 countdown and passing A with the partner not 下游 as in ``competition`` (000).
"""

REPORT6 = Ruleset(name="report6", report_threshold=6)
"""``report6``: ``competition`` with R1 at <= 6 cards, the Nanjing rule of 002 (报牌:
"南京等地规则为不超过6张"). Every other value as ``competition`` (000, 001)."""

FAST15 = Ruleset(name="fast15", follow_seconds=15.0)
"""``fast15``: ``competition`` with K3 15 s (001 六.4). Every other value as ``competition``;
unlike ``liumoer-2026`` it keeps 000's lateness."""

A_RESET = Ruleset(name="a-reset", a_reset_after=3)
"""``a-reset``: ``competition`` where three failed tries at A send a side back to 2: 001's
introductory article 三.3 (胜负判定: "打A打了三次没过，则需回到打2"; 002 过A names it as a
local variant). Every other value as ``competition``."""

A_SECOND = Ruleset(name="a-second", a_pass_needs_second=True)
"""``a-second``: ``competition`` where passing A needs the partner 二游: the local variant
002 names under 过A ("必须一二游"). Every other value as ``competition``."""

NAMED: dict[str, Ruleset] = {r.name: r for r in (COMPETITION, LIUMOER_2026, REPORT6, FAST15, A_RESET, A_SECOND)}


def ruleset_from_mapping(data: dict, name: str = "custom") -> Ruleset:
    """Build a ruleset from a mapping (a parsed TOML file): ``base`` plus overrides."""
    data = dict(data)
    base = load_ruleset(data.pop("base", "competition"), what="base ruleset")
    fields = {f.name: f for f in dataclasses.fields(Ruleset)}
    for key, value in data.items():
        if key in RETIRED_KEYS:
            raise RulesetError(f"ruleset key {key!r} is gone: {RETIRED_KEYS[key]}")
        if key not in fields or key == "name":
            raise RulesetError(f"unknown ruleset key {key!r} (known: {', '.join(k for k in fields if k != 'name')})")
        expected = type(getattr(base, key))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not expected:
            raise RulesetError(f"ruleset key {key!r} must be {expected.__name__}, not {value!r}")
        data[key] = value
    return dataclasses.replace(base, name=name, **data)


def ruleset_from_toml(text: str, name: str = "custom") -> Ruleset:
    """Parse a ruleset file's text (the caller reads the file: the engine does no I/O)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesetError(f"ruleset {name!r} is not valid TOML: {exc}") from None
    return ruleset_from_mapping(data, name=name)


def load_ruleset(name: str, what: str = "ruleset") -> Ruleset:
    """A named ruleset: ``competition`` (default), ``liumoer-2026``, ``report6``, ``fast15``,
    ``a-reset``, ``a-second``."""
    if name in RETIRED:
        raise RulesetError(f"{what} {name!r} is gone: {RETIRED[name]}")
    try:
        return NAMED[name]
    except (KeyError, TypeError):
        files = "; or a .toml file" if what == "ruleset" else ""
        raise RulesetError(f"unknown {what} {name!r} (known: {', '.join(NAMED)}{files})") from None


def ruleset_spec(name: str, **settings) -> str:
    """How a table names its ruleset (the store keeps it in the table's head): a named
    ruleset, with settings changed.

    Just the name when nothing differs from the named ruleset; otherwise canonical JSON
    ``{"base": name, setting: value, ...}`` of the settings that differ, which
    ``load_ruleset_spec`` turns back into the same ``Ruleset``.
    """
    base = load_ruleset(name)
    changed = {k: v for k, v in settings.items() if getattr(base, k) != v}
    if not changed:
        return name
    dataclasses.replace(base, **changed)  # range-checks the settings: RulesetError names the bad one
    return json.dumps({"base": name, **changed}, sort_keys=True, separators=(",", ":"))


def tournament_ruleset(name: str, deal_limit: int, round_minutes: int) -> str:
    """The ruleset spec of a tournament's tables: its round's deal limit and time (W1)."""
    return ruleset_spec(name, max_deals=deal_limit, session_minutes=round_minutes)


def load_ruleset_spec(spec: str) -> Ruleset:
    """The ``Ruleset`` a spec of ``ruleset_spec`` names (it keeps the base's name)."""
    if not spec.startswith("{"):
        return load_ruleset(spec)
    data = json.loads(spec)
    return ruleset_from_mapping(data, name=data.get("base", "competition"))


def session_ruleset(table: Ruleset, named: str | None) -> Ruleset:
    """The ruleset a session plays: the one its session_start names (a name, or a spec of
    :func:`ruleset_spec`), else the table's. Naming the table's own ruleset keeps the
    table's settings (a tournament round's limits), which the bare name would drop."""
    if not named or named == table.name:
        return table
    try:
        return load_ruleset_spec(named)
    except (json.JSONDecodeError, TypeError, RecursionError):  # text from an event: anything may come
        raise RulesetError(f"ruleset {named[:80]!r} is neither a ruleset's name nor its spec") from None
