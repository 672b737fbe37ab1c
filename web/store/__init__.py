"""The event store: table events in keyed hash chains, derived results, verification
(tournaments and sign-off plug in: ``web.tournament``).

``Store(url)`` is the API; ``open_store`` opens one as configured (database, data
directory, key); ``init_app(app)`` attaches one to a Flask app from ``app.config``
(``STORE_URL``, else ``DATA_DIR``; ``GUANDAN_SECRET_KEY``, else ``GUANDAN_KEY_FILE``,
else the per-user key file: the key the command line resolves, never Flask's cookie key
``SECRET_KEY``), so that nothing is opened at import time and every test can get a fresh
database. The key is never kept in the data directory (``signing``).
"""

from __future__ import annotations

from pathlib import Path

from .chain import canonical, content_id
from .db import DB_FILE, data_url
from .outcomes import Appended, EventRejected, NotAStore, SequenceConflict, StoreError
from .signing import KEY_ENV, KEY_FILE_ENV, SecretKeyError, WrongKey, as_key, resolve_key, user_key_path
from .store import Store
from .verify import Finding, VerifyReport

__all__ = [
    "DB_FILE",
    "DEFAULT_DATA_DIR",
    "KEY_ENV",
    "KEY_FILE_ENV",
    "Appended",
    "EventRejected",
    "Finding",
    "NotAStore",
    "SecretKeyError",
    "SequenceConflict",
    "Store",
    "StoreError",
    "VerifyReport",
    "WrongKey",
    "canonical",
    "content_id",
    "data_url",
    "get_store",
    "init_app",
    "open_store",
    "resolve_key",
    "store_url",
    "user_key_path",
]

DEFAULT_DATA_DIR = "guandan-data"
EXTENSION = "guandan_store"


def store_url(db: str | None = None, data_dir: str | None = None) -> str:
    """``db`` if given, else the SQLite file in ``data_dir`` (default ``./guandan-data``)."""
    return db or data_url(data_dir or DEFAULT_DATA_DIR)


def open_store(db: str | None = None, data_dir: str | None = None, secret: str | bytes | None = None,
               key_file: str | None = None, create: bool = True, **options) -> Store:
    """The store at ``db``, else the SQLite file in ``data_dir`` (default ``./guandan-data``).

    The key: ``secret``, else ``key_file``, else the environment, else the per-user key
    file; a key file inside the data directory is refused. ``create``: make the data
    directory and the store when missing (else ``NotAStore``, and nothing is created).
    """
    folder = Path(data_dir or DEFAULT_DATA_DIR)
    key = resolve_key(secret, key_file, refuse_inside=None if db else folder)
    if db is None and create:
        folder.mkdir(parents=True, exist_ok=True)
    return Store(store_url(db, str(folder)), secret_key=key, create=create, **options)


def init_app(app, **options) -> Store:
    """Open the store named by ``app.config`` and attach it to ``app`` (one per process);
    ``options`` go to ``Store`` (the app gives its ``table_rules``).

    Each web worker process calls this through ``create_app``; the workers share the
    database, and every append re-checks the table head, so their caches never diverge.
    """
    config = app.config
    secret = config.get("GUANDAN_SECRET_KEY")
    store = open_store(config.get("STORE_URL"), config.get("DATA_DIR"), secret and as_key(secret, KEY_ENV, user_key_path().parent),
                       config.get("GUANDAN_KEY_FILE"), **options)
    app.extensions[EXTENSION] = store
    return store


def get_store(app) -> Store:
    """The store ``init_app`` attached to ``app``."""
    return app.extensions[EXTENSION]
