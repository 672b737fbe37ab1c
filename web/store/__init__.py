"""The event store: table events, derived results (tournaments and sign-off plug in: ``web.tournament``).

``Store(url)`` is the API; ``open_store`` opens one as configured (database, data
directory, snapshot key); ``init_app(app)`` attaches one to a Flask app built by
``create_app(test_config)`` from ``app.config`` (``STORE_URL``, else ``DATA_DIR``;
``GUANDAN_SECRET_KEY`` or ``SECRET_KEY``), so that nothing is opened at import time and
every test can get a fresh database.
"""

from __future__ import annotations

from .db import data_url
from .signing import KEY_ENV, as_key, data_dir_key
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
    "KEY_ENV",
    "Appended",
    "EventRejected",
    "SequenceConflict",
    "Store",
    "StoreError",
    "VerifyReport",
    "canonical",
    "chain_hash",
    "data_url",
    "get_store",
    "init_app",
    "open_store",
    "store_url",
]

DEFAULT_DATA_DIR = "guandan-data"
EXTENSION = "guandan_store"


def store_url(db: str | None = None, data_dir: str | None = None) -> str:
    """``db`` if given, else the SQLite file in ``data_dir`` (default ``./guandan-data``)."""
    return db or data_url(data_dir or DEFAULT_DATA_DIR)


def open_store(db: str | None = None, data_dir: str | None = None,
               secret: str | bytes | None = None, **options) -> Store:
    """The store at ``db``, else the SQLite file in ``data_dir``, its snapshots signed with
    ``secret``, else with the key file kept in ``data_dir`` (default ``./guandan-data``;
    generated, mode 0600, on first use). Several machines sharing one PostgreSQL store
    should share one configured secret, or each will replay instead of using the others'
    snapshots."""
    key = as_key(secret) if secret else data_dir_key(data_dir or DEFAULT_DATA_DIR)
    return Store(store_url(db, data_dir), secret_key=key, **options)


def init_app(app, **options) -> Store:
    """Open the store named by ``app.config`` and attach it to ``app`` (one per process);
    ``options`` go to ``Store`` (the app gives its ``table_rules``).

    Each web worker process calls this through ``create_app``; the workers share the
    database, and every append re-checks the table head, so their caches never diverge.
    """
    config = app.config
    store = open_store(config.get("STORE_URL"), config.get("DATA_DIR"),
                       config.get("GUANDAN_SECRET_KEY") or config.get("SECRET_KEY"), **options)
    app.extensions[EXTENSION] = store
    return store


def get_store(app) -> Store:
    """The store ``init_app`` attached to ``app``."""
    return app.extensions[EXTENSION]
