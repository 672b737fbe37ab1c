"""Text and time at every door of the store, on SQLite and PostgreSQL: a lone UTF-16
surrogate is refused with the reason (kept aside, never a crash), an import names its line
and keeps the good ones around it, and a table's time moves within its bound."""

from __future__ import annotations

import json
import re

import pytest

from tests.store.support import TallyDerivation
from web.app.cli import main
from web.store import EventRejected, Store
from web.store.admission import FIRST_T_MAX, TIME_LEAD_S, TIME_RATE

from .test_store_doors import loc  # noqa: F401  (the fixture: --data or --db)

START = {"type": "session_start", "table": "T1", "t": 0, "teams": {"NS": "A", "EW": "B"}}


class Clock:
    """The server's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def timed(reopen):
    clock = Clock()
    with reopen(derivation=TallyDerivation(), clock=clock) as store:
        store.clock_of_test = clock
        yield store


@pytest.mark.parametrize("event", [
    {"type": "tick", "table": "T1", "t": 1, "id": "\ud800"},
    {"type": "tick", "table": "T1", "t": 1, "source": "camera", "evidence": {"note": "a\udfffb"}},
    {"type": "tick", "table": "T1", "t": 1, "evidence": {"\udc00": 1}},
])
def test_a_lone_surrogate_anywhere_is_refused_with_the_reason_and_kept_aside(store, event):
    store.append(START)
    with pytest.raises(EventRejected, match="lone UTF-16 surrogate"):
        store.append(event)
    (kept,) = store.rejected("T1")
    assert "lone UTF-16 surrogate" in kept["reason"] and "\\ud" in kept["body"].lower()
    assert [e["seq"] for e in store.events("T1")] == [1]
    assert store.verify().ok


def test_import_names_the_line_of_a_surrogate_and_keeps_the_good_lines(loc, tmp_path, capsys):  # noqa: F811
    lines = [json.dumps(START), json.dumps({"type": "tick", "table": "T1", "t": 1}),
             '{"type": "tick", "table": "T1", "t": 2, "id": "\\ud800"}',
             json.dumps({"type": "tick", "table": "T1", "t": 3}),
             json.dumps({"type": "tick", "table": "T1", "t": 4, "id": "\ud800"}, ensure_ascii=False)
             .encode("utf-8", "surrogatepass").decode("utf-8", "surrogateescape")]
    path = tmp_path / "events.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")
    assert main(["import", str(path), *loc]) == 1
    out, err = capsys.readouterr()
    assert "line 3: a lone UTF-16 surrogate (\\ud800)" in err and "line 5: not UTF-8 text" in err, err
    assert "imported 3 events into 1 table(s); 0 already stored; 2 rejected (lines 3, 5)" in out
    assert main(["verify", *loc]) == 0


def test_one_far_future_time_is_refused_with_its_bound_and_the_table_goes_on(timed):
    timed.append(START)
    for far in (1e308, 1.7e9, TIME_LEAD_S + 1):
        with pytest.raises(EventRejected, match=re.escape(
                f"t={far:g} is past this table's time bound t<=3600 (its last event's t=0, + 3600 s, + 16x the 0 s")):
            timed.append({"type": "tick", "table": "T1", "t": far})
    assert timed.append({"type": "tick", "table": "T1", "t": TIME_LEAD_S}).seq == 2
    timed.clock_of_test.now += 100  # the server's clock moves: the table's time may follow
    bound = 2 * TIME_LEAD_S + TIME_RATE * 100
    with pytest.raises(EventRejected, match=f"time bound t<={bound:g}"):
        timed.append({"type": "tick", "table": "T1", "t": bound + 0.5})
    assert timed.append({"type": "tick", "table": "T1", "t": bound}).seq == 3
    assert timed.append({"type": "tick", "table": "T1", "t": bound + 1}).seq == 4


def test_a_table_cannot_start_at_a_calendar_date(timed):
    with pytest.raises(EventRejected, match=re.escape(f"past the bound of a table's first time, t<={FIRST_T_MAX:g}")):
        timed.append({**START, "t": 1.7e9})
    assert timed.append({**START, "t": 86_400 * 40}).seq == 1  # a camera's monotonic clock, 40 days up


def test_the_bound_holds_after_a_reopen_from_a_snapshot(reopen, db_url):
    clock = Clock()
    with Store(db_url, secret_key="k", derivation=TallyDerivation(), clock=clock, snapshot_every=2) as first:
        first.append(START)
        first.append({"type": "tick", "table": "T1", "t": 10})  # a snapshot at the head
    with Store(db_url, secret_key="k", derivation=TallyDerivation(), clock=clock) as again:
        with pytest.raises(EventRejected, match="time bound t<=3610 "):
            again.append({"type": "tick", "table": "T1", "t": 5000})


def test_replay_goes_on_past_a_line_that_is_not_utf8(tmp_path, capsys):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join([json.dumps(START).encode(), b'{"type":"tick","t":1}', b'{"type":"tick","t":2}',
                                 b"\xff\xfe", b'{"type":"tick","t":"\xe2\x82"}', b'{"type":"tick","t":0.5}']) + b"\n")
    assert main(["replay", str(path)]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["type"], r["line"]) for r in records] == [("error", 4), ("error", 5), ("error", 6)]
    assert records[0]["message"] == "line 4: not UTF-8 text (byte 0)"
    assert "time goes backwards" in records[2]["message"]  # line 6 was judged: the replay went on


def test_a_far_future_tick_corrected_to_its_true_time_lets_the_table_go_on(reopen):
    """The engine refuses a step back after a tick stamped ahead (within the bound); a referee's
    correction of its time brings the table's time back, and the bound follows the correction."""
    clock = Clock()
    with reopen(clock=clock, snapshot_every=3) as store:
        store.add_official("Ref Li", "referee")
        store.append(START)
        store.append({"type": "deal_start", "table": "T1", "t": 1, "deal": 1, "first_leader": "S"})
        store.append({"type": "tick", "table": "T1", "t": 3000, "id": "k1"})
        with pytest.raises(EventRejected, match="time goes backwards: t=2 after t=3000"):
            store.append({"type": "tick", "table": "T1", "t": 2})
        fix = {"type": "correction", "table": "T1", "t": 2, "of": "k1", "by": "Ref Li", "event": {"type": "tick"}}
        with pytest.raises(EventRejected, match="time goes backwards: t=2 after t=3000"):
            store.append(fix)  # without a time the replacement keeps the far one
        with pytest.raises(EventRejected, match=re.escape("t=0.5 is outside its neighbours' times, t>=1")):
            store.append({**fix, "event": {"type": "tick", "t": 0.5}})
        assert store.append({**fix, "event": {"type": "tick", "t": 2}}).seq == 4
        assert store.append({"type": "tick", "table": "T1", "t": 3}).seq == 5
    with reopen(clock=clock) as again:  # replayed from its snapshot and events: the same time
        assert again.append({"type": "tick", "table": "T1", "t": 4}).seq == 6
        with pytest.raises(EventRejected, match=re.escape(f"time bound t<={4 + TIME_LEAD_S:g} ")):
            again.append({"type": "tick", "table": "T1", "t": 4 + TIME_LEAD_S + 1})
        assert [e["t"] for e in again.events("T1")] == [0, 1, 3000, 2, 3, 4]
        assert again.verify(rederive=True).ok
