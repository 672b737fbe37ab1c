"""Gunicorn settings for one host of a hall: several gevent workers on PostgreSQL + Redis.

Run on each host (the same file, the same environment):

    gunicorn -c deploy/gunicorn.conf.py 'web.app.wsgi:create()'

The settings are ``serve``'s (``web/app/gunicorn_server.py``); everything site-specific comes
from the environment (see deploy/README.md; every setting is in ``web/settings.py``):
``GUANDAN_DB_URL``, ``GUANDAN_REDIS_URL``, ``GUANDAN_SECRET_KEY`` (one key shared by every
host), ``GUANDAN_PROXY_IPS`` (as for ``serve``), and here ``GUANDAN_BIND``,
``GUANDAN_WORKERS``, ``GUANDAN_CONNECTIONS``.
"""

from web.app.gunicorn_server import server_settings
from web.app.wsgi import green
from web.settings import read

green()  # first, in the master: before the migration below loads the database driver

# Gunicorn takes its settings from this file's names.
globals().update(server_settings(read("BIND"), read("WORKERS"), read("CONNECTIONS")))


def on_starting(server) -> None:
    """Migrate once in the master, before any worker opens the store."""
    from web.app.broker import check_reachable
    from web.app.serve_cli import migrate

    db, redis = read("DB_URL"), read("REDIS_URL")
    if not db:
        raise SystemExit("GUANDAN_DB_URL is not set: a hall runs on PostgreSQL (see deploy/README.md)")
    if server.cfg.workers > 1 and not redis:
        raise SystemExit("several workers need GUANDAN_REDIS_URL for live updates")
    if redis:
        check_reachable(redis)
    before, after = migrate(db, None)
    server.log.info("database at %s%s", after, "" if after == before else f" (was {before})")
