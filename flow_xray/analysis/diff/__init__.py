"""A span-level comparison of two runs: `diff_traces` gives a `TraceDiff` of `CallDiff`.

`compare` matches the calls (aligned by `align`, compared field by field in
`calls`, values key by key in `values`); `trace_diff` holds the result with its
summary, change lines and JSON form; `page` makes it the ``str`` of its viewer
page too (`TraceDiffPage`, what ``TraceResult.diff`` returns). No OpenTelemetry here.
"""

from __future__ import annotations

from flow_xray.analysis.diff.calls import CallDiff
from flow_xray.analysis.diff.compare import diff_traces
from flow_xray.analysis.diff.page import TraceDiffPage
from flow_xray.analysis.diff.trace_diff import TraceDiff

__all__ = ["CallDiff", "TraceDiff", "TraceDiffPage", "diff_traces"]
