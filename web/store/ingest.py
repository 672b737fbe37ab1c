"""Importing a JSON Lines file of table events: bounded, whole-file, per-table atomic.

Every line is read with a bounded length and decoded by ``referee.jsontext`` (the limits
of every door) before anything is stored; then each table's events go to the store in
one transaction (``Store.append_many``), so a table gets all of its good events from the
file or none. The summary names every rejected line by number and reason. Events without
an ``id`` get a content-derived one, so importing a file twice stores it once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from referee import jsontext

from .outcomes import StoreError
from .store import Store

MAX_LINE_BYTES = jsontext.DEFAULT_LIMITS.max_bytes
MAX_EVENTS = 1_000_000
"""Events of one import (a whole file is held while it is validated): split larger files."""


@dataclass
class ImportSummary:
    accepted: int = 0
    duplicates: int = 0
    tables: set[str] = field(default_factory=set)
    rejected: list[tuple[int, str]] = field(default_factory=list)
    """(line number, reason) of every line not stored, in line order."""


def lines(stream: BinaryIO, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """(number, bytes) of each line, or (number, None) for a line over ``limit`` bytes,
    which is skipped without ever being held whole."""
    number = 0
    while True:
        chunk = stream.readline(limit + 1)
        if not chunk:
            return
        number += 1
        if len(chunk) > limit and not chunk.endswith(b"\n"):
            while chunk and not chunk.endswith(b"\n"):
                chunk = stream.readline(limit + 1)
            yield number, None
        else:
            yield number, chunk


def import_stream(store: Store, stream: BinaryIO,
                  onto: Callable[[object], object] | None = None) -> ImportSummary:
    """Import every event of ``stream``; see the module docstring. ``onto`` changes each
    decoded event before it is stored (``import --table`` moves a file onto one table)."""
    summary = ImportSummary()
    numbers: list[int] = []
    events: list[object] = []
    for number, line in lines(stream):
        if line is None:
            summary.rejected.append((number, f"line longer than {MAX_LINE_BYTES} bytes"))
            continue
        if not line.strip():
            continue
        try:
            event = jsontext.loads(line.rstrip(b"\r\n"))
            events.append(onto(event) if onto else event)
        except jsontext.JSONTextError as exc:
            summary.rejected.append((number, str(exc)))
            continue
        numbers.append(number)
        if len(events) > MAX_EVENTS:
            raise StoreError(f"more than {MAX_EVENTS} events in one file: split it (nothing was imported)")
    for number, event, outcome in zip(numbers, events, store.append_many(events)):
        if isinstance(outcome, Exception):
            summary.rejected.append((number, str(outcome)))
        else:
            summary.tables.add(event["table"])
            if outcome.duplicate:
                summary.duplicates += 1
            else:
                summary.accepted += 1
    summary.rejected.sort()
    return summary
