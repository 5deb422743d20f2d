"""The small hierarchy of errors flow-xray raises. The CLI turns them into `error:` lines."""

from __future__ import annotations


class FlowXrayError(Exception):
    """Base class of every error flow-xray raises on purpose."""


class TraceFileError(FlowXrayError):
    """A file is not a trace flow-xray can read (flow-xray JSON or OTLP JSON lines)."""


class ConfigurationError(FlowXrayError):
    """An option or environment variable has a value flow-xray cannot use."""


class GraphError(FlowXrayError):
    """An autodiff graph or its exports were used wrongly (bad operand, bad IR)."""


class ScriptError(FlowXrayError):
    """The script or module to run cannot be found, read or compiled."""


class SourceError(FlowXrayError):
    """Source given for static analysis is missing or is not Python (``--static PATH``)."""


class ScriptFailed(FlowXrayError):
    """The script raised while being run for its globals; ``exception`` is what it raised.

    The exception's traceback starts at the user's code (flow-xray's frames are dropped).
    """

    def __init__(self, exception: BaseException) -> None:
        super().__init__(f"{type(exception).__name__}: {exception}")
        self.exception = exception


class Terminated(SystemExit):
    """The process got SIGTERM while ``flow-xray run`` ran a script (exit status 143).

    Raised in the script's main thread so the trace is still written; calls it
    interrupts are marked incomplete, like calls interrupted by Ctrl-C.
    """
