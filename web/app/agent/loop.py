"""The agent's main loop: frames in, RFID reads and operator events drained between frames,
status kept live."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterable
from typing import IO, Any

import numpy as np

from hardware.link import ReaderLink
from referee.jsontext import JSONTextError, loads

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


log = logging.getLogger("web.app.agent")


class OperatorInput(threading.Thread):
    """What no camera sees, typed or piped in by the table's operator: one JSON event per
    line (``session_start``, ``deal_start``, ``tribute``, ``return``...), dated by the
    agent when it arrives. A bad line is reported and skipped."""

    def __init__(self, lines: IO[str]) -> None:
        super().__init__(name="agent-operator", daemon=True)
        self.lines = lines
        self.queue: queue.Queue[dict[str, Any]] = queue.Queue()

    def run(self) -> None:
        for number, line in enumerate(self.lines, 1):
            if not line.strip():
                continue
            try:
                event = loads(line)
            except JSONTextError as exc:
                log.error("operator line %d skipped: %s", number, exc)
                continue
            if not isinstance(event, dict):
                log.error("operator line %d skipped: an event is a JSON object", number)
                continue
            self.queue.put(event)

    def drain(self, agent: TableAgent, t: float) -> None:
        while True:
            try:
                event = self.queue.get_nowait()
            except queue.Empty:
                return
            agent.manual({**event, "t": t})


def run(
    agent: TableAgent,
    frames: Iterable[tuple[int, float, np.ndarray]],
    reader: ReaderWatch | None = None,
    status: StatusLine | None = None,
    stop: threading.Event | None = None,
    operator: OperatorInput | None = None,
) -> None:
    """Feed every frame to ``agent`` until the source ends or ``stop`` is set; then let the
    observations still waiting for their order go out."""
    t = 0.0
    try:
        for index, t, image in frames:
            if stop is not None and stop.is_set():
                return
            if operator is not None:
                operator.drain(agent, t)
            if reader is not None:
                reader.drain(t)
            agent.frame(index, t, image)
            if status is not None:
                status.update()
    finally:
        agent.finish(t)
