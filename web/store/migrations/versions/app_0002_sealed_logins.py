"""The app's branch: logins and table tokens sealed like the store's rows; sessions revocable

Adds each login's session generation (``session_epoch``: a logout, a new password, a new
role or ``user disable`` moves it on, and every cookie made before stops working) and
whether it is disabled, and the seal rows of ``app_users`` and ``app_table_tokens``. The
store signs the new seals when it opens the database that this upgrade ran on (it holds
the key; a migration does not), over the rows as they are then. On a new database the
branches may run in either order: whichever of this and the store's 0004 comes second
makes the seal rows.

Revision ID: app_0002
Revises: app_0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "app_0002"
down_revision = "app_0001"
branch_labels = None
depends_on = None

SEALED = ("rows:app_users", "rows:app_table_tokens")


def upgrade() -> None:
    with op.batch_alter_table("app_users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("session_epoch", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("disabled", sa.Boolean(), nullable=False, server_default=sa.false()))
    conn = op.get_bind()
    if "seals" in sa.inspect(conn).get_table_names():  # else the store's 0004, still to come, makes them
        held = set(conn.execute(sa.text("SELECT name FROM seals")).scalars())
        seals = sa.table("seals", sa.column("name", sa.String), sa.column("body", sa.Text),
                         sa.column("mac", sa.String))
        op.bulk_insert(seals, [{"name": name, "body": "{}", "mac": None} for name in SEALED if name not in held])


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM seals WHERE name IN ('rows:app_users', 'rows:app_table_tokens')"))
    with op.batch_alter_table("app_users", schema=None) as batch_op:
        batch_op.drop_column("disabled")
        batch_op.drop_column("session_epoch")
