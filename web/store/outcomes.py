"""What a write gives back: ``Appended``, or the ``StoreError`` that says why not."""

from __future__ import annotations

from dataclasses import dataclass


class StoreError(ValueError):
    """The store cannot do what was asked (not a store, inconsistent data, a lost race)."""


class NotAStore(StoreError):
    """The path or URL holds no store, or something that is not one."""


class EventRejected(StoreError):
    """An event was refused; ``reason`` says why. Nothing was appended."""

    def __init__(self, table_id: str | None, reason: str):
        super().__init__(f"table {table_id}: {reason}" if table_id else reason)
        self.table_id = table_id
        self.reason = reason


class SequenceConflict(StoreError):
    """The table's head moved: another writer appended first."""


@dataclass(frozen=True)
class Appended:
    seq: int
    hash: str
    records: list[dict]
    duplicate: bool = False
    """True when the event's ``id`` was already stored with the same content (a resend)."""
