"""Sign-off links and doors: a side signs on a phone through a short-lived link; every
sign-off action names its door (link or desk) and the table's chain head

Both tables are sealed like the sign-offs: this upgrade makes their (empty) seal rows,
which the store signs when it opens the upgraded database (it holds the key).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

SEALED = ("rows:sign_links", "rows:signoff_doors")


def upgrade() -> None:
    op.create_table(
        "sign_links",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("table_id", sa.String(length=120), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("side", sa.String(length=2), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("issued_by", sa.String(length=120), nullable=False),
        sa.Column("issued_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.Column("ended", sa.String(length=20), nullable=True),
        sa.Column("ended_at", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["table_id"], ["table_heads.table_id"],
                                name=op.f("fk_sign_links_table_id_table_heads")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sign_links")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_sign_links_token_hash")),
    )
    with op.batch_alter_table("sign_links", schema=None) as batch_op:
        batch_op.create_index("ix_sign_links_table_id", ["table_id", "session"], unique=False)
    op.create_table(
        "signoff_doors",
        sa.Column("signoff_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("door", sa.String(length=10), nullable=False),
        sa.Column("link_id", sa.Integer(), nullable=True),
        sa.Column("official", sa.String(length=120), nullable=True),
        sa.Column("head_seq", sa.Integer(), nullable=False),
        sa.Column("head_hash", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["signoff_id"], ["signoffs.id"], name=op.f("fk_signoff_doors_signoff_id_signoffs")),
        sa.ForeignKeyConstraint(["link_id"], ["sign_links.id"], name=op.f("fk_signoff_doors_link_id_sign_links")),
        sa.PrimaryKeyConstraint("signoff_id", name=op.f("pk_signoff_doors")),
    )
    seals = sa.table("seals", sa.column("name", sa.String), sa.column("body", sa.Text), sa.column("mac", sa.String))
    op.bulk_insert(seals, [{"name": name, "body": "{}", "mac": None} for name in SEALED])


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM seals WHERE name IN ('rows:sign_links', 'rows:signoff_doors')"))
    op.drop_table("signoff_doors")
    with op.batch_alter_table("sign_links", schema=None) as batch_op:
        batch_op.drop_index("ix_sign_links_table_id")
    op.drop_table("sign_links")
