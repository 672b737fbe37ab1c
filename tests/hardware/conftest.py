"""Shared helpers: a read collector and waiting on threads without fixed sleeps."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from hardware.reads import ReaderStats, TagRead


class Collector:
    """A sink that keeps reads, and a fake transport that keeps what a protocol writes."""

    def __init__(self) -> None:
        self.reads: list[TagRead] = []
        self.written: list[bytes] = []
        self.stats = ReaderStats()

    def __call__(self, read: TagRead) -> None:
        self.reads.append(read)

    def write(self, data: bytes) -> None:
        self.written.append(data)

    @property
    def tags(self) -> list[str]:
        return [r.tag for r in self.reads]


@pytest.fixture
def sink() -> Collector:
    return Collector()


def wait_until(predicate: Callable[[], object], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)
