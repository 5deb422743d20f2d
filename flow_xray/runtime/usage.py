"""Usage reports below open spans: which LLM usage the spans ended inside a span carried.

Fed by the SDK side's processor as spans end (`span_ended`), read by ``@trace``
when it records a figure (`reported_below`): a figure a child span already
reported for the same request is then written as a duplicate (see
`flow_xray.llm.usage.duplicate_usage_attributes`), so backends adding up token
counts count the request once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final

# span id -> usage figures of spans that ended inside it. Bounded: a parent that
# never ends here (remote, or dropped) must not keep its entry forever.
_reports: dict[int, list[Any]] = {}
_reports_lock = threading.RLock()  # (reentrant: a signal handler's span may end inside)
_MAX_REPORTED_SPANS: Final = 4096


#: Whether usage reports wait for their parents (a C-level call: it runs once per span).
usage_pending: Callable[[], int] = _reports.__len__


def span_ended(span_id: int, parent_id: int | None, report: Any | None) -> None:
    """A span ended: hand its own usage report (if any) and those below it to its parent."""
    if not _reports and report is None:
        return
    with _reports_lock:
        below = _reports.pop(span_id, None)
        if parent_id is None or (below is None and report is None):
            return
        reports = _reports.get(parent_id)
        if reports is None:
            if len(_reports) >= _MAX_REPORTED_SPANS:
                del _reports[next(iter(_reports))]
            reports = _reports[parent_id] = []
        if below:
            reports.extend(below)
        if report is not None:
            reports.append(report)


def reported_below(span_id: int) -> tuple[Any, ...]:
    """The usage reports of spans that ended inside span ``span_id`` so far."""
    if not _reports:
        return ()
    with _reports_lock:
        return tuple(_reports.get(span_id, ()))
