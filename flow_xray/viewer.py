"""0.2.0's import path ``flow_xray.viewer``: the ``flow-xray-viewer`` command.

``flow-xray-viewer DOTFILE [-p PORT] [--no-browser]`` serves the offline
viewer of a DOT file on 127.0.0.1 until Ctrl+C. A thin module over
`flow_xray.autodiff.serve`.
"""

from __future__ import annotations

from flow_xray.autodiff.serve import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
