"""The floor (赛场总览): every table as a tile, live; and the rule book."""

from __future__ import annotations

from flask import Blueprint, abort, render_template

from . import context, i18n
from .broker import BrokerUnavailable
from .tablesview import table_ids, tile
from .rulebook import rulebook_html

bp = Blueprint("floor", __name__)

TILE_LABELS = ("floor.", "side.", "seat.", "phase.", "severity.", "table.level", "table.deal_n", "table.clock")
"""The words of a tile (``_tile.html``): the floor page renders each change from the live
stream's data with them, instead of fetching the tile's HTML for every change (a hall of
200 tables changes 400 times a second)."""


def _health() -> dict[str, dict]:
    """Every table agent's last report, read once for every tile; none while Redis is
    unreachable: the floor still shows its tables (the pages are not the API's 503)."""
    try:
        return context.broker().health()
    except BrokerUnavailable:
        return {}


@bp.get("/")
def floor():
    health = _health()
    tiles = [tile(t, health) for t in table_ids()]
    return render_template("floor.html", tiles=tiles, seen={t["table"]: t["seq"] for t in tiles},
                           labels=i18n.labels(*TILE_LABELS))


@bp.get("/floor/tile/<table_id>")
def floor_tile(table_id: str):
    """One tile's HTML, as the floor page first draws it (live changes are drawn by the page)."""
    if table_id not in table_ids():
        abort(404)
    return render_template("_tile.html", tile=tile(table_id, _health()))


@bp.get("/rules")
def rules():
    return render_template("rules.html", rulebook=rulebook_html())
