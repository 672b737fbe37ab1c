"""The floor's tables as every page and live stream sees them: which tables there are, each
one's tile, and which still lag behind a broadcast delay.

One home for what the floor, the flag console, the results, the API and the worker's live
feed all read; it sits above ``context`` (the store, broker and timelines) and below the
pages, so that no page reaches into the API module for it.
"""

from __future__ import annotations

from . import accounts, context


def table_ids() -> list[str]:
    """Every known table: with events, or with an agent token."""
    store = context.store()
    return sorted({h["table"] for h in store.tables()} | accounts.token_tables(store))


def tile(table_id: str, health: dict[str, dict] | None = None) -> dict:
    """A table's floor tile: its public summary and its agent's last health report
    (from ``health``, every agent's reports when the caller read them already)."""
    summary = context.public_tile(table_id) or {"table": table_id, "seq": 0}
    return {**summary, "health": (context.broker().health() if health is None else health).get(table_id)}


def lagging(table_ids: set[str]) -> set[str]:
    """Those of ``table_ids`` whose public view lags their head (a broadcast delay)."""
    return {t for t in table_ids if tile(t, {})["seq"] < _head(t)}


def _head(table_id: str) -> int:
    head = context.timelines().head(table_id)
    return 0 if head is None else head["head_seq"]
