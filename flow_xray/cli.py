"""The ``flow-xray`` command line: a thin `click` layer over the library.

Commands: ``run`` (trace a script or module), ``view`` (render a saved trace),
``demo`` (trace the built-in example pipeline) and ``dot demo`` / ``dot export``
(autodiff graphs). Library errors (`FlowXrayError`) and click's usage errors
become exactly one ``error: ...`` line on stderr and exit status 2; this is the
only module that translates them. Outputs are checked for writability before
any work starts and written atomically, so a failure leaves no half file.
Nothing imports this module except ``flow_xray.__main__`` and the console script.
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

from flow_xray import __version__
from flow_xray.errors import FlowXrayError, ScriptFailed

if TYPE_CHECKING:
    from flow_xray.autodiff import Value
    from flow_xray.model import TraceResult


# click >= 8.2 raises this for a bare group invocation; older versions print the help themselves.
_NO_ARGS_IS_HELP: tuple[type[click.ClickException], ...] = tuple(
    getattr(click.exceptions, name)
    for name in ("NoArgsIsHelpError",)
    if hasattr(click.exceptions, name)
)


class CliError(click.ClickException):
    """Bad input detected by the CLI: shown as one ``error:`` line, exit status 2."""

    exit_code = 2


class _FlowXrayGroup(click.Group):
    """A click group whose errors come out as one ``error: ...`` line instead of a usage block."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> int:
        try:
            rv = super().main(
                args,
                prog_name,
                complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
            code = rv if isinstance(rv, int) else 0
        except _NO_ARGS_IS_HELP as exc:
            exc.show()  # bare `flow-xray`: the help text is the useful answer
            code = exc.exit_code
        except click.ClickException as exc:
            click.echo(f"error: {_one_line(_message(exc))}", err=True)
            code = 2
        except click.Abort:
            click.echo("error: interrupted", err=True)
            code = 130
        if standalone_mode:
            sys.exit(code)
        return code


@click.group(cls=_FlowXrayGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__, "--version", prog_name="flow-xray", message="%(prog)s %(version)s"
)
def cli() -> None:
    """flow-xray: an execution-graph debugger for Python.

    Trace a script with `flow-xray run script.py`, then open the HTML file it writes.
    """


F = TypeVar("F", bound=Callable[..., Any])


def _otlp_options(command: F) -> F:
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


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
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
@_otlp_options
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
    from flow_xray import runner

    if module is None and not argv:
        raise click.UsageError("missing SCRIPT (or -m MODULE)")
    if module is None and argv[0].startswith("-") and argv[0] != "-":
        raise click.UsageError(f"no such option: {argv[0]}")
    headers = _parse_headers(otlp_headers)
    try:
        if module is not None:
            target = runner.resolve_module(module, argv)
        else:
            target = runner.resolve_script(argv[0], argv[1:])
    except FlowXrayError as exc:
        raise CliError(str(exc)) from None
    html_out = _writable(html_path or f"{target.stem}_trace.html", "--html")
    json_out = _writable(json_path, "--json") if json_path else None
    exporting = _start_export(otlp_endpoint, otlp_protocol, headers, service_name, otlp_json)
    outcome = runner.run_target(target)
    if outcome.exception is not None:
        crash = outcome.exception
        sys.excepthook(type(crash), crash, crash.__traceback__)
    elif outcome.exit_message is not None:
        click.echo(outcome.exit_message, err=True)

    result = outcome.result
    name = target.name if target.kind == "module" else os.path.basename(target.path)
    _write_atomic(html_out, result.to_html(title=title or f"flow-xray: {name}"))
    if json_out is not None:
        _write_atomic(json_out, result.to_json())
    if exporting:
        _flush_exporters()
    _report(html_out, result, quiet, open_browser)
    return outcome.exit_code


@cli.command()
@click.argument("file", metavar="FILE")
@click.option(
    "--html", "html_path", metavar="PATH", help="Viewer to write [default: <FILE stem>.html]."
)
@click.option("--title", help="Title of the viewer page.")
@click.option("--open", "open_browser", is_flag=True, help="Open the viewer in a web browser.")
def view(file: str, html_path: str | None, title: str | None, open_browser: bool) -> int:
    """Render a saved trace (flow-xray JSON or OTLP JSON lines) as the HTML viewer."""
    from flow_xray.tracefile import load_trace

    _readable(file)
    html_out = _writable(html_path or f"{Path(file).stem}.html", "--html")
    try:
        result = load_trace(file)
        html = result.to_html(title=title or f"flow-xray: {os.path.basename(file)}")
    except FlowXrayError as exc:
        raise CliError(str(exc)) from None
    _write_atomic(html_out, html)
    _report(html_out, result, False, open_browser)
    return 0


@cli.command()
@click.option(
    "--html", "html_path", metavar="PATH", help="Viewer to write [default: flow_xray_demo.html]."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the viewer in a web browser.")
@_otlp_options
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
    from flow_xray.examples import demo_agent

    headers = _parse_headers(otlp_headers)
    html_out = _writable(html_path or demo_agent.DEFAULT_OUTPUT, "--html")
    exporting = _start_export(
        otlp_endpoint, otlp_protocol, headers, service_name, otlp_json, "flow-xray-demo"
    )
    result = demo_agent.run_demo()
    _write_atomic(html_out, result.to_html(title="flow-xray demo: research agent"))
    if exporting:
        _flush_exporters()
    _report(html_out, result, False, open_browser)
    return 0


@cli.group()
def dot() -> None:
    """Autodiff (`Value`) graphs as Graphviz DOT and offline viewers."""


@dot.command("demo")
@click.argument("which", required=False, type=click.Choice(["forward", "backward"]))
@click.option(
    "--output-dir", default=".", metavar="DIR", help="Folder for the .dot files [default: .]."
)
@click.option("--html", "html_path", metavar="FILE", help="Also write an offline viewer.")
def dot_demo(which: str | None, output_dir: str, html_path: str | None) -> int:
    """Write the demo graph's DOT: demo_forward.dot, demo_backward.dot (default: both).

    The demo graph is ((a*b)+c).relu().tanh(). `backward` runs the backward
    pass first so the boxes show gradients; with --html the backward viewer
    steps through the pass.
    """
    from flow_xray.autodiff import (
        backward_from,
        standalone_viewer_html,
        value_graph_to_dot,
        value_viewer_html,
    )
    from flow_xray.autodiff.demo import demo_graph

    if not os.path.isdir(output_dir):
        raise CliError(f"--output-dir {output_dir}: no such directory")
    kinds = [which] if which else ["forward", "backward"]
    files = {k: _writable(os.path.join(output_dir, f"demo_{k}.dot"), "--output-dir") for k in kinds}
    html_out = _writable(html_path, "--html") if html_path else None

    root = demo_graph()
    texts = {files["forward"]: value_graph_to_dot(root)} if "forward" in kinds else {}
    if "backward" in kinds:
        backward_from(root)
        texts[files["backward"]] = value_graph_to_dot(root, show_grad=True)
    if html_out is not None:
        # The backward viewer runs its own clean pass and steps through it.
        texts[html_out] = (
            value_viewer_html(root, title="flow-xray demo graph (backward)")
            if "backward" in kinds
            else standalone_viewer_html(texts[files["forward"]], title="flow-xray demo graph")
        )
    for path, text in texts.items():
        _write_atomic(path, text)
        click.echo(f"flow-xray: wrote {path}", err=True)
    return 0


@dot.command("export")
@click.argument("script", metavar="SCRIPT")
@click.option(
    "-o", "--output", metavar="FILE.dot", help="DOT file to write [default: <SCRIPT stem>.dot]."
)
@click.option(
    "--backward", is_flag=True, help="Run root.backward() first so the graph shows gradients."
)
@click.option("--html", "html_path", metavar="FILE", help="Also write an offline viewer.")
def dot_export(script: str, output: str | None, backward: bool, html_path: str | None) -> int:
    """Run SCRIPT (not as __main__) and export its `root` Value graph as DOT."""
    from flow_xray import runner
    from flow_xray.autodiff import (
        backward_from,
        standalone_viewer_html,
        value_graph_to_dot,
        value_viewer_html,
    )

    try:
        target = runner.resolve_script(script)
    except FlowXrayError as exc:
        raise CliError(str(exc)) from None
    dot_out = _writable(output or f"{target.stem}.dot", "--output")
    html_out = _writable(html_path, "--html") if html_path else None

    root = _load_root(target)
    if backward:
        backward_from(root)
    text = value_graph_to_dot(root, show_grad=backward)
    texts = {dot_out: text}
    if html_out is not None:
        name = os.path.basename(script)
        texts[html_out] = (
            value_viewer_html(root, title=f"flow-xray: {name} (backward)")
            if backward
            else standalone_viewer_html(text, title=f"flow-xray: {name}")
        )
    for path, body in texts.items():
        _write_atomic(path, body)
        click.echo(f"flow-xray: wrote {path}", err=True)
    return 0


def main() -> None:
    """Console-script entry point (``flow-xray`` and ``python -m flow_xray``)."""
    cli.main(prog_name="flow-xray")


def _load_root(target: Any) -> Value:
    """Run an export script and return its ``root``; a crash is reported with its traceback."""
    from flow_xray import runner
    from flow_xray.autodiff import Value

    try:
        namespace = runner.run_for_namespace(target)
    except ScriptFailed as failed:
        exc = failed.exception
        if isinstance(exc, SystemExit):
            raise CliError(
                f"{target.name} called sys.exit({exc.code!r}) before defining root"
            ) from None
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        raise CliError(f"{target.name} raised {type(exc).__name__}: {exc}") from None
    if "root" not in namespace:
        raise CliError(f"{target.name} does not define root (the Value to export)")
    root = namespace["root"]
    if not isinstance(root, Value):
        raise CliError(f"root in {target.name} is a {type(root).__name__}, not a flow_xray.Value")
    return root


def _start_export(
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
    if json_path:
        _writable(json_path, "--otlp-json")
    env = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
    if not (endpoint or json_path or any(os.environ.get(name) for name in env)):
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
    from flow_xray.provider import configure

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


def _flush_exporters() -> None:
    """Drain and close the exporters `configure` added, within a bounded time."""
    from flow_xray.provider import shutdown

    shutdown()  # bounded by configure's export timeout


def _parse_headers(pairs: Sequence[str]) -> dict[str, str] | None:
    headers: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not K=V", param_hint="'--otlp-header'")
        headers[key.strip()] = value.strip()
    return headers or None


def _readable(path: str) -> None:
    if not os.path.exists(path):
        raise CliError(f"no such file: {path}")
    if os.path.isdir(path):
        raise CliError(f"{path} is a directory, not a file")


def _writable(path: str, option: str) -> str:
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


def _write_atomic(path: str, text: str) -> None:
    """Write atomically; a failure is one ``error:`` line."""
    from flow_xray.files import write_text_atomic

    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None


def _report(path: str, result: TraceResult, quiet: bool, open_browser: bool) -> None:
    if not quiet:
        click.echo(f"flow-xray: wrote {path} — {result.totals.summary()}", err=True)
    if open_browser:
        webbrowser.open(Path(path).resolve().as_uri())


def _message(exc: click.ClickException) -> str:
    message = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        message += f" (see '{ctx.command_path} --help')"
    return message


def _one_line(text: str) -> str:
    return " ".join(text.split())
