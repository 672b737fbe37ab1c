"""The agent's main loop: frames in, RFID reads drained between frames, status kept live."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable

import numpy as np

from hardware.link import ReaderLink

from .agent import TableAgent
from .status import StatusLine


class ReaderWatch:
    """Drains an RFID link into the agent and turns a lost reader into a ``fault`` event."""

    def __init__(self, agent: TableAgent, link: ReaderLink, gone_after_s: float = 3.0) -> None:
        self.agent, self.link, self.gone_after_s = agent, link, gone_after_s
        self.status = "waiting"
        self._down_since: float | None = None

    def drain(self, t: float) -> None:
        while True:
            try:
                read = self.link.queue.get_nowait()
            except queue.Empty:
                break
            self.agent.rfid_read(read)
        if self.link.connected.is_set():
            self._down_since = None
            self.status = "ok"
            return
        self._down_since = t if self._down_since is None else self._down_since
        if self.status != "gone" and t - self._down_since >= self.gone_after_s:
            self.status = "gone"
            self.agent.manual({"type": "fault", "t": t, "source": "rfid",
                               "message": f"RFID reader not connected for {self.gone_after_s:g} s"})


def run(
    agent: TableAgent,
    frames: Iterable[tuple[int, float, np.ndarray]],
    reader: ReaderWatch | None = None,
    status: StatusLine | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Feed every frame to ``agent`` until the source ends or ``stop`` is set."""
    for index, t, image in frames:
        if stop is not None and stop.is_set():
            return
        if reader is not None:
            reader.drain(t)
        agent.frame(index, t, image)
        if status is not None:
            status.update()
