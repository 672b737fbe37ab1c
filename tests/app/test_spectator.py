"""What a spectator may see of a table (no login, or a viewer): played cards, counts,
levels, results and confirmed rulings; never a flag nobody confirmed, a read's confidence,
cards that went back to a hand after a flagged play, or a read's faces that the referee
did not count as played (a misread corrected, an impossible read taken as another, a read
in question). Officials see all of it."""

from __future__ import annotations

import tempfile

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from referee.cards import card_name
from referee.engine import Referee
from referee.plays import legal_plays
from tests.store.support import TEST_SECRET
from web.app.public import FACE_DOWN, READ_MARKS, public_events, public_table
from web.app.timeline import Timelines
from web.store import open_store

from .conftest import PLAYED, bearer, csrf_of, dealt_hands, login, make_app, session_events
from .test_stream import table_events

OUT_OF_TURN_STOOD = [  # S plays out of turn (N due) and E, next after S, follows: the play stood
    {"type": "session_start", "t": 0.0, "id": "s", "teams": {"NS": "Nanjing", "EW": "Suzhou"}},
    {"type": "deal_start", "t": 1.0, "id": "d1", "deal": 1, "first_leader": "S"},
    {"type": "play", "t": 5.0, "id": "p1", "seat": "S", "cards": ["3S"], "source": "camera", "confidence": 0.97},
    {"type": "play", "t": 9.0, "id": "p2", "seat": "E", "cards": ["5S"], "source": "camera", "confidence": 0.55},
    {"type": "play", "t": 12.0, "id": "p3", "seat": "S", "cards": ["7D"], "source": "rfid"},
    {"type": "play", "t": 15.0, "id": "p4", "seat": "E", "cards": ["8D"], "source": "camera", "confidence": 0.9},
]


def client_as(app, role: str | None):
    client = app.test_client()
    if role:
        login(client, role)
    return client


def table_of(app, role: str | None, table: str = "T1") -> dict:
    return client_as(app, role).get(f"/api/tables/{table}").get_json()


@pytest.mark.parametrize("role", [None, "viewer"])
def test_a_spectator_sees_no_open_flag_no_confidence_and_no_cards_that_went_back(app, session, role):
    seen = table_of(app, role)
    assert seen["open_flags"] == {} and seen["reviews"] == 0
    assert all(entry[mark] is None for entry in seen["history"] for mark in READ_MARKS)
    plays = [(e["seat"], e["cards"]) for e in seen["history"] if e["type"] == "play"]
    assert plays == [("S", ["3S"]), ("E", ["5S"]), ("W", ["9H"])]  # S's 7D went back when N, due, passed
    assert [e["seat"] for e in seen["round"]] == ["S", "E", "N", "W"]
    assert seen["state"]["deal"]["counts"] == {"S": 26, "E": 26, "N": 27, "W": 26}  # the 7D is back in S's hand


def test_an_official_sees_the_flags_the_reads_and_the_play_that_went_back(app, session):
    seen = table_of(app, "scorer")
    assert seen["open_flags"] == {"violation": 1} and seen["reviews"] == 1
    flagged = [e for e in seen["history"] if e.get("cards") == ["7D"]]
    assert flagged and flagged[0]["taken_back"] and flagged[0]["flags"] == ["P4"]
    assert [e["confidence"] for e in seen["history"]][:2] == [0.97, 0.55]


def test_a_flagged_play_that_stood_is_shown_and_its_rule_only_once_confirmed(app, post_events):
    post_events(OUT_OF_TURN_STOOD)
    plays = [e for e in table_of(app, None)["history"] if e["type"] == "play"]
    assert [(e["seat"], e["cards"], e["flags"]) for e in plays][-2:] == [("S", ["7D"], []), ("E", ["8D"], [])]
    (stood,) = [e for e in table_of(app, "scorer")["history"] if e.get("cards") == ["7D"]]
    assert stood["flags"] == ["P4"] and not stood["taken_back"]  # flagged, but on the table
    referee = client_as(app, "referee")
    answer = referee.post("/flags/T1/confirm", data={"rule": "P4", "seat": "S", "at": "12.0", "level": "violation",
                                                     "csrf_token": csrf_of(referee, "/flags/")})
    assert answer.status_code == 302
    seen = table_of(app, None)
    assert [e["flags"] for e in seen["history"] if e.get("cards") == ["7D"]] == [["P4"]]
    assert seen["state"]["penalties"]["NS"]["violation"] == 1  # the confirmed ruling


@pytest.mark.parametrize("role", [None, "viewer"])
def test_a_spectators_pages_show_none_of_it(app, session, tokens, role):
    client = client_as(app, role)
    app.test_client().post("/api/tables/T1/health", json={"fps": 15, "camera": "ok"}, headers=bearer(tokens["T1"]))
    for path in ("/tables/T1", "/tables/T1/live", "/", "/floor/tile/T1"):
        page = client.get(path).get_data(as_text=True)
        assert 'data-card="7D"' not in page, path  # went back into S's hand
        assert "55%" not in page and "low-confidence" not in page and "sev-violation" not in page, path
        assert "sev-review" not in page and "Open flags" not in page, path
    official = client_as(app, "scorer")
    page = official.get("/tables/T1").get_data(as_text=True)
    assert 'data-card="7D"' in page and "55%" in page and "sev-violation" in page
    assert "sev-violation" in official.get("/floor/tile/T1").get_data(as_text=True)


def test_a_spectator_reads_the_events_without_how_sure_each_read_was_or_the_play_that_went_back(app, session):
    spectator = client_as(app, None).get("/api/tables/T1/events").get_json()["events"]
    official = client_as(app, "scorer").get("/api/tables/T1/events").get_json()["events"]
    assert [e["seq"] for e in official] == [1, 2, 3, 4, 5, 6, 7]  # an official reads every event
    assert [e.get("confidence") for e in official if e["type"] == "play"][:2] == [0.97, 0.55]
    assert [e["seq"] for e in spectator] == [1, 2, 3, 4, 6, 7]  # not S's 7D (seq 5): it went back
    assert all("confidence" not in e and "alternatives" not in e and "hands" not in e for e in spectator)
    stood = client_as(app, "viewer").get("/api/tables/T1/events?after=4").get_json()["events"]
    assert [e["seq"] for e in stood] == [6, 7]


def test_cards_seen_taken_back_are_no_event_of_a_spectators(app, post_events):
    """S plays out of turn and the watcher sees the cards go back (``take_back``): neither
    event is a spectator's, both are an official's."""
    post_events(OUT_OF_TURN_STOOD[:5] + [{"type": "take_back", "t": 13.0, "id": "b1", "seat": "S"}])
    official = client_as(app, "scorer").get("/api/tables/T1/events").get_json()["events"]
    assert [e["type"] for e in official][-2:] == ["play", "take_back"] and official[-2]["cards"] == ["7D"]
    for role in (None, "viewer"):
        events = client_as(app, role).get("/api/tables/T1/events").get_json()["events"]
        assert [e["seq"] for e in events] == [e["seq"] for e in official][:-2]


@pytest.mark.parametrize("delay", [0.0, 4.0])
def test_a_spectators_events_play_the_cards_its_history_shows(sqlite_url, tokens_for, delay):
    """Behind a delay that shows S's 7D laid but not yet N's pass, the play stands (as the
    table showed then) in the history and in the events alike; without it, in neither."""
    app = make_app(sqlite_url, BROADCAST_DELAY=delay)
    app.test_client().post("/api/tables/T1/events", json=session_events(), headers=bearer(tokens_for(app)["T1"]))
    for role in (None, "viewer"):
        client = client_as(app, role)
        history = client.get("/api/tables/T1").get_json()["history"]
        events = client.get("/api/tables/T1/events").get_json()["events"]
        played = [(e["seat"], e["cards"]) for e in history if e["type"] == "play"]
        assert [(e["seat"], e["cards"]) for e in events if e["type"] == "play"] == played
        assert (("S", ["7D"]) in played) == (delay > 0)


def referee_posts(app, path: str, **fields):
    """A referee's form on the flags console (a correction, a read confirmed)."""
    referee = client_as(app, "referee")
    answer = referee.post(path, data={**fields, "csrf_token": csrf_of(referee, "/flags/")})
    assert answer.status_code == 302, answer.get_data(as_text=True)


def spectators_plays(app, role: str | None) -> tuple[list, list, str]:
    """``role``'s plays as the history and the events API give them, and its table pages."""
    client = client_as(app, role)
    history = client.get("/api/tables/T1").get_json()["history"]
    events = client.get("/api/tables/T1/events").get_json()["events"]
    pages = "".join(client.get(path).get_data(as_text=True) for path in ("/tables/T1", "/tables/T1/live"))
    return ([(e["seat"], e["cards"]) for e in history if e["type"] == "play"],
            [(e["seq"], e["seat"], e["cards"]) for e in events if e["type"] == "play"], pages)


def test_a_corrected_read_shows_spectators_the_cards_played_never_the_misread(app, session):
    """E's 5S was read with confidence 0.55; a referee corrects it to 6S: a spectator sees
    6S played (marked corrected), in the history, the events and the pages; an official
    still reads the original beside the correction."""
    referee_posts(app, "/flags/T1/correct", of="p2", seat="E", kind="play", cards="6S")
    for role in (None, "viewer"):
        history, events, pages = spectators_plays(app, role)
        assert history == [("S", ["3S"]), ("E", ["6S"]), ("W", ["9H"])]
        assert [(seq, seat, cards) for seq, seat, cards in events] == [(3, "S", ["3S"]), (4, "E", ["6S"]),
                                                                       (7, "W", ["9H"])]
        assert 'data-card="5S"' not in pages and 'data-card="6S"' in pages
        assert "corrected by referee" in pages  # the correction is a referee's ruling
        raw = client_as(app, role).get("/api/tables/T1/events").get_data(as_text=True)
        assert '"5S"' not in raw
        corrected = [e for e in client_as(app, role).get("/api/tables/T1/events").get_json()["events"]
                     if e["seq"] == 4]
        assert corrected[0]["corrected_by"] == "referee"
    official = client_as(app, "scorer").get("/api/tables/T1/events").get_json()["events"]
    assert [e["cards"] for e in official if e["seq"] == 4] == [["5S"]]
    assert [e["event"]["cards"] for e in official if e["type"] == "correction"] == [["6S"]]
    results = {role: client_as(app, role).get("/results").get_data(as_text=True) for role in (None, "viewer", "scorer")}
    assert 'data-card="5S"' not in results[None] and 'data-card="5S"' not in results["viewer"]
    assert 'data-card="6S"' in results[None]  # the ruling: what was played
    assert 'data-card="5S"' in results["scorer"]  # the corrections audit keeps the read for officials


SUSPECT = {"type": "play", "t": 21.0, "id": "p6", "seat": "S", "cards": ["8S"], "source": "camera",
           "confidence": 0.6, "alternatives": [{"cards": ["JS"], "p": 0.3}]}
"""S's camera read 8S, which does not beat W's 9H: the deal goes on with the alternative JS."""


def test_an_impossible_read_shows_spectators_the_reading_the_deal_went_on_with(app, session, post_events):
    post_events([SUSPECT])
    for role in (None, "viewer"):
        history, events, pages = spectators_plays(app, role)
        assert history[-1] == ("S", ["JS"]) and events[-1] == (8, "S", ["JS"])
        assert 'data-card="8S"' not in pages and 'data-card="JS"' in pages
    assert [e["cards"] for e in table_of(app, "scorer")["history"] if e["type"] == "play"][-1] == ["8S"]  # the read, for officials
    referee_posts(app, "/flags/T1/confirm_read", of="p6")  # "read is right"
    history, events, _ = spectators_plays(app, None)
    assert history[-1] == ("S", ["8S"]) and events[-1] == (8, "S", ["8S"])


def lone_leads(face: str, times: int, t: float = 2.0) -> list[dict]:
    """S leads ``face`` ``times`` times, the others passing each (deal 1, hands unknown)."""
    events = [{"type": "session_start", "t": 0.0, "id": "s", "teams": {"NS": "Nanjing", "EW": "Suzhou"}},
              {"type": "deal_start", "t": 1.0, "id": "d1", "deal": 1, "first_leader": "S"}]
    for k in range(times):
        events.append({"type": "play", "t": t, "id": f"a{k}", "seat": "S", "cards": face.split()})
        events += [{"type": "pass", "t": t + 1 + n, "id": f"x{k}{seat}", "seat": seat} for n, seat in enumerate("ENW")]
        t += 4
    return events


def test_a_play_showing_a_face_a_third_time_is_counted_face_down_until_ruled_on(app, post_events):
    """S leads 3S a third time (D3: two decks hold two): the referee counts the card but not
    its face; a spectator sees a card laid face down, on the table and in the history, and
    its face once a referee confirms the flag. The same play gone back (S plays again) is
    not shown at all."""
    post_events(lone_leads("3S", 3)[:-3])
    for role in (None, "viewer"):
        seen = table_of(app, role)
        assert [e["cards"] for e in seen["history"] if e["type"] == "play"] == [["3S"], ["3S"], [FACE_DOWN]]
        assert seen["state"]["deal"]["table"]["cards"] == [FACE_DOWN]
        assert seen["state"]["deal"]["table"]["combination"] is None
        assert [e["cards"] for e in client_as(app, role).get("/api/tables/T1/events").get_json()["events"]
                if e["type"] == "play"] == [["3S"], ["3S"], [FACE_DOWN]]
        page = client_as(app, role).get("/tables/T1").get_data(as_text=True)
        assert page.count(f'data-card="{FACE_DOWN}"') == 3 and page.count('data-card="3S"') == 2  # felt, trick, history
    assert table_of(app, "scorer")["state"]["deal"]["table"]["cards"] == ["3S"]
    post_events([{"type": "play", "t": 12.0, "id": "e1", "seat": "E", "cards": ["5S"]}])  # the play stood
    assert [e["cards"] for e in table_of(app, None)["history"] if e["type"] == "play"][-2:] == [[FACE_DOWN], ["5S"]]
    referee_posts(app, "/flags/T1/confirm", rule="D3", seat="S", at="10.0", level="warning")
    assert [e["cards"] for e in table_of(app, None)["history"] if e["type"] == "play"][-2:] == [["3S"], ["5S"]]


def test_a_play_showing_a_face_a_third_time_that_went_back_is_not_shown(app, post_events):
    post_events(lone_leads("3S", 3)[:-3] + [{"type": "play", "t": 12.0, "id": "a3", "seat": "S", "cards": ["4S"]}])
    seen = table_of(app, None)
    assert [e["cards"] for e in seen["history"] if e["type"] == "play"] == [["3S"], ["3S"], ["4S"]]
    assert seen["state"]["deal"]["counts"]["S"] == 24  # three cards laid, the third 3S back in the hand


def test_cards_laid_beyond_what_a_seat_holds_are_never_shown_played(app, post_events):
    """S leads five straights (25 cards, 2 left), then lays three (P5: more than held): the
    referee lays none of them; a spectator sees none, an official sees the flagged play."""
    straights = ["3S 4S 5S 6S 7S", "3D 4D 5D 6D 7D", "8S 9S TS JS QS", "8D 9D TD JD QD", "3C 4C 5C 6C 7C"]
    events = lone_leads("3S", 0)
    for k, straight in enumerate(straights):
        events += lone_leads(straight, 1, t=2.0 + 4 * k)[2:]
        for e in events[-4:]:
            e["id"] += str(k)
    events.append({"type": "play", "t": 30.0, "id": "big", "seat": "S", "cards": ["KS", "KD", "KC"]})
    post_events(events)
    for role in (None, "viewer"):
        seen = table_of(app, role)
        assert seen["state"]["deal"]["counts"]["S"] == 2
        assert [e["cards"][0] for e in seen["history"] if e["type"] == "play"] == ["3S", "3D", "8S", "8D", "3C"]
        events_seen = client_as(app, role).get("/api/tables/T1/events").get_json()["events"]
        assert "big" not in [e["id"] for e in events_seen]
    (flagged,) = [e for e in table_of(app, "scorer")["history"] if e.get("cards") == ["KS", "KD", "KC"]]
    assert flagged["flags"] == ["P5"]


def opened(app, role: str | None):
    """``role``'s live stream (``test_stream.table_events``: each table's tile as its page holds it)."""
    stream = client_as(app, role).get("/api/stream", buffered=False)
    return stream, table_events(stream)


@pytest.mark.parametrize("role", [None, "viewer"])
def test_a_spectators_table_list_and_stream_hold_no_open_flag_or_review(app, session, post_events, role):
    """The floor's tiles as a spectator receives them, in the table list and on the stream,
    first whole and then as changes: a new flag reaches an official's stream only."""
    listed = {t["table"]: t for t in client_as(app, role).get("/api/tables").get_json()["tables"]}
    assert listed["T1"]["open_flags"] == {} and listed["T1"]["reviews"] == 0 and listed["T1"]["seq"] == 7
    assert client_as(app, "scorer").get("/api/tables").get_json()["tables"][0]["open_flags"] == {"violation": 1}
    spectator, spectators = opened(app, role)
    official, officials = opened(app, "scorer")
    assert [next(spectators)["data"] for _ in "12"][0] == listed["T1"]
    first = [next(officials)["data"] for _ in "12"][0]
    assert (first["open_flags"], first["reviews"]) == ({"violation": 1}, 1)
    card = next(c for c in dealt_hands()["E"] if c not in PLAYED)
    post_events([{"type": "play", "t": 21.0, "id": "p6", "seat": "E", "cards": [card]}])  # S was due: P4
    told, seen = next(officials), next(spectators)
    assert told["data"]["seq"] == seen["data"]["seq"] == 8 and seen["kind"] == "change"
    assert told["data"]["open_flags"] == {"violation": 2}
    assert (seen["data"]["open_flags"], seen["data"]["reviews"]) == ({}, 0)
    official.close()  # the last opened first: both streams' contexts live in this one thread
    spectator.close()
    assert seen["data"] == client_as(app, role).get("/api/tables").get_json()["tables"][0]


def test_a_spectators_stream_is_behind_the_broadcast_delay(sqlite_url, tokens_for):
    app = make_app(sqlite_url, BROADCAST_DELAY=10.0)
    app.test_client().post("/api/tables/T1/events", json=session_events(), headers=bearer(tokens_for(app)["T1"]))
    stream, events = opened(app, None)
    tile = next(events)["data"]
    assert tile["table"] == "T1" and tile["seq"] == 3 and tile["counts"]["S"] == 26  # t=8 of 18: the 3S laid
    stream.close()


def deal_with_plays_out_of_turn(moves: list[int]) -> list[dict]:
    """Deal 1 played by ``moves``: below 20, a seat not due lays its lowest card (P4: the
    play stands or goes back, as the next to act shows); from 100, the seat due lays a
    single that the camera misreads as a face of the other side's suits (one it never held:
    the deal goes on with a reading nearby, or the read stands in question); otherwise the
    seat due passes (if it may) or makes the ``move``-th of its legal plays."""
    referee, events, hands = Referee(), [], dealt_hands()

    def emit(**event) -> None:
        event = {"table": "T1", "t": float(len(events)), "id": f"e{len(events)}", **event}
        referee.feed(event)
        events.append(event)

    emit(type="session_start", teams={"NS": "Nanjing", "EW": "Suzhou"})
    emit(type="deal_start", deal=1, hands=hands, first_leader="S")
    for move in moves:
        deal = referee.state.deal
        if deal.phase != "play":
            break
        if move < 20:
            others = [s for s in "NESW" if s != deal.turn and deal.active(s)]
            seat = others[move % len(others)]
            emit(type="play", seat=seat, cards=[card_name(min(deal.hands[seat]))])
            continue
        options = list(legal_plays(deal.hands[deal.turn], deal.level, deal.table))
        singles = [o for o in options if len(o.cards) == 1]
        if move >= 100 and singles:
            true = card_name(singles[move % len(singles)].cards[0])
            foreign = hands["N" if deal.turn in "SE" else "S"][move % 27]
            emit(type="play", seat=deal.turn, cards=[foreign], source="camera", confidence=0.6,
                 alternatives=[{"cards": [true], "p": 0.3}])
        elif deal.table is not None and (move % 3 == 0 or not options):
            emit(type="pass", seat=deal.turn)
        else:
            emit(type="play", seat=deal.turn, cards=[card_name(c) for c in options[move % len(options)].cards])
    return events


@settings(max_examples=15, deadline=None)
@given(moves=st.lists(st.integers(0, 119), min_size=3, max_size=40))
@example(moves=[51, 91, 54, 11, 8, 16, 26, 19])  # S out of turn, then W (due) illegally: S's back, W's stands
@example(moves=[100, 105, 21, 40])  # S's lead misread, E's too
def test_the_cards_a_spectator_sees_played_are_the_cards_gone_from_each_hand(moves):
    """Whatever went back to a hand is not shown as played, nor a face a seat never held:
    each seat's plays in the spectator's history and events hold exactly as many cards as
    its count says it has laid, each face down or one it was dealt."""
    events = deal_with_plays_out_of_turn(moves)
    with tempfile.TemporaryDirectory() as tmp, \
            open_store(f"sqlite:///{tmp}/s.sqlite3", secret=TEST_SECRET) as store:
        store.append_many(events)
        timelines = Timelines(store)
        table = public_table(timelines, "T1", spectator=True)
        played = [(e["seat"], e["cards"]) for e in public_events(timelines, "T1", spectator=True) if e["type"] == "play"]
    assert played == [(e["seat"], e["cards"]) for e in table["history"] if e["type"] == "play"]
    for seat, cards in played:
        assert set(cards) <= set(dealt_hands()[seat]) | {FACE_DOWN}, (seat, cards)
    deal = table["state"]["deal"]
    if deal["phase"] == "play":
        for seat in "NESW":
            laid = sum(len(cards) for who, cards in played if who == seat)
            assert laid == 27 - deal["counts"][seat], seat
    assert table["open_flags"] == {} and all(e["taken_back"] is None for e in table["history"])
