"""Bounded JSON decoding for every door that takes event text (files, HTTP, serial).

Python's ``json`` accepts inputs that cost unbounded time or memory, or that fail with
an exception the caller did not expect: a 5000-digit integer (``ValueError`` from the
int-conversion limit), a 400-digit float (silently ``inf``), ``NaN``, or arrays nested a
hundred thousand deep (``RecursionError``), or a lone UTF-16 surrogate (``"\\ud800"``,
which decodes to a string no UTF-8 encoder or database takes). :func:`loads` refuses each
of these up front with a :class:`JSONTextError` (a ``ValueError``) whose message names what
was wrong, so a caller can report "line 3001: ..." and carry on. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


class JSONTextError(ValueError):
    """Text that is not JSON, or JSON beyond a documented limit."""


@dataclass(frozen=True)
class Limits:
    """The documented limits of one event's text (README, "Limits")."""

    max_bytes: int = 64 * 1024  # one event, encoded as UTF-8
    max_depth: int = 16  # nested arrays/objects; an event needs 4
    max_number_chars: int = 32  # digits, sign, point and exponent of one number


DEFAULT_LIMITS = Limits()
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""Where JSON text could spell a surrogate: only these escapes (UTF-8 cannot hold one)."""


def lone_surrogate(text: str) -> str | None:
    """The first lone UTF-16 surrogate in ``text`` (as ``\\udXXX``), or None: such a
    string is not Unicode text, and every encoder (UTF-8, the databases') refuses it."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"\\u{ord(text[exc.start]):04x}"
    return None


def _surrogate_in(value: Any) -> str | None:
    """The first lone surrogate in a decoded document's strings (keys included), or None."""
    if isinstance(value, str):
        return lone_surrogate(value)
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        items = value
    else:
        return None
    return next((found for item in items if (found := _surrogate_in(item)) is not None), None)


def _depth(text: str, limit: int) -> int:
    """Deepest nesting of ``[``/``{`` outside strings; stops counting past ``limit``."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def loads(text: str | bytes, limits: Limits = DEFAULT_LIMITS) -> Any:
    """Decode one JSON document within ``limits``; raises :class:`JSONTextError`."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > limits.max_bytes:
            raise JSONTextError(f"too long: {len(text)} bytes (limit {limits.max_bytes})")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONTextError(f"not UTF-8 text (byte {exc.start})") from None
    elif len(text) > limits.max_bytes or len(text.encode("utf-8", "surrogatepass")) > limits.max_bytes:
        raise JSONTextError(f"too long: over {limits.max_bytes} bytes")
    elif (found := lone_surrogate(text)) is not None:
        raise JSONTextError(f"a lone UTF-16 surrogate ({found}): not Unicode text")
    # Counting brackets is cheap; the exact scan runs only when the count could exceed the limit.
    if text.count("[") + text.count("{") > limits.max_depth and _depth(text, limits.max_depth) > limits.max_depth:
        raise JSONTextError(f"nested deeper than {limits.max_depth} levels")

    def number(kind: type) -> Any:
        def parse(literal: str) -> Any:
            if len(literal) > limits.max_number_chars:
                raise JSONTextError(f"a number of {len(literal)} characters (limit {limits.max_number_chars})")
            value = kind(literal)
            if value in (float("inf"), float("-inf")):
                raise JSONTextError(f"number {literal} is out of range")
            return value

        return parse

    def constant(name: str) -> Any:
        raise JSONTextError(f"{name} is not a JSON number")

    try:
        value = json.loads(text, parse_int=number(int), parse_float=number(float), parse_constant=constant)
    except JSONTextError:
        raise
    except json.JSONDecodeError as exc:
        raise JSONTextError(f"not JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise JSONTextError(f"nested deeper than {limits.max_depth} levels") from None
    if SURROGATE_ESCAPE.search(text) and (found := _surrogate_in(value)) is not None:
        raise JSONTextError(f"a lone UTF-16 surrogate ({found}) in a string: not Unicode text")
    return value
