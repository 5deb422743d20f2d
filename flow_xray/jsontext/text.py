"""The package's two small pieces every caller shares: `JsonText` and `gc_paused`."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


class JsonText(str):
    """A value already written as JSON text (what flow-xray stored on a span).

    Producers hand it over instead of the parsed value when the consumer would
    only write it as JSON again (the viewer page's packed details): the text
    goes in as it is. It is a `str`, so anything else reads it as text.
    """

    __slots__ = ()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC in a block that allocates many objects and no cycles.

    Each collection scans every tracked object, so a block growing a
    million-call structure is about 2x faster without them (codec slow paths,
    `TraceResult.to_html`)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
