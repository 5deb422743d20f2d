"""``flow-xray run``: trace a script or module and write its viewer."""

from __future__ import annotations

import os
import sys

import click

from flow_xray.cli.common import (
    CliError,
    flush_exporters,
    otlp_options,
    parse_headers,
    report,
    start_export,
    writable,
    write_atomic,
)
from flow_xray.errors import FlowXrayError


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "-m", "module", metavar="MODULE", help="Run a module (like `python -m`) instead of a script."
)
@click.option(
    "--html", "html_path", metavar="PATH", help="Viewer to write [default: <script>_trace.html]."
)
@click.option("--json", "json_path", metavar="PATH", help="Also save the trace as flow-xray JSON.")
@click.option("--title", help="Title of the viewer page.")
@click.option("--open", "open_browser", is_flag=True, help="Open the viewer in a web browser.")
@click.option("--quiet", "-q", is_flag=True, help="Do not print the summary line.")
@otlp_options
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, metavar="SCRIPT [ARGS]...")
def run(
    module: str | None,
    html_path: str | None,
    json_path: str | None,
    title: str | None,
    open_browser: bool,
    quiet: bool,
    otlp_endpoint: str | None,
    otlp_protocol: str | None,
    otlp_headers: tuple[str, ...],
    service_name: str | None,
    otlp_json: str | None,
    argv: tuple[str, ...],
) -> int:
    """Run SCRIPT (or -m MODULE) as __main__ and write the trace of everything it did.

    Everything after SCRIPT or MODULE is passed to it untouched. The trace is
    written however the script ends; the exit status is the script's own
    (1 after an uncaught exception, 130 after Ctrl-C).
    """
    from flow_xray.cli import runner

    if module is None and not argv:
        raise click.UsageError("missing SCRIPT (or -m MODULE)")
    if module is None and argv[0].startswith("-") and argv[0] != "-":
        raise click.UsageError(f"no such option: {argv[0]}")
    headers = parse_headers(otlp_headers)
    try:
        if module is not None:
            target = runner.resolve_module(module, argv)
        else:
            target = runner.resolve_script(argv[0], argv[1:])
    except FlowXrayError as exc:
        raise CliError(str(exc)) from None
    html_out = writable(html_path or f"{target.stem}_trace.html", "--html")
    json_out = writable(json_path, "--json") if json_path else None
    exporting = start_export(otlp_endpoint, otlp_protocol, headers, service_name, otlp_json)
    outcome = runner.run_target(target)
    if outcome.exception is not None:
        crash = outcome.exception
        sys.excepthook(type(crash), crash, crash.__traceback__)
    elif outcome.exit_message is not None:
        click.echo(outcome.exit_message, err=True)

    result = outcome.result
    name = target.name if target.kind == "module" else os.path.basename(target.path)
    write_atomic(html_out, result.to_html(title=title or f"flow-xray: {name}"))
    if json_out is not None:
        write_atomic(json_out, result.to_json())
    if exporting:
        flush_exporters()
    report(html_out, result, quiet, open_browser)
    return outcome.exit_code
