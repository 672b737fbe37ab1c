"""The log folded (``fold_corrections``) and judged afresh ends where the live referee does."""

import pytest

from referee.engine import Referee, fold_corrections
from referee.verdicts import Flag
from referee.view import view_for

CAMERA = {"source": "camera", "confidence": 0.99}
EVENTS = [
    {"type": "session_start", "t": 0, "teams": {"NS": "Reds", "EW": "Blues"}},
    {"type": "deal_start", "t": 1, "deal": 1, "first_leader": "S"},
    {"type": "play", "t": 2, "id": "s1", "seat": "S", "cards": ["9S"], **CAMERA},
    # E's cards read as 7S 8D, no combination; the deal goes on with the likely TS
    {"type": "play", "t": 3, "id": "e1", "seat": "E", "cards": ["7S", "8D"], "source": "camera",
     "confidence": 0.55, "alternatives": [{"cards": ["TS"], "p": 0.4}]},
    {"type": "play", "t": 4, "seat": "N", "cards": ["JS"], **CAMERA},
    {"type": "play", "t": 5, "seat": "W", "cards": ["QS"], **CAMERA},
]
CONFIRM = {"type": "confirm_read", "t": 9, "of": "e1", "by": "chief", "source": "manual"}
CORRECT_S = {"type": "correction", "t": 10, "of": "s1", "by": "chief", "event": {"type": "play", "seat": "S", "cards": ["8S"]}}
CORRECT_E = {"type": "correction", "t": 10, "of": "e1", "by": "chief", "event": {"type": "play", "seat": "E", "cards": ["TS"]}}

STRIKE_E = {"type": "correction", "t": 10, "of": "e1", "by": "chief", "event": None}
RESTORE_E = {**CORRECT_E, "t": 11}


@pytest.mark.parametrize("rulings", [[CONFIRM], [CORRECT_S], [CORRECT_E], [CONFIRM, CORRECT_S], [STRIKE_E],
                                     [STRIKE_E, RESTORE_E], [CORRECT_E, {**STRIKE_E, "t": 11}]])
def test_the_folded_log_judged_afresh_ends_where_the_live_referee_does(rulings):
    raw = [dict(e, seq=i + 1) for i, e in enumerate(EVENTS + rulings)]
    live, fresh = Referee(), Referee()
    for event in raw:
        live.feed({k: v for k, v in event.items() if k != "seq"})
    for event, _ in fold_corrections(raw).judged:
        fresh.feed({k: v for k, v in event.items() if k != "seq"})
    assert view_for(live.state) == view_for(fresh.state)
    assert {v.key for v in live.verdicts() if isinstance(v, Flag)} == {v.key for v in fresh.verdicts() if isinstance(v, Flag)}


def test_a_struck_read_is_set_apart_with_who_struck_it_and_the_read_as_it_came():
    """No step judges a struck read, yet the fold keeps it apart for whoever shows the log:
    the read as the camera gave it (not an earlier correction's replacement), who struck it
    and when; a read a later correction put back is struck no more."""
    raw = [dict(e, seq=i + 1) for i, e in enumerate(EVENTS + [CORRECT_E, {**STRIKE_E, "t": 11}])]
    folded = fold_corrections(raw)
    assert "e1" not in [e.get("id") for e, _ in folded.judged]
    assert folded.struck == ({"by": "chief", "seq": 8, "original": raw[3]},)
    restored = [dict(e, seq=i + 1) for i, e in enumerate(EVENTS + [STRIKE_E, RESTORE_E])]
    assert fold_corrections(restored).struck == ()
