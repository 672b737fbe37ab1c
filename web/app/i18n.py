"""English and Chinese (simplified) for every label, from ``translations.json``.

The words are the sport's own (the project glossary); rule IDs stay as they are in both
languages. The language is the visitor's choice, kept in the session; the default is
English. ``t(key, **values)`` is available in every template.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from flask import session

LANGUAGES = ("en", "zh")
DEFAULT = "en"


@cache
def catalogue() -> dict[str, dict[str, str]]:
    return json.loads((resources.files("web.app") / "translations.json").read_text(encoding="utf-8"))


def language() -> str:
    lang = session.get("lang")
    return lang if lang in LANGUAGES else DEFAULT


def t(key: str, default: str | None = None, **values) -> str:
    """The label ``key`` in the visitor's language (``default``, else the key, if none is known)."""
    entry = catalogue().get(key)
    if entry is None:
        return key if default is None else default
    text = entry.get(language()) or entry[DEFAULT]
    return text.format(**values) if values else text


def labels(*prefixes: str) -> dict[str, str]:
    """Every label whose key starts with one of ``prefixes``, in the visitor's language and
    unformatted: a live page builds what the server would from the stream's data, with the
    same words (``live.js`` fills the ``{name}`` fields as ``t`` does)."""
    lang = language()
    return {key: entry.get(lang) or entry[DEFAULT] for key, entry in catalogue().items() if key.startswith(prefixes)}
