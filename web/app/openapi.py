"""The OpenAPI 3 description of ``/api`` (served at ``/api/openapi.json``).

Written out rather than generated: it is the contract table agents and other tools are
built against, and a test checks that it names every route the API serves.
"""

from __future__ import annotations

VERSION = "1.0.0"
PERCEPTION_COUNTS = ("plays", "misread", "caught", "uncaught", "deals", "deals_right")
"""A demo agent's reads against its simulation (health ``perception``): counts, which the
floor page words in its visitor's language."""


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


ERROR = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}
TABLE_ID = {"name": "table_id", "in": "path", "required": True, "schema": {"type": "string", "maxLength": 120}}
TOKEN_ERRORS = {
    "401": _json(ERROR, "no token, or not a known token"),
    "403": _json(ERROR, "a token of another table"),
    "404": _json(ERROR, "unknown table"),
}
RESULT = {"oneOf": [
    {"type": "object", "properties": {"status": {"enum": ["accepted", "duplicate"]}, "seq": {"type": "integer"}},
     "required": ["status", "seq"]},
    {"type": "object", "properties": {"status": {"const": "rejected"}, "reason": {"type": "string"}},
     "required": ["status", "reason"]},
]}
EVENT = {"type": "object", "description": "a table event (DESIGN.md); 'table' may be left out",
         "properties": {"type": {"type": "string"}, "t": {"type": "number"}, "id": {"type": "string"},
                        "source": {"enum": ["camera", "rfid", "fused", "manual"]},
                        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                        "evidence": {"type": "object"}},
         "required": ["type", "t"]}
SUMMARY = {"type": "object", "description": "a floor tile: teams, levels, deal, turn, clocks, cards left, "
                                            "open flags by severity, agent health (never a hand)"}


def spec() -> dict:
    bearer = [{"tableToken": []}]
    return {
        "openapi": "3.0.3",
        "info": {"title": "guandan-referee dashboard API", "version": VERSION,
                 "description": "Public reads of table state, and the door table agents post to."},
        "components": {"securitySchemes": {
            "tableToken": {"type": "http", "scheme": "bearer",
                           "description": "per-table token from 'guandan-ref token create TABLE'"},
            "session": {"type": "apiKey", "in": "cookie", "name": "session",
                        "description": "a referee's login on the dashboard"}}},
        "paths": {
            "/api/tables": {"get": {
                "summary": "every known table as a public summary",
                "responses": {"200": _json({"type": "object", "properties": {
                    "tables": {"type": "array", "items": SUMMARY}}}, "the tables")}}},
            "/api/tables/{table_id}": {"get": {
                "summary": "the public state of a table (spectator view; never a hand)",
                "parameters": [TABLE_ID],
                "responses": {"200": _json({"type": "object"}, "public state"), "404": _json(ERROR, "unknown table")}}},
            "/api/tables/{table_id}/events": {
                "get": {"summary": "accepted events after a sequence number, hands and evidence removed",
                        "parameters": [TABLE_ID, {"name": "after", "in": "query", "schema": {"type": "integer",
                                                                                             "minimum": 0}}],
                        "responses": {"200": _json({"type": "object", "properties": {
                            "events": {"type": "array", "items": EVENT}}}, "events in order, each with 'seq'"),
                            "400": _json(ERROR, "bad 'after'"), "404": _json(ERROR, "unknown table")}},
                "post": {"summary": "append one event or a list of events (table agents)",
                         "security": bearer, "parameters": [TABLE_ID],
                         "requestBody": {"required": True, "content": {"application/json": {"schema": {
                             "oneOf": [EVENT, {"type": "array", "items": EVENT, "maxItems": 1000}]}}}},
                         "responses": {
                             "200": _json({"type": "object", "properties": {
                                 "results": {"type": "array", "items": RESULT}}},
                                 "one result per event, in the order sent"),
                             "400": _json(ERROR, "malformed JSON or not events"), **TOKEN_ERRORS,
                             "413": _json(ERROR, "body over the configured limit"),
                             "503": _json(ERROR, "store unavailable or busy; see Retry-After")}}},
            "/api/tables/{table_id}/evidence": {"post": {
                "summary": "store a JPEG evidence frame (idempotent)", "security": bearer,
                "parameters": [TABLE_ID],
                "requestBody": {"required": True, "content": {"image/jpeg": {"schema": {
                    "type": "string", "format": "binary"}}}},
                "responses": {"201": _json({"type": "object", "properties": {"id": {"type": "string"}}},
                                           "the frame's SHA-256 (hex)"),
                              "400": _json(ERROR, "not a JPEG"), **TOKEN_ERRORS,
                              "413": _json(ERROR, "body over the configured limit"),
                              "415": _json(ERROR, "not image/jpeg")}}},
            "/api/tables/{table_id}/evidence/{sha}": {"get": {
                "summary": "an evidence frame (referees only)", "security": [{"session": []}],
                "parameters": [TABLE_ID, {"name": "sha", "in": "path", "required": True,
                                          "schema": {"type": "string"}}],
                "responses": {"200": {"description": "the JPEG", "content": {"image/jpeg": {}}},
                              "403": _json(ERROR, "not a referee"), "404": _json(ERROR, "no such frame")}}},
            "/api/tables/{table_id}/health": {"post": {
                "summary": "a table agent's health report (shown on the floor; not in the event log)",
                "security": bearer, "parameters": [TABLE_ID],
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "properties": {
                        "fps": {"type": "number"}, "last_read": {"type": "number"},
                        "calibration": {"type": "string"}, "outbox": {"type": "integer"},
                        "camera": {"type": "string"}, "rfid": {"type": "string"},
                        "perception": {"type": "object", "description": "the demo's reads against its truth",
                                       "required": list(PERCEPTION_COUNTS), "additionalProperties": False,
                                       "properties": {k: {"type": "integer", "minimum": 0, "maximum": 1_000_000}
                                                      for k in PERCEPTION_COUNTS}}}}}}},
                "responses": {"200": _json({"type": "object"}, "kept"), "400": _json(ERROR, "bad report"),
                              **TOKEN_ERRORS}}},
            "/api/stream": {"get": {
                "summary": "Server-Sent Events: per public change, a 'table' event (the table's summary) or a "
                           "'change' event (its table, seq and the fields changed since the last one sent)",
                "parameters": [{"name": "Last-Event-ID", "in": "header", "schema": {"type": "string"},
                                "description": "resume: only tables that moved since are sent"}],
                "responses": {"200": {"description": "an event stream",
                                      "content": {"text/event-stream": {"schema": {"type": "string"}}}}}}},
            "/api/openapi.json": {"get": {
                "summary": "this description",
                "responses": {"200": _json({"type": "object"}, "OpenAPI 3")}}},
        },
    }
