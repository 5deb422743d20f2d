"""``flow-xray demo``: trace the built-in sample agent."""

from __future__ import annotations

import click

from flow_xray.cli.common import (
    flush_exporters,
    otlp_options,
    parse_headers,
    report,
    start_export,
    writable,
    write_atomic,
)


@click.command()
@click.option(
    "--html", "html_path", metavar="PATH", help="Viewer to write [default: flow_xray_demo.html]."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the viewer in a web browser.")
@otlp_options
def demo(
    html_path: str | None,
    open_browser: bool,
    otlp_endpoint: str | None,
    otlp_protocol: str | None,
    otlp_headers: tuple[str, ...],
    service_name: str | None,
    otlp_json: str | None,
) -> int:
    """Trace the built-in sample agent (fake LLM, tools, async fan-out, a retry) offline.

    With --otlp-endpoint the same spans also go to an OTLP backend: a quick
    way to check a Jaeger or Tempo set-up end to end.
    """
    from flow_xray.examples import demo_agent  # noqa: PLC0415  # loaded when the command runs

    headers = parse_headers(otlp_headers)
    html_out = writable(html_path or demo_agent.DEFAULT_OUTPUT, "--html")
    exporting = start_export(
        otlp_endpoint, otlp_protocol, headers, service_name, otlp_json, "flow-xray-demo"
    )
    result = demo_agent.run_demo()
    write_atomic(html_out, result.to_html(title="flow-xray demo: research agent"))
    if exporting:
        flush_exporters()
    report(html_out, result, False, open_browser)
    return 0
