"""Signed snapshots: a snapshot blob is unpickled only when its HMAC checks out.

Snapshots are pickles of the referee state, and unpickling runs whatever code the blob
names, so anyone able to write to the database could otherwise make the server run code
by planting a snapshot. Every snapshot row therefore carries an HMAC-SHA256 over its
table, its place in the hash chain and its bytes, made with a secret key that lives
outside the database: ``SECRET_KEY`` in the app config (``GUANDAN_SECRET_KEY`` in the
environment), else a key file generated once in the data directory (mode 0600).
A row that fails the check is ignored and the table is replayed from its events.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import tempfile
from pathlib import Path

from sqlalchemy.engine import make_url

log = logging.getLogger(__name__)

KEY_ENV = "GUANDAN_SECRET_KEY"
KEY_FILE = "secret.key"
DOMAIN = b"guandan-snapshot-v1"
"""Separates snapshot MACs from anything else the same key may sign (Flask sessions)."""


def as_key(secret: str | bytes) -> bytes:
    """A configured secret as HMAC key bytes; an empty one is refused."""
    key = secret.encode() if isinstance(secret, str) else bytes(secret)
    if not key.strip():
        raise ValueError("the secret key for snapshots is empty")
    return key


def data_dir_key(data_dir: str | Path) -> bytes:
    """The key kept in ``data_dir/secret.key``, generated (mode 0600) on first use.

    The new key is written to a private temporary file and linked into place, so two
    processes starting at once agree on one key and neither reads a half-written file.
    """
    path = Path(data_dir) / KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
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
    return as_key(path.read_text(encoding="ascii").strip())


def key_for_url(url: str) -> bytes:
    """The default key of a store: the key file beside a SQLite database file.

    Other databases have no directory of their own, so their key must be configured.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        raise ValueError(f"a {parsed.get_backend_name()} store needs a secret key for its snapshots: "
                         f"set SECRET_KEY (or {KEY_ENV}) or keep one in the data directory")
    if parsed.database in (None, "", ":memory:"):
        return secrets.token_bytes(32)  # the snapshots die with the database
    return data_dir_key(Path(parsed.database).parent)


def snapshot_mac(key: bytes, table_id: str, seq: int, event_hash: str, blob: bytes) -> str:
    """HMAC-SHA256 of a snapshot bound to its table and chain position (hex)."""
    mac = hmac.new(key, DOMAIN, hashlib.sha256)
    mac.update(f"\n{table_id}\n{seq}\n{event_hash}\n".encode())
    mac.update(blob)
    return mac.hexdigest()


def snapshot_is_authentic(key: bytes, mac: str | None, table_id: str, seq: int, event_hash: str,
                          blob: bytes) -> bool:
    """True only if ``mac`` was made by ``key`` for exactly this snapshot."""
    if not mac:
        return False
    return hmac.compare_digest(mac, snapshot_mac(key, table_id, seq, event_hash, blob))
