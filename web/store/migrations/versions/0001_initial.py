"""Initial schema: table events, derived records, snapshots, sign-off, tournaments

Revision ID: 0001
Revises: 
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('officials',
    sa.Column('name', sa.String(length=120), nullable=False),
    sa.Column('role', sa.String(length=20), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_officials'))
    )
    op.create_table('rejected_events',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('table_id', sa.String(length=120), nullable=True),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('received_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rejected_events'))
    )
    op.create_table('table_heads',
    sa.Column('table_id', sa.String(length=120), nullable=False),
    sa.Column('ruleset', sa.String(length=200), nullable=False),
    sa.Column('head_seq', sa.Integer(), nullable=False),
    sa.Column('head_hash', sa.String(length=64), nullable=False),
    sa.Column('generation', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('table_id', name=op.f('pk_table_heads'))
    )
    op.create_table('tournaments',
    sa.Column('id', sa.String(length=60), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('ruleset', sa.String(length=200), nullable=False),
    sa.Column('chain', sa.String(length=20), nullable=False),
    sa.Column('rounds', sa.Integer(), nullable=False),
    sa.Column('round_minutes', sa.Integer(), nullable=False),
    sa.Column('deal_limit', sa.Integer(), nullable=False),
    sa.Column('seed', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tournaments'))
    )
    op.create_table('derived_records',
    sa.Column('table_id', sa.String(length=120), nullable=False),
    sa.Column('generation', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('idx', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('source_seq', sa.Integer(), nullable=False),
    sa.Column('type', sa.String(length=40), nullable=False),
    sa.Column('deal', sa.Integer(), nullable=True),
    sa.Column('body', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['table_id'], ['table_heads.table_id'], name=op.f('fk_derived_records_table_id_table_heads')),
    sa.PrimaryKeyConstraint('table_id', 'generation', 'idx', name=op.f('pk_derived_records'))
    )
    with op.batch_alter_table('derived_records', schema=None) as batch_op:
        batch_op.create_index('ix_derived_records_type', ['type'], unique=False)

    op.create_table('pairs',
    sa.Column('tournament_id', sa.String(length=60), nullable=False),
    sa.Column('pair_id', sa.String(length=60), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('player1', sa.String(length=120), nullable=False),
    sa.Column('player2', sa.String(length=120), nullable=False),
    sa.Column('rating', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['tournament_id'], ['tournaments.id'], name=op.f('fk_pairs_tournament_id_tournaments')),
    sa.PrimaryKeyConstraint('tournament_id', 'pair_id', name=op.f('pk_pairs'))
    )
    op.create_table('rounds',
    sa.Column('tournament_id', sa.String(length=60), nullable=False),
    sa.Column('number', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('started_at', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['tournament_id'], ['tournaments.id'], name=op.f('fk_rounds_tournament_id_tournaments')),
    sa.PrimaryKeyConstraint('tournament_id', 'number', name=op.f('pk_rounds'))
    )
    op.create_table('signoffs',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('table_id', sa.String(length=120), nullable=False),
    sa.Column('session', sa.Integer(), nullable=False),
    sa.Column('action', sa.String(length=20), nullable=False),
    sa.Column('side', sa.String(length=2), nullable=True),
    sa.Column('by', sa.String(length=120), nullable=False),
    sa.Column('result_digest', sa.String(length=64), nullable=True),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('at', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['table_id'], ['table_heads.table_id'], name=op.f('fk_signoffs_table_id_table_heads')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_signoffs'))
    )
    with op.batch_alter_table('signoffs', schema=None) as batch_op:
        batch_op.create_index('ix_signoffs_table_id', ['table_id', 'session'], unique=False)

    op.create_table('snapshots',
    sa.Column('table_id', sa.String(length=120), nullable=False),
    sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('event_hash', sa.String(length=64), nullable=False),
    sa.Column('blob', sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(['table_id'], ['table_heads.table_id'], name=op.f('fk_snapshots_table_id_table_heads')),
    sa.PrimaryKeyConstraint('table_id', 'seq', name=op.f('pk_snapshots'))
    )
    op.create_table('table_events',
    sa.Column('table_id', sa.String(length=120), nullable=False),
    sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('event_id', sa.String(length=120), nullable=True),
    sa.Column('type', sa.String(length=40), nullable=False),
    sa.Column('t', sa.Float(), nullable=True),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('prev_hash', sa.String(length=64), nullable=False),
    sa.Column('hash', sa.String(length=64), nullable=False),
    sa.Column('recorded_at', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['table_id'], ['table_heads.table_id'], name=op.f('fk_table_events_table_id_table_heads')),
    sa.PrimaryKeyConstraint('table_id', 'seq', name=op.f('pk_table_events'))
    )
    with op.batch_alter_table('table_events', schema=None) as batch_op:
        batch_op.create_index('uq_table_events_event_id', ['table_id', 'event_id'], unique=True)

    op.create_table('matches',
    sa.Column('tournament_id', sa.String(length=60), nullable=False),
    sa.Column('round', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('table_no', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('ns_pair', sa.String(length=60), nullable=False),
    sa.Column('ew_pair', sa.String(length=60), nullable=True),
    sa.Column('table_id', sa.String(length=120), nullable=False),
    sa.Column('forfeit', sa.String(length=60), nullable=True),
    sa.Column('forfeit_by', sa.String(length=120), nullable=True),
    sa.ForeignKeyConstraint(['tournament_id', 'round'], ['rounds.tournament_id', 'rounds.number'], name=op.f('fk_matches_tournament_id_rounds')),
    sa.PrimaryKeyConstraint('tournament_id', 'round', 'table_no', name=op.f('pk_matches')),
    sa.UniqueConstraint('table_id', name=op.f('uq_matches_table_id'))
    )


def downgrade() -> None:
    op.drop_table('matches')
    with op.batch_alter_table('table_events', schema=None) as batch_op:
        batch_op.drop_index('uq_table_events_event_id')

    op.drop_table('table_events')
    op.drop_table('snapshots')
    with op.batch_alter_table('signoffs', schema=None) as batch_op:
        batch_op.drop_index('ix_signoffs_table_id')

    op.drop_table('signoffs')
    op.drop_table('rounds')
    op.drop_table('pairs')
    with op.batch_alter_table('derived_records', schema=None) as batch_op:
        batch_op.drop_index('ix_derived_records_type')

    op.drop_table('derived_records')
    op.drop_table('tournaments')
    op.drop_table('table_heads')
    op.drop_table('rejected_events')
    op.drop_table('officials')
