"""Enrolled decks at run time: where ``--deck NAME`` finds its adapted classifier.

``guandan-ref deck enroll`` (:mod:`recognizer.training.enroll`) writes them; the reader
only needs to find them, so this lives on the runtime side.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

DATA_ENV = "GUANDAN_DATA"
"""The recognizer's one setting (``web/settings.py`` lists it: the recognizer never imports ``web``)."""
DEFAULT_DATA = "~/.cache/guandan-referee"
DECK_CLASSIFIER = "index-classifier.onnx"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def data_folder(data: Path | str | None = None) -> Path:
    """``data``, else ``$GUANDAN_DATA``, else ``~/.cache/guandan-referee``: read when a command
    asks, never at import time, so that a test or a shell that sets it later is heard."""
    return Path(data or os.environ.get(DATA_ENV) or DEFAULT_DATA).expanduser()


def deck_folder(data: Path | str | None, name: str) -> Path:
    """``DATA/enrolled/NAME``; a name is letters, digits, ``.``, ``_`` and ``-`` (it becomes a folder)."""
    if not _NAME.match(name or ""):
        raise ValueError(f"bad deck name {name!r}: use letters, digits, '.', '_' or '-' (up to 64)")
    return data_folder(data) / "enrolled" / name


def deck_classifier(data: Path | str | None, name: str) -> Path:
    """The enrolled deck's adapted classifier, or a clear error naming how to make it."""
    path = deck_folder(data, name) / DECK_CLASSIFIER
    if not path.is_file():
        raise ValueError(f"no enrolled deck {name!r} in {path.parent.parent} (enrol it with 'guandan-ref deck enroll --faces DIR --name {name}')")
    return path
