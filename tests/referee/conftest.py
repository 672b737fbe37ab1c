"""Helpers to write plays in RULES.md notation, and to judge a log afresh."""

from __future__ import annotations

from referee.cards import parse_cards, parse_level, rank_name
from referee.combos import readings
from referee.engine import Referee
from referee.events import EventError


def kinds(cards: str, level: str = "2") -> set[tuple[str, str]]:
    """The (type, key rank) pairs of every reading of ``cards``."""
    return {(r.type.value, rank_name(r.rank)) for r in readings(parse_cards(cards), parse_level(level))}


def strongest(cards: str, level: str = "2") -> tuple[str, str] | None:
    found = readings(parse_cards(cards), parse_level(level))
    return (found[0].type.value, rank_name(found[0].rank)) if found else None


class Script:
    """Feed events to a fresh referee with advancing time; collect what it derives."""

    def __init__(self, ruleset=None, teams=None) -> None:
        self.referee = Referee(ruleset)
        self.t = 0.0
        self.records: list[dict] = []
        self("session_start", dt=0, teams=teams or {"NS": "Reds", "EW": "Blues"})

    def __call__(self, kind: str, dt: float = 1.0, **fields) -> list[dict]:
        """Feed one event; its records as JSON, or one ``error`` record when it is rejected."""
        self.t += dt
        return self.feed({"type": kind, "t": self.t, **fields})

    def feed(self, event) -> list[dict]:
        from referee.verdicts import Rejection

        try:
            records = [v.to_json() for v in self.referee.feed(event)]
        except EventError as exc:
            return [Rejection(str(exc), event=event).to_json()]
        self.records += records
        return records

    def flags(self, *, ignore: tuple[str, ...] = ("D3",)) -> list[tuple[str, str | None]]:
        return [(r["rule"], r["seat"]) for r in self.records if r["type"] == "flag" and r["rule"] not in ignore]

    def standing(self, *, ignore: tuple[str, ...] = ("D3",)) -> list[tuple[str, str | None]]:
        """The flags a screen shows from the stream of records: raised, minus each one a
        ``withdrawn`` or ``dismissed`` record names (by rule, seat and time)."""
        shown: list[tuple] = []
        for r in self.records:
            if r["type"] == "flag":
                shown.append((r["rule"], r["seat"], r["at"]))
            elif r["type"] in ("withdrawn", "dismissed"):
                shown.remove((r["rule"], r["seat"], r["at"]))
        return [(rule, seat) for rule, seat, _ in shown if rule not in ignore]

    def of_type(self, kind: str) -> list[dict]:
        return [r for r in self.records if r["type"] == kind]

    @property
    def deal(self):
        return self.referee.state.deal

    def quick_deal(self, hands: dict[str, list[str]] | None = None, first_leader: str = "S") -> None:
        """Deal 1 with tiny hands: S leads AS and goes out, E beats with the level 2S and goes
        out, N and W pass, W leads 3S (接风) and goes out: order S, E, W, N."""
        self("deal_start", deal=self.referee.state.deals_played + 1, first_leader=first_leader,
             hands=hands or {"S": ["AS"], "E": ["2S"], "N": ["KS", "KD"], "W": ["3S"]})

    def play_quick_deal(self) -> None:
        """Play the whole :meth:`quick_deal`: S, E, W go out in that order."""
        self.quick_deal()
        self("play", seat="S", cards=["AS"])
        self("play", seat="E", cards=["2S"])
        self("pass", seat="N")
        self("pass", seat="W")
        self("play", seat="W", cards=["3S"])

    def play_double_down_deal(self) -> None:
        """Deal 1 where S then N go out: EW are double-down, NS go up 3."""
        self.quick_deal(hands={"S": ["AS"], "E": ["3D", "4D"], "N": ["2S"], "W": ["3C", "4C"]})
        self("play", seat="S", cards=["AS"])
        self("pass", seat="E")
        self("play", seat="N", cards=["2S"])


def judged_afresh(events: list[dict]) -> Referee:
    """A new referee fed ``events``, skipping those it refuses: what a corrected log makes
    impossible drops out, as in the referee's own re-judgement."""
    referee = Referee()
    for event in events:
        try:
            referee.feed(event)
        except EventError:
            pass
    return referee
