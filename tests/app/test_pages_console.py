"""The referee console and appeal review through the Flask test client: reads in doubt pinned
and never lapsing, "read is right" as its own event (one, or a table's all at once), claim
windows counted down in passes, knock-on flags under their cause, filters, and a review
that hides clock ticks, jumps to the next play or flag and keeps a corrected read's evidence."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from flask import session

from web.app import context, flags
from web.app.flags import group_knock_ons
from web.app.public import public_table
from web.store import get_store

from .conftest import csrf_of, login, session_events

EVIDENCE = {"frames": ["ab" * 32], "tags": ["low_confidence"]}
"""What the agent sent with E's doubtful 5S (``p2``): one frame, by its SHA-256."""


class Articles(HTMLParser):
    """The console's items as the page nests them: ``(attributes, parent key, text)`` each."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict] = []
        self.open: list[dict] = []

    def handle_starttag(self, tag, attrs):
        if tag == "article":
            attrs = dict(attrs)
            item = {**attrs, "parent": self.open[-1]["data-key"] if self.open else None, "text": "",
                    "pinned": "pinned" in attrs["class"].split()}
            self.found.append(item)
            self.open.append(item)

    def handle_endtag(self, tag):
        if tag == "article":
            self.open.pop()

    def handle_data(self, data):
        for item in self.open:
            item["text"] += data


def articles(html: str) -> list[dict]:
    parser = Articles()
    parser.feed(html)
    return parser.found


def status_of(html: str, rule: str) -> str:
    (item,) = [a for a in articles(html) if a["data-rule"] == rule]
    return re.search(r"status-(\S+)", item["class"]).group(1)


@pytest.fixture
def referee(app, post_events):
    events = session_events()
    events[3]["evidence"] = EVIDENCE
    assert {r["status"] for r in post_events(events)} == {"accepted"}
    client = app.test_client()
    login(client, "referee")
    return client


def form_post(client, path: str, **fields):
    return client.post(path, data={**fields, "csrf_token": csrf_of(client, "/")}, follow_redirects=True)


def test_a_read_in_doubt_is_pinned_above_the_flags_and_never_lapses(app, referee, post_events):
    page = referee.get("/flags/").get_data(as_text=True)
    assert page.index('class="reads-pinned"') < page.index('data-rule="P4"')
    doubt = next(a for a in articles(page) if a["data-rule"] == "low_confidence")
    assert doubt["pinned"] and "stays until the read is confirmed or corrected" in doubt["text"]
    post_events([{"type": "pass", "t": 20.0 + i, "id": f"x{i}", "seat": seat} for i, seat in enumerate("SEN")])
    page = referee.get("/flags/").get_data(as_text=True)
    assert status_of(page, "P4") == "lapsed"  # its trick is over: no claim is possible any more (X5)
    assert status_of(page, "low_confidence") == "open"  # the read is still in doubt
    get_store(app).append({"type": "penalty", "table": "T1", "t": 30.0, "side": "EW", "level": "loss", "rule": "K5",
                           "by": "chief"})  # the chief's loss ends the round (X4)
    assert referee.get("/api/tables/T1").get_json()["state"]["over"]
    assert status_of(referee.get("/flags/").get_data(as_text=True), "low_confidence") == "open"  # the round too
    assert referee.get("/api/tables/T1").get_json()["reviews"] == 1


def test_read_is_right_is_one_event_of_its_own(app, referee):
    page = form_post(referee, "/flags/T1/confirm_read", of="p2").get_data(as_text=True)
    assert "Recorded: read confirmed." in page
    event = get_store(app).events("T1")[-1]
    assert {k: event[k] for k in ("type", "of", "by", "source")} == {
        "type": "confirm_read", "of": "p2", "by": "referee", "source": "manual"}
    assert status_of(page, "low_confidence") == "read_confirmed"
    assert "read confirmed · referee" in next(a for a in articles(page) if a["data-rule"] == "low_confidence")["text"]
    assert referee.get("/api/tables/T1").get_json()["reviews"] == 0


def test_the_read_submitted_unchanged_is_confirmed_not_corrected(app, referee):
    form_post(referee, "/flags/T1/correct", of="p2", seat="E", kind="play", cards="5s")
    event = get_store(app).events("T1")[-1]
    assert event["type"] == "confirm_read" and event["of"] == "p2"
    form_post(referee, "/flags/T1/correct", of="p5", seat="W", kind="pass")
    assert get_store(app).events("T1")[-1]["type"] == "correction"  # another read: a correction


def test_a_tables_open_reads_are_accepted_together(app, referee, post_events):
    post_events([{"type": "play", "t": 21.0, "id": "p6", "seat": "S", "cards": ["JS"], "source": "camera",
                  "confidence": 0.5}])
    page = referee.get("/flags/").get_data(as_text=True)
    group = page.split('class="read-group" data-table="T1"', 1)[1].split("</form>", 1)[0]
    assert "Read is right: all 2" in group
    assert re.findall(r'name="of" value="([^"]+)"', group) == ["p2", "p6"]
    page = form_post(referee, "/flags/T1/confirm_read", of=["p2", "p6"]).get_data(as_text=True)
    assert "Recorded: 2 reads confirmed." in page
    confirms = [e for e in get_store(app).events("T1") if e["type"] == "confirm_read"]
    assert [e["of"] for e in confirms] == ["p2", "p6"]
    reads = [a for a in articles(page) if a["data-rule"] == "low_confidence"]
    assert len(reads) == 2 and all("status-read_confirmed" in a["class"] for a in reads)


def test_a_refused_confirmation_says_why_and_changes_nothing(app, referee):
    before = len(get_store(app).events("T1"))
    page = form_post(referee, "/flags/T1/confirm_read", of="nope").get_data(as_text=True)
    assert "Refused:" in page and "nope" in page
    assert len(get_store(app).events("T1")) == before
    assert referee.post("/flags/T1/confirm_read", data={"csrf_token": csrf_of(referee, "/")}).status_code == 400
    assert form_post(referee, "/flags/T9/confirm_read", of="p2").status_code == 404


def test_a_claim_window_counts_down_the_passes_that_can_end_the_trick(referee, post_events):
    def window() -> str:
        page = referee.get("/flags/?kind=flag").get_data(as_text=True)
        return next(a for a in articles(page) if a["data-rule"] == "P4")["text"]

    assert "claim window: this trick, 3 pass(es) from its end" in window()  # W led 9H: S, E and N may pass
    post_events([{"type": "pass", "t": 20.0, "id": "x1", "seat": "S"}])
    assert "claim window: this trick, 2 pass(es) from its end" in window()


def test_a_flag_after_an_open_read_of_its_deal_is_listed_under_it(referee):
    page = referee.get("/flags/").get_data(as_text=True)
    found = {a["data-rule"]: a for a in articles(page)}
    assert found["P4"]["parent"] == found["low_confidence"]["data-key"]  # S's P4 came after E's doubtful read
    assert "1 raised after it in this deal (may follow from it)" in found["low_confidence"]["text"]
    form_post(referee, "/flags/T1/confirm_read", of="p2")
    page = referee.get("/flags/").get_data(as_text=True)
    assert {a["data-rule"]: a for a in articles(page)}["P4"]["parent"] is None  # the read stands: on its own


def item(key: str, at: float, kind: str = "flag", rule: str | None = None, deal: int = 1, status="open") -> dict:
    return {"key": key, "kind": kind, "status": status, "deal": deal, "knock_on": [],
            "record": {"rule": rule, "reason": None if rule else "low_confidence", "seat": "S", "at": at}}


def test_a_chain_of_knock_ons_hangs_under_its_first_cause():
    doubt = item("d", 5.0, "doubt")
    first, second = item("a", 8.0, rule="P4"), item("b", 9.0, rule="K3")
    own = item("c", 9.5, rule="R2")  # not judged against the read: its own item
    later_deal = item("e", 10.0, rule="P4", deal=2)
    answered = item("f", 1.0, "doubt", status="read_confirmed")
    heads = group_knock_ons([answered, doubt, first, second, own, later_deal])
    assert heads == [doubt, own, later_deal]
    assert doubt["knock_on"] == [first, second]


def test_filters_by_table_and_kind(referee, post_events):
    events = session_events("T2")
    for e in events:
        e["table"] = "T2"
    post_events(events[:5], "T2")
    tables = {a["data-table"] for a in articles(referee.get("/flags/?table=T2").get_data(as_text=True))}
    assert tables == {"T2"}
    kinds = {re.search(r"kind-(\S+)", a["class"]).group(1)
             for a in articles(referee.get("/flags/?kind=doubt").get_data(as_text=True))}
    assert kinds == {"doubt"}
    live = referee.get("/flags/live?table=T1&kind=flag").get_data(as_text=True)
    assert {(a["data-table"], a["data-rule"]) for a in articles(live)} == {("T1", "P4")}
    page = referee.get("/flags/?kind=bogus")
    assert page.status_code == 400
    assert "kind=&#39;bogus&#39;: expected one of doubt, flag, other" in page.get_data(as_text=True)
    assert 'data-url="/flags/live?table=T2"' in referee.get("/flags/?table=T2").get_data(as_text=True)


def test_the_console_speaks_chinese(referee):
    referee.post("/language/zh", data={"csrf_token": csrf_of(referee, "/"), "next": "/flags/"})
    page = referee.get("/flags/").get_data(as_text=True)
    for words in ("识别待核对", "识别无误", "不受指出时限限制", "指出时限：本圈内，再有3家过牌即结束", "可能由此引起", "筛选"):
        assert words in page, words


def jumps(page: str) -> dict[str, str | None]:
    """Where the review's jump buttons lead (None: disabled)."""
    out = {}
    for name in ("jump-play", "jump-flag", "ticks-toggle"):
        cls, href = re.search(rf'class="button {name}([^"]*)" href="([^"]*)"', page).groups()
        out[name] = None if "disabled" in cls else href.replace("&amp;", "&")
    return out


def test_appeal_review_hides_clock_ticks_unless_asked(referee, post_events):
    post_events([{"type": "tick", "t": 19.0 + i, "id": f"tick{i}"} for i in range(3)])  # seq 8-10
    page = referee.get("/tables/T1/review?deal=1&step=6").get_data(as_text=True)
    assert "step 6 of 6" in page and "show clock ticks (3)" in page
    assert jumps(page)["ticks-toggle"] == "/tables/T1/review?seq=7&ticks=1"  # W's 9H, seq 7, with the ticks
    shown = referee.get("/tables/T1/review?seq=7&ticks=1").get_data(as_text=True)
    assert "step 6 of 9" in shown and "hide clock ticks" in shown
    tick = referee.get("/tables/T1/review?deal=1&step=9&ticks=1").get_data(as_text=True)
    assert "step 9 of 9" in tick and jumps(tick)["ticks-toggle"] == "/tables/T1/review?seq=7"
    assert "step 9 of 9" in referee.get("/tables/T1/review?seq=10").get_data(as_text=True)  # asked for a tick


def test_appeal_review_jumps_to_the_next_play_and_the_next_flag(referee):
    start = jumps(referee.get("/tables/T1/review?deal=1&step=1").get_data(as_text=True))
    assert start["jump-play"] == "/tables/T1/review?seq=3" and start["jump-flag"] == "/tables/T1/review?seq=4"
    doubt = referee.get("/tables/T1/review?seq=4").get_data(as_text=True)
    assert "step 3 of 6" in doubt and jumps(doubt)["jump-flag"] == "/tables/T1/review?seq=5"  # S's P4
    last = jumps(referee.get("/tables/T1/review?seq=5").get_data(as_text=True))
    assert last["jump-flag"] is None and last["jump-play"] == "/tables/T1/review?seq=7"


def test_a_corrected_step_keeps_the_original_reads_evidence(referee):
    form_post(referee, "/flags/T1/correct", of="p2", seat="E", kind="play", cards="6S")
    page = referee.get("/tables/T1/review?seq=4").get_data(as_text=True)
    evidence = page.split('class="evidence"', 1)[1].split("</div>", 1)[0]
    assert f'/api/tables/T1/evidence/{"ab" * 32}' in evidence and "low_confidence" in evidence
    assert "evidence sent with the original read" in evidence and "no evidence sent" not in evidence
    console = referee.get("/flags/").get_data(as_text=True)
    (corrected,) = [a for a in articles(console) if a["data-rule"] == "corrected"]
    assert "status-corrected" in corrected["class"] and "corrected · referee" in corrected["text"]
    assert f'evidence/{"ab" * 32}' in console.split('data-rule="corrected"', 1)[1].split("</article>", 1)[0]


SUSPECT = {"type": "play", "t": 21.0, "id": "p6", "seat": "S", "cards": ["8S"], "source": "camera", "confidence": 0.6,
           "alternatives": [{"cards": ["JS"], "p": 0.3}]}
"""S's camera read 8S, which does not beat W's 9H; the reader's alternative JS does."""


def test_a_suspected_read_offers_its_other_readings_in_one_click(app, referee, post_events):
    post_events([SUSPECT])
    page = referee.get("/flags/").get_data(as_text=True)
    suspect = next(a for a in articles(page) if a["data-rule"] == "suspect_read")
    assert suspect["pinned"] and "suspected misread" in suspect["text"] and "alternative 1" in suspect["text"]
    take = page.split('data-rule="suspect_read"', 1)[1].split('class="take-reading"', 1)[1].split("</form>", 1)[0]
    assert 'name="of" value="p6"' in take and 'name="cards" value="JS"' in take
    page = form_post(referee, "/flags/T1/correct", of="p6", seat="S", kind="play", cards="JS").get_data(as_text=True)
    correction = get_store(app).events("T1")[-1]
    assert correction["type"] == "correction" and correction["event"]["cards"] == ["JS"]
    assert status_of(page, "corrected") == "corrected"
    assert not [a for a in articles(page) if a["data-rule"] == "suspect_read" and "status-open" in a["class"]]
    referee.post("/language/zh", data={"csrf_token": csrf_of(referee, "/"), "next": "/flags/"})
    post_events([{**SUSPECT, "id": "p7", "seat": "E", "t": 24.0, "cards": ["TS"], "alternatives": [
        {"cards": ["QS"], "p": 0.3}]}])
    page = referee.get("/flags/").get_data(as_text=True)
    assert "疑似误识别" in page and "备选识别1" in page and "实为" in page


def test_a_card_an_earlier_read_took_from_the_hand_offers_to_correct_that_read(app, referee, post_events):
    camera = {"source": "camera", "confidence": 0.97}
    post_events([{"type": "play", "t": 21.0, "id": "p6", "seat": "S", "cards": ["TS"], **camera}]
                + [{"type": "pass", "t": t, "id": f"x{n}", "seat": seat, "source": "camera"}
                   for n, (seat, t) in enumerate((("E", 24.0), ("N", 27.0), ("W", 30.0)))]
                + [{"type": "play", "t": 33.0, "id": "p7", "seat": "S", "cards": ["3S"], **camera}])
    page = referee.get("/flags/").get_data(as_text=True)
    item = page.split('data-rule="suspect_read"', 1)[1].split("</article>", 1)[0]
    assert "earlier reads laid already" in item
    earlier = item.split('class="correct-earlier"', 1)[1].split("</form>", 1)[0]
    assert 'name="of" value="p1"' in earlier and 'value="3S">' in earlier
    referee.post("/language/zh", data={"csrf_token": csrf_of(referee, "/"), "next": "/flags/"})
    page = referee.get("/flags/").get_data(as_text=True)
    assert "已由南先前的识别打出" in page and "南先前的识别（5.0 秒）" in page and "更正那次识别" in page
    page = form_post(referee, "/flags/T1/correct", of="p1", seat="S", kind="play", cards="3D").get_data(as_text=True)
    assert not [a for a in articles(page) if a["data-rule"] == "suspect_read" and "status-open" in a["class"]]


def test_appeal_review_shows_who_confirmed_a_read_and_what_settled_one(referee, post_events):
    form_post(referee, "/flags/T1/confirm_read", of="p2")
    post_events([{"type": "play", "t": 21.0, "id": "p6", "seat": "S", "cards": ["JS"], "source": "camera",
                  "confidence": 0.6, "alternatives": [{"cards": ["JH"], "p": 0.35}]}])  # S holds no heart
    page = referee.get("/tables/T1/review?seq=4").get_data(as_text=True)
    row = page.split('<tr class="current', 1)[1].split("</tr>", 1)[0]
    assert "read confirmed by referee" in row
    confirm = referee.get("/tables/T1/review?seq=8").get_data(as_text=True)
    assert "read confirmed</h2>" in confirm and "read confirmed by referee" in confirm.split('class="step-records"')[1]
    settled = referee.get("/tables/T1/review?seq=9").get_data(as_text=True).split('<tr class="current', 1)[1]
    row = settled.split("</tr>", 1)[0]
    assert re.search(r"settled by: JH: S does not hold JH \(\d+%\)", row) and "doubtful" not in row
    assert "to confirm" not in row  # the deal settled it: nobody is asked
    table = re.sub(r'name="csrf_token" value="[^"]*"', "", referee.get("/tables/T1").get_data(as_text=True))  # a random token may spell JH
    assert "JH" not in table  # what a hand holds stays with referees
    assert not [a for a in articles(referee.get("/flags/").get_data(as_text=True)) if a["data-seat"] == "S"
                and "21.0" in a["data-key"]]  # context settled it: nobody is asked


def test_every_tables_closed_items_are_cut_to_the_latest(referee, monkeypatch):
    monkeypatch.setattr(flags, "CLOSED_SHOWN", 1)
    form_post(referee, "/flags/T1/confirm_read", of="p2")
    form_post(referee, "/flags/T1/dismiss", rule="P4", seat="S", at="12.0", reason="cards went back at once")
    page = referee.get("/flags/").get_data(as_text=True)
    assert [a["data-rule"] for a in articles(page)] == ["P4"]  # the latest (t=12) of the two
    assert "2 closed or lapsed" in page and "1 earlier ones not shown: pick a table to see all of its own" in page
    page = referee.get("/flags/?table=T1").get_data(as_text=True)
    assert [a["data-rule"] for a in articles(page)] == ["P4", "low_confidence"] and "not shown" not in page


def test_the_public_play_history_says_who_confirmed_a_read(referee):
    history = referee.get("/tables/T1").get_data(as_text=True).split('class="history"', 1)[1]
    assert "low-confidence read: to confirm" in history
    form_post(referee, "/flags/T1/confirm_read", of="p2")
    history = referee.get("/tables/T1").get_data(as_text=True).split('class="history"', 1)[1]
    assert "read confirmed by referee" in history and "to confirm" not in history


def _timeline(app):
    with app.test_request_context():
        return context.timelines().get("T1")


def _time_form(page: str) -> dict:
    """The fields of the page's 'correct the time' form."""
    form = page.split('class="correct-time"', 1)[1].split("</form>", 1)[0]
    return dict(re.findall(r'name="(of|kind|t)"[^>]*value="([^"]*)"', form))


def test_a_far_future_tick_is_corrected_to_its_true_time_from_the_appeal_review(app, referee, post_events):
    assert post_events([{"type": "tick", "t": 3000.0, "id": "k1"}])[0]["status"] == "accepted"  # seq 8
    (late,) = post_events([{"type": "pass", "t": 20.0, "id": "p6", "seat": "S"}])
    assert late["status"] == "rejected" and "time goes backwards: t=20 after t=3000" in late["reason"]
    console = referee.get("/flags/").get_data(as_text=True)
    (over,) = [a for a in articles(console) if a["data-rule"].startswith("K") and "status-open" in a["class"]]
    assert _time_form(console.split(f'data-key="{over["data-key"]}"', 1)[1]) == {"of": "k1", "kind": "same",
                                                                                "t": "3000"}
    page = referee.get("/tables/T1/review?seq=8").get_data(as_text=True)
    assert _time_form(page) == {"of": "k1", "kind": "same", "t": "3000"}
    done = form_post(referee, "/flags/T1/correct", of="k1", kind="same", t="19",
                     next="/tables/T1/review?seq=8").get_data(as_text=True)
    assert "Recorded: correction." in done
    assert "table time corrected by referee: was 3000.0 s, now 19.0 s" in done
    correction = get_store(app).events("T1")[-1]
    assert correction["type"] == "correction" and correction["t"] == 19.0  # the table's time once corrected
    assert correction["event"] == {"type": "tick", "t": 19.0, "source": "manual"}
    console = referee.get("/flags/").get_data(as_text=True)  # the table judged at the true time: no over-time
    assert not [a for a in articles(console) if a["data-rule"] == over["data-rule"]]
    assert post_events([{"type": "pass", "t": 20.0, "id": "p6", "seat": "S"}])[0]["status"] == "accepted"
    assert "table time corrected" not in referee.get("/tables/T1/review?seq=7").get_data(as_text=True)


def test_a_play_corrected_with_a_time_past_its_neighbours_is_refused_naming_the_bound(app, referee):
    before = len(get_store(app).events("T1"))
    page = form_post(referee, "/flags/T1/correct", of="p2", seat="E", kind="play", cards="6S",
                     t="13").get_data(as_text=True)
    assert "t=13 is outside its neighbours&#39; times, 5&lt;=t&lt;=12" in page
    page = form_post(referee, "/flags/T1/correct", of="p2", seat="E", kind="play", cards="6S",
                     t="10").get_data(as_text=True)
    assert "Recorded: correction." in page
    (step,) = [s for s in _timeline(app).steps if s.event.get("id") == "p2"]
    assert step.event["t"] == 10.0 and step.event["cards"] == ["6S"] and step.corrected["original"]["t"] == 9.0
    assert len(get_store(app).events("T1")) == before + 1


@pytest.mark.parametrize("fields, reason", [
    ({"t": "soon"}, "table time: expected seconds (a number, 0 or more), got soon"),
    ({"t": "nan"}, "table time: expected seconds (a number, 0 or more), got nan"),
    ({"t": "-1"}, "table time: expected seconds (a number, 0 or more), got -1"),
    ({}, "table time: give the event&#39;s true table time"),
    ({"t": "18.0"}, "table time: give the event&#39;s true table time"),  # its time as it stands
])
def test_a_time_correction_without_a_true_time_is_refused_naming_why(app, referee, fields, reason):
    before = len(get_store(app).events("T1"))
    page = form_post(referee, "/flags/T1/correct", of="p5", kind="same", **fields).get_data(as_text=True)
    assert f"Refused: {reason}" in page
    assert len(get_store(app).events("T1")) == before


def test_only_a_referee_corrects_a_time(app, referee):
    viewer = app.test_client()
    login(viewer, "scorer")
    response = viewer.post("/flags/T1/correct", data={"of": "p5", "kind": "same", "t": "17",
                                                      "csrf_token": csrf_of(viewer, "/")})
    assert response.status_code == 403
    assert get_store(app).events("T1")[-1]["type"] != "correction"


def test_a_read_where_nobody_played_is_struck_from_the_console(app, referee):
    """"Nobody played": a correction with no event; the table is judged without the read, and
    the results page's audit says it was struck, in both languages."""
    page = referee.get("/flags/").get_data(as_text=True)
    assert 'value="none">nobody played (strike the read)</option>' in page
    page = form_post(referee, "/flags/T1/correct", of="p2", kind="none").get_data(as_text=True)
    assert "Recorded: correction." in page
    event = get_store(app).events("T1")[-1]
    assert {k: event[k] for k in ("type", "of", "event", "by")} == {
        "type": "correction", "of": "p2", "event": None, "by": "referee"}
    table = referee.get("/api/tables/T1").get_json()
    assert ("E", 9.0) not in [(h["seat"], h["t"]) for h in table["history"]]
    assert table["state"]["deal"]["counts"]["E"] == 27
    assert table["reviews"] == 0
    assert "struck: nobody played" in referee.get("/results").get_data(as_text=True)
    referee.post("/language/zh", data={"csrf_token": csrf_of(referee, "/"), "next": "/flags/"})
    assert "已删除：未出牌" in referee.get("/results").get_data(as_text=True)
    assert "未出牌（删除此识别）" in referee.get("/flags/").get_data(as_text=True)


def words(text: str) -> str:
    """An item's text with its markup's line breaks and indents as single spaces."""
    return " ".join(text.split())


def test_a_struck_read_stays_on_the_console_closed_with_who_struck_it(app, referee):
    """A struck read is no step (nobody acted there), yet the console keeps it, closed as a
    corrected read is: whose read, when, what was read and its evidence, and who struck it,
    with nothing left to answer; a struck pass says it was one. In both languages."""
    form_post(referee, "/flags/T1/correct", of="p2", kind="none")
    form_post(referee, "/flags/T1/correct", of="p4", kind="none")
    assert [e["event"] for e in get_store(app).events("T1") if e["type"] == "correction"] == [None, None]
    page = referee.get("/flags/").get_data(as_text=True)
    struck = {a["data-seat"]: a for a in articles(page) if a["data-rule"] == "struck"}
    assert set(struck) == {"E", "N"}
    assert all("status-struck" in a["class"] and "kind-doubt" in a["class"] for a in struck.values())
    east, north = words(struck["E"]["text"]), words(struck["N"]["text"])
    assert "read struck: nobody played" in east and "struck · referee" in east
    assert "table time 9.0 s" in east and "(camera, 55%)" in east
    assert "read: pass" in north and "table time 15.0 s" in north
    item = page.split('data-key="T1:struck:E:9.0"', 1)[1].split("</article>", 1)[0]
    assert 'data-card="5S"' in item and f'evidence/{"ab" * 32}' in item
    assert item.count("<form") == 1 and 'class="restore"' in item and "put the read back" in item
    closed = page.split('class="closed-flags"', 1)[1]
    assert 'data-key="T1:struck:E:9.0"' in closed and 'data-key="T1:struck:N:15.0"' in closed
    assert "T1:struck:E:9.0" in referee.get("/flags/?kind=doubt").get_data(as_text=True)
    referee.post("/language/zh", data={"csrf_token": csrf_of(referee, "/"), "next": "/flags/"})
    page = referee.get("/flags/").get_data(as_text=True)
    struck = {a["data-seat"]: words(a["text"]) for a in articles(page) if a["data-rule"] == "struck"}
    assert "识别已删除：未出牌" in struck["E"] and "已删除 · referee" in struck["E"] and "牌桌计时9.0秒" in struck["E"]
    assert "识别：过" in struck["N"]


def test_a_struck_read_is_put_back_with_one_click_as_it_was_read(app, referee):
    """A strike in error is undone from the struck item: its one form restates the read as
    it came (seat, cards), a referee's correction that puts the play back where it stood,
    so the table is judged with it again and the console lists it corrected, not struck."""
    form_post(referee, "/flags/T1/correct", of="p2", kind="none")
    assert referee.get("/api/tables/T1").get_json()["state"]["deal"]["counts"]["E"] == 27
    page = referee.get("/flags/").get_data(as_text=True)
    item = page.split('data-key="T1:struck:E:9.0"', 1)[1].split("</article>", 1)[0]
    fields = dict(re.findall(r'name="(of|seat|kind|cards)" value="([^"]*)"', item))
    assert fields == {"of": "p2", "seat": "E", "kind": "play", "cards": "5S"}
    page = form_post(referee, "/flags/T1/correct", **fields).get_data(as_text=True)
    assert "Recorded: correction." in page
    event = get_store(app).events("T1")[-1]
    assert {k: event[k] for k in ("type", "of", "by")} == {"type": "correction", "of": "p2", "by": "referee"}
    assert {k: event["event"][k] for k in ("type", "seat", "cards", "source")} == {
        "type": "play", "seat": "E", "cards": ["5S"], "source": "manual"}
    table = referee.get("/api/tables/T1").get_json()
    assert ("E", 9.0) in [(h["seat"], h["t"]) for h in table["history"]]
    assert table["state"]["deal"]["counts"]["E"] == 26
    assert not [a for a in articles(referee.get("/flags/").get_data(as_text=True)) if a["data-rule"] == "struck"]
    referee.post("/language/zh", data={"csrf_token": csrf_of(referee, "/"), "next": "/flags/"})
    form_post(referee, "/flags/T1/correct", of="p2", kind="none")
    assert "恢复此识别" in referee.get("/flags/").get_data(as_text=True)


def test_a_strike_is_counted_among_the_public_corrections_as_the_delay_shows_it(app, referee):
    """A strike is a referee's correction too: the public count holds it, and behind the
    broadcast delay once the steps shown reach where the struck read stood, as a corrected
    step is counted once it is shown; the latest read struck counts at once without a delay."""
    form_post(referee, "/flags/T1/correct", of="p5", seat="W", kind="pass")  # W's 9H at 18 was a pass
    form_post(referee, "/flags/T1/correct", of="p2", kind="none")  # nobody played at 9
    assert referee.get("/api/tables/T1").get_json()["corrections"] == 2
    with app.app_context():
        shown = {delay: public_table(context.timelines(), "T1", delay, spectator=True)["corrections"]
                 for delay in (4.0, 10.0)}
    assert shown == {4.0: 1, 10.0: 0}  # up to S's 7D at 12: the strike only; up to S's 3S at 5: neither
    form_post(referee, "/flags/T1/correct", of="p5", kind="none")  # W's pass struck too: the latest read
    assert referee.get("/api/tables/T1").get_json()["corrections"] == 2


AGENT_EVIDENCE = {"frame": 3, "frames": ["ab" * 32], "sources": ["camera"]}
RFID_EVIDENCE = {"tags": ["13005D1DA5"], "unknown": ["3000E2801170"], "sources": ["rfid"]}
"""What agents send with a read: the camera's frame number and frames, the RFID tags read
and those no deck of the table holds, and the sources (``web.app.agent.contract_evidence``)."""


def test_the_consoles_evidence_and_readings_are_in_the_readers_words(app, post_events):
    """The evidence an agent sends and the readings the engine names in English ("without 9H,
    not in E's hand") are said in the reader's language: the Chinese console holds no
    English word."""
    events = session_events()
    events[3]["evidence"], events[4]["evidence"] = AGENT_EVIDENCE, RFID_EVIDENCE
    post_events(events)
    post_events([{"type": "play", "t": 21.0, "id": "p6", "seat": "E", "cards": ["TS", "9H"], "source": "camera",
                  "confidence": 0.6}])  # E holds no heart
    client = app.test_client()
    login(client, "referee")
    text = words(" ".join(a["text"] for a in articles(client.get("/flags/").get_data(as_text=True))))
    for said in ("frame no.: 3", "sources: camera", "sources: RFID", "tags not in this table's deck: 3000E2801170",
                 "without ♥9, not in East's hand"):
        assert said in text, said
    client.post("/language/zh", data={"csrf_token": csrf_of(client, "/"), "next": "/flags/"})
    text = words(" ".join(a["text"] for a in articles(client.get("/flags/").get_data(as_text=True))))
    for said in ("画面序号： 3", "来源： 摄像头", "来源： 芯片", "非本桌牌组的芯片： 3000E2801170", "不计♥9（东手中无此牌）"):
        assert said in text, said
    assert re.findall(r"\b[A-Za-z]{2,}\b", text) == []
    with app.test_request_context():
        session["lang"] = "zh"
        assert flags.reading_label("two SJ counted once") == "两张小王重叠算作一张"
        assert flags.reading_label("8C read as 6D") == "♣8被识别为♦6"
