"""Rejected events bounded per table: a tally of every refusal, the oldest bodies summarised

Adds ``rejected_tallies`` (per table: how many events were refused, how many of their
bodies are no longer kept and why those were refused) and an index of the refused events
by table, so the store keeps only each table's latest refused bodies. The tallies of a
store's existing refusals are counted here.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rejected_tallies",
        sa.Column("table_id", sa.String(length=120), nullable=False),
        sa.Column("rejected", sa.Integer(), nullable=False),
        sa.Column("dropped", sa.Integer(), nullable=False),
        sa.Column("first_at", sa.Float(), nullable=False),
        sa.Column("last_at", sa.Float(), nullable=False),
        sa.Column("reasons", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("table_id", name=op.f("pk_rejected_tallies")),
    )
    with op.batch_alter_table("rejected_events", schema=None) as batch_op:
        batch_op.create_index("ix_rejected_events_table_id", ["table_id", "id"], unique=False)
    op.execute(sa.text(
        "INSERT INTO rejected_tallies (table_id, rejected, dropped, first_at, last_at, reasons) "
        "SELECT COALESCE(table_id, ''), COUNT(*), 0, MIN(received_at), MAX(received_at), '{}' "
        "FROM rejected_events GROUP BY COALESCE(table_id, '')"))


def downgrade() -> None:
    with op.batch_alter_table("rejected_events", schema=None) as batch_op:
        batch_op.drop_index("ix_rejected_events_table_id")
    op.drop_table("rejected_tallies")
