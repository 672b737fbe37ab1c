"""The store's secret key: where it comes from, and the MACs made with it.

Everything the store keeps is bound to this key (the event chain, table heads, the
table manifest, the seals of sign-offs, officials and tournaments, snapshots), so whoever
can rewrite the database but cannot read the key cannot rewrite history unnoticed. That
only holds if the key is *not* stored beside the data: it comes from the environment
(``GUANDAN_SECRET_KEY``), from a key file named by path (``GUANDAN_KEY_FILE`` or the
``--key-file`` option), or else from a per-user key file outside any data directory
(``$XDG_CONFIG_HOME/guandan-referee/secret.key``, default ``~/.config/...``), created once
with mode 0600. Several machines sharing one PostgreSQL store must share one key.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

KEY_ENV = "GUANDAN_SECRET_KEY"
KEY_FILE_ENV = "GUANDAN_KEY_FILE"
USER_KEY = Path("guandan-referee") / "secret.key"


class SecretKeyError(ValueError):
    """No usable key (empty, unreadable, or where it protects nothing)."""


class WrongKey(ValueError):
    """The store was signed with another key than the one it was opened with: it may be
    read and verified, never written (a write would sign with a key nothing else has)."""


class Key(bytes):
    """The store key's bytes, where they came from (named when a store refuses them) and
    the folder beside it, outside every data directory, where the store's anchors live
    (``anchors``): the key file's; the per-user one for ``$GUANDAN_SECRET_KEY``; none for a
    key a caller hands over itself (a test's), which then keeps no anchor."""

    source: str
    home: Path | None

    def __new__(cls, key: bytes, source: str, home: Path | None = None) -> Key:
        made = super().__new__(cls, key)
        made.source = source
        made.home = home
        return made


def as_key(secret: str | bytes, source: str = "the key given", home: Path | None = None) -> Key:
    """A configured secret as HMAC key bytes; an empty one is refused."""
    if isinstance(secret, Key):
        return secret
    key = secret.encode() if isinstance(secret, str) else bytes(secret)
    if not key.strip():
        raise SecretKeyError("the store's secret key is empty")
    return Key(key, source, home)


COOKIES = b"guandan-session-cookies"


def derived_key(key: bytes, purpose: bytes) -> bytes:
    """A key for another use (``COOKIES``: login cookies) made from the store key: it tells
    nothing of the store key, and nothing signed with it can pass for the store's."""
    return hmac.digest(key, purpose, "sha256")


def user_key_path() -> Path:
    """Where the per-user key lives when none is configured."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / USER_KEY


def read_key_file(path: str | Path, create: bool = False) -> Key:
    """The key kept in ``path``; with ``create``, generated (mode 0600) when missing.

    A new key is written to a private temporary file and linked into place, so two
    processes starting at once agree on one key and neither reads a half-written file.
    """
    path = Path(path)
    if not path.exists():
        if not create:
            raise SecretKeyError(f"key file {path} does not exist")
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret-")  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(secrets.token_hex(32) + "\n")
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process made it first: use theirs
        finally:
            os.unlink(tmp)
    elif path.stat().st_mode & 0o077:
        log.warning("%s can be read by other users; it should be mode 0600", path)
    try:
        return as_key(path.read_bytes().strip(), f"the key file {path}", path.parent)
    except OSError as exc:
        raise SecretKeyError(f"key file {path}: {exc.strerror}") from None


def resolve_key(secret: str | bytes | None = None, key_file: str | Path | None = None,
                refuse_inside: str | Path | None = None) -> Key:
    """The store key: ``secret``, else ``key_file``, else ``$GUANDAN_SECRET_KEY``, else
    ``$GUANDAN_KEY_FILE``, else the per-user key file; a key file is created once (0600)
    when missing.

    ``refuse_inside``: a data directory no key file may live in (a key beside the data
    it signs protects nothing).
    """
    if secret:
        return as_key(secret)
    if os.environ.get(KEY_ENV) and key_file is None:
        return as_key(os.environ[KEY_ENV], f"${KEY_ENV}", user_key_path().parent)
    named = key_file or os.environ.get(KEY_FILE_ENV)
    path = Path(named) if named else user_key_path()
    if refuse_inside is not None:
        inside = Path(refuse_inside).resolve()
        where = path.resolve()
        if where == inside or inside in where.parents:
            raise SecretKeyError(f"key file {path} is inside the data directory {refuse_inside}: keep the key "
                            f"elsewhere (--key-file, {KEY_FILE_ENV} or {KEY_ENV})")
    return read_key_file(path, create=True)


def mac(key: bytes, domain: bytes, *parts: bytes) -> str:
    """HMAC-SHA256 (hex) of length-prefixed ``parts`` under ``key``, separated by ``domain``.

    Each kind of thing the key signs has its own domain, so a MAC made for one can never
    pass as another's; the length prefixes keep part boundaries unambiguous.
    """
    message = b"".join(len(part).to_bytes(8, "big") + part for part in parts)
    return hmac.digest(key, domain + message, "sha256").hex()


def same(a: str | None, b: str) -> bool:
    """Constant-time comparison of two hex MACs (a missing one never matches)."""
    return bool(a) and hmac.compare_digest(a, b)


SNAPSHOT = b"guandan-snapshot-v2"


def snapshot_mac(key: bytes, table_id: str, seq: int, event_hash: str, blob: bytes) -> str:
    """HMAC of a snapshot bound to its table and chain position (hex)."""
    return mac(key, SNAPSHOT, table_id.encode(), str(seq).encode(), event_hash.encode(), blob)


def snapshot_is_authentic(key: bytes, tag: str | None, table_id: str, seq: int, event_hash: str,
                          blob: bytes) -> bool:
    """True only if ``tag`` was made by ``key`` for exactly this snapshot."""
    return same(tag, snapshot_mac(key, table_id, seq, event_hash, blob))
