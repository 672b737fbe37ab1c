"""One key for a store: a store opened with another key than the one it was made with is
read and verified, never written; a table whose head this key did not sign takes nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, update

from web.store import Store, WrongKey
from web.store.chain import head_mac
from web.store.models import TableHead
from web.store.signing import COOKIES, derived_key

from .support import TallyDerivation

START = {"type": "session_start", "t": 1, "teams": {"NS": "A", "EW": "B"}}


def test_a_store_opened_with_another_key_refuses_every_write_on_one_line(db_url):
    with Store(db_url, secret_key="the store's own key", derivation=TallyDerivation()) as made:
        made.append({**START, "table": "T1"})
        made.add_official("Ref Li", "referee")
    with Store(db_url, secret_key="another key", derivation=TallyDerivation()) as other:
        assert other.key_refusal is not None and "\n" not in other.key_refusal
        assert "signed with another key than the key given" in other.key_refusal
        with pytest.raises(WrongKey, match="nothing is written"):
            other.append({"type": "tick", "table": "T1", "t": 2})
        with pytest.raises(WrongKey):
            other.append_many([{**START, "table": "T2"}])
        with pytest.raises(WrongKey):
            other.submit([{**START, "table": "T3"}])
        with pytest.raises(WrongKey):  # a sealed table (officials) is refused at commit
            other.add_official("Chief Wang", "chief")
        assert not other.verify().ok  # still read and verified
    with Store(db_url, secret_key="the store's own key", derivation=TallyDerivation()) as again:
        assert again.key_refusal is None
        assert [e["seq"] for e in again.events("T1")] == [1] and again.events("T2") == []
        report = again.verify()
        assert report.ok, report.problems


def test_a_table_whose_head_another_key_signed_takes_nothing_and_the_others_go_on(db_url):
    with Store(db_url, secret_key="k", derivation=TallyDerivation()) as store:
        store.append({**START, "table": "T1"})
        store.append({**START, "table": "T2"})
        engine = create_engine(db_url)  # T1's head re-signed with a key the intruder has
        with engine.begin() as conn:
            head = conn.execute(TableHead.__table__.select().where(TableHead.table_id == "T1")).one()
            conn.execute(update(TableHead).where(TableHead.table_id == "T1").values(
                mac=head_mac(b"intruder", "T1", head.ruleset, head.head_seq, head.head_hash, head.generation,
                             head.created_at)))
        engine.dispose()
        outcomes = store.submit([{"type": "tick", "table": "T1", "t": 2}, {"type": "tick", "table": "T2", "t": 2}])
        assert "its head is not signed by this store's key" in outcomes[0].reason
        assert outcomes[1].seq == 2
        assert [e["seq"] for e in store.events("T1")] == [1]


def test_the_cookie_key_is_made_from_the_store_key_and_is_not_it(db_url):
    with Store(db_url, secret_key="k") as store:
        assert store.derived_key(COOKIES) == derived_key(b"k", COOKIES) != b"k"
        assert store.derived_key(COOKIES) != store.derived_key(b"another purpose")
