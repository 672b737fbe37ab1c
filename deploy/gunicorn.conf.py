"""Gunicorn settings for one host of a hall: several gevent workers on PostgreSQL + Redis.

Run on each host (the same file, the same environment):

    gunicorn -c deploy/gunicorn.conf.py 'web.app.wsgi:create()'

Everything site-specific comes from the environment (see deploy/README.md):
``GUANDAN_DB_URL``, ``GUANDAN_REDIS_URL``, ``GUANDAN_SECRET_KEY`` (one key shared by every
host), ``GUANDAN_PROXY_IPS`` (as for ``serve``), and here ``GUANDAN_BIND``,
``GUANDAN_WORKERS``, ``GUANDAN_CONNECTIONS``.
"""

import os

from web.app.wsgi import HallLogger, green, patch_responses, proxy_ips, worker_ready

green()  # first, in the master: before the migration below loads the database driver

from web.app.broker import check_reachable  # noqa: E402
from web.app.serve_cli import migrate  # noqa: E402

bind = os.environ.get("GUANDAN_BIND", "127.0.0.1:5000")
workers = int(os.environ.get("GUANDAN_WORKERS", "2"))
# Every open live page holds one connection for its event stream (a green thread: cheap to
# wake): size connections x workers for the viewers one host is to carry, plus the agents.
worker_connections = int(os.environ.get("GUANDAN_CONNECTIONS", "1000"))
worker_class = "gevent"
timeout = 60
graceful_timeout = 5
keepalive = 5
accesslog = "-"
logger_class = HallLogger  # no line per agent post taken (400 a second at 200 tables)
# The proxy in front (one address for the hall) is the only client allowed to name the
# visitor's address; the login rate limit counts per visitor. Read as ``serve`` reads it.
forwarded_allow_ips = proxy_ips()
# No control socket: by default one in the home directory, shared by every gunicorn the
# user runs (two hosts tried on one machine stepped on each other's).
control_socket_disable = True
post_worker_init = worker_ready


def on_starting(server) -> None:
    """Migrate once in the master, before any worker opens the store."""
    patch_responses()
    if not os.environ.get("GUANDAN_DB_URL"):
        raise SystemExit("GUANDAN_DB_URL is not set: a hall runs on PostgreSQL (see deploy/README.md)")
    if workers > 1 and not os.environ.get("GUANDAN_REDIS_URL"):
        raise SystemExit("several workers need GUANDAN_REDIS_URL for live updates")
    if os.environ.get("GUANDAN_REDIS_URL"):
        check_reachable(os.environ["GUANDAN_REDIS_URL"])
    before, after = migrate(os.environ["GUANDAN_DB_URL"], None)
    server.log.info("database at %s%s", after, "" if after == before else f" (was {before})")
