"""What a table admits beyond the event itself, judged in the append's own transaction:
the time bound, who may correct and rule (``authority``), what a tournament's draw allows
(``hooks.TableRules``), and the ruleset a new table is refereed with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from referee.events import Correction, Event, Penalty, SessionStart

from . import authority
from .envelope import Item
from .hooks import TableRules
from .models import TableEvent
from .officials import role_of
from .outcomes import EventRejected

TIME_LEAD_S = 3600.0
TIME_RATE = 16.0
"""A table's time may run ahead of its last event by ``TIME_LEAD_S`` (an hour: a whole
session imported at once, or an agent's clock ahead of the server's) plus ``TIME_RATE``
times the server's clock since that event was stored (a recording replayed at up to 16x)."""
FIRST_T_MAX = 3.2e8
"""A table's first time: table time counts from the table's start (a recording's, or a
camera's monotonic clock since its machine booted, under ten years); a Unix date is not."""
READS_THE_TABLE = (Correction, SessionStart)
"""Events whose checks read the table's stored events (a tournament's: its results), so the
rows a transaction holds back must be written first."""


@dataclass(frozen=True)
class Admission:
    """The store's settings these checks use: its clock (wall time, for the time bound only),
    the S4 correction ``windows``, the tournaments' ``table_rules`` and ``default_ruleset``."""

    clock: Callable[[], float]
    windows: authority.Windows
    table_rules: TableRules | None
    default_ruleset: str

    def check(self, conn: Connection, item: Item, last: tuple[float, float] | None) -> None:
        """Raise ``EventRejected`` unless the table admits ``item`` (``last``: its last
        event's ``t`` and when that was stored; None for a new table)."""
        self.check_time(item.table_id, last, item.event.t)
        self.check_authority(conn, item.table_id, item.event)
        refusal = self.table_rules.refusal(conn, item.table_id, item.data) if self.table_rules else None
        if refusal:
            raise EventRejected(item.table_id, refusal)

    def check_time(self, tid: str, last: tuple[float, float] | None, t: float) -> None:
        """Refuse a time past the table's bound: ``TIME_LEAD_S`` of table time after its last
        event, plus ``TIME_RATE`` times the server's clock since that event was stored.
        Table time only goes forward (the referee refuses a step back), so one far-future
        time would leave the table no time for any true event after it."""
        if last is None:
            if t > FIRST_T_MAX:
                raise EventRejected(tid, f"t={t:g} is past the bound of a table's first time, t<={FIRST_T_MAX:g} "
                                         "(table time counts from the table's own start, not a calendar date)")
            return
        last_t, last_at = last
        waited = max(0.0, self.clock() - last_at)
        bound = last_t + TIME_LEAD_S + TIME_RATE * waited
        if t > bound:
            raise EventRejected(tid, f"t={t:g} is past this table's time bound t<={bound:g} (its last event's "
                                     f"t={last_t:g}, + {TIME_LEAD_S:g} s, + {TIME_RATE:g}x the {waited:.0f} s of "
                                     "the server's clock since that event was stored)")

    def check_authority(self, conn: Connection, tid: str, event: Event) -> None:
        """A penalty or correction must come from a registered official who may give it (now)."""
        if not isinstance(event, (Correction, Penalty)):
            return
        by = event.by
        if not isinstance(by, str) or not by.strip():
            raise EventRejected(tid, f"{event.kind}: 'by' must name the official who made it")
        role = role_of(conn, by)
        try:
            if isinstance(event, Penalty):
                authority.check_penalty(by, role, str(event.level))  # as written, for the refusal's words
                return
            original = conn.execute(
                select(TableEvent.seq).where(TableEvent.table_id == tid, TableEvent.event_id == event.of)
            ).scalar_one_or_none()
            if original is None:
                raise authority.NotAuthorized(f"correction of {event.of!r}: no event with that id at this table")
            end_t = conn.execute(
                select(func.min(TableEvent.t)).where(
                    TableEvent.table_id == tid, TableEvent.type == "session_end", TableEvent.seq > original)
            ).scalar_one_or_none()
            authority.check_correction(by, role, event.t, end_t, self.windows)
        except authority.NotAuthorized as exc:
            raise EventRejected(tid, str(exc)) from None

    def ruleset_for(self, conn: Connection, tid: str, first: Event) -> str:
        """A new table's ruleset: the one ``table_rules`` gives it (a tournament's); else the
        one its first event names, else the default."""
        given = self.table_rules.ruleset(conn, tid) if self.table_rules else None
        if given:
            return given
        named = first.ruleset if isinstance(first, SessionStart) else None
        return named or self.default_ruleset
