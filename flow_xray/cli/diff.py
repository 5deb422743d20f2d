"""``flow-xray diff A B``: compare two saved runs call by call.

Exit status is the contract CI relies on: 0 when the runs are equal, 1 when
they differ (``--exit-zero`` makes it 0 anyway), 2 on bad input (one
``error:`` line). Latency is reported but never makes two runs differ.
"""

from __future__ import annotations

import os

import click

from flow_xray.cli.common import CliError, open_in_browser, readable, writable, write_atomic
from flow_xray.cli.console import Console
from flow_xray.errors import FlowXrayError


@click.command()
@click.argument("before", metavar="A")
@click.argument("after", metavar="B")
@click.option("--html", "html_path", metavar="PATH", help="Also write the diff viewer to PATH.")
@click.option("--title", help="Title of the diff viewer page.")
@click.option("--open", "open_browser", is_flag=True, help="Open the diff viewer in a web browser.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when the runs differ.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary line.")
def diff(
    before: str,
    after: str,
    html_path: str | None,
    title: str | None,
    open_browser: bool,
    exit_zero: bool,
    quiet: bool,
) -> int:
    """Compare run A with run B, call by call (any files `flow-xray view` reads).

    Calls are matched by their names from the root and their order among
    siblings, never by span id. Prints one line per added (+), removed (-)
    or changed (~) call, then a summary line. Exits 0 when the runs are
    equal, 1 when they differ (0 with --exit-zero), 2 on bad input.
    """
    from flow_xray.analysis.diff import diff_traces  # noqa: PLC0415  # loaded when the command runs
    from flow_xray.formats.registry import load_trace  # noqa: PLC0415  # loaded when the command runs

    readable(before)
    readable(after)
    html_out = writable(html_path, "--html") if html_path else None
    try:
        first = load_trace(before)
        second = load_trace(after)
    except FlowXrayError as exc:
        raise CliError(str(exc)) from None
    labels = _labels(before, after)
    # The analysis alone: `TraceResult.diff` would render the page even without --html.
    result = diff_traces(first, second, labels[0], labels[1])
    console = Console.current()
    if not quiet:
        for line in result.report():
            console.line(line, err=False)  # names from the traces: terminal-safe
    console.line(result.summary(), err=False)
    if html_out is not None:
        write_atomic(
            html_out, result.to_html(title=title or f"flow-xray diff: {' vs '.join(labels)}")
        )
        if html_out != "-":
            console.line(f"flow-xray: wrote {html_out}")
        if open_browser and html_out != "-":
            open_in_browser(html_out, console)
    return 0 if result.equal or exit_zero else 1


def _labels(before: str, after: str) -> tuple[str, str]:
    """The files' names, or their paths when the names are the same."""
    names = os.path.basename(before), os.path.basename(after)
    return (before, after) if names[0] == names[1] else names
