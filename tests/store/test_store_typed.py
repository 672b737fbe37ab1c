"""Events travel typed through the store: the referee is fed the event ``parse_event`` made
of the stored form (its table and id the stored ones), live and on replay alike, and its
refusal (an ``EventError``) is the event's rejection, with its reason."""

from __future__ import annotations

import pytest

from referee.events import DealStart, Event, EventError
from web.store import Appended, EventRejected
from tests.store.support import TallyDerivation, TallyReferee


class Recording(TallyDerivation):
    """Tally referees that keep every event they are fed."""

    def __init__(self) -> None:
        super().__init__()
        self.fed: list[Event] = []

    def new(self, ruleset: str) -> TallyReferee:
        return self._recorded(super().new(ruleset))

    def restore(self, blob: bytes) -> TallyReferee:
        return self._recorded(super().restore(blob))

    def _recorded(self, referee: TallyReferee) -> TallyReferee:
        feed = referee.feed

        def recorded(event: Event):
            self.fed.append(event)
            return feed(event)

        referee.feed = recorded
        return referee


class Refusing(TallyDerivation):
    """Tally referees that refuse any play of the seven of hearts."""

    def new(self, ruleset: str) -> TallyReferee:
        referee = super().new(ruleset)
        feed = referee.feed

        def refusing(event: Event):
            if event.kind == "play" and "7H" in event.to_json()["cards"]:
                raise EventError("the seven of hearts is not played here")
            return feed(event)

        referee.feed = refusing
        return referee


START = {"type": "session_start", "table": "T1", "t": 0, "teams": {"NS": "A", "EW": "B"}}


def test_the_referee_is_fed_the_typed_stored_event_live_and_on_replay(reopen):
    live = Recording()
    with reopen(derivation=live, snapshot_every=0) as store:
        store.append(START)
        done = store.append({"type": "play", "t": 1.0, "seat": "S", "cards": ["2S"]}, table_id="T1")
        stored = store.events("T1")
    assert all(isinstance(e, Event) for e in live.fed)
    assert [(e.table, e.id) for e in live.fed] == [("T1", s["id"]) for s in stored]
    assert live.fed[1].id.startswith("c-") and done.seq == 2  # the content id the store gave it
    replay = Recording()
    with reopen(derivation=replay) as again:
        again.referee("T1")
    assert replay.fed == live.fed


def test_a_refusal_of_the_referee_is_the_rejection_with_its_reason(reopen):
    with reopen(derivation=Refusing()) as store:
        store.append(START)
        with pytest.raises(EventRejected, match="the seven of hearts is not played here") as refused:
            store.append({"type": "play", "table": "T1", "t": 1, "seat": "S", "cards": ["7H"]})
        assert refused.value.table_id == "T1"
        assert isinstance(store.append({"type": "play", "table": "T1", "t": 2, "seat": "S", "cards": ["2S"]}),
                          Appended)
        assert [e["seq"] for e in store.events("T1")] == [1, 2]
        assert [r["reason"] for r in store.rejected("T1")] == ["the seven of hearts is not played here"]


def test_an_integral_float_is_judged_as_the_integer_the_store_keeps(reopen):
    live = Recording()
    with reopen(derivation=live) as store:
        store.append(START)
        store.append({"type": "deal_start", "table": "T1", "t": 1, "deal": 1.0, "id": "d1"})
        assert store.events("T1")[-1]["deal"] == 1
        resent = store.append({"type": "deal_start", "table": "T1", "t": 1, "deal": 1, "id": "d1"})
    assert resent.duplicate
    assert isinstance(live.fed[-1], DealStart) and live.fed[-1].deal == 1


def test_a_refusal_names_the_penalty_level_as_it_was_written(store):
    store.append(START)
    with pytest.raises(EventRejected) as refused:
        store.append({"type": "penalty", "table": "T1", "t": 1, "side": "NS", "level": "foul", "rule": "P4",
                      "by": "Ref Li"})
    assert refused.value.reason == "penalty 'foul' by 'Ref Li': only the chief referee gives fouls and losses (X6)"
