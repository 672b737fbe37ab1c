"""The sign-off links' doors in the app: only a scorer issues them (and sees their codes),
a typed code is limited per address like a login, a table outside an event has none, and
the lifetime setting stays within X7's 30 minutes."""

from __future__ import annotations

import re

import pytest

from web.app.config import from_env
from web.store import get_store
from web.tournament import service

from .conftest import csrf_of, login


@pytest.fixture
def drawn(app):
    store = get_store(app)
    store.add_official("Chief Wang", "chief")
    service.create(store, "CUP", "Cup", rounds=2, seed=1)
    for p in "AB":
        service.add_pair(store, "CUP", p, f"pair {p}", f"{p}1", f"{p}2")
    (m,) = service.pair_round(store, "CUP")
    events = [{"type": "session_start", "teams": {"NS": m.ns, "EW": m.ew}},
              {"type": "penalty", "side": "EW", "level": "loss", "rule": "X4", "by": "Chief Wang"}]
    store.append_many([{**e, "table": m.table_id, "t": float(i)} for i, e in enumerate(events, 1)])
    return m


def test_only_a_scorer_issues_links_and_sees_their_codes(app, drawn):
    viewer = app.test_client()
    page = viewer.get(f"/tables/{drawn.table_id}").get_data(as_text=True)
    assert "sign-links" not in page and "svg" not in page.split("<main>")[1].split("data-live")[0]
    token = csrf_of(viewer, "/")
    assert viewer.post(f"/tables/{drawn.table_id}/sign-links", data={"csrf_token": token}).status_code == 403
    assert viewer.get(f"/tables/{drawn.table_id}/sign-slip").status_code == 403
    scorer = app.test_client()
    login(scorer, "scorer")
    issued = scorer.post(f"/tables/{drawn.table_id}/sign-links", data={"csrf_token": csrf_of(scorer, "/")})
    assert issued.status_code == 302 and issued.location.endswith(f"/tables/{drawn.table_id}/sign-slip")
    slip = scorer.get(issued.location).get_data(as_text=True)
    assert slip.count('class="qr"') == 2 and len(set(re.findall(r'data-code="(\d{6})"', slip))) == 2
    links = re.findall(rf'href="(http://localhost/sign/{drawn.table_id}/(NS|EW)/[^"]+)"', slip)
    assert sorted(side for _, side in links) == ["EW", "NS"]
    page = viewer.get(links[0][0].removeprefix("http://localhost"))  # opens without a login
    assert page.status_code == 200 and f"{drawn.ns}1" in page.get_data(as_text=True)


def test_a_table_outside_an_event_has_no_links(app, session):
    scorer = app.test_client()
    login(scorer, "scorer")
    assert "sign-links" not in scorer.get("/tables/T1").get_data(as_text=True)
    refused = scorer.post("/tables/T1/sign-links", data={"csrf_token": csrf_of(scorer, "/")}, follow_redirects=True)
    assert "not drawn in an event" in refused.get_data(as_text=True)
    assert scorer.get("/tables/T1/sign-slip").status_code == 404


def test_typed_codes_are_limited_per_address(app, drawn):
    phone = app.test_client()
    token = csrf_of(phone, "/sign")
    for n in range(10):
        answer = phone.post("/sign", data={"csrf_token": token, "table": drawn.table_id, "code": f"{n:06d}"})
        assert answer.status_code == 403 and "not known" in answer.get_data(as_text=True)
    answer = phone.post("/sign", data={"csrf_token": token, "table": drawn.table_id, "code": "000010"})
    assert answer.status_code == 429 and answer.headers["Retry-After"]


@pytest.mark.parametrize("value, error", [("45", "between 0 and 30"), ("half", "a number of minutes, not 'half'"),
                                          ("0", "between 0 and 30")])
def test_the_link_lifetime_setting_stays_within_x7(value, error):
    assert from_env({})["SIGN_LINK_MINUTES"] == 30
    assert from_env({"GUANDAN_SIGN_LINK_MINUTES": "12.5"})["SIGN_LINK_MINUTES"] == 12.5
    with pytest.raises(ValueError, match=f"GUANDAN_SIGN_LINK_MINUTES: {error}"):
        from_env({"GUANDAN_SIGN_LINK_MINUTES": value})


def test_the_sign_page_speaks_the_phones_language(app, drawn):
    phone = app.test_client()
    assert "请输入桌号" in phone.get("/sign", headers={"Accept-Language": "zh-CN,zh;q=0.9"}).get_data(as_text=True)
    assert "Type the table" in app.test_client().get("/sign").get_data(as_text=True)



def test_a_link_of_a_side_that_signed_at_the_desk_meanwhile_says_so(app, drawn):
    from web.tournament import signlinks, signoff

    store = get_store(app)
    (ns, _) = signlinks.issue(store, drawn.table_id, "scorer")
    signoff.sign(store, drawn.table_id, "NS", f"{drawn.ns}1", door=signoff.Door(official="scorer"))
    phone = app.test_client()
    path = f"/sign/{drawn.table_id}/NS/{ns.token}"
    answer = phone.post(path, data={"csrf_token": csrf_of(phone, path), "action": "sign", "by": f"{drawn.ns}2"},
                        headers={"Accept-Language": "en"})
    page = answer.get_data(as_text=True)
    assert answer.status_code == 200 and "The result cannot be signed now." in page
    assert f"NS already signed this result: {drawn.ns}1" in page
