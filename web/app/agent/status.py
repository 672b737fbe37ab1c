"""The agent's status: one live terminal line and the health body the floor page shows."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from .agent import TableAgent
from .sender import Sender


def health(agent: TableAgent) -> dict[str, Any]:
    """The body of ``POST /api/tables/<id>/health`` (contract fields)."""
    s = agent.status
    return {
        "fps": round(s.fps, 1),
        "last_read": s.last_read_t,
        "calibration": s.calibration,
        "outbox": agent.outbox.depth(),
        "camera": s.camera,
    }


def line(agent: TableAgent, sender: Sender | None) -> str:
    s = agent.status
    if sender is None:
        server = "no server"
    elif sender.reachable is None:
        server = "server ?"
    elif not sender.reachable:
        server = "server UNREACHABLE"
    else:
        server = "server ok" if sender.problem is None else f"server refuses: {sender.problem}"
    when = f" @{s.last_read_t:.1f}s" if s.last_read_t is not None else ""
    return (f"{agent.table}  {s.fps:5.1f} fps  last read: {s.last_read}{when}  calibration: {s.calibration}  "
            f"camera: {s.camera}  outbox: {agent.outbox.depth()}  {server}")


class StatusLine:
    """Rewrites one terminal line at most every ``every`` seconds (only on a terminal)."""

    def __init__(self, agent: TableAgent, sender: Sender | None, out: TextIO = sys.stderr, every: float = 0.5) -> None:
        self.agent, self.sender, self.out, self.every = agent, sender, out, every
        self._last = 0.0
        self.enabled = out.isatty()

    def update(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or (not force and now - self._last < self.every):
            return
        self._last = now
        width = 160
        self.out.write("\r" + line(self.agent, self.sender)[:width].ljust(width))
        self.out.flush()

    def close(self) -> None:
        if self.enabled:
            self.update(force=True)
            self.out.write("\n")
            self.out.flush()
