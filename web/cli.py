"""``guandan-ref``: one command line for every part of the project.

Each package contributes its sub-commands through a ``register(subparsers)`` function in
its own ``cli`` module; heavy imports (OpenCV, SQLAlchemy, serial) happen inside the
handlers so that ``guandan-ref classify`` starts in milliseconds.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMAND_MODULES = (
    "web.referee_cli",
    "web.store_cli",
    "recognizer.cli",
    "recognizer.table.cli",
    "hardware.cli",
)


class UsageError(Exception):
    """Bad input on the command line: printed on one line, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="guandan-ref", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except (UsageError, ValueError, OSError) as exc:
        print(f"guandan-ref {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
