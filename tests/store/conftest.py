"""Fixtures: every test gets a fresh store, on SQLite and on PostgreSQL."""

from __future__ import annotations

import functools

import pytest

from web.store import Store
from tests.store.support import KINDS, TEST_SECRET, TallyDerivation, temporary_url


@pytest.fixture(params=KINDS)
def db_url(request, tmp_path):
    """URL of an empty database (SQLite file in tmp_path, or a PostgreSQL schema)."""
    with temporary_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def reopen(db_url):
    """Opens another ``Store`` on the test database (same snapshot key): ``reopen(**options)``."""
    return functools.partial(Store, db_url, secret_key=TEST_SECRET)


@pytest.fixture
def derivation():
    return TallyDerivation()


@pytest.fixture
def store(reopen, derivation):
    with reopen(derivation=derivation, snapshot_every=5) as s:
        s.add_official("Ref Li", "referee")
        s.add_official("Chief Wang", "chief")
        yield s


class TableActions:
    """Builds and appends the events of a tally session at one table."""

    def __init__(self, store: Store, table: str = "T1"):
        self.store, self.table, self.t = store, table, 0.0

    def event(self, type: str, **fields) -> dict:
        self.t += 1.0
        return {"type": type, "table": self.table, "t": self.t, **fields}

    def append(self, type: str, **fields):
        return self.store.append(self.event(type, **fields))

    def session(self, ns_plays: int, ew_plays: int, end: bool = True) -> None:
        self.append("session_start", teams={"NS": "A", "EW": "B"}, ruleset="competition")
        self.append("deal_start", deal=1)
        for i in range(max(ns_plays, ew_plays)):
            if i < ns_plays:
                self.append("play", seat="S", cards=["2S"], id=f"ns{i}")
            if i < ew_plays:
                self.append("play", seat="E", cards=["3S"], id=f"ew{i}")
        if end:
            self.append("session_end")


@pytest.fixture
def table(store):
    return TableActions(store)
