"""``guandan-ref serve``, ``db upgrade``, ``user add``/``disable`` and ``token create``: running the dashboard.

``serve`` runs the app on gunicorn with gevent workers (an open live page holds one
connection for its event stream), never on Flask's development server. Several workers need
Redis (``--redis``) so that an event appended in one reaches the streams of all. The
first start on a store without logins creates the chief referee's (``chief``) and prints
its password once, or takes ``GUANDAN_ADMIN_PASSWORD``.
"""

from __future__ import annotations

import getpass
import sys

from web.settings import read
from web.store_cli import open_from_args, store_options
from web.tournament.clock import zone

CONNECTIONS_PER_WORKER = 1000


def register(sub) -> None:
    common = store_options()
    p = sub.add_parser("serve", parents=[common], help="run the web dashboard and HTTP API (gunicorn)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=5000, help="port (default 5000)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (more than one needs --redis)")
    p.add_argument("--redis", metavar="URL", default=None,
                   help="Redis for live updates across workers, e.g. redis://127.0.0.1:6379/0")
    p.add_argument("--connections", type=int, default=CONNECTIONS_PER_WORKER,
                   help="most open connections per worker: each open live page and each table agent "
                        f"holds one (default {CONNECTIONS_PER_WORKER})")
    p.add_argument("--secure-cookies", action="store_true",
                   help="send login cookies over HTTPS only (behind a TLS proxy; with GUANDAN_PROXIES set)")
    p.set_defaults(handler=cmd_serve)

    p = sub.add_parser("db", help="the store's database schema")
    actions = p.add_subparsers(dest="action", required=True)
    actions.add_parser("upgrade", parents=[common],
                       help="apply the schema migrations (serve also does it on start)")
    p.set_defaults(handler=cmd_db)

    p = sub.add_parser("user", help="dashboard logins")
    users = p.add_subparsers(dest="action", required=True)
    add = users.add_parser("add", parents=[common], help="add or replace a login (asks for the password)")
    add.add_argument("name")
    add.add_argument("--role", required=True, choices=("chief", "referee", "scorer", "viewer"))
    add.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    disable = users.add_parser("disable", parents=[common],
                               help="refuse a login from now on and end its sessions ('user add' enables it again)")
    disable.add_argument("name")
    p.set_defaults(handler=cmd_user)

    p = sub.add_parser("token", help="table agent tokens")
    tokens = p.add_subparsers(dest="action", required=True)
    create = tokens.add_parser("create", parents=[common], help="print a new token for a table (only its hash is kept)")
    create.add_argument("table")
    p.set_defaults(handler=cmd_token)


def _open(args):
    """The store the options name, to write (a first start creates it, in a new or empty
    directory); one signed with another key than the one resolved is refused on one line."""
    store = open_from_args(args, create=True)
    try:
        store.check_writable()
    except ValueError:
        store.close()
        raise
    return store


def cmd_db(args) -> int:
    before, after = migrate(args.db, args.data, args.key_file)
    print(f"database at {after}" + ("" if after == before else f" (was {before})"))
    return 0


def migrate(db: str | None, data: str | None, key_file: str | None = None) -> tuple[str, str]:
    """Migrate the database to the newest revision of every branch (store, app), once, before
    any worker opens it; the revisions before and after. Through the store, with its key, so
    that the seals an upgrade makes are signed (a worker never signs what it did not make)."""
    from web.store import open_store, store_url
    from web.store.db import current_revisions, make_engine

    engine = make_engine(store_url(db, data))
    try:
        def revisions() -> str:
            return ", ".join(sorted(current_revisions(engine))) or "empty"

        before = revisions()
        with open_store(db, data, key_file=key_file) as store:
            store.check_writable()
        return before, revisions()
    finally:
        engine.dispose()


def cmd_user(args) -> int:
    from .accounts import add_user, end_sessions

    if args.action == "disable":
        with _open(args) as store:
            end_sessions(store, args.name, disable=True)
        print(f"login {args.name} disabled; its sessions are ended")
        return 0
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass(f"password for {args.name}: ")
        if password != getpass.getpass("again: "):
            raise ValueError("the two passwords differ")
    with _open(args) as store:
        add_user(store, args.name, args.role, password)
    print(f"login {args.name} ({args.role}) saved")
    return 0


def cmd_token(args) -> int:
    from .accounts import create_token

    with _open(args) as store:
        token = create_token(store, args.table)
    print(token)
    return 0


def cmd_serve(args) -> int:
    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, not {args.workers}")
    if args.connections < 1:
        raise ValueError(f"--connections must be at least 1, not {args.connections}")
    if args.workers > 1 and not args.redis:
        raise ValueError("several workers need --redis URL so that live updates reach every worker")
    zone()  # an unknown GUANDAN_TIMEZONE is refused here, not as a 500 on the first page that prints a time
    from .accounts import ensure_chief
    from .broker import check_reachable

    if args.redis:
        check_reachable(args.redis)
    from .wsgi import green, run

    green()  # before the store loads its database driver, which the workers inherit
    given = read("ADMIN_PASSWORD")
    with _open(args) as store:  # migrate once, before the workers start
        password = ensure_chief(store, given)
    if password is not None and not given:
        print(f"first start: the chief referee logs in as 'chief' with password {password} "
              "(shown once; add more logins with 'guandan-ref user add')", flush=True)
    run(f"{args.host}:{args.port}", args.workers, args.connections, worker_config(args))
    return 0


def worker_config(args) -> dict:
    """What ``serve``'s options set of each worker's app configuration (the ``app.config``
    keys of ``web.settings.SETTINGS``), over what the environment sets."""
    given = {"DATA_DIR": args.data, "STORE_URL": args.db, "REDIS_URL": args.redis,
             "GUANDAN_KEY_FILE": args.key_file, "SECURE_COOKIES": args.secure_cookies}
    return {k: v for k, v in given.items() if v}
