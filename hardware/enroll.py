"""Guided enrolment: the operator presents the 108 cards one by one as prompted.

Input is a stream of debounced arrivals (one per card put on the antenna), so the same code
runs against a real reader, a simulated one over a pseudo-terminal, or a list in a test.
The registry is saved after every card: an interrupted enrolment resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TextIO

from tqdm import tqdm

from hardware.reads import TagRead
from hardware.registry import Physical, RegistryError, TagRegistry
from referee.cards import DECK_SIZE


def enroll(
    registry: TagRegistry,
    arrivals: Iterable[TagRead],
    save: Callable[[], None],
    out: TextIO,
    todo: list[Physical] | None = None,
) -> int:
    """Enrol ``todo`` (default: every card still missing) from ``arrivals``; returns how
    many were enrolled. A rejected tag (seen before, or a face already enrolled twice) is
    reported and the same card is asked for again."""
    todo = registry.missing() if todo is None else todo
    done = 0
    arrivals = iter(arrivals)
    with tqdm(total=DECK_SIZE, initial=len(registry), file=out, ascii=True, unit="card",
              desc="enrolled", dynamic_ncols=False, ncols=72) as bar:
        for wanted in todo:
            bar.write(f"present {wanted}", file=out)
            for read in arrivals:
                try:
                    registry.add(read.tag, wanted.face, wanted.copy)
                except RegistryError as exc:
                    bar.write(f"rejected: {exc}", file=out)
                    continue
                save()
                done += 1
                bar.update(1)
                break
            else:
                bar.write(f"reader stopped; {len(registry)} of {DECK_SIZE} cards enrolled", file=out)
                return done
    return done
