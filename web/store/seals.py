"""Signed lists beside the event chains: the table manifest and the row seals.

The manifest (seal ``tables``) lists every table id; it changes only when a table is
created, so a deleted table (head, events and all) is named by ``verify``. The row seals
(``rows:<table>``) cover the tables that are not event chains: sign-offs (with their links and
doors), officials and tournaments (tournaments, pairs, rounds, matches, rulings). Each holds a digest of every row by
primary key and is re-signed whenever a transaction of this store writes to that table,
whoever's code the write comes from: ``install`` watches the engine's statements and
re-seals at commit, with the seal row locked so that two writers re-seal in turn. A row
added, changed or removed outside the store (without the key) no longer matches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator

from sqlalchemy import Engine, event, inspect, select, text, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.dml import UpdateBase

from .chain import canonical, manifest_mac
from .models import Match, Official, Pair, Round, Seal, SignLink, SignOff, SignOffDoor, Tournament, TournamentRuling
from .signing import WrongKey, same

MANIFEST = "tables"
SEALED_ROWS = {m.__tablename__: m for m in (Official, SignOff, Tournament, Pair, Round, Match, TournamentRuling,
                                           SignLink, SignOffDoor)}
APP_ROWS = {"app_users": ("name",), "app_table_tokens": ("table_id",)}
"""The app's tables sealed too (logins with their password hashes and roles, agent
tokens), named with their primary keys: they live in the store's database, on the app's
migration branch, and the store never imports the app's models."""
SEALED = (*SEALED_ROWS, *APP_ROWS)
TOUCHED = "guandan_sealed_rows_touched"


def seal_name(table: str) -> str:
    return f"rows:{table}"


def row_digests(conn: Connection, table: str) -> dict[str, str]:
    """Primary key ("a/b") -> digest of every column of each row of ``table``."""
    return {key: _digest(values) for key, values, _ in _rows(conn, table)}


def _rows(conn: Connection, table: str) -> Iterator[tuple[str, list, dict]]:
    """(primary key "a/b", every column's value in the table's order, the row) of each row."""
    if table in APP_ROWS:  # every column, in the table's order, as the driver gives it
        for row in conn.execute(text(f"SELECT * FROM {table}")).mappings():
            yield "/".join(str(row[c]) for c in APP_ROWS[table]), list(row.values()), dict(row)
        return
    t = SEALED_ROWS[table].__table__
    pk = list(t.primary_key.columns)
    for row in conn.execute(select(t).order_by(*pk)).mappings():
        yield "/".join(str(row[c.name]) for c in pk), [row[c.name] for c in t.columns], dict(row)


def _digest(values: list) -> str:
    return hashlib.sha256(canonical(values).encode()).hexdigest()[:32]


def sealed_rows(conn: Connection, key: bytes, table: str) -> dict[str, dict]:
    """Primary key -> row, of the rows of ``table`` that are as its signed seal has them:
    the rows a server may trust (a login or a token written into the database without the
    key is not among them). One read of the table and one of its seal."""
    row = conn.execute(select(Seal).where(Seal.name == seal_name(table))).first()
    if row is None or not same(row.mac, manifest_mac(key, row.name, row.body)):
        return {}
    sealed = json.loads(row.body)
    return {k: found for k, values, found in _rows(conn, table) if sealed.get(k) == _digest(values)}


def _write(conn: Connection, key: bytes, name: str, body: str) -> None:
    conn.execute(update(Seal).where(Seal.name == name).values(body=body, mac=manifest_mac(key, name, body)))


def reseal(conn: Connection, key: bytes, tables: set[str]) -> None:
    """Re-sign the row seals of ``tables`` from what this transaction sees."""
    for table in sorted(tables):
        name = seal_name(table)
        conn.execute(select(Seal.name).where(Seal.name == name).with_for_update()).first()
        _write(conn, key, name, canonical(row_digests(conn, table)))


def add_tables(conn: Connection, key: bytes, table_ids: list[str]) -> None:
    """Add new table ids to the manifest (its row locked: creators take turns)."""
    row = conn.execute(select(Seal.body).where(Seal.name == MANIFEST).with_for_update()).one()
    ids = sorted(set(json.loads(row.body)) | set(table_ids))
    _write(conn, key, MANIFEST, canonical(ids))


def seal_names(conn: Connection) -> set[str]:
    """The names of the seal rows the database holds (none before the store's schema 0004)."""
    if "seals" not in inspect(conn).get_table_names():
        return set()
    return set(conn.execute(select(Seal.name)).scalars())


def seal_new(conn: Connection, key: bytes, names: set[str]) -> None:
    """Sign the seals a schema upgrade just made (all of them for a new store): the manifest
    as it lists, each sealed table as it now is. Only ever for seal rows that did not exist
    before this upgrade: a seal removed or unsigned later is a finding, never re-signed."""
    if MANIFEST in names:
        _write(conn, key, MANIFEST, canonical(sorted(
            json.loads(conn.execute(select(Seal.body).where(Seal.name == MANIFEST)).scalar_one()))))
    reseal(conn, key, {t for t in SEALED if seal_name(t) in names})


def install(engine: Engine, key: bytes, refusal: Callable[[], str | None] = lambda: None,
            sealed: Callable[[], None] = lambda: None) -> None:
    """Re-seal, at commit, every sealed table a transaction on ``engine`` wrote to; while
    ``refusal()`` names a reason (the store's key is not this one), refuse such a commit
    with ``WrongKey`` instead of sealing with a key the rest of the store was not made with;
    ``sealed()`` is told of each commit that re-sealed (the store's anchor then moves on)."""

    @event.listens_for(engine, "after_execute")
    def _note(conn, clause, *_args) -> None:
        table = getattr(clause, "table", None) if isinstance(clause, UpdateBase) else None
        if table is not None and table.name in SEALED:
            conn.info.setdefault(TOUCHED, set()).add(table.name)

    @event.listens_for(engine, "commit")
    def _seal(conn) -> None:
        touched = conn.info.pop(TOUCHED, None)
        if touched:
            if (reason := refusal()) is not None:
                raise WrongKey(reason)
            reseal(conn, key, touched)
            sealed()

    @event.listens_for(engine, "rollback")
    def _forget(conn) -> None:
        if not conn.invalidated:  # a connection cut mid-transaction: its info went with it, and
            conn.info.pop(TOUCHED, None)  # reading it would hide the cut behind PendingRollbackError


def signed_with(conn: Connection, key: bytes) -> bool:
    """True if the store's manifest (signed when the store was made, and at each new table)
    is signed with ``key``: the check that a store was opened with its own key."""
    row = conn.execute(select(Seal).where(Seal.name == MANIFEST)).first()
    return row is not None and same(row.mac, manifest_mac(key, MANIFEST, row.body))


def check_manifest(conn: Connection, key: bytes, table_ids: set[str]) -> list[tuple[str | None, str]]:
    """Findings (table, message) of the manifest against the tables present."""
    row = conn.execute(select(Seal).where(Seal.name == MANIFEST)).first()
    if row is None:
        return [(None, "the table manifest is missing")]
    if not same(row.mac, manifest_mac(key, MANIFEST, row.body)):
        return [(None, "the table manifest is not signed by this store's key (edited or another key)")]
    listed = set(json.loads(row.body))
    return ([(t, "listed in the signed manifest but missing (table deleted)") for t in sorted(listed - table_ids)]
            + [(t, "not in the signed manifest (table inserted outside the store)") for t in sorted(table_ids - listed)])


def check_rows(conn: Connection, key: bytes, table: str) -> list[str]:
    """Findings of one sealed table: rows added, changed or removed since it was sealed."""
    name = seal_name(table)
    row = conn.execute(select(Seal).where(Seal.name == name)).first()
    if row is None:
        return [f"{table}: its seal is missing"]
    if not same(row.mac, manifest_mac(key, name, row.body)):
        return [f"{table}: its seal is not signed by this store's key (edited or another key)"]
    sealed, now = json.loads(row.body), row_digests(conn, table)
    return ([f"{table} row {k}: added outside the store" for k in sorted(now.keys() - sealed.keys())]
            + [f"{table} row {k}: removed outside the store" for k in sorted(sealed.keys() - now.keys())]
            + [f"{table} row {k}: changed outside the store" for k in sorted(now.keys() & sealed.keys())
               if now[k] != sealed[k]])
