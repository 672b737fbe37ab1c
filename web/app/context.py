"""What every view reaches for: the store, the broker, the timelines, the one append door."""

from __future__ import annotations

from flask import current_app

from web.store import Appended, Store, StoreError, get_store

from .broker import Broker
from .feed import Feed
from .public import public_summary, public_table
from .tiles import Tiles
from .timeline import Timelines


def store() -> Store:
    return get_store(current_app)


def broker() -> Broker:
    return current_app.extensions["guandan_broker"]


def timelines() -> Timelines:
    return current_app.extensions["guandan_timelines"]


def tiles() -> Tiles:
    """This process's floor tiles, shared by its live streams (built by ``create_app``)."""
    return current_app.extensions["guandan_tiles"]


def feed() -> Feed:
    """This process's live feed: one subscription for all its open streams (built by
    ``create_app``; its thread starts with the first stream)."""
    return current_app.extensions["guandan_feed"]


def delay() -> float:
    """The broadcast delay public views lag behind by (seconds of table time)."""
    return float(current_app.config.get("BROADCAST_DELAY") or 0)


def public(table_id: str) -> dict | None:
    """The public state of a table as configured (the broadcast delay applied)."""
    return public_table(timelines(), table_id, delay())


def public_tile(table_id: str) -> dict | None:
    """A table's floor tile as configured (``public.public_summary``; the delay applied)."""
    return public_summary(timelines(), table_id, delay())


def append(events: list[dict]) -> list[Appended | StoreError]:
    """Append events through the store, then tell every open page which tables moved.

    The one place the app writes table events (agents and the referee console alike). A
    duplicate is told too: it is an event sent again because its first answer never came,
    and the host that stored it may have died before its notice went out, in which case
    the pages on every other host would never learn of it.
    """
    outcomes = _writer(store())(events)
    for table_id in dict.fromkeys(e["table"] for e, o in zip(events, outcomes) if isinstance(o, Appended)):
        broker().publish(table_id)  # queued: with Redis away, open pages resume from their ids
    return outcomes


def _writer(store: Store):
    """The store's door for concurrent requests: ``submit`` (group commit across the
    worker's threads) where the store has it, else ``append_many`` (one transaction)."""
    return getattr(store, "submit", None) or store.append_many
