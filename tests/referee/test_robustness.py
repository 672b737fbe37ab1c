"""Bad input never corrupts a table: rejected events change nothing that follows."""

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine import Referee
from referee.events import EventError
from referee.simulate import simulate_session


@cache
def simulated_log() -> tuple[dict, ...]:
    """A simulated session with breaches, made on first use (not when the module is collected)."""
    return tuple(simulate_session(21, breaches=0.02).events)


garbage = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["play", "pass", "report", "tribute"]),
                           "seat": st.sampled_from(["X", "", "north", 3])}),
    st.fixed_dictionaries({"type": st.just("play"), "seat": st.sampled_from("SENW"),
                           "cards": st.lists(st.text(alphabet="XYZ10", max_size=3), min_size=1, max_size=4)}),
    st.fixed_dictionaries({"type": st.text(max_size=8)}),
    st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=4),
    st.lists(st.integers(), max_size=3),
    st.fixed_dictionaries({"type": st.just("correction"), "of": st.just("no-such-id"),
                           "event": st.just({"type": "pass", "seat": "S"})}),
    st.fixed_dictionaries({"type": st.just("deal_start"), "deal": st.integers(50, 99)}),
)


@cache
def baseline() -> tuple:
    referee = Referee()
    return tuple(v for e in simulated_log() for v in referee.feed(e))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), garbage, st.booleans()), max_size=6))
def test_rejected_events_do_not_change_the_verdicts(insertions):
    log = simulated_log()
    events = list(log)
    for where, bad, past in sorted(insertions, key=lambda x: -x[0]):
        position = 1 + where % (len(log) - 1)
        bad = dict(bad) if isinstance(bad, dict) else bad
        if isinstance(bad, dict) and bad.get("type") != "deal_start":
            # a time in the past is an error too; otherwise the time of the event before
            bad["t"] = -1 if past else log[position - 1]["t"]
        elif isinstance(bad, dict):
            bad["t"] = log[position - 1]["t"]
        events.insert(position, bad)
    referee = Referee()
    errors = 0
    kept = []
    for event in events:
        try:
            kept += referee.feed(event)
        except EventError:
            errors += 1
    assert errors == len(insertions)
    assert tuple(kept) == baseline()


FIELDS = ["t", "seat", "to", "card", "cards", "declared", "count", "of", "event", "by", "side", "level",
          "rule", "minutes_late", "deal", "hands", "first_leader", "teams", "ruleset", "readings", "id",
          "confidence"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200) | st.floats(allow_nan=True) | st.sampled_from(
        ["S", "E", "N", "W", "NS", "EW", "3S", "BJ", "5H", "warning", "foul", "loss", "pair", "x", ""]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(FIELDS + ["S", "N", "type"]),
                                                                inner, max_size=4),
    max_leaves=12,
)
from referee.events import EVENT_TYPES  # noqa: E402

fuzzed_events = st.fixed_dictionaries(
    {"type": st.sampled_from(EVENT_TYPES)},
    optional={name: json_values for name in FIELDS},
)


@cache
def mid_session_snapshot() -> bytes:
    referee = Referee()
    for event in simulated_log()[:150]:
        referee.feed(event)
    return referee.snapshot()


@settings(max_examples=300, deadline=None)
@given(st.lists(fuzzed_events, min_size=1, max_size=5))
def test_any_event_shaped_input_gives_verdicts_or_a_rejection_never_another_exception(events):
    referee = Referee.restore(mid_session_snapshot())
    for event in events:
        before = referee.snapshot()
        try:
            verdicts = referee.feed(event)
        except EventError as exc:
            assert str(exc)
            assert referee.snapshot() == before
        else:
            assert all(isinstance(v.to_json(), dict) and "type" in v.to_json() for v in verdicts)
