"""What the process-start hooks hand to work leaving for another process (processes captures).

The hooks themselves are patches of `flow_xray.runtime.process_hooks`
(``subprocess.Popen``, ``multiprocessing``, process pools); a
`ProcessHandover` is what they ask, made by `flow_xray.sdk.processes` while
collection is on in this process. Each hand-over adds the carrier of the
current context (`flow_xray.tracing.propagation`) to the work and changes
nothing else:

- a child started with ``subprocess`` gets ``TRACEPARENT`` / ``TRACESTATE``
  of the current span and the capture tags in its environment; an explicit
  ``env=`` also gets the collection channel and the bootstrap ``PYTHONPATH``
  entry, so it is traced like an inherited one;
- a ``multiprocessing`` process takes the carrier along (a `ProcessCarrier`,
  pickled for spawn and forkserver) and runs its target inside it;
- a callable sent to a process pool is wrapped with `propagate`, so each task
  runs under the call that submitted it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Final

from flow_xray.tracing.propagation import (
    CAPTURES,
    ENVIRONMENT,
    TRACEPARENT,
    TRACESTATE,
    ProcessCarrier,
    Propagated,
    attached,
    current_carrier,
    propagate,
)

CAPTURES_ENV: Final = ENVIRONMENT[CAPTURES]
TRACEPARENT_ENV: Final = ENVIRONMENT[TRACEPARENT]
TRACESTATE_ENV: Final = ENVIRONMENT[TRACESTATE]


class ProcessHandover:
    """The hand-over of processes captures (a `flow_xray.runtime.process_hooks.Handover`).

    ``active()`` says whether the hooks act; ``inherited_env()`` gives the
    variables an explicit ``env=`` must also get (the channel and ``PYTHONPATH``).
    """

    def __init__(
        self, active: Callable[[], bool], inherited_env: Callable[[], Mapping[str, str]]
    ) -> None:
        self._active = active
        self._inherited_env = inherited_env

    def active(self) -> bool:
        """Whether collection is on in this process."""
        return self._active()

    def child_env(self, env: Mapping[Any, Any] | None) -> Mapping[Any, Any] | None:
        """The environment for a child started now: ``env`` (None: this process's) plus the carrier.

        Returns ``env`` itself when there is nothing to add, or when its keys are bytes.
        """
        carrier = current_carrier()
        if env is None and not carrier:
            return None
        if env is not None and any(not isinstance(key, str) for key in env):
            return env
        result: dict[str, str] = dict(os.environ if env is None else env)
        if env is not None:
            for name, value in self._inherited_env().items():
                result[name] = (
                    prepend_path(value, result.get(name)) if name == "PYTHONPATH" else value
                )
        if TRACEPARENT in carrier:
            result[TRACEPARENT_ENV] = carrier[TRACEPARENT]
            if TRACESTATE in carrier:
                result[TRACESTATE_ENV] = carrier[TRACESTATE]
            else:
                result.pop(TRACESTATE_ENV, None)
        if CAPTURES in carrier:
            result[CAPTURES_ENV] = carrier[CAPTURES]
        return result

    def process_carrier(self) -> ProcessCarrier | None:
        """The carrier a `multiprocessing` process takes along; None when there is none."""
        carrier = current_carrier()
        return ProcessCarrier(carrier) if carrier else None

    def attached(self, carrier: object) -> AbstractContextManager[None]:
        """Run the block as a continuation of ``carrier``'s call (a `ProcessCarrier`)."""
        return attached(carrier)  # type: ignore[arg-type]  # what `process_carrier` gave

    def propagated(self, fn: Any) -> Any:
        """``fn`` wrapped with `propagate` (unless it is already, or is not callable)."""
        if isinstance(fn, Propagated) or not callable(fn):
            return fn
        return propagate(fn)


def prepend_path(folder: str, path: str | None) -> str:
    """``folder`` first on a ``PYTHONPATH``-style ``path`` (unchanged when already on it)."""
    if not path:
        return folder
    if folder in path.split(os.pathsep):
        return path
    return folder + os.pathsep + path
