"""Wall times as a tournament's people read them: in the event's time zone.

Every time printed on a sheet, in the standings, in a refusal or on the dashboard is in
one zone, the setting ``GUANDAN_TIMEZONE`` (an IANA name), by default ``Asia/Shanghai``:
the seeds' events are played in China, and a director files papers in the hall's time,
not UTC.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from web.settings import BY_NAME, read

TIMEZONE_ENV = BY_NAME["TIMEZONE"].variable


class TimeZoneError(ValueError):
    """The time zone setting names no known zone."""


def zone() -> ZoneInfo:
    """The event's time zone (``$GUANDAN_TIMEZONE``, else Asia/Shanghai)."""
    name = read("TIMEZONE")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise TimeZoneError(f"{TIMEZONE_ENV}={name!r}: not a known time zone "
                            "(e.g. Asia/Shanghai, Europe/Berlin)") from None


def wall_time(at: float, seconds: bool = True) -> str:
    """``at`` (seconds since the epoch) as a date and time in the event's zone, the zone named."""
    tz = zone()
    stamp = datetime.fromtimestamp(at, tz).strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
    return f"{stamp} {tz.key}"


def clock_time(at: float) -> str:
    """Only the hour and minute of ``at`` in the event's zone (for windows within a day)."""
    return datetime.fromtimestamp(at, zone()).strftime("%H:%M")
