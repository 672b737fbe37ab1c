"""Test support for the store and for anything built on it (dashboard, tournaments).

``temporary_url`` gives a fresh, empty database per test: a SQLite file under a temporary
directory, or a PostgreSQL schema of its own that is dropped afterwards; ``TEST_SECRET``
is the key of test stores (so that no test reads or makes a per-user key file).
``TallyDerivation`` is a small referee that keeps the engine's contract (feed, records,
snapshot, restore; ``EventError`` refuses; a correction re-derives) with trivially predictable
results, so that the store's mechanics are tested fast and independently of the rules.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from referee.events import Event, EventError, parse_event
from referee.seats import SEATS, side_of
from web.store.db import data_url

PG_URL_ENV = "GUANDAN_TEST_PG_URL"
DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
KINDS = ("sqlite", "postgresql")
TEST_SECRET = "guandan-test-snapshot-key"


@contextmanager
def temporary_url(kind: str, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty database of ``kind``, removed afterwards (PostgreSQL schema)."""
    if kind == "sqlite":
        (tmp_path / "guandan-data").mkdir(parents=True, exist_ok=True)
        yield data_url(tmp_path / "guandan-data")
        return
    if kind != "postgresql":
        raise ValueError(f"unknown database kind {kind!r}")
    base = os.environ.get(PG_URL_ENV, DEFAULT_PG_URL)
    schema = f"test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    except Exception as exc:
        admin.dispose()
        raise RuntimeError(f"PostgreSQL at {base} (set {PG_URL_ENV}) is needed for these tests: {exc}") from exc
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        admin.dispose()


def tally_levels(plays: dict[str, int]) -> dict[str, int]:
    """The tally referee's rule: a side's level index is its number of plays (max 13)."""
    return {side: min(n, 13) for side, n in plays.items()}


@dataclass(frozen=True)
class TallyRecord:
    """A record of the tally referee: its JSON, as a verdict gives it (``to_json``)."""

    body: dict

    def to_json(self) -> dict:
        return dict(self.body)


class TallyReferee:
    """Stand-in referee: a session's result is the count of plays of each side.

    Refuses (``EventError``) anything before ``session_start`` except ``tick``, a ``play``
    or ``pass`` after ``session_end``, and a correction of an unknown id; flags every
    penalty; emits ``session_result`` at ``session_end`` (S1 score from the tallies). It
    keeps each event's JSON: its rule reads no more than that.
    """

    def __init__(self, events: list[dict] | None = None):
        self._events: list[dict] = []
        self._records: list[dict] = []
        for event in events or []:
            self.feed(parse_event(event))

    def feed(self, typed: Event) -> list[TallyRecord]:
        event = typed.to_json()
        kind = typed.kind
        started = any(e["type"] == "session_start" for e in self._events)
        if not started and kind not in ("session_start", "tick"):
            raise EventError(f"{kind} before session_start")
        if kind in ("play", "pass") and any(e["type"] == "session_end" for e in self._events):
            raise EventError(f"{kind} after session_end")
        if kind == "correction":
            ids = [e.get("id") for e in self._events]
            if event["of"] not in ids:
                raise EventError(f"correction of unknown id {event['of']!r}")
            self._events.append(event)
            self._records = self._derive(self._effective())
            return [TallyRecord({"type": "rederived"})]
        self._events.append(event)
        new = self._derive_one(self._effective(), event)
        self._records.extend(new)
        return [TallyRecord(r) for r in new]

    def _effective(self) -> list[dict]:
        """The log with corrections applied (each replaces the event it names)."""
        fixes = {e["of"]: e["event"] for e in self._events if e["type"] == "correction"}
        return [fixes.get(e.get("id"), e) for e in self._events if e["type"] != "correction"]

    def _derive(self, events: list[dict]) -> list[dict]:
        out: list[dict] = []
        for i, event in enumerate(events):
            out.extend(self._derive_one(events[: i + 1], event))
        return out

    @staticmethod
    def _derive_one(events: list[dict], event: dict) -> list[dict]:
        if event["type"] == "penalty":
            return [{"type": "flag", "rule": event.get("rule"), "severity": event.get("level"),
                     "at": event["t"]}]
        if event["type"] != "session_end":
            return []
        plays = {"NS": 0, "EW": 0}
        for e in events:
            if e["type"] == "play" and e.get("seat") in SEATS:
                plays[side_of(e["seat"])] += 1
        idx = tally_levels(plays)
        d = min(abs(idx["NS"] - idx["EW"]), 14)
        winner = None if d == 0 else max(idx, key=idx.get)
        score = {"NS": 14, "EW": 14} if winner is None else {
            winner: 14 + d, ("EW" if winner == "NS" else "NS"): 14 - d}
        names = "23456789TJQKA"
        levels = {s: (names[i] if i < 13 else "A+") for s, i in idx.items()}
        return [{"type": "session_result", "levels": levels, "level_difference": d,
                 "score": score, "winner": winner, "at": event["t"]}]

    def records(self) -> list[dict]:
        return list(self._records)

    def snapshot(self) -> bytes:
        return json.dumps(self._events).encode()

    @classmethod
    def restore(cls, blob: bytes) -> TallyReferee:
        return cls(json.loads(blob))


class TallyDerivation:
    """``Derivation`` making ``TallyReferee``s; counts calls so tests can see the snapshots work."""

    def __init__(self) -> None:
        self.restores = 0

    def new(self, ruleset: str) -> TallyReferee:
        return TallyReferee()

    def restore(self, blob: bytes) -> TallyReferee:
        self.restores += 1
        return TallyReferee.restore(blob)
