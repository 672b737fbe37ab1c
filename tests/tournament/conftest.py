"""Fixtures: a fresh store per test, on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from tests.store.support import KINDS, TEST_SECRET, TallyDerivation, temporary_url
from web.store import Store
from web.tournament.tables import TournamentTables


@pytest.fixture(params=KINDS)
def db_url(request, tmp_path):
    with temporary_url(request.param, tmp_path) as url:
        yield url


def _officials(store: Store) -> Store:
    store.add_official("Chief Wang", "chief")
    store.add_official("Ref Li", "referee")
    return store


@pytest.fixture
def store(db_url):
    """A store whose tables are refereed by the tally stand-in (fast, predictable)."""
    with Store(db_url, derivation=TallyDerivation(), secret_key=TEST_SECRET, table_rules=TournamentTables()) as s:
        yield _officials(s)


@pytest.fixture
def real_store(db_url):
    """A store whose tables are refereed by the real engine."""
    with Store(db_url, secret_key=TEST_SECRET, table_rules=TournamentTables()) as s:
        yield _officials(s)


@pytest.fixture
def liumoer():
    """The referee ruleset of seed 001's cup, for tournaments that follow it."""
    from referee.rulesets import NAMED

    assert "liumoer-2026" in NAMED
    return "liumoer-2026"


class Desk:
    """Plays tally sessions at drawn tables and signs them (pairs ``X`` have players ``X1``, ``X2``)."""

    def __init__(self, store: Store):
        self.store = store

    def play(self, match, ns_plays: int = 2, ew_plays: int = 1) -> None:
        """A session at the match's table: the side with more plays wins by the difference."""
        events = [{"type": "session_start", "teams": {"NS": match.ns, "EW": match.ew}},
                  {"type": "deal_start", "deal": 1}]
        events += [{"type": "play", "seat": "S", "cards": ["2S"]}] * ns_plays
        events += [{"type": "play", "seat": "E", "cards": ["3S"]}] * ew_plays
        events.append({"type": "session_end"})
        self.store.append_many([{**e, "table": match.table_id, "t": float(i)} for i, e in enumerate(events, 1)])

    def play_round(self, drawn, sign: bool = True) -> None:
        """Play every match of a drawn round (NS wins) and, with ``sign``, both sides sign."""
        from web.tournament import signoff

        for m in drawn:
            if m.ew is None:
                continue
            self.play(m)
            if sign:
                signoff.sign(self.store, m.table_id, "NS", f"{m.ns}1")
                signoff.sign(self.store, m.table_id, "EW", f"{m.ew}1")


@pytest.fixture
def desk(store):
    return Desk(store)
