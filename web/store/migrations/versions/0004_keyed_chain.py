"""Keyed chain: head MACs, the signed table manifest and row seals

A store written before the chain was keyed holds nothing a key could vouch for (anyone
could have recomputed its hashes), so it is not re-sealed here: this migration refuses a
store that holds data and says to import its event files into a new data directory.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

SEALED = ("tables", "rows:officials", "rows:signoffs", "rows:tournaments", "rows:pairs", "rows:rounds",
          "rows:matches", "rows:tournament_rulings")
HELD = ("table_heads", "officials", "signoffs", "tournaments")


def upgrade() -> None:
    conn = op.get_bind()
    held = {name: conn.execute(sa.text(f"SELECT COUNT(*) FROM {name}")).scalar_one() for name in HELD}
    if any(held.values()):
        raise ValueError(
            "this store was written before its records were signed with a key (schema 0003: "
            + ", ".join(f"{n} {name}" for name, n in held.items() if n)
            + "); its history cannot be vouched for: import its event files into a new data directory")
    with op.batch_alter_table("table_heads", schema=None) as batch_op:
        batch_op.add_column(sa.Column("mac", sa.String(length=64), nullable=True))
    seals = op.create_table(
        "seals",
        sa.Column("name", sa.String(length=60), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("mac", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_seals")),
    )
    app = ("rows:app_users", "rows:app_table_tokens")  # the app's 0002, if it ran first, left them to this
    inspector = sa.inspect(conn)
    app_ran = "app_users" in inspector.get_table_names() and "session_epoch" in {
        c["name"] for c in inspector.get_columns("app_users")}
    made = SEALED + (app if app_ran else ())
    op.bulk_insert(seals, [{"name": n, "body": "[]" if n == "tables" else "{}", "mac": None} for n in made])


def downgrade() -> None:
    op.drop_table("seals")
    with op.batch_alter_table("table_heads", schema=None) as batch_op:
        batch_op.drop_column("mac")
