"""What perception got right: a simulated table's truth against what reached the server.

Per seat, the camera-visible truth (plays, passes, reports in order) is aligned with the
events the agent sent (:class:`difflib.SequenceMatcher` on type and cards). A true play
read with other cards, or not seen, or a play seen where none was made, is a misread. A
misread is *caught* when the server rejected its event or the referee answered it with a
flag or a review item (an illegal or out-of-turn play, a card the seat does not hold, a
conflict between camera and RFID, a low confidence); the rest went into the record as
read. Deal results and flags are compared with a referee fed the truth.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from referee.cards import card_name, parse_cards
from referee.engine import Referee

from .sender import Answer

SEEN_TYPES = ("play", "pass", "report", "conflict")


@dataclass
class Perception:
    plays: int = 0
    """True plays the camera could see."""
    misread: int = 0
    """True plays read with other cards, or missed, or plays seen where none was made."""
    caught: int = 0
    uncaught: int = 0
    passes_missed: int = 0
    deals: int = 0
    deals_right: int = 0
    """Deals whose recorded result equals the truth's."""
    details: list[str] = field(default_factory=list)

    def add(self, other: Perception) -> None:
        for name in ("plays", "misread", "caught", "uncaught", "passes_missed", "deals", "deals_right"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.details += other.details

    def counts(self) -> dict[str, int]:
        """The counts the floor page shows (``web.app.openapi.PERCEPTION_COUNTS``), in its language."""
        return {"plays": self.plays, "misread": self.misread, "caught": self.caught, "uncaught": self.uncaught,
                "deals": self.deals, "deals_right": self.deals_right}

    def summary(self) -> str:
        per_k = 1000 * self.misread / self.plays if self.plays else 0.0
        return (f"{self.plays} plays, {self.misread} misread ({per_k:.1f} per 1,000): {self.caught} caught by the referee "
                f"(conflicts, illegal or impossible plays), {self.uncaught} reached the record uncorrected; "
                + (f"{self.deals_right}/{self.deals} deal results equal the truth" if self.deals
                   else "no deal finished yet"))


def _key(event: dict[str, Any]) -> tuple:
    cards = tuple(sorted(card_name(c) for c in parse_cards(event["cards"]))) if event.get("cards") else ()
    return event["type"], cards


def truth_records(truth: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a referee makes of the true events (its JSON records)."""
    referee = Referee()
    for event in truth:
        referee.feed(event)
    return referee.records()


def deal_results(records: list[dict[str, Any]]) -> list[tuple]:
    return [(r.get("deal"), tuple(r.get("order", ())), json.dumps(r.get("upgrade"), sort_keys=True),
             json.dumps(r.get("levels"), sort_keys=True))
            for r in records if r["type"] == "deal_end"]


def compare(
    seen: list[dict[str, Any]],
    answered: list[Answer],
    records: list[dict[str, Any]],
    truth_deals: list[tuple],
) -> Perception:
    """``seen``: the camera-visible truth; ``answered``: the server's answers to the agent;
    ``records``: the referee's records from the store; ``truth_deals``: :func:`deal_results`
    of the truth."""
    out = Perception()
    sent = [(a.event, a.result) for a in answered if a.event["type"] in SEEN_TYPES]
    remarks = Counter((r.get("seat"), r.get("at")) for r in records if r["type"] in ("flag", "review"))
    for seat in "NESW":
        want = [e for e in seen if e["seat"] == seat]
        got = [(e, a) for e, a in sent if e.get("seat") == seat]
        out.plays += sum(1 for e in want if e["type"] == "play")
        matcher = difflib.SequenceMatcher(a=[_key(e) for e in want], b=[_key(e) for e, _ in got], autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            true_plays = [e for e in want[i1:i2] if e["type"] == "play"]
            out.passes_missed += sum(1 for e in want[i1:i2] if e["type"] == "pass") if op == "delete" else 0
            wrong = [(e, a) for e, a in got[j1:j2] if e["type"] in ("play", "conflict")]
            count = max(len(true_plays), len(wrong))
            if not count:
                continue
            out.misread += count
            caught = sum(1 for e, a in wrong if a.get("status") == "rejected" or e["type"] == "conflict"
                         or remarks[(seat, e["t"])])
            caught = min(caught, count)
            out.caught += caught
            out.uncaught += count - caught
            out.details.append(f"{seat}: true {[_key(e)[1] for e in true_plays]} read {[_key(e)[1] for e, _ in wrong]}")
    recorded = deal_results(records)
    out.deals = len(truth_deals)
    out.deals_right = sum(1 for d in truth_deals if d in recorded)
    return out
