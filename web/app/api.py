"""The HTTP API (``/api``): what table agents post, and public reads for any tool.

Agents authenticate with their table's bearer token (``guandan-ref token create``) and
may post only to that table; they send what the table saw (plays, passes, reports,
faults...), never a referee's action (penalty, correction, dismissal: the console's,
with a login). Every refusal is a clear 4xx with a one-line reason; nothing a client
sends can cause a 500 or change a table half-way.
"""

from __future__ import annotations

import hashlib
import json
import math
import time

from flask import Blueprint, Response, current_app, jsonify, request, stream_with_context
from sqlalchemy import insert, select
from sqlalchemy.exc import OperationalError, PendingRollbackError
from werkzeug.exceptions import HTTPException

from referee.jsontext import DEFAULT_LIMITS, JSONTextError, Limits, loads
from web.store import Appended, SequenceConflict
from web.store.db import WRITE

from . import accounts, context
from .auth import requires
from .broker import BrokerUnavailable
from .feed import Batch, Subscriber
from .gunicorn_server import connection_socket
from .models import Evidence
from .openapi import PERCEPTION_COUNTS, spec
from .public import is_spectator, public_events, spectator_tile
from .tablesview import table_ids, tile

bp = Blueprint("api", __name__, url_prefix="/api")

REFEREE_ACTIONS = ("penalty", "correction", "dismiss")
"""Event types only the referee console makes (a logged-in official), never an agent."""
MAX_EVENTS = 1000
"""Events in one request."""
MAX_WHOLE = 2 ** 31 - 1
"""The largest sequence number or index a query names (the databases' integer)."""
RETRY_AFTER_S = "2"
TOKEN_CACHE_S = 5.0
"""How long a worker trusts a token it has checked: a replaced token stops working within it."""
HEALTH_FIELDS = {"fps": (int, float), "last_read": (int, float), "outbox": (int,),
                 "calibration": (str,), "camera": (str,), "rfid": (str,), "perception": (dict,)}
STREAM_KEEPALIVE_S = 15.0
STREAM_MAX_S = 300.0
"""A stream ends after this long; the browser reconnects with its Last-Event-ID."""


class ApiError(HTTPException):
    def __init__(self, status: int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.code, self.message, self.extra = status, message, headers or {}


@bp.errorhandler(HTTPException)
def _as_json(exc: HTTPException):
    message = getattr(exc, "message", None) or exc.description
    response = jsonify(error=message)
    response.status_code = exc.code or 500
    response.headers.update(getattr(exc, "extra", {}))
    return response


@bp.errorhandler(BrokerUnavailable)
@bp.errorhandler(OperationalError)
@bp.errorhandler(PendingRollbackError)  # the connection died mid-transaction: nothing was committed
def _unavailable(exc: OperationalError | PendingRollbackError | BrokerUnavailable):
    what = "live updates are" if isinstance(exc, BrokerUnavailable) else "the event store is"
    response = jsonify(error=f"{what} unavailable; retry shortly")
    response.status_code = 503
    response.headers["Retry-After"] = RETRY_AFTER_S
    return response


def _known(table_id: str) -> bool:
    store = context.store()
    return table_id in accounts.token_tables(store) or any(h["table"] == table_id for h in store.tables())


def _agent(table_id: str) -> None:
    """The request carries this table's token: else 401 (none, or bad) or 403, the same 403
    for a table that exists and one that does not (a token enumerates no table ids)."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "send the table's token as 'Authorization: Bearer <token>'",
                       {"WWW-Authenticate": "Bearer"})
    owner = _token_owner(token.strip())
    if owner is None:
        raise ApiError(401, "unknown token", {"WWW-Authenticate": "Bearer"})
    if owner != table_id:
        raise ApiError(403, f"this token belongs to table {owner!r}, not {table_id!r}")


def _token_owner(token: str) -> str | None:
    """The table of a valid token, from every token's owner as read at most ``TOKEN_CACHE_S``
    ago by this worker: one query for the hall, not one per table and post (bench/NOTES.md). A token
    not among them (made since) is looked up alone; unknown tokens are never remembered."""
    cache = current_app.extensions.get("guandan_token_owners")
    now = time.monotonic()
    if cache is None or now - cache[0] >= TOKEN_CACHE_S:
        cache = current_app.extensions["guandan_token_owners"] = (now, accounts.token_owners(context.store()))
    digest = accounts.token_digest(token)
    owner = cache[1].get(digest)
    if owner is None and (owner := accounts.token_table(context.store(), token)) is not None:
        cache[1][digest] = owner
    return owner


def _json_body(max_bytes: int):
    if not request.get_data():
        raise ApiError(400, "empty body: send a JSON event or a JSON list of events")
    try:
        return loads(request.get_data(), Limits(max_bytes=max_bytes, max_depth=DEFAULT_LIMITS.max_depth + 1))
    except JSONTextError as exc:
        raise ApiError(400, f"malformed JSON: {exc}") from None


def _prepare(table_id: str, item) -> tuple[dict | None, str | None]:
    """The event to append (its table filled in), or why it is refused before the store."""
    if not isinstance(item, dict):
        return None, f"an event must be a JSON object, not {type(item).__name__}"
    if item.get("type") in REFEREE_ACTIONS:
        return None, f"a {item['type']} is a referee's action: make it from the referee console"
    if item.setdefault("table", table_id) != table_id:
        return None, f"event names table {item['table']!r}, not {table_id!r}"
    if len(json.dumps(item, ensure_ascii=False).encode("utf-8", "surrogatepass")) > DEFAULT_LIMITS.max_bytes:
        return None, f"event over {DEFAULT_LIMITS.max_bytes} bytes"
    return item, None


@bp.post("/tables/<table_id>/events")
def post_events(table_id: str):
    _agent(table_id)
    body = _json_body(current_app.config["MAX_CONTENT_LENGTH"])
    items = body if isinstance(body, list) else [body]
    if not items or len(items) > MAX_EVENTS:
        raise ApiError(400, f"send 1 to {MAX_EVENTS} events, not {len(items)}")
    prepared = [_prepare(table_id, item) for item in items]
    events = [e for e, _ in prepared if e is not None]
    try:
        outcomes = iter(context.append(events))
    except SequenceConflict:
        raise ApiError(503, "the table is busy; retry shortly", {"Retry-After": RETRY_AFTER_S}) from None
    results = []
    for event, refusal in prepared:
        if event is None:
            results.append({"status": "rejected", "reason": refusal})
            continue
        outcome = next(outcomes)
        if isinstance(outcome, Appended):
            results.append({"status": "duplicate" if outcome.duplicate else "accepted", "seq": outcome.seq})
        elif isinstance(outcome, SequenceConflict):
            raise ApiError(503, "the table is busy; retry shortly", {"Retry-After": RETRY_AFTER_S})
        else:
            results.append({"status": "rejected", "reason": getattr(outcome, "reason", str(outcome))})
    return jsonify(results=results)


@bp.post("/tables/<table_id>/evidence")
def post_evidence(table_id: str):
    _agent(table_id)
    if request.mimetype != "image/jpeg":
        raise ApiError(415, "evidence is a JPEG frame: send it with 'Content-Type: image/jpeg'")
    data = request.get_data()
    if not data.startswith(b"\xff\xd8\xff"):
        raise ApiError(400, "the body is not a JPEG image")
    digest = hashlib.sha256(data).hexdigest()
    store = context.store()
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        exists = conn.execute(select(Evidence.sha256).where(
            Evidence.table_id == table_id, Evidence.sha256 == digest)).first()
        if exists is None:
            conn.execute(insert(Evidence).values(table_id=table_id, sha256=digest, content_type="image/jpeg",
                                                 data=data, received_at=time.time()))
    return jsonify(id=digest), 201


@bp.get("/tables/<table_id>/evidence/<sha>")
@requires("referee")
def get_evidence(table_id: str, sha: str):
    with context.store().engine.connect() as conn:
        row = conn.execute(select(Evidence).where(Evidence.table_id == table_id, Evidence.sha256 == sha)).first()
    if row is None:
        raise ApiError(404, f"no evidence {sha!r} at table {table_id!r}")
    response = Response(row.data, mimetype=row.content_type)
    response.headers["Cache-Control"] = "private, max-age=86400, immutable"
    return response


@bp.post("/tables/<table_id>/health")
def post_health(table_id: str):
    _agent(table_id)
    body = _json_body(4096)
    if not isinstance(body, dict):
        raise ApiError(400, "a health report is a JSON object")
    report = {}
    for key, kinds in HEALTH_FIELDS.items():
        value = body.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, kinds) or (
                isinstance(value, float) and not math.isfinite(value)) or (isinstance(value, str) and len(value) > 200) or (
                isinstance(value, dict) and not _counts(value, PERCEPTION_COUNTS)):
            raise ApiError(400, f"health.{key}: bad value {value!r}"[:300])
        report[key] = value
    report["received_at"] = time.time()
    context.broker().set_health(table_id, report)
    context.broker().publish(table_id)
    return jsonify(ok=True)


def _counts(value: dict, names: tuple[str, ...]) -> bool:
    """Exactly ``names``, each a whole number from 0 to a million."""
    return set(value) == set(names) and all(
        isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 1_000_000 for n in value.values())


@bp.get("/tables")
def list_tables():
    """Every table's tile; a spectator's without what only officials read (``spectator_tile``)."""
    health = context.broker().health()
    tables = [tile(t, health) for t in table_ids()]
    return jsonify(tables=[spectator_tile(t) for t in tables] if is_spectator() else tables)


@bp.get("/tables/<table_id>")
def get_table(table_id: str):
    table = context.public(table_id)
    if table is None:
        if _known(table_id):
            return jsonify(table=table_id, seq=0, state={"session": None})
        raise ApiError(404, f"no table {table_id!r}")
    return jsonify(table)


@bp.get("/tables/<table_id>/events")
def get_events(table_id: str):
    after = whole_number(request.args.get("after", "0"))
    if after is None:
        raise ApiError(400, f"after: expected a sequence number (0 to {MAX_WHOLE} in ASCII digits), "
                            f"not {request.args['after']!r}"[:300])
    events = public_events(context.timelines(), table_id, after, context.delay())
    if events is None:
        if _known(table_id):
            return jsonify(events=[])
        raise ApiError(404, f"no table {table_id!r}")
    return jsonify(events=events)


LAST_EVENT_ID = Limits(max_bytes=64 * 1024, max_depth=1, max_number_chars=12)
"""What a Last-Event-ID may be: one flat map of table -> seq (anything else starts afresh)."""


def whole_number(text: str) -> int | None:
    """``text`` as a sequence number or deal/step index: ASCII digits only (``str.isdigit``
    takes "²", which ``int`` refuses) and at most ``MAX_WHOLE``; else None."""
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(MAX_WHOLE)) or int(text) > MAX_WHOLE:
        return None
    return int(text)


def _seen(header: str | None) -> dict[str, int]:
    """The table -> seq vector a reconnecting stream's Last-Event-ID names ({} if none or bad)."""
    try:
        seen = loads(header or "{}", LAST_EVENT_ID)
    except JSONTextError:
        return {}
    if not isinstance(seen, dict):
        return {}
    return {str(k): v for k, v in seen.items() if isinstance(v, int) and not isinstance(v, bool)}


@bp.get("/stream")
def stream():
    """Server-Sent Events: a ``table`` event (the table's whole tile) or a ``change`` event
    (the table, its seq and the tile's fields that changed since the last one this stream
    sent) per public change, ``id`` = what was seen.

    The id is the JSON map of each table's last sent public ``seq``; a browser that
    reconnects sends it back as ``Last-Event-ID`` and gets only the tables that moved
    since, whichever worker it reaches. What moved together is written together (the
    worker's feed gathers changes for ``feed.GATHER_S``), the id once, on the last event.
    A spectator (``public.is_spectator``) is sent the tiles as spectators receive them
    (``Tile.seen_by``), behind the broadcast delay as every public view is.
    """
    feed = context.feed()
    # before reading the first tiles: any later change comes as a batch
    sub = Subscriber(_seen(request.headers.get("Last-Event-ID") or request.args.get("last_event_id")), feed.join(),
                     spectator=is_spectator())
    fresh = feed.since
    if feed.writes_to_sockets and request.environ.get("SERVER_PROTOCOL") == "HTTP/1.1":
        sub.sock = connection_socket(request.environ)  # chunked: what the feed writes (feed.frame)

    def tiles_chunk(tiles: list, batch: Batch | None = None) -> bytes:
        tiles = [t.seen_by(sub.spectator) for t in tiles]
        return sub.take(b"".join(t.sent_as(sub.sent.get(t.data["table"])) for t in tiles),
                        {t.data["table"]: t.seq for t in tiles}, {t.data["table"]: t.version for t in tiles}, batch)

    def events():
        try:
            yield "retry: 1000\n\n"
            health = context.broker().health()
            tiles = context.tiles()
            first = (tiles.get(t, fresh, health) for t in table_ids())
            yield tiles_chunk([t for t in first if sub.seen.get(t.data["table"]) != t.seq])
            started = sub.last_write = time.monotonic()
            while time.monotonic() - started < STREAM_MAX_S:
                wait = 1.0
                if sub.sock is not None:  # the feed writes the batches until it hands the stream back
                    rest = feed.hold(sub, timeout=STREAM_KEEPALIVE_S)
                    if rest:
                        sub.sock.sendall(rest)
                    wait = 0.0
                batches = feed.wait(sub.place, timeout=wait)
                if batches:
                    sub.place = (batches[-1].number, sub.place[1])
                    usual = batches[0].seen_by(sub.spectator)
                    if len(batches) == 1 and not usual.recheck and usual.in_step(sub.sent):
                        text = sub.take(usual.changes, usual.seqs, usual.versions, usual)
                    else:
                        moved = {}
                        for batch in batches:
                            moved.update(batch.recheck)
                            moved.update(batch.moved)
                        forced = set().union(*(b.moved for b in batches))
                        text = tiles_chunk([t for name, t in moved.items()
                                            if name in forced or sub.seen.get(name) != t.seq], batches[-1])
                    if text:
                        sub.last_write = time.monotonic()
                        yield text
                if time.monotonic() - sub.last_write > STREAM_KEEPALIVE_S:
                    sub.last_write = time.monotonic()
                    yield ": keep-alive\n\n"
        except BrokerUnavailable:  # Redis went away, or the stream fell behind: end it; the
            return                  # page reconnects with its Last-Event-ID and misses nothing

    response = Response(stream_with_context(events()), mimetype="text/event-stream")
    response.call_on_close(feed.leave)  # also when the page left before the stream began
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    return response


@bp.get("/openapi.json")
def openapi():
    return jsonify(spec())
