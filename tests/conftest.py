"""Fixtures for every test: no test reads or writes the real per-user key of the store."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def key_home(tmp_path_factory, monkeypatch):
    """A config home of the test's own (outside its ``tmp_path``, which tests use as a data
    directory): the per-user key is made there; no key comes from the shell."""
    home = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    for name in ("GUANDAN_SECRET_KEY", "GUANDAN_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    return home
