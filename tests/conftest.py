"""Fixtures for every test: no test reads or writes the real per-user key of the store."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _own_key_home(tmp_path, monkeypatch):
    """No test reads or makes the real per-user key file, nor sees a key from the shell."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("GUANDAN_SECRET_KEY", "GUANDAN_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
