"""SQLite on a full disk and in a read-only data directory: a clear one-line error, the
table left as it was before the failed write (never half-written), and, once space or
write access is back, appends that carry on where they stopped.

The small disk is a tmpfs and the read-only directory a read-only bind mount (the suite
runs as root on the project's machines; both are unmounted afterwards)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from web.app import create_app
from web.app.broker import LocalBroker
from web.store import data_url, get_store, open_store
from tests.store.support import TEST_SECRET

from .conftest import session_of, tokens

CLI = str(Path(sys.executable).parent / "guandan-ref")
ENV = {"GUANDAN_SECRET_KEY": TEST_SECRET, "PATH": "/usr/bin:/bin"}


@contextmanager
def mounted(target: Path, *mount_args: str):
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", *mount_args, str(target)], check=True)
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=True)


@contextmanager
def read_only(folder: Path):
    """``folder`` seen read-only (a read-only bind mount over itself): even root cannot write."""
    with mounted(folder, "--bind", str(folder)):
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)
        yield folder


def guandan(*args: str) -> subprocess.CompletedProcess:
    env = {**ENV, "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}  # the test's config home: its anchors
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=120)


def write_sessions(path: Path, tables: int, count: int = 10_000) -> dict[str, list[dict]]:
    events = {f"F{i}": session_of(f"F{i}", i, count) for i in range(tables)}
    path.write_text("".join(json.dumps(e) + "\n" for table in events.values() for e in table))
    return events


def assert_whole_and_verified(data: Path, events: dict[str, list[dict]]) -> dict[str, int]:
    """Each table holds a leading part of its events (whole transactions), the chain and the
    derived state check out; returns the events stored per table."""
    with open_store(data_url(data), None, TEST_SECRET) as store:
        report = store.verify(rederive=True)
        assert report.ok, report.problems
        stored = {t: [e["id"] for e in store.events(t)] for t in events}
    for table, ids in stored.items():
        assert ids == [e["id"] for e in events[table]][:len(ids)], table
    return {t: len(ids) for t, ids in stored.items()}


def test_import_onto_a_full_disk_is_one_clear_line_and_no_half_table(tmp_path):
    events = write_sessions(tmp_path / "hall.jsonl", tables=8)
    with mounted(tmp_path / "disk", "-t", "tmpfs", "-o", "size=1200k", "tmpfs") as disk:
        done = guandan("import", str(tmp_path / "hall.jsonl"), "--data", str(disk / "data"))
        assert done.returncode == 1
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert "database or disk is full" in done.stderr
        counts = assert_whole_and_verified(disk / "data", events)
        assert 0 < sum(counts.values()) < sum(len(e) for e in events.values())


def test_a_full_disk_under_the_api_is_503_then_recovers(tmp_path):
    with mounted(tmp_path / "disk", "-t", "tmpfs", "-o", "size=3m", "tmpfs") as disk:
        (disk / "data").mkdir()
        url = data_url(disk / "data")
        app = create_app({"STORE_URL": url, "GUANDAN_SECRET_KEY": TEST_SECRET, "TESTING": True,
                          "BROKER": LocalBroker()})
        token = tokens(url, ["D1"])["D1"]
        client = app.test_client()
        session = session_of("D1", 3, 60)

        def post(chunk: list[dict]):
            return client.post("/api/tables/D1/events", json=chunk, headers={"Authorization": f"Bearer {token}"})

        assert post(session[:20]).status_code == 200
        filler = disk / "filler"
        with filler.open("wb") as f:  # take every free block
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        refused = [post(session[i:i + 5]) for i in range(20, 60, 5)]
        assert {r.status_code for r in refused} == {503}
        assert all(r.headers["Retry-After"] and "Traceback" not in r.get_data(as_text=True) for r in refused)
        filler.unlink()
        for i in range(20, 60, 5):  # the agent resends; nothing of the refused posts was kept
            assert [r["status"] for r in post(session[i:i + 5]).get_json()["results"]] == ["accepted"] * 5
        get_store(app).close()
        assert assert_whole_and_verified(disk / "data", {"D1": session}) == {"D1": 60}


def test_a_read_only_data_directory_is_one_clear_line_and_changes_nothing(tmp_path):
    events = write_sessions(tmp_path / "hall.jsonl", tables=1, count=250)
    first = tmp_path / "first.jsonl"
    first.write_text("".join(json.dumps(e) + "\n" for e in events["F0"][:100]))
    data = tmp_path / "data"
    assert guandan("import", str(first), "--data", str(data)).returncode == 0

    def fingerprint() -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(data.iterdir())}

    before = fingerprint()
    with read_only(data):
        done = guandan("import", str(tmp_path / "hall.jsonl"), "--data", str(data))
        assert done.returncode in (1, 2), done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert "read-only" in done.stderr or "readonly" in done.stderr or "unable to open" in done.stderr
        assert fingerprint() == before
    assert assert_whole_and_verified(data, events) == {"F0": 100}
    assert guandan("import", str(tmp_path / "hall.jsonl"), "--data", str(data)).returncode == 0
    assert assert_whole_and_verified(data, events) == {"F0": len(events["F0"])}
