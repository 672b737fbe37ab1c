"""The app's own tables: logins, per-table agent tokens, evidence frames.

They live in the store's database (so every worker and machine sees the same logins) on
a migration branch of their own (``app``), beside the store's line; the store never reads
them. Table data itself is only ever read and written through the store.
"""

from __future__ import annotations

from sqlalchemy import Boolean, Float, Integer, LargeBinary, MetaData, String, false
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from web.store.models import NAMING


class AppBase(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class User(AppBase):
    """A login: a name, a werkzeug password hash and a role (chief, referee, scorer, viewer)."""

    __tablename__ = "app_users"
    name: Mapped[str] = mapped_column(String(80), primary_key=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[float] = mapped_column(Float)
    session_epoch: Mapped[int] = mapped_column(Integer, server_default="0")
    """Moves on at each logout, new password, new role or disabling: older cookies stop working."""
    disabled: Mapped[bool] = mapped_column(Boolean, server_default=false())


class TableToken(AppBase):
    """The one agent token of a table: only its SHA-256 is kept (the token is random)."""

    __tablename__ = "app_table_tokens"
    table_id: Mapped[str] = mapped_column(String(120), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[float] = mapped_column(Float)


class Evidence(AppBase):
    """A JPEG frame an agent sent as evidence, named by its SHA-256 (so a resend is a no-op)."""

    __tablename__ = "app_evidence"
    table_id: Mapped[str] = mapped_column(String(120), primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    content_type: Mapped[str] = mapped_column(String(40))
    data: Mapped[bytes] = mapped_column(LargeBinary)
    received_at: Mapped[float] = mapped_column(Float)
