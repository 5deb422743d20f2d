"""``flow-xray view``: render a saved trace file as the viewer."""

from __future__ import annotations

import os
from pathlib import Path

import click

from flow_xray.cli.common import CliError, readable, report, writable, write_atomic
from flow_xray.cli.progress import progress
from flow_xray.errors import FlowXrayError


@click.command()
@click.argument("file", metavar="FILE")
@click.option(
    "--html", "html_path", metavar="PATH", help="Viewer to write [default: <FILE stem>.html]."
)
@click.option("--title", help="Title of the viewer page.")
@click.option("--open", "open_browser", is_flag=True, help="Open the viewer in a web browser.")
def view(file: str, html_path: str | None, title: str | None, open_browser: bool) -> int:
    """Render a saved trace (flow-xray JSON or .fxr, OTLP JSON, Jaeger JSON, ...) as the viewer.

    FILE `-` reads standard input; --html `-` writes the page to standard output.
    """
    from flow_xray.analysis import accounting  # noqa: PLC0415  # loaded when the command runs
    from flow_xray.formats.registry import load_trace  # noqa: PLC0415
    from flow_xray.render.trace_page import result_to_html  # noqa: PLC0415
    from flow_xray.serialize.text import writable as shown  # noqa: PLC0415

    readable(file)
    default = "trace.html" if file == "-" else f"{Path(file).stem}.html"  # `-`: stdin
    html_out = writable(html_path or default, "--html")
    try:
        with progress(f"reading {file}"):
            result = load_trace(file)
        with progress(f"writing {html_out}", html_out != "-"):
            # (counted as the file was read: for the page and the summary line)
            totals = accounting.totals(result, fresh=True)
            page_title = shown(title or f"flow-xray: {os.path.basename(file)}")
            write_atomic(html_out, result_to_html(result, title=page_title, totals=totals))
    except FlowXrayError as exc:
        raise CliError(str(exc)) from None
    report(html_out, result, html_out == "-", open_browser, totals=totals)
    return 0
