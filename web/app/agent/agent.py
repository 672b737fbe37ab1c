"""One table's agent: frames and RFID reads in, stamped table events into the outbox.

Per frame: :class:`~.sources.FrameCheck` (a black or frozen camera is a ``fault``, never a
play) -> the recognizer's :class:`~recognizer.table.watcher.TableWatcher` (calibration,
re-calibration, one segmenter per play area) -> its observations, each with the JPEG of
the area crop it was read from -> :class:`~.fusion.Fuser` together with the RFID side's
plays -> stamped events. RFID deck checks arrive as ``deck_anomaly`` events; a lost
calibration is a camera ``fault``. A ``tick`` goes out every second of table time.

Stamping is the agent's job alone: the table id, a fresh outbox id, the source, and a time
that never goes back. An observation is dated by the first frame that showed it and
completes when the watcher has decided it (``stable_s`` later, a frame or two more when the
reads disagreed), so observations complete nearly in the order of their dates; several
completing in one frame come in the watcher's area order: each frame's observations leave
sorted by date (the order the players acted in). Ticks are dated the watcher's
:attr:`~recognizer.table.watcher.TableWatcher.delay_s` (and the fusion window) behind the
newest frame, so no observation completed
later is dated before them, and anything dated before the last event sent is moved up to
it. Each event is checked with the one parser (:func:`referee.events.parse_event`) before
it is written to the outbox."""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from hardware.reads import TagRead
from hardware.table import RfidTable
from recognizer.table.watcher import TableWatcher
from referee.events import EventError, parse_event

from .fusion import Fuser
from .outbox import Outbox
from .sources import FrameCheck

log = logging.getLogger("web.app.agent")

JPEG_QUALITY = 85
OBSERVED = ("play", "pass", "report", "take_back")


class Wakeable(Protocol):
    def wake(self) -> None: ...


@dataclass
class AgentStatus:
    """What the terminal line and the health POST show."""

    fps: float = 0.0
    last_read: str = "-"
    last_read_t: float | None = None
    calibration: str = "waiting"
    camera: str = "ok"
    frames: int = 0
    events: int = 0
    invalid: int = 0
    """Observations the event parser refused (logged, not sent)."""
    _times: deque = field(default_factory=lambda: deque(maxlen=30))


class TableAgent:
    """Feed :meth:`frame` (and :meth:`rfid_read`); operator events through :meth:`manual`.

    ``sender`` (optional) is woken whenever an event is written; ``rfid`` is the table's RFID
    side where a reader is attached. ``clock`` (wall time) only measures frames per second.
    """

    def __init__(
        self,
        table: str,
        outbox: Outbox,
        watcher: TableWatcher,
        rfid: RfidTable | None = None,
        sender: Wakeable | None = None,
        fusion_window: float = 1.5,
        tick_every: float = 1.0,
        clock=time.monotonic,
    ) -> None:
        self.table = table
        self.outbox = outbox
        self.watcher = watcher
        self.rfid = rfid
        self.sender = sender
        self.fuser = Fuser(fusion_window, ("camera", "rfid") if rfid is not None else ("camera",))
        self.check = FrameCheck()
        self.tick_every = tick_every
        self._fusion_lag = fusion_window if rfid is not None else 0.0
        self.status = AgentStatus()
        self.clock = clock
        self._last_t = -np.inf
        self._next_tick: float | None = None
        self._held: list[dict[str, Any]] = []

    @property
    def lag(self) -> float:
        """How far behind the newest frame an event may still be dated (ticks are dated so)."""
        return self.watcher.delay_s + self._fusion_lag + 0.1

    @property
    def table_time(self) -> float:
        """The time of the last event written (0 before the first)."""
        return max(self._last_t, 0.0)

    # -- inputs ---------------------------------------------------------------------
    def frame(self, index: int, t: float, image: np.ndarray) -> list[dict[str, Any]]:
        """One camera frame at table time ``t``; returns the events it wrote."""
        self._count_frame()
        out: list[dict[str, Any]] = []
        change = self.check.check(image, t)
        if change is not None:
            self.status.camera = "ok" if change == "ok" else f"fault: {change}"
            if change != "ok":
                out += self._sent({"type": "fault", "t": t, "source": "camera",
                                   "message": f"camera sends {change} frames: nothing is read until it recovers"})
        if self.check.good:
            for obs in self.watcher.process(image, t, index):
                out += self._observe(obs, index)
        return out + self.advance(t)

    def rfid_read(self, read: TagRead) -> None:
        """One raw RFID read (its ``t`` on the same clock as the frames)."""
        if self.rfid is None:
            raise ValueError("this agent has no RFID reader")
        if self.rfid.read(read) is not None:
            self.status.last_read, self.status.last_read_t = f"rfid {read.tag}", read.t

    def manual(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """An operator's event (session_start, deal_start, tribute...): stamped like the rest
        (``None``: the parser refused it, see :attr:`AgentStatus.invalid`)."""
        if event.get("type") == "deal_start" and self.rfid is not None:
            self.rfid.start_deal()
        self._release(float(event["t"]))  # what the camera saw before it goes first
        return self._emit({"source": "manual", **event})

    def advance(self, t: float) -> list[dict[str, Any]]:
        """Table time moved on to ``t``: settled RFID plays, fused events, ticks."""
        out: list[dict[str, Any]] = []
        if self.rfid is not None:
            for record in self.rfid.tick(t):
                if record["type"] == "play":
                    self._held += self.fuser.add(record)
                else:
                    self._held.append(record)
        self._held += self.fuser.flush(t)
        if self._next_tick is None:
            self._next_tick = t + self.tick_every
        while t >= self._next_tick:  # in date order with what is released now
            self._held.append({"type": "tick", "t": self._next_tick - self.lag, "source": "camera"})
            self._next_tick += self.tick_every
        return out + self._release(t)

    def finish(self, t: float) -> list[dict[str, Any]]:
        """The source ended at ``t``: everything still held or waiting for a partner goes out."""
        self._held += self.fuser.flush(float("inf"))
        return self._release(float("inf"))

    # -- observations -> events -------------------------------------------------------
    def _observe(self, obs: dict[str, Any], index: int) -> list[dict[str, Any]]:
        if obs["type"] == "calibration":
            self.status.calibration = obs["status"]
            if obs["status"] == "lost":
                return self._sent({"type": "fault", "t": obs["t"], "source": "camera",
                                   "message": "table markers lost: calibration lost, nothing is read until they are back"})
            return []
        if obs["type"] not in OBSERVED:
            return []
        evidence = obs.get("evidence") or {}
        crop = evidence.get("crop")
        frames = [self._keep_crop(Path(crop))] if crop else []
        obs = {**obs, "evidence": {"frame": evidence.get("frame", index), "frames": [f for f in frames if f]}}
        cards = " ".join(obs.get("cards", ()))
        self.status.last_read = f"{obs['seat']} {obs['type']} {cards}".strip()
        self.status.last_read_t = obs["t"]
        self._held += self.fuser.add(obs)
        return []

    def _keep_crop(self, path: Path) -> str | None:
        """The watcher's crop file -> a JPEG in the outbox (its sha256); the file goes."""
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        path.unlink(missing_ok=True)
        if image is None:
            log.warning("evidence crop %s could not be read back", path)
            return None
        ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        return self.outbox.put_evidence(jpeg.tobytes()) if ok else None

    def _release(self, until: float) -> list[dict[str, Any]]:
        """Emit the held events dated up to ``until``, in date order."""
        ready = sorted((e for e in self._held if e["t"] <= until), key=lambda e: e["t"])
        self._held = [e for e in self._held if e["t"] > until]
        out: list[dict[str, Any]] = []
        for e in ready:
            out += self._sent({**e, "evidence": contract_evidence(e.get("evidence"))} if "evidence" in e else e)
        return out

    def _sent(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """:meth:`_emit` as a list of what was written (empty if the parser refused it)."""
        stamped = self._emit(event)
        return [stamped] if stamped is not None else []

    def _emit(self, event: dict[str, Any]) -> dict[str, Any] | None:
        t = max(float(event["t"]), self._last_t)
        stamped = {k: v for k, v in event.items() if v is not None}
        stamped.update(table=self.table, t=round(t, 3))
        try:
            parse_event(stamped)  # the one parser
        except EventError as exc:  # an observation the contract cannot carry: say so, keep watching
            self.status.invalid += 1
            log.error("not sent (%s): %s", exc, stamped)
            return None
        self._last_t = t
        stamped["id"] = self.outbox.new_id()
        self.outbox.put(stamped)
        self.status.events += 1
        if self.sender is not None:
            self.sender.wake()
        return stamped

    def _count_frame(self) -> None:
        now = self.clock()
        times = self.status._times
        times.append(now)
        self.status.frames += 1
        if len(times) > 1 and times[-1] > times[0]:
            self.status.fps = (len(times) - 1) / (times[-1] - times[0])


def contract_evidence(evidence: Any) -> dict[str, Any] | None:
    """The fuser's evidence keyed by source -> the contract's ``{"frames", "tags", ...}``."""
    if not isinstance(evidence, dict):
        return None
    merged: dict[str, Any] = {}
    for source, part in evidence.items():
        if not isinstance(part, dict):
            continue
        for key, value in part.items():
            if isinstance(value, list):
                merged.setdefault(key, []).extend(value)
            else:
                merged.setdefault(key, value)
        merged.setdefault("sources", []).append(source)
    return merged or None
