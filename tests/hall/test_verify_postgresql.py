"""``verify`` across PostgreSQL: events written by two server workers check out; a tamper
made directly in the database (an edited event, a removed event, a forged snapshot) is
named by table and sequence. And ``guandan-ref db upgrade`` brings an empty database to
the newest schema of every migration branch, idempotently."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import create_engine, text

from web.store.db import head_revisions
from tests.store.support import TEST_SECRET

from .conftest import Agent, run_agents, session_of, tokens

CLI = str(Path(sys.executable).parent / "guandan-ref")
ENV = {"GUANDAN_SECRET_KEY": TEST_SECRET, "PATH": "/usr/bin:/bin"}


def guandan(*args: str) -> subprocess.CompletedProcess:
    env = {**ENV, "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}  # the test's config home: its anchors
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_tamper_in_postgresql_is_named_by_table_and_seq(serve, pg_url, private_redis):
    server = serve(pg_url, workers=2, redis=private_redis.url)
    keys = tokens(pg_url, ["V1", "V2", "V3"])
    agents = [Agent(server.base, t, keys[t], session_of(t, seed, 230), batch=7) for seed, t in enumerate(keys)]
    run_agents(agents, timeout=60)  # past 200 events: each table has a signed snapshot
    clean = guandan("verify", "--db", pg_url, "--rederive")
    assert clean.returncode == 0 and clean.stdout.startswith("OK: 3 table(s), 690 event(s)"), clean.stdout

    engine = create_engine(pg_url)
    with engine.begin() as conn:
        assert conn.execute(text("SELECT count(*) FROM snapshots")).scalar() >= 3
        conn.execute(text("UPDATE table_events SET body = replace(body, '\"seat\":\"', '\"seat\":\"S') "
                          "WHERE table_id = 'V2' AND seq = 57"))
        conn.execute(text("DELETE FROM table_events WHERE table_id = 'V3' AND seq = 230"))
        conn.execute(text("UPDATE snapshots SET blob = blob || '\\x00'::bytea WHERE table_id = 'V1'"))
    engine.dispose()
    found = guandan("verify", "--db", pg_url)
    assert found.returncode == 1
    lines = found.stdout.splitlines()
    assert any(line.startswith("table V1:") and "snapshot" in line and "200" in line for line in lines), lines
    assert any(line.startswith("table V2:") and "seq 57" in line for line in lines), lines
    assert any(line.startswith("table V3:") and "230" in line for line in lines), lines
    assert lines[-2].startswith("BROKEN (3 finding(s))") and "3 of 3 table(s) checked" in lines[-1]


def test_db_upgrade_migrates_an_empty_database_once(pg_url):
    first = guandan("db", "upgrade", "--db", pg_url)
    assert first.returncode == 0, first.stderr
    for revision in head_revisions():
        assert revision in first.stdout
    assert "(was empty)" in first.stdout
    again = guandan("db", "upgrade", "--db", pg_url)
    assert again.returncode == 0 and "was" not in again.stdout
    with create_engine(pg_url).connect() as conn:
        names = set(conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"))
                    .scalars())
    assert {"table_events", "table_heads", "snapshots", "app_users", "app_table_tokens"} <= names
