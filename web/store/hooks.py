"""How something built on the store (tournaments) takes part in what a table accepts.

The store does storage: sequencing, hashing, deriving through the referee. Which ruleset
a table is refereed with, and whether an event may be appended to it at all, can depend
on things the store does not own (the draw of a tournament round); a ``TableRules``
given to the ``Store`` answers both, inside the append's own transaction.
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy.engine import Connection


class TableRules(Protocol):
    def ruleset(self, conn: Connection, table_id: str) -> str | None:
        """The ruleset spec the table is refereed with, or None: the one its first event
        names, else the store's default."""

    def refusal(self, conn: Connection, table_id: str, event: dict) -> str | None:
        """Why ``event`` may not be appended to the table, or None when it may."""
