"""What the dashboard's standings page shows of an event: its name, every column of its
ranking chain (each tie-break that can decide a place), each pair's byes and results
under dispute, and the pairings by round with team names and each table's result (a
forfeit shown as a forfeit, however it was recorded; a bye as a bye).
"""

from __future__ import annotations

from dataclasses import dataclass

from web.store import Store

from . import export, service


@dataclass(frozen=True)
class PairingLine:
    table_no: int
    table_id: str
    ns: dict
    ew: dict | None
    """None: ``ns`` has the bye."""
    state: str
    """``bye``, ``forfeit``, ``no result``, ``pending``, ``final`` or ``disputed``."""
    score: tuple[int, int] | None
    """(NS, EW) on the 28-point table, once there is a result."""
    forfeit: str | None = None
    """The pair that forfeited (by the chief's ruling or at the table, K5)."""


def standings_page(store: Store, event_id: str) -> dict:
    """The standings page's data: ``event``, ``columns``, ``numeric``, ``rows`` (each with
    its ``values`` and notes), ``pairs`` and ``rounds`` (round number -> pairing lines)."""
    event = service.event_info(store, event_id)
    pairs = {p["pair"]: p for p in service.pairs(store, event_id)}
    table = service.standings_of(store, event_id, require_all=False)
    columns = [c for c in export.standing_columns(event["chain"]) if c != "notes"]
    rows = [dict(pair=r.pair, values=export.standing_values(r, pairs.get(r.pair, {}), columns),
                 byes=r.byes, disputed=r.disputed) for r in table]
    rounds: dict[int, list[PairingLine]] = {}
    for m in service.matches(store, event_id):
        rounds.setdefault(m.round, []).append(_line(store, event_id, m, pairs))
    return dict(event=event, columns=columns, numeric=export.NUMERIC, rows=rows, pairs=pairs, rounds=rounds)


def _line(store: Store, event_id: str, m: service.MatchInfo, pairs: dict) -> PairingLine:
    ns, ew = pairs[m.ns], pairs.get(m.ew) if m.ew else None
    state = service.match_state(store, m)
    if state in ("bye", "no result"):
        return PairingLine(m.table_no, m.table_id, ns, ew, state, None)
    forfeit, score = m.forfeit, None
    if forfeit is None:
        result = store.records(m.table_id, types=("session_result",))[-1]
        score = (int(result["score"]["NS"]), int(result["score"]["EW"]))
        if result.get("reason") == "forfeit":  # K5 at the table: scored as the event's forfeit, as in the standings
            forfeit = m.ew if result.get("winner") == "NS" else m.ns
    if forfeit is not None:
        won, lost = service.rules(store, event_id).forfeit.score
        score = (lost, won) if forfeit == m.ns else (won, lost)
        state = "forfeit" if m.forfeit else state
    return PairingLine(m.table_no, m.table_id, ns, ew, state, score, forfeit)
