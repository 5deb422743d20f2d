"""Pieces every command shares: the error type, output checks, export set-up, the summary line.

OTLP details (header items, the environment's endpoint, how a malformed item
is shown) are `flow_xray.sdk.otlp_target`'s; the SDK loads only when a command exports.
"""

from __future__ import annotations

import os
import sys
import traceback
import webbrowser
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from flow_xray.errors import FlowXrayError
from flow_xray.files import write_text_atomic

if TYPE_CHECKING:
    from flow_xray.tree.model import TraceResult


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
    from flow_xray.sdk.provider import configure  # noqa: PLC0415

    if json_path:
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
            click.echo(
                f"warning: {', '.join(given)} ignored: no --otlp-endpoint, --otlp-json "
                "or OTEL_EXPORTER_OTLP_ENDPOINT",
                err=True,
            )
        return False
    try:
        configure(
            endpoint=endpoint,
            protocol=protocol,
            headers=headers,
            service_name=service_name or default_service_name,
            json_path=json_path,
        )
    except FlowXrayError as exc:
        raise CliError(str(exc)) from None
    return True


def flush_exporters() -> None:
    """Drain and close the exporters `configure` added, within a bounded time."""
    from flow_xray.sdk.provider import shutdown  # noqa: PLC0415  # the SDK: only when exporting

    shutdown()  # bounded by configure's export timeout


def scrubbed(text: str) -> str:
    """``text`` as the terminal may show it: credentials replaced, surrogates escaped."""
    # Loaded on first use: `flow-xray --help` and a clean run never need it.
    from flow_xray.serialize import get_limits, scrub_text, writable  # noqa: PLC0415

    return scrub_text(writable(text), get_limits())


def show_crash(exc: BaseException) -> None:
    """Print the script's uncaught exception as Python would, credentials scrubbed.

    A ``sys.excepthook`` the script installed is called instead, as Python would.
    """
    if sys.excepthook is not sys.__excepthook__:
        sys.excepthook(type(exc), exc, exc.__traceback__)
        return
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        sys.stderr.write(scrubbed(text))
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed by the script: nowhere to say it
        pass


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
    if not os.path.exists(path):
        raise CliError(f"no such file: {path}")
    if os.path.isdir(path):
        raise CliError(f"{path} is a directory, not a file")


def writable(path: str, option: str) -> str:
    """Check, before any work, that ``path`` can be written; return it."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CliError(f"{option} {path} is a directory")
    if not os.path.isdir(folder):
        raise CliError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CliError(f"{option} {path}: folder {folder} is not writable")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise CliError(f"{option} {path}: file is not writable")
    return path


def write_atomic(path: str, text: str) -> None:
    """Write atomically; a failure is one ``error:`` line."""
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None


def report(path: str, result: TraceResult, quiet: bool, open_browser: bool) -> None:
    if not quiet:
        click.echo(f"flow-xray: wrote {path} — {result.totals.summary()}", err=True)
    if open_browser:
        webbrowser.open(Path(path).resolve().as_uri())
