"""``flow-xray run``: trace a script or module and write its viewer."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from flow_xray.cli.common import (
    CliError,
    flush_exporters,
    otlp_options,
    parse_headers,
    report,
    show_crash,
    start_export,
    to_script_stderr,
    writable,
    write_atomic,
)
from flow_xray.cli.console import Console, scrubbed
from flow_xray.cli.progress import progress
from flow_xray.errors import FlowXrayError, Terminated

if TYPE_CHECKING:
    from flow_xray.analysis import StaticIndex
    from flow_xray.cli import runner
    from flow_xray.tree.model import Totals, TraceResult


class _RunCommand(click.Command):
    """``run``, reading flow-xray's own options also after the script (0.2.0's form).

    The rule: flow-xray's options may come before the script or after it, up
    to a ``--``; everything after ``--`` goes to the script untouched, and so
    does every other argument after the script. An option of flow-xray's
    found after the script could have been meant for the script: it is read
    as flow-xray's, and one warning line says so and how to pass it on.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ordered, moved, target = split_own_options(list(args), self._own_options())
        if moved:
            Console.current().line(
                f"flow-xray: warning: read {', '.join(moved)} after {target} as flow-xray's "
                f"option{'s' if len(moved) > 1 else ''}; to pass "
                f"{'them' if len(moved) > 1 else 'it'} to {target}, put "
                f"{'them' if len(moved) > 1 else 'it'} after `--`"
            )
        return super().parse_args(ctx, ordered)

    def _own_options(self) -> dict[str, bool]:
        """Each option string of this command, and whether it takes a value."""
        own: dict[str, bool] = {}
        for param in self.params:
            if isinstance(param, click.Option):
                for name in (*param.opts, *param.secondary_opts):
                    own[name] = not (param.is_flag or param.count)
        return own


def split_own_options(
    args: list[str], own: dict[str, bool]
) -> tuple[list[str], list[str], str | None]:
    """Move flow-xray's options found after the target before it (see `_RunCommand`).

    Returns the reordered arguments (options, target, then the target's own
    arguments after a ``--``), the option names that were moved, and the target.
    """
    before, target_at = _leading_options(args, own)
    if target_at is None or target_at > len(args):
        return args, [], None
    module_form = before[-2:-1] == ["-m"]
    target = before[-1] if module_form else (args[target_at] if target_at < len(args) else None)
    if target is None:
        return args, [], None
    rest = args[target_at:] if module_form else args[target_at + 1 :]
    head = before if module_form else [*before, target]
    moved_tokens, moved, script_args = _trailing_options(rest, own)
    if not moved and "--" not in rest:
        return args, [], target
    if module_form:
        return [*moved_tokens, *head, "--", *script_args], moved, target
    return [*moved_tokens, *before, "--", target, *script_args], moved, target


def _leading_options(args: list[str], own: dict[str, bool]) -> tuple[list[str], int | None]:
    """The options before the target (``-m MODULE`` last, if given), and where the target is."""
    before: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        name = token.split("=", 1)[0]
        if token == "--":
            return before, i + 1
        if name in own and token.startswith("-"):
            takes_value = own[name] and "=" not in token
            if name == "-m":  # the module is the target; what follows belongs to it
                before += args[i : i + 2]
                return before, i + 2
            before += args[i : i + 1 + takes_value]
            i += 1 + takes_value
            continue
        if token.startswith("-") and token != "-":
            before.append(token)  # unknown: click reports it
            i += 1
            continue
        return before, i
    return before, None


def _trailing_options(
    rest: list[str], own: dict[str, bool]
) -> tuple[list[str], list[str], list[str]]:
    """Split what follows the target: flow-xray's options (tokens, names), the target's args."""
    moved_tokens: list[str] = []
    moved: list[str] = []
    script_args: list[str] = []
    j = 0
    while j < len(rest):
        token = rest[j]
        name = token.split("=", 1)[0]
        if token == "--":
            script_args += rest[j + 1 :]
            break
        if token.startswith("-") and name in own and name != "-m":
            takes_value = own[name] and "=" not in token
            moved_tokens += rest[j : j + 1 + takes_value]
            moved.append(name)
            j += 1 + takes_value
            continue
        script_args.append(token)
        j += 1
    return moved_tokens, moved, script_args


@click.command(
    cls=_RunCommand,
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
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
@click.option(
    "--static",
    "static_paths",
    metavar="PATH",
    multiple=True,
    help="Python source to show as static context: functions that could have run (repeatable).",
)
@click.option(
    "--max-spans",
    type=click.IntRange(min=1),
    metavar="N",
    help="Keep about N calls (the first and last, plus every error and LLM call); "
    "the summary says how many were dropped.",
)
@otlp_options
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, metavar="SCRIPT [ARGS]...")
def run(
    module: str | None,
    html_path: str | None,
    json_path: str | None,
    title: str | None,
    open_browser: bool,
    quiet: bool,
    static_paths: tuple[str, ...],
    max_spans: int | None,
    otlp_endpoint: str | None,
    otlp_protocol: str | None,
    otlp_headers: tuple[str, ...],
    service_name: str | None,
    otlp_json: str | None,
    argv: tuple[str, ...],
) -> int:
    """Run SCRIPT (or -m MODULE) as __main__ and write the trace of everything it did.

    Arguments after SCRIPT or MODULE are passed to it, except flow-xray's own
    options, which may also follow the script (0.2.0's `run app.py --html
    t.html`) and are then named in a warning line. Everything after `--` goes
    to the script untouched: `run app.py -- --html x` passes `--html x`. The trace is
    written however the script ends; the exit status is the script's own
    (1 after an uncaught exception, 130 after Ctrl-C).
    """
    from flow_xray.cli import runner  # noqa: PLC0415  # loaded when the command runs
    from flow_xray.formats.flow_xray_json import result_to_json  # noqa: PLC0415
    from flow_xray.render.trace_page import result_to_html  # noqa: PLC0415
    from flow_xray.runtime.run_hooks import run_end  # noqa: PLC0415  # loaded with the runner
    from flow_xray.serialize.text import writable as shown  # noqa: PLC0415

    if module is None and not argv:
        raise click.UsageError("missing SCRIPT (or -m MODULE)")
    if module is None and argv[0].startswith("-") and argv[0] != "-":
        raise click.UsageError(f"no such option: {argv[0]}")
    headers = parse_headers(otlp_headers)
    try:
        if module is not None:
            target = runner.resolve_module(module, argv, _source_roots(static_paths))
        else:
            target = runner.resolve_script(argv[0], argv[1:])
    except FlowXrayError as exc:
        raise CliError(str(exc)) from None
    html_out = writable(html_path or f"{target.stem}_trace.html", "--html")
    json_out = writable(json_path, "--json") if json_path else None
    # Resolved now: the script may change or delete its working directory.
    files = {path: _Output(path) for path in (html_out, json_out) if path is not None}
    static = _static_index(static_paths)
    exporting = start_export(
        otlp_endpoint,
        otlp_protocol,
        headers,
        service_name,
        os.path.abspath(otlp_json) if otlp_json else None,
        target.stem,  # the service's name unless --service-name or OTEL_SERVICE_NAME says
    )
    _load_page_assets()
    # From here on the script may do anything to its streams and signals; the
    # console and the run's end keep flow-xray's part working.
    with Console.kept() as console, run_end() as ending:
        ending.on_first = lambda signum: console.line(
            f"flow-xray: got {_signal_name(signum)}: finishing the trace first "
            "(send it again to stop)"
        )
        outcome = runner.run_target(target, max_spans=max_spans)
        _last_words(outcome, console)
        if outcome.forked:
            # A child the script forked finished it: its calls went to the parent,
            # which writes the trace; writing here would overwrite the parent's.
            return outcome.exit_code
        name = target.name if target.kind == "module" else os.path.basename(target.path)
        result = outcome.result
        page_title = shown(title or f"flow-xray trace: {name}")
        counted = _Counted(result)  # one count of the calls for the page, JSON and summary
        makers: dict[str, Callable[[], str]] = {
            html_out: lambda: result_to_html(
                result, title=page_title, static=static, totals=counted.totals()
            )
        }
        if json_out is not None:
            makers[json_out] = lambda: result_to_json(result, totals=counted.totals())
        try:
            written = _write_outputs(makers, files, quiet, console)
            _after_writing(result, name, written, files, console)
            if exporting:
                _flush(console)
            if html_out in written:
                quiet_here = quiet or html_out == "-"
                report(html_out, result, quiet_here, open_browser, console, counted.totals())
            if len(ending.received) == 1:
                console.line(
                    f"flow-xray: got {_signal_name(ending.received[0])} while writing the "
                    "trace: finished writing it first (the exit status is the script's)"
                )
        except (KeyboardInterrupt, Terminated):  # a second signal after the files were written
            console.line("flow-xray: stopped by a second signal")
    # Whatever happened to the trace, the exit status stays the script's own.
    return outcome.exit_code


class _Counted:
    """The trace's totals, counted once when first asked for: inside the first output's
    write, so its progress line covers the count (a pass over every call)."""

    __slots__ = ("counted", "result")

    def __init__(self, result: TraceResult) -> None:
        self.result = result
        self.counted: Totals | None = None

    def totals(self) -> Totals:
        if self.counted is None:  # (the capture just built it: counted then)
            from flow_xray.analysis import accounting  # noqa: PLC0415  # loaded with the page

            self.counted = accounting.totals(self.result, fresh=True)
        return self.counted


def _after_writing(
    result: TraceResult, name: str, written: list[str], files: dict[str, _Output], console: Console
) -> None:
    """An empty trace over a real one is easy to miss: say so."""
    if written and len(result) == 0:
        replaced = [p for p in written if p in files and files[p].replaced]
        said = f"; replaced the existing {' and '.join(replaced)}" if replaced else ""
        console.line(
            f"flow-xray: warning: {name} made no traced calls (is @trace on the functions "
            f"it runs?){said}"
        )


class _Output:
    """Where an output goes, resolved before the script runs, and whether it replaces a file."""

    def __init__(self, path: str) -> None:
        self.path = path if path == "-" else os.path.abspath(path)
        self.replaced = path != "-" and os.path.isfile(path)


def _load_page_assets() -> None:
    """Read the viewer's scripts and styles now (they are cached): a script that breaks
    ``open`` or ``io`` cannot stop its trace's page from being built."""
    from flow_xray.render.page import app_script, app_style  # noqa: PLC0415  # the page: for `run`

    app_script()
    app_style()


def _last_words(outcome: runner.RunOutcome, console: Console) -> None:
    """The script's traceback or ``sys.exit`` message, where Python would have printed it."""
    if outcome.exception is not None:
        show_crash(outcome.exception, console)
    elif outcome.exit_message is not None:
        to_script_stderr(scrubbed(outcome.exit_message, newlines=True) + "\n", console)


def _write_outputs(
    makers: dict[str, Callable[[], str]],
    files: dict[str, _Output],
    quiet: bool,
    console: Console,
) -> list[str]:
    """Write the viewer (and the JSON); return the options' paths that were written.

    Each output on its own: one that fails is named in one line (why, when the
    folder is gone), the others are still written. Nothing raises: a failure
    here never changes the run's exit status. A second SIGTERM or Ctrl-C while
    writing stops it; what was being written is not left half-written.
    """
    written: list[str] = []
    failed: list[str] = []
    for path, make in makers.items():
        try:
            with progress(f"writing {path}", not quiet and path != "-", console):
                write_atomic(files[path].path, make(), console)
        except (KeyboardInterrupt, Terminated):
            console.line(
                f"flow-xray: error: stopped by a second signal while writing {path}: "
                "it was not written"
            )
            break
        except CliError:
            failed.append(path)
        except Exception as exc:  # a bug of ours must not cost the script's exit status
            failed.append(path)
            console.line(f"flow-xray: error: writing {path} failed: {type(exc).__name__}: {exc}")
        else:
            written.append(path)
    if failed:
        folders = {os.path.dirname(files[p].path) for p in failed if p != "-"}
        gone = [f for f in sorted(folders) if not os.path.isdir(f)]
        why = f": folder {', '.join(gone)} no longer exists" if gone else ""
        console.line(f"flow-xray: error: could not write {' or '.join(failed)}{why}")
    return written


def _flush(console: Console) -> None:
    """Export what is queued; a failure is one line, never a change of the exit status."""
    try:
        flush_exporters(console)
    except (KeyboardInterrupt, Terminated):
        console.line("flow-xray: error: stopped while exporting spans")
    except Exception as exc:  # exporting is best effort at this point
        console.line(f"flow-xray: error: exporting spans failed: {type(exc).__name__}: {exc}")


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _source_roots(paths: tuple[str, ...]) -> list[str]:
    """Where ``-m`` may find a module that is not importable otherwise: the folder each
    ``--static`` path sits in (``src`` for ``src/shop``), or the path itself when it is a
    folder of packages (``--static src``)."""
    roots: list[str] = []
    for path in paths:
        folder = os.path.abspath(path)
        if not os.path.isdir(folder) or os.path.isfile(os.path.join(folder, "__init__.py")):
            folder = os.path.dirname(folder)
        if folder not in roots:
            roots.append(folder)
    return roots


def _static_index(paths: tuple[str, ...]) -> StaticIndex | None:
    """The static index of ``--static`` paths, built before the script runs (it only reads)."""
    if not paths:
        return None
    from flow_xray.analysis import StaticIndex  # noqa: PLC0415  # only with --static

    try:
        return StaticIndex.build(paths)
    except FlowXrayError as exc:
        raise CliError(f"--static: {exc}") from None
