"""Exports: the score sheet of a table (CSV, PDF) and the standings (CSV, PDF, text).

The score sheet is the paper West kept and both captains and the referee sign (S3): the
event, round and table, both teams with their players, one line per deal (finishing
order, upgrade, levels after the deal), why the round ended, the session result (levels,
level difference, 28-point score), the sign-off state, the rulings (penalties, forfeits)
with the official who made them, and lines to sign on. Labels are Chinese and English
(the glossary's terms); the PDF embeds a CJK TrueType font (``fonts``).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from typing import TextIO

from web.store import Store

from . import fonts, service, signoff
from .rules import RoundScore
from .standings import CHAINS, Standing
from .text import table as text_table

SHEET_COLUMNS = ("table", "round", "ns", "ew", "line", "order", "upgrade_side", "upgrade",
                 "level_ns", "level_ew", "level_difference", "score_ns", "score_ew", "winner", "ended", "signed")
STANDINGS_COLUMNS = ("rank", "pair", "name", "players", "match_points", "progressive", "rounds_won",
                     "ld_points", "level_difference", "upgrades", "opponents_points", "score", "lot")

SEATS = {"N": "北 N", "E": "东 E", "S": "南 S", "W": "西 W"}
SIDES = {"NS": "南北方 NS", "EW": "东西方 EW"}
ENDED = {
    "passed_a": "过A Passed A",
    "deals": "副数已满 Deal limit reached (W1)",
    "time": "时间到 Time is up (W1)",
    "session_end": "本轮结束 Round closed (W1)",
    "deciding_deal": "决胜副 Deciding deal (W1)",
    "forfeit": "弃权 Forfeit (K5, X4)",
    "loss": "判负 Loss (X4)",
}
SIGNOFF = {"pending": "待签字 pending", "final": "已确认 final", "disputed": "有异议 disputed"}
PENALTIES = {"warning": "警告 warning", "violation": "违例 violation", "foul": "犯规 foul", "loss": "判负 loss"}
STANDING_LABELS = {
    "rank": "名次 Rank", "pair": "编号 Pair", "name": "队名 Team", "players": "选手 Players",
    "match_points": "积分 MP", "progressive": "去首累进分 Prog.", "rounds_won": "胜轮 Won",
    "ld_points": "级差分 LD pts", "level_difference": "级差 Level diff.", "upgrades": "升级 Upgrades",
    "opponents_points": "对手分 Opp. MP", "lot": "抽签 Lot",
}


@dataclass(frozen=True)
class Team:
    pair: str
    name: str = ""
    players: tuple[str, ...] = ()

    def label(self) -> str:
        return " ".join(x for x in (self.pair, self.name) if x)


@dataclass
class ScoreSheet:
    table: str
    ns: Team
    ew: Team
    event: str = ""
    round: int | None = None
    table_no: int | None = None
    deals: list[dict] = field(default_factory=list)
    result: dict | None = None
    signoff: dict | None = None
    forfeit: str | None = None
    """The pair that forfeited (its ruling is among ``rulings``)."""
    forfeit_score: RoundScore | None = None
    rulings: list[dict] = field(default_factory=list)
    """Penalties and forfeits: kind, what, side, rule, by, reason."""

    def rows(self) -> list[dict]:
        """The sheet as CSV rows: one per deal, then the result line."""
        base = {"table": self.table, "round": self.round or "", "ns": self.ns.pair or self.ns.name,
                "ew": self.ew.pair or self.ew.name}
        rows = []
        for d in self.deals:
            (side, amount), = (d.get("upgrade") or {"": ""}).items()
            rows.append({**base, "line": d["deal"], "order": " ".join(d["order"]), "upgrade_side": side,
                         "upgrade": amount, "level_ns": d["levels"]["NS"], "level_ew": d["levels"]["EW"]})
        if self.forfeit and self.forfeit_score:
            won, lost = self.forfeit_score.score
            rows.append({**base, "line": "forfeit", "order": f"{self.forfeit} forfeits",
                         "score_ns": lost if self.forfeit == self.ns.pair else won,
                         "score_ew": lost if self.forfeit == self.ew.pair else won,
                         "level_difference": self.forfeit_score.level_difference,
                         "winner": "EW" if self.forfeit == self.ns.pair else "NS", "ended": "forfeit"})
        elif self.result:
            r = self.result
            signed = self.signoff or {}
            rows.append({**base, "line": "result", "level_ns": r["levels"]["NS"], "level_ew": r["levels"]["EW"],
                         "level_difference": r["level_difference"], "score_ns": r["score"]["NS"],
                         "score_ew": r["score"]["EW"], "winner": r.get("winner") or "draw",
                         "ended": r.get("reason", ""),
                         "signed": f"{signed.get('state', '')} " + " ".join(
                             f"{s}:{n}" for s, n in sorted(signed.get("signed", {}).items()))})
        return [{c: row.get(c, "") for c in SHEET_COLUMNS} for row in rows]


def score_sheet(store: Store, table_id: str) -> ScoreSheet:
    """The score sheet of a table outside any tournament, from its recorded results."""
    sheet = _recorded(store, table_id, ScoreSheet(table_id, Team(""), Team("")))
    teams = (sheet.result or {}).get("teams") or {}
    sheet.ns, sheet.ew = Team("", str(teams.get("NS", ""))), Team("", str(teams.get("EW", "")))
    return sheet


def tournament_sheets(store: Store, event_id: str, round_no: int | None = None) -> list[ScoreSheet]:
    """The score sheets of an event's matches (of one round, or all); byes have none."""
    event = service.event_info(store, event_id)
    teams = {p["pair"]: Team(p["pair"], p["name"], tuple(p["players"])) for p in service.pairs(store, event_id)}
    rules = service.rules(store, event_id)
    forfeits = {(r["round"], r["table_no"]): r for r in service.rulings(store, event_id) if r["kind"] == "forfeit"}
    sheets = []
    for m in service.matches(store, event_id, round_no):
        if m.ew is None:
            continue
        sheet = ScoreSheet(m.table_id, teams[m.ns], teams[m.ew], event=f"{event['name']} ({event_id})",
                           round=m.round, table_no=m.table_no)
        _recorded(store, m.table_id, sheet)
        if m.forfeit:
            ruling = forfeits.get((m.round, m.table_no), {})
            sheet.forfeit, sheet.forfeit_score = m.forfeit, rules.forfeit
            side = "NS" if m.forfeit == m.ns else "EW"
            when = signoff.wall_time(ruling["at"]) if ruling else ""
            sheet.rulings.append({"kind": "弃权 forfeit", "side": f"{SIDES[side]} {m.forfeit}",
                                  "rule": rules.forfeit.rule, "by": ruling.get("by", ""),
                                  "reason": "; ".join(x for x in (ruling.get("reason", ""), when) if x)})
        sheets.append(sheet)
    return sheets


def _recorded(store: Store, table_id: str, sheet: ScoreSheet) -> ScoreSheet:
    """Fill in what the table recorded: deals, result, sign-off, penalties."""
    results = store.results(table_id)
    sessions = [r for r in results if r["type"] == "session_result"]
    sheet.deals = [r for r in results if r["type"] == "deal_end"]
    sheet.result = sessions[-1] if sessions else None
    sheet.signoff = signoff.status(store, table_id, len(sessions)).as_dict() if sessions else None
    sheet.rulings += [{"kind": PENALTIES.get(p["level"], p["level"]), "side": SIDES.get(p["side"], p["side"] or ""),
                       "rule": p.get("rule") or "", "by": p["by"], "reason": f"牌桌时间 table time {p['t']:g} s"}
                      for p in store.audit(table_id) if p["type"] == "penalty"]
    return sheet


def write_sheets_csv(sheets: list[ScoreSheet], out: TextIO) -> None:
    writer = csv.DictWriter(out, fieldnames=SHEET_COLUMNS)
    writer.writeheader()
    for sheet in sheets:
        writer.writerows(sheet.rows())


# ---------------------------------------------------------------------- PDF


def _styles():
    from reportlab.lib.styles import ParagraphStyle

    font = fonts.register()
    return {
        "title": ParagraphStyle("title", fontName=font, fontSize=17, leading=22, alignment=1, spaceAfter=2),
        "sub": ParagraphStyle("sub", fontName=font, fontSize=10.5, leading=14, alignment=1, spaceAfter=8),
        "head": ParagraphStyle("head", fontName=font, fontSize=11, leading=15, spaceBefore=8, spaceAfter=3),
        "cell": ParagraphStyle("cell", fontName=font, fontSize=9, leading=11.5),
        "sign": ParagraphStyle("sign", fontName=font, fontSize=10, leading=14),
    }


def _grid(data: list[list], widths: list[float], header: bool = True, styles=None):
    from reportlab.lib import colors
    from reportlab.platypus import Paragraph, Table, TableStyle

    cell = styles["cell"]
    rows = [[c if not isinstance(c, str) else Paragraph(_escape(c), cell) for c in row] for row in data]
    table = Table(rows, colWidths=widths, repeatRows=1 if header else 0, hAlign="LEFT")
    style = [("GRID", (0, 0), (-1, -1), 0.5, colors.grey), ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
             ("FONTNAME", (0, 0), (-1, -1), cell.fontName)]
    if header:
        style.append(("BACKGROUND", (0, 0), (-1, 0), colors.Color(0.9, 0.9, 0.9)))
    table.setStyle(TableStyle(style))
    return table


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _sheet_story(sheet: ScoreSheet, s) -> list:
    from reportlab.lib.units import mm
    from reportlab.platypus import Paragraph, Spacer

    story = [Paragraph("掼蛋记分表  Guandan score sheet", s["title"])]
    where = [sheet.event] if sheet.event else []
    if sheet.round:
        where.append(f"第{sheet.round}轮 Round {sheet.round}")
    if sheet.table_no:
        where.append(f"{sheet.table_no}号桌 Table {sheet.table_no}")
    where.append(f"牌桌 Table stream {sheet.table}")
    story.append(Paragraph(_escape("  ·  ".join(where)), s["sub"]))

    story.append(_grid([["", "编号 Pair", "队名 Team", "选手 Players"]] + [
        [SIDES[side], team.pair, team.name, " / ".join(team.players)]
        for side, team in (("NS", sheet.ns), ("EW", sheet.ew))], [32 * mm, 25 * mm, 50 * mm, 73 * mm], styles=s))

    story.append(Paragraph("逐副记录 Deal by deal", s["head"]))
    deals = [["副 Deal", "上游 1st", "二游 2nd", "三游 3rd", "下游 4th", "升级 Upgrade", "南北方级 NS", "东西方级 EW"]]
    for d in sheet.deals:
        (side, amount), = (d.get("upgrade") or {"": 0}).items()
        up = f"{SIDES.get(side, side)} +{amount}" + (" (犯规 foul)" if d.get("foul") else "")
        deals.append([str(d["deal"]), *(SEATS.get(seat, seat) for seat in d["order"]), up,
                      d["levels"]["NS"], d["levels"]["EW"]])
    if len(deals) == 1:
        deals.append(["—", "", "", "", "", "无 none", "", ""])
    story.append(_grid(deals, [15 * mm, 18 * mm, 18 * mm, 18 * mm, 18 * mm, 43 * mm, 25 * mm, 25 * mm], styles=s))

    story.append(Paragraph("本轮成绩 Result of the round", s["head"]))
    story.append(_grid(_result_lines(sheet), [45 * mm, 135 * mm], header=False, styles=s))

    story.append(Paragraph("判罚 Rulings", s["head"]))
    rulings = [["类别 Kind", "方 Side / pair", "规则 Rule", "裁判 Official", "说明 Note"]]
    rulings += [[r["kind"], r["side"], r["rule"], r["by"], r["reason"]] for r in sheet.rulings]
    if len(rulings) == 1:
        rulings.append(["无 none", "", "", "", ""])
    story.append(_grid(rulings, [28 * mm, 32 * mm, 22 * mm, 35 * mm, 63 * mm], styles=s))

    story.append(Spacer(1, 10 * mm))
    line = "_" * 24
    for label in ("南北方队长签字 NS captain", "东西方队长签字 EW captain", "裁判员签字 Referee"):
        story.append(Paragraph(f"{label}:  {line}     日期 Date:  {'_' * 12}", s["sign"]))
        story.append(Spacer(1, 7 * mm))
    return story


def _result_lines(sheet: ScoreSheet) -> list[list[str]]:
    teams = {"NS": sheet.ns, "EW": sheet.ew}
    if sheet.forfeit and sheet.forfeit_score:
        f = sheet.forfeit_score
        loser = "NS" if sheet.forfeit == sheet.ns.pair else "EW"
        winner = "EW" if loser == "NS" else "NS"
        score = {winner: f.score[0], loser: f.score[1]}
        lines = [["结束原因 Round ended", f"弃权 Forfeit: {sheet.forfeit} ({f.rule})"],
                 ["级差 Level difference", str(f.level_difference)],
                 ["成绩 Result (28-point)", f"南北方 NS {score['NS']} : {score['EW']} 东西方 EW"],
                 ["胜方 Winner", f"{SIDES[winner]}  {teams[winner].label()}"]]
        if sheet.result:
            r = sheet.result
            lines.append(["被取代的成绩 Replaced result",
                          f"NS {r['score']['NS']} : {r['score']['EW']} EW (级 levels {r['levels']['NS']} : "
                          f"{r['levels']['EW']})"])
        return lines
    if sheet.result is None:
        return [["结束原因 Round ended", "未结束 not finished (no result recorded)"]]
    r = sheet.result
    status = sheet.signoff or {}
    signed = "; ".join(f"{SIDES[side]}: {who} ({status.get('signed_at', {}).get(side, '')})"
                       for side, who in sorted(status.get("signed", {}).items()))
    state = SIGNOFF.get(status.get("state", ""), status.get("state", ""))
    if status.get("dispute"):
        state += f" — {status['dispute']}"
    winner = r.get("winner")
    return [
        ["结束原因 Round ended", ENDED.get(r.get("reason", ""), r.get("reason", "") or "—")],
        ["级数 Levels", f"南北方 NS {r['levels']['NS']} : {r['levels']['EW']} 东西方 EW"],
        ["级差 Level difference", str(r["level_difference"])],
        ["成绩 Result (28-point)", f"南北方 NS {r['score']['NS']} : {r['score']['EW']} 东西方 EW"],
        ["胜方 Winner", f"{SIDES[winner]}  {teams[winner].label()}" if winner else "平局 draw"],
        ["签字确认 Sign-off (S3)", state + (f" — {signed}" if signed else "")],
    ]


def _document(path: str, size, title: str):
    """A document whose every font is the embedded one (the canvas starts in it too)."""
    from reportlab.lib.units import mm
    from reportlab.platypus import SimpleDocTemplate

    return SimpleDocTemplate(path, pagesize=size, title=title, initialFontName=fonts.register(),
                             leftMargin=15 * mm, rightMargin=15 * mm, topMargin=15 * mm, bottomMargin=15 * mm)


def write_sheets_pdf(sheets: list[ScoreSheet], path: str, title: str = "Score sheets") -> None:
    """One A4 page per table, the CJK font embedded (subset)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.platypus import PageBreak

    s = _styles()
    story = []
    for i, sheet in enumerate(sheets):
        if i:
            story.append(PageBreak())
        story += _sheet_story(sheet, s)
    _document(path, A4, title).build(story)


# ---------------------------------------------------------------------- standings


def standing_columns(chain: str) -> list[str]:
    """The columns a standings list shows: the ranking chain's, in its order."""
    return ["rank", "pair", "name", "players", *CHAINS[chain], "lot"]


def standing_cells(row: Standing, pair: dict, columns: list[str]) -> list[str]:
    data = row.as_dict() | {"name": pair.get("name", ""), "players": " / ".join(pair.get("players", []))}
    return [str(data[c]) for c in columns]


def standings_text(rows: list[Standing], pairs: list[dict], chain: str) -> list[str]:
    """The standings as aligned plain-text lines (Chinese names take two columns a character)."""
    info = {p["pair"]: p for p in pairs}
    columns = standing_columns(chain)
    numeric = {i for i, c in enumerate(columns) if c not in ("pair", "name", "players")}
    return text_table([STANDING_LABELS[c] for c in columns],
                      [standing_cells(r, info.get(r.pair, {}), columns) for r in rows], right=numeric)


def write_standings_csv(rows: list[Standing], pairs: list[dict], out: TextIO) -> None:
    info = {p["pair"]: p for p in pairs}
    writer = csv.DictWriter(out, fieldnames=STANDINGS_COLUMNS)
    writer.writeheader()
    for row in rows:
        data = row.as_dict()
        pair = info.get(row.pair, {})
        writer.writerow({c: data.get(c, "") for c in STANDINGS_COLUMNS}
                        | {"name": pair.get("name", ""), "players": " / ".join(pair.get("players", []))})


def write_standings_pdf(rows: list[Standing], pairs: list[dict], chain: str, path: str,
                        heading: str) -> None:
    """The standings on A4 landscape, chain columns in order, the CJK font embedded."""
    from reportlab.lib.pagesizes import A4, landscape
    from reportlab.lib.units import mm
    from reportlab.platypus import Paragraph

    s = _styles()
    info = {p["pair"]: p for p in pairs}
    columns = standing_columns(chain)
    data = [[STANDING_LABELS[c] for c in columns]]
    data += [standing_cells(r, info.get(r.pair, {}), columns) for r in rows]
    wide = {"name": 55 * mm, "players": 60 * mm, "pair": 20 * mm}
    rest = (267 * mm - sum(wide.values())) / (len(columns) - 3)
    story = [Paragraph("排名 Standings", s["title"]), Paragraph(_escape(heading), s["sub"]),
             _grid(data, [wide.get(c, rest) for c in columns], styles=s)]
    _document(path, landscape(A4), "Standings").build(story)
