"""Who may correct or rule, and until when (S4 correction windows, X6 who rules).

Pure functions over plain values so that the rules are tested without a database; the
store looks up the role of ``by`` and the end of the session and calls them.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.events import PENALTY_LEVELS

ROLES = ("referee", "chief")
CHIEF_ONLY_PENALTIES = ("foul", "loss")
"""X6: a referee gives warnings and violations; the chief referee fouls and losses."""


class NotAuthorized(ValueError):
    """A correction or ruling by someone who may not make it (now)."""


@dataclass(frozen=True)
class Windows:
    """S4 correction windows, in seconds after the round (session) ended.

    ``entry_s``: an entry error may be corrected by any referee within 10 minutes after
    the round; later only the chief referee may correct (the chief may set other limits,
    hence a value, not a constant).
    """

    entry_s: float = 600.0


def check_correction(by: str, role: str | None, t: float, session_end_t: float | None,
                     windows: Windows) -> None:
    """Raise ``NotAuthorized`` unless ``by`` (with ``role``) may correct at table time ``t``.

    ``session_end_t`` is the table time the corrected event's session ended (None while
    it is still being played: any referee may then correct).
    """
    if role not in ROLES:
        raise NotAuthorized(f"correction by {by!r}: not a registered official")
    if role == "chief" or session_end_t is None:
        return
    late = t - session_end_t
    if late > windows.entry_s:
        raise NotAuthorized(
            f"correction by {by!r} at t={t:g}: {late:g} s after the round ended, past the "
            f"{windows.entry_s:g} s window (S4); only the chief referee may correct now"
        )


def check_penalty(by: str, role: str | None, level: str) -> None:
    """Raise ``NotAuthorized`` unless ``by`` (with ``role``) may give a ``level`` penalty."""
    if level not in PENALTY_LEVELS:
        raise NotAuthorized(f"penalty level {level!r}: expected one of {', '.join(PENALTY_LEVELS)}")
    if role not in ROLES:
        raise NotAuthorized(f"penalty by {by!r}: not a registered official")
    if level in CHIEF_ONLY_PENALTIES and role != "chief":
        raise NotAuthorized(f"penalty {level!r} by {by!r}: only the chief referee gives fouls and losses (X6)")
