"""What the referee engine says, in the reader's language: flags, reviews, cards, combinations.

The engine keeps each flag's and review's facts as data (``detail``: ``what`` names the
message, the rest are its values: seats, counts, card names, a combination); the words
are chosen here, from the one catalogue (``translations.json``, keys ``msg.*``,
``combo.*``, ``table.clock_task.*``, ``late.*``, ``problem.*``), so a referee reads "东越序过牌（应由南
出牌）" where the record says ``{"what": "passed_out_of_turn", "turn": "S"}``. A record
without a detail (one derived before the engine kept them) shows its English message.
"""

from __future__ import annotations

import re

from .i18n import language, t

SUITS = {"S": "♠", "H": "♥", "C": "♣", "D": "♦"}
RANK_WORDS = {"T": "10"}
TABLE_NUMBER = re.compile(r"[Tt]?(\d+)")


def seat_word(seat: str | None) -> str:
    """A seat as the players name it (东南西北 / North...); ``None``: the leader."""
    return t(f"seat.{seat}") if seat else t("msg.the_leader")


def side_word(side: str | None) -> str:
    """A side (南北方 / North–South); an unknown value as it is."""
    return t(f"side.{side}", default=side) if side else "—"


def level_word(level) -> str:
    """A level as played (打5); past A is 过A / past A, not the notation ``A+``."""
    return t("table.level_passed_a") if level == "A+" else ("10" if level == "T" else str(level or "—"))


def seats_word(seats) -> str:
    return t("msg.list_sep").join(seat_word(s) for s in seats or ())


def card_word(card: str) -> str:
    """A card by its suit sign and rank (♥10, ♠Q), the jokers by name (大王 / big joker)."""
    if card in ("BJ", "SJ"):
        return t(f"card.{card}")
    rank, suit = card[:-1], card[-1:]
    if suit not in SUITS:
        return card
    return SUITS[suit] + RANK_WORDS.get(rank, rank)


def cards_word(cards) -> str:
    return " ".join(card_word(c) for c in cards or ())


def rank_word(rank: str) -> str:
    return t(f"card.{rank}") if rank in ("BJ", "SJ") else RANK_WORDS.get(rank, rank)


def combo_word(reading: dict | None) -> str:
    """A combination by its name in the sport (三带对（Q）, 4炸（6）, 天王炸 / full house Q)."""
    if not reading:
        return ""
    kind = reading.get("type")
    if kind == "four_jokers":
        return t("combo.four_jokers")
    if kind == "bomb":
        return t("combo.bomb_of", size=reading.get("size"), rank=rank_word(str(reading.get("rank"))))
    return t("combo.named", name=t(f"combo.{kind}", default=str(kind)), rank=rank_word(str(reading.get("rank"))))


def table_word(table_id: str) -> str:
    """A table as the hall names it: 3号桌 / Table 3 for a numbered id (``T3`` or ``3``),
    else the id itself (牌桌 A厅 / Table A-hall)."""
    number = TABLE_NUMBER.fullmatch(str(table_id))
    if number:
        return t("table.title", table=number.group(1))
    return t("table.named", table=table_id)


def percent(p) -> str:
    return f"{float(p) * 100:.0f}"


def _late_outcome(severity: str, house: bool) -> str:
    return t(f"late.{severity}{'_house' if house and severity in ('foul', 'loss') else ''}")


def _problem(d: dict, seat: str | None) -> str:
    key = d.get("problem")
    if key == "not_low":
        key = "not_low_holds" if d.get("holds_low") else "not_low_unknown"
    return t(f"problem.{key}", seat=seat_word(seat), payers=seats_word(d.get("payers")),
             due=seat_word(d.get("due")), highest=card_word(d.get("highest") or ""))


def _values(record: dict, d: dict) -> dict:
    """Every value a message may name, as words."""
    what, seat = d.get("what"), record.get("seat")
    values = {
        "seat": seat_word(seat), "side": side_word(record.get("side")), "turn": seat_word(d.get("turn")),
        "cards": cards_word(d.get("cards") or record.get("cards")), "table": cards_word(d.get("table")),
        "combo": combo_word(d.get("reading")), "of": seat_word(d.get("of")), "leader": seat_word(d.get("leader")),
        "due": seat_word(d.get("due")), "to": seat_word(d.get("to")), "from": seat_word(d.get("from")),
        "card": card_word(d.get("card") or ""), "count": d.get("count"), "holds": d.get("holds"),
        "laid": d.get("laid"), "counted": d.get("counted"), "total": d.get("total"),
        "minutes": f"{d.get('minutes', 0):g}", "limit": f"{d.get('limit', 0):g}",
        "countdown": f"{d.get('countdown', 0):g}", "task": t(f"table.clock_task.{d.get('task')}"),
        "source": t(f"source.{record.get('source')}", default=str(record.get("source"))),
    }
    if what == "late":
        values["outcome"] = _late_outcome(record.get("severity", ""), bool(d.get("house")))
    elif what == "redo":
        values["handover"] = t(f"action.{d.get('handover')}")
        values["problem"] = _problem(d, seat)
    elif what == "deck_wrong":
        values["extra"] = t("msg.deck_extra", cards=cards_word(d.get("extra"))) if d.get("extra") else ""
    elif what in ("too_many_copies", "seen_again", "laid_again"):
        values["seen"] = t("msg.list_sep").join(t("msg.seen_times", card=card_word(c), n=n)
                                                for c, n in (d.get("seen") or {}).items())
        values["laid"] = cards_word(d.get("laid"))
        values["earlier"] = t("msg.list_sep").join(f"{seat_word(r.get('seat'))}{t('msg.colon')}{cards_word(r.get('cards'))}"
                                                   for r in d.get("earlier") or ())
    elif what == "low_confidence":
        values["p"] = percent(d.get("confidence", 0))
        if "after" in d:
            values.update(after=percent(d["after"]), n=d.get("ruled_out"))
    elif what == "impossible_read":
        taken = d.get("taken")
        values["taken"] = t("msg.taken_as", cards=cards_word(taken)) if taken else t("msg.taken_as_read")
    elif what == "fault":
        text = str(d.get("text") or "")
        values["text"] = t(f"floor.device.{text}", default=text if language() == "en" else t("msg.fault_unnamed"))
    elif what == "deck_anomaly":
        values["text"] = record.get("message", "")
    return values


def settled_word(record: dict) -> str:
    """Why the deal's context settled a read (a ``settled`` record): the engine's own reasons
    are English sentences, so a Chinese reader gets how many readings it ruled out."""
    reasons = record.get("settled_by") or ()
    return ", ".join(reasons) if language() == "en" else t("history.settled_n", n=len(reasons))


def message_key(record: dict) -> str | None:
    """The catalogue key of a record's message (None: the record has no detail)."""
    d = record.get("detail")
    if not isinstance(d, dict) or not d.get("what"):
        return None
    what = d["what"]
    if what == "passed_out_of_turn" and d.get("turn") is None:
        return "msg.passed_in_tribute"
    if what == "not_a_combination" and d.get("declared"):
        return "msg.not_a_combination_declared"
    if what == "low_confidence" and "after" in d:
        return "msg.low_confidence_after"
    return f"msg.{what}"


def _other_record(record: dict) -> str:
    """What a result, ruling, dismissal or withdrawal says, from its fields."""
    kind = record.get("type")
    if kind == "deal_end":
        levels = record.get("levels") or {}
        return t("msg.deal_end", order=seats_word(record.get("order")), ns=levels.get("NS"), ew=levels.get("EW"))
    if kind == "session_result":
        score = record.get("score") or {}
        return t("msg.session_result", ns=score.get("NS"), ew=score.get("EW"),
                 winner=side_word(record.get("winner")) if record.get("winner") else t("msg.no_winner"),
                 reason=t(f"reason.{record.get('reason')}", default=str(record.get("reason"))))
    if kind == "ruling":
        given, level = record.get("given"), record.get("level")
        shown = t(f"severity.{level}", default=str(level))
        if given != level:
            shown = t("msg.escalated", given=t(f"severity.{given}", default=str(given)), level=shown)
        who = side_word(record.get("side")) + (f"（{seat_word(record['seat'])}）" if language() == "zh" and record.get("seat")
                                               else f" ({seat_word(record['seat'])})" if record.get("seat") else "")
        return t("msg.ruling", who=who, level=shown)
    if kind == "withdrawn":
        return t("msg.withdrawn")
    if kind == "dismissed":
        return str(record.get("reason") or "")
    return str(record.get("message") or "")


def record_message(record: dict) -> str:
    """A record's message in the reader's language: a flag's or review's from its detail,
    any other record's from its fields."""
    key = message_key(record)
    if key is None:
        return _other_record(record)
    d = record["detail"]
    values = _values(record, d)
    if d.get("declared"):
        values["declared"] = t(f"combo.{d['declared']}", default=str(d["declared"]))
    return t(key, default=str(record.get("message") or ""), **values)
