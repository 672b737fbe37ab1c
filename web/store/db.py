"""Database engines and schema migrations for the store.

SQLite is the embedded default (a file in the data directory, WAL mode so readers never
block the writer); PostgreSQL takes over when a hall outgrows one machine. Both go through
the same SQLAlchemy code. SQLite write transactions start with ``BEGIN IMMEDIATE`` so two
processes appending at once queue up on the write lock instead of failing half-way.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

DB_FILE = "guandan.sqlite3"
SQLITE_BUSY_TIMEOUT_MS = 30_000
WRITE = {"store_write": True}
"""Execution options marking a connection that will write (``BEGIN IMMEDIATE`` on SQLite)."""


def data_url(data_dir: str | Path) -> str:
    """The SQLite URL of the store kept in ``data_dir`` (nothing is created here)."""
    path = Path(data_dir)
    return f"sqlite:///{(path / DB_FILE).resolve()}"


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL, a busy timeout and explicit transactions."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True)
    engine = create_engine(url)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (see _on_begin)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=FULL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:
        write = conn.get_execution_options().get("store_write")
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def alembic_config() -> Config:
    """Alembic configuration pointing at the migrations shipped in this package."""
    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("web.store") / "migrations"))
    return cfg


def upgrade(engine: Engine, revision: str = "heads") -> None:
    """Bring the schema up to ``revision`` (idempotent; safe on an existing store)."""
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def current_revisions(engine: Engine) -> set[str]:
    """The revisions the database is at: one per migration branch (store, app)."""
    with engine.connect() as conn:
        return set(MigrationContext.configure(conn).get_current_heads())


def head_revisions() -> set[str]:
    """The newest revision of each migration branch the package ships."""
    heads = set(ScriptDirectory.from_config(alembic_config()).get_heads())
    assert heads, "the package ships no migration"
    return heads
