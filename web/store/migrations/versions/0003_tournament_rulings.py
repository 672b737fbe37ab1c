"""Tournament rulings: forfeits and overridden draws, with who ruled and why

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournament_rulings",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tournament_id", sa.String(length=60), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("table_no", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("pair", sa.String(length=60), nullable=True),
        sa.Column("by", sa.String(length=120), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"],
                                name=op.f("fk_tournament_rulings_tournament_id_tournaments")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_rulings")),
    )
    with op.batch_alter_table("tournament_rulings", schema=None) as batch_op:
        batch_op.create_index("ix_tournament_rulings_tournament_id", ["tournament_id", "round"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("tournament_rulings", schema=None) as batch_op:
        batch_op.drop_index("ix_tournament_rulings_tournament_id")
    op.drop_table("tournament_rulings")
