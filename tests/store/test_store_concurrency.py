"""Two writers on one table, and a writer killed mid-append (one by one, or in batches)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

WRITER = Path(__file__).with_name("writer.py")
ROOT = Path(__file__).resolve().parents[2]


def _writer(url: str, prefix: str, count: int, seat: str, batch: int = 1) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WRITER), url, "T1", prefix, str(count), seat, str(batch)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _acks(text: str) -> dict[str, int]:
    return {eid: int(seq) for _, seq, eid in (line.split() for line in text.splitlines() if line.startswith("ack"))}


def test_two_writers_never_interleave_or_lose_an_event(store, table, db_url):
    table.append("session_start", teams={"NS": "A", "EW": "B"})
    writers = [_writer(db_url, "a", 40, "S"), _writer(db_url, "b", 40, "E", batch=10)]
    outs = [w.communicate(timeout=120) for w in writers]
    assert [w.returncode for w in writers] == [0, 0], [o[1][-2000:] for o in outs]
    acks = _acks(outs[0][0]) | _acks(outs[1][0])
    events = store.events("T1")
    assert [e["seq"] for e in events] == list(range(1, 82))
    assert {e["id"]: e["seq"] for e in events if not e["id"].startswith("c-")} == acks
    # each writer's own events are in its own order
    for prefix in "ab":
        mine = [e["id"] for e in events if str(e.get("id", "")).startswith(prefix)]
        assert mine == [f"{prefix}{i}" for i in range(40)]
    # a batch is one transaction: its events take consecutive sequence numbers
    for first in range(0, 40, 10):
        seqs = [acks[f"b{i}"] for i in range(first, first + 10)]
        assert seqs == list(range(seqs[0], seqs[0] + 10))
    table.append("session_end")
    assert store.results("T1")[0]["level_difference"] == 0  # 40 plays each: capped at 13 both
    assert store.verify(rederive=True).ok


@pytest.mark.parametrize("batch, kill_after", [(1, 60), (25, 75)])
def test_killed_writer_loses_nothing_acknowledged_and_leaves_nothing_half_written(
        store, table, db_url, batch, kill_after):
    table.append("session_start", teams={"NS": "A", "EW": "B"})
    writer = _writer(db_url, "k", 100_000, "S", batch)
    acked: dict[str, int] = {}
    for line in writer.stdout:
        _, seq, eid = line.split()
        acked[eid] = int(seq)
        if len(acked) == kill_after:
            writer.send_signal(signal.SIGKILL)
            break
    writer.wait(timeout=30)
    writer.stdout.close()
    writer.stderr.close()
    assert writer.returncode == -signal.SIGKILL
    events = store.events("T1")
    stored = {e["id"]: e["seq"] for e in events if "id" in e}
    assert acked.items() <= stored.items()
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert (len(events) - 1) % batch == 0  # whole batches only (after the session_start)
    report = store.verify(rederive=True)
    assert report.ok, report.problems
    # the table goes on: the next append continues the chain
    assert table.append("session_end").seq == len(events) + 1
    assert store.verify(rederive=True).ok
