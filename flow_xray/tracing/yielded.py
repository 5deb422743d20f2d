"""What a traced generator yielded, kept as its span's output while it runs."""

from __future__ import annotations

from typing import Any

from flow_xray.llm.streams import StreamUsage, stream_usage_for
from flow_xray.llm.usage import Usage
from flow_xray.serialize.limits import Limits, get_limits
from flow_xray.serialize.reprs import Reprs
from flow_xray.serialize.walk import Walker
from flow_xray.tracing.recording import contained, may_be_response


class Yielded:
    """What a generator yielded, for ``output.value``: the first items, already converted.

    Each item is converted (`Walker`, the bounded walk) when it is yielded and
    only that converted form is kept, up to the item cap and one value's
    worth of output: the items themselves are released as soon as the
    consumer drops them (50 yielded 10 MB chunks hold 10 MB, not 500).
    """

    __slots__ = ("count", "items", "left", "limit", "limits", "reprs", "stream")

    def __init__(
        self, keep_items: bool, watch_usage: bool, limits: Limits | None, reprs: Reprs | None
    ) -> None:
        self.items: list[Any] = []
        # The call's repr cache, read but never added to: an entry would keep its item alive.
        self.reprs = reprs
        self.count = 0
        self.limits = limits or get_limits()
        # Nothing is kept when no output will be recorded.
        self.limit = self.limits.max_items if keep_items else 0
        # Output budget still open to items (the rest for the count and the returned value).
        self.left = self.limits.max_value_bytes * 3 // 4
        # LLM stream events spread usage over several items; whether the items
        # are such events is decided once, on the first one.
        self.stream: StreamUsage | bool | None = watch_usage

    def add(self, item: Any) -> None:
        """Count ``item``, keep its converted form within the caps, add up stream usage."""
        self.count += 1
        try:
            if self.count <= self.limit and self.left > 0:
                walker = Walker(self.limits, self.left, dict(self.reprs or ()))
                self.items.append(walker.walk(item, 1))
                self.left = walker.budget
            stream = self.stream
            if stream is True:  # probed only when it may be an event (see `may_be_response`)
                self.stream = stream_usage_for(item) if may_be_response(item) else None
            elif stream:
                stream.add(item)
        except BaseException:
            contained("a yielded item")

    def usage(self) -> Usage | None:
        stream = self.stream
        return stream.usage() if isinstance(stream, StreamUsage) else None

    def output(self, returned: Any = None) -> dict[str, Any]:
        out: dict[str, Any] = {"count": self.count, "yielded": self.items}
        if returned is not None:
            out["returned"] = returned
        return out
