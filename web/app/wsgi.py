"""The dashboard on gunicorn: gevent workers, each building the app from ``GUANDAN_*``.

A worker serves every open live page's event stream and the agents' posts together. With
threads, each stream would be an OS thread, and each batch would wake hundreds of them
through the one interpreter lock; gevent's green threads make a stream's wake-up a switch,
and the same code (the store's group commit, the live feed) runs unchanged on them. What
each setting was measured to save: bench/NOTES.md; what of gunicorn the dashboard relies
on, and the settings themselves: ``gunicorn_server``.

``gunicorn 'web.app.wsgi:create()'`` works as well; ``run`` is what ``guandan-ref serve``
calls, and ``deploy/gunicorn.conf.py`` what a hall's hosts run.
"""

from __future__ import annotations

from . import create_app
from .gunicorn_server import run as run_gunicorn
from .gunicorn_server import server_settings
from .health import HealthCheck


def green() -> None:
    """Patch the standard library for gevent in the process that forks the workers, before
    it opens the store. psycopg chooses how to wait for the server when it is imported: a
    master that imported it unpatched gives its workers a wait that blocks every green thread
    of the worker for each query."""
    import warnings

    from gevent import monkey

    with warnings.catch_warnings():  # ``serve`` has imported ssl with redis, to check Redis is
        warnings.simplefilter("ignore", monkey.MonkeyPatchWarning)  # up; no TLS is served here
        monkey.patch_all()


def create(config: dict | None = None):
    """The app a worker serves: the dashboard (``GUANDAN_*`` settings updated with
    ``config``), with the proxy's health check in front."""
    return HealthCheck(create_app(config))


def run(bind: str, workers: int, connections: int, config: dict | None = None) -> None:
    """Serve on gunicorn; each worker builds the app with ``config`` over the environment's
    settings (``config`` is inherited when the worker is forked, not passed through the
    environment)."""
    run_gunicorn(server_settings(bind, workers, connections), lambda: create(config))
