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
        # The chunked-training test continues a tiny classifier from a checkpoint: it needs
        # torch, whose CPU build (2.13.0) lies on this project's machines' disk. The table
        # side never imports it (tests/recognizer/test_runtime_split.py), so only tests install it.
        .venv/bin/python -c "import torch" 2>/dev/null || .venv/bin/python -m pip install -q torch==2.13.0
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
