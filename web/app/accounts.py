"""Logins and table tokens, kept in the app's tables of the store's database.

Passwords are stored as werkzeug hashes; a table token is 32 random bytes, shown once,
and only its SHA-256 is kept (a random token needs no slow hash: there is nothing to
guess). Officials who can rule (chief, referee) are also registered with the store, whose
authority checks (S4, X6) look them up by name.

Both tables are sealed by the store's key (``web.store.seals``): a login or token row
written into the database without the key is never trusted (and ``verify`` names it).
Each login has a session generation: a logout, a new password or role, or disabling it
moves it on, and every cookie made before stops working.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time

from sqlalchemy import delete, insert, select, update
from werkzeug.security import check_password_hash, generate_password_hash

from web.store import Store
from web.store.db import WRITE

from .models import TableToken, User

ROLES = ("chief", "referee", "scorer", "viewer")
"""From most to least trusted; anonymous visitors are viewers."""
STORE_ROLES = {"chief": "chief", "referee": "referee"}
"""App roles that are officials in the store's sense (may rule and correct)."""
CHIEF_NAME = "chief"
log = logging.getLogger(__name__)


class AccountError(ValueError):
    """A login or token request that cannot be done (unknown role, empty name...)."""


def add_user(store: Store, name: str, role: str, password: str) -> None:
    """Create or replace the login ``name`` (a chief or referee becomes a store official)."""
    name = name.strip()
    if role not in ROLES:
        raise AccountError(f"role {role!r}: expected one of {', '.join(ROLES)}")
    if not name or len(name) > 80:
        raise AccountError("a login needs a name of 1 to 80 characters")
    if len(password) < 8:
        raise AccountError("a password needs at least 8 characters")
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        epoch = conn.execute(select(User.session_epoch).where(User.name == name)).scalar_one_or_none()
        conn.execute(delete(User).where(User.name == name))
        conn.execute(insert(User).values(name=name, role=role, created_at=time.time(), disabled=False,
                                         session_epoch=0 if epoch is None else epoch + 1,
                                         password_hash=generate_password_hash(password)))
    if role in STORE_ROLES:
        store.add_official(name, STORE_ROLES[role])


def end_sessions(store: Store, name: str, disable: bool = False) -> None:
    """End every session of the login ``name`` (its logout); ``disable``: and refuse it from
    now on, until ``add_user`` gives it a password again. Refused for an unknown login."""
    values = {"session_epoch": User.session_epoch + 1, **({"disabled": True} if disable else {})}
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        if conn.execute(update(User).where(User.name == name).values(**values)).rowcount != 1:
            raise AccountError(f"no login {name!r}")


def user(store: Store, name: str) -> User | None:
    """The login ``name`` as its seal vouches for it, else None (unknown, or written into
    the database without the key: a forged password hash or role is never trusted)."""
    with store.engine.connect() as conn:
        if conn.execute(select(User.name).where(User.name == name)).first() is None:
            return None
        row = store.sealed_rows(User.__tablename__, conn).get(name)
    if row is None:
        log.warning("login %r does not match its seal (written without the store's key): refused", name)
        return None
    return User(**row)


def authenticate(store: Store, name: str, password: str) -> User | None:
    """The user if ``password`` is theirs and the login is enabled, else None (same work
    either way)."""
    found = user(store, name)
    if found is None or found.disabled:
        check_password_hash(generate_password_hash("x"), password)  # no timing hint of which names exist
        return None
    return found if check_password_hash(found.password_hash, password) else None


def has_users(store: Store) -> bool:
    with store.engine.connect() as conn:
        return conn.execute(select(User.name).limit(1)).first() is not None


def ensure_chief(store: Store, password: str | None = None) -> str | None:
    """On a store without logins, create the chief referee's; return the password (else None).

    ``password`` (``GUANDAN_ADMIN_PASSWORD``) is taken if given, else a random one is made
    and returned so that it can be shown exactly once.
    """
    if has_users(store):
        return None
    password = password or secrets.token_urlsafe(12)
    add_user(store, CHIEF_NAME, "chief", password)
    return password


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(store: Store, table_id: str) -> str:
    """A new agent token for ``table_id`` (replacing any earlier one); only its hash is kept."""
    table_id = table_id.strip()
    if not table_id or len(table_id) > 120:
        raise AccountError("a table id has 1 to 120 characters")
    token = secrets.token_hex(32)  # 256 bits; never starts with "-", which the agent's --token would refuse
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        conn.execute(delete(TableToken).where(TableToken.table_id == table_id))
        conn.execute(insert(TableToken).values(table_id=table_id, token_hash=token_digest(token),
                                               created_at=time.time()))
    return token


def token_table(store: Store, token: str) -> str | None:
    """The table a bearer token belongs to, or None (also for a token row its seal does not vouch for)."""
    digest = token_digest(token)
    with store.engine.connect() as conn:
        if conn.execute(select(TableToken.table_id).where(TableToken.token_hash == digest)).first() is None:
            return None
        sealed = store.sealed_rows(TableToken.__tablename__, conn).values()
    return next((row["table_id"] for row in sealed if row["token_hash"] == digest), None)


def token_owners(store: Store) -> dict[str, str]:
    """Every agent token's digest -> its table (one query for a whole hall), the tokens
    their seal vouches for only."""
    return {row["token_hash"]: row["table_id"] for row in store.sealed_rows(TableToken.__tablename__).values()}


def token_tables(store: Store) -> set[str]:
    """Tables that have an agent token (known tables, even before their first event)."""
    with store.engine.connect() as conn:
        return set(conn.execute(select(TableToken.table_id)).scalars())
