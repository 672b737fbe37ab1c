"""The app's branch: logins, per-table agent tokens, evidence frames

Revision ID: app_0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "app_0001"
down_revision = None
branch_labels = ("app",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "app_users",
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_app_users")),
    )
    op.create_table(
        "app_table_tokens",
        sa.Column("table_id", sa.String(length=120), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("table_id", name=op.f("pk_app_table_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_app_table_tokens_token_hash")),
    )
    op.create_table(
        "app_evidence",
        sa.Column("table_id", sa.String(length=120), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("content_type", sa.String(length=40), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("received_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("table_id", "sha256", name=op.f("pk_app_evidence")),
    )


def downgrade() -> None:
    op.drop_table("app_evidence")
    op.drop_table("app_table_tokens")
    op.drop_table("app_users")
