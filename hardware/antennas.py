"""Which seat's play area each antenna covers, from a small TOML file.

::

    # antenna index (0-based, as `rfid listen --json` prints it) = seat
    [antennas]
    0 = "S"
    1 = "E"
    2 = "N"
    3 = "W"

Without a file, antennas 0..3 cover S, E, N, W (play order), which is how the reference
firmware and a four-antenna UHF reader are wired in ``hardware/firmware/README.md``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from referee.seats import SEATS, Seat, SeatError, parse_seat

AntennaMap = dict[int, Seat]
DEFAULT_ANTENNAS: AntennaMap = dict(enumerate(SEATS))


def parse_antenna_map(table: object, where: str = "antenna map") -> AntennaMap:
    """Validate ``{"0": "S", ...}``; errors name ``where`` and the bad entry."""
    if not isinstance(table, dict) or not table:
        raise ValueError(f"{where}: expected an [antennas] table of index = seat")
    result: AntennaMap = {}
    for key, value in table.items():
        try:
            index = int(key)
        except ValueError:
            raise ValueError(f"{where}: antenna {key!r} is not an index (0, 1, 2 ...)") from None
        if not 0 <= index < 16:
            raise ValueError(f"{where}: antenna {index} out of range 0..15")
        try:
            result[index] = parse_seat(value)
        except SeatError as exc:
            raise ValueError(f"{where}: antenna {index}: {exc}") from None
    return result


def load_antenna_map(path: str | Path) -> AntennaMap:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    return parse_antenna_map(data.get("antennas"), str(path))
