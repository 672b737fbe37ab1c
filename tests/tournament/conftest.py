"""Fixtures: a fresh store per test, on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from web.store import Store
from web.store.testing import KINDS, TEST_SECRET, TallyDerivation, temporary_url


@pytest.fixture(params=KINDS)
def db_url(request, tmp_path):
    with temporary_url(request.param, tmp_path) as url:
        yield url


def _officials(store: Store) -> Store:
    store.add_official("Chief Wang", "chief")
    store.add_official("Ref Li", "referee")
    return store


@pytest.fixture
def store(db_url):
    """A store whose tables are refereed by the tally stand-in (fast, predictable)."""
    with Store(db_url, derivation=TallyDerivation(), secret_key=TEST_SECRET) as s:
        yield _officials(s)


@pytest.fixture
def real_store(db_url):
    """A store whose tables are refereed by the real engine."""
    with Store(db_url, secret_key=TEST_SECRET) as s:
        yield _officials(s)
