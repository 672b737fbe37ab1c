"""Bad input never corrupts a table: rejected events change nothing that follows."""

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine import Referee
from referee.simulate import simulate_session

LOG = simulate_session(21, breaches=0.02).events

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


def _feed(events) -> list[dict]:
    referee = Referee()
    return [r for e in events for r in referee.feed(e) if r["type"] != "error"]


BASELINE = _feed(LOG)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, len(LOG) - 1), garbage, st.booleans()), max_size=6))
def test_rejected_events_do_not_change_the_verdicts(insertions):
    events = list(LOG)
    for position, bad, past in sorted(insertions, key=lambda x: -x[0]):
        bad = dict(bad) if isinstance(bad, dict) else bad
        if isinstance(bad, dict) and bad.get("type") != "deal_start":
            # a time in the past is an error too; otherwise the time of the event before
            bad["t"] = -1 if past else LOG[position - 1]["t"]
        elif isinstance(bad, dict):
            bad["t"] = LOG[position - 1]["t"]
        events.insert(position, bad)
    referee = Referee()
    errors = 0
    kept = []
    for event in events:
        for record in referee.feed(event):
            if record["type"] == "error":
                errors += 1
            else:
                kept.append(record)
    assert errors == len(insertions)
    assert kept == BASELINE


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
MID_SESSION = Referee()
for _event in LOG[:150]:
    MID_SESSION.feed(_event)
MID_SNAPSHOT = MID_SESSION.snapshot()


@settings(max_examples=300, deadline=None)
@given(st.lists(fuzzed_events, min_size=1, max_size=5))
def test_any_event_shaped_input_gives_records_never_an_exception(events):
    referee = Referee.restore(MID_SNAPSHOT)
    for event in events:
        records = referee.feed(event)
        assert isinstance(records, list)
        assert all(isinstance(r, dict) and "type" in r for r in records)
