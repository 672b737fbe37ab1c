"""Sign-off links (S3 at the table): once per side, for its own table and side, expiring,
kept as digests in sealed rows; every sign-off names its door and the table's chain head."""

from __future__ import annotations

import pytest
from sqlalchemy import insert, select, text

from web.store.db import make_engine

from web.store.models import SignLink, TableHead
from web.tournament import export, service, signlinks, signoff
from web.tournament.signlinks import LinkRefused

START = 1_769_000_000.0


class Clock:
    """Wall time the test moves by hand."""

    def __init__(self):
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def cup(store, desk):
    store.clock = Clock()
    service.create(store, "CUP", "Cup", rounds=3, seed=1)
    for p in "ABCD":
        service.add_pair(store, "CUP", p, f"pair {p}", f"{p}1", f"{p}2")
    drawn = service.pair_round(store, "CUP")
    for m in drawn:
        desk.play(m)
    return store, drawn


def _issued(store, table_id):
    return {i.side: i for i in signlinks.issue(store, table_id, "Scorer Zhao")}


def test_a_link_signs_once_for_its_own_table_and_side(cup):
    store, (m, other) = cup
    links = _issued(store, m.table_id)
    assert set(links) == {"NS", "EW"} and links["NS"].token != links["EW"].token
    assert links["NS"].code != links["EW"].code and all(len(i.code) == 6 for i in links.values())
    with pytest.raises(LinkRefused, match=rf"for table {m.table_id}, not table {other.table_id}"):
        signlinks.by_token(store, other.table_id, "NS", links["NS"].token)
    with pytest.raises(LinkRefused, match="for NS, not EW: each side signs with its own"):
        signlinks.by_token(store, m.table_id, "EW", links["NS"].token)
    link = signlinks.by_token(store, m.table_id, "NS", links["NS"].token)
    assert (link.side, link.pair, link.players) == ("NS", m.ns, (f"{m.ns}1", f"{m.ns}2"))
    with pytest.raises(LinkRefused, match=rf"'{m.ew}1' is not a player of pair {m.ns}"):
        signlinks.redeem(store, link, "sign", f"{m.ew}1")  # refused: the link stays open
    store.clock.now += 60
    status = signlinks.redeem(store, link, "sign", f"{m.ns}2")
    head = _head(store, m.table_id)
    assert status.signed == {"NS": f"{m.ns}2"}
    assert status.doors["NS"] == {"door": "link", "official": None, "head_seq": head[0], "head_hash": head[1]}
    with pytest.raises(LinkRefused, match=rf"used at \d\d:\d\d \(signed by {m.ns}2\); it works once"):
        signlinks.by_token(store, m.table_id, "NS", links["NS"].token)
    with pytest.raises(LinkRefused, match="it works once"):  # a replay of the spent link itself
        signlinks.redeem(store, link, "sign", f"{m.ns}1")
    assert signoff.status(store, m.table_id).signed == {"NS": f"{m.ns}2"}
    sheet = next(x for x in export.tournament_sheets(store, "CUP") if x.table == m.table_id)
    signed = next(r["signed"] for r in sheet.rows() if r["line"] == "result")
    assert signed == f"pending NS:{m.ns}2 [手机链接 phone link; 链 chain #{head[0]} {head[1][:12]}]"


def test_a_link_expires_and_never_outlives_the_appeal_window(cup):
    store, (m, _) = cup
    store.clock.now += 20 * 60  # issued 20 minutes after the round: X7 closes 10 minutes later
    links = {i.side: i for i in signlinks.issue(store, m.table_id, "Scorer Zhao", ttl_s=30 * 60)}
    with store.engine.connect() as conn:
        ended = signoff.round_ended_at(conn, m.table_id, 1)
    assert links["NS"].expires_at == ended + signoff.APPEAL_S
    store.clock.now = links["NS"].expires_at + 1
    with pytest.raises(LinkRefused, match="expired at"):
        signlinks.by_token(store, m.table_id, "NS", links["NS"].token)
    with pytest.raises(LinkRefused, match="X7's 30 minutes are past"):
        signlinks.issue(store, m.table_id, "Scorer Zhao")
    with pytest.raises(ValueError, match="between 1 s and 30 min"):
        signlinks.issue(store, m.table_id, "Scorer Zhao", ttl_s=31 * 60)


def test_a_dispute_spends_the_link_and_a_new_issue_replaces_the_old(cup):
    store, (m, _) = cup
    first = _issued(store, m.table_id)
    store.clock.now += 60
    second = _issued(store, m.table_id)
    with pytest.raises(LinkRefused, match="a newer link replaced this one"):
        signlinks.by_token(store, m.table_id, "EW", first["EW"].token)
    link = signlinks.by_code(store, m.table_id, second["EW"].code)
    assert link.side == "EW"
    with pytest.raises(LinkRefused, match="the reason is needed"):
        signlinks.redeem(store, link, "dispute", f"{m.ew}1", "  ")
    assert signlinks.redeem(store, link, "dispute", f"{m.ew}1", "deal 2 order").state == "disputed"
    with pytest.raises(LinkRefused, match="not known here"):  # a spent code opens nothing
        signlinks.by_code(store, m.table_id, second["EW"].code)
    with pytest.raises(LinkRefused, match="the result is disputed; a referee resolves"):
        signlinks.issue(store, m.table_id, "Scorer Zhao")
    assert [a["door"] for a in signoff.trail(store, m.table_id, 1)] == ["link"]


def test_codes_are_per_table_and_six_digits(cup):
    store, (m, other) = cup
    links = _issued(store, m.table_id)
    _issued(store, other.table_id)
    with pytest.raises(LinkRefused, match="not known here"):
        signlinks.by_code(store, other.table_id, links["NS"].code)
    with pytest.raises(LinkRefused, match="6 digits, not '12a'"):
        signlinks.by_code(store, m.table_id, "12a")
    assert signlinks.by_code(store, m.table_id, f" {links['NS'].code} ").side == "NS"


def test_only_digests_are_kept_and_a_row_written_without_the_key_never_opens(cup):
    store, (m, _) = cup
    links = _issued(store, m.table_id)
    with store.engine.connect() as conn:
        kept = conn.execute(text("SELECT * FROM sign_links")).mappings().all()
    words = " ".join(str(v) for row in kept for v in row.values())
    assert not any(i.token in words or i.code in words for i in links.values())
    signlinks.redeem(store, signlinks.by_token(store, m.table_id, "EW", links["EW"].token), "sign", f"{m.ew}1")
    assert store.verify().findings == []  # issued, spent and signed through the store: all sealed
    forged = "forged-token"
    beside = make_engine(store.url)  # another program on the database: the store's seals never hear of it
    with beside.begin() as conn:
        conn.execute(insert(SignLink).values(table_id=m.table_id, session=1, side="NS", issued_by="nobody",
                                             token_hash=signlinks.token_digest(forged), code_hash="x",
                                             issued_at=0.0, expires_at=9e12))
    beside.dispose()
    with pytest.raises(LinkRefused, match="not known here"):
        signlinks.by_token(store, m.table_id, "NS", forged)
    assert any("sign_links row" in f.message and "added outside the store" in f.message
               for f in store.verify().findings)


def test_a_desk_signature_names_its_scorer_and_links_need_a_pair_list(cup):
    store_, (m, _) = cup
    status = signoff.sign(store_, m.table_id, "EW", f"{m.ew}1", door=signoff.Door(official="Scorer Zhao"))
    assert status.doors["EW"]["door"] == "desk" and status.doors["EW"]["official"] == "Scorer Zhao"
    assert signoff.door_text(status.doors["EW"]).startswith("记分台 desk (Scorer Zhao); 链 chain #")
    assert [i.side for i in signlinks.issue(store_, m.table_id, "Scorer Zhao")] == ["NS"]  # EW signed
    store_.append_many([{"table": "LOOSE", "t": 1.0, "type": "session_start", "teams": {"NS": "a", "EW": "b"}},
                        {"table": "LOOSE", "t": 2.0, "type": "session_end"}])
    with pytest.raises(LinkRefused, match="not drawn in an event: there is no pair list"):
        signlinks.issue(store_, "LOOSE", "Scorer Zhao")


def _head(store, table_id):
    with store.engine.connect() as conn:
        row = conn.execute(select(TableHead.head_seq, TableHead.head_hash)
                           .where(TableHead.table_id == table_id)).one()
    return row[0], row[1]


def test_two_phones_on_one_link_sign_once(cup):
    """Both captains' phones press Sign at once: one signature, the other told the link is spent."""
    from concurrent.futures import ThreadPoolExecutor

    store, (m, _) = cup
    link = signlinks.by_token(store, m.table_id, "NS", _issued(store, m.table_id)["NS"].token)

    def press(by):
        try:
            return signlinks.redeem(store, link, "sign", by).signed
        except LinkRefused as exc:
            return exc.kind

    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(press, (f"{m.ns}1", f"{m.ns}2")))
    assert sorted(map(str, outcomes)) == sorted([str({"NS": signoff.status(store, m.table_id).signed["NS"]}), "used"])
    assert len([a for a in signoff.trail(store, m.table_id, 1) if a["action"] == "sign"]) == 1


def test_a_store_signed_off_before_doors_upgrades_and_stays_sealed(cup, db_url):
    """Schema 0005 on a store that has sign-offs: they stand (door unknown), the new tables
    are sealed by the store's key as it opens, and verify finds nothing."""
    from alembic import command

    from tests.store.support import TEST_SECRET, TallyDerivation
    from web.store import Store
    from web.store.db import alembic_config
    from web.tournament.tables import TournamentTables

    store, (m, _) = cup
    signoff.sign(store, m.table_id, "NS", f"{m.ns}1")
    cfg = alembic_config()
    with store.engine.begin() as conn:  # back to the schema before sign-off links and doors
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0004")
    store.close()
    with Store(db_url, derivation=TallyDerivation(), secret_key=TEST_SECRET, table_rules=TournamentTables()) as again:
        again.clock = Clock()
        status = signoff.status(again, m.table_id)
        assert status.signed == {"NS": f"{m.ns}1"} and status.doors["NS"]["door"] is None
        assert signoff.door_text(status.doors["NS"]) == ""
        signlinks.issue(again, m.table_id, "Scorer Zhao")
        assert again.verify().findings == []
