"""The ``flow-xray`` command line: a thin `click` layer over the library.

Commands: ``run`` (trace a script or module), ``view`` (render a saved trace),
``diff`` (compare two runs), ``demo`` (trace the built-in example pipeline) and
``dot demo`` / ``dot export`` (autodiff graphs), one module each;
`flow_xray.cli.runner` is the library that runs a target under a capture.
Outputs are checked before any work starts and written by `flow_xray.files`
(a regular file atomically, so a failure leaves no half file; a device or a
FIFO through, never replaced); inputs are regular files or ``-``. Every line a
command prints goes through `flow_xray.cli.console` (scrubbed, terminal-safe,
never failing). Nothing in the package imports this folder: it is the top of
the stack.

A command imports the heavy parts of the library it uses (the tracing side,
the SDK, the trace loader, autodiff) when it runs, so ``flow-xray --help``
and every other command stay quick; each such import says so
(``# noqa: PLC0415``).
"""

from __future__ import annotations

from flow_xray.cli.app import cli, main

__all__ = ["cli", "main"]
