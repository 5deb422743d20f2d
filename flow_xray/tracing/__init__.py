"""The tracing side: ``@trace`` and what it records, on the OpenTelemetry API only.

Nothing here imports the OpenTelemetry SDK, so decorated code works under
whatever provider the user configured, and nothing here keeps process state:
which tracer and which captures are `flow_xray.runtime`'s. `api.Trace.capture`
is the one place this side reaches the SDK side (`flow_xray.sdk`), because
collecting spans needs an SDK processor.
"""

from __future__ import annotations

from flow_xray.tracing.api import Trace, propagate, trace
from flow_xray.tracing.options import TraceOptions

__all__ = ["Trace", "TraceOptions", "propagate", "trace"]
