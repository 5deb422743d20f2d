"""``flow-xray dot demo`` / ``dot export``: autodiff graphs as DOT and offline viewers.

The 0.2.0 lines work as they did: with no output option the DOT goes to
stdout; ``--output-dir DIR`` is created and gets ``forward.dot`` and
``backward.dot``; ``dot export`` runs its script as ``__main__``.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from flow_xray.cli.common import CliError, writable, write_atomic
from flow_xray.cli.console import Console
from flow_xray.errors import FlowXrayError, ScriptFailed

if TYPE_CHECKING:
    from flow_xray.autodiff import Value

WHICH = ("forward", "backward")
#: ``--graph`` names, the default first (`flow_xray.autodiff.DEMOS` in this order).
DEMO_NAMES = ("expression", "neuron")


@click.group()
def dot() -> None:
    """Autodiff (`Value`) graphs as Graphviz DOT and offline viewers.

    With no output option the DOT goes to stdout, as in 0.2.0:
    `flow-xray dot demo | dot -Tsvg > demo.svg`.
    """


@dot.command("demo")
@click.argument("which", required=False, default="forward", type=click.Choice(WHICH))
@click.option(
    "--graph",
    "graph_name",
    type=click.Choice(list(DEMO_NAMES)),
    default=DEMO_NAMES[0],
    show_default=True,
    help="Which demo: 0.2.0's ((a*b)+c).relu().tanh(), or a tanh neuron.",
)
@click.option(
    "--output-dir",
    metavar="DIR",
    help="Create DIR and write forward.dot and backward.dot there (instead of stdout).",
)
@click.option(
    "--html",
    "html_path",
    metavar="FILE",
    help="Write an offline viewer of WHICH (backward: steps through the pass).",
)
def dot_demo(which: str, graph_name: str, output_dir: str | None, html_path: str | None) -> int:
    """Print the demo graph's DOT: WHICH is forward (data, the default) or backward (gradients).

    The default graph is 0.2.0's L = ((a*b)+c).relu().tanh() with a=2, b=-3,
    c=10. With --output-dir or --html the files are written instead of
    printing; `backward` runs the backward pass first so the boxes show
    gradients.
    """
    from flow_xray.autodiff import (  # noqa: PLC0415  # loaded when the command runs
        DEMOS,
        standalone_viewer_html,
        value_graph_to_dot,
        value_viewer_html as stepping_viewer,
    )

    texts: dict[str, str] = {}
    if output_dir is not None:
        _make_dir(output_dir)
        paths = {k: writable(os.path.join(output_dir, f"{k}.dot"), "--output-dir") for k in WHICH}
    html_out = writable(html_path, "--html") if html_path else None

    root = DEMOS[graph_name]()
    forward = value_graph_to_dot(root)
    root.backward()
    backward = value_graph_to_dot(root, show_grad=True)
    chosen = backward if which == "backward" else forward
    if output_dir is not None:
        texts[paths["forward"]] = forward
        texts[paths["backward"]] = backward
    if html_out is not None:
        title = f"flow-xray demo ({which})"
        # The backward viewer runs its own clean pass and steps through it.
        texts[html_out] = (
            stepping_viewer(root, title=title)
            if which == "backward"
            else standalone_viewer_html(forward, title=title)
        )
    _emit(texts, chosen)
    return 0


@dot.command("export")
@click.argument("script", metavar="SCRIPT")
@click.option("-o", "--output", metavar="FILE.dot", help="Write the DOT here instead of stdout.")
@click.option(
    "--backward", is_flag=True, help="Run root.backward() first so the graph shows gradients."
)
@click.option("--html", "html_path", metavar="FILE", help="Write an offline viewer of the graph.")
def dot_export(script: str, output: str | None, backward: bool, html_path: str | None) -> int:
    """Run SCRIPT as __main__ and print the DOT of the `Value` it names `root`.

    As in 0.2.0 the script runs as __main__ (its `if __name__ == "__main__":`
    block runs). With -o or --html the files are written instead of printing.
    """
    from flow_xray.autodiff import (  # noqa: PLC0415  # loaded when the command runs
        standalone_viewer_html,
        value_graph_to_dot,
        value_viewer_html as stepping_viewer,
    )
    from flow_xray.cli import runner  # noqa: PLC0415  # loaded when the command runs

    try:
        target = runner.resolve_script(script)
    except FlowXrayError as exc:
        raise CliError(str(exc)) from None
    dot_out = writable(output, "--output") if output else None
    html_out = writable(html_path, "--html") if html_path else None

    # The script may replace or close its streams: the DOT still reaches the stdout we got.
    with Console.kept() as console:
        root = _load_root(target, console)
        if backward:
            root.backward()
        text = value_graph_to_dot(root, show_grad=backward)
        texts = {dot_out: text} if dot_out is not None else {}
        if html_out is not None:
            name = os.path.basename(script)
            texts[html_out] = (
                stepping_viewer(root, title=f"flow-xray graph: {name} (backward)")
                if backward
                else standalone_viewer_html(text, title=f"flow-xray graph: {name} (forward)")
            )
        _emit(texts, text, console)
    return 0


def _make_dir(path: str) -> None:
    """Create ``path`` and its parents (``--output-dir``, as in 0.2.0)."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise CliError(f"--output-dir {path}: cannot create it: {exc.strerror or exc}") from None


def _emit(files: dict[str, str], stdout_text: str, console: Console | None = None) -> None:
    """Write ``files``, naming each on stderr; with no file to write, print ``stdout_text``."""
    console = console or Console.current()
    if not files:
        write_atomic("-", stdout_text, console)
        return
    for path, body in files.items():
        write_atomic(path, body, console)
        if path != "-":
            console.line(f"flow-xray: wrote {path}")


def _load_root(target: Any, console: Console) -> Value:
    """Run an export script and return its ``root``; a crash is reported with its traceback."""
    from flow_xray.autodiff import Value  # noqa: PLC0415  # loaded when the command runs
    from flow_xray.cli import runner  # noqa: PLC0415  # loaded when the command runs

    try:
        namespace = runner.run_for_namespace(target, run_name="__main__")
    except ScriptFailed as failed:
        exc = failed.exception
        if isinstance(exc, SystemExit):
            raise CliError(
                f"{target.name} called sys.exit({_text(exc.code, repr)}) before defining root"
            ) from None
        console.block("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        raise CliError(f"{target.name} raised {type(exc).__name__}: {_text(exc, str)}") from None
    if "root" not in namespace:
        raise CliError(f"{target.name} does not define root (the Value to export)")
    root = namespace["root"]
    if not isinstance(root, Value):
        raise CliError(f"root in {target.name} is a {type(root).__name__}, not a flow_xray.Value")
    return root


def _text(value: object, how: Callable[[object], str]) -> str:
    """``how(value)`` (``str`` or ``repr``) for a message, or a stand-in when the script's
    object cannot be shown."""
    try:
        return how(value)
    except BaseException:  # the script's __str__/__repr__ failed: the message still goes out
        return f"<{type(value).__name__} that cannot be shown>"
