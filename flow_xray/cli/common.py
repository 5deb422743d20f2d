"""Pieces every command shares: the error type, input and output checks, export set-up,
the script's crash, the summary line.

Files are read and written by `flow_xray.files` (what each kind of path gets);
lines reach the terminal through `flow_xray.cli.console`. OTLP details (header
items, the environment's endpoint, how a malformed item is shown) are
`flow_xray.sdk.otlp_target`'s; the SDK loads only when a command exports.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import sys
import traceback
import webbrowser
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from flow_xray.cli.console import Console, scrubbed
from flow_xray.errors import FlowXrayError
from flow_xray.files import read_problem, write_problem, write_text_atomic

if TYPE_CHECKING:
    from flow_xray.tree.model import Totals, TraceResult


class CliError(click.ClickException):
    """Bad input detected by the CLI: shown as one ``error:`` line, exit status 2."""

    exit_code = 2


F = TypeVar("F", bound=Callable[..., Any])


def otlp_options(command: F) -> F:
    """The OTLP export options shared by `run` and `demo`."""
    for option in reversed(
        (
            click.option(
                "--otlp-endpoint", metavar="URL", help="Also export spans to this OTLP endpoint."
            ),
            click.option(
                "--otlp-protocol",
                type=click.Choice(["grpc", "http/protobuf"]),
                help="OTLP transport.",
            ),
            click.option(
                "--otlp-header",
                "otlp_headers",
                metavar="K=V",
                multiple=True,
                help="OTLP header (repeatable).",
            ),
            click.option("--service-name", metavar="NAME", help="service.name of exported spans."),
            click.option(
                "--otlp-json",
                "otlp_json",
                metavar="FILE",
                help="Also write spans as OTLP JSON lines.",
            ),
        )
    ):
        command = option(command)
    return command


def start_export(
    endpoint: str | None,
    protocol: str | None,
    headers: dict[str, str] | None,
    service_name: str | None,
    json_path: str | None,
    default_service_name: str | None = None,
) -> bool:
    """Install the global provider with the requested exporters; False when nothing is asked.

    Without a destination (options, or ``OTEL_EXPORTER_OTLP_*ENDPOINT``) no
    provider is installed: a script that sets up its own OpenTelemetry keeps
    its provider, and flow-xray joins it. OTLP details given without a
    destination would silently do nothing, so a warning says so.
    """
    # The SDK loads only for the commands that export.
    from flow_xray.sdk.otlp_target import endpoint_from_env  # noqa: PLC0415
    from flow_xray.sdk.provider import configure, environment_service_name  # noqa: PLC0415

    if json_path:
        if os.path.basename(json_path) == "-":
            raise CliError("--otlp-json -: spans are written as they end; name a file or a FIFO")
        writable(json_path, "--otlp-json")
    if not (endpoint or json_path or endpoint_from_env()):
        given = [
            option
            for option, value in (
                ("--otlp-protocol", protocol),
                ("--otlp-header", headers),
                ("--service-name", service_name),
            )
            if value
        ]
        if given:
            Console.current().line(
                f"warning: {', '.join(given)} ignored: no --otlp-endpoint, --otlp-json "
                "or OTEL_EXPORTER_OTLP_ENDPOINT"
            )
        return False
    try:
        with _reader_checked(json_path):
            configure(
                endpoint=endpoint,
                protocol=protocol,
                headers=headers,
                # OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES name the service before a default.
                service_name=service_name
                or (None if environment_service_name() else default_service_name),
                json_path=json_path,
            )
    except FlowXrayError as exc:
        raise CliError(str(exc)) from None
    return True


@contextmanager
def _reader_checked(path: str | None) -> Iterator[None]:
    """For a FIFO: fail now if nothing reads it, instead of waiting forever to open it.

    The OTLP JSON exporter opens its file for writing, which for a FIFO waits
    for a reader. Opened here first without waiting, a FIFO nobody reads is
    one error line; one that has a reader stays open until the exporter has
    opened it too, so the reader never sees an end of file in between.
    """
    if path is None or not stat.S_ISFIFO(_mode(path)):
        yield
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        reason = "no process is reading this FIFO" if exc.errno == errno.ENXIO else exc.strerror
        raise CliError(f"--otlp-json {path}: {reason}") from None
    try:
        yield
    finally:
        os.close(fd)


def _mode(path: str) -> int:
    try:
        return os.stat(path).st_mode
    except OSError:
        return 0


def flush_exporters(console: Console | None = None) -> None:
    """Drain and close the exporters `configure` added, within a bounded time.

    The one warning that counts lost spans goes to ``console`` when nothing
    else would show it (no logging handler set up: Python's last resort
    would write to whatever ``sys.stderr`` the script left).
    """
    from flow_xray.sdk.provider import shutdown  # noqa: PLC0415  # the SDK: only when exporting

    with _warnings_to(console or Console.current()):
        shutdown()  # bounded by configure's export timeout


class _ConsoleHandler(logging.Handler):
    def __init__(self, console: Console) -> None:
        super().__init__(logging.WARNING)
        self._console = console

    def emit(self, record: logging.LogRecord) -> None:
        with suppress(Exception):
            self._console.line(record.getMessage())


@contextmanager
def _warnings_to(console: Console) -> Iterator[None]:
    logger = logging.getLogger("flow_xray")
    if logger.hasHandlers():
        yield  # the program's own logging set-up shows them
        return
    handler = _ConsoleHandler(console)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def show_crash(exc: BaseException, console: Console) -> None:
    """Print the script's uncaught exception as Python would, credentials scrubbed.

    A ``sys.excepthook`` the script installed is called instead, as Python
    would; one that fails is reported as Python reports it ("Error in
    sys.excepthook"). The text goes to the script's ``sys.stderr``, as
    Python's would; when that is gone (``None``, closed, failing), to the
    stderr flow-xray started with. Never raises.
    """
    hook = sys.excepthook
    if hook is not sys.__excepthook__:
        try:
            hook(type(exc), exc, exc.__traceback__)
            return
        except BaseException as failure:  # the script's hook failed: say so, as Python does
            tb = failure.__traceback__
            failure.__traceback__ = tb.tb_next if tb is not None else None  # not our frame
            text = (
                f"Error in sys.excepthook:\n{_formatted(failure)}\n"
                f"Original exception was:\n{_formatted(exc)}"
            )
    else:
        text = _formatted(exc)
    to_script_stderr(scrubbed(text, newlines=True), console)


def _formatted(exc: BaseException) -> str:
    try:
        return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except BaseException:  # an exception that cannot even be formatted
        return f"{type(exc).__name__}: <exception that cannot be shown>\n"


def to_script_stderr(text: str, console: Console) -> None:
    """Write ``text`` where Python writes a script's last words: its ``sys.stderr``.

    Falls back to the stderr flow-xray started with when the script's is
    ``None``, closed, or fails. Never raises.
    """
    stream = sys.stderr
    if stream is not None and stream is not sys.__stderr__:
        try:
            stream.write(text)
            stream.flush()
            return
        except BaseException:  # the script's own stream object failed: ours instead
            pass
    console.write(text)


def parse_headers(pairs: Sequence[str]) -> dict[str, str] | None:
    """``--otlp-header K=V`` values as a dict; a malformed one is named, never echoed."""
    # The SDK loads only for the commands that export.
    from flow_xray.sdk.otlp_target import shown_header, split_header  # noqa: PLC0415

    headers: dict[str, str] = {}
    for pair in pairs:
        parts = split_header(pair)
        if parts is None:
            # The value may be a credential (``TOKEN`` alone): show only a name, if any.
            raise click.BadParameter(
                f"{shown_header(pair)} is not K=V (write NAME=VALUE)",
                param_hint="'--otlp-header'",
            )
        headers[parts[0]] = parts[1]
    return headers or None


def readable(path: str) -> None:
    """Check, before any work, that ``path`` is a trace file `flow_xray.files.read_text` reads."""
    problem = read_problem(path)
    if problem == "no such file":
        raise CliError(f"no such file: {path}")
    if problem == "it is a directory, not a file":
        raise CliError(f"{path} is a directory, not a file")
    if problem is not None:
        raise CliError(f"cannot read {path}: {problem}")


def writable(path: str, option: str) -> str:
    """Check, before any work, that ``path`` can be written (see `flow_xray.files`); return it."""
    problem = write_problem(path)
    if problem == "it is a directory":
        raise CliError(f"{option} {path} is a directory")
    if problem is not None:
        raise CliError(f"{option} {path}: {problem}")
    return path


def write_atomic(path: str, text: str, console: Console | None = None) -> None:
    """Write an output as `flow_xray.files.write_text_atomic` does (``-``: the command's
    stdout); a failure is one ``error:`` line."""
    try:
        if path == "-":
            (console or Console.current()).output(text)
        else:
            write_text_atomic(path, text)
    except (OSError, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise CliError(f"cannot write {path}: {reason}") from None


def report(
    path: str,
    result: TraceResult,
    quiet: bool,
    open_browser: bool,
    console: Console | None = None,
    totals: Totals | None = None,
) -> None:
    """The summary line of a written trace (unless ``quiet``); open it in a browser if asked.

    ``totals``: ``result.totals`` as the page was written with (not counted again)."""
    if not quiet:
        summary = (result.totals if totals is None else totals).summary()
        (console or Console.current()).line(f"flow-xray: wrote {path} — {summary}")
    if open_browser and path != "-":
        open_in_browser(path, console)


def open_in_browser(path: str, console: Console | None = None) -> bool:
    """Open the page at ``path`` in a web browser and say so, or say in one line that no
    browser could be started (a server, a container, no ``$BROWSER``) and where the file is."""
    uri = Path(path).resolve().as_uri()
    try:
        opened = webbrowser.open(uri)
    except (webbrowser.Error, OSError):
        opened = False
    (console or Console.current()).line(
        f"flow-xray: opened {uri} in a web browser"
        if opened
        else f"flow-xray: could not open a web browser; open {uri} yourself"
    )
    return opened
