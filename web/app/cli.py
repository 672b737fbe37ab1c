"""``guandan-ref``: one command line for every part of the project.

This is the application layer: it sits on top of every package and is the only place
that names them all. Each package contributes its sub-commands through a
``register(subparsers)`` function in its own ``cli`` module, imported here by name; those
modules import their heavy dependencies (OpenCV, SQLAlchemy, serial) inside the handlers,
so ``guandan-ref classify`` starts in milliseconds.
"""

from __future__ import annotations

import argparse
import sys

from hardware import cli as hardware_cli
from recognizer import cli as recognizer_cli
from recognizer.table import cli as table_cli
from web import referee_cli, store_cli
from web.app import agent_cli, serve_cli

COMMAND_MODULES = (referee_cli, store_cli, recognizer_cli, table_cli, hardware_cli, serve_cli, agent_cli)


class UsageError(Exception):
    """Bad input on the command line: printed on one line, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="guandan-ref", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except (UsageError, ValueError, OSError) as exc:
        print(f"guandan-ref {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        failure = database_failure(exc)
        if failure is None:
            raise
        print(f"guandan-ref {args.command}: error: {failure}", file=sys.stderr)
        return 1


def database_failure(exc: Exception) -> str | None:
    """One line for a database that cannot be used (read-only, disk full, server gone)."""
    errors = sys.modules.get("sqlalchemy.exc")  # loaded only by commands that use a database
    if errors is None or not isinstance(exc, errors.OperationalError):
        return None
    cause = getattr(exc, "orig", None) or exc
    reason = str(cause).strip().splitlines()[0]
    hint = " (is the data directory writable, with free space?)" if type(cause).__module__ == "sqlite3" else ""
    return f"the store cannot be used: {reason}{hint}; nothing of the failed write was kept"


if __name__ == "__main__":
    sys.exit(main())
