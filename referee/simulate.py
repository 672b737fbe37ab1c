"""Seeded simulated tables: four simple bots play whole sessions, optionally breaking rules.

The bots ask a :class:`~referee.engine.Referee` whose turn it is and what lies on the
table, and choose among the legal plays of :mod:`referee.plays`, so every session is a
realistic event log (hands, tributes, returns, plays, passes, reports) that the referee
must accept without a flag. With ``breaches`` switched on, the simulator also commits
breaches at random and records the flag each one must raise, which is what the tests
and the demo compare against. Everything random comes from ``random.Random(seed)``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .cards import DOUBLE_DECK, card_name, rank_of, wildcard
from .combos import order_value
from .engine import Referee
from .events import EventError
from .plays import legal_plays
from .rulesets import Ruleset
from .seats import SEATS, partner, previous_seat
from .verdicts import Verdict


@dataclass
class Simulation:
    events: list[dict] = field(default_factory=list)
    expected_flags: list[tuple[str, str]] = field(default_factory=list)  # (rule, seat)
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def records(self) -> list[dict]:
        """The verdicts as JSON records (what ``replay`` prints and the store keeps)."""
        return [verdict.to_json() for verdict in self.verdicts]


class _Table:
    def __init__(self, seed: int, ruleset: Ruleset | None, breaches: float, table: str) -> None:
        self.rng = random.Random(seed)
        self.referee = Referee(ruleset)
        self.breaches = breaches
        self.table = table
        self.t = 0.0
        self.sim = Simulation()

    def emit(self, kind: str, **fields) -> list[Verdict]:
        event = {"type": kind, "t": round(self.t, 2), "table": self.table, "id": str(len(self.sim.events) + 1), **fields}
        self.sim.events.append(event)
        try:
            records = self.referee.feed(event)
        except EventError as exc:
            raise AssertionError(f"the simulator produced a rejected event: {exc}") from None
        self.sim.verdicts += records
        return records

    def wait(self, low: float = 1.0, high: float = 8.0) -> None:
        self.t += self.rng.uniform(low, high)

    def breach(self) -> bool:
        return self.breaches > 0 and self.rng.random() < self.breaches


def _highest_tribute(hand: list[int], level: int) -> int:
    wild = wildcard(level)
    return max((c for c in hand if c != wild), key=lambda c: (order_value(rank_of(c), level), c))


def _return_card(hand: list[int], level: int) -> int:
    allowed = [c for c in hand if rank_of(c) <= 8 and rank_of(c) != level]
    return min(allowed or hand, key=lambda c: (order_value(rank_of(c), level), c))


def play_session(seed: int, teams: dict | None = None, ruleset: Ruleset | None = None,
                 breaches: float = 0.0, table: str = "T1") -> list[dict]:
    """The events of one whole simulated session (see :func:`simulate_session`)."""
    return simulate_session(seed, teams, ruleset, breaches, table).events


def simulate_session(seed: int, teams: dict | None = None, ruleset: Ruleset | None = None,
                     breaches: float = 0.0, table: str = "T1") -> Simulation:
    """Play one session to its end; ``breaches`` is the chance per action of a breach."""
    sim = _Table(seed, ruleset, breaches, table)
    sim.emit("session_start", teams=teams or {"NS": "North-South", "EW": "East-West"})
    deal_no = 0
    while not sim.referee.state.over:  # W1 ends every session (time, deal limit or passing A)
        deal_no += 1
        _play_deal(sim, deal_no)
        sim.wait(20, 60)
    return sim.sim


def _play_deal(sim: _Table, number: int) -> None:
    deck = list(DOUBLE_DECK)
    sim.rng.shuffle(deck)
    hands = {seat: [card_name(c) for c in sorted(deck[i * 27:(i + 1) * 27])] for i, seat in enumerate(SEATS)}
    fields = {"deal": number, "hands": hands}
    if number == 1:
        fields["first_leader"] = sim.rng.choice(SEATS)
    sim.emit("deal_start", **fields)
    state = sim.referee.state
    deal = state.deal
    if deal.phase == "tribute":
        _tribute(sim)
    while deal.phase == "play" and not state.over:
        _turn(sim)


def _tribute(sim: _Table) -> None:
    deal = sim.referee.state.deal
    level = deal.level
    payers = deal.payers
    cards = {p: _highest_tribute(deal.hands[p], level) for p in payers}
    if len(payers) == 1:
        receivers = {payers[0]: deal.winner}
    else:
        a, b = payers
        va, vb = (order_value(rank_of(cards[p]), level) for p in payers)
        if va == vb:
            receivers = {a: previous_seat(a), b: previous_seat(b)}
        else:
            high, low = (a, b) if va > vb else (b, a)
            receivers = {high: deal.winner, low: partner(deal.winner)}
    for payer in payers:
        sim.wait(2, 10)
        sim.emit("tribute", seat=payer, to=receivers[payer], card=card_name(cards[payer]))
    for payer in payers:
        receiver = receivers[payer]
        sim.wait(2, 15)
        sim.emit("return", seat=receiver, to=payer, card=card_name(_return_card(deal.hands[receiver], level)))


def _choose(sim: _Table, seat: str) -> tuple | None:
    deal = sim.referee.state.deal
    hand = deal.hands[seat]
    options = list(legal_plays(hand, deal.level, deal.table))
    if not options:
        return None
    if deal.table is not None:
        if deal.table_seat == partner(seat) and sim.rng.random() < 0.8:
            return None
        plain = [p for p in options if not p.reading.is_bomb]
        if plain:
            options = plain
        elif sim.rng.random() < 0.6:
            return None
        return min(options, key=lambda p: (p.reading.strength, p.cards))
    plain = [p for p in options if not p.reading.is_bomb] or options
    # Lead something small, preferring plays that shed more cards.
    plain.sort(key=lambda p: (p.reading.strength[1] - 2 * len(p.cards), p.cards))
    return plain[min(len(plain) - 1, int(sim.rng.random() ** 3 * len(plain)))]


def _turn(sim: _Table) -> None:
    state = sim.referee.state
    deal = state.deal
    seat = deal.turn or sim.rng.choice([s for s in SEATS if deal.active(s)])  # None: anyone may lead
    if sim.breach():
        _commit_breach(sim, seat)
        if deal.phase != "play" or state.over:
            return
    sim.wait()
    play = _choose(sim, seat)
    if play is None:
        sim.emit("pass", seat=seat)
        return
    crossing = seat not in deal.crossed
    sim.emit("play", seat=seat, cards=[card_name(c) for c in play.cards])
    left = deal.counts[seat]
    if crossing and 0 < left <= state.ruleset.report_threshold and deal.phase == "play":
        if sim.breach():
            sim.sim.expected_flags.append(("R1", seat))
            return
        sim.wait(0.2, 1.0)
        sim.emit("report", seat=seat, count=left)
        if sim.breach():
            sim.wait(0.2, 1.0)
            sim.emit("report", seat=seat, count=left)
            sim.sim.expected_flags.append(("R2", seat))


def _commit_breach(sim: _Table, seat: str) -> None:
    """One breach whose flag is certain: an out-of-turn pass, or a slow follow."""
    deal = sim.referee.state.deal
    others = [s for s in SEATS if s != seat and deal.active(s)]
    if others and sim.rng.random() < 0.5:
        culprit = sim.rng.choice(others)
        sim.wait(0.5, 2)
        sim.emit("pass", seat=culprit)
        sim.sim.expected_flags.append(("P4", culprit))
    elif deal.table is not None:
        sim.t += sim.referee.ruleset.follow_seconds + sim.referee.ruleset.countdown_seconds + 2
        sim.sim.expected_flags.append(("K3", seat))
