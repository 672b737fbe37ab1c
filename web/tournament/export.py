"""Exports: the score sheet of a table (CSV, PDF) and the standings (CSV).

The score sheet is the paper West kept (S3): one line per deal (finishing order, upgrade,
levels after the deal), then the session result (levels, level difference, 28-point
score) and who signed it.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from typing import TextIO

from web.store import Store

from .standings import Standing

SHEET_COLUMNS = ("table", "round", "ns", "ew", "line", "order", "upgrade_side", "upgrade",
                 "level_ns", "level_ew", "level_difference", "score_ns", "score_ew", "winner", "signed")
STANDINGS_COLUMNS = ("rank", "pair", "name", "players", "match_points", "progressive", "rounds_won",
                     "ld_points", "level_difference", "upgrades", "opponents_points", "score", "lot")


@dataclass
class ScoreSheet:
    table: str
    round: int | None = None
    ns: str = ""
    ew: str = ""
    deals: list[dict] = field(default_factory=list)
    result: dict | None = None
    signoff: dict | None = None
    forfeit: str | None = None

    def rows(self) -> list[dict]:
        """The sheet as CSV rows: one per deal, then the result line."""
        base = {"table": self.table, "round": self.round or "", "ns": self.ns, "ew": self.ew}
        rows = []
        for d in self.deals:
            (side, amount), = (d.get("upgrade") or {"": ""}).items()
            rows.append({**base, "line": d["deal"], "order": " ".join(d["order"]), "upgrade_side": side,
                         "upgrade": amount, "level_ns": d["levels"]["NS"], "level_ew": d["levels"]["EW"]})
        if self.forfeit:
            rows.append({**base, "line": "forfeit", "order": f"{self.forfeit} forfeits",
                         "score_ns": 0 if self.forfeit == self.ns else 17,
                         "score_ew": 0 if self.forfeit == self.ew else 17,
                         "winner": "EW" if self.forfeit == self.ns else "NS"})
        elif self.result:
            r = self.result
            signed = self.signoff or {}
            rows.append({**base, "line": "result", "level_ns": r["levels"]["NS"], "level_ew": r["levels"]["EW"],
                         "level_difference": r["level_difference"], "score_ns": r["score"]["NS"],
                         "score_ew": r["score"]["EW"], "winner": r.get("winner") or "draw",
                         "signed": f"{signed.get('state', '')} " + " ".join(
                             f"{s}:{n}" for s, n in sorted(signed.get("signed", {}).items()))})
        return [{c: row.get(c, "") for c in SHEET_COLUMNS} for row in rows]


def score_sheet(store: Store, table_id: str, round_no: int | None = None, ns: str = "", ew: str = "",
                forfeit: str | None = None) -> ScoreSheet:
    """The score sheet of one table stream from its recorded results."""
    results = store.results(table_id)
    sessions = [r for r in results if r["type"] == "session_result"]
    status = store.signoff_status(table_id).as_dict() if sessions else None
    return ScoreSheet(table_id, round_no, ns, ew, [r for r in results if r["type"] == "deal_end"],
                      sessions[-1] if sessions else None, status, forfeit)


def write_sheets_csv(sheets: list[ScoreSheet], out: TextIO) -> None:
    writer = csv.DictWriter(out, fieldnames=SHEET_COLUMNS)
    writer.writeheader()
    for sheet in sheets:
        writer.writerows(sheet.rows())


def write_sheets_pdf(sheets: list[ScoreSheet], path: str, title: str = "Score sheet") -> None:
    """One page per table; CJK text in team names is drawn with a built-in CID font."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4, landscape
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Table, TableStyle

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    styles = getSampleStyleSheet()
    styles["Title"].fontName = "STSong-Light"
    cols = ("line", "order", "upgrade_side", "upgrade", "level_ns", "level_ew", "level_difference",
            "score_ns", "score_ew", "winner", "signed")
    story = []
    for i, sheet in enumerate(sheets):
        if i:
            story.append(PageBreak())
        head = f"{title} — {sheet.table}" + (f", round {sheet.round}" if sheet.round else "")
        story.append(Paragraph(head, styles["Title"]))
        story.append(Paragraph(f"NS: {sheet.ns}    EW: {sheet.ew}", styles["Title"]))
        data = [list(cols)] + [[str(row[c]) for c in cols] for row in sheet.rows()]
        table = Table(data, repeatRows=1)
        table.setStyle(TableStyle([
            ("FONTNAME", (0, 0), (-1, -1), "STSong-Light"),
            ("FONTSIZE", (0, 0), (-1, -1), 9),
            ("GRID", (0, 0), (-1, -1), 0.5, colors.grey),
            ("BACKGROUND", (0, 0), (-1, 0), colors.lightgrey),
        ]))
        story.append(table)
    SimpleDocTemplate(path, pagesize=landscape(A4), title=title).build(story)


def write_standings_csv(rows: list[Standing], pairs: list[dict], out: TextIO) -> None:
    info = {p["pair"]: p for p in pairs}
    writer = csv.DictWriter(out, fieldnames=STANDINGS_COLUMNS)
    writer.writeheader()
    for row in rows:
        data = row.as_dict()
        pair = info.get(row.pair, {})
        writer.writerow({c: data.get(c, "") for c in STANDINGS_COLUMNS}
                        | {"name": pair.get("name", ""), "players": " / ".join(pair.get("players", []))})
