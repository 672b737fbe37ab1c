"""A writer process for the concurrency tests: appends plays and acknowledges each one.

Usage: python writer.py URL TABLE PREFIX COUNT SEAT [BATCH]
Prints "ack <seq> <id>" (flushed) for each event once its append has returned, i.e. was
committed: one by one with ``append``, or BATCH at a time with ``append_many``.
"""

import sys

from web.store import Appended, Store
from tests.store.support import TEST_SECRET, TallyDerivation

url, table, prefix, count, seat = sys.argv[1:6]
batch = int(sys.argv[6]) if len(sys.argv) > 6 else 1


def play(i: int) -> dict:
    return {"type": "play", "table": table, "t": i, "seat": seat, "cards": ["2S"], "id": f"{prefix}{i}"}


with Store(url, derivation=TallyDerivation(), snapshot_every=7, secret_key=TEST_SECRET,
           migrate=False) as store:
    for start in range(0, int(count), batch):
        events = [play(i) for i in range(start, min(start + batch, int(count)))]
        if batch == 1:
            done = [store.append(events[0])]
        else:
            done = store.append_many(events, batch_size=batch)
        for event, outcome in zip(events, done):
            assert isinstance(outcome, Appended), outcome
            print(f"ack {outcome.seq} {event['id']}", flush=True)
