#!/usr/bin/env bash
# One entry point for newcomers and CI: ./run.sh setup | demo | serve | test | bench
set -euo pipefail
cd "$(dirname "$0")"

setup() {
    # Idempotent: creates .venv and installs the project (editable) with test tools.
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv
    fi
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e ".[test]"
    # The dashboard's browser tests drive Debian's Chromium through Playwright.
    command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; }
    # Score sheets embed a CJK TrueType font (web/tournament/fonts.py); their tests render
    # pages with poppler.
    { [ -f /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc ] && command -v pdftoppm >/dev/null; } ||
        { apt-get update -qq && apt-get install -y -qq fonts-wqy-zenhei poppler-utils; }
}

case "${1:-}" in
    setup)
        setup
        ;;
    demo)
        setup
        echo "== classify a play (level 5: 5H is the wildcard)"
        .venv/bin/guandan-ref classify "3S 4S 5H 6S 7S" --level 5 --table "8D 8C 8H 8S" --json
        echo "== replay a shipped session: flags, deal results, 28-point score"
        .venv/bin/guandan-ref replay examples/session.jsonl --json
        echo "== record it in an event store (SQLite under a temporary data directory) and verify the chain"
        data=$(mktemp -d)
        .venv/bin/guandan-ref import examples/session.jsonl --data "$data"
        .venv/bin/guandan-ref results --data "$data" --json | tail -n 1
        .venv/bin/guandan-ref verify --data "$data"
        rm -rf "$data"
        ;;
    serve)
        # The dashboard on the shipped example session (imported once into ./demo-data).
        setup
        shift || true
        data=demo-data
        if [ ! -f "$data/guandan.sqlite3" ]; then
            .venv/bin/guandan-ref import examples/session.jsonl --data "$data"
        fi
        exec .venv/bin/guandan-ref serve --data "$data" "$@"
        ;;
    test)
        setup
        shift || true
        .venv/bin/python -m pytest "$@"
        ;;
    bench)
        setup
        for b in bench/*.py; do echo "== $b"; .venv/bin/python "$b"; done
        ;;
    *)
        echo "usage: ./run.sh setup|demo|serve|test|bench" >&2
        exit 2
        ;;
esac
