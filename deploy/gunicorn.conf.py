"""Gunicorn settings for one host of a hall: several gevent workers on PostgreSQL + Redis.

Run on each host (the same file, the same environment):

    gunicorn -c deploy/gunicorn.conf.py 'web.app.wsgi:create()'

Everything site-specific comes from the environment (see deploy/README.md; every setting is
in ``web/app/config.py``):
``GUANDAN_DB_URL``, ``GUANDAN_REDIS_URL``, ``GUANDAN_SECRET_KEY`` (one key shared by every
host), ``GUANDAN_PROXY_IPS`` (as for ``serve``), and here ``GUANDAN_BIND``,
``GUANDAN_WORKERS``, ``GUANDAN_CONNECTIONS``.
"""

from web.app.config import read
from web.app.wsgi import HallLogger, green, patch_responses, worker_ready

green()  # first, in the master: before the migration below loads the database driver

from web.app.broker import check_reachable  # noqa: E402
from web.app.serve_cli import migrate  # noqa: E402

bind = read("BIND")
workers = read("WORKERS")
# Every open live page holds one connection for its event stream (a green thread: cheap to
# wake): size connections x workers for the viewers one host is to carry, plus the agents.
worker_connections = read("CONNECTIONS")
worker_class = "gevent"
timeout = 60
graceful_timeout = 5
keepalive = 5
accesslog = "-"
logger_class = HallLogger  # no line per agent post taken (400 a second at 200 tables)
# The proxy in front (one address for the hall) is the only client allowed to name the
# visitor's address; the login rate limit counts per visitor. Read as ``serve`` reads it.
forwarded_allow_ips = read("PROXY_IPS")
# No control socket: by default one in the home directory, shared by every gunicorn the
# user runs (two hosts tried on one machine stepped on each other's).
control_socket_disable = True
post_worker_init = worker_ready


def on_starting(server) -> None:
    """Migrate once in the master, before any worker opens the store."""
    patch_responses()
    db, redis = read("DB_URL"), read("REDIS_URL")
    if not db:
        raise SystemExit("GUANDAN_DB_URL is not set: a hall runs on PostgreSQL (see deploy/README.md)")
    if workers > 1 and not redis:
        raise SystemExit("several workers need GUANDAN_REDIS_URL for live updates")
    if redis:
        check_reachable(redis)
    before, after = migrate(db, None)
    server.log.info("database at %s%s", after, "" if after == before else f" (was {before})")
