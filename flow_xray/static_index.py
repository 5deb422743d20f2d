"""0.3.6's import path ``flow_xray.static_index``: a static call graph keyed by ``__qualname__``.

A thin module over `flow_xray.analysis.static.qualnames` (0.3's names and
result shapes) and `flow_xray.analysis.static` (reading the source, resolving
calls). ``build_index(paths)`` gives a ``StaticIndex`` with ``functions``
(qualname -> `FuncDef`), ``calls`` (``(caller, callee)`` pairs) and ``files``,
and the queries ``callers``, ``callees``, ``blast_radius`` and ``unused``; pass
it to ``result.to_html(path, static_index=index)`` or
``flow_xray.merge.merge_trace_with_static``. Nothing is imported or run.

Example::

    from flow_xray.static_index import build_index

    index = build_index(["agent.py"])
    index.callers("Agent.plan"), index.blast_radius("call_database"), index.unused()
"""

from __future__ import annotations

from flow_xray.analysis.static.qualnames import (
    FuncDef,
    QualnameIndex as StaticIndex,
    build_index,
)

__all__ = ["FuncDef", "StaticIndex", "build_index"]
