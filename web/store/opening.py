"""Opening a store: its engine, the schema brought up to date, and whether its key is the
one it was signed with."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from . import seals
from .db import WRITE, make_engine, upgrade
from .outcomes import NotAStore
from .signing import KEY_ENV, KEY_FILE_ENV, Key


def where(url: str) -> str:
    """The store's place as a message names it: the SQLite file, or the database URL."""
    parsed = make_url(url)
    return parsed.database if parsed.get_backend_name() == "sqlite" else parsed.render_as_string()


def open_engine(url: str, key: Key, create: bool, migrate: bool) -> tuple[Engine, bool]:
    """The engine of an existing store, or of a new one when ``create``; the schema upgraded
    (``migrate``). Also whether this opening made the store (its manifest is new)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and not create and parsed.database not in (None, "", ":memory:"):
        if not Path(parsed.database).is_file():
            raise NotAStore(f"no store at {where(url)}")
    engine = make_engine(url)
    made_store = False
    try:
        with engine.connect() as conn:
            names = set(inspect(conn).get_table_names())
        if not create and "table_heads" not in names:
            raise NotAStore(f"no store at {where(url)}")
        if migrate:
            with engine.connect() as conn:
                before = seals.seal_names(conn)
            upgrade(engine)
            with engine.connect() as conn:
                made = seals.seal_names(conn) - before  # by this upgrade (0003 refuses old stores with data)
            made_store = seals.MANIFEST in made
            if made:
                with engine.connect().execution_options(**WRITE) as conn, conn.begin():
                    if made_store or seals.signed_with(conn, key):
                        seals.seal_new(conn, key, made)
    except DBAPIError as exc:
        engine.dispose()
        raise NotAStore(f"{where(url)} is not a store: {str(exc.orig).splitlines()[0]}") from None
    except NotAStore:
        engine.dispose()
        raise
    except ValueError as exc:
        engine.dispose()
        raise NotAStore(f"{where(url)}: {exc}") from None
    return engine, made_store


def key_refusal(engine: Engine, key: Key, url: str) -> str | None:
    """Whether the store was signed with ``key`` (its manifest says): if not, why it must not
    be written. Appending with another key than the chain's would leave a history that no
    one key verifies."""
    with engine.connect() as conn:
        if "seals" not in inspect(conn).get_table_names() or seals.signed_with(conn, key):
            return None
    return (f"the store at {where(url)} is signed with another key than {key.source} (or its manifest "
            f"was edited: guandan-ref verify): nothing is written; open it with its own key "
            f"(--key-file, {KEY_FILE_ENV} or {KEY_ENV})")
