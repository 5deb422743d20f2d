"""Notebooks: the offline viewer inline, and the ``%%flow_xray`` cell magic.

A `TraceResult` (or a `Value`) left at the end of a cell shows the same page
``to_html()`` writes, inside the notebook: Jupyter, JupyterLab and VS Code ask
the object for ``_repr_html_``, which `TraceResult` and `Value` hand to
`trace_html` / `value_html` here (the notebook bridge: those two methods
import this module when first called, so nothing here loads before a notebook
asks).

How the page is shown, and why:

- In ``<iframe sandbox="allow-scripts allow-downloads" allow="clipboard-write"
  srcdoc="...">``: the page runs as it does from a file, in an opaque origin, so
  it cannot touch the notebook's page (its cookies, its kernel connection) and
  the notebook's styles cannot touch it; its own Content-Security-Policy still
  forbids any network access. The two grants are for the page's own buttons,
  each run only on a click: "JSON" saves the trace as a file, "Copy" writes to
  the clipboard (without them Chromium blocks both inside a sandbox). What the
  page keeps in ``localStorage`` (pane sizes) it keeps in memory there.
- Once: the output holds one copy of the page (with its data compressed, as
  every flow-xray page embeds it) and a one-line text form (`trace_text`), not
  the dataclass repr of every node; a notebook saved with outputs stays small.
- "Open full size": a link the output's small script points at a ``blob:``
  URL made from that same ``srcdoc`` (no second copy in the notebook). In
  Jupyter Notebook, JupyterLab and an nbconvert HTML export it opens the page
  in a new browser tab, offline. A ``data:`` URL would not: browsers refuse
  to open ``data:`` pages in a tab, and it would double the output. In VS
  Code, whose notebook view turns a click on a ``blob:`` link into "save as",
  it saves the page to a file you then open in a browser. Where scripts in
  outputs do not run (an untrusted notebook) the link stays hidden.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shlex
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, Final, NoReturn

import flow_xray

if TYPE_CHECKING:
    from flow_xray import Value
    from flow_xray.tree.model import TraceResult

__all__ = [
    "HEIGHT",
    "MAX_VALUE_NODES",
    "CellTrace",
    "inline_page",
    "load_ipython_extension",
    "trace_html",
    "trace_text",
    "value_html",
]

#: The inline viewer's height in CSS pixels: the graph, the call tree and the
#: detail panel side by side without scrolling the notebook. Drag its corner to change it.
HEIGHT: Final = 600
#: Above this many nodes a `Value` is not drawn inline (the page would weigh
#: megabytes); its text repr shows instead. `write_value_viewer_html` draws any size.
MAX_VALUE_NODES: Final = 5_000

_FRAME_STYLE: Final = (
    "display:block;width:100%;height:{height}px;resize:vertical;overflow:auto;"
    "border:1px solid rgba(128,128,128,0.4);border-radius:4px;background:Canvas"
)
_ROW_STYLE: Final = "font:12px/1.6 system-ui,sans-serif;opacity:0.85;margin:2px 0 6px"
# Points each output's "Open full size" link at a blob: URL of its frame's srcdoc. It
# looks outputs up by class, not by id, so the notebook's text is the same every run,
# and marks the ones it has done (an output shown twice gets two working links).
_LINK_SCRIPT: Final = """<script>
(function () {
  if (!window.Blob || !window.URL || !URL.createObjectURL) return;
  var boxes = document.querySelectorAll("div.flow-xray-inline:not([data-linked])");
  for (var i = 0; i < boxes.length; i++) {
    var box = boxes[i], frame = box.querySelector("iframe"), link = box.querySelector("a");
    box.setAttribute("data-linked", "1");
    if (!frame || !link) continue;
    var page = new Blob([frame.getAttribute("srcdoc")], {type: "text/html"});
    link.href = URL.createObjectURL(page);
    link.style.display = "";
  }
})();
</script>"""


def inline_page(page: str, title: str, note: str = "", height: int = HEIGHT) -> str:
    """Return the HTML showing the offline page ``page`` inline in a notebook output.

    The page goes into a sandboxed ``<iframe srcdoc>`` of ``height`` pixels
    (scripts, and downloads and clipboard writes on a click; no same-origin
    access, no forms, no pop-ups); under it go ``note`` (plain text) and an
    "Open full size" link (see the module docs).
    """
    return (
        '<div class="flow-xray-inline">'
        '<iframe sandbox="allow-scripts allow-downloads" allow="clipboard-write" '
        f'title="{html.escape(title)}" '
        f'style="{_FRAME_STYLE.format(height=int(height))}" '
        f"srcdoc='{_attribute(page)}'></iframe>"
        f'<div style="{_ROW_STYLE}">{html.escape(note)}'
        f"{' · ' if note else ''}"
        '<a target="_blank" rel="noopener" style="display:none"'
        ' title="The page in a tab of its own (VS Code offers to save it as a file)">'
        "Open full size</a></div>"
        f"{_LINK_SCRIPT}</div>"
    )


def _attribute(text: str) -> str:
    """``text`` as a single-quoted attribute value, on one line.

    Only ``&`` and ``'`` need escaping there (``<`` and ``>`` are plain text inside
    quotes), and a page has far fewer ``'`` than ``"``. Newlines become ``&#10;``:
    nbformat saves each line of an output as a JSON string of its own, indented,
    which would add a quarter to the notebook. The output stays within a few
    percent of the page's size, in the notebook file too.
    """
    return text.replace("&", "&amp;").replace("'", "&#39;").replace("\n", "&#10;")


def trace_text(result: TraceResult) -> str:
    """The one-line text form of a result in a notebook: ``TraceResult: 3 calls, 0 errors, ...``."""
    return f"TraceResult: {result.totals.summary()}"


def trace_html(result: TraceResult, title: str = "flow-xray trace", note: str = "") -> str:
    """Return ``result``'s viewer for a notebook output (what ``TraceResult._repr_html_`` shows).

    The page is ``result.to_html(title=title)`` (its header has the totals);
    ``note`` (plain text, e.g. where the page was saved) goes under it.
    """
    return inline_page(result.to_html(title=title), title, note)


def value_html(value: Value) -> str | None:
    """Return the `Value` viewer of ``value``'s graph for a notebook output, or None.

    The page is `flow_xray.value_viewer_html` (the graph, and a stepper through
    the backward pass from a seed of 1). Drawing it runs that pass, so every
    node's ``grad`` is put back as it was afterwards: showing a value never
    changes it. A graph over `MAX_VALUE_NODES` nodes returns None, and the
    notebook shows the text repr instead.
    """
    order = flow_xray.topological_order(value)
    if len(order) > MAX_VALUE_NODES:
        return None
    grads = [node.grad for node in order]
    title = value.label or "flow-xray autodiff graph"
    try:
        page = flow_xray.value_viewer_html(value, title=title)
    finally:
        for node, grad in zip(order, grads, strict=True):
            node.grad = grad
    return inline_page(page, title)


# -- %%flow_xray ----------------------------------------------------------------------

_MAGIC_LINE: Final = re.compile(r"%%flow_xray(?:[ \t]+(?P<options>.*))?[ \t]*$")


class _UsageError(ValueError):
    """A bad ``%%flow_xray`` option line (shown as IPython's UsageError)."""


class _OptionParser(argparse.ArgumentParser):
    """argparse that raises on a bad line instead of exiting the kernel."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _options(line: str) -> argparse.Namespace:
    parser = _OptionParser(prog="%%flow_xray", add_help=False, exit_on_error=False)
    parser.add_argument("--title", default=None)
    parser.add_argument("--save", default=None, metavar="PATH")
    try:
        return parser.parse_args(shlex.split(line))
    except (ValueError, argparse.ArgumentError) as exc:
        # shlex's "No closing quotation"; argparse's errors (3.13 raises unrecognized
        # arguments itself when not exiting on errors)
        raise _UsageError(str(exc)) from exc


def _magic_options(first_line: str) -> argparse.Namespace | None:
    """The options of a ``%%flow_xray`` first line; None for any other line or a bad one."""
    match = _MAGIC_LINE.match(first_line.strip())
    if match is None:
        return None
    try:
        return _options(match["options"] or "")
    except _UsageError:
        return None


class CellTrace:
    """``%%flow_xray [--title TEXT] [--save PATH]``: run the cell, then show its trace.

    The cell runs exactly as it would without the magic: its output, its
    value, its errors, and top-level ``await`` too. Every call it makes is
    captured, in every thread and in Python child processes, as ``flow-xray
    run`` captures a script, and the trace shows inline when the cell is done.
    ``--title`` names the page (default: the cell's number); ``--save PATH``
    also writes it: the JSON when PATH ends in ``.json``, else the HTML page.

    Example::

        %%flow_xray --title "agent run" --save agent.html
        await agent("What is flow-xray?")

    How: IPython runs a cell magic's body as a function call, which cannot
    ``await``. So the extension also strips a valid ``%%flow_xray`` line from
    the cell before IPython reads it (an input transformer), opens the capture
    on IPython's ``pre_run_cell`` event and shows the trace on
    ``post_run_cell``. A line with bad options is left in place: IPython then
    calls the magic itself, which reports them (UsageError) and runs nothing.
    """

    def __init__(self, ipython: Any) -> None:
        self.ipython = ipython
        self._open: tuple[ExitStack, TraceResult, argparse.Namespace] | None = None

    def strip(self, lines: list[str]) -> list[str]:
        """The input transformer: the cell without its ``%%flow_xray`` line (pure)."""
        if lines and _magic_options(lines[0]) is not None:
            return lines[1:]
        return lines

    def pre_run_cell(self, info: Any) -> None:
        """IPython's event before a cell runs: open the capture of a ``%%flow_xray`` cell."""
        raw = getattr(info, "raw_cell", None) or ""
        first = next((line for line in raw.splitlines() if line.strip()), "")
        options = _magic_options(first)
        if options is not None:
            self._begin(options)

    def post_run_cell(self, result: Any) -> None:
        """IPython's event after a cell ran (also when it raised): show its trace."""
        self._end()

    def magic(self, line: str, cell: str) -> None:
        """The cell magic itself, for what the transformer leaves: a bad line, a direct call."""
        # IPython (optional) is loaded only in its own shell, where this magic runs.
        from IPython.core.error import UsageError  # noqa: PLC0415 (optional dependency)

        try:
            options = _options(line)
        except _UsageError as exc:
            raise UsageError(f"%%flow_xray: {exc}") from None
        began = self._open is None
        if began:
            self._begin(options)
        try:
            self.ipython.run_cell(cell)
        finally:
            if began:
                self._end()

    def _begin(self, options: argparse.Namespace) -> None:
        self._end()  # a cell that never reported its end (interrupted kernel): close it first
        stack = ExitStack()
        result = stack.enter_context(flow_xray.trace.capture(all_threads=True, processes=True))
        self._open = stack, result, options

    def _end(self) -> None:
        if self._open is None:
            return
        (stack, result, options), self._open = self._open, None
        stack.close()
        title = options.title or f"flow-xray: cell [{self.ipython.execution_count}]"
        note = _save(result, options.save, title) if options.save else ""
        bundle = {"text/html": trace_html(result, title, note), "text/plain": trace_text(result)}
        self.ipython.display_pub.publish(data=bundle, metadata={})  # what display(raw=True) does


def _save(result: TraceResult, path: str, title: str) -> str:
    """Write the trace to ``path`` (JSON for ``.json``, else HTML); the note saying so."""
    target = os.path.expanduser(path)
    try:
        if target.lower().endswith(".json"):
            result.save(target)
        else:
            result.to_html(target, title=title)
    except OSError as exc:
        return f"not saved: {exc}"
    return f"saved to {path}"


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext flow_xray``: add the ``%%flow_xray`` cell magic to this IPython shell.

    Loading it again (``%reload_ext``) changes nothing. See `CellTrace` for the magic.

    Example::

        %load_ext flow_xray
    """
    if "flow_xray" in ipython.magics_manager.magics["cell"]:
        return
    cells = CellTrace(ipython)

    def flow_xray(line: str, cell: str) -> None:
        cells.magic(line, cell)

    flow_xray.__doc__ = CellTrace.__doc__  # what ``%%flow_xray?`` prints
    ipython.input_transformers_cleanup.append(cells.strip)
    ipython.events.register("pre_run_cell", cells.pre_run_cell)
    ipython.events.register("post_run_cell", cells.post_run_cell)
    ipython.register_magic_function(flow_xray, magic_kind="cell", magic_name="flow_xray")
