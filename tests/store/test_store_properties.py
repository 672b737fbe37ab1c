"""Properties of import: any bytes or JSON never raise out of it, a rejected line never
changes a table, and importing any file twice stores it once."""

from __future__ import annotations

import io
import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.store.support import TEST_SECRET, TallyDerivation
from web.store import Store
from web.store.ingest import import_stream

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_tables = itertools.count()


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One SQLite store for all examples; each example plays at tables of its own."""
    path = tmp_path_factory.mktemp("props") / "guandan.sqlite3"
    with Store(f"sqlite:///{path}", derivation=TallyDerivation(), secret_key=TEST_SECRET) as store:
        yield store


def _import(store: Store, lines: list[bytes]):
    return import_stream(store, io.BytesIO(b"\n".join(lines) + b"\n"))


def _snapshot(store: Store, table: str) -> list[dict]:
    return store.events(table)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _event_like(table: str):
    """Objects shaped like events, with any values: most are bad in some way."""
    fields = st.fixed_dictionaries(
        {"table": st.sampled_from([table, table, 7, ""]), "type": st.sampled_from(
            ["play", "pass", "tick", "report", "session_end", "penalty", "correction", "nope"])},
        optional={"t": st.one_of(st.integers(), st.floats(), st.text(max_size=3)),
                  "seat": st.sampled_from(["N", "E", "S", "W", "X", 3]),
                  "cards": st.one_of(st.just(["2S"]), json_values), "id": json_values,
                  "count": json_values, "evidence": json_values})
    return fields


@PROPERTY
@given(data=st.data())
def test_any_bytes_never_raise_and_never_change_a_table(shared, data):
    table = f"B{next(_tables)}"
    start = {"type": "session_start", "table": table, "t": 0, "teams": {"NS": "A", "EW": "B"}}
    assert _import(shared, [json.dumps(start).encode()]).accepted == 1
    before = _snapshot(shared, table)
    junk = data.draw(st.lists(st.binary(max_size=120), max_size=12))
    summary = _import(shared, junk)
    after = _snapshot(shared, table)
    assert after[:len(before)] == before
    # bytes that happen to be an event of this table are stored; everything else is named
    assert len(after) - len(before) == summary.accepted
    lines = (b"\n".join(junk) + b"\n").count(b"\n")
    assert {n for n, _ in summary.rejected} <= set(range(1, lines + 1))
    assert shared.verify().ok


@PROPERTY
@given(data=st.data())
def test_any_json_never_raises_rejected_lines_change_nothing_and_twice_is_once(shared, data):
    table = f"J{next(_tables)}"
    start = {"type": "session_start", "table": table, "t": 0, "teams": {"NS": "A", "EW": "B"}}
    objects = data.draw(st.lists(st.one_of(json_values, _event_like(table)), max_size=10))
    lines = [json.dumps(start).encode()]
    for obj in objects:
        try:
            lines.append(json.dumps(obj).encode())
        except ValueError:
            lines.append(b"NaN")
    first = _import(shared, lines)
    stored = _snapshot(shared, table)
    rejected = {n for n, _ in first.rejected}
    assert len(stored) == first.accepted == len(lines) - len(rejected) - first.duplicates
    second = _import(shared, lines)
    assert second.accepted == 0 and _snapshot(shared, table) == stored
    assert {n for n, _ in second.rejected} == rejected  # the same lines, for the same reasons
    assert shared.verify().ok


def _as_float(event: dict) -> dict:
    """The same event written with every integer as a float (0 -> 0.0)."""
    return {k: (float(v) if isinstance(v, int) and not isinstance(v, bool) else v) for k, v in event.items()}


@PROPERTY
@given(plays=st.lists(st.tuples(st.sampled_from("NESW"), st.booleans()), max_size=15),
       with_ids=st.booleans(), end=st.booleans())
def test_a_session_imported_twice_is_stored_once_whatever_its_number_format(shared, plays, with_ids, end):
    table = f"S{next(_tables)}"
    events = [{"type": "session_start", "table": table, "t": 0, "teams": {"NS": "A", "EW": "B"}}]
    for i, (seat, passes) in enumerate(plays, 1):
        kind = {"type": "pass"} if passes else {"type": "play", "cards": ["2S"]}
        events.append({**kind, "table": table, "t": i, "seat": seat, **({"id": f"e{i}"} if with_ids else {})})
    if end:
        events.append({"type": "session_end", "table": table, "t": len(plays) + 1})
    first = _import(shared, [json.dumps(e).encode() for e in events])
    assert (first.accepted, first.rejected) == (len(events), [])
    results = shared.results(table)
    second = _import(shared, [json.dumps(_as_float(e)).encode() for e in events])
    assert (second.accepted, second.duplicates, second.rejected) == (0, len(events), [])
    assert len(shared.events(table)) == len(events) and shared.results(table) == results
