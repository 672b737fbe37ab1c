"""A writer process for the concurrency tests: appends plays and acknowledges each one.

Usage: python writer.py URL TABLE PREFIX COUNT SEAT
Prints "ack <seq> <id>" (flushed) after each append has returned, i.e. was committed.
"""

import sys

from web.store import Store
from web.store.testing import TallyDerivation

url, table, prefix, count, seat = sys.argv[1:6]
with Store(url, derivation=TallyDerivation(), snapshot_every=7, migrate=False) as store:
    for i in range(int(count)):
        eid = f"{prefix}{i}"
        done = store.append({"type": "play", "table": table, "t": i, "seat": seat, "cards": ["2S"], "id": eid})
        print(f"ack {done.seq} {eid}", flush=True)
