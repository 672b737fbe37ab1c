"""A referee tells its followers of each event it accepts, numbered as a store numbers them."""

import pytest

from referee.engine import Referee, Rejected
from referee.simulate import simulate_session


def test_a_follower_is_told_each_accepted_event_with_its_number_and_verdicts():
    events = simulate_session(2).events
    referee = Referee()
    for event in events[:5]:
        referee.feed(event)
    told = []
    referee.follow(lambda number, event, verdicts: told.append((number, event.kind, verdicts)))
    derived = [referee.feed(event) for event in events[5:40]]
    assert [n for n, _, _ in told] == list(range(6, 41)) and referee.accepted == 40
    assert [v for _, _, v in told] == derived
    with pytest.raises(Rejected):
        referee.feed({**events[39], "t": events[39]["t"] - 1, "id": "late"})
    assert len(told) == 35  # a refused event is nobody's step
