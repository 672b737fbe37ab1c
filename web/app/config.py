"""The app's configuration from the environment: ``from_env`` fills the ``app.config`` keys of
the settings ``web/settings.py`` holds (every ``GUANDAN_*`` setting, in one table), once per
``create_app``. ``python -m web.app.config`` prints that table.
"""

from __future__ import annotations

from collections.abc import Mapping

from web.settings import SETTINGS, read, table


def from_env(environ: Mapping[str, str] | None = None) -> dict:
    """The app configuration the environment names (``app.config`` keys)."""
    return {s.key: read(s.name, environ) for s in SETTINGS if s.key}


if __name__ == "__main__":
    print(table())
