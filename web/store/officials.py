"""The registered officials (referees and the chief referee): who may correct and rule."""

from __future__ import annotations

from sqlalchemy import Engine, delete, insert, select
from sqlalchemy.engine import Connection

from .authority import ROLES
from .db import WRITE
from .models import Official


def add_official(engine: Engine, name: str, role: str) -> None:
    """Register ``name`` with ``role`` (one of ``authority.ROLES``), replacing any earlier role."""
    if role not in ROLES:
        raise ValueError(f"role {role!r}: expected one of {', '.join(ROLES)}")
    if not name.strip():
        raise ValueError("an official needs a name")
    with engine.connect().execution_options(**WRITE) as conn, conn.begin():
        conn.execute(delete(Official).where(Official.name == name))
        conn.execute(insert(Official).values(name=name, role=role))


def role_of(conn: Connection, name: str) -> str | None:
    """The role of official ``name``, or None when no such official is registered."""
    return conn.execute(select(Official.role).where(Official.name == name)).scalar_one_or_none()
