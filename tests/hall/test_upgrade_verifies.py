"""A store made or brought up to date by ``guandan-ref db upgrade`` verifies, on SQLite and
PostgreSQL: the seal rows a migration makes are signed by the upgrade (it goes through the
store, which holds the key), on an empty database, on one then filled, and on a filled
one that an upgrade brings from the revision before each branch's newest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory

from web.app.accounts import add_user, create_token
from web.store import open_store
from web.store.db import alembic_config, current_revisions, head_revisions, make_engine
from tests.store.support import KINDS, TEST_SECRET, temporary_url

from .conftest import session_of

CLI = str(Path(sys.executable).parent / "guandan-ref")


def guandan(*args: str) -> subprocess.CompletedProcess:
    env = {"GUANDAN_SECRET_KEY": TEST_SECRET, "PATH": "/usr/bin:/bin",
           "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}  # the test's config home: its anchors
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=120)


def verified(url: str) -> str:
    """``verify``'s first line, once it said OK (exit 0)."""
    result = guandan("verify", "--db", url, "--rederive")
    assert result.returncode == 0 and result.stdout.startswith("OK"), result.stdout + result.stderr
    return result.stdout.splitlines()[0]


def fill(url: str) -> None:
    """Two tables' events, agent tokens, a referee's login (an official): rows of every
    kind a seal covers or the chain holds."""
    with open_store(url, None, TEST_SECRET) as store:
        events = session_of("U1", 1, 40) + session_of("U2", 2, 25)
        assert all(not isinstance(o, Exception) for o in store.append_many(events))
        for table in ("U1", "U2"):
            create_token(store, table)
        add_user(store, "li", "referee", "a long enough password")


def step_back(url: str) -> None:
    """Downgrade each migration branch by its newest revision (the database as an older
    release left it)."""
    cfg = alembic_config()
    script = ScriptDirectory.from_config(cfg)
    engine = make_engine(url)
    try:
        for head in sorted(script.get_heads()):
            with engine.begin() as conn:
                cfg.attributes["connection"] = conn
                command.downgrade(cfg, script.get_revision(head).down_revision)
        assert not current_revisions(engine) & head_revisions()
    finally:
        engine.dispose()


@pytest.mark.parametrize("kind", KINDS)
def test_db_upgrade_leaves_a_store_that_verifies(kind, tmp_path):
    with temporary_url(kind, tmp_path) as url:
        upgraded = guandan("db", "upgrade", "--db", url)
        assert upgraded.returncode == 0 and "(was empty)" in upgraded.stdout, upgraded.stdout + upgraded.stderr
        assert verified(url).startswith("OK: 0 table(s)")

        fill(url)
        assert verified(url).startswith("OK: 2 table(s), 65 event(s)")

        step_back(url)
        upgraded = guandan("db", "upgrade", "--db", url)
        assert upgraded.returncode == 0 and "(was " in upgraded.stdout, upgraded.stdout + upgraded.stderr
        assert verified(url).startswith("OK: 2 table(s), 65 event(s)")
