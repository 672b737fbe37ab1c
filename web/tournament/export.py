"""Exports: the score sheet of a table (CSV, PDF) and the standings (CSV, PDF, text).

The score sheet is the paper West kept and both captains and the referee sign (S3): the
event, round and table, both teams with their players, one line per deal (finishing
order, upgrade, levels after the deal), why the round ended, the session result (levels,
level difference, 28-point score), which session counts and why (where a table has more
than one), the sign-off state, the rulings (penalties, forfeits, another session)
with the official who made them (lateness in minutes, corrections in words), every
dispute with its window and resolution, and lines to sign on. A bye has a sheet too.
Labels are Chinese and English (the glossary's terms); levels are written as the seeds
write them (10, 过A); times are in the event's zone (``clock``); numbers are
right-aligned; the PDF embeds a CJK TrueType font (``fonts``). CSV files carry a BOM
(Excel on Chinese Windows reads them as UTF-8); the same tables export as ``.xlsx``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from web.store import Store

from . import fonts, service, sessions, signoff
from .clock import wall_time
from .rules import RoundScore
from .standings import CHAINS, Standing
from .text import table as text_table

SHEET_COLUMNS = ("table", "round", "ns", "ns_name", "ew", "ew_name", "line", "order", "upgrade_side", "upgrade",
                 "level_ns", "level_ew", "level_difference", "score_ns", "score_ew", "winner", "ended", "signed",
                 "note")
STANDINGS_COLUMNS = ("rank", "pair", "name", "players", "match_points", "progressive", "rounds_won",
                     "ld_points", "level_difference", "upgrades", "opponents_points", "score", "lot", "notes")
NUMERIC = {"rank", "match_points", "progressive", "rounds_won", "ld_points", "level_difference", "upgrades",
           "opponents_points", "score", "lot"}
CSV_ENCODING = "utf-8-sig"
"""UTF-8 with a BOM: Excel on Chinese Windows opens it as UTF-8, not GBK."""

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
    "opponents_points": "对手分 Opp. MP", "score": "总分 Score", "lot": "抽签 Lot", "notes": "备注 Notes",
}
BYE = "轮空 bye"
DISPUTED = "有异议 disputed"


def level_text(level) -> str:
    """A level as the seeds write it: 2 ... 10, J, Q, K, A, 过A (the referee writes T and A+)."""
    text = str(level)
    return {"T": "10", "A+": "过A"}.get(text, text)


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
    """Penalties, forfeits and corrections: kind, side, rule, by, reason."""
    disputes: list[dict] = field(default_factory=list)
    """``signoff.history``: each dispute with its window and resolution."""
    bye: RoundScore | None = None
    """Set on the sheet of a pair's bye: how the bye counts."""
    counting: str = ""
    """Which session of the table the sheet is, and why it counts (only where it has more than one)."""

    def rows(self) -> list[dict]:
        """The sheet as CSV rows: one per deal, the result (forfeit, bye) line, then one per
        ruling and per dispute."""
        base = {"table": self.table, "round": self.round or "", "ns": self.ns.pair or self.ns.name,
                "ns_name": self.ns.name, "ew": self.ew.pair or self.ew.name, "ew_name": self.ew.name}
        rows = []
        for d in self.deals:
            (side, amount), = (d.get("upgrade") or {"": ""}).items()
            rows.append({**base, "line": d["deal"], "order": " ".join(d["order"]), "upgrade_side": side,
                         "upgrade": amount, "level_ns": level_text(d["levels"]["NS"]),
                         "level_ew": level_text(d["levels"]["EW"])})
        if self.bye:
            rows.append({**base, "line": "bye", "ew": "", "ew_name": "", "score_ns": self.bye.score[0],
                         "level_difference": self.bye.level_difference, "winner": "NS" if self.bye.won else "draw",
                         "ended": "bye", "note": _bye_note(self.bye)})
        elif self.forfeit and self.forfeit_score:
            f, loser = self.forfeit_score, self._forfeit_side()
            score = {loser: f.score[1], _other(loser): f.score[0]}
            levels = {loser: f.levels[1], _other(loser): f.levels[0]} if f.levels else {"NS": "", "EW": ""}
            rows.append({**base, "line": "forfeit", "order": f"{self.forfeit} forfeits",
                         "level_ns": levels["NS"], "level_ew": levels["EW"], "score_ns": score["NS"],
                         "score_ew": score["EW"], "level_difference": f.level_difference,
                         "winner": _other(loser), "ended": "forfeit", "note": f.rule})
        elif self.result:
            r = self.result
            signed = self.signoff or {}
            rows.append({**base, "line": "result", "level_ns": level_text(r["levels"]["NS"]),
                         "level_ew": level_text(r["levels"]["EW"]),
                         "level_difference": r["level_difference"], "score_ns": r["score"]["NS"],
                         "score_ew": r["score"]["EW"], "winner": r.get("winner") or "draw",
                         "ended": r.get("reason", ""), "note": self.counting,
                         "signed": f"{signed.get('state', '')} " + " ".join(
                             f"{s}:{n}" + _door(signed, s) for s, n in sorted(signed.get("signed", {}).items()))})
        elif self.counting:
            rows.append({**base, "line": "result", "ended": "not finished", "note": self.counting})
        rows += [{**base, "line": "ruling", "note": "; ".join(x for x in (r["kind"], r["side"], r["rule"], r["by"],
                                                                          r["reason"]) if x)}
                 for r in self.rulings]
        rows += [{**base, "line": "dispute", "note": "; ".join(dispute_lines(d))} for d in self.disputes]
        return [{c: row.get(c, "") for c in SHEET_COLUMNS} for row in rows]

    def _forfeit_side(self) -> str:
        return "NS" if self.forfeit == self.ns.pair else "EW"


def _other(side: str) -> str:
    return "EW" if side == "NS" else "NS"


def _bye_note(score: RoundScore) -> str:
    how = f"计为弃权胜 counts as a forfeit win ({score.rule})" if score.won else "计为平局 counts as a draw (14:14)"
    return f"{BYE}: {how}"


def _door(status: dict, side: str) -> str:
    """Through which door the side signed, and the table's chain head then (S3's audit)."""
    text = signoff.door_text((status.get("doors") or {}).get(side))
    return f" [{text}]" if text else ""


def dispute_lines(d: dict) -> list[str]:
    """A dispute in words: who raised it, when, in which window, and how it was resolved."""
    side = SIDES.get(d["side"], d["side"])
    lines = [f"{side} {d['by']}, {wall_time(d['at'])}, {d['window']}: {d['note']}"]
    if d["resolved_by"]:
        lines.append(f"已裁定 resolved by {d['resolved_by']}, {wall_time(d['resolved_at'])}"
                     + (f": {d['resolution']}" if d["resolution"] else ""))
    else:
        lines.append("未裁定 not yet resolved")
    return lines


def score_sheet(store: Store, table_id: str) -> ScoreSheet:
    """The score sheet of a table outside any tournament, from its recorded results: its
    latest finished session (each session of such a table is a result of its own)."""
    sheet = _recorded(store, table_id, ScoreSheet(table_id, Team(""), Team("")))
    teams = (sheet.result or {}).get("teams") or {}
    sheet.ns, sheet.ew = Team("", str(teams.get("NS", ""))), Team("", str(teams.get("EW", "")))
    return sheet


def tournament_sheets(store: Store, event_id: str, round_no: int | None = None) -> list[ScoreSheet]:
    """The score sheets of an event's matches (of one round, or all), a bye's included."""
    event = service.event_info(store, event_id)
    teams = {p["pair"]: Team(p["pair"], p["name"], tuple(p["players"])) for p in service.pairs(store, event_id)}
    rules = service.rules(store, event_id)
    rulings: dict[tuple[int, int], list[dict]] = {}
    for r in service.rulings(store, event_id):
        rulings.setdefault((r["round"], r["table_no"]), []).append(r)
    sheets = []
    for m in service.matches(store, event_id, round_no):
        sheet = ScoreSheet(m.table_id, teams[m.ns], teams[m.ew] if m.ew else Team("", BYE),
                           event=f"{event['name']} ({event_id})", round=m.round, table_no=m.table_no)
        if m.ew is None:
            sheet.bye = rules.bye_score
            sheets.append(sheet)
            continue
        here = rulings.get((m.round, m.table_no), [])
        _recorded(store, m.table_id, sheet, [r for r in here if r["kind"] == sessions.RULING])
        if m.forfeit:
            sheet.forfeit, sheet.forfeit_score = m.forfeit, rules.forfeit
        for ruling in here:
            if ruling["kind"] == sessions.RULING:
                sheet.rulings.append({"kind": SESSION_RULING, "side": "", "rule": "", "by": ruling["by"],
                                      "reason": f"{ruling['reason']}; {wall_time(ruling['at'])}"})
                continue
            side = "NS" if ruling["pair"] == m.ns else "EW"
            sheet.rulings.append({"kind": FORFEIT_RULINGS[ruling["kind"]], "side": f"{SIDES[side]} {ruling['pair']}",
                                  "rule": rules.forfeit.rule, "by": ruling["by"],
                                  "reason": "; ".join(x for x in (ruling["reason"], wall_time(ruling["at"])) if x)})
        sheets.append(sheet)
    return sheets


FORFEIT_RULINGS = {"forfeit": "弃权 forfeit", "forfeit_withdrawn": "撤销弃权 forfeit withdrawn"}
SESSION_RULING = "另赛一场 another session"


def _recorded(store: Store, table_id: str, sheet: ScoreSheet, ruled: list[dict] | None = None) -> ScoreSheet:
    """Fill in what the table recorded: the deals and result of the session the sheet is
    for, its sign-off and disputes, penalties (lateness in minutes) and corrections, each
    placed by its deal. ``ruled``: a drawn table's ``session`` rulings, oldest first (the
    session that counts is the one the last let be played, ``sessions``); without it the
    sheet is of the latest finished session."""
    played = sessions.by_session(store.results(table_id))
    events = store.events(table_id)
    begun = sum(e["type"] == "session_start" for e in events)
    finished = sum(result is not None for _, result in played)
    n = 1 + len(ruled) if ruled is not None else max(finished, 1)
    if n <= len(played):
        sheet.deals, sheet.result = played[n - 1]
    if sheet.result is not None:
        sheet.signoff = signoff.status(store, table_id, n).as_dict()
        sheet.disputes = signoff.history(store, table_id, n)
    sheet.counting = _counting(n, begun, ruled)
    sheet.rulings += _table_rulings(events)
    return sheet


def _counting(n: int, begun: int, ruled: list[dict] | None) -> str:
    """Which session a sheet is, and why it counts, in words; empty for a table of one session."""
    if max(n, begun) <= 1:
        return ""
    if ruled is None:
        return f"第{n}场 session {n} of {begun} (每场单独签字 each session is signed on its own)"
    words = f"第{n}场计分 session {n} counts"
    if ruled:
        last = ruled[-1]
        words += f" (裁判长裁定 chief referee's ruling: {last['by']}, {wall_time(last['at'])})"
    if begun > n:
        words += f"; 第{n + 1}-{begun}场无裁定不计 sessions {n + 1}-{begun} were recorded without a ruling and do not count"
    return words


def _table_rulings(events: list[dict]) -> list[dict]:
    """Penalties and corrections of a table in words: the deal they came in, a late
    arrival's minutes (K5), what a correction replaced."""
    out, deal, late = [], 0, {}
    by_id = {str(e["id"]): e for e in events if e.get("id") is not None}
    for e in events:
        if e["type"] == "deal_start":
            deal = e.get("deal", deal + 1)
        elif e["type"] == "arrival":
            late[e.get("side")] = e.get("minutes_late", 0)
        elif e["type"] == "penalty":
            when = f"第{deal}副 deal {deal}" if deal else "开局前 before deal 1"
            if e.get("rule") == "K5" and e.get("side") in late:
                minutes = late[e["side"]]
                when = f"迟到 {minutes:g} 分钟 {minutes:g} minutes late"
            out.append({"kind": PENALTIES.get(e.get("level"), e.get("level") or ""),
                        "side": SIDES.get(e.get("side"), e.get("side") or ""), "rule": e.get("rule") or "",
                        "by": e.get("by", ""), "reason": when})
        elif e["type"] == "correction":
            original = by_id.get(str(e.get("of")), {})
            out.append({"kind": "更正 correction", "side": SEATS.get(original.get("seat"), ""), "rule": "S4",
                        "by": e.get("by", ""),
                        "reason": f"第{deal}副 deal {deal}: {_said(original)} → {_said(e.get('event') or {})}"})
    return out


def _said(event: dict) -> str:
    """A table event as a line on paper: its type and cards (a pass says so)."""
    cards = " ".join(event.get("cards") or [])
    return " ".join(x for x in (event.get("type", "?"), cards) if x)


def write_sheets_csv(sheets: list[ScoreSheet], out: TextIO) -> None:
    """The sheets as one CSV (the caller opens ``out`` with ``CSV_ENCODING``)."""
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
        "num": ParagraphStyle("num", fontName=font, fontSize=9, leading=11.5, alignment=2),
        "sign": ParagraphStyle("sign", fontName=font, fontSize=10, leading=14),
    }


def _grid(data: list[list], widths: list[float], header: bool = True, styles=None, right: set[int] = frozenset()):
    """A ruled table; the columns in ``right`` (numbers) are right-aligned, header too."""
    from reportlab.lib import colors
    from reportlab.platypus import Paragraph, Table, TableStyle

    cell = styles["cell"]
    rows = [[c if not isinstance(c, str) else Paragraph(_escape(c), styles["num"] if i in right else cell)
             for i, c in enumerate(row)] for row in data]
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

    if sheet.bye is None:
        story.append(Paragraph("逐副记录 Deal by deal", s["head"]))
        deals = [["副 Deal", "上游 1st", "二游 2nd", "三游 3rd", "下游 4th", "升级 Upgrade", "南北方级 NS", "东西方级 EW"]]
        for d in sheet.deals:
            (side, amount), = (d.get("upgrade") or {"": 0}).items()
            up = f"{SIDES.get(side, side)} +{amount}" + (" (犯规 foul)" if d.get("foul") else "")
            deals.append([str(d["deal"]), *(SEATS.get(seat, seat) for seat in d["order"]), up,
                          level_text(d["levels"]["NS"]), level_text(d["levels"]["EW"])])
        if len(deals) == 1:
            deals.append(["—", "", "", "", "", "无 none", "", ""])
        story.append(_grid(deals, [15 * mm, 18 * mm, 18 * mm, 18 * mm, 18 * mm, 43 * mm, 25 * mm, 25 * mm],
                           styles=s, right={0, 6, 7}))

    story.append(Paragraph("本轮成绩 Result of the round", s["head"]))
    story.append(_grid(_result_lines(sheet), [45 * mm, 135 * mm], header=False, styles=s))

    story.append(Paragraph("判罚与更正 Rulings and corrections", s["head"]))
    rulings = [["类别 Kind", "方 Side / pair", "规则 Rule", "裁判 Official", "说明 Note"]]
    rulings += [[r["kind"], r["side"], r["rule"], r["by"], r["reason"]] for r in sheet.rulings]
    if len(rulings) == 1:
        rulings.append(["无 none", "", "", "", ""])
    story.append(_grid(rulings, [28 * mm, 32 * mm, 22 * mm, 35 * mm, 63 * mm], styles=s))

    if sheet.bye is None:
        story.append(Paragraph("异议与裁定 Disputes and resolutions (S4, X7)", s["head"]))
        lines = [[line] for d in sheet.disputes for line in dispute_lines(d)] or [["无 none"]]
        story.append(_grid(lines, [180 * mm], header=False, styles=s))

    story.append(Spacer(1, 10 * mm))
    line = "_" * 24
    for label in ("南北方队长签字 NS captain", "东西方队长签字 EW captain", "裁判员签字 Referee"):
        story.append(Paragraph(f"{label}:  {line}     日期 Date:  {'_' * 12}", s["sign"]))
        story.append(Spacer(1, 7 * mm))
    return story


def _result_lines(sheet: ScoreSheet) -> list[list[str]]:
    teams = {"NS": sheet.ns, "EW": sheet.ew}
    if sheet.bye:
        b = sheet.bye
        return [["结束原因 Round ended", _bye_note(b)],
                ["级差 Level difference", str(b.level_difference)],
                ["成绩 Result (28-point)", f"{teams['NS'].label()} {b.score[0]}"],
                ["积分 Match points", str(b.match_points[0])]]
    if sheet.forfeit and sheet.forfeit_score:
        f = sheet.forfeit_score
        loser = sheet._forfeit_side()
        winner = _other(loser)
        score = {winner: f.score[0], loser: f.score[1]}
        lines = [["结束原因 Round ended", f"弃权 Forfeit: {sheet.forfeit} ({f.rule})"]]
        if f.levels:
            levels = {winner: f.levels[0], loser: f.levels[1]}
            lines.append(["级数 Levels", f"南北方 NS {levels['NS']} : {levels['EW']} 东西方 EW"])
        lines += [["级差 Level difference", str(f.level_difference)],
                  ["成绩 Result (28-point)", f"南北方 NS {score['NS']} : {score['EW']} 东西方 EW"],
                  ["胜方 Winner", f"{SIDES[winner]}  {teams[winner].label()}"]]
        if sheet.result:
            r = sheet.result
            lines.append(["被取代的成绩 Replaced result",
                          f"NS {r['score']['NS']} : {r['score']['EW']} EW (级 levels {level_text(r['levels']['NS'])} : "
                          f"{level_text(r['levels']['EW'])})"])
        return lines
    counting = [["计分场次 Session that counts", sheet.counting]] if sheet.counting else []
    if sheet.result is None:
        return [["结束原因 Round ended", "未结束 not finished (no result recorded)"], *counting]
    r = sheet.result
    status = sheet.signoff or {}
    signed = "; ".join(f"{SIDES[side]}: {who} ({status.get('signed_at', {}).get(side, '')}){_door(status, side)}"
                       for side, who in sorted(status.get("signed", {}).items()))
    state = SIGNOFF.get(status.get("state", ""), status.get("state", ""))
    if status.get("dispute"):
        state += f" — {status['dispute']}"
    elif sheet.disputes:
        state += f" ({len(sheet.disputes)} 异议已裁定 dispute(s) resolved)"
    winner = r.get("winner")
    return [
        ["结束原因 Round ended", ENDED.get(r.get("reason", ""), r.get("reason", "") or "—")],
        ["级数 Levels", f"南北方 NS {level_text(r['levels']['NS'])} : {level_text(r['levels']['EW'])} 东西方 EW"],
        ["级差 Level difference", str(r["level_difference"])],
        ["成绩 Result (28-point)", f"南北方 NS {r['score']['NS']} : {r['score']['EW']} 东西方 EW"],
        ["胜方 Winner", f"{SIDES[winner]}  {teams[winner].label()}" if winner else "平局 draw"],
        ["签字确认 Sign-off (S3)", state + (f" — {signed}" if signed else "")],
        *counting,
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
    """The columns a standings list shows: the ranking chain's, in its order, the lot, then
    the notes (byes, results under dispute)."""
    return ["rank", "pair", "name", "players", *CHAINS[chain], "lot", "notes"]


def standing_notes(row: Standing) -> str:
    """A pair's byes, results under dispute and sessions counted by the chief referee's
    ruling, by round (轮空 bye R2; 有异议 disputed R3; 第2场计分 session 2 counts R4 ...)."""
    notes = ([f"{BYE} R{r}" for r in row.byes] + [f"{DISPUTED} R{r}" for r in row.disputed]
             + [f"第{n}场计分 session {n} counts R{r} (裁判长裁定 chief referee's ruling)" for r, n in row.sessions])
    return "; ".join(notes)


def standing_values(row: Standing, pair: dict, columns: list[str]) -> list:
    """A standings row's values: numbers as numbers (a spreadsheet keeps them so), text as text."""
    data = row.as_dict() | {"name": pair.get("name", ""), "players": " / ".join(pair.get("players", [])),
                            "notes": standing_notes(row)}
    return [data[c] for c in columns]


def standing_cells(row: Standing, pair: dict, columns: list[str]) -> list[str]:
    return [str(v) for v in standing_values(row, pair, columns)]


def standings_text(rows: list[Standing], pairs: list[dict], chain: str) -> list[str]:
    """The standings as aligned plain-text lines (Chinese names take two columns a character)."""
    info = {p["pair"]: p for p in pairs}
    columns = standing_columns(chain)
    return text_table([STANDING_LABELS[c] for c in columns],
                      [standing_cells(r, info.get(r.pair, {}), columns) for r in rows],
                      right={i for i, c in enumerate(columns) if c in NUMERIC})


def write_standings_csv(rows: list[Standing], pairs: list[dict], out: TextIO) -> None:
    """Every standings field (the caller opens ``out`` with ``CSV_ENCODING``)."""
    info = {p["pair"]: p for p in pairs}
    writer = csv.writer(out)
    writer.writerow(STANDINGS_COLUMNS)
    writer.writerows(standing_values(row, info.get(row.pair, {}), list(STANDINGS_COLUMNS)) for row in rows)


def write_standings_pdf(rows: list[Standing], pairs: list[dict], chain: str, path: str,
                        heading: str) -> None:
    """The standings on A4 landscape, chain columns in order, numbers right-aligned, the CJK font embedded."""
    from reportlab.lib.pagesizes import A4, landscape
    from reportlab.lib.units import mm
    from reportlab.platypus import Paragraph

    s = _styles()
    info = {p["pair"]: p for p in pairs}
    columns = standing_columns(chain)
    data = [[STANDING_LABELS[c] for c in columns]]
    data += [standing_cells(r, info.get(r.pair, {}), columns) for r in rows]
    wide = {"name": 45 * mm, "players": 50 * mm, "pair": 16 * mm, "notes": 40 * mm}
    rest = (267 * mm - sum(wide.values())) / (len(columns) - len(wide))
    story = [Paragraph("排名 Standings", s["title"]), Paragraph(_escape(heading), s["sub"]),
             _grid(data, [wide.get(c, rest) for c in columns], styles=s,
                   right={i for i, c in enumerate(columns) if c in NUMERIC})]
    _document(path, landscape(A4), "Standings").build(story)


def standings_heading(info: dict, rows: list[Standing]) -> str:
    """The line under a standings title: the event's name, after which round, by which chain."""
    played = max((r.rounds_played for r in rows), default=0)
    return (f"{info['name']} ({info['id']}) · 第{played}轮后 after round {played} · "
            f"排名规则 ranking chain {info['chain']} (S2)")


# ---------------------------------------------------------------------- spreadsheets and files


def write_standings_xlsx(rows: list[Standing], pairs: list[dict], chain: str, path, heading: str) -> None:
    """The standings as one worksheet: the heading, labels, then numbers kept as numbers."""
    from openpyxl import Workbook

    info = {p["pair"]: p for p in pairs}
    columns = standing_columns(chain)
    book = Workbook()
    sheet = book.active
    sheet.title = "排名 Standings"
    sheet.append([heading])
    sheet.append([STANDING_LABELS[c] for c in columns])
    for row in rows:
        sheet.append(standing_values(row, info.get(row.pair, {}), columns))
    book.save(path)


def write_sheets_xlsx(sheets: list[ScoreSheet], path) -> None:
    """One worksheet per score sheet (R1-T2, or the table), its CSV rows under the column names."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for sheet in sheets:
        title = f"R{sheet.round}-T{sheet.table_no}" if sheet.round else sheet.table[-31:]
        ws = book.create_sheet(title.translate({ord(c): "_" for c in "[]:*?/\\"}))
        ws.append(list(SHEET_COLUMNS))
        for row in sheet.rows():
            ws.append([row[c] for c in SHEET_COLUMNS])
    book.save(path)


FORMATS = (".pdf", ".csv", ".xlsx")


def save_sheets(sheets: list[ScoreSheet], path: str) -> None:
    """Write score sheets to ``path`` in the format its suffix names."""
    kind = check_format(path)
    if kind == ".pdf":
        write_sheets_pdf(sheets, path)
    elif kind == ".xlsx":
        write_sheets_xlsx(sheets, path)
    else:
        with open(path, "w", newline="", encoding=CSV_ENCODING) as out:
            write_sheets_csv(sheets, out)


def save_standings(rows: list[Standing], pairs: list[dict], info: dict, path: str) -> None:
    """Write the standings to ``path`` in the format its suffix names."""
    kind, heading = check_format(path), standings_heading(info, rows)
    if kind == ".pdf":
        write_standings_pdf(rows, pairs, info["chain"], path, heading)
    elif kind == ".xlsx":
        write_standings_xlsx(rows, pairs, info["chain"], path, heading)
    else:
        with open(path, "w", newline="", encoding=CSV_ENCODING) as out:
            write_standings_csv(rows, pairs, out)


def check_format(path: str) -> str:
    """The export format ``path`` names (its suffix), or a ValueError naming the choices."""
    kind = Path(path).suffix.lower()
    if kind not in FORMATS:
        raise ValueError(f"--out {path}: name a .pdf, .csv or .xlsx file")
    return kind
