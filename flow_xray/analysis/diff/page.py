"""`TraceDiffPage`: what ``TraceResult.diff`` returns -- a `TraceDiff` that is its page too.

0.3.x's ``a.diff(b)`` returned the diff as a standalone HTML page (a ``str``),
which its users wrote straight to a file (``Path("d.html").write_text(a.diff(b))``,
``open(p, "w").write(a.diff(b))``, ``str(a.diff(b))``); ours returned the
`TraceDiff` analysis. A `TraceDiffPage` is both: a `TraceDiff` (``summary()``,
``equal``, ``added``, iterating its calls, ``to_dict()``, ``to_html()``) and a
``str`` holding the diff viewer page (`TraceDiff.to_html`), so either kind of
caller gets what it expects. Where the two disagree the `TraceDiff` wins:
iterating gives the calls, not characters; ``len``, ``==``, ``in`` and slicing
are the page text's. The page is rendered once, when the diff is made; for
the analysis alone (no page), `flow_xray.analysis.diff.diff_traces`.
No OpenTelemetry here.
"""

from __future__ import annotations

import os
from dataclasses import fields

from flow_xray.analysis.diff.trace_diff import TraceDiff
from flow_xray.files import write_text_atomic

DEFAULT_TITLE = "flow-xray diff"


# Iterating gives the calls (TraceDiff's __iter__), which a str's Iterable[str] type
# cannot say: the one place the two bases disagree on purpose.
class TraceDiffPage(TraceDiff, str):  # type: ignore[misc]
    """A `TraceDiff` whose ``str`` value is its offline diff viewer page.

    Example::

        diff = TraceResult.load("good.json").diff(TraceResult.load("bad.json"))
        print(diff.summary())                  # +1 call, 1 new error, ...
        Path("diff.html").write_text(diff)     # 0.3.x: the result is the page
    """

    @classmethod
    def of(cls, diff: TraceDiff) -> TraceDiffPage:
        """``diff`` with its page (`TraceDiff.to_html`, default title) as the text."""
        page = str.__new__(cls, TraceDiff.to_html(diff))
        for f in fields(TraceDiff):
            setattr(page, f.name, getattr(diff, f.name))
        return page

    def to_html(
        self, path: str | os.PathLike[str] | None = None, title: str = DEFAULT_TITLE
    ) -> str:
        """The page (rendered again only for another ``title``); also written to ``path``."""
        if title != DEFAULT_TITLE:
            return TraceDiff.to_html(self, path, title)
        html = str.__str__(self)
        if path is not None:
            write_text_atomic(path, html)
        return html

    def __repr__(self) -> str:
        return f"<TraceDiffPage {self.summary()!r}, page of {len(self):,} chars>"
