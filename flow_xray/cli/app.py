"""The ``flow-xray`` click group: error translation and the commands it holds.

Library errors (`FlowXrayError`) are turned into `flow_xray.cli.common.CliError`
by the commands; this group turns every click error into exactly one
``error: ...`` line on stderr and exit status 2. Each command lives in a
module of its own.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from flow_xray import __version__
from flow_xray.cli.console import Console, scrubbed
from flow_xray.cli.demo import demo
from flow_xray.cli.diff import diff
from flow_xray.cli.dot import dot
from flow_xray.cli.run import run
from flow_xray.cli.view import view
from flow_xray.terminal import LINE_LIMIT, one_line

# click >= 8.2 raises this for a bare group invocation; older versions print the help themselves.
_NO_ARGS_IS_HELP: tuple[type[click.ClickException], ...] = tuple(
    getattr(click.exceptions, name)
    for name in ("NoArgsIsHelpError",)
    if hasattr(click.exceptions, name)
)


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
            Console.current().write(error_line(_message(exc)) + "\n")
            code = 2
        except click.Abort:
            Console.current().write("error: interrupted\n")
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


for _command in (run, view, demo, dot, diff):
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on ``argv`` (default: ``sys.argv[1:]``) and return the exit status.

    The entry point of ``flow-xray``, ``python -m flow_xray`` and ``python -m
    flow_xray.cli``; as in 0.2.0, ``main(["dot", "demo"])`` runs a command
    in-process and returns its status instead of exiting.
    """
    args = list(argv) if argv is not None else None
    return cli.main(args=args, prog_name="flow-xray", standalone_mode=False)


def _message(exc: click.ClickException) -> str:
    message = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        message += f" (see '{ctx.command_path} --help')"
    return message


def error_line(message: str) -> str:
    """``error: MESSAGE`` as the terminal shows it: one line, at most `LINE_LIMIT` characters.

    Credentials are scrubbed and control characters escaped; a longer message
    keeps its start and its end (usually the reason) around a ``…``.
    """
    return one_line(f"error: {scrubbed(' '.join(message.split()))}", LINE_LIMIT)
