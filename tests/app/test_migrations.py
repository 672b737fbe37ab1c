"""The app's migration branch creates exactly the app's models, beside the store's line."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from web.app.models import AppBase
from web.store import get_store
from web.store.db import current_revisions, head_revisions


def test_app_branch_matches_the_models(any_app):
    engine = get_store(any_app).engine
    assert current_revisions(engine) == head_revisions() and "app_0002" in head_revisions()
    app_tables = set(AppBase.metadata.tables)
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={
            "include_name": lambda name, kind, _parent: kind != "table" or name in app_tables})
        assert compare_metadata(context, AppBase.metadata) == []
