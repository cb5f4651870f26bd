"""paused_gc: reading and compiling a large scenario file builds millions of small objects
at once, none of them in a reference cycle; Python's cyclic collector would walk them again
and again as they are made (a fifth to a third of the time of a 5 MB file), so it waits
until they are built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """paused_gc turns the cyclic garbage collector off for the block (when it was on), then
    freezes the objects built in it (gc.freeze) so that they are not walked again."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            # What was built is long-lived and acyclic: keep the collector from walking it
            # again (a full collection over millions of objects right after enabling).
            gc.freeze()
            gc.enable()
