"""Seats and sides. Play goes counter-clockwise seen from above: S -> E -> N -> W."""

from __future__ import annotations

Seat = str
Side = str

SEATS: tuple[Seat, ...] = ("S", "E", "N", "W")
"""In play order."""
SIDES: tuple[Side, ...] = ("NS", "EW")
_ORDER = {s: i for i, s in enumerate(SEATS)}


class SeatError(ValueError):
    """A seat or side that is not N, E, S, W / NS, EW."""


def parse_seat(token: str) -> Seat:
    seat = token.strip().upper() if isinstance(token, str) else None
    if seat not in _ORDER:
        raise SeatError(f"not a seat: {token!r} (expected N, E, S or W)")
    return seat


def parse_side(token: str) -> Side:
    side = token.strip().upper() if isinstance(token, str) else None
    if side == "SN":
        side = "NS"
    if side == "WE":
        side = "EW"
    if side not in SIDES:
        raise SeatError(f"not a side: {token!r} (expected NS or EW)")
    return side


def next_seat(seat: Seat) -> Seat:
    """The 下家: the player on the right, who plays next."""
    return SEATS[(_ORDER[seat] + 1) % 4]


def previous_seat(seat: Seat) -> Seat:
    """The 上家: the player on the left, who played before."""
    return SEATS[(_ORDER[seat] + 3) % 4]


def partner(seat: Seat) -> Seat:
    return SEATS[(_ORDER[seat] + 2) % 4]


def side_of(seat: Seat) -> Side:
    return "NS" if seat in ("N", "S") else "EW"


def other_side(side: Side) -> Side:
    return "EW" if side == "NS" else "NS"


def seats_of(side: Side) -> tuple[Seat, Seat]:
    return ("S", "N") if side == "NS" else ("E", "W")
