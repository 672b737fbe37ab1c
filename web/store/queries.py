"""The statements every write transaction and live read runs, built once.

Building an expression (and its cache key) for each commit was a large share of a small
commit, and building the read of a table's new events showed in a live page's profile
beside running it (bench/NOTES.md); so these are module constants, or one statement per
list size (``functools.lru_cache``).
"""

from __future__ import annotations

import functools

from sqlalchemy import TextClause, bindparam, select, text, update
from sqlalchemy.engine import Connection

from .models import TableEvent, TableHead

IN_CHUNK = 500
"""Values per SQL ``IN`` or ``VALUES`` list (SQLite caps the parameters of one statement)."""
EVENTS_AFTER = (select(TableEvent.seq, TableEvent.body)
                .where(TableEvent.table_id == bindparam("table_id"), TableEvent.seq > bindparam("after"))
                .order_by(TableEvent.seq))
LOCK_HEADS = (select(TableHead).where(TableHead.table_id.in_(bindparam("tids", expanding=True)))
              .order_by(TableHead.table_id).with_for_update())
MOVE_HEAD = (update(TableHead)
             .where(TableHead.table_id == bindparam("b_tid"), TableHead.head_seq == bindparam("b_start"))
             .values(head_seq=bindparam("head_seq"), head_hash=bindparam("head_hash"),
                     generation=bindparam("generation"), mac=bindparam("mac")))
"""Moves a head only from where the transaction found it (else no row matches: a lost race)."""


@functools.lru_cache(maxsize=IN_CHUNK)
def known_ids_query(pairs: int) -> TextClause:
    """Which of ``pairs`` (table, event id) pairs are stored: a join of the unique (table,
    event id) index with the pairs as a ``VALUES`` list (parameters ``t0, e0, t1, e1, ...``).

    Asked in every write transaction. Not a row-value ``IN``: SQLite answers that by
    scanning the whole events table (its query plan says ``SCAN``), so every commit slowed
    as the hall's record grew; nor two ``IN`` lists, which it searches for every
    combination (200 tables of a group commit: 40,000 searches). The join searches once
    per pair, in both engines. One statement per size, built once."""
    return text(f"WITH asked (table_id, event_id) AS (VALUES {values_list(pairs, 'te')}) "
                "SELECT e.table_id, e.event_id, e.seq, e.hash, e.body FROM asked "
                "JOIN table_events e ON e.table_id = asked.table_id AND e.event_id = asked.event_id")


@functools.lru_cache(maxsize=IN_CHUNK)
def events_between_query(tables: int) -> TextClause:
    """The events with ``lo < seq <= hi`` of each of ``tables`` tables (parameters ``t0, l0,
    h0, t1, ...``): the ranges as a ``VALUES`` list joined with the events' key, as in
    ``known_ids_query``, so that both engines search each table's range once."""
    return text(f"WITH asked (table_id, lo, hi) AS (VALUES {values_list(tables, 'tlh')}) "
                "SELECT e.table_id, e.seq, e.body FROM asked JOIN table_events e "
                "ON e.table_id = asked.table_id AND e.seq > asked.lo AND e.seq <= asked.hi "
                "ORDER BY e.table_id, e.seq")


def values_list(rows: int, names: str) -> str:
    """``(:a0, :b0), (:a1, :b1), ...``: ``rows`` rows of the one-letter parameters ``names``."""
    return ", ".join("(" + ", ".join(f":{name}{i}" for name in names) + ")" for i in range(rows))


def values_params(rows: list[tuple], names: str) -> dict:
    """The parameters of ``values_list(len(rows), names)`` for ``rows``."""
    return {f"{name}{n}": value for n, row in enumerate(rows) for name, value in zip(names, row)}


def lock_heads(conn: Connection, tids: list[str]) -> dict[str, TableHead]:
    """The head rows of ``tids``, locked in table order (PostgreSQL: no deadlock between writers)."""
    heads = {}
    for i in range(0, len(tids), IN_CHUNK):
        rows = conn.execute(LOCK_HEADS, {"tids": tids[i:i + IN_CHUNK]})
        heads.update({r.table_id: r for r in rows})
    return heads


def known_ids(conn: Connection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, str, str]]:
    """(table, event id) -> (seq, link, body) of the pairs already stored (one query per chunk)."""
    asked = sorted(set(keys))
    known = {}
    for i in range(0, len(asked), IN_CHUNK):
        chunk = asked[i:i + IN_CHUNK]
        rows = conn.execute(known_ids_query(len(chunk)), values_params(chunk, "te"))
        known.update({(r.table_id, r.event_id): (r.seq, r.hash, r.body) for r in rows})
    return known
