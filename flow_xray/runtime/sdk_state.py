"""The SDK side's process-wide objects, held here so that one folder owns all process state.

`flow_xray.sdk` fills these holders and reads them back; nothing else uses
them. They are plain holders (this module cannot name the SDK's types: the
tracing side imports `flow_xray.runtime` and must never load the SDK), so each
field says which SDK module owns its meaning:

- `COLLECTING` (`flow_xray.sdk.processor`): the collecting processor every
  capture reads and the SDK providers it was added to (the private provider
  is `flow_xray.runtime.tracer`'s: the tracing side reads it);
- `EXPORT` (`flow_xray.sdk.provider`, `flow_xray.sdk.otlp`): the export
  pipelines `configure` set up, the providers it created, the exit-flush
  budget, every live pipeline (their counts restart in a forked child), and
  the exporter or processor running SDK code on each thread (whose log
  records it takes over);
- `PROCESSES` (`flow_xray.sdk.processes`): the channel of this process's
  processes captures, or its link to the parent when it is a child.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Final


class Collecting:
    """The collecting processor and the providers it serves (`flow_xray.sdk.processor`)."""

    def __init__(self) -> None:
        self.processor: Any = None  # the FlowXrayProcessor, made on first use
        self.attached: weakref.WeakSet[Any] = weakref.WeakSet()  # providers it was added to
        self.lock = threading.RLock()


class Export:
    """What `configure` set up (`flow_xray.sdk.provider`) and the pipelines' state (`.otlp`)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        # provider -> (protocol or "otlp-json-file", endpoint or path) -> ExportPipeline
        self.pipelines: dict[Any, dict[tuple[str, str], Any]] = {}
        self.owned: weakref.WeakSet[Any] = weakref.WeakSet()  # providers configure created
        self.timeout_s: float | None = None  # the largest export_timeout_s since the last shutdown
        self.alive: weakref.WeakSet[Any] = weakref.WeakSet()  # every ExportPipeline not collected


class LogScope(threading.local):
    """The flow-xray exporter or processor, if any, running SDK code on this thread."""

    sink: Any = None


class Processes:
    """This process's part in collecting child processes (`flow_xray.sdk.processes`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.parent: Any = None  # the channel shared by this process's processes captures
        self.child: Any = None  # the link to the parent, in a collecting child
        # The capture tags of the thread that forks, read just before the fork.
        self.tags_at_fork: tuple[str, ...] = ()


COLLECTING: Final = Collecting()
EXPORT: Final = Export()
LOG_SCOPE: Final = LogScope()
PROCESSES: Final = Processes()
