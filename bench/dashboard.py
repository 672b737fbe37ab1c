"""Dashboard figure: how long an event posted by a table agent takes to reach an open live
page's event stream (POST /api/tables/T1/events -> the ``table`` event on /api/stream).

Usage: python bench/dashboard.py [--events N] [--workers N]
Runs ``guandan-ref serve`` (gunicorn) on a fresh data directory; with several workers the
fan-out goes through the machine's Redis. Prints the median and 95th percentile latency.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import _standalone  # noqa: F401  (first: keeps bench/ off the import path)

from web.app.accounts import create_token
from web.store import open_store

CLI = str(Path(sys.executable).parent / "guandan-ref")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int) -> None:
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        with open_store(data_dir=data) as store:
            token = create_token(store, "T1")
        port = free_port()
        extra = ["--workers", str(args.workers)] + (["--redis", "redis://127.0.0.1:6379/0"] if args.workers > 1 else [])
        env = {**os.environ, "GUANDAN_ADMIN_PASSWORD": "bench-password",
               "GUANDAN_REDIS_NAMESPACE": f"bench-{uuid.uuid4().hex}"}
        server = subprocess.Popen([CLI, "serve", "--data", data, "--port", str(port), *extra],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            wait_for(port)
            print(f"== {args.events} events, {args.workers} worker(s): post -> live stream latency")
            latencies = measure(port, token, args.events)
        finally:
            server.terminate()
            server.wait(timeout=20)
    ms = sorted(x * 1000 for x in latencies)
    print(f"median {statistics.median(ms):.1f} ms, p95 {ms[int(0.95 * (len(ms) - 1))]:.1f} ms, "
          f"max {ms[-1]:.1f} ms over {len(ms)} events")


def measure(port: int, token: str, n: int) -> list[float]:
    received: dict[int, float] = {}
    stream = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    stream.request("GET", "/api/stream", headers={"Last-Event-ID": json.dumps({"T1": 0})})
    response = stream.getresponse()

    def listen() -> None:
        for raw in response:
            line = raw.decode().strip()
            if line.startswith("id: "):
                received.setdefault(json.loads(line[4:]).get("T1", 0), time.perf_counter())
                if len(received) > n:
                    return

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    time.sleep(0.5)
    sent: dict[int, float] = {}
    post(port, token, {"type": "session_start", "t": 0.0, "teams": {"NS": "A", "EW": "B"}})
    for i in range(n):
        start = time.perf_counter()
        seq = post(port, token, {"type": "tick", "t": float(i + 1)})
        sent[seq] = start
        deadline = time.monotonic() + 5
        while seq not in received and time.monotonic() < deadline:
            time.sleep(0.001)
    return [received[s] - t for s, t in sent.items() if s in received]


def post(port: int, token: str, event: dict) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/api/tables/T1/events", body=json.dumps(event),
                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    return json.loads(conn.getresponse().read())["results"][0]["seq"]


if __name__ == "__main__":
    main()
