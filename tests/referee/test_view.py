import json

from referee.simulate import simulate_session
from referee.engine import Referee
from referee.view import view_for
from referee.cards import card_name


def test_no_view_shows_another_seats_hand():
    events = simulate_session(1).events
    referee = Referee()
    for event in events[:80]:
        referee.feed(event)
    assert '"hand"' not in json.dumps(view_for(referee.state))
    for seat in "SENW":
        view = view_for(referee.state, seat)
        own = view["deal"]["hand"]
        assert sorted(own) == sorted(card_name(c) for c in referee.state.deal.hands[seat])
        assert json.dumps(view).count('"hand"') == 1  # its own, nobody else's
    assert view_for(referee.state)["deal"]["counts"] == referee.state.deal.counts
    assert view_for(None) == {"session": None}
