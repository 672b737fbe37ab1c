"""Sign-off of a session result (S3): both sides confirm; a dispute reopens it.

The store keeps every sign-off action (sign, dispute, resolve) in order; the status is
the replay of those actions against the *current* result. A signature names the digest
of the result it confirmed, so a correction that changes the result voids it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from referee.seats import SIDES


class SignOffError(ValueError):
    """A sign-off action that does not fit the result's state."""


def result_digest(result: dict) -> str:
    """Digest of a session result as stored (canonical JSON)."""
    return hashlib.sha256(json.dumps(result, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@dataclass
class SignOffStatus:
    state: str = "pending"
    """``pending`` (awaiting signatures), ``final`` (both sides signed), ``disputed``."""
    signed: dict[str, str] = field(default_factory=dict)
    """side -> who signed the current result."""
    dispute: str | None = None

    def as_dict(self) -> dict:
        return {"state": self.state, "signed": dict(self.signed), "dispute": self.dispute}


def replay(actions: list[dict], digest: str) -> SignOffStatus:
    """Status after ``actions`` (dicts with action/side/by/result_digest/note), in order."""
    status = SignOffStatus()
    for act in actions:
        kind = act["action"]
        if kind == "dispute":
            status = SignOffStatus(state="disputed", dispute=f"{act['side']} ({act['by']}): {act.get('note') or ''}".strip())
        elif kind == "resolve":
            status = SignOffStatus()
        elif kind == "sign" and status.state != "disputed" and act["result_digest"] == digest:
            status.signed[act["side"]] = act["by"]
    if status.state != "disputed" and set(status.signed) == set(SIDES):
        status.state = "final"
    return status


def check_action(action: str, side: str | None, status: SignOffStatus) -> None:
    """Raise ``SignOffError`` if ``action`` by ``side`` is not allowed in ``status``."""
    if action in ("sign", "dispute") and side not in SIDES:
        raise SignOffError(f"{action}: side must be NS or EW, not {side!r}")
    if action == "sign" and status.state == "disputed":
        raise SignOffError(f"sign: the result is disputed ({status.dispute}); a referee must resolve it first")
    if action == "resolve" and status.state != "disputed":
        raise SignOffError("resolve: the result is not disputed")
