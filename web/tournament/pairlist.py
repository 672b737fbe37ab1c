"""Pair lists as organisers keep them: CSV from Excel (UTF-8 with or without BOM, GBK /
GB18030) or an ``.xlsx`` workbook.

The whole file is read and checked before anything is stored: every bad line is named
with its number and column, so that one corrected file goes in whole. Columns are found
by their header (English or Chinese, any order): ``pair`` (编号), ``name`` (队名),
``player1`` (选手1), ``player2`` (选手2), optional ``rating`` (等级分).
"""

from __future__ import annotations

import csv
import io
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path

COLUMNS = ("pair", "name", "player1", "player2", "rating")
REQUIRED = COLUMNS[:4]
HEADERS = {
    "pair": ("pair", "id", "编号", "队号", "序号"),
    "name": ("name", "team", "队名", "队伍", "名称"),
    "player1": ("player1", "player 1", "选手1", "队员1", "选手一"),
    "player2": ("player2", "player 2", "选手2", "队员2", "选手二"),
    "rating": ("rating", "等级分", "积分"),
}
MAX_LENGTH = {"pair": 60, "name": 200, "player1": 120, "player2": 120}
"""The widths of the store's columns."""
DETECTED = ("utf-8-sig", "gb18030")
"""Tried in this order when no encoding is given: Excel's "CSV UTF-8" (with a BOM) and
plain UTF-8, then the Chinese Windows code page (GB18030 is a superset of GBK)."""


class PairListError(ValueError):
    """A pair list that cannot be taken; ``problems`` has one line per bad line."""

    def __init__(self, source: str, problems: list[str]):
        super().__init__(f"{source}: {problems[0]}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
        self.source = source
        self.problems = problems


@dataclass(frozen=True)
class PairEntry:
    pair: str
    name: str
    player1: str
    player2: str
    rating: float = 0.0
    line: int = 0
    """Where it came from (1 = the header), for messages."""


def read_pairs(path: str | Path, encoding: str | None = None) -> tuple[list[PairEntry], str]:
    """The entries of a pair list and the encoding it was read with (``xlsx`` for a workbook).

    Raises ``PairListError`` naming every bad line, or ``OSError`` if it cannot be read.
    """
    path = Path(path)
    if path.suffix.lower() == ".xlsx":
        return parse_rows(_xlsx_rows(path), path.name), "xlsx"
    text, used = decode(path.read_bytes(), path.name, encoding)
    return parse_rows(list(csv.reader(io.StringIO(text, newline=""))), path.name), used


def decode(data: bytes, source: str, encoding: str | None = None) -> tuple[str, str]:
    """The text of a CSV file: in ``encoding``, else the first of ``DETECTED`` that fits."""
    if encoding is not None:
        try:
            codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
            return data.decode(codec), encoding
        except LookupError:
            raise PairListError(source, [f"unknown encoding {encoding!r}"]) from None
        except UnicodeDecodeError as exc:
            raise PairListError(source, [f"line {_line_of(data, exc.start)}: not {encoding} text "
                                         f"(byte {data[exc.start]:#04x})"]) from None
    first_error = None
    for codec in DETECTED:
        try:
            return data.decode(codec), codec.removesuffix("-sig")
        except UnicodeDecodeError as exc:
            first_error = first_error or exc
    raise PairListError(source, [
        f"line {_line_of(data, first_error.start)}: neither UTF-8 nor GBK/GB18030 text "
        f"(byte {data[first_error.start]:#04x}); name the encoding with --encoding"])


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _xlsx_rows(path: Path) -> list[list[str]]:
    """The first sheet's rows as text (numbers as Excel shows them: 1500, not 1500.0)."""
    from openpyxl import load_workbook
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise PairListError(path.name, [f"not an Excel workbook ({exc})"]) from None
    try:
        return [[_cell_text(v) for v in row] for row in book.worksheets[0].iter_rows(values_only=True)]
    finally:
        book.close()


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def parse_rows(rows: list[list[str]], source: str) -> list[PairEntry]:
    """Entries from a header row and data rows; blank rows are skipped (Excel leaves them)."""
    if not rows:
        raise PairListError(source, ["the file is empty (expected a header: pair,name,player1,player2[,rating])"])
    where = _columns(rows[0], source)
    problems: list[str] = []
    entries: list[PairEntry] = []
    first_line: dict[str, int] = {}
    for number, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        values = {col: (row[i].strip() if i < len(row) else "") for col, i in where.items()}
        bad = _row_problems(values, first_line)
        problems += [f"line {number}, column '{col}': {what}" for col, what in bad]
        if not bad:
            first_line[values["pair"]] = number
            entries.append(PairEntry(values["pair"], values["name"], values["player1"], values["player2"],
                                     float(values.get("rating") or 0), number))
        elif values["pair"] and values["pair"] not in first_line:
            first_line[values["pair"]] = number
    if problems:
        raise PairListError(source, problems)
    if not entries:
        raise PairListError(source, ["no pairs after the header"])
    return entries


def _columns(header: list[str], source: str) -> dict[str, int]:
    """Which column holds what, from the header row."""
    names = [h.strip().lstrip("\ufeff").lower() for h in header]
    where = {}
    for col, aliases in HEADERS.items():
        found = [i for i, h in enumerate(names) if h in aliases]
        if len(found) > 1:
            raise PairListError(source, [f"line 1: column '{col}' appears {len(found)} times"])
        if found:
            where[col] = found[0]
    missing = [c for c in REQUIRED if c not in where]
    if missing:
        raise PairListError(source, [
            f"line 1: no column {', '.join(repr(c) for c in missing)} in the header {header!r} "
            f"(expected pair,name,player1,player2[,rating])"])
    return where


def _row_problems(values: dict[str, str], first_line: dict[str, int]) -> list[tuple[str, str]]:
    bad = []
    for col in REQUIRED:
        if not values[col]:
            bad.append((col, "empty"))
        elif len(values[col]) > MAX_LENGTH[col]:
            bad.append((col, f"longer than {MAX_LENGTH[col]} characters"))
    if values["pair"] in first_line:
        bad.append(("pair", f"duplicate id {values['pair']!r} (line {first_line[values['pair']]} has it)"))
    rating = values.get("rating") or ""
    if rating:
        try:
            if not math.isfinite(float(rating)):
                raise ValueError
        except ValueError:
            bad.append(("rating", f"not a number: {rating!r}"))
    return bad
