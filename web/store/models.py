"""Tables of the event store and of tournaments (SQLAlchemy 2 declarative models).

The schema is owned by the Alembic migrations in ``web/store/migrations``; these models
describe the same tables for queries, and a test checks that both agree.

Table events are append-only and numbered per table: ``(table_id, seq)`` is the primary
key, so two writers that both try to append ``seq = n`` collide instead of interleaving.
Each event row carries the keyed link of the previous row of its table (a chain per
table, ``chain``); the table's head row keeps the last sequence number and link under a
MAC so that a truncated tail is detected too, and ``seals`` holds the signed table
manifest and the seals of the sign-off, official and tournament tables. Derived records (flags, deal and session results) live beside the events,
numbered by *generation*: a correction re-derives the whole table into a new generation
and the old one stays for the audit trail.
"""

from __future__ import annotations

from sqlalchemy import (
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class TableHead(Base):
    """One row per table stream: its ruleset, last sequence number and hash, generation."""

    __tablename__ = "table_heads"
    table_id: Mapped[str] = mapped_column(String(120), primary_key=True)
    ruleset: Mapped[str] = mapped_column(String(200))
    head_seq: Mapped[int] = mapped_column(Integer, default=0)
    head_hash: Mapped[str] = mapped_column(String(64))
    generation: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[float] = mapped_column(Float)
    mac: Mapped[str | None] = mapped_column(String(64))
    """Keyed MAC of the other columns (``chain.head_mac``): a moved head is caught."""


class TableEvent(Base):
    """An accepted table event, exactly as received (canonical JSON), in a hash chain."""

    __tablename__ = "table_events"
    table_id: Mapped[str] = mapped_column(
        String(120), ForeignKey("table_heads.table_id"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    event_id: Mapped[str | None] = mapped_column(String(120))
    type: Mapped[str] = mapped_column(String(40))
    t: Mapped[float | None] = mapped_column(Float)
    body: Mapped[str] = mapped_column(Text)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
    recorded_at: Mapped[float] = mapped_column(Float)
    __table_args__ = (
        Index("uq_table_events_event_id", "table_id", "event_id", unique=True),
    )


class DerivedRecord(Base):
    """A record the referee derived (flag, deal_end, session_result, review...)."""

    __tablename__ = "derived_records"
    table_id: Mapped[str] = mapped_column(
        String(120), ForeignKey("table_heads.table_id"), primary_key=True
    )
    generation: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    source_seq: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(40))
    deal: Mapped[int | None] = mapped_column(Integer)
    body: Mapped[str] = mapped_column(Text)
    __table_args__ = (Index("ix_derived_records_type", "type"),)


class Snapshot(Base):
    """A referee state (plain JSON data) after event ``seq``; ``event_hash`` pins it to the chain.

    ``mac`` is the HMAC of the row under the store's secret key (``signing``): a blob is
    handed to the referee only if it checks out and is plain JSON; otherwise the table is
    replayed from its events.
    """

    __tablename__ = "snapshots"
    table_id: Mapped[str] = mapped_column(
        String(120), ForeignKey("table_heads.table_id"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    event_hash: Mapped[str] = mapped_column(String(64))
    blob: Mapped[bytes] = mapped_column(LargeBinary)
    mac: Mapped[str] = mapped_column(String(64))


class Seal(Base):
    """A signed list: ``tables`` (the manifest of table ids) or ``rows:<name>`` (a digest of
    every row of a sign-off, official or tournament table, by primary key)."""

    __tablename__ = "seals"
    name: Mapped[str] = mapped_column(String(60), primary_key=True)
    body: Mapped[str] = mapped_column(Text)
    mac: Mapped[str | None] = mapped_column(String(64))


class RejectedEvent(Base):
    """An event that was refused, with the reason: the audit trail of bad input. Only each
    table's latest are kept (``rejected``); ``RejectedTally`` counts and sums up the rest."""

    __tablename__ = "rejected_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str | None] = mapped_column(String(120))
    body: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    received_at: Mapped[float] = mapped_column(Float)
    __table_args__ = (Index("ix_rejected_events_table_id", "table_id", "id"),)


class RejectedTally(Base):
    """Per table (``""``: refused before any table was known): every event refused, and
    the oldest whose bodies are no longer kept, summed up by reason."""

    __tablename__ = "rejected_tallies"
    table_id: Mapped[str] = mapped_column(String(120), primary_key=True)
    rejected: Mapped[int] = mapped_column(Integer)
    dropped: Mapped[int] = mapped_column(Integer)
    first_at: Mapped[float] = mapped_column(Float)
    last_at: Mapped[float] = mapped_column(Float)
    reasons: Mapped[str] = mapped_column(Text)
    """JSON: the dropped events' reasons (their first words) -> how many."""


class Official(Base):
    """A referee (``referee``) or the chief referee (``chief``): who may rule and correct."""

    __tablename__ = "officials"
    name: Mapped[str] = mapped_column(String(120), primary_key=True)
    role: Mapped[str] = mapped_column(String(20))


class SignOff(Base):
    """One sign-off action on a session result (S3); append-only, replayed for the status."""

    __tablename__ = "signoffs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str] = mapped_column(String(120), ForeignKey("table_heads.table_id"))
    session: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(20))
    side: Mapped[str | None] = mapped_column(String(2))
    by: Mapped[str] = mapped_column(String(120))
    result_digest: Mapped[str | None] = mapped_column(String(64))
    note: Mapped[str | None] = mapped_column(Text)
    at: Mapped[float] = mapped_column(Float)
    __table_args__ = (Index("ix_signoffs_table_id", "table_id", "session"),)


class SignLink(Base):
    """A short-lived sign-off link of one side of a session result (S3), opened on a phone.

    Only digests are kept: ``token_hash`` (SHA-256 of the random token in the link) and
    ``code_hash`` (a keyed digest of the 6-digit code, which is too short to hash bare).
    ``ended`` says why it no longer opens (``used``, ``replaced`` by a newer link) and when."""

    __tablename__ = "sign_links"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str] = mapped_column(String(120), ForeignKey("table_heads.table_id"))
    session: Mapped[int] = mapped_column(Integer)
    side: Mapped[str] = mapped_column(String(2))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    code_hash: Mapped[str] = mapped_column(String(64))
    issued_by: Mapped[str] = mapped_column(String(120))
    issued_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float)
    ended: Mapped[str | None] = mapped_column(String(20))
    ended_at: Mapped[float | None] = mapped_column(Float)
    __table_args__ = (Index("ix_sign_links_table_id", "table_id", "session"),)


class SignOffDoor(Base):
    """Through which door a sign-off action came: a side's phone link (``link``) or a scorer
    at the desk (``desk``, with the scorer's name), and the table's chain head then."""

    __tablename__ = "signoff_doors"
    signoff_id: Mapped[int] = mapped_column(Integer, ForeignKey("signoffs.id"), primary_key=True,
                                            autoincrement=False)
    door: Mapped[str] = mapped_column(String(10))
    link_id: Mapped[int | None] = mapped_column(Integer, ForeignKey("sign_links.id"))
    official: Mapped[str | None] = mapped_column(String(120))
    head_seq: Mapped[int] = mapped_column(Integer)
    head_hash: Mapped[str] = mapped_column(String(64))


class Tournament(Base):
    """A multi-round event: ruleset, ranking chain (S2), round clock (W1-W2), lot seed."""

    __tablename__ = "tournaments"
    id: Mapped[str] = mapped_column(String(60), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    ruleset: Mapped[str] = mapped_column(String(200))
    chain: Mapped[str] = mapped_column(String(20))
    rounds: Mapped[int] = mapped_column(Integer)
    round_minutes: Mapped[int] = mapped_column(Integer)
    deal_limit: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(Integer)


class Pair(Base):
    """Two players who play together for the whole tournament."""

    __tablename__ = "pairs"
    tournament_id: Mapped[str] = mapped_column(
        String(60), ForeignKey("tournaments.id"), primary_key=True
    )
    pair_id: Mapped[str] = mapped_column(String(60), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    player1: Mapped[str] = mapped_column(String(120))
    player2: Mapped[str] = mapped_column(String(120))
    rating: Mapped[float] = mapped_column(Float, default=0.0)


class Round(Base):
    """A round of a tournament; ``started_at`` (wall clock) drives the round clock."""

    __tablename__ = "rounds"
    tournament_id: Mapped[str] = mapped_column(
        String(60), ForeignKey("tournaments.id"), primary_key=True
    )
    number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    started_at: Mapped[float | None] = mapped_column(Float)


class Match(Base):
    """One table of one round: NS pair against EW pair (EW empty for a bye).

    ``table_id`` names the event stream that records the session; ``forfeit`` names the
    pair that forfeited (K5/X4), which overrides whatever the table recorded.
    """

    __tablename__ = "matches"
    tournament_id: Mapped[str] = mapped_column(String(60), primary_key=True)
    round: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    table_no: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    ns_pair: Mapped[str] = mapped_column(String(60))
    ew_pair: Mapped[str | None] = mapped_column(String(60))
    table_id: Mapped[str] = mapped_column(String(120), unique=True)
    forfeit: Mapped[str | None] = mapped_column(String(60))
    forfeit_by: Mapped[str | None] = mapped_column(String(120))
    __table_args__ = (
        ForeignKeyConstraint(
            ["tournament_id", "round"], ["rounds.tournament_id", "rounds.number"]
        ),
    )


class TournamentRuling(Base):
    """A tournament official's ruling outside any table's events, with who and why.

    ``forfeit``: ``pair`` forfeits its match (``table_no``) of ``round``; ``draw``: the chief
    referee drew ``round`` before every result of the round before was final (S3).
    Append-only: a ruling is never replaced by another.
    """

    __tablename__ = "tournament_rulings"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tournament_id: Mapped[str] = mapped_column(String(60), ForeignKey("tournaments.id"))
    round: Mapped[int] = mapped_column(Integer)
    table_no: Mapped[int | None] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(20))
    pair: Mapped[str | None] = mapped_column(String(60))
    by: Mapped[str] = mapped_column(String(120))
    reason: Mapped[str] = mapped_column(Text)
    at: Mapped[float] = mapped_column(Float)
    __table_args__ = (Index("ix_tournament_rulings_tournament_id", "tournament_id", "round"),)
