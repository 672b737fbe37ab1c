"""A worker's garbage collector kept to short full passes (``freeze_survivors``), called once
the worker has built the app (``gunicorn_server.worker_ready``)."""

from __future__ import annotations

import gc

OLDEST = 2
"""The collector's oldest generation: a pass of it is a full pass."""
FULL_EVERY = 1
"""The collector's third threshold: middle passes before a full one is due (Python's
default: 10; with 1 a full pass follows about every second middle one). A full pass walks
what survived since the last freeze and holds every post that arrives meanwhile: frequent
passes are short ones."""


def freeze_survivors() -> None:
    """Keep the collector's full passes short: what has survived one is frozen (left out of
    the next ones), from the app as built onwards, and they come often (``FULL_EVERY``), so
    that each walks only what survived since the one before.

    A full pass walks every tracked object, and a hall's live state only grows (each table's
    steps, tiles, streams), so unfrozen passes grow longer while they hold every request of
    the worker: they made most of the slowest posts. Frozen objects are still freed when no
    longer referenced; only cycles among them would stay, and few do (bench/NOTES.md)."""
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_EVERY)
    if _freeze_after_full_pass not in gc.callbacks:
        gc.callbacks.append(_freeze_after_full_pass)


def _freeze_after_full_pass(phase: str, info: dict) -> None:
    if phase == "stop" and info["generation"] == OLDEST:
        gc.freeze()
