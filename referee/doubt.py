"""Suspect the read before the player: what a deal's context says about a camera read.

The camera is a doubtful witness of *which cards* were laid; the deal is not. Two decks
hold two of each face, a seat holds so many cards, a play must be a combination that
beats the table, and with known hands a seat can lay only what it holds. A read (the
reader's best guess) and its alternatives (``play.alternatives``, with probabilities) are
each checked against those facts; what survives is renormalised with the mass of the
readings the reader did not list, which no fact can rule out. So context settles a read
silently when its alternatives are impossible, and a person is asked only when it cannot.

Pure functions over the deal's state; no I/O.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from .cards import COPIES, Card, card_name, cards_name, rank_of, suit_of
from .combos import CombType, Reading, default_reading
from .events import Play
from .seats import Seat
from .state import CameraRead, DealState


@dataclass(frozen=True)
class Candidate:
    """One reading of a play's cards: the read, an alternative the reader listed, or one
    that the camera's known failings suggest (two equal cards overlapping, counted once)."""

    label: str
    cards: tuple[Card, ...]
    p: float | None
    """The reader's probability; ``None`` for a reading the reader did not list."""
    doubled: bool = False
    """A face read once taken twice: two equal cards overlapping show one index."""
    swapped: bool = False
    """A face the seat does not hold taken as one it does (:func:`_swapped`)."""


@dataclass(frozen=True)
class Judged:
    candidate: Candidate
    reading: Reading | None
    """How the cards play at this point (``None``: no combination; for one that fails to
    beat the table, its own strongest reading)."""
    excluded_by: str | None
    """The fact that rules this reading out, or ``None`` when it is possible."""
    fails_to_beat: bool = False
    """A combination the seat could hold that does not beat the table: the one fact that
    is as much about the table's read as about this one."""
    unlayable: bool = False
    """Ruled out by what was laid or could be at all (fewer cards than the camera saw, two of
    each face, the seat's count, its hand), not by the rules of play: it is the camera's
    mistake, never a player's breach."""

    @property
    def possible(self) -> bool:
        return self.excluded_by is None


def is_doubtful(play: Play, confirmed: frozenset[str]) -> bool:
    """A camera read that no referee has confirmed: the evidence alone does not back a
    breach, and its cards may be weighed against the context. Reads typed by hand, read by
    RFID or agreed by camera and RFID (``fused``) are taken as read."""
    return play.source == "camera" and (play.id is None or play.id not in confirmed)


def candidates(play: Play, hand: Counter | None = None) -> list[Candidate]:
    """The read, then the reader's alternatives (most likely first), then each face read
    once doubled (two equal cards overlapping show one index pair), then, with the seat's
    ``hand`` known, a face the hand does not hold read in place of one it does
    (:func:`_swapped`), then the read without the cards the hand does not hold (a card seen
    that was never laid). A face read wrong comes before a card never laid: it keeps the
    count the camera saw, and a count guessed wrong is carried to the end of the deal (the
    seat goes out a play early or late). Without a hand a read with a card too many is not
    guessed at; such a read stands as read and is asked about."""
    read_p = 1.0 if play.confidence is None else play.confidence
    out = [Candidate("read", play.cards, read_p)]
    out += [Candidate(f"alternative {i}", alt.cards, alt.p) for i, alt in enumerate(play.alternatives or (), 1)]
    counts = Counter(play.cards)
    listed = {tuple(sorted(c.cards)) for c in out}
    for face in sorted(counts):
        doubled = tuple(sorted(play.cards + (face,)))
        if counts[face] < COPIES and doubled not in listed:
            out.append(Candidate(f"two {card_name(face)} counted once", doubled, None, doubled=True))
            listed.add(doubled)
    if hand is not None:
        out += _swapped(counts, hand, listed)
        kept = tuple((counts & hand).elements())
        if kept and len(kept) < len(play.cards) and tuple(sorted(kept)) not in listed:
            phantom = tuple((counts - Counter(kept)).elements())
            out.append(Candidate(f"without {cards_name(phantom)}, not in {play.seat}'s hand", kept, None))
    return out


def _swapped(counts: Counter, hand: Counter, listed: set[tuple[Card, ...]]) -> list[Candidate]:
    """A read with one face its seat does not hold: that face read in place of each face the
    seat holds beside the rest of the read, the most alike first (same rank, then same suit).
    Weighing keeps the possible ones (:data:`SWAPS` at most)."""
    missing = counts - hand
    if sum(missing.values()) != 1:
        return []
    (face,) = missing
    rest = counts - missing
    held_faces = sorted(hand - rest, key=lambda c: (rank_of(c) != rank_of(face), suit_of(c) != suit_of(face), c))
    out = []
    for other in held_faces:
        cards = tuple(sorted((rest + Counter((other,))).elements()))
        if cards not in listed:
            out.append(Candidate(f"{card_name(other)} read as {card_name(face)}", cards, None, swapped=True))
            listed.add(cards)
    return out


def _over(deal: DealState, cards: tuple[Card, ...]) -> list[Card]:
    """The faces ``cards`` would show more often than two decks hold (a card laid by a read
    already in question may be that read's mistake: it does not count twice)."""
    return sorted(c for c, n in Counter(cards).items()
                  if deal.played_faces.get(c, 0) - deal.doubted_faces.get(c, 0) + n > COPIES)


def held(deal: DealState, seat: Seat) -> Counter | None:
    """With known hands, what the seat holds by the reads; a card one of its reads in question
    laid may be that read's mistake, so it is not gone (as it does not count towards two of
    each)."""
    if deal.hands is None:
        return None
    hand = Counter(deal.hands[seat])
    for read in deal.camera_reads:
        if read.seat == seat and read.raised:
            hand.update(read.cards)
    return hand


def _not_held(deal: DealState, seat: Seat, cards: tuple[Card, ...]) -> list[Card]:
    """With known hands, the faces of ``cards`` the seat no longer holds by the reads."""
    hand = held(deal, seat)
    return [] if hand is None else sorted(c for c, n in Counter(cards).items() if hand[c] < n)


@dataclass(frozen=True)
class SeenAgain:
    """A read showing faces that earlier camera reads laid already: a face a third time in
    the deal (``faces``), or, with known hands, one the seat's own earlier reads took from
    its hand (``laid``). One of the reads is wrong (the item names them all); with those
    faces in question the read is possible."""

    faces: tuple[Card, ...]
    laid: tuple[Card, ...]
    earlier: tuple[CameraRead, ...]
    judged: Judged
    """The read judged with those faces taken as in question."""


def seen_again(deal: DealState, seat: Seat, play: Play, table: Reading | None) -> SeenAgain | None:
    """A card read twice too many is a misread of one of its reads: when every face the read
    shows too often was laid by an unconfirmed camera read (any seat's for two decks' worth,
    the seat's own for a hand that no longer holds it), and the read is possible once those
    copies are in question, suspect the reads together (None otherwise)."""
    faces, laid = _over(deal, play.cards), _not_held(deal, seat, play.cards)
    earlier = tuple(r for r in deal.camera_reads
                    if set(faces) & set(r.cards) or (r.seat == seat and set(laid) & set(r.cards)))
    covered = all(any(f in r.cards for r in earlier) for f in faces) and \
        all(any(f in r.cards for r in earlier if r.seat == seat) for f in laid)
    if not (faces or laid) or not covered:
        return None
    doubted = dict(deal.doubted_faces)
    for face in faces:
        doubted[face] = doubted.get(face, 0) + 1
    hands = None if deal.hands is None else {**deal.hands, seat: deal.hands[seat] + laid}
    judged = judge(dataclasses.replace(deal, doubted_faces=doubted, hands=hands), seat,
                   Candidate("read", play.cards, play.confidence), play.declared, table, play.min_cards)
    return SeenAgain(tuple(faces), tuple(laid), earlier, judged) if judged.possible else None


def judge(deal: DealState, seat: Seat, candidate: Candidate, declared: CombType | None,
          table: Reading | None, min_cards: int | None = None) -> Judged:
    """Whether ``seat`` could have laid ``candidate`` now (``table``: the combination to
    beat, ``None`` when leading or when the table's own read is unknown; ``min_cards``: the
    fewest cards the camera saw laid)."""
    cards = candidate.cards
    if min_cards is not None and len(cards) < min_cards:
        return Judged(candidate, None, f"the camera saw at least {min_cards} cards laid", unlayable=True)
    over = _over(deal, cards)
    if over:
        seen = ", ".join(f"{card_name(c)} seen {deal.played_faces.get(c, 0)} times" for c in sorted(over))
        return Judged(candidate, None, f"two decks hold two of each ({seen} in this deal)", unlayable=True)
    if len(cards) > deal.counts[seat] and seat not in deal.doubted:  # a count in question follows the table
        return Judged(candidate, None, f"{seat} holds only {deal.counts[seat]} cards", unlayable=True)
    missing = _not_held(deal, seat, cards)
    if missing:
        return Judged(candidate, None, f"{seat} does not hold {cards_name(missing)}", unlayable=True)
    if default_reading(cards, deal.level, None, declared) is None:
        return Judged(candidate, None, f"{cards_name(cards)} is not a combination")
    reading = default_reading(cards, deal.level, table, declared)
    if reading is None:
        return Judged(candidate, default_reading(cards, deal.level, None, declared),
                      f"{cards_name(cards)} does not beat {cards_name(deal.table_cards)}", fails_to_beat=True)
    return Judged(candidate, reading, None)


@dataclass(frozen=True)
class Weighing:
    """All readings of one play judged against the deal, with what the context leaves."""

    judged: tuple[Judged, ...]
    min_cards: int | None = None
    """The fewest cards the camera saw laid (``play.min_cards``)."""

    @property
    def read(self) -> Judged:
        return self.judged[0]

    def best(self) -> Judged | None:
        """The most likely possible reading: listed ones by probability, then unlisted."""
        possible = [j for j in self.judged if j.possible]
        listed = [j for j in possible if j.candidate.p is not None]
        if listed:
            return max(listed, key=lambda j: j.candidate.p)
        return possible[0] if possible else None

    def posterior(self, judged: Judged) -> float:
        """``judged``'s probability once impossible readings are ruled out: its own over the
        possible listed ones plus the mass the reader left unlisted."""
        listed = [j for j in self.judged if j.candidate.p is not None]
        rest = max(0.0, 1.0 - sum(j.candidate.p for j in listed))
        kept = sum(j.candidate.p for j in listed if j.possible) + rest
        return judged.candidate.p / kept if kept > 0 and judged.candidate.p is not None else 0.0

    def face_posterior(self) -> float:
        """The read's probability among the readings the reader listed that are still
        possible: how sure the reader is of the *faces* once the deal has ruled some out.
        (The mass it left unlisted is its doubt whether a card is missing or extra, which
        the seat's count settles later: its reports, its going out.)"""
        p = self.read.candidate.p
        listed = p + sum(j.candidate.p for j in self.judged[1:] if j.possible and j.candidate.p is not None)
        return p / listed if listed > 0 else 0.0

    def alike(self) -> tuple[Judged, ...]:
        """The listed readings still possible, when every one of them plays exactly as the
        read does (same combination, rank and wildcards: a suit read wrong that the game
        does not see); empty when any plays otherwise."""
        others = tuple(j for j in self.judged[1:] if j.possible and j.candidate.p is not None)
        return others if all(j.reading == self.read.reading for j in others) else ()

    def settled(self, min_confidence: float) -> tuple[Judged, float, str] | None:
        """The reading the deal settles a read on, its probability and why, when the read is not what was
        laid (``unlayable``) and one reading is left: the only one the reader listed that
        is possible (when the read's own confidence is below ``min_confidence``), or, where
        the camera saw more cards than it read and the reader listed none possible, the only
        possible face read once taken twice. Nobody need be asked: it is a wrong face or a
        hidden index, not a player's breach. ``None`` when the read is possible, is ruled out
        by the rules of play (a breach looks just like that), or more readings than one, or
        none, are left; and when the reader was sure of a face the deal rules out (a card of
        another deck, a hand typed wrong look just like that): a person looks."""
        if self.read.possible or not self.read.unlayable:
            return None
        possible = [j for j in self.judged[1:] if j.possible]
        listed = [j for j in possible if j.candidate.p is not None]
        sure = self.read.candidate.p is not None and self.read.candidate.p >= min_confidence
        if len(listed) == 1 and not sure:
            return listed[0], self.posterior(listed[0]), "the reader's other reading, the only one it listed that the deal leaves"
        short = self.min_cards is not None and len(self.read.candidate.cards) < self.min_cards
        if not listed and short and len(possible) == 1 and possible[0].candidate.doubled:
            return possible[0], self.read.candidate.p, \
                "two equal cards one over the other showing one index (the faces as read), the only reading the deal leaves"
        return None

    def ruled_out(self) -> tuple[str, ...]:
        """Why each listed alternative is impossible ("8H: two decks hold two of each ...")."""
        return tuple(f"{cards_name(j.candidate.cards)}: {j.excluded_by}" for j in self.judged[1:]
                     if j.candidate.p is not None and not j.possible)

    def readings(self) -> dict[str, list[str]]:
        """The review's ``readings``: the read and every reading that is still possible."""
        out = {"read": [card_name(c) for c in self.read.candidate.cards]}
        for j in self.judged[1:]:
            if j.possible:
                out[j.candidate.label] = [card_name(c) for c in j.candidate.cards]
        return out


SWAPS = 3
"""The most faces read in place of others that a weighing keeps: beyond a few, which face it
was is anyone's guess, and a review offering them all would bury the read."""


def weigh(deal: DealState, play: Play, table: Reading | None) -> Weighing:
    judged = [judge(deal, play.seat, c, play.declared, table, play.min_cards)
              for c in candidates(play, held(deal, play.seat))]
    swaps = [j for j in judged if j.candidate.swapped and j.possible][:SWAPS]
    return Weighing(tuple(j for j in judged if not j.candidate.swapped or j in swaps), play.min_cards)
