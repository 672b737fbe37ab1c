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
    # The hall tests put two hosts behind Debian's HAProxy (deploy/haproxy.cfg).
    command -v haproxy >/dev/null || { apt-get update -qq && apt-get install -y -qq haproxy; }
}

case "${1:-}" in
    setup)
        setup
        ;;
    demo)
        setup
        shift || true
        exec .venv/bin/guandan-ref demo "$@"
        ;;
    serve)
        # The dashboard on the shipped example session (imported once into ./demo-data/shipped).
        setup
        shift || true
        data=demo-data/shipped
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
