"""``flow-xray dot demo`` / ``dot export``: autodiff graphs as DOT and offline viewers."""

from __future__ import annotations

import os
import sys
import traceback
from typing import TYPE_CHECKING, Any

import click

from flow_xray.cli.common import CliError, writable, write_atomic
from flow_xray.errors import FlowXrayError, ScriptFailed

if TYPE_CHECKING:
    from flow_xray.autodiff import Value


@click.group()
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
    files = {k: writable(os.path.join(output_dir, f"demo_{k}.dot"), "--output-dir") for k in kinds}
    html_out = writable(html_path, "--html") if html_path else None

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
        write_atomic(path, text)
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
    from flow_xray.autodiff import (
        backward_from,
        standalone_viewer_html,
        value_graph_to_dot,
        value_viewer_html,
    )
    from flow_xray.cli import runner

    try:
        target = runner.resolve_script(script)
    except FlowXrayError as exc:
        raise CliError(str(exc)) from None
    dot_out = writable(output or f"{target.stem}.dot", "--output")
    html_out = writable(html_path, "--html") if html_path else None

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
        write_atomic(path, body)
        click.echo(f"flow-xray: wrote {path}", err=True)
    return 0


def _load_root(target: Any) -> Value:
    """Run an export script and return its ``root``; a crash is reported with its traceback."""
    from flow_xray.autodiff import Value
    from flow_xray.cli import runner

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
