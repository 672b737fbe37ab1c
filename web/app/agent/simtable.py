"""A simulated table as its camera and reader would see it.

A seeded session of :func:`referee.simulate.simulate_session` (four bots, with breaches)
becomes a :class:`TablePlan`:

* the render script: every ``play`` is cards laid in the seat's play area, every ``pass``
  and ``report`` a token put down there; when a round ends (or a deal) the areas are
  swept; a token already lying in an area is picked up before another is put down;
* the operator's events, which no camera sees (``session_start``, ``deal_start``,
  ``tribute``, ``return``);
* the truth: every simulated event on the plan's clock, which the demo and the tests
  compare with what reached the server;
* with RFID, the tag reads of each laid card (each physical copy its own tag), and
  now and then a card of another deck swapped in: the camera sees its face as usual,
  only the reader can tell (RULES.md D3).

The plan's clock is the simulator's, with the bots' ordinary pauses (under ``BRISK_BELOW``
seconds) scaled by ``brisk`` (1: as simulated; a slow play or a break between deals keeps
its length, so the timing rules still see it), then stretched where the table needs time
the bots did not leave: a hand needs ``AREA_GAP`` between two visits to one area (arrive, lay, leave, the
area still for the watcher's ``stable_s``), a swept area forgets its last play only after
the watcher's ``hidden_s``, and an operator event waits until the camera's last
observation is out. A camera event's true time is when its cards lie there unoccluded,
the moment the watcher dates it by.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hardware.antennas import DEFAULT_ANTENNAS
from hardware.reads import TagRead
from hardware.registry import TagRegistry
from hardware.simulator import demo_registry
from recognizer.training.table_video import REACH_S, Act, Script
from referee.cards import parse_cards
from referee.engine import Referee
from referee.rulesets import Ruleset
from referee.seats import SEATS
from referee.simulate import simulate_session

from .truth import truth_records

CAMERA_TYPES = ("play", "pass", "report")
DWELL_S = 0.3
"""How long a hand stays in an area to lay cards or a token."""
AREA_GAP = 2.0
MANUAL_GAP = 2.0
QUIET_START_S = 2.0
"""The camera watches the empty table this long before the first hand comes: the watcher
learns the empty areas from its first frames, and a token laid in the first second went
unseen (a planted P4 among them)."""
BRISK_BELOW = 10.0
TAG_PROTOCOL = "jsonl"
"""The tags are the size the demo's reader family uses (:mod:`.rfidsim`)."""
SWAP_CHANCE = 0.02
"""Chance per play, with RFID, that one card is another deck's (only RFID can see it)."""


@dataclass
class TablePlan:
    table: str
    script: Script
    manual: list[dict]
    """Operator events on the plan's clock, in order."""
    truth: list[dict]
    """Every simulated event on the plan's clock, in order."""
    expected_flags: list[tuple[str, str]]
    """(rule, seat) of every breach planted, the swaps included."""
    reads: list[TagRead] = field(default_factory=list)
    registry: TagRegistry | None = None
    swaps: list[dict] = field(default_factory=list)
    """With RFID, the D3 flag each card of another deck deserves (rule, seat, at: when its
    play is seen), for :attr:`breaches`."""
    ruleset: Ruleset | None = None
    """The rules the session was played under (None: the referee's default)."""

    @property
    def breaches(self) -> list[dict]:
        """The breaches committed at this table as flag records: what a referee fed the truth
        flags, and the cards of another deck only RFID can see."""
        return [r for r in truth_records(self.truth, self.ruleset) if r["type"] == "flag"] + self.swaps

    @property
    def first_deal_end(self) -> float:
        """When (plan time) the first deal's last camera event is seen."""
        starts = [e["t"] for e in self.truth if e["type"] == "deal_start"]
        end = starts[1] if len(starts) > 1 else float("inf")
        return max(e["t"] for e in self.seen if e["t"] < end)

    @property
    def seen(self) -> list[dict]:
        """The truth a camera can see: plays, passes and reports."""
        return [e for e in self.truth if e["type"] in CAMERA_TYPES]


def plan_table(
    seed: int,
    deals: int | None,
    table: str = "T1",
    breaches: float = 0.02,
    rfid: bool = False,
    hidden_s: float = 3.0,
    brisk: float = 1.0,
    teams: dict[str, str] | None = None,
    ruleset: Ruleset | None = None,
) -> TablePlan:
    """The plan of ``deals`` deals of the session ``seed`` (fewer if the session ends first;
    None: the whole session, which ``ruleset``'s end of round (W1) ends) played by ``teams``
    (NS and EW) under ``ruleset``."""
    if deals is not None and deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    if not 0 < brisk <= 1:
        raise ValueError(f"brisk must be in (0, 1], got {brisk}")
    sim = simulate_session(seed, teams=teams, ruleset=ruleset, breaches=breaches, table=table)
    events = _first_deals(sim.events, deals)
    planner = _Planner(table, hidden_s, random.Random(f"{seed}-rfid") if rfid else None, brisk, ruleset)
    for event in events:
        planner.add(event)
    planted = _flags_before(sim, max(e["t"] for e in events), ruleset)
    return TablePlan(
        table=table,
        script=Script(duration=planner.end + 4.0, acts=tuple(planner.acts)),
        manual=planner.manual,
        truth=planner.truth,
        expected_flags=planted + [(s["rule"], s["seat"]) for s in planner.swaps],
        reads=planner.reads,
        registry=planner.registry,
        swaps=planner.swaps,
        ruleset=ruleset,
    )


def _first_deals(events: list[dict], deals: int | None) -> list[dict]:
    starts = [i for i, e in enumerate(events) if e["type"] == "deal_start"]
    end = starts[deals] if deals is not None and len(starts) > deals else len(events)
    return [e for e in events[:end] if e["type"] != "session_end"]


def _flags_before(sim, last_t: float, ruleset: Ruleset | None) -> list[tuple[str, str]]:
    """The planted flags the kept events raise: those a referee of the simulated events
    raised by ``last_t``."""
    referee = Referee(ruleset)
    for event in sim.events:
        referee.feed(event)
    raised = [(r["rule"], r["seat"]) for r in referee.records() if r["type"] == "flag" and r["at"] <= last_t]
    planted, pool = [], list(raised)
    for flag in sim.expected_flags:
        if flag in pool:
            pool.remove(flag)
            planted.append(flag)
    return planted


class _Planner:
    def __init__(self, table: str, hidden_s: float, rng: random.Random | None, brisk: float,
                 ruleset: Ruleset | None) -> None:
        self.table = table
        self.brisk = brisk
        self._sim_t = 0.0
        self._brisk_t = 0.0
        self.forget_gap = hidden_s + 0.5
        self.rng = rng
        self.referee = Referee(ruleset)
        self.acts: list[Act] = []
        self.manual: list[dict] = []
        self.truth: list[dict] = []
        self.reads: list[TagRead] = []
        self.swaps: list[dict] = []
        self.registry = demo_registry(TAG_PROTOCOL, deck=table) if rng is not None else None
        self.stranger = demo_registry(TAG_PROTOCOL, seed=99, deck="another table") if rng is not None else None
        self.shift = 0.0
        self.end = 0.0
        self.last_t = 0.0
        self.last_visit = {s: -1e9 for s in SEATS}
        self.swept = {s: -1e9 for s in SEATS}
        self.tokens: dict[str, set[str]] = {s: set() for s in SEATS}
        self.last_camera = -1e9
        self.used_tags: set[str] = set()

    def add(self, event: dict) -> None:
        gap = event["t"] - self._sim_t
        self._sim_t = event["t"]
        self._brisk_t += gap * self.brisk if gap < BRISK_BELOW else gap
        event = dict(event, t=self._brisk_t)
        kind = event["type"]
        if kind in CAMERA_TYPES:
            self._camera(event)
        else:
            t = max(event["t"] + self.shift, self.last_camera + MANUAL_GAP, self.last_t)
            self._retime(event, t)
            self.manual.append(dict(event, t=round(t, 3)))
            self.truth.append(dict(event, t=round(t, 3)))
            if kind == "deal_start":
                self.used_tags.clear()
        self._follow(event)

    def _camera(self, event: dict) -> None:
        seat, kind = event["seat"], event["type"]
        t = event["t"] + self.shift
        if kind != "play" and self.tokens[seat]:
            # one token at a time: the renderer puts a second one over the cards, where its
            # marker is not found reliably; the old one goes before the new one comes
            self._sweep(seat, max(t, self.last_t))
        t = max(t, self.last_visit[seat] + AREA_GAP, self.last_t, QUIET_START_S)
        if kind == "play":
            t = max(t, self.swept[seat] + self.forget_gap)
        self._retime(event, t)
        if kind == "play":
            cards = tuple(parse_cards(event["cards"]))
            self.acts.append(Act(t, seat, "lay", cards, DWELL_S))
            self._rfid(seat, cards, t)
        else:
            self.acts.append(Act(t, seat, kind, dwell=DWELL_S))
            self.tokens[seat].add(kind)
        self.last_visit[seat] = self.last_camera = t
        seen = round(t + DWELL_S + REACH_S, 3)  # the hand has gone: the area shows it
        self.truth.append(dict(event, t=seen))
        self.end = max(self.end, t)

    def _retime(self, event: dict, t: float) -> None:
        self.shift = t - event["t"]
        self.last_t = t
        self.end = max(self.end, t)

    def _sweep(self, seat: str, not_before: float) -> None:
        t = max(not_before, self.last_visit[seat] + AREA_GAP)
        self.acts.append(Act(t, seat, "clear", dwell=DWELL_S))
        self.last_visit[seat] = self.swept[seat] = t
        self.tokens[seat].clear()
        self.end = max(self.end, t)

    def _follow(self, event: dict) -> None:
        """Feed the truth to a referee to know when a round or a deal is over: sweep then."""
        state = self.referee.state
        round_before = state.deal.round if state is not None and state.deal is not None else None
        self.referee.feed(event)
        deal = self.referee.state.deal
        if deal is None or event["type"] not in CAMERA_TYPES:
            return
        if deal.phase == "over" or deal.round != round_before:
            for seat in SEATS:
                self._sweep(seat, self.last_t)

    def _rfid(self, seat: str, cards: tuple[int, ...], t: float) -> None:
        if self.rng is None:
            return
        antenna = {s: a for a, s in DEFAULT_ANTENNAS.items()}[seat]
        swap = self.rng.random() < SWAP_CHANCE
        for k, card in enumerate(cards):
            if swap and k == 0:
                tag = self.stranger.tags_of(card)[0]
                self.swaps.append({"type": "flag", "rule": "D3", "seat": seat, "at": round(t + DWELL_S + REACH_S, 3)})
            else:
                tag = next(tag for tag in self.registry.tags_of(card) if tag not in self.used_tags)
                self.used_tags.add(tag)
            self.reads.append(TagRead(tag, antenna, round(t + 0.05 * k, 3), reader="simulated"))

