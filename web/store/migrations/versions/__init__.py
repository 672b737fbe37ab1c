"""Migration scripts, oldest first (see ``down_revision``)."""
