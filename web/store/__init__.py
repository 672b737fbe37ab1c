"""The event store: table events, derived results, sign-off, tournaments.

``Store(url)`` is the API; ``init_app(app)`` attaches one to a Flask app built by
``create_app(test_config)`` from ``app.config`` (``STORE_URL``, else ``DATA_DIR``), so that
nothing is opened at import time and every test can get a fresh database.
"""

from __future__ import annotations

from .db import data_url
from .store import (
    Appended,
    EventRejected,
    SequenceConflict,
    Store,
    StoreError,
    VerifyReport,
    canonical,
    chain_hash,
)

__all__ = [
    "Appended", "EventRejected", "SequenceConflict", "Store", "StoreError", "VerifyReport",
    "canonical", "chain_hash", "data_url", "init_app", "get_store", "store_url",
]

DEFAULT_DATA_DIR = "guandan-data"
EXTENSION = "guandan_store"


def store_url(db: str | None = None, data_dir: str | None = None) -> str:
    """``db`` if given, else the SQLite file in ``data_dir`` (default ``./guandan-data``)."""
    return db or data_url(data_dir or DEFAULT_DATA_DIR)


def init_app(app) -> Store:
    """Open the store named by ``app.config`` and attach it to ``app`` (one per process).

    Each web worker process calls this through ``create_app``; the workers share the
    database, and every append re-checks the table head, so their caches never diverge.
    """
    store = Store(store_url(app.config.get("STORE_URL"), app.config.get("DATA_DIR")))
    app.extensions[EXTENSION] = store
    return store


def get_store(app) -> Store:
    """The store ``init_app`` attached to ``app``."""
    return app.extensions[EXTENSION]
