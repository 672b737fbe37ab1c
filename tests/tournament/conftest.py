"""Fixtures: a fresh store per test, on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from web.store import Store
from web.store.testing import KINDS, TEST_SECRET, TallyDerivation, temporary_url


@pytest.fixture(params=KINDS)
def store(request, tmp_path):
    with temporary_url(request.param, tmp_path) as url, Store(url, derivation=TallyDerivation(), secret_key=TEST_SECRET) as s:
        s.add_official("Chief Wang", "chief")
        s.add_official("Ref Li", "referee")
        yield s
