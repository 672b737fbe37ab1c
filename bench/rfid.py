"""RFID benchmark: parser throughput per protocol, and play latency on a real pty.

    .venv/bin/python -m bench.rfid

Parser throughput: frames/s through ``data_received`` with 2 % of the bytes replaced by
garbage (so only frames without a hit can be read: ~0.98 ** frame length), fed in 64-byte chunks (a USB serial adapter delivers a few dozen bytes per read).
A table needs ~100 frames/s (4 antennas x 10 cards x a few repeats); 9600 baud carries at
most ~70 RDM6300 frames/s, so the parser is never the bottleneck.

Play latency: simulated RDM6300 reader on a pseudo-terminal -> ReaderLink -> RfidTable;
seconds from a card's first frame written to the ``play`` observation (settle 0.3 s included).
"""

from __future__ import annotations

import random
import statistics
import time

import _standalone  # noqa: F401  (first: keeps bench/ off the import path)
from hardware.serial_frames import em4100_frame, inventory_answer, jsonl_line
from hardware.link import ReaderLink, port_opener
from hardware.protocols import PROTOCOLS
from hardware.reads import ReaderStats
from hardware.simulator import PtyPort, demo_registry
from hardware.table import RfidTable

FRAMES = 20000


def stream(name: str, rng: random.Random) -> bytes:
    out = bytearray()
    for i in range(FRAMES):
        tag = rng.randbytes(12).hex()
        if name == "jsonl":
            out += jsonl_line("T01", i % 4, tag[:8], i)
        elif name in ("rdm6300", "id12la"):
            out += em4100_frame(tag[:10], b"\r\n" if name == "id12la" else b"")
        else:
            out += inventory_answer([tag], antenna=i % 4 if name == "chafon288" else None)[0]
    for _ in range(len(out) // 50):  # 2 % garbage
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def throughput() -> None:
    rng = random.Random(1)
    print(f"{'protocol':10} {'frames/s':>10} {'intact':>7}  skipped (garbage bytes, bad frames/lines/checksums)")
    for name, cls in PROTOCOLS.items():
        data = stream(name, rng)
        reads: list = []
        stats = ReaderStats()
        protocol = cls(reads.append, stats)
        start = time.perf_counter()
        for i in range(0, len(data), 64):
            protocol.data_received(data[i : i + 64])
        elapsed = time.perf_counter() - start
        bad = stats["bad_frames"] + stats["bad_lines"] + stats["bad_checksums"]
        print(f"{name:10} {FRAMES / elapsed:10.0f} {len(reads) / FRAMES:7.1%}  {stats['garbage_bytes']}, {bad}")


def latency(plays: int = 10) -> None:
    registry = demo_registry("rdm6300")
    tags = list(registry.to_json()["tags"])
    port = PtyPort()
    link = ReaderLink(port_opener(port.path, 9600), lambda s, st: PROTOCOLS["rdm6300"](s, st))
    link.start()
    table = RfidTable(registry, quiet=0.5, settle=0.3)
    delays = []
    try:
        link.connected.wait(5)
        for i in range(plays):
            written = time.monotonic()
            port.write(em4100_frame(tags[i]))
            for read in link.reads(0.02):
                if read is not None:
                    table.read(read)
                if table.tick(time.monotonic()):
                    delays.append(time.monotonic() - written)
                    break
            time.sleep(0.6)  # the card is gone before the next one
    finally:
        link.stop()
        port.close()
    print(f"play latency over a pty (settle 0.3 s): median {statistics.median(delays):.3f} s, "
          f"max {max(delays):.3f} s, {len(delays)}/{plays} plays")


if __name__ == "__main__":
    throughput()
    latency()
