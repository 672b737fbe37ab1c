"""Bringing a game file onto one table (``guandan-ref import FILE --table ID``).

A table recorded elsewhere (an agent's outbox, a file kept by hand) names its own table
and team labels; a round's draw names the table ``<event>-R<round>-T<table>`` and seats
two pairs there. Moved onto a drawn table, every event takes that table's id and the
session's teams become the draw's pair ids (the draw decides who sat where; the file's
labels are only labels). A file holding several tables is refused: which one is meant?
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select

from web.store import Store
from web.store.models import Match


class IntakeError(ValueError):
    """A file that cannot be moved onto one table as it is."""


def onto_table(store: Store, table_id: str) -> Callable[[object], object]:
    """A function moving each decoded event of one table's file onto ``table_id``."""
    with store.engine.connect() as conn:
        match = conn.execute(select(Match).where(Match.table_id == table_id)).first()
    teams = {"NS": match.ns_pair, "EW": match.ew_pair} if match is not None and match.ew_pair else None
    seen: set[str] = set()

    def move(event: object) -> object:
        if not isinstance(event, dict):
            return event  # the store names what is wrong with it, by line
        source = event.get("table")
        if isinstance(source, str):
            seen.add(source)
        if len(seen) > 1:
            raise IntakeError(f"--table {table_id}: the file holds events of tables {', '.join(sorted(seen))}; "
                              "--table takes a file of one table (nothing was imported)")
        moved = {**event, "table": table_id}
        if teams is not None and moved.get("type") == "session_start":
            moved["teams"] = dict(teams)
        return moved

    return move
